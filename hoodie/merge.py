"""Record merging: which version of a key wins. One rule for writers and readers.

The ordering (precombine) field decides, as Hudi's `DefaultHoodieRecordPayload` does: the
larger value wins, a null value loses to any value, and among equals the later record (higher
sequence) wins. Without an ordering field, the later record wins.

Deletes within a file slice (a base file and its logs) come in two kinds:
- A delete with no ordering value (the delete operation's, Hudi's default Integer 0, which reads
  as null, or a `_hoodie_is_deleted` row with a null ordering value) orders by time, as Apache
  Hudi's commit-time-ordering delete does: it removes every version and delete of the key that
  arrived before it, so what follows it in the slice starts afresh (an insert of the key after
  the delete operation is an insert, whatever its ordering value: the copy-on-write result).
- A delete with an ordering value competes like a row, as in Hudi's merged log record reader:
  the key's winning data version is dropped if such a delete is newer by ordering value (or
  equal and from a later instant); the slice's ordered deletes count as one, with their largest
  ordering value and their latest instant (hudi-rs's rule). So on merge-on-read a delete keeps
  its ordering value until compaction folds it away.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from .schema import as_array, row_numbers

SEQUENCE = "__hoodie_sequence"
_HAS_ORDER = "__hoodie_has_order"


def latest_per_key(
    table: pa.Table, key: str, ordering_field: str | None, sequence: str | None = None
) -> pa.Table:
    """One row per `key`: the winner by (ordering value, sequence), in key order.

    `sequence` names a column giving arrival order; without it, row order is arrival order.
    """
    if table.num_rows <= 1:
        return table
    return table.take(winner_indices(table, key, ordering_field, sequence))


def winner_indices(
    table: pa.Table, key: str, ordering_field: str | None, sequence: str | None = None
) -> pa.Array:
    """The rows of `latest_per_key`, as indices into `table`: a writer that cuts the winners
    into several files takes each file's rows from them, never holding a sorted copy of all."""
    sort_keys = [(key, "ascending")]
    ranked = table
    if ordering_field is not None:
        ranked = ranked.append_column(_HAS_ORDER, pc.is_valid(table.column(ordering_field)))
        sort_keys += [(_HAS_ORDER, "ascending"), (ordering_field, "ascending")]
    if sequence is None:
        ranked = ranked.append_column("__row", row_numbers(0, table.num_rows))
        sort_keys.append(("__row", "ascending"))
    else:
        sort_keys.append((sequence, "ascending"))
    order = pc.sort_indices(ranked, sort_keys=sort_keys)
    n = len(order)
    if n <= 1:
        return order
    keys = as_array(table.column(key)).take(order)
    is_last = pc.not_equal(keys.slice(0, n - 1), keys.slice(1))
    return order.filter(pa.concat_arrays([pc.fill_null(is_last, True), pa.array([True])]))


ORDERING = "__hoodie_delete_ordering"  # a delete's ordering value, in `merge_slice`'s input
INSTANT = "__hoodie_instant"  # the instant that wrote a version or a delete


def merge_slice(
    rows: pa.Table,
    key: str,
    deletes: pa.Table,
    ordering_field: str | None = None,
    sequence: str = SEQUENCE,
) -> pa.Table:
    """One row per key of `rows` (a file slice's data versions), minus the deleted keys.

    `deletes` has columns (key, sequence, INSTANT[, ORDERING]); with an ordering field `rows`
    carries INSTANT too. Without an ordering field a delete cancels the versions that arrived
    before it, and a later version (a re-insert) survives.
    """
    if deletes.num_rows == 0 or rows.num_rows == 0:
        return latest_per_key(rows, key, ordering_field, sequence)
    if ordering_field is None or ORDERING not in deletes.column_names:
        winners = latest_per_key(rows, key, ordering_field, sequence)
        return _drop_by_arrival(winners, key, deletes, sequence)
    values = _delete_ordering(deletes, rows.schema.field(ordering_field).type)
    unordered = has_no_ordering(values)
    ordered = deletes.filter(pc.invert(unordered)).set_column(
        deletes.schema.get_field_index(ORDERING), ORDERING, values.filter(pc.invert(unordered))
    )
    if pc.any(unordered).as_py():
        # what arrived before a key's latest delete by time is gone, rows and deletes alike
        last = deletes.filter(unordered).group_by(key).aggregate([(sequence, "max")])
        rows = _after(rows, key, last, sequence)
        ordered = _after(ordered, key, last, sequence)
    winners = latest_per_key(rows, key, ordering_field, sequence)
    if ordered.num_rows == 0 or winners.num_rows == 0:
        return winners
    return _drop_by_ordering(winners, key, ordered, ordering_field)


def _after(table: pa.Table, key: str, last: pa.Table, sequence: str) -> pa.Table:
    """The rows of `table` that arrived after their key's sequence in `last` (or whose key has
    none)."""
    position = pc.index_in(table.column(key), value_set=last.column(key))
    cut = pc.take(last.column(f"{sequence}_max"), position)
    keep = pc.or_kleene(pc.is_null(cut), pc.greater(table.column(sequence), cut))
    return table.filter(pc.fill_null(keep, True))


def _delete_ordering(deletes: pa.Table, order_type: pa.DataType) -> pa.Array:
    """The deletes' ordering values as the ordering field's type; a value that does not cast
    (a delete block's Integer 0 against a string field) has none."""
    values = deletes.column(ORDERING)
    try:
        values = values.cast(order_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = pa.nulls(len(values), order_type)
    return as_array(values)


def has_no_ordering(values: pa.Array) -> pa.Array:
    """Per delete ordering value: is it Hudi's "no ordering value"?

    That is null (an Integer 0 in a delete block reads as null, see
    `hoodie.logformat.DeleteRecord`). A long 0 of a bigint ordering field is a real value, for
    Hudi's Java reader and for hudi-rs 0.5 alike.
    """
    return pc.is_null(values)


def _drop_by_arrival(winners: pa.Table, key: str, deletes: pa.Table, sequence: str) -> pa.Table:
    last = deletes.group_by(key).aggregate([(sequence, "max")])
    position = pc.index_in(winners.column(key), value_set=last.column(key))
    deleted_at = pc.take(last.column(f"{sequence}_max"), position)
    alive = pc.or_kleene(pc.is_null(deleted_at), pc.greater(winners.column(sequence), deleted_at))
    return winners.filter(pc.fill_null(alive, True))


def _drop_by_ordering(winners: pa.Table, key: str, deletes: pa.Table, ordering: str) -> pa.Table:
    """hudi-rs's rule for deletes that all carry an ordering value: per key, their largest
    ordering value and latest instant."""
    latest = (
        deletes.select([key, ORDERING, INSTANT])
        .group_by(key)
        .aggregate([(ORDERING, "max"), (INSTANT, "max")])
    )
    position = pc.index_in(winners.column(key), value_set=latest.column(key))
    delete_order = pc.take(latest.column(f"{ORDERING}_max"), position)
    delete_instant = pc.take(latest.column(f"{INSTANT}_max"), position)
    stored_order = winners.column(ordering)
    later = pc.fill_null(pc.greater(delete_instant, winners.column(INSTANT)), False)
    newer = pc.or_(
        pc.fill_null(pc.greater(delete_order, stored_order), False),
        pc.and_(pc.is_null(stored_order), pc.is_valid(delete_order)),
    )
    tie = pc.fill_null(pc.equal(delete_order, stored_order), False)
    deleted = pc.or_(newer, pc.and_(tie, later))
    has_delete = pc.is_valid(position)
    return winners.filter(pc.invert(pc.and_(has_delete, deleted)))

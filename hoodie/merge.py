"""Record merging: which version of a key wins. One rule for writers and readers.

The ordering (precombine) field decides, as Hudi's `DefaultHoodieRecordPayload` does: the
larger value wins, a null value loses to any value, and among equals the later record (higher
sequence) wins. Without an ordering field, the later record wins.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

SEQUENCE = "__hoodie_sequence"
_HAS_ORDER = "__hoodie_has_order"


def latest_per_key(
    table: pa.Table, key: str, ordering_field: str | None, sequence: str | None = None
) -> pa.Table:
    """One row per `key`: the winner by (ordering value, sequence).

    `sequence` names a column giving arrival order; without it, row order is arrival order.
    """
    if table.num_rows <= 1:
        return table
    sort_keys = [(key, "ascending")]
    ranked = table
    if ordering_field is not None:
        ranked = ranked.append_column(_HAS_ORDER, pc.is_valid(table.column(ordering_field)))
        sort_keys += [(_HAS_ORDER, "ascending"), (ordering_field, "ascending")]
    if sequence is None:
        ranked = ranked.append_column("__row", pa.array(range(table.num_rows), pa.int64()))
        sort_keys.append(("__row", "ascending"))
    else:
        sort_keys.append((sequence, "ascending"))
    ordered = table.take(pc.sort_indices(ranked, sort_keys=sort_keys))
    keys = ordered.column(key).combine_chunks()
    n = ordered.num_rows
    is_last = pc.not_equal(keys.slice(0, n - 1), keys.slice(1))
    return ordered.filter(pa.concat_arrays([pc.fill_null(is_last, True), pa.array([True])]))


ORDERING = "__hoodie_delete_ordering"  # a delete's ordering value, in `drop_deleted`'s input


def drop_deleted(
    rows: pa.Table,
    key: str,
    deletes: pa.Table,
    sequence: str = SEQUENCE,
    ordering_field: str | None = None,
) -> pa.Table:
    """Rows that no later delete cancels. `deletes` has columns (key, sequence[, ORDERING]).

    A delete cancels the versions of its key that arrived before it; a version arriving after
    it (a re-insert) survives. With an ordering field, a delete that carries an ordering value
    spares an earlier version whose ordering value is larger, as Hudi's log reader does with
    `DefaultHoodieRecordPayload`: an out-of-date delete does not remove newer data. A null
    ordering value (Hudi's 0 default) deletes unconditionally.
    """
    if deletes.num_rows == 0 or rows.num_rows == 0:
        return rows
    last = deletes.take(pc.sort_indices(deletes, [(key, "ascending"), (sequence, "ascending")]))
    keys = last.column(key).combine_chunks()
    n = last.num_rows
    is_last = pa.concat_arrays(
        [pc.not_equal(keys.slice(0, n - 1), keys.slice(1)), pa.array([True])]
    )
    last = last.filter(pc.fill_null(is_last, True))
    # Look each row's key up among deleted keys (no join: rows may hold nested columns).
    position = pc.index_in(rows.column(key), value_set=last.column(key))
    deleted_at = pc.take(last.column(sequence), position)
    alive = pc.or_kleene(pc.is_null(deleted_at), pc.greater(rows.column(sequence), deleted_at))
    if ordering_field is not None and ORDERING in last.column_names:
        stored = rows.column(ordering_field)
        delete_order = pc.take(last.column(ORDERING), position)
        try:
            delete_order = delete_order.cast(stored.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            delete_order = pa.nulls(len(delete_order), stored.type)
        newer = pc.fill_null(pc.greater(stored, delete_order), False)
        alive = pc.or_kleene(alive, newer)
    return rows.filter(pc.fill_null(alive, True))

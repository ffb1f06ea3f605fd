"""Record merging: which version of a key wins, and with which columns. One rule for writers
and readers, chosen by the table's merge mode (`MergeMode`, resolved once from
`hoodie.properties` by `merge_mode_of` and handed to every merge site).

Apache Hudi names the rule by a merge mode (table version 8) or a payload class (version 6);
we merge by five payloads (design: docs/design/incremental-pipelines.md, 2.2):

- DefaultHoodieRecordPayload, EventTimeAvroPayload (EVENT_TIME_ORDERING): the larger ordering
  value wins, within a batch and against the stored row (ties: the later).
- OverwriteWithLatestAvroPayload (COMMIT_TIME_ORDERING): within a batch the larger ordering
  value; against the stored row the incoming one.
- OverwriteNonDefaultsWithLatestAvroPayload (CUSTOM): within a batch the larger ordering value;
  against the stored row, the incoming row's non-null columns over the stored ones.
- PartialUpdateAvroPayload (CUSTOM): the row with the larger ordering value, its nulls filled
  from the other, within a batch and against the stored row alike.

A file slice (a base file and its logs) merges its versions in arrival order with the
"against the stored one" rule, as Hudi's file group reader folds log records onto the base.

By ordering value (event time), the larger value wins, a null value loses to any value, and
among equals the later record (higher sequence) wins. Without an ordering field, the later
record wins.

Deletes within a file slice come in two kinds:
- A delete with no ordering value (the delete operation's, Hudi's default Integer 0, which reads
  as null, or a `_hoodie_is_deleted` row with a null ordering value) orders by time, as Apache
  Hudi's commit-time-ordering delete does: it removes every version and delete of the key that
  arrived before it, so what follows it in the slice starts afresh (an insert of the key after
  the delete operation is an insert, whatever its ordering value: the copy-on-write result).
  Every delete orders so unless the table merges by event time.
- A delete with an ordering value competes like a row, as in Hudi's merged log record reader
  (event time only): the key's winning data version is dropped if such a delete is newer by
  ordering value (or equal and from a later instant); the slice's ordered deletes count as one,
  with their largest ordering value and their latest instant (hudi-rs's rule). So on
  merge-on-read a delete keeps its ordering value until compaction folds it away.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .exceptions import InvalidConfigError, UnsupportedTableError
from .options.table import PayloadClass as Payload
from .options.table import RecordMergeMode
from .properties import (
    MERGE_ON_READ,
    PAYLOAD_CLASS,
    RECORD_MERGE_MODE,
    RECORD_MERGE_STRATEGY_ID,
    RECORD_MERGER_STRATEGY,
    TableProperties,
)
from .schema import META_COLUMNS, as_array, row_numbers

SEQUENCE = "__hoodie_sequence"
_HAS_ORDER = "__hoodie_has_order"

_EVENT, _COMMIT, _CUSTOM = (
    RecordMergeMode.EVENT_TIME_ORDERING, RecordMergeMode.COMMIT_TIME_ORDERING,
    RecordMergeMode.CUSTOM,
)  # fmt: skip
# Hudi 1.x's merge strategy ids (`HoodieRecordMerger`).
EVENT_TIME_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
PAYLOAD_STRATEGY = "00000000-0000-0000-0000-000000000000"  # merge by the payload class
CUSTOM_MERGER_STRATEGY = "1897ef5f-18bc-4557-939c-9d6a8afd1519"  # a user's HoodieRecordMerger
_STRATEGY_OF_MODE = {_EVENT: EVENT_TIME_STRATEGY, _COMMIT: COMMIT_TIME_STRATEGY,
                     _CUSTOM: PAYLOAD_STRATEGY}  # fmt: skip
_KNOWN_STRATEGIES = {EVENT_TIME_STRATEGY, COMMIT_TIME_STRATEGY, PAYLOAD_STRATEGY}
# Version 9 (Hudi 1.1) keys that change merging in ways we do not implement.
_PARTIAL_UPDATE_MODE = "hoodie.table.partial.update.mode"
_LEGACY_PAYLOAD_CLASS = "hoodie.table.legacy.payload.class"


@dataclass(frozen=True)
class MergeMode:
    """How the versions of a key merge: Hudi's merge mode, the payload class that spells it
    out, and the ordering (precombine) field. `EVENT_TIME_ORDERING`, `COMMIT_TIME_ORDERING`,
    or `CUSTOM` with one of the two column-wise payloads."""

    mode: RecordMergeMode
    payload: Payload
    ordering_field: str | None = None

    def __post_init__(self) -> None:
        if self.payload.mode is not self.mode:
            raise InvalidConfigError(
                f"merge mode {self.mode.value} does not go with payload "
                f"{self.payload.short_name} (Apache Hudi's mode for it: "
                f"{self.payload.mode.value})"
            )

    @classmethod
    def event_time(cls, ordering_field: str | None) -> MergeMode:
        return cls(_EVENT, Payload.DEFAULT, ordering_field)

    @classmethod
    def commit_time(cls, ordering_field: str | None = None) -> MergeMode:
        return cls(_COMMIT, Payload.OVERWRITE_WITH_LATEST, ordering_field)

    @classmethod
    def of_payload(cls, payload: Payload, ordering_field: str | None) -> MergeMode:
        return cls(payload.mode, payload, ordering_field)

    @property
    def name(self) -> str:
        """`EVENT_TIME_ORDERING`, `COMMIT_TIME_ORDERING` or `CUSTOM(<payload>)`, for messages."""
        if self.mode is _CUSTOM:
            return f"CUSTOM({self.payload.short_name})"
        return self.mode.value

    @property
    def strategy_id(self) -> str:
        return _STRATEGY_OF_MODE[self.mode]

    @property
    def by_event_time(self) -> bool:
        """Does a stored version with a larger ordering value beat an incoming one whole?"""
        return self.mode is _EVENT and self.ordering_field is not None

    @property
    def column_wise(self) -> bool:
        """Do versions merge column by column (the two CUSTOM payloads)?"""
        return self.mode is _CUSTOM

    @property
    def delete_ordering(self) -> str | None:
        """The field a delete orders by in a file slice; None: deletes order by arrival (every
        mode but event time: Hudi's payloads apply a delete whatever its ordering value)."""
        return self.ordering_field if self.mode is _EVENT else None

    def without_ordering(self) -> MergeMode:
        """This mode where the rows carry no ordering column (a read that lacks it)."""
        return replace(self, ordering_field=None)

    def table_keys(self, table_version: int) -> dict[str, str]:
        """The merge keys a table we create with this mode stores: on version 8 what Apache
        Hudi 1.2 writes (mode, strategy id, payload class); on version 6 the payload class
        (decision D7: Apache Hudi 0.x reads a table without one as
        OverwriteWithLatestAvroPayload)."""
        keys = {PAYLOAD_CLASS: self.payload.value}
        if table_version >= 8:
            keys[RECORD_MERGE_MODE] = self.mode.value
            keys[RECORD_MERGE_STRATEGY_ID] = self.strategy_id
        return keys


def merge_mode_of(props: TableProperties) -> MergeMode:
    """The table's merge mode, from `hoodie.properties`: on versions 8 and 9 the merge mode
    and strategy id (a mode absent: inferred as Apache Hudi 1.x infers it, by the payload
    class, else by the ordering field); on version 6 the payload class, absent meaning Apache
    Hudi 0.15's default, OverwriteWithLatestAvroPayload. Any other payload class or a custom
    merger: `UnsupportedTableError` naming it."""
    extra = props.extra
    name = props.name
    if props.table_version >= 9:
        partial = (extra.get(_PARTIAL_UPDATE_MODE) or "").strip().upper()
        if partial and partial != "NONE":
            raise _unsupported(name, f"{_PARTIAL_UPDATE_MODE}={partial}")
    payload_class = (extra.get(PAYLOAD_CLASS) or extra.get(_LEGACY_PAYLOAD_CLASS) or "").strip()
    payload = _payload(name, payload_class) if payload_class else None
    for key in (RECORD_MERGE_STRATEGY_ID, RECORD_MERGER_STRATEGY):
        strategy = (extra.get(key) or "").strip()
        if strategy and strategy not in _KNOWN_STRATEGIES:
            what = "a custom record merger" if strategy == CUSTOM_MERGER_STRATEGY else "merger"
            raise _unsupported(name, f"{key}={strategy} ({what})")
    ordering = props.precombine_field
    if props.table_version < 8:
        return MergeMode.of_payload(payload or Payload.OVERWRITE_WITH_LATEST, ordering)
    stored = (props.record_merge_mode or "").strip().upper()
    if not stored:
        if payload is not None:
            return MergeMode.of_payload(payload, ordering)
        return MergeMode.event_time(ordering) if ordering else MergeMode.commit_time(ordering)
    try:
        mode = RecordMergeMode(stored)
    except ValueError:
        raise _unsupported(name, f"{RECORD_MERGE_MODE}={stored}") from None
    if mode is _CUSTOM:
        if payload is None or payload.mode is not _CUSTOM:
            what = payload.short_name if payload else "no payload class"
            raise _unsupported(name, f"{RECORD_MERGE_MODE}=CUSTOM with {what}")
        return MergeMode.of_payload(payload, ordering)
    if payload is not None and payload.mode is mode:
        return MergeMode(mode, payload, ordering)
    # Apache Hudi 1.x merges an EVENT/COMMIT_TIME_ORDERING table by the mode, whatever
    # payload class it names (its upgrade keeps OverwriteWithLatest's class on some).
    return MergeMode.event_time(ordering) if mode is _EVENT else MergeMode.commit_time(ordering)


def _payload(table: str, class_name: str) -> Payload:
    try:
        return Payload(class_name)
    except ValueError:
        raise _unsupported(table, f"payload class {class_name}") from None


def _unsupported(table: str, what: str) -> UnsupportedTableError:
    supported = ", ".join(p.short_name for p in Payload)
    return UnsupportedTableError(
        f"table '{table}' merges records by {what}, which dbt-hoodie does not implement; it "
        f"merges by the merge modes EVENT_TIME_ORDERING and COMMIT_TIME_ORDERING and the "
        f"payloads {supported}"
    )


def merge_mode_for_write(
    payload_class: str | None, merge_mode: str | None, ordering_field: str | None
) -> MergeMode:
    """The merge mode a write's options ask for (`hoodie.datasource.write.payload.class`,
    `hoodie.write.record.merge.mode`), as Apache Hudi 1.2 resolves them for a new table: a
    payload gives its mode; a mode alone its built-in payload; neither: event time with an
    ordering field, commit time without. A mode and a payload that disagree, CUSTOM without
    a payload, or a payload we do not implement: `InvalidConfigError`."""
    payload = None
    if payload_class:
        try:
            payload = Payload(payload_class)
        except ValueError:
            supported = ", ".join(p.value for p in Payload)
            raise InvalidConfigError(
                f"payload class {payload_class} is not one dbt-hoodie merges by; supported: "
                f"{supported}"
            ) from None
    mode = RecordMergeMode(merge_mode) if merge_mode else None
    if payload is not None:
        if mode is not None and mode is not payload.mode:
            raise InvalidConfigError(
                f"hoodie.write.record.merge.mode={mode.value} and payload "
                f"{payload.short_name} disagree (Apache Hudi's mode for it: "
                f"{payload.mode.value}); set one of them"
            )
        return MergeMode.of_payload(payload, ordering_field)
    if mode is _CUSTOM:
        raise InvalidConfigError(
            "hoodie.write.record.merge.mode=CUSTOM needs a payload class "
            "(hoodie.datasource.write.payload.class): OverwriteNonDefaultsWithLatestAvroPayload "
            "or PartialUpdateAvroPayload; custom record mergers are not supported"
        )
    if mode is _COMMIT or (mode is None and ordering_field is None):
        return MergeMode.commit_time(ordering_field)
    return MergeMode.event_time(ordering_field)


def upgraded_merge_keys(props: TableProperties) -> dict[str, str]:
    """The merge keys Apache Hudi 1.2's upgrade from version 6 to 8 writes
    (`SevenToEightUpgradeHandler.upgradeMergeMode`): a payload other than Default, EventTime
    and OverwriteWithLatest is kept, mode CUSTOM; otherwise a merge-on-read table with an
    ordering field becomes EVENT_TIME_ORDERING with DefaultHoodieRecordPayload (whatever its
    payload was); otherwise DefaultHoodieRecordPayload stays event time and anything else (no
    payload class, EventTimeAvroPayload too) becomes COMMIT_TIME_ORDERING."""
    payload_class = (props.extra.get(PAYLOAD_CLASS) or "").strip()
    payload = _payload(props.name, payload_class) if payload_class else None
    if payload is not None and payload.mode is _CUSTOM:
        mode = MergeMode.of_payload(payload, props.precombine_field)
    elif props.table_type == MERGE_ON_READ and props.precombine_field:
        mode = MergeMode.event_time(props.precombine_field)
    elif payload is Payload.DEFAULT:
        mode = MergeMode.event_time(props.precombine_field)
    else:
        mode = MergeMode.commit_time(props.precombine_field)
    keys = mode.table_keys(8)
    keys[RECORD_MERGER_STRATEGY] = mode.strategy_id
    return keys


def fill_partial(partial: pa.Table, given: Collection[str], prior: pa.Table, key: str) -> pa.Table:
    """A partial update block's rows (`partial`, conformed to the full schema, its columns not
    in `given` null) with those columns from the key's version before the block (`prior`: one
    row per key, the slice merged up to the block; null where the key has none), as Apache
    Hudi 1.x's readers merge a partial record onto the older version. Then it merges as a
    whole row would."""
    position = pc.index_in(partial.column(key), value_set=prior.column(key))
    found = prior.take(position)
    for index, field in enumerate(partial.schema):
        if field.name in given or field.name not in found.column_names:
            continue
        partial = partial.set_column(index, field, found.column(field.name).cast(field.type))
    return partial


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
    mode: MergeMode,
    sequence: str = SEQUENCE,
) -> pa.Table:
    """One row per key of `rows` (a file slice's data versions), minus the deleted keys.

    `deletes` has columns (key, sequence, INSTANT[, ORDERING]); by event time `rows` carries
    INSTANT too. Unless the mode is event time, a delete cancels the versions that arrived
    before it, and a later version (a re-insert) survives. The column-wise payloads fold the
    versions that remain in arrival order (`combine`).
    """
    ordering_field = mode.ordering_field if mode.ordering_field in rows.column_names else None
    if mode.column_wise:
        if deletes.num_rows and rows.num_rows:
            last = deletes.group_by(key).aggregate([(sequence, "max")])
            rows = _after(rows, key, last, sequence)
        return fold(rows, key, replace(mode, ordering_field=ordering_field), sequence)
    if mode.delete_ordering is None:
        ordering_field = None
    winners_mode = ordering_field if mode.by_event_time else None
    if deletes.num_rows == 0 or rows.num_rows == 0:
        return latest_per_key(rows, key, winners_mode, sequence)
    if ordering_field is None or ORDERING not in deletes.column_names:
        winners = latest_per_key(rows, key, winners_mode, sequence)
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


def precombine(table: pa.Table, key: str, mode: MergeMode, sequence: str | None = None) -> pa.Table:
    """A batch's one row per key, in key order (Hudi's `preCombine`): the row with the larger
    ordering value (ties: the later), and for PartialUpdateAvroPayload that row with its nulls
    filled from the others, the larger ordering values first. `sequence` names a column of
    arrival order; without it, row order is arrival order."""
    ordering = mode.ordering_field if mode.ordering_field in table.column_names else None
    if mode.payload is not Payload.PARTIAL_UPDATE or table.num_rows <= 1:
        return latest_per_key(table, key, ordering, sequence)
    if sequence is None:
        sequence = "__row"
        table = table.append_column(sequence, row_numbers(0, table.num_rows))
    sort = [(key, "ascending")]
    if ordering is not None:
        table = table.append_column(_HAS_ORDER, pc.is_valid(table.column(ordering)))
        sort += [(_HAS_ORDER, "ascending"), (ordering, "ascending")]
    # Folded from the lowest priority up, each row wins over what came before it: per column,
    # the highest-priority non-null value; the other columns the winner's.
    ordered = table.take(pc.sort_indices(table, sort + [(sequence, "ascending")]))
    groups = _Groups.of(ordered, key)
    folded = _last_non_null(ordered, groups, ordered.take(pa.array(groups.last)))
    return folded.drop_columns([c for c in (_HAS_ORDER, "__row") if c in folded.column_names])


def combine(incoming: pa.Table, stored: pa.Table, mode: MergeMode) -> pa.Table:
    """Incoming rows merged column-wise with the stored rows of the same keys (`stored[i]` is
    the stored version of `incoming[i]`, or all-null where the key is new), as the
    column-wise payloads' `combineAndGetUpdateValue` does; the other modes take `incoming`
    as it is (who wins is the caller's: `by_event_time`)."""
    if not mode.column_wise or incoming.num_rows == 0:
        return incoming
    return (
        _partial_step(stored, incoming, mode.ordering_field)
        if (mode.payload is Payload.PARTIAL_UPDATE)
        else _coalesce_step(stored, incoming)
    )


def fold(rows: pa.Table, key: str, mode: MergeMode, sequence: str) -> pa.Table:
    """One row per key, in key order: each key's versions folded in arrival order with the
    column-wise payload's `combine` (each later version merged onto what came before), meta
    columns from the latest version.

    No pass per version: the fold has a closed form. OverwriteNonDefaults: per column, the last
    non-null value. PartialUpdate: a version that reaches the key's largest ordering value so
    far (ties: the later) takes over, the others only fill nulls; so per column the first
    non-null of those record versions, latest first, then of the others, earliest first.
    """
    if rows.num_rows <= 1:
        return rows
    ordered = rows.take(pc.sort_indices(rows, [(key, "ascending"), (sequence, "ascending")]))
    groups = _Groups.of(ordered, key)
    latest = ordered.take(pa.array(groups.last))
    ordering = mode.ordering_field
    if mode.payload is not Payload.PARTIAL_UPDATE or ordering is None:
        return _last_non_null(ordered, groups, latest)
    # the ordering values as dense ranks, null lowest; a running maximum per key (keys
    # outweigh ranks) tells the record versions
    ranks = _dense_ranks(as_array(ordered.column(ordering)))
    scaled = groups.of_row * (int(ranks.max()) + 1) + ranks
    before = np.empty_like(scaled)
    before[0] = -1
    before[1:] = np.maximum.accumulate(scaled)[:-1]
    record = groups.first | (scaled >= before)
    arrival = np.arange(len(scaled))
    # lowest priority first: the others latest first, then the record versions earliest first
    priority = np.lexsort((np.where(record, arrival, -arrival), record, groups.of_row))
    return _last_non_null(ordered.take(pa.array(priority)), groups, latest)


def _dense_ranks(values: pa.Array) -> np.ndarray:
    """Each value's rank among the distinct values (1, 2, ...), a null 0 (below any value)."""
    ranks = np.zeros(len(values), dtype=np.int64)
    valid = np.flatnonzero(pc.is_valid(values).to_numpy(zero_copy_only=False))
    if len(valid) == 0:
        return ranks
    present = values.take(pa.array(valid))
    order = pc.sort_indices(present).to_numpy()
    ordered = present.take(pa.array(order))
    step = np.ones(len(order), dtype=np.int64)
    if len(order) > 1:
        step[1:] = pc.not_equal(ordered.slice(1), ordered.slice(0, len(order) - 1)).to_numpy(
            zero_copy_only=False
        )
    ranks[valid[order]] = np.cumsum(step)
    return ranks


@dataclass(frozen=True)
class _Groups:
    """The runs of equal keys of a table sorted by key."""

    of_row: np.ndarray  # each row's group number
    first: np.ndarray  # per row: does a group start there?
    last: np.ndarray  # per group: its last row

    @classmethod
    def of(cls, rows: pa.Table, key: str) -> _Groups:
        n = rows.num_rows
        keys = as_array(rows.column(key))
        first = np.ones(n, dtype=bool)
        if n > 1:
            changed = pc.fill_null(pc.not_equal(keys.slice(1), keys.slice(0, n - 1)), True)
            first[1:] = changed.to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(first)
        return cls(np.cumsum(first) - 1, first, np.append(starts[1:], n) - 1)


def _last_non_null(rows: pa.Table, groups: _Groups, meta: pa.Table) -> pa.Table:
    """One row per group of `rows` (sorted by group, then by rising priority; `groups` gives
    the group of each row): each data column its last non-null value (null if none), the other
    columns as `meta` (one row per group) has them."""
    data = set(_data_columns(rows))
    count = len(groups.last)
    columns = []
    for field in rows.schema:
        if field.name not in data:
            columns.append(meta.column(field.name))
            continue
        values = as_array(rows.column(field.name))
        valid = np.flatnonzero(pc.is_valid(values).to_numpy(zero_copy_only=False))
        pick = np.full(count, -1, dtype=np.int64)
        if len(valid):
            owner = groups.of_row[valid]
            last = np.append(owner[1:] != owner[:-1], True)
            pick[owner[last]] = valid[last]
        columns.append(values.take(pa.array(pick, mask=pick < 0)))
    return pa.Table.from_arrays(columns, schema=rows.schema)


def _data_columns(table: pa.Table) -> list[str]:
    """The columns a column-wise payload merges: all but Hudi's meta columns and ours."""
    return [c for c in table.column_names if c not in META_COLUMNS and not c.startswith("__")]


def _coalesce_step(older: pa.Table, newer: pa.Table) -> pa.Table:
    """OverwriteNonDefaultsWithLatestAvroPayload: the newer row's non-null columns over the
    older's (a null is the default of every nullable column Spark writes)."""
    return _merged(newer, older, newer)


def _partial_step(older: pa.Table, newer: pa.Table, ordering: str | None) -> pa.Table:
    """PartialUpdateAvroPayload: the row with the larger ordering value (ties: the newer),
    its nulls filled from the other; meta columns from the newer (its
    `mergeDisorderRecordsWithMetadata`)."""
    if ordering is None or ordering not in newer.column_names:
        return _merged(newer, older, newer)
    # the older rows in the newer's columns: a column added since they were written is null
    # in them, and the loser's value fills it when the older row wins
    older = _pick(pa.array(np.zeros(older.num_rows, bool)), newer, older)
    newer_wins = incoming_wins(
        as_array(newer.column(ordering)),
        as_array(older.column(ordering)).cast(newer.schema.field(ordering).type),
    )
    winner = _pick(newer_wins, newer, older)
    loser = _pick(newer_wins, older, newer)
    return _merged(winner, loser, newer)


def _pick(condition: pa.Array, yes: pa.Table, no: pa.Table) -> pa.Table:
    columns = []
    for name in yes.column_names:
        other = (
            no.column(name).cast(yes.schema.field(name).type)
            if name in no.column_names
            else (pa.nulls(no.num_rows, yes.schema.field(name).type))
        )
        columns.append(pc.if_else(condition, yes.column(name), other))
    return pa.Table.from_arrays(columns, schema=yes.schema)


def _merged(first: pa.Table, second: pa.Table, meta: pa.Table) -> pa.Table:
    """Per data column of `meta`'s schema, `first`'s value unless null, then `second`'s; the
    other columns as `meta` has them."""
    data = set(_data_columns(meta))
    columns = []
    for field in meta.schema:
        name = field.name
        if name not in data:
            columns.append(meta.column(name))
            continue
        one = first.column(name).cast(field.type) if name in first.column_names else None
        two = second.column(name).cast(field.type) if name in second.column_names else None
        if one is None or two is None:
            columns.append(one if one is not None else two)
        else:
            columns.append(pc.coalesce(one, two))
    return pa.Table.from_arrays(columns, schema=meta.schema)


def incoming_wins(incoming: pa.Array, stored: pa.Array) -> pa.Array:
    """Per row: does the incoming ordering value win? Nulls lose to any value; ties and two
    nulls go to the incoming."""
    result = pc.greater_equal(incoming, stored)
    result = pc.if_else(pc.is_null(stored), True, result)
    result = pc.if_else(pc.and_(pc.is_null(incoming), pc.is_valid(stored)), False, result)
    return pc.fill_null(result, True)


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

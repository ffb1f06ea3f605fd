"""Reading one file slice: the base file, merged with its log files for snapshot queries.

Runs inside a Spark task. Log blocks count only if their instant completed at or before the
read's instant (or was archived before the active timeline starts, see
`hoodie.fs_view.CommittedInstants`) and no rollback command block retracted it. Records then
merge by key with the rule of `hoodie.merge.merge_slice` (Hudi's merged log record reader, as
hudi-rs applies it): the version with the largest ordering value wins, and a delete block (or
a `_hoodie_is_deleted` row) removes it if the delete is newer by ordering value, or by
instant when the delete has none.
"""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import accumulate
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..exceptions import HoodieError
from ..fs_view import CommittedInstants, damaged_data_file, live_log_blocks
from ..keygen import record_keys_of
from ..logformat import BlockType, DeleteRecord, LogBlock
from ..merge import INSTANT, ORDERING, SEQUENCE, MergeMode, fill_partial, merge_slice
from ..naming import parse_base_file_name
from ..schema import COMMIT_TIME, IS_DELETED, RECORD_KEY, as_array, constant_column, row_numbers
from ..storage import FileIO
from .data_skipping import Footer
from .planner import FileSplit
from .predicates import Predicate
from .row_matching import matching_rows, required_keys

if TYPE_CHECKING:  # (files are opened through FileIO)
    import pyarrow.parquet as pq  # noqa: TID251

BATCH_ROWS = 65536


@dataclass(frozen=True)
class SliceReadSpec:
    """What every task of one read needs besides its split (pickled once per task)."""

    storage: FileIO
    schema: pa.Schema  # the output schema: the snapshot's columns, or those a read asked for
    record_key_fields: tuple[str, ...]
    merge_mode: MergeMode  # the table's (`hoodie.merge.merge_mode_of`)
    # Instants whose blocks count: completed writes at or before the read instant, and those
    # archived before the active timeline starts (`in` works on both types).
    valid_instants: CommittedInstants | frozenset[str] | Container[str]
    merge_logs: bool = True
    commit_time_range: tuple[str, str] | None = None  # incremental: (begin excl., end incl.)
    # Incremental reads of a layout 2 timeline: the instants that completed in the range (their
    # requested times are what rows carry); rows are kept by membership, not by the range.
    commit_times: frozenset[str] | None = None
    # The snapshot's columns, when `schema` is a projection: merging needs the key, ordering
    # and delete columns even when the read does not return them.
    merge_schema: pa.Schema | None = None
    # The read's filter (Spark's pushed filters, with the record keys they name): rows it
    # rules out are dropped in the task, and only the keys it names are merged
    # (`row_matching`). None for reads without one, and always for compaction.
    row_filter: Predicate | None = None

    @property
    def full_schema(self) -> pa.Schema:
        return self.merge_schema if self.merge_schema is not None else self.schema

    @cached_property
    def required_keys(self) -> frozenset[str] | None:
        """The record keys every row `row_filter` keeps has one of, if it names them
        (`row_matching.required_keys`): only those keys' rows are read and merged."""
        return None if self.row_filter is None else required_keys(self.row_filter)


def conform(table: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """Columns of `schema` in order and type; columns the data lacks read as null."""
    names = table.schema.names
    arrays = []
    for field in schema:
        if field.name in names:
            arrays.append(as_array(table.column(field.name)).cast(field.type))
        else:
            arrays.append(pa.nulls(table.num_rows, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def read_slice(spec: SliceReadSpec, split: FileSplit) -> Iterator[pa.RecordBatch]:
    if spec.merge_logs and split.log_files:
        merged, _ = merged_slice(spec, split)
        for batch in merged.to_batches(max_chunksize=BATCH_ROWS):
            yield from _emit(spec, batch)
        return
    if split.base_file is None:
        return
    yield from _read_base(spec, split.base_file)


def _read_base(spec: SliceReadSpec, relative: str) -> Iterator[pa.RecordBatch]:
    """The base file's rows, opening only the columns the read needs."""
    damaged = partial(damaged_data_file, spec.storage, relative, "a parquet base file")
    with damaged():
        parquet = spec.storage.parquet_file(relative)
    wanted = set(spec.schema.names)
    if spec.commit_time_range is not None:
        wanted.add(COMMIT_TIME)  # `_emit` filters on it
    columns = [name for name in parquet.schema_arrow.names if name in wanted]
    keys = spec.required_keys
    groups = None if keys is None else row_groups_with_keys(parquet.metadata, sorted(keys))
    if groups == []:
        return
    batches = parquet.iter_batches(columns=columns, batch_size=BATCH_ROWS, row_groups=groups)
    while True:
        with damaged():
            batch = next(batches, None)
        if batch is None:
            return
        yield from _emit(spec, batch)


def _emit(spec: SliceReadSpec, batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    if spec.commit_time_range is not None and batch.num_rows:
        begin, end = spec.commit_time_range
        times = batch.column(COMMIT_TIME)
        if spec.commit_times is not None:
            keep = pc.is_in(times, value_set=pa.array(sorted(spec.commit_times), pa.string()))
        else:
            keep = pc.and_(pc.greater(times, begin), pc.less_equal(times, end))
        batch = batch.filter(pc.fill_null(keep, False))
    batch = matching_rows(batch, spec.row_filter)
    if batch.num_rows:
        yield conform(batch, spec.schema)


def _key_column(spec: SliceReadSpec, table: pa.Table) -> pa.Array:
    if RECORD_KEY in table.column_names:
        return as_array(table.column(RECORD_KEY)).cast(pa.string())
    # Tables written without meta fields: the key comes from the record key fields.
    return record_keys_of(table, spec.record_key_fields)


def merged_slice(spec: SliceReadSpec, split: FileSplit) -> tuple[pa.Table, int]:
    """The slice's records after merging base file and log blocks per key (Hudi's merged log
    record reader), and how many log records (and deletes) it read. Snapshot reads emit the
    table; compaction writes it as the slice's new base file.

    Only the keys the logs name are merged: the base file's other rows pass through in their
    order, without the sort and gather of every column that merging the whole slice costs.
    (A base file holds each key once, so its untouched rows need no deduplication.)
    """
    deletes: list[pa.Table] = []
    sequence = 0
    # A read that names the record keys its rows have merges only theirs (`row_matching`).
    keys = spec.required_keys
    wanted = None if keys is None else pa.array(sorted(keys), pa.string())

    def keyed(table: pa.Table, instant: str) -> pa.Table | None:
        """`table` in the slice schema with a sequence number and the instant that wrote each
        row (its commit time; `instant` where the data has none); soft deletes go to
        `deletes`. Only the `wanted` keys' rows, where the read names its keys."""
        nonlocal sequence
        if table.num_rows == 0:
            return None
        key = _key_column(spec, table)
        if wanted is not None:
            named = pc.is_in(key, value_set=wanted)
            table, key = table.filter(named), key.filter(named)
        n = table.num_rows
        if n == 0:
            return None
        rows = pa.Table.from_batches([conform(table, spec.full_schema)])
        # The snapshot schema always has the record key column; fill it from the data too
        # (tables written without meta fields only have the key field itself).
        rows = rows.set_column(
            rows.schema.get_field_index(RECORD_KEY), pa.field(RECORD_KEY, pa.string()), key
        )
        rows = rows.append_column(SEQUENCE, row_numbers(sequence, n))
        written = constant_column(instant, n)
        if COMMIT_TIME in table.column_names:
            written = pc.coalesce(as_array(table.column(COMMIT_TIME)).cast(pa.string()), written)
        rows = rows.append_column(INSTANT, written)
        sequence += n
        if IS_DELETED in table.column_names:
            flagged = pc.fill_null(as_array(table.column(IS_DELETED)), False)
            if pc.any(flagged).as_py():
                soft = rows.filter(flagged)
                deletes.append(
                    pa.table(
                        {
                            RECORD_KEY: soft.column(RECORD_KEY),
                            SEQUENCE: soft.column(SEQUENCE),
                            INSTANT: soft.column(INSTANT),
                            ORDERING: _ordering_values(spec, soft),
                        }
                    )
                )
                rows = rows.filter(pc.invert(flagged))
        return rows

    base = None
    if split.base_file is not None:
        parsed = parse_base_file_name(posixpath.basename(split.base_file))
        if parsed is None:
            raise HoodieError(f"the base file '{split.base_file}' has no base file name")
        base_instant = parsed.instant
        with damaged_data_file(spec.storage, split.base_file, "a parquet base file"):
            base = keyed(_base_rows(spec, split.base_file, keys), base_instant)
    base_rows = sequence
    logged: list[pa.Table] = []
    for relative, block in _committed_blocks(spec, split):
        instant = block.instant_time
        assert instant is not None  # committed: `valid_instants` holds instant times only
        if block.block_type in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
            # (a block's bytes may decode yet hold values its schema does not: damage too)
            with damaged_data_file(spec.storage, relative, f"a log block of instant {instant}"):
                records = block.records() if wanted is None else block.records_with_keys(wanted)
                rows = keyed(records, instant)
            if rows is not None and block.is_partial:
                prior = _merged_before(spec, base, logged, deletes, rows.column(RECORD_KEY))
                given = {*records.column_names, RECORD_KEY, SEQUENCE, INSTANT}
                rows = fill_partial(rows, given, prior, RECORD_KEY)
            if rows is not None:
                logged.append(rows)
        elif block.block_type is BlockType.DELETE:
            with damaged_data_file(spec.storage, relative, f"a log block of instant {instant}"):
                deleted = block.deleted_records()
            if keys is not None:
                deleted = [r for r in deleted if r.record_key in keys]
            n = len(deleted)
            deletes.append(
                pa.table(
                    {
                        RECORD_KEY: pa.array([r.record_key for r in deleted], pa.string()),
                        SEQUENCE: row_numbers(sequence, n),
                        INSTANT: constant_column(instant, n),
                        ORDERING: _delete_ordering(deleted),
                    }
                )
            )
            sequence += n
    log_records = sequence - base_rows
    candidates = logged
    untouched = None
    if base is not None:
        touched = [t.column(RECORD_KEY) for t in (*logged, *deletes)]
        if touched:
            keys = pa.chunked_array(touched, pa.string()).combine_chunks()
            hit = pc.is_in(base.column(RECORD_KEY), value_set=keys)
            untouched = base.filter(pc.invert(hit))
            candidates = [base.filter(hit), *logged]
        else:
            untouched = base
    parts = []
    if untouched is not None and untouched.num_rows:
        parts.append(untouched)
    if candidates:
        rows = pa.concat_tables(candidates, promote_options="permissive")
        all_deletes = (
            pa.concat_tables([_typed(spec, rows, d) for d in deletes], promote_options="permissive")
            if deletes
            else pa.table({RECORD_KEY: pa.array([], pa.string())})
        )
        parts.append(merge_slice(rows, RECORD_KEY, all_deletes, spec.merge_mode))
    if not parts:
        empty = spec.full_schema.empty_table()
        return empty, log_records
    latest = pa.concat_tables(parts, promote_options="permissive")
    # `_emit` narrows a projection after the commit-time filter, which needs the meta column.
    merged = latest.select(spec.full_schema.names)
    return merged, log_records


def _base_rows(spec: SliceReadSpec, relative: str, keys: frozenset[str] | None) -> pa.Table:
    """The base file's rows; where the read names its record keys, only the row groups whose
    key statistics may hold one of them are decoded (base files are written in key order, so
    a point read decodes one row group), and none where the footer's bloom filter holds none
    of them, nor where their key column has none: a base file's keys span the key space, so
    the statistics of most files admit any one key (a 10M-row point read decoded five files'
    row groups, 0.4 s each)."""
    if keys is None:
        return spec.storage.read_parquet(relative)
    parquet = spec.storage.parquet_file(relative)
    wanted = sorted(keys)
    groups = row_groups_with_keys(parquet.metadata, wanted)
    if groups is None:
        return parquet.read()
    if groups and _bloom_may_hold(relative, parquet, wanted):
        groups = _groups_holding(parquet, groups, wanted)
    else:
        groups = []
    if not groups:
        return parquet.schema_arrow.empty_table()
    return parquet.read_row_groups(groups)


def _groups_holding(parquet: pq.ParquetFile, groups: list[int], keys: list[str]) -> list[int]:
    """Those of `groups` that hold one of `keys`, told by their key column alone: a filter
    saturates in a file of more keys than hoodie.bloom.index.filter.dynamic.max.entries (at
    10M rows, files of 590,000 and 920,000 keys said "maybe" to a key they lack), and every
    column of such a file's row group took 0.4-0.5 s to decode."""
    stored = parquet.read_row_groups(groups, columns=[RECORD_KEY]).column(0)
    hit = pc.is_in(stored, value_set=pa.array(keys, pa.string()))
    if not pc.any(hit).as_py():
        return []
    ends = list(accumulate(parquet.metadata.row_group(g).num_rows for g in groups))
    rows = pc.indices_nonzero(hit).to_numpy()
    return sorted({groups[bisect.bisect_right(ends, int(row))] for row in rows})


def _bloom_may_hold(relative: str, parquet: pq.ParquetFile, keys: list[str]) -> bool:
    """Whether the base file's bloom filter may hold one of `keys`; true where the footer has
    none, or one we do not read (`Footer.bloom`, as data skipping reads it)."""
    bloom = Footer(relative, parquet.schema_arrow, parquet.metadata).bloom()
    return bloom is None or any(bloom.might_contain(keys))


def row_groups_with_keys(metadata: pq.FileMetaData, keys: list[str]) -> list[int] | None:
    """The row groups whose `_hoodie_record_key` statistics may hold one of the sorted `keys`
    (a group without statistics may hold any); None where the file has no key column."""
    leaves = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    if RECORD_KEY not in leaves:
        return None
    column = leaves.index(RECORD_KEY)  # (a leaf's number: nested columns count their leaves)
    groups = []
    for number in range(metadata.num_row_groups):
        stats = metadata.row_group(number).column(column).statistics
        if stats is None or not stats.has_min_max:
            groups.append(number)
            continue
        low, high = stats.min, stats.max
        if isinstance(low, bytes) or isinstance(high, bytes):
            groups.append(number)  # (not a string column's statistics: not judged)
            continue
        first = bisect.bisect_left(keys, low)
        if first < len(keys) and keys[first] <= high:
            groups.append(number)
    return groups


def _merged_before(
    spec: SliceReadSpec,
    base: pa.Table | None,
    logged: list[pa.Table],
    deletes: list[pa.Table],
    keys: pa.ChunkedArray,
) -> pa.Table:
    """The slice merged up to a partial update block, for the block's keys: what its records
    are merged onto (one row per key still there)."""
    wanted = keys.combine_chunks()
    versions = [t.filter(pc.is_in(t.column(RECORD_KEY), value_set=wanted))
                for t in ([base] if base is not None else []) + logged]  # fmt: skip
    if not versions:
        return spec.full_schema.empty_table()
    rows = pa.concat_tables(versions, promote_options="permissive")
    removed = (
        pa.concat_tables([_typed(spec, rows, d) for d in deletes], promote_options="permissive")
        if deletes
        else pa.table({RECORD_KEY: pa.array([], pa.string())})
    )
    return merge_slice(rows, RECORD_KEY, removed, spec.merge_mode)


def _typed(spec: SliceReadSpec, rows: pa.Table, deletes: pa.Table) -> pa.Table:
    """`deletes` with its ordering values in the ordering column's type (so that deletes of
    several blocks concatenate); a value that cannot be read as that type counts as none."""
    field = spec.merge_mode.delete_ordering
    if field is None or field not in rows.column_names or ORDERING not in deletes.column_names:
        return deletes
    wanted = rows.schema.field(field).type
    values = deletes.column(ORDERING)
    try:
        values = values.cast(wanted)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = pa.nulls(len(values), wanted)
    return deletes.set_column(deletes.schema.get_field_index(ORDERING), ORDERING, values)


def _ordering_values(spec: SliceReadSpec, rows: pa.Table) -> pa.Array:
    field = spec.merge_mode.delete_ordering
    if field is None or field not in rows.column_names:
        return pa.nulls(rows.num_rows)
    return as_array(rows.column(field))


def _delete_ordering(records: list[DeleteRecord]) -> pa.Array:
    """Delete records' ordering values; null where Hudi's default means "no ordering"."""
    values = [None if r.natural_order else r.ordering_value for r in records]
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.nulls(len(values))


def _committed_blocks(spec: SliceReadSpec, split: FileSplit) -> list[tuple[str, LogBlock]]:
    """Data and delete blocks of completed instants that no rollback block retracted, with the
    log file each is in. Corrupt blocks are skipped where no completed write recorded bytes
    (see `checked_log_blocks`)."""
    spans = [split.log_writes[i] if i < len(split.log_writes) else ()
             for i in range(len(split.log_files))]  # fmt: skip
    return live_log_blocks(spec.storage, zip(split.log_files, spans), spec.valid_instants)

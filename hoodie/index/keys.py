"""The record keys a file slice stores, as tagging reads them: the key column only.

A slice's keys are those of its base file and, where keys may live in log files alone (a
slice without a base file, or a file group some delta commit sent inserts to), of the data
blocks of its log files from completed instants.

Tagging holds the files to the same rule as the reader (`checked_log_blocks`,
`damaged_data_file`): a corrupt block a completed write recorded, or a base or log file that
does not read, is a `DamagedFileError` that stops the write. Skipping it would miss keys, and
the upsert would insert a second copy of each in silence. Corrupt bytes no completed write
recorded (the torn tail of a failed append) are skipped, as Apache Hudi skips them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..fs_view import (
    BlockSpan,
    CommittedInstants,
    FileSlice,
    FileSystemView,
    checked_log_blocks,
    damaged_data_file,
)
from ..logformat import BlockType
from ..merge import INSTANT, ORDERING, SEQUENCE, MergeMode, fill_partial, merge_slice
from ..naming import parse_base_file_name
from ..schema import COMMIT_TIME, IS_DELETED, RECORD_KEY, constant_column, row_numbers
from ..storage import FileIO

if TYPE_CHECKING:  # (files are opened through FileIO)
    import pyarrow.parquet as pq  # noqa: TID251

_BATCH_ROWS = 65536


@dataclass(frozen=True)
class KeySource:
    """The files of one file slice whose record keys the index reads (relative paths)."""

    partition_path: str
    file_id: str
    base_file: str | None
    log_files: tuple[str, ...] = ()
    # Per log file: the blocks completed writes recorded in it (see `checked_log_blocks`).
    log_writes: tuple[tuple[BlockSpan, ...], ...] = ()

    @classmethod
    def of(
        cls, file_slice: FileSlice, *, with_logs: bool, view: FileSystemView | None = None
    ) -> KeySource:
        """The slice's files; its log files' recorded blocks from `view`'s completed writes."""
        base = file_slice.base_file.relative_path if file_slice.base_file else None
        logs = tuple(lf.relative_path for lf in file_slice.log_files) if with_logs else ()
        writes = view.block_spans(logs) if view is not None else ()
        return cls(file_slice.partition_path, file_slice.file_id, base, logs, writes)


def stored_keys(
    storage: FileIO,
    source: KeySource,
    committed: CommittedInstants,
    footers: dict[str, pq.FileMetaData] | None = None,
) -> Iterator[pa.Array]:
    """The keys of `source`, in chunks (a key may appear in a base file and its logs).
    `footers`: where the base file's parsed footer is left, by its path, for a later open of
    the file (`FileIO.parquet_file`; a write task rewriting the file reads it again)."""
    if source.base_file is not None:
        damaged = partial(damaged_data_file, storage, source.base_file, "a parquet base file")
        with damaged():
            parquet = storage.parquet_file(source.base_file)
        if footers is not None:
            footers[source.base_file] = parquet.metadata
        chunks = parquet.iter_batches(columns=[RECORD_KEY], batch_size=_BATCH_ROWS)
        while True:
            with damaged():
                chunk = next(chunks, None)
            if chunk is None:
                break
            yield chunk.column(0)
    for index, relative in enumerate(source.log_files):
        written = source.log_writes[index] if index < len(source.log_writes) else ()
        for block in checked_log_blocks(storage, relative, committed, written):
            if block.block_type not in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
                continue  # (a corrupt block here is outside every completed write's bytes)
            # Blocks of failed writes do not make a key exist. (A key of a rolled-back block
            # is counted: it only routes that key's next version to this file group.)
            if block.instant_time not in committed:
                continue
            what = f"a log block of instant {block.instant_time}"
            with damaged_data_file(storage, relative, what):
                keys = block.records(columns=[RECORD_KEY]).column(0).combine_chunks()
            yield keys


def live_versions(
    storage: FileIO,
    source: KeySource,
    committed: CommittedInstants,
    keys: pa.Array,
    mode: MergeMode,
    columns: tuple[str, ...] = (),
) -> pa.Table:
    """The versions of `keys` the slice of `source` (read with its logs) holds after merging,
    as a snapshot read merges it (`merge.merge_slice`): (key[, ordering value], *columns), one
    row per key still there. A key of the base file that a log's delete removed is not: a
    global index asks this of the keys it found, since on merge-on-read a record moved out of
    a file group stays in its base file until compaction, and a move compares the stored
    ordering value (only by event time: the ordering field of `mode`). `columns`: data
    columns to return too (a partial update's kept columns; null where a version lacks one),
    and then rows flagged `_hoodie_is_deleted` count as deletes, as the slice reader takes
    them."""
    ordering_field = mode.ordering_field if mode.by_event_time else None
    extra = [c for c in columns if c not in (RECORD_KEY, COMMIT_TIME, ordering_field)]
    if extra:
        extra.append(IS_DELETED)
    merging = mode if ordering_field else mode.without_ordering()
    read = [RECORD_KEY, COMMIT_TIME] + ([ordering_field] if ordering_field else [])
    columns_read = read + [c for c in extra if c not in read]
    versions: list[pa.Table] = []
    deletes: list[pa.Table] = []
    sequence = 0
    names = set(keys.to_pylist())

    def wanted(rows: pa.Table, instant: str) -> None:
        nonlocal sequence
        rows = rows.select([c for c in columns_read if c in rows.column_names])
        rows = rows.filter(pc.is_in(rows.column(RECORD_KEY).cast(pa.string()), value_set=keys))
        n = rows.num_rows
        if n == 0:
            return
        written = pc.coalesce(rows.column(COMMIT_TIME).cast(pa.string()), instant)
        table = pa.table({RECORD_KEY: rows.column(RECORD_KEY).cast(pa.string()),
                          SEQUENCE: row_numbers(sequence, n), INSTANT: written})  # fmt: skip
        if ordering_field:
            table = table.append_column(ordering_field, rows.column(ordering_field))
        for name in extra:
            if name in rows.column_names and name not in table.column_names:
                table = table.append_column(name, rows.column(name))
        if IS_DELETED in table.column_names:
            flagged = pc.fill_null(table.column(IS_DELETED), False)
            if pc.any(flagged).as_py():
                soft = table.filter(flagged)
                ordering = (soft.column(ordering_field) if ordering_field
                            else pa.nulls(soft.num_rows))  # fmt: skip
                deletes.append(pa.table({RECORD_KEY: soft.column(RECORD_KEY),
                                         SEQUENCE: soft.column(SEQUENCE),
                                         INSTANT: soft.column(INSTANT),
                                         ORDERING: ordering}))  # fmt: skip
                table = table.filter(pc.invert(flagged))
            table = table.drop_columns([IS_DELETED])
        versions.append(table)
        sequence += n

    if source.base_file is not None:
        with damaged_data_file(storage, source.base_file, "a parquet base file"):
            file_columns = read
            if extra:  # (a base file written before a column was added lacks it)
                present = storage.parquet_file(source.base_file).schema_arrow.names
                file_columns = [c for c in columns_read if c in present]
            base = storage.read_parquet(source.base_file, columns=file_columns)
        parsed = parse_base_file_name(posixpath.basename(source.base_file))
        wanted(base, parsed.instant if parsed else "")
    for index, relative in enumerate(source.log_files):
        written = source.log_writes[index] if index < len(source.log_writes) else ()
        for block in checked_log_blocks(storage, relative, committed, written):
            instant = block.instant_time
            if instant is None or instant not in committed:
                continue
            what = f"a log block of instant {instant}"
            if block.block_type in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
                with damaged_data_file(storage, relative, what):
                    # (a block written before a column was added lacks it, a partial update
                    # block the columns it did not change: read whole)
                    records = block.records(columns=None if extra or block.is_partial else read)
                    added = len(versions)
                    wanted(records, instant)
                if block.is_partial and len(versions) > added:
                    filled = [c for c in columns_read if c != IS_DELETED]
                    versions[-1] = _onto_prior(versions, deletes, records.column_names, filled,
                                               merging)  # fmt: skip
            elif block.block_type is BlockType.DELETE:
                with damaged_data_file(storage, relative, what):
                    named = [r for r in block.deleted_records() if r.record_key in names]
                n = len(named)
                deletes.append(pa.table({
                    RECORD_KEY: pa.array([r.record_key for r in named], pa.string()),
                    SEQUENCE: row_numbers(sequence, n),
                    INSTANT: constant_column(instant, n),
                    ORDERING: pa.array([None if r.natural_order else r.ordering_value
                                        for r in named]),
                }))  # fmt: skip
                sequence += n
    if not versions:
        empty = {RECORD_KEY: pa.array([], pa.string())}
        return pa.table(empty)
    merged = _merged(versions, deletes, merging)
    out = [RECORD_KEY] + ([ordering_field] if ordering_field else [])
    out += [c for c in columns if c not in out and c in merged.column_names]
    return merged.select(out)


def _merged(versions: list[pa.Table], deletes: list[pa.Table], mode: MergeMode) -> pa.Table:
    rows = pa.concat_tables(versions, promote_options="permissive")
    removed = (
        pa.concat_tables(deletes, promote_options="permissive")
        if deletes
        else pa.table({RECORD_KEY: pa.array([], pa.string())})
    )
    return merge_slice(rows, RECORD_KEY, removed, mode)


def _onto_prior(
    versions: list[pa.Table],
    deletes: list[pa.Table],
    given: list[str],
    columns: list[str],
    mode: MergeMode,
) -> pa.Table:
    """The last of `versions`, a partial update block's, with the `columns` its block did
    not have (`given`) taken from the keys' versions before it (null where none)."""
    latest = versions[-1]
    earlier = [v.filter(pc.is_in(v.column(RECORD_KEY), value_set=latest.column(RECORD_KEY)))
               for v in versions[:-1]]  # fmt: skip
    earlier = [v for v in earlier if v.num_rows]
    if not earlier:
        return latest
    prior = _merged(earlier, deletes, mode)
    for name in columns:
        if name not in latest.column_names and name in prior.column_names:
            field = prior.schema.field(name).with_nullable(True)
            latest = latest.append_column(field, pa.nulls(latest.num_rows, field.type))
    return fill_partial(latest, {*given, RECORD_KEY, SEQUENCE, INSTANT}, prior, RECORD_KEY)

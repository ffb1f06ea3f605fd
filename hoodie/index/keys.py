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

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import pyarrow as pa

from ..fs_view import (
    BlockSpan,
    CommittedInstants,
    FileSlice,
    FileSystemView,
    checked_log_blocks,
    damaged_data_file,
)
from ..logformat import BlockType
from ..schema import RECORD_KEY
from ..storage import FileIO

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
    storage: FileIO, source: KeySource, committed: CommittedInstants
) -> Iterator[pa.Array]:
    """The keys of `source`, in chunks (a key may appear in a base file and its logs)."""
    if source.base_file is not None:
        damaged = partial(damaged_data_file, storage, source.base_file, "a parquet base file")
        with damaged():
            parquet = storage.parquet_file(source.base_file)
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

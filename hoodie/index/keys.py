"""The record keys a file slice stores, as tagging reads them: the key column only.

A slice's keys are those of its base file and, where keys may live in log files alone (a
slice without a base file, or a file group some delta commit sent inserts to), of the data
blocks of its log files from completed instants.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from ..fs_view import CommittedInstants, FileSlice, listed_log_blocks
from ..logformat import BlockType
from ..schema import RECORD_KEY
from ..storage import Storage

_BATCH_ROWS = 65536


@dataclass(frozen=True)
class KeySource:
    """The files of one file slice whose record keys the index reads (relative paths)."""

    partition_path: str
    file_id: str
    base_file: str | None
    log_files: tuple[str, ...] = ()

    @classmethod
    def of(cls, file_slice: FileSlice, *, with_logs: bool) -> KeySource:
        base = file_slice.base_file.relative_path if file_slice.base_file else None
        logs = tuple(lf.relative_path for lf in file_slice.log_files) if with_logs else ()
        return cls(file_slice.partition_path, file_slice.file_id, base, logs)


def stored_keys(
    storage: Storage, source: KeySource, committed: CommittedInstants
) -> Iterator[pa.Array]:
    """The keys of `source`, in chunks (a key may appear in a base file and its logs)."""
    if source.base_file is not None:
        parquet = storage.parquet_file(source.base_file)
        for chunk in parquet.iter_batches(columns=[RECORD_KEY], batch_size=_BATCH_ROWS):
            yield chunk.column(0)
    for relative in source.log_files:
        for block in listed_log_blocks(storage, relative, committed):
            if block.block_type not in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
                continue
            # Blocks of failed writes do not make a key exist. (A key of a rolled-back block
            # is counted: it only routes that key's next version to this file group.)
            if block.instant_time not in committed:
                continue
            yield block.records(columns=[RECORD_KEY]).column(0).combine_chunks()

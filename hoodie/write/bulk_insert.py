"""Bulk insert: records into new file groups, in one Spark job, with no tagging.

Hudi's `bulk_insert` writes a batch that needs no index lookup (a table's first load, a full
refresh, an append-only model): the records are shuffled once by partition path and streamed
into base files that roll over at `hoodie.parquet.max.file.size` of written parquet, as Hudi's
bulk insert rolls over at its parquet writer's size. (`hoodie.copyonwrite.record.size.estimate`
sizes an upsert's inserts while a table has no commit to learn record sizes from; stored
records are often a tenth of its 1024 bytes, so a first load sized by it would write files a
tenth of the target size.) Each partition path goes to one task, so a partition gets as few
files as its size allows; an unpartitioned table is spread over the tasks by key hash instead.
Nothing is cached, counted or collected before the write.

The JVM does not sort: each task hands its rows to the writer as the shuffle delivers them,
and the writer orders them with pyarrow, per partition path, once all are in. A sort in the
JVM before the hand-off (this module's first design, by a hash of the partition path and key)
made Spark copy every row into its sorter and hand nothing over until the sort was done: at
10M rows the scan, shuffle and hand-off took 44 s with it and 28 s without, where plain
Spark's whole parquet load took 29 s (docs/performance, "Then (session 26)"). The writer keeps at
most a file's records, and `hoodie.memory.merge.max.size` bytes of them, in memory over the
task's partition paths; beyond that they go to local disk as Arrow files, read back
memory-mapped. Each partition path's records are sorted by key once
(`hoodie.merge.winner_indices`) and cut into files of consecutive key ranges, so files never
overlap in keys within a partition path of one task (routing units split partitions by those
ranges: `hoodie/index/routing.py`).

Within the batch a key keeps one record, as an upsert keeps it (`hoodie.merge`): the one with
the largest precombine value, then the later in the batch; a batch with two records of one key
and no precombine field is refused, and deletes write nothing. Against the table's existing
records nothing is checked here: the write client uses it where the table holds no records the
batch could update (its first write, an overwrite), and for an explicit bulk_insert into a
table with records once the index has looked up which keys exist (and the insert's dup policy
has failed or dropped those rows).
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..bloom_filter import HASHED_TOGETHER, BloomFilterSpec, bloom_filter_footers
from ..column_stats import FileIndexing
from ..exceptions import DuplicateRecordKeyError
from ..faults import crash_point
from ..markers import IOType, WriteMarkers
from ..merge import MergeMode, Payload, precombine, winner_indices
from ..metadata import WriteStat
from ..naming import base_file_name
from ..schema import PARTITION_PATH, RECORD_KEY, as_array, data_schema, row_numbers
from ..storage import FileIO, parquet_size
from ..transaction.record_index import hand_over_keys
from .merge_handle import (
    deleted_mask,
    dictionary_columns,
    parquet_codec,
    stamp_records,
    stat_table,
    task_token,
    write_base_file,
    write_partition_metadata,
)

ARRIVAL = "__hoodie_arrival"  # a row's place in the batch: among equal values, the later wins
# Records a task writes to memory, once, to learn what a record costs in a base file.
_PROBE_RECORDS = 10_000


def shuffled_for_bulk_insert(
    prepared: DataFrame, precombine_field: str | None, partitioned: bool, parallelism: int
) -> DataFrame:
    """One shuffle: partition paths (or, unpartitioned, keys) to tasks, unsorted. With a
    precombine field each row carries its place in the batch, which breaks ties of equal
    precombine values as an upsert breaks them."""
    if precombine_field is not None and ARRIVAL not in prepared.columns:
        prepared = with_arrival(prepared)
    spread = [F.col(PARTITION_PATH)] if partitioned else [F.xxhash64(F.col(RECORD_KEY))]
    if parallelism:
        return prepared.repartition(parallelism, *spread)
    return prepared.repartition(*spread)


def with_arrival(batch: DataFrame) -> DataFrame:
    """The batch with each row's place in it, taken before any shuffle or join can reorder
    the rows."""
    return batch.withColumn(ARRIVAL, F.monotonically_increasing_id())


@dataclass
class _PartitionRows:
    """One partition path's records so far in a task: in memory, and set aside on disk
    (Arrow IPC files, read back memory-mapped)."""

    pending: list[pa.Table] = field(default_factory=list)
    spilled: list[str] = field(default_factory=list)

    def add(self, rows: pa.Table) -> None:
        self.pending.append(rows)

    def spill(self, folder: str) -> None:
        rows = pa.concat_tables(self.pending)
        path = os.path.join(folder, f"{uuid.uuid4()}.arrow")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, rows.schema) as writer:
            writer.write_table(rows)
        self.spilled.append(path)
        self.pending = []

    def parts(self) -> list[pa.Table]:
        read = [pa.ipc.open_file(pa.memory_map(path)).read_all() for path in self.spilled]
        return read + self.pending


@dataclass
class BulkInsertWriter:
    """The `mapInArrow` function: one task's records in, its write stats out (the core's
    errors as a result row: `task_errors.returning_errors_of_batches`).

    Records arrive in any order, a partition path's and a key's spread over the batches. The
    task holds at most a file's records, and at most `max_memory` bytes of them, in memory
    over all its partition paths: a Python worker's memory is not Spark's to manage (on a
    cluster it comes out of the executor's overhead), so beyond that every partition path's
    records in memory go to local disk (`SPARK_LOCAL_DIRS`, as Spark's own spills). Once the
    input ends each partition path is written: its winners in key order, cut into files. How
    many records fill a file of `max_file_size` it learns once, by writing its first records
    (up to _PROBE_RECORDS, stamped as stored) to memory with the table's codec.
    """

    storage: FileIO
    instant: str
    data_schema: pa.Schema
    merge_mode: MergeMode  # the table's: its ordering field picks each key's record
    record_key_fields: tuple[str, ...]
    compression: str
    markers: WriteMarkers
    max_file_size: int
    max_memory: int
    bloom_filter: BloomFilterSpec = BloomFilterSpec()  # the footer's (the write's options)
    indexing: FileIndexing = FileIndexing()  # what the metadata table's indexes get
    _file_records: int | None = field(default=None, repr=False)
    _open: dict[str, _PartitionRows] = field(default_factory=dict, repr=False)
    _taken: int = field(default=0, repr=False)  # records so far
    _in_memory: int = field(default=0, repr=False)  # records in memory, all partition paths
    _in_memory_bytes: int = field(default=0, repr=False)
    _spill_folder: str | None = field(default=None, repr=False)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        try:
            for batch in batches:
                self._take(pa.Table.from_batches([batch]))
            for stats in self._finish():  # a batch of stats per group of files
                yield from stat_table(stats).to_batches()
        finally:
            if self._spill_folder is not None:
                shutil.rmtree(self._spill_folder, ignore_errors=True)

    # -- steps ---------------------------------------------------------------------------------
    def _take(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        for partition, rows in _by_partition_path(table):
            self._open.setdefault(partition, _PartitionRows()).add(rows)
            self._in_memory_bytes += rows.nbytes
        self._taken += table.num_rows
        self._in_memory += table.num_rows
        limit = self._records_per_file(complete=False)
        full = limit is not None and self._in_memory >= limit
        if full or self._in_memory_bytes >= self.max_memory:
            for held in self._open.values():
                if held.pending:
                    held.spill(self._folder())
            self._in_memory = self._in_memory_bytes = 0

    def _finish(self) -> Iterator[list[WriteStat]]:
        """Write every partition path of the task: files of consecutive key ranges, each of
        `_records_per_file` records but the last. Files are written in groups of up to
        HASHED_TOGETHER records, whose bloom filters are made together (a table of many
        partitions has thousands of small files per task)."""
        limit = self._records_per_file(complete=True)
        files: list[tuple[str, pa.Table]] = []
        records = 0
        for partition, held in sorted(self._open.items()):
            # Spilled parts are memory-mapped and concatenated without a copy; each file
            # gathers the next `limit` winners of one sort, so files hold consecutive key
            # ranges (keys are unique among winners), key-sorted.
            rows = pa.concat_tables(held.parts())
            held.pending = []
            rows, winners = self._winners(rows)
            assert limit is not None  # learned from what there is, as the input is complete
            for start in range(0, len(winners), limit):
                files.append((partition, rows.take(winners.slice(start, limit))))
                records += files[-1][1].num_rows
                if records >= HASHED_TOGETHER:
                    yield self._write_files(files)
                    files, records = [], 0
        if files:
            yield self._write_files(files)
        self._open.clear()

    def _write_files(self, files: list[tuple[str, pa.Table]]) -> list[WriteStat]:
        keys = (rows.column(RECORD_KEY) for _, rows in files)
        footers = bloom_filter_footers(keys, self.bloom_filter)
        return [self._write(partition, rows, bloom)
                for (partition, rows), bloom in zip(files, footers, strict=True)]  # fmt: skip

    def _winners(self, rows: pa.Table) -> tuple[pa.Table, pa.Array]:
        """The rows and the indices of the records to write, in key order: each key's winner
        (`hoodie.merge`), unless it is a delete. With PartialUpdateAvroPayload a repeated
        key's winner is merged with its other records first (`merge.precombine`)."""
        sequence = ARRIVAL if ARRIVAL in rows.column_names else None
        ordering = self.merge_mode.ordering_field
        winners = winner_indices(rows, RECORD_KEY, ordering, sequence)
        partial = self.merge_mode.payload is Payload.PARTIAL_UPDATE and ordering is not None
        if partial and len(winners) < rows.num_rows:
            rows = precombine(rows, RECORD_KEY, self.merge_mode, sequence)
            winners = row_numbers(0, rows.num_rows)
        if ordering is None and len(winners) < rows.num_rows:
            counts = pc.value_counts(rows.column(RECORD_KEY))
            repeated = counts.filter(pc.greater(counts.field("counts"), 1))[0]["values"]
            raise DuplicateRecordKeyError(
                f"record key {repeated.as_py()!r} appears more than once in the batch (record "
                f"key: {', '.join(self.record_key_fields)}). Set precombine_field to choose "
                "the latest row per key, or deduplicate in the model"
            )
        deleted = deleted_mask(rows).take(winners)
        return rows, winners.filter(pc.invert(deleted)) if pc.any(deleted).as_py() else winners

    def _folder(self) -> str:
        """Where spilled records go: removed when the task ends or fails; in a Spark worker
        `SPARK_LOCAL_DIRS` is the executor's block manager folder, which Spark deletes with its
        own spills when the executor stops (or the application ends, where an external shuffle
        service keeps them), so a worker killed outright leaves nothing behind past that."""
        if self._spill_folder is None:
            local = os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0] or None
            self._spill_folder = tempfile.mkdtemp(prefix="hoodie-bulk-insert-", dir=local)
        return self._spill_folder

    def _records_per_file(self, complete: bool) -> int | None:
        """Records that fill a file of `max_file_size`, learned from the task's first
        records; None while too few have come to tell (and more may), or none came at all."""
        if self._file_records is None:
            if self._taken < _PROBE_RECORDS and not complete:
                return None
            firsts = [rows for held in self._open.values() for rows in held.parts()]
            if not firsts:
                return None
            sample = pa.concat_tables(firsts).slice(0, _PROBE_RECORDS)
            per_record = max(1.0, self._stored_bytes(sample) / sample.num_rows)
            self._file_records = max(1, int(self.max_file_size // per_record))
        return self._file_records

    def _stored_bytes(self, rows: pa.Table) -> int:
        """The bytes `rows` add to a base file: written as `_write` writes them, less what
        a file of no rows takes (the footer's fixed part)."""
        name = base_file_name(f"{uuid.uuid4()}-0", task_token(), self.instant)
        partition = next(iter(self._open))  # a constant column: any of the task's will do
        stored = stamp_records(rows, data_schema(self.data_schema), self.instant, partition,
                               name)  # fmt: skip
        codec = parquet_codec(self.compression)
        dictionary = dictionary_columns(stored)
        return parquet_size(stored, codec, dictionary) - parquet_size(
            stored.slice(0, 0), codec, dictionary
        )

    def _write(self, partition: str, rows: pa.Table, bloom: dict[bytes, bytes]) -> WriteStat:
        file_id = f"{uuid.uuid4()}-0"
        file_name = base_file_name(file_id, task_token(), self.instant)
        relative = posixpath.join(partition, file_name)
        write_partition_metadata(self.storage, partition, self.instant)
        stored = stamp_records(rows, data_schema(self.data_schema), self.instant, partition,
                               file_name)  # fmt: skip
        self.markers.create(relative, IOType.CREATE)
        crash_point("task.base_file.marked")
        stat = WriteStat(file_id=file_id, partition_path=partition, path=relative,
                         num_writes=rows.num_rows, num_inserts=rows.num_rows)  # fmt: skip
        size = write_base_file(self.storage, relative, stored, self.compression,
                               self.bloom_filter, self.indexing, stat, bloom)  # fmt: skip
        crash_point("task.base_file.written")
        stat.total_write_bytes = stat.file_size_in_bytes = size
        if self.indexing.record_index:  # every key is new to the table, in a new file group
            hand_over_keys(self.storage, self.instant, stat, stored.column(RECORD_KEY))
        return stat


def _by_partition_path(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """A batch's records by partition path (a batch holds several, interleaved), without the
    partition path column, which the writer needs no more; each path's rows in batch order.

    One stable sort by path and a slice per path: a filter per path would scan the batch
    once per path, which at thousands of partitions per batch (a table of 50,000) cost
    more than writing the files."""
    encoded = pc.dictionary_encode(as_array(table.column(PARTITION_PATH)))
    paths = encoded.dictionary.to_pylist()
    rows = table.drop_columns([PARTITION_PATH])
    if len(paths) == 1:
        yield paths[0], rows
        return
    order = pc.sort_indices(encoded.indices)  # stable: a path's rows keep their order
    grouped = rows.take(order)
    counts = np.bincount(encoded.indices.to_numpy(zero_copy_only=False), minlength=len(paths))
    start = 0
    for path, count in zip(paths, counts.tolist(), strict=True):
        yield path, grouped.slice(start, count)
        start += count

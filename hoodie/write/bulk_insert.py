"""Bulk insert: records into new file groups, in one Spark job, with no tagging.

Hudi's `bulk_insert` writes a batch that needs no index lookup (a table's first load, a full
refresh, an append-only model): the records are shuffled once by partition path, ordered in
each task so that a key's records meet, and streamed into base files that roll over at
`hoodie.parquet.max.file.size` of written parquet, as Hudi's bulk insert rolls over at its
parquet writer's size. (`hoodie.copyonwrite.record.size.estimate` sizes an upsert's inserts
while a table has no commit to learn record sizes from; stored records are often a tenth of
its 1024 bytes, so a first load sized by it would write files a tenth of the target size.)
Each partition path goes to one task, so a partition gets as few files as its size
allows; an unpartitioned table is spread over the tasks by key hash instead. Nothing is
cached, counted or collected before the write.

The JVM's sort orders each task's rows by one long first: a hash of the partition path in its
high bits (its *cluster*) and a hash of the key below. Spark's sort compares the first key's
8-byte prefix and looks at whole rows only on a tie; sorted by partition path and key strings
first, every pair of rows in a partition tied (`2024-01-30`-like paths share their first
eight bytes), which made the sort cost as much as the scan. The hash order keeps what the
writer needs: a partition path's rows together (bar the rare partition paths whose clusters
collide, which the writer keeps apart), a key's rows adjacent. Key order is the writer's job:
it sorts each file's records by key with pyarrow, and a partition path that outgrows a file in
a task is set aside on local disk and cut into files of consecutive key ranges once its rows
are all in, so files never overlap in keys within a partition path of one task (routing units
split partitions by those ranges: `hoodie/index/routing.py`).

Within the batch a key keeps one record, as an upsert keeps it: the one with the largest
precombine value (the sort puts it first); a batch with two records of one key and no
precombine field is refused, and deletes write nothing. Against the table's existing records
nothing is checked here: the write client uses it where the table holds no records the batch
could update (its first write, an overwrite), and for an explicit bulk_insert into a table
with records once the index has looked up which keys exist (and the insert's dup policy has
failed or dropped those rows).
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..exceptions import DuplicateRecordKeyError
from ..faults import crash_point
from ..markers import IOType, WriteMarkers
from ..metadata import WriteStat
from ..naming import base_file_name
from ..schema import PARTITION_PATH, RECORD_KEY, data_schema
from ..storage import Storage, parquet_size
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

_HAS_ORDER = "__hoodie_has_order"
_ARRIVAL = "__hoodie_arrival"  # a row's place in the batch: among equal values, the later wins
CLUSTER = "__hoodie_cluster"  # a hash of the partition path: the high bits of the sort's prefix
_PREFIX = "__hoodie_prefix"
_SORT_COLUMNS = (_HAS_ORDER, _ARRIVAL, CLUSTER)
_CLUSTER_BITS = 23
_KEY_BITS = 40  # _CLUSTER_BITS + _KEY_BITS < 64: the prefix stays a positive long
# Records a task writes to memory, once, to learn what a record costs in a base file.
_PROBE_RECORDS = 10_000


def sorted_for_bulk_insert(
    prepared: DataFrame, precombine_field: str | None, partitioned: bool, parallelism: int
) -> DataFrame:
    """One shuffle: partition paths (or, unpartitioned, keys) to tasks; in each task the rows
    by cluster (a hash of the partition path), partition path and key hash, a key's winner
    first: the largest precombine value (any value before none), then the later row of the
    batch, as an upsert chooses."""
    if precombine_field is not None and _ARRIVAL not in prepared.columns:
        prepared = with_arrival(prepared)
    spread = [F.col(PARTITION_PATH)] if partitioned else [F.xxhash64(F.col(RECORD_KEY))]
    shuffled = (
        prepared.repartition(parallelism, *spread) if parallelism else prepared.repartition(*spread)
    )
    cluster = F.pmod(F.xxhash64(F.col(PARTITION_PATH)), F.lit(1 << _CLUSTER_BITS))
    key_hash = F.xxhash64(F.col(RECORD_KEY)).bitwiseAND(F.lit((1 << _KEY_BITS) - 1))
    shuffled = shuffled.withColumn(CLUSTER, cluster).withColumn(
        _PREFIX, F.shiftleft(F.col(CLUSTER), _KEY_BITS).bitwiseOR(key_hash)
    )
    order = [F.col(_PREFIX), F.col(PARTITION_PATH), F.col(RECORD_KEY)]
    if precombine_field is not None:
        shuffled = shuffled.withColumn(_HAS_ORDER, F.col(precombine_field).isNotNull())
        order += [F.col(_HAS_ORDER).desc(), F.col(precombine_field).desc(),
                  F.col(_ARRIVAL).desc()]  # fmt: skip
    return shuffled.sortWithinPartitions(*order).drop(_PREFIX)


def with_arrival(batch: DataFrame) -> DataFrame:
    """The batch with each row's place in it, taken before any join can reorder the rows (a
    bulk insert that first looks up existing keys)."""
    return batch.withColumn(_ARRIVAL, F.monotonically_increasing_id())


@dataclass
class _PartitionRows:
    """One partition path's records so far in a task: in memory, and set aside on disk
    (Arrow IPC files, read back memory-mapped) once they outgrew a file."""

    pending: list[pa.Table] = field(default_factory=list)
    rows: int = 0
    spilled: list[str] = field(default_factory=list)

    def add(self, rows: pa.Table) -> None:
        self.pending.append(rows)
        self.rows += rows.num_rows

    def spill(self, folder: str) -> None:
        rows = pa.concat_tables(self.pending)
        path = os.path.join(folder, f"{uuid.uuid4()}.arrow")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, rows.schema) as writer:
            writer.write_table(rows)
        self.spilled.append(path)
        self.pending, self.rows = [], 0

    def parts(self) -> list[pa.Table]:
        read = [pa.ipc.open_file(pa.memory_map(path)).read_all() for path in self.spilled]
        return read + ([pa.concat_tables(self.pending)] if self.pending else [])


@dataclass
class BulkInsertWriter:
    """The `mapInArrow` function: one task's ordered records in, its write stats out (the
    core's errors as a result row: `task_errors.returning_errors_of_batches`).

    Records arrive as `sorted_for_bulk_insert` orders them: by cluster, each partition path's
    rows together within it, a key's rows adjacent with the winner first. A partition path is
    complete when the cluster changes. Each open partition path holds at most a file's records
    in memory; beyond that they go to local disk (`SPARK_LOCAL_DIRS`, as Spark's own spills).
    How many records fill a file of `max_file_size` it learns once, by writing its first
    records (up to _PROBE_RECORDS, stamped as stored) to memory with the table's codec.
    """

    storage: Storage
    instant: str
    data_schema: pa.Schema
    precombine_field: str | None
    record_key_fields: tuple[str, ...]
    compression: str
    markers: WriteMarkers
    partition_depth: int
    max_file_size: int
    _file_records: int | None = field(default=None, repr=False)
    _cluster: int | None = field(default=None, repr=False)
    _open: dict[str, _PartitionRows] = field(default_factory=dict, repr=False)
    _last: tuple[str, str] | None = field(default=None, repr=False)  # (partition, key) before
    _spill_folder: str | None = field(default=None, repr=False)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        try:
            for batch in batches:
                for stat in self._take(pa.Table.from_batches([batch])):
                    yield from stat_table([stat]).to_batches()
            for stat in self._finish_cluster():
                yield from stat_table([stat]).to_batches()
        finally:
            if self._spill_folder is not None:
                shutil.rmtree(self._spill_folder, ignore_errors=True)

    # -- steps ---------------------------------------------------------------------------------
    def _take(self, table: pa.Table) -> Iterator[WriteStat]:
        if not table.num_rows:
            return
        clusters = table.column(CLUSTER).combine_chunks()
        partitions = table.column(PARTITION_PATH).combine_chunks()
        table = table.drop_columns([c for c in _SORT_COLUMNS if c in table.column_names])
        # Runs of one (cluster, partition path).
        changes = pc.or_(
            pc.not_equal(clusters.slice(1), clusters.slice(0, len(clusters) - 1)),
            pc.not_equal(partitions.slice(1), partitions.slice(0, len(partitions) - 1)),
        )
        starts = [0] + [i + 1 for i in pc.indices_nonzero(changes).to_pylist()]
        for begin, end in zip(starts, starts[1:] + [table.num_rows]):
            cluster, partition = clusters[begin].as_py(), partitions[begin].as_py()
            if cluster != self._cluster:
                yield from self._finish_cluster()
                self._cluster = cluster
            held = self._open.setdefault(partition, _PartitionRows())
            winners = self._winners(partition, table.slice(begin, end - begin))
            if winners.num_rows:
                held.add(winners)
            limit = self._records_per_file(partition, held, complete=False)
            if limit is not None and held.rows >= limit:
                held.spill(self._folder())

    def _winners(self, partition: str, rows: pa.Table) -> pa.Table:
        """The first record of each key (the sort put the winner first), minus a key the
        previous rows of this partition path already ended with; then no deletes."""
        keys = rows.column(RECORD_KEY).combine_chunks().cast(pa.string())
        first = pc.not_equal(keys.slice(1), keys.slice(0, len(keys) - 1))
        first = pa.concat_arrays([pa.array([(partition, keys[0].as_py()) != self._last]), first])
        if self.precombine_field is None and not pc.all(first).as_py():
            repeated = keys.filter(pc.invert(first))[0].as_py()
            raise DuplicateRecordKeyError(
                f"record key {repeated!r} appears more than once in the batch (record key: "
                f"{', '.join(self.record_key_fields)}). Set precombine_field to choose the "
                "latest row per key, or deduplicate in the model"
            )
        self._last = (partition, keys[-1].as_py())
        # Most batches repeat no key and delete nothing: no filter copies their rows.
        winners = rows if pc.all(first).as_py() else rows.filter(first)
        deleted = deleted_mask(winners)
        return winners.filter(pc.invert(deleted)) if pc.any(deleted).as_py() else winners

    def _finish_cluster(self) -> Iterator[WriteStat]:
        """Write the partition paths of the cluster that ended: files of consecutive key
        ranges, each of `_records_per_file` records but the last."""
        for partition, held in sorted(self._open.items()):
            parts = held.parts()
            total = sum(p.num_rows for p in parts)
            if not total:
                continue
            limit = self._records_per_file(partition, held, complete=True)
            assert limit is not None  # learned from what there is, as it is complete
            # One sort of the partition's keys (its parts, spilled ones memory-mapped, are
            # concatenated without a copy); each file gathers the next `limit` records of that
            # order, so files hold consecutive key ranges (keys are unique here), key-sorted.
            rows = pa.concat_tables(parts)
            order = pc.sort_indices(rows, sort_keys=[(RECORD_KEY, "ascending")])
            for start in range(0, total, limit):
                yield self._write(partition, rows.take(order.slice(start, limit)))
        self._open.clear()

    def _folder(self) -> str:
        """Where spilled records go: removed when the task ends or fails; in a Spark worker
        `SPARK_LOCAL_DIRS` is the executor's block manager folder, which Spark deletes with its
        own spills when the executor stops (or the application ends, where an external shuffle
        service keeps them), so a worker killed outright leaves nothing behind past that."""
        if self._spill_folder is None:
            local = os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0] or None
            self._spill_folder = tempfile.mkdtemp(prefix="hoodie-bulk-insert-", dir=local)
        return self._spill_folder

    def _records_per_file(self, partition: str, held: _PartitionRows, complete: bool) -> int | None:
        """Records that fill a file of `max_file_size`, learned from the task's first
        records; None while too few have come to tell (and more may)."""
        if self._file_records is None:
            if held.rows < _PROBE_RECORDS and not complete:
                return None
            sample = pa.concat_tables(held.parts()).slice(0, _PROBE_RECORDS)
            if not sample.num_rows:
                return None
            per_record = max(1.0, self._stored_bytes(partition, sample) / sample.num_rows)
            self._file_records = max(1, int(self.max_file_size // per_record))
        return self._file_records

    def _stored_bytes(self, partition: str, rows: pa.Table) -> int:
        """The bytes `rows` add to a base file: written as `_write` writes them, less what
        a file of no rows takes (the footer's fixed part)."""
        name = base_file_name(f"{uuid.uuid4()}-0", task_token(), self.instant)
        stored = stamp_records(rows, data_schema(self.data_schema), self.instant, partition,
                               name)  # fmt: skip
        codec = parquet_codec(self.compression)
        dictionary = dictionary_columns(stored)
        return parquet_size(stored, codec, dictionary) - parquet_size(
            stored.slice(0, 0), codec, dictionary
        )

    def _write(self, partition: str, rows: pa.Table) -> WriteStat:
        file_id = f"{uuid.uuid4()}-0"
        file_name = base_file_name(file_id, task_token(), self.instant)
        relative = posixpath.join(partition, file_name)
        write_partition_metadata(self.storage, partition, self.instant, self.partition_depth)
        stored = stamp_records(rows, data_schema(self.data_schema), self.instant, partition,
                               file_name)  # fmt: skip
        self.markers.create(relative, IOType.CREATE)
        crash_point("task.base_file.marked")
        size = write_base_file(self.storage, relative, stored, self.compression)
        crash_point("task.base_file.written")
        return WriteStat(file_id=file_id, partition_path=partition, path=relative,
                         num_writes=rows.num_rows, num_inserts=rows.num_rows,
                         total_write_bytes=size, file_size_in_bytes=size)  # fmt: skip


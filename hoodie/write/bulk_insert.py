"""Bulk insert: records into new file groups, in one Spark job, with no tagging.

Hudi's `bulk_insert` writes a batch that needs no index lookup (a table's first load, a full
refresh, an append-only model): the records are shuffled once by partition path, sorted by
(partition path, record key) in each task, and streamed into base files that roll over at
`hoodie.parquet.max.file.size` of written parquet, as Hudi's bulk insert rolls over at its
parquet writer's size. (`hoodie.copyonwrite.record.size.estimate` sizes an upsert's inserts
while a table has no commit to learn record sizes from; stored records are often a tenth of
its 1024 bytes, so a first load sized by it would write files a tenth of the target size.)
Each partition path goes to one task, so a partition gets as few files as its size
allows; an unpartitioned table is spread over the tasks by key hash instead. Nothing is
cached, counted or collected before the write.

Within the batch a key keeps one record, as an upsert keeps it: the one with the largest
precombine value (the sort puts it first); a batch with two records of one key and no
precombine field is refused, and deletes write nothing. Against the table's existing records
nothing is checked here: the write client uses it where the table holds no records the batch
could update (its first write, an overwrite), and for an explicit bulk_insert into a table
with records once the index has looked up which keys exist (and the insert's dup policy has
failed or dropped those rows).
"""

from __future__ import annotations

import posixpath
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
_SORT_COLUMNS = (_HAS_ORDER, _ARRIVAL)
# Records a task writes to memory, once, to learn what a record costs in a base file.
_PROBE_RECORDS = 10_000


def sorted_for_bulk_insert(
    prepared: DataFrame, precombine_field: str | None, partitioned: bool, parallelism: int
) -> DataFrame:
    """One shuffle: partition paths (or, unpartitioned, keys) to tasks; in each task the rows
    by partition path and key, a key's winner first: the largest precombine value (any value
    before none), then the later row of the batch, as an upsert chooses."""
    if precombine_field is not None and _ARRIVAL not in prepared.columns:
        prepared = with_arrival(prepared)
    spread = [F.col(PARTITION_PATH)] if partitioned else [F.xxhash64(F.col(RECORD_KEY))]
    shuffled = (
        prepared.repartition(parallelism, *spread) if parallelism else prepared.repartition(*spread)
    )
    order = [F.col(PARTITION_PATH), F.col(RECORD_KEY)]
    if precombine_field is not None:
        shuffled = shuffled.withColumn(_HAS_ORDER, F.col(precombine_field).isNotNull())
        order += [F.col(_HAS_ORDER).desc(), F.col(precombine_field).desc(),
                  F.col(_ARRIVAL).desc()]  # fmt: skip
    return shuffled.sortWithinPartitions(*order)


def with_arrival(batch: DataFrame) -> DataFrame:
    """The batch with each row's place in it, taken before any join can reorder the rows (a
    bulk insert that first looks up existing keys)."""
    return batch.withColumn(_ARRIVAL, F.monotonically_increasing_id())


@dataclass
class BulkInsertWriter:
    """The `mapInArrow` function: one task's sorted records in, its write stats out (the
    core's errors as a result row: `task_errors.returning_errors_of_batches`).

    Holds at most one file's records at a time (the open file of the current partition path).
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
    _partition: str | None = field(default=None, repr=False)
    _last_key: str | None = field(default=None, repr=False)
    _pending: list[pa.Table] = field(default_factory=list, repr=False)
    _pending_rows: int = field(default=0, repr=False)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for stat in self._take(pa.Table.from_batches([batch])):
                yield from stat_table([stat]).to_batches()
        for stat in self._flush(everything=True):
            yield from stat_table([stat]).to_batches()

    # -- steps ---------------------------------------------------------------------------------
    def _take(self, table: pa.Table) -> Iterator[WriteStat]:
        table = table.drop_columns([c for c in _SORT_COLUMNS if c in table.column_names])
        partitions = table.column(PARTITION_PATH).combine_chunks()
        # Runs of one partition path (the rows are sorted by it).
        changes = pc.not_equal(partitions.slice(1), partitions.slice(0, len(partitions) - 1))
        starts = [0] + [i + 1 for i in pc.indices_nonzero(changes).to_pylist()]
        for begin, end in zip(starts, starts[1:] + [table.num_rows]):
            partition = partitions[begin].as_py()
            if partition != self._partition:
                yield from self._flush(everything=True)
                self._partition, self._last_key = partition, None
            self._append(self._winners(table.slice(begin, end - begin)))
            yield from self._flush(everything=False)

    def _winners(self, rows: pa.Table) -> pa.Table:
        """The first record of each key (the sort put the winner first), minus a key the
        previous batch of this partition path already ended with; then no deletes."""
        keys = rows.column(RECORD_KEY).combine_chunks().cast(pa.string())
        first = pc.not_equal(keys.slice(1), keys.slice(0, len(keys) - 1))
        first = pa.concat_arrays([pa.array([keys[0].as_py() != self._last_key]), first])
        if self.precombine_field is None and not pc.all(first).as_py():
            repeated = keys.filter(pc.invert(first))[0].as_py()
            raise DuplicateRecordKeyError(
                f"record key {repeated!r} appears more than once in the batch (record key: "
                f"{', '.join(self.record_key_fields)}). Set precombine_field to choose the "
                "latest row per key, or deduplicate in the model"
            )
        self._last_key = keys[-1].as_py()
        winners = rows.filter(first)
        return winners.filter(pc.invert(deleted_mask(winners)))

    def _append(self, rows: pa.Table) -> None:
        if rows.num_rows:
            self._pending.append(rows)
            self._pending_rows += rows.num_rows

    def _flush(self, everything: bool) -> Iterator[WriteStat]:
        """Write full files of the pending records (all of them when `everything`)."""
        while self._pending_rows:
            limit = self._records_per_file(everything)
            if limit is None or (self._pending_rows < limit and not everything):
                return
            pending = pa.concat_tables(self._pending)
            count = min(limit, pending.num_rows)
            rest = pending.slice(count)
            self._pending = [rest] if rest.num_rows else []
            self._pending_rows = rest.num_rows
            yield self._write(pending.slice(0, count))

    def _records_per_file(self, everything: bool) -> int | None:
        """Records that fill a file of `max_file_size`, learned from the task's first
        records; None while too few have come to tell (and more may)."""
        if self._file_records is None:
            if self._pending_rows < _PROBE_RECORDS and not everything:
                return None
            sample = pa.concat_tables(self._pending).slice(0, _PROBE_RECORDS)
            per_record = max(1.0, self._stored_bytes(sample) / sample.num_rows)
            self._file_records = max(1, int(self.max_file_size // per_record))
        return self._file_records

    def _stored_bytes(self, rows: pa.Table) -> int:
        """The bytes `rows` add to a base file: written as `_write` writes them, less what
        a file of no rows takes (the footer's fixed part)."""
        assert self._partition is not None
        name = base_file_name(f"{uuid.uuid4()}-0", task_token(), self.instant)
        stored = stamp_records(rows, data_schema(self.data_schema), self.instant,
                               self._partition, name)  # fmt: skip
        codec = parquet_codec(self.compression)
        dictionary = dictionary_columns(stored)
        return parquet_size(stored, codec, dictionary) - parquet_size(
            stored.slice(0, 0), codec, dictionary
        )

    def _write(self, rows: pa.Table) -> WriteStat:
        partition = self._partition
        assert partition is not None  # records come with their partition path
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

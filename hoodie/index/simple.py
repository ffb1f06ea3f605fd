"""The SIMPLE index: tagging by joining incoming keys with the keys stored in the table.

Only the latest file slices of the partitions the batch touches are read, and only their key
column, inside Spark tasks. The join result tells each incoming record which file group holds
its key today (its *location*), or that it is new. This costs a scan of the touched
partitions' keys but needs no extra metadata, which is why Hudi makes it the default.

For merge-on-read the keys of a slice are those of its base file and of the data blocks in its
log files (of completed instants, not rolled back): a key whose only version sits in a log
file (a table whose inserts went to logs) still has a location, so an update of it cannot
become a duplicate in another file group.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..fs_view import CommittedInstants, FileSlice, listed_log_blocks
from ..logformat import BlockType
from ..schema import PARTITION_PATH, RECORD_KEY
from ..storage import Storage

LOCATION = "__hoodie_location"  # file id of the file group holding the key, or null
KEY_FILTER_MAX_ROWS = 1_000_000  # batches up to this size filter stored keys in the readers
_KEYS_SCHEMA = f"{RECORD_KEY} string, {PARTITION_PATH} string, {LOCATION} string"
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


class _KeyReader:
    """Runs in Spark tasks: yields (record key, partition path, file id) of file slices."""

    def __init__(
        self,
        storage: Storage,
        sources: list[KeySource],
        committed: CommittedInstants,
        wanted: pa.Array | None = None,
    ):
        self.storage = storage
        self.sources = sources
        self.committed = committed
        self.wanted = wanted

    def __call__(self, batches):
        for batch in batches:
            for index in batch.column(0).to_pylist():
                source = self.sources[index]
                for keys in self._keys(source):
                    if self.wanted is not None:
                        keys = keys.filter(pc.is_in(keys, value_set=self.wanted))
                    n = len(keys)
                    if n == 0:
                        continue
                    yield pa.RecordBatch.from_arrays(
                        [
                            keys.cast(pa.string()),
                            pa.array([source.partition_path] * n, pa.string()),
                            pa.array([source.file_id] * n, pa.string()),
                        ],
                        names=[RECORD_KEY, PARTITION_PATH, LOCATION],
                    )

    def _keys(self, source: KeySource):
        if source.base_file is not None:
            parquet = pq.ParquetFile(
                self.storage.full_path(source.base_file), filesystem=self.storage.fs
            )
            for chunk in parquet.iter_batches(columns=[RECORD_KEY], batch_size=_BATCH_ROWS):
                yield chunk.column(0)
        for relative in source.log_files:
            for block in listed_log_blocks(self.storage, relative, self.committed):
                if block.block_type not in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
                    continue
                # Blocks of failed writes do not make a key exist. (A key of a rolled-back block
                # is counted: it only routes that key's next version to this file group.)
                if block.instant_time not in self.committed:
                    continue
                yield block.records(columns=[RECORD_KEY]).column(0).combine_chunks()


def existing_keys(
    spark: SparkSession,
    storage: Storage,
    sources: list[KeySource],
    committed: CommittedInstants,
    parallelism: int,
    wanted: pa.Array | None = None,
) -> DataFrame:
    """A DataFrame of the keys stored in `sources` (only those in `wanted`, if given), read in
    parallel by Spark tasks."""
    indexes = spark.createDataFrame([(i,) for i in range(len(sources))], "source int")
    slots = max(1, min(len(sources), parallelism))
    reader = _KeyReader(storage, sources, committed, wanted)
    return indexes.repartition(slots).mapInArrow(reader, _KEYS_SCHEMA)


def tag_location(
    spark: SparkSession,
    records: DataFrame,
    storage: Storage,
    sources: list[KeySource],
    committed: CommittedInstants,
    parallelism: int,
    incoming_rows: int | None = None,
) -> DataFrame:
    """`records` plus a LOCATION column: the file id already holding each key, or null.

    When the batch is small next to the table (`incoming_rows` up to `KEY_FILTER_MAX_ROWS`),
    its keys travel to the key-reading tasks, which then hand Spark only the stored keys the
    batch names: an upsert touching 1% of a table no longer moves and joins every stored key.
    """
    if not sources:
        return records.withColumn(LOCATION, F.lit(None).cast("string"))
    wanted = None
    if incoming_rows is not None and incoming_rows <= KEY_FILTER_MAX_ROWS:
        keys_in_batch = records.select(RECORD_KEY).distinct().toArrow()
        wanted = keys_in_batch.column(0).combine_chunks().cast(pa.string())
    keys = existing_keys(spark, storage, sources, committed, parallelism, wanted)
    if any(s.log_files for s in sources):
        # A key may be in a base file and in log files of its slice: one row per key.
        keys = keys.dropDuplicates([RECORD_KEY, PARTITION_PATH])
    return records.join(keys, on=[RECORD_KEY, PARTITION_PATH], how="left")

"""The SIMPLE index: tagging by joining incoming keys with the keys stored in base files.

Only the latest base files of the partitions the batch touches are read, and only their key
column, inside Spark tasks. The join result tells each incoming record which file group holds
its key today (its *location*), or that it is new. This costs a scan of the touched
partitions' keys but needs no extra metadata, which is why Hudi makes it the default.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..fs_view import BaseFile
from ..schema import PARTITION_PATH, RECORD_KEY
from ..storage import Storage

LOCATION = "__hoodie_location"  # file id of the file group holding the key, or null
_KEYS_SCHEMA = f"{RECORD_KEY} string, {PARTITION_PATH} string, {LOCATION} string"


class _KeyReader:
    """Runs in Spark tasks: yields (record key, partition path, file id) of base files."""

    def __init__(self, storage: Storage):
        self.storage = storage

    def __call__(self, batches):
        for batch in batches:
            for relative, partition, file_id in zip(
                batch.column(0).to_pylist(),
                batch.column(1).to_pylist(),
                batch.column(2).to_pylist(),
            ):
                parquet = pq.ParquetFile(
                    self.storage.full_path(relative), filesystem=self.storage.fs
                )
                for chunk in parquet.iter_batches(columns=[RECORD_KEY], batch_size=65536):
                    keys = chunk.column(0)
                    n = len(keys)
                    yield pa.RecordBatch.from_arrays(
                        [
                            keys.cast(pa.string()),
                            pa.array([partition] * n, pa.string()),
                            pa.array([file_id] * n, pa.string()),
                        ],
                        names=[RECORD_KEY, PARTITION_PATH, LOCATION],
                    )


def existing_keys(
    spark: SparkSession, storage: Storage, base_files: list[BaseFile], parallelism: int
) -> DataFrame:
    """A DataFrame of the keys stored in `base_files`, read in parallel by Spark tasks."""
    rows = [(f.relative_path, f.partition_path, f.file_id) for f in base_files]
    files = spark.createDataFrame(rows, "path string, partition string, file_id string")
    slots = max(1, min(len(rows), parallelism))
    return files.repartition(slots).mapInArrow(_KeyReader(storage), _KEYS_SCHEMA)


def tag_location(
    spark: SparkSession,
    records: DataFrame,
    storage: Storage,
    base_files: list[BaseFile],
    parallelism: int,
) -> DataFrame:
    """`records` plus a LOCATION column: the file id already holding each key, or null."""
    if not base_files:
        return records.withColumn(LOCATION, F.lit(None).cast("string"))
    keys = existing_keys(spark, storage, base_files, parallelism)
    return records.join(keys, on=[RECORD_KEY, PARTITION_PATH], how="left")

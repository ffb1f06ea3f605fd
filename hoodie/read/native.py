"""Reads by Spark's own parquet reader, when there is nothing to merge.

Our data source decodes parquet with pyarrow in a Python worker and hands Arrow batches to the
JVM, which turns them into rows again: a full scan costs 1.5-2.6x Spark's vectorized parquet scan
of the same files (bench/README.md, `cpu_split.py scan`), and reads every column, as PySpark's
Python data sources learn nothing of a query's columns. Apache Hudi's Spark integration reads a
copy-on-write snapshot, and any read-optimized query, as a plain parquet scan of the files its
file index chose (`BaseFileOnlyRelation`). So does `HoodieTable.read` when the read plan has no
log file to merge: the driver plans exactly as for the data source, then Spark scans the
planned base files, with its own column pruning and filter pushdown.

A plan stays with the data source when:
- the read is incremental: rows are kept by commit time, which the data source does;
- a planned file slice has log files a snapshot merges;
- the table is on an object store and the caller did not ask (`native=True`): the JVM reads
  through Hadoop's file systems, whose object store connectors a session may lack, where our
  reader reads through pyarrow's;
- a planned path holds a character Spark expands in the paths it is given (`*?[]{}` and
  the backslash: Hadoop's glob pattern), as a partition value may;
- a base file holds a column in a type Spark's parquet reader does not turn into the
  table's. Schema evolution widens int to long, float or double, long to float or double and
  float to double (`hoodie.schema_evolution`); Spark 4 reads int as long or double and float
  as double, and fails the query on the other three (measured with PySpark 4.3), where our
  reader casts. Each planned base file's footer is read on the driver to know.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from ..meta_client import HoodieTableMetaClient
from ..schema import normalize_type
from ..schema_evolution import sql_type
from .datasource import snapshot_arrow_schema
from .options import INCREMENTAL, ReadOptions
from .planner import plan_read

# (type in the file, type read) pairs Spark's parquet reader converts, besides equal types.
_SPARK_PROMOTIONS = {
    ("int", "bigint"),
    ("int", "double"),
    ("float", "double"),
}
# What Spark's `DataFrameReader` expands as a pattern in the paths it is given.
_GLOB = re.compile(r"[*?\[\]{}\\]")
# Footers are small reads; a thread per file up to this many at once.
_FOOTER_THREADS = 16


def read_base_files_natively(
    spark: SparkSession,
    meta_client: HoodieTableMetaClient,
    options: ReadOptions,
    native: bool | None = None,
) -> DataFrame | None:
    """The read as a parquet scan of its planned base files, or None where only the `hoodie`
    data source reads it right (see the module's docstring).

    `native`: None reads natively where the table is on a file system (not an object store),
    True also on object stores (a cluster whose Hadoop reads the table's URIs), False never.
    """
    if native is False or options.query_type == INCREMENTAL:
        return None
    if native is None and meta_client.storage.is_object_store:
        return None
    plan = plan_read(meta_client, options)
    if plan.merge_logs and any(split.log_files for split in plan.splits):
        return None
    schema = from_arrow_schema(snapshot_arrow_schema(meta_client))
    files = [split.base_file for split in plan.splits if split.base_file is not None]
    if not files:
        return spark.createDataFrame([], schema)
    uris = [meta_client.storage.uri(f) for f in files]
    if any(_GLOB.search(uri) for uri in uris) or not _spark_reads_as(meta_client, files, schema):
        return None
    return spark.read.schema(schema).parquet(*uris)


def _spark_reads_as(
    meta_client: HoodieTableMetaClient, files: list[str], schema: StructType
) -> bool:
    """Does Spark's parquet reader give every file's columns the types of `schema`?"""
    wanted = {f.name: f.dataType.simpleString() for f in schema.fields}
    storage = meta_client.storage

    def agrees(relative: str) -> bool:
        for field in storage.parquet_file(relative).schema_arrow:
            if field.name not in wanted:
                continue  # a column the table dropped: not read
            # (a type Spark has no name for keeps its Arrow name, which matches nothing)
            pair = (sql_type(normalize_type(field.type)), wanted[field.name])
            if pair[0] != pair[1] and pair not in _SPARK_PROMOTIONS:
                return False
        return True

    with ThreadPoolExecutor(max_workers=min(_FOOTER_THREADS, len(files))) as pool:
        return all(pool.map(agrees, files))

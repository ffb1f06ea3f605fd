"""Reads by Spark's own parquet reader for the file slices with nothing to merge.

Our data source decodes parquet with pyarrow in a Python worker and hands Arrow batches to the
JVM, which turns them into rows again: a full scan costs 1.5-2.6x Spark's vectorized parquet scan
of the same files (docs/performance, `cpu_split.py scan`), and reads every column, as PySpark's
Python data sources learn nothing of a query's columns. Apache Hudi's Spark integration reads a
copy-on-write snapshot, and any read-optimized query, as a plain parquet scan of the files its
file index chose (`BaseFileOnlyRelation`). `HoodieTable.read` goes one step further, per file
slice: the driver plans once, then Spark scans the base files of the slices that need no merging
and the `hoodie` data source reads the others, given the same plan (option
`hoodie.read.planned`), so both halves read one snapshot. A merge-on-read table whose last
writes touched a few file groups is then mostly a parquet scan.

A slice stays with the data source when:
- it has log files a snapshot (or incremental) read merges;
- the table is on an object store and the caller did not ask (`native=True`): the JVM reads
  through Hadoop's file systems, whose object store connectors a session may lack, where our
  reader reads through pyarrow's;
- its base file's path holds a character Spark expands in the paths it is given (`*?[]{}` and
  the backslash: Hadoop's glob pattern), as a partition value may;
- its base file holds a column in a type Spark's parquet reader does not turn into the
  table's. Schema evolution widens int to long, float or double, long to float or double and
  float to double (`hoodie.schema_evolution`); Spark 4 reads int as long or double and float
  as double, and fails the query on the other three (measured with PySpark 4.3), where our
  reader casts. Each planned base file's footer is read on the driver to know.

Incremental reads of base files keep the rows whose `_hoodie_commit_time` the range holds, as
the data source does (a Spark filter, pushed into the scan).

Filters given to the read (`filters`, see `hoodie.read.predicates.RowFilter`) skip, before
anything is handed to Spark, the slices no row of which can match (`hoodie.read.data_skipping`:
the footers read for that serve the type check too), and then filter the rows of both halves;
Spark's own row group skipping works inside the base files it scans.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from ..cdc import AFTER, BEFORE, OP, TS_MS
from ..exceptions import InvalidConfigError
from ..keygen import KeyGenerator
from ..meta_client import HoodieTableMetaClient
from ..schema import COMMIT_TIME, data_schema, normalize_type
from ..schema_evolution import sql_type
from .data_skipping import Footer, log, read_schemas, skip_slices
from .datasource import SOURCE_NAME, encode_plan, is_cdc, snapshot_arrow_schema
from .options import INCREMENTAL, PLANNED, ReadOptions
from .planner import FileSplit, ReadPlan, plan_read
from .predicates import KeyRule, RowFilter

# (type in the file, type read) pairs Spark's parquet reader converts, besides equal types.
_SPARK_PROMOTIONS = {
    ("int", "bigint"),
    ("int", "double"),
    ("float", "double"),
}
# What Spark's `DataFrameReader` expands as a pattern in the paths it is given.
_GLOB = re.compile(r"[*?\[\]{}\\]")


def read_table(
    spark: SparkSession,
    meta_client: HoodieTableMetaClient,
    given: Mapping[str, str],
    native: bool | None = None,
    filters: list[Any] | None = None,
) -> DataFrame:
    """The read `given` asks for (the `hoodie` data source's options), planned once on the
    driver: Spark's parquet scan of the slices that need no merging, the data source for the
    rest (see the module's docstring); only the rows `filters` match, if given.

    `native`: None scans natively where the table is on a file system (not an object store),
    True also on object stores (a cluster whose Hadoop reads the table's URIs), False never.
    """
    options = ReadOptions.parse(given)
    if is_cdc(options):
        # CDC rows are changes, not table rows: the data source reads them (`hoodie.read.cdc`)
        if filters is not None:
            raise InvalidConfigError(
                "filters apply to a table's rows, not to a CDC read's changes: filter the "
                "DataFrame (op, ts_ms, before, after) instead"
            )
        return spark.read.format(SOURCE_NAME).options(**given).load(meta_client.storage.uri())
    plan = plan_read(meta_client, options)
    # The columns of the snapshot the plan is at: of the same timeline as its files. An
    # incremental read has the table's latest columns, whatever its range (as the data source
    # and Apache Hudi give it): a column added after `end` reads as null.
    at = None if options.query_type == INCREMENTAL else plan.as_of
    arrow_schema = snapshot_arrow_schema(meta_client, at)
    schema = from_arrow_schema(arrow_schema)
    row_filter = RowFilter.parse(filters, arrow_schema.names) if filters is not None else None
    footers: dict[str, Footer] = {}
    if row_filter is not None and options.data_skipping and plan.splits:
        props = meta_client.properties
        rule = KeyRule.of(props.record_key_fields, props.key_generator_class, arrow_schema)
        plan.splits, report = skip_slices(
            meta_client.storage,
            plan.splits,
            plan.merge_logs,
            rule.with_keys(row_filter.predicate),
            arrow_schema,
            footers,
            plan.metadata,
            plan.committed if plan.latest else None,
        )
        log.info(report.describe(meta_client.name))
    if not plan.splits:
        return spark.createDataFrame([], schema)
    scanned, merged = _route(meta_client, plan, schema, native, footers)
    frames = []
    if scanned:
        frames.append(_scan(spark, meta_client, plan, scanned, schema))
    if merged:
        planned = {**given, PLANNED: encode_plan(replace(plan, splits=merged))}
        source = spark.read.format(SOURCE_NAME).schema(schema).options(**planned)
        frames.append(source.load(meta_client.storage.uri()))
    frame = reduce(lambda left, right: left.unionByName(right), frames)  # (Connect's too)
    return frame.where(row_filter.column()) if row_filter is not None else frame


def read_changes(spark: SparkSession, meta_client: HoodieTableMetaClient,
                 given: Mapping[str, str]) -> DataFrame:  # fmt: skip
    """A CDC read (`given` asks for one) with its images parsed: `op`, `ts_ms`, `record_key`
    and `partition_path` (of the image there is: the after image's, else the before's), and
    `before` / `after` as structs of the table's columns, so that SQL can say `after.amount`.
    Keys and paths are the table's key generator's, as its rows store them."""
    frame = read_table(spark, meta_client, given)
    columns = data_schema(snapshot_arrow_schema(meta_client))
    struct = from_arrow_schema(columns)
    images = frame.select(
        F.struct(F.col(OP), F.col(TS_MS),
                 F.from_json(BEFORE, struct).alias(BEFORE),
                 F.from_json(AFTER, struct).alias(AFTER)).alias(_CHANGE),
        F.coalesce(F.from_json(AFTER, struct), F.from_json(BEFORE, struct)).alias(_IMAGE),
    )  # fmt: skip
    flat = images.select(_CHANGE, f"{_IMAGE}.*")
    keys = KeyGenerator.of_table(meta_client.properties)
    return flat.select(
        F.col(f"{_CHANGE}.{OP}").alias(OP),
        F.col(f"{_CHANGE}.{TS_MS}").alias(TS_MS),
        keys.record_key().alias("record_key"),
        keys.partition_path(flat.schema).alias("partition_path"),
        F.col(f"{_CHANGE}.{BEFORE}").alias(BEFORE),
        F.col(f"{_CHANGE}.{AFTER}").alias(AFTER),
    )


def snapshot_as_changes(spark: SparkSession, meta_client: HoodieTableMetaClient,
                        given: Mapping[str, str]) -> DataFrame:  # fmt: skip
    """The snapshot `given` asks for in `read_changes`' shape, every row an insert (`op` i,
    `ts_ms` its commit time, no before image): what a consumer with no position yet (a first
    run, a full refresh) takes, needing none of the history cleaning may have removed."""
    frame = read_table(spark, meta_client, given)
    columns = data_schema(snapshot_arrow_schema(meta_client))
    struct = from_arrow_schema(columns)
    keys = KeyGenerator.of_table(meta_client.properties)
    return frame.select(
        F.lit("i").alias(OP),
        F.col(COMMIT_TIME).alias(TS_MS),
        keys.record_key().alias("record_key"),
        keys.partition_path(frame.schema).alias("partition_path"),
        F.lit(None).cast(struct).alias(BEFORE),
        F.struct(*[F.col(f"`{name}`") for name in struct.fieldNames()]).alias(AFTER),
    )


_CHANGE, _IMAGE = "__hoodie_change", "__hoodie_image"


def _route(
    meta_client: HoodieTableMetaClient,
    plan: ReadPlan,
    schema: StructType,
    native: bool | None,
    footers: dict[str, Footer],
) -> tuple[list[FileSplit], list[FileSplit]]:
    """The plan's slices Spark scans, and those the data source reads."""
    if native is False or (native is None and meta_client.storage.is_object_store):
        return [], list(plan.splits)
    unmerged = [
        split
        for split in plan.splits
        if split.base_file is not None and not (plan.merge_logs and split.log_files)
    ]
    files = [s.base_file for s in unmerged if s.base_file]
    readable = _spark_reads(meta_client, files, schema, footers)
    scanned = [split for split in unmerged if split.base_file in readable]
    chosen = set(scanned)
    return scanned, [split for split in plan.splits if split not in chosen]


def _scan(
    spark: SparkSession,
    meta_client: HoodieTableMetaClient,
    plan: ReadPlan,
    splits: list[FileSplit],
    schema: StructType,
) -> DataFrame:
    uris = [meta_client.storage.uri(split.base_file) for split in splits if split.base_file]
    # Spark's parquet reader checks the pages' CRC32 checksums our writers add, as ours does.
    scan = spark.read.schema(schema).options(**NATIVE_VERIFY_CHECKSUMS).parquet(*uris)
    if plan.commit_time_range is None:
        return scan
    return scan.where(_in_range(plan))


# parquet-mr's option, passed to the scan's Hadoop configuration as a read option.
NATIVE_VERIFY_CHECKSUMS = {"parquet.page.verify-checksum.enabled": "true"}


def _in_range(plan: ReadPlan) -> Column:
    """An incremental read's rows: written by the instants in its range."""
    assert plan.commit_time_range is not None
    written = F.col(COMMIT_TIME)
    if plan.commit_times is not None:  # layout 2: the instants completed in the range
        return written.isin(sorted(plan.commit_times))
    begin, end = plan.commit_time_range
    return (written > F.lit(begin)) & (written <= F.lit(end))


def _spark_reads(
    meta_client: HoodieTableMetaClient,
    files: list[str],
    schema: StructType,
    footers: dict[str, Footer],
) -> set[str]:
    """The files Spark's parquet reader reads as they are: paths without glob characters, and
    every column in a type Spark gives the type of `schema`. The schemas of files not in
    `footers` (those data skipping read) are read here, by threads, and only they are kept:
    a footer holds the file's bloom filter, hundreds of KB in memory, and a table of 50,000
    files held tens of GB of them."""
    wanted = {f.name: f.dataType.simpleString() for f in schema.fields}
    storage = meta_client.storage
    candidates = [f for f in files if not _GLOB.search(storage.uri(f))]
    schemas = {path: footer.schema for path, footer in footers.items()}
    schemas.update(read_schemas(storage, [f for f in candidates if f not in footers]))

    def agrees(relative: str) -> bool:
        for field in schemas[relative]:
            if field.name not in wanted:
                continue  # a column the table dropped: not read
            # (a type Spark has no name for keeps its Arrow name, which matches nothing)
            pair = (sql_type(normalize_type(field.type)), wanted[field.name])
            if pair[0] != pair[1] and pair not in _SPARK_PROMOTIONS:
                return False
        return True

    return {f for f in candidates if agrees(f)}

"""The `hoodie` Spark data source: `spark.read.format("hoodie").load(path)` and catalog tables.

Planning (which file slices a query reads) happens once on the driver; each Spark task then
reads, and for merge-on-read merges, its file slices with pyarrow (one large slice, or several
small ones packed together) and hands Arrow batches to Spark.

Column pruning: PySpark's Python data source API never tells a source which columns a query
uses (Spark 4's `PythonScanBuilder` implements filter pushdown only), so a plain read returns
every column. A read that names its columns with `spark.read.format("hoodie").schema(...)`
gets only those, and only those column chunks are read from the files.

Options follow Hudi's names (see `hoodie.read.options`). PySpark finds this source
without registration through the top-level `pyspark_hoodie` module; `register()` covers
sessions whose workers cannot see it.
"""

from __future__ import annotations

import base64
import json
import weakref
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from ..exceptions import HoodieError, InvalidConfigError
from ..fs_view import CommittedInstants
from ..merge import merge_mode_of
from ..meta_client import HoodieTableMetaClient
from ..options.read import FILTER_PUSHDOWN
from ..schema import META_SCHEMA, normalize_schema
from ..timeline import Timeline
from .cdc import CDC_SCHEMA, CdcSplit, cdc_read_spec, check_cdc_table, plan_cdc, read_cdc_split
from .data_skipping import log as skipping_log
from .data_skipping import skip_slices
from .options import CDC, INCREMENTAL, PLANNED, ReadOptions
from .packing import MAX_PARTITION_BYTES, default_parallelism, pack_splits
from .partition_filter import PartitionMatcher
from .planner import FileSplit, ReadPlan, plan_read
from .predicates import KeyRule, Predicate, from_spark
from .slice_reader import SliceReadSpec, read_slice

SOURCE_NAME = "hoodie"
# Spark hands a catalog table's Python data source no options, only the stored schema: the
# table's base path, and its store's options other than credentials, travel as metadata of
# its first (meta) column.
BASE_PATH_METADATA = "hoodie.base.path"
STORAGE_OPTIONS_METADATA = "hoodie.storage.options"
# Partition pruning takes Spark's filters, which PySpark only hands over with
# spark.sql.python.filterPushdown.enabled=true (and refuses a reader that asks for them
# otherwise), so it is opt-in per read. The dbt adapter's session turns both on.
PUSHDOWN_OPTION = FILTER_PUSHDOWN
PYTHON_FILTER_PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
# The latest write ("" for none) of the timeline `HoodieDataSource.schema()` took the schema
# from, as metadata of its first column: Spark asks for the schema, then plans the read, and a
# commit completing in between (a table's first, or one that adds columns) made a read take the
# files after it with the columns before it (rows without the user's columns).
SNAPSHOT_METADATA = "hoodie.read.schema.instant"


def _path(options: Mapping[str, str], schema: StructType | None = None) -> str:
    path = options.get("path")
    if not path and schema is not None:
        for struct_field in schema.fields:
            path = (struct_field.metadata or {}).get(BASE_PATH_METADATA)
            if path:
                break
    if not path:
        raise InvalidConfigError(
            "the hoodie data source needs the table's base path: "
            "spark.read.format('hoodie').load('<path>') or CREATE TABLE ... LOCATION '<path>'"
        )
    return path


def _storage_options(read: ReadOptions, schema: StructType | None = None) -> dict[str, str]:
    """The store's options: the catalog table's, overridden by the read's own."""
    stored: dict[str, str] = {}
    for struct_field in schema.fields if schema is not None else ():
        text = (struct_field.metadata or {}).get(STORAGE_OPTIONS_METADATA)
        stored.update(json.loads(text) if text else {})
    return {**stored, **read.storage_options}


def snapshot_arrow_schema(
    meta_client: HoodieTableMetaClient, as_of: str | None = None, timeline: Timeline | None = None
) -> pa.Schema:
    """Meta columns and the table's columns as of `as_of` (default: the latest write) of
    `timeline` (default: the table's now); see `HoodieTableMetaClient.schema`."""
    data = meta_client.schema(as_of, timeline) or pa.schema([])
    return pa.schema(list(META_SCHEMA) + list(normalize_schema(data)))


class SliceSplit(InputPartition):
    """A Spark input partition: file slices one task reads (small ones are packed together, see
    `hoodie.read.packing`), with what the plan decided about reading them.

    The plan's results (valid instants, whether to merge logs, the incremental commit-time
    range) travel here rather than on the reader: PySpark pickles the reader for the tasks
    *before* it calls `partitions()`, so whatever `partitions()` sets on `self` never reaches
    `read()`. (Keeping them on the reader made every merge-on-read task drop all log blocks,
    as no instant looked valid, and every incremental read skip its commit-time filter.)
    """

    def __init__(
        self,
        splits: tuple[FileSplit, ...],
        valid_instants: CommittedInstants | frozenset[str] = frozenset(),
        merge_logs: bool = True,
        commit_time_range: tuple[str, str] | None = None,
        commit_times: frozenset[str] | None = None,
        row_filter: Predicate | None = None,
    ):
        super().__init__(splits)
        self.splits = splits
        self.valid_instants = valid_instants
        self.merge_logs = merge_logs
        self.commit_time_range = commit_time_range
        self.commit_times = commit_times
        self.row_filter = row_filter  # the pushed filters (`SliceReadSpec.row_filter`)


class HoodieDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        options = ReadOptions.parse(self.options)
        meta_client = HoodieTableMetaClient.open(_path(self.options), _storage_options(options))
        if is_cdc(options):
            check_cdc_table(meta_client)
            return from_arrow_schema(CDC_SCHEMA)
        timeline = meta_client.timeline()
        schema = from_arrow_schema(
            snapshot_arrow_schema(meta_client, options.as_of_instant, timeline)
        )
        if options.as_of_instant is None and options.query_type != INCREMENTAL:
            # The snapshot this schema is of: the read plans its files at it (see SNAPSHOT_METADATA)
            latest = timeline.completed.write_timeline.last_timestamp()
            first = schema.fields[0]
            first.metadata = {**(first.metadata or {}), SNAPSHOT_METADATA: latest or ""}
        return schema

    def reader(self, schema: StructType) -> DataSourceReader:
        path = _path(self.options, schema)
        pushdown = str(self.options.get(PUSHDOWN_OPTION, "")).lower() == "true" or any(
            (f.metadata or {}).get(PUSHDOWN_OPTION) == "true" for f in schema.fields
        )
        reader_class = PartitionPruningReader if pushdown else HoodieReader
        options = ReadOptions.parse(self.options)
        options = replace(options, storage_options=_storage_options(options, schema))
        if is_cdc(options):
            return CdcReader(path, options)
        return reader_class(path, schema, options, self.options.get(PLANNED))


class HoodieReader(DataSourceReader):
    """Plans on the driver (in `partitions()`), or takes the plan `HoodieTable.read` made
    (`planned`, see `ReadPlan.to_json`); each Spark task reads its packed file slices."""

    def __init__(
        self, path: str, schema: StructType, options: ReadOptions, planned: str | None = None
    ):
        meta_client = HoodieTableMetaClient.open(path, options.storage_options)
        self.meta_client = meta_client
        self.options = options
        self.planned = planned
        first = schema.fields[0].metadata if schema.fields else None
        self.schema_instant: str | None = (first or {}).get(SNAPSHOT_METADATA)
        self.partition_filters: list[Filter] = []
        self.skipping_filters: list[Filter] = []  # every pushed filter, for data skipping
        arrow_schema = to_arrow_schema(schema, timezone="UTC")
        snapshot = snapshot_arrow_schema(meta_client, options.as_of_instant)
        unknown = [name for name in arrow_schema.names if name not in snapshot.names]
        if unknown:
            raise InvalidConfigError(
                f"column(s) {', '.join(unknown)} are not in table '{meta_client.name}' at {path}; "
                f"its columns are: {', '.join(snapshot.names)}. Name only those in the schema "
                "given to spark.read.format('hoodie').schema(...) (or re-create the catalog "
                "table if the table's schema changed)"
            )
        mode = merge_mode_of(meta_client.properties)
        projected = arrow_schema.names != snapshot.names
        self.spec = SliceReadSpec(
            storage=meta_client.storage,
            schema=arrow_schema,
            record_key_fields=meta_client.properties.record_key_fields,
            merge_mode=mode if mode.ordering_field in snapshot.names else mode.without_ordering(),
            valid_instants=frozenset(),
            merge_schema=snapshot if projected else None,
        )

    def __getstate__(self) -> dict[str, Any]:
        # The tasks get their slices in their input partitions; a plan given as text (one
        # entry per file slice of the read) stays on the driver.
        return {**self.__dict__, "planned": None}

    def partitions(self) -> list[InputPartition]:
        matcher = PartitionMatcher.for_table(
            self.meta_client, self.spec.schema, self.partition_filters
        )
        if self.planned is not None:
            plan = decode_plan(self.planned)
            if matcher is not None:
                plan.splits = [s for s in plan.splits if matcher(s.partition_path)]
        else:
            plan = self._plan(matcher)
        pushed = [*self.partition_filters, *self.skipping_filters]
        predicate = self._with_keys(pushed) if pushed else None
        if self.options.data_skipping and self.skipping_filters:
            self._skip(plan)
        # The plan's own instants: a write that completed after the slices were listed may
        # have written log files the listing missed, so counting its blocks in the files
        # that were listed would show part of it (a torn read; seen with concurrent writers).
        split_of = partial(
            SliceSplit,
            valid_instants=plan.committed if plan.committed is not None else frozenset(),
            merge_logs=plan.merge_logs,
            commit_time_range=plan.commit_time_range,
            commit_times=plan.commit_times,
            row_filter=predicate,
        )
        tasks = pack_splits(
            plan.splits,
            self.options.parallelism or default_parallelism(),
            self.options.max_partition_bytes or MAX_PARTITION_BYTES,
        )
        if not tasks:
            return [split_of(())]
        return [split_of(tuple(task)) for task in tasks]

    def _plan(self, matcher: PartitionMatcher | None) -> ReadPlan:
        """The read's plan, at the snapshot its schema was taken from where the table's columns
        changed since (`SNAPSHOT_METADATA`): one timeline gives the read its columns and its
        files. (Where they did not change, the latest files read as well.)"""
        plan = plan_read(self.meta_client, self.options, matcher)
        taken = self.schema_instant
        if taken is None or plan.as_of == (taken or None):
            return plan
        now = snapshot_arrow_schema(self.meta_client, plan.as_of)
        if now.names == self.spec.schema.names:
            return plan
        if not taken:
            return ReadPlan([], None)  # the schema is of the table before its first commit
        return plan_read(self.meta_client, replace(self.options, as_of_instant=taken), matcher)

    def _with_keys(self, filters: list[Filter]) -> Predicate:
        """Spark's `filters` as one predicate, with the record keys they name (`KeyRule`): data
        skipping rules files out by them (`_skip`), the tasks drop the rows it rules out and
        merge only those keys (`row_matching`)."""
        props = self.meta_client.properties
        rule = KeyRule.of(props.record_key_fields, props.key_generator_class,
                          self.spec.full_schema)  # fmt: skip
        return rule.with_keys(from_spark(filters))

    def _skip(self, plan: ReadPlan) -> None:
        """Drop the plan's slices no row of which can match the pushed filters
        (`hoodie.read.data_skipping`), logging what was skipped."""
        table_schema = self.spec.full_schema
        predicate = self._with_keys(self.skipping_filters)
        metadata = plan.metadata
        if metadata is None and self.planned is not None and self.options.metadata_enable:
            # a plan given as text names its files only: their statistics are the same in
            # the metadata table now (a file's name is its one version)
            metadata = self.meta_client.table_metadata()
        plan.splits, report = skip_slices(
            self.meta_client.storage,
            plan.splits,
            plan.merge_logs,
            predicate,
            table_schema,
            metadata=metadata,
            snapshot=plan.committed if plan.latest else None,
        )
        skipping_log.info(report.describe(self.meta_client.name))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SliceSplit):
            raise HoodieError(f"the hoodie reader reads SliceSplits, got {partition!r}")
        # `self` is the reader as pickled before `partitions()` ran: take the plan's
        # decisions from the partition (see SliceSplit).
        spec = replace(
            self.spec,
            valid_instants=partition.valid_instants,
            merge_logs=partition.merge_logs,
            commit_time_range=partition.commit_time_range,
            commit_times=partition.commit_times,
            row_filter=partition.row_filter,
        )
        for split in partition.splits:
            yield from read_slice(spec, split)


def is_cdc(options: ReadOptions) -> bool:
    """A CDC read (`hoodie.datasource.query.incremental.format=cdc`)."""
    return options.query_type == INCREMENTAL and options.incremental_format == CDC


class CdcTask(InputPartition):
    """A Spark input partition of a CDC read: the splits one task reads, and the plan's
    instants (see `SliceSplit` for why they travel here)."""

    def __init__(
        self,
        splits: tuple[CdcSplit, ...],
        committed: CommittedInstants | None,
        completion: dict[str, str],
    ):
        super().__init__(splits)
        self.splits = splits
        self.committed = committed
        self.completion = completion


class CdcReader(DataSourceReader):
    """A CDC read (`hoodie.read.cdc`): the driver plans the splits, each task reads its own
    (contiguous runs of them, so the rows keep the plan's order: by file group, then instant)."""

    def __init__(self, path: str, options: ReadOptions):
        self.meta_client = HoodieTableMetaClient.open(path, options.storage_options)
        self.options = options
        self.spec = cdc_read_spec(self.meta_client)

    def partitions(self) -> list[InputPartition]:
        plan = plan_cdc(self.meta_client, self.options)
        tasks = max(1, min(len(plan.splits), self.options.parallelism or default_parallelism()))
        size = -(-len(plan.splits) // tasks) if plan.splits else 1
        chunks = [plan.splits[i : i + size] for i in range(0, len(plan.splits), size)] or [[]]
        return [CdcTask(tuple(chunk), plan.committed, plan.completion) for chunk in chunks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, CdcTask):
            raise HoodieError(f"the hoodie CDC reader reads CdcTasks, got {partition!r}")
        spec = replace(self.spec, committed=partition.committed, completion=partition.completion)
        for split in partition.splits:
            batch = read_cdc_split(spec, split)
            if batch.num_rows:
                yield batch


class PartitionPruningReader(HoodieReader):
    """Also takes Spark's filters to skip partitions, and file slices by their base files'
    statistics (`hoodie.read.data_skipping`; needs spark.sql.python.filterPushdown)."""

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        for item in filters:
            if PartitionMatcher.usable(item, self.meta_client.properties.value_partition_fields):
                self.partition_filters.append(item)  # (partition pruning decides these)
            else:
                self.skipping_filters.append(item)
            yield item  # Spark still evaluates every filter on the rows we return


def encode_plan(plan: ReadPlan) -> str:
    """A plan as the value of option `hoodie.read.planned`: compressed, because PySpark pickles
    a data source's options into every read task (with the data source), and a plan names
    every file slice of the read."""
    return base64.b64encode(zlib.compress(plan.to_json().encode())).decode("ascii")


def decode_plan(text: str) -> ReadPlan:
    try:
        return ReadPlan.from_json(zlib.decompress(base64.b64decode(text)).decode())
    except (ValueError, KeyError, TypeError, zlib.error) as error:
        raise InvalidConfigError(
            f"option '{PLANNED}' is not a read plan ({error}): it is set by HoodieTable.read "
            "for its own reads; leave it out and give the read's options instead"
        ) from error


def catalog_schema(meta_client: HoodieTableMetaClient) -> StructType:
    """The schema to store with a catalog table: the snapshot's, carrying the base path."""
    schema = from_arrow_schema(snapshot_arrow_schema(meta_client))
    first = schema.fields[0]
    first.metadata = {
        **(first.metadata or {}),
        BASE_PATH_METADATA: meta_client.storage.uri(),
        PUSHDOWN_OPTION: "true",
    }
    if meta_client.storage.shareable_options:
        first.metadata[STORAGE_OPTIONS_METADATA] = json.dumps(
            meta_client.storage.shareable_options, sort_keys=True
        )
    return schema


_registered: weakref.WeakSet[SparkSession] = weakref.WeakSet()


def register(spark: SparkSession) -> None:
    """Register the source in `spark` (harmless when static registration already did), once
    per session: every read calls this, and each registration replaces the last (Spark logs a
    warning each time; over Spark Connect it ships the class again)."""
    if spark in _registered:
        return
    spark.dataSource.register(HoodieDataSource)
    _registered.add(spark)

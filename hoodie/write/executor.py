"""Step 3 of a write: Spark tasks write each file group's new version; the driver gets stats.

Records are assigned to their targets (updates to their file group, inserts to an insert
bucket by key hash), shuffled one partition per target, and written by the handle each target
needs: a new base file version (`CopyOnWriteHandle`) or a new log file (`AppendHandle`).
Where the write tasks can tag their own records (the BUCKET index's `BucketWriter`, the
SIMPLE index's routing units and `RoutedWriter`), tagging and writing are one job instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TypedDict

import pyarrow as pa
from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from ..column_stats import FileIndexing
from ..config import GLOBAL_BLOOM_INDEX, GLOBAL_SIMPLE_INDEX, WriteConfig
from ..fs_view import CommittedInstants
from ..index.base import LOCATION
from ..index.bucket import BUCKET, BucketIndex
from ..index.placement import FileGroupTarget, InsertBucket
from ..index.routing import UNIT, RoutingPlan
from ..markers import WriteMarkers
from ..merge import merge_mode_of
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata, WriteStat
from ..schema import IS_DELETED, PARTITION_PATH, RECORD_KEY, data_schema
from ..storage import FileIO
from ..timeline import Timeline
from ..transaction.metadata_indexes import file_indexing
from .append_handle import AppendHandle
from .bucket_writer import BucketWriter
from .bulk_insert import BulkInsertWriter, shuffled_for_bulk_insert
from .cdc_writer import CdcLogging
from .merge_handle import (
    STAT_SCHEMA,
    TARGET,
    CopyOnWriteHandle,
    group_key,
    write_partition_metadata,
)
from .prepare import DELETE
from .routed_writer import RoutedWriter
from .task_errors import (
    GroupTask,
    results_or_raise,
    returning_errors,
    returning_errors_of_batches,
)

_BUCKET_POINT = "__hoodie_bucket_point"
# Indexes that tag merge-on-read records by the keys a slice holds after its logs' deletes: an
# update they send to a log file is one in place (see `AppendHandle.locates_updates`).
LIVE_KEY_TAGGING = (GLOBAL_SIMPLE_INDEX, GLOBAL_BLOOM_INDEX, "RECORD_INDEX")
_HASH_RANGE = 2_147_483_647


# A routed write into this many units or more has its task count set (`routed_write_tasks`).
MANY_UNITS = 16


class WriteExecutor:
    def __init__(self, meta_client: HoodieTableMetaClient, config: WriteConfig, instant: str,
                 schema: pa.Schema, operation: str):  # fmt: skip
        self.meta_client = meta_client
        self.config = config
        self.instant = instant
        self.schema = schema
        self.operation = operation

    def write_file_groups(
        self,
        tagged: DataFrame,
        insert_buckets: list[InsertBucket],
        targets: dict[str, FileGroupTarget],
    ) -> list[WriteStat]:
        if not targets:
            return []
        spark = tagged.sparkSession
        if insert_buckets:
            ranges = spark.createDataFrame(
                [(b.partition_path, b.file_id, b.lower, b.upper) for b in insert_buckets],
                f"{PARTITION_PATH} string, __bucket string, __lower double, __upper double",
            )
            point = F.pmod(F.xxhash64(F.col(RECORD_KEY)), F.lit(_HASH_RANGE)) / F.lit(
                float(_HASH_RANGE)
            )
            inserts = (
                tagged.filter(F.col(LOCATION).isNull())
                .withColumn(_BUCKET_POINT, point)
                .join(
                    F.broadcast(ranges),
                    on=[
                        tagged[PARTITION_PATH] == ranges[PARTITION_PATH],
                        F.col(_BUCKET_POINT) >= ranges["__lower"],
                        F.col(_BUCKET_POINT) < ranges["__upper"],
                    ],
                )
                .select(tagged["*"], F.col("__bucket").alias(TARGET))
            )
            updates = tagged.filter(F.col(LOCATION).isNotNull()).withColumn(TARGET, F.col(LOCATION))
            assigned = updates.unionByName(inserts)
        else:
            assigned = tagged.withColumn(TARGET, F.col(LOCATION))
        rewrite, append = self._handles(targets)
        # One shuffle partition per file group, so file groups are written in parallel.
        assigned = assigned.drop(LOCATION).repartition(len(targets), TARGET)
        write = returning_errors(_as_function(rewrite, append))
        rows = assigned.groupBy(TARGET).applyInArrow(write, STAT_SCHEMA).collect()
        return _stats(rows)

    def write_buckets(
        self,
        prepared: DataFrame,
        index: BucketIndex,
        timeline: Timeline,
        pending_compactions: dict[tuple[str, str], str],
    ) -> list[WriteStat]:
        """Tag and write in one job: each task finds its bucket's file slice (bucket_writer)."""
        rewrite, append = self._handles(targets={})
        writer = BucketWriter(
            storage=self.meta_client.storage,
            timeline=timeline,
            pending_compactions=pending_compactions,
            index=index,
            table_name=self.meta_client.name,
            record_key_fields=self.config.record_key_fields,
            merge_on_read=self.meta_client.merge_on_read,
            append=append,
            rewrite=rewrite,
        )
        if self.config.parallelism:
            prepared = prepared.repartition(self.config.parallelism, PARTITION_PATH, BUCKET)
        write = returning_errors(_plain_function(writer))
        rows = prepared.groupBy(PARTITION_PATH, BUCKET).applyInArrow(write, STAT_SCHEMA).collect()
        return _stats(rows)

    def write_routed(
        self,
        prepared: DataFrame,
        plan: RoutingPlan,
        committed: CommittedInstants,
        pending_compactions: dict[tuple[str, str], str],
        average_record_size: int,
        pending_clusterings: frozenset[tuple[str, str]] = frozenset(),
    ) -> list[WriteStat]:
        """Tag and write in one job, one task per routing unit (routed_writer)."""
        rewrite, append = self._handles(targets={})
        writer = RoutedWriter(
            storage=self.meta_client.storage,
            plan=plan,
            committed=committed,
            pending_compactions=pending_compactions,
            merge_on_read=self.meta_client.merge_on_read,
            delete_operation=self.operation == DELETE,
            max_file_size=self.config.max_file_size,
            small_file_limit=self.config.small_file_limit,
            average_record_size=average_record_size,
            rewrite=rewrite,
            append=append,
            pending_clusterings=pending_clusterings,
        )
        routed = plan.route(prepared)
        tasks = self.config.parallelism or self._routed_tasks(prepared, plan)
        if tasks:
            routed = routed.repartition(tasks, PARTITION_PATH, UNIT)
        write = returning_errors(_plain_function(writer))
        rows = routed.groupBy(PARTITION_PATH, UNIT).applyInArrow(write, STAT_SCHEMA).collect()
        return _stats(rows)

    def _routed_tasks(self, prepared: DataFrame, plan: RoutingPlan) -> int:
        shuffle = prepared.sparkSession.conf.get("spark.sql.shuffle.partitions") or "200"
        return routed_write_tasks(self.operation == DELETE, plan.unit_count, int(shuffle))

    def bulk_insert(self, prepared: DataFrame) -> list[WriteStat]:
        """Write the batch into new file groups in one job, untagged (bulk_insert)."""
        storage = self.meta_client.storage
        writer = BulkInsertWriter(
            storage=storage,
            instant=self.instant,
            data_schema=self.schema,
            merge_mode=merge_mode_of(self.meta_client.properties),
            record_key_fields=self.config.record_key_fields,
            compression=self.config.compression,
            bloom_filter=self.config.bloom_filter,
            indexing=self._indexing(),
            markers=WriteMarkers(storage, self.instant),
            max_file_size=self.config.max_file_size,
            max_memory=self.config.merge_max_memory,
        )
        shuffled = shuffled_for_bulk_insert(prepared, self.config.precombine_field,
                                            bool(self.config.partition_fields),
                                            self.config.parallelism)  # fmt: skip

        def write_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return writer(batches)

        write = returning_errors_of_batches(write_task)
        return _stats(shuffled.mapInArrow(write, STAT_SCHEMA).collect())

    def write_partition_metadata(self, partitions: list[str]) -> None:
        for partition in partitions:
            write_partition_metadata(self.meta_client.storage, partition, self.instant)

    def finalize(self, metadata: CommitMetadata) -> None:
        """Delete marked files no write stat names (from retried or speculative tasks)."""
        WriteMarkers(self.meta_client.storage, self.instant).delete_strays(metadata)

    def _handles(
        self, targets: dict[str, FileGroupTarget]
    ) -> tuple[CopyOnWriteHandle, AppendHandle]:
        """The write tasks' two handles: a base file version, and a log file."""
        storage = self.meta_client.storage
        common = _HandleFields(
            storage=storage,
            instant=self.instant,
            targets=targets,
            data_schema=self.schema,
            record_key_fields=self.config.record_key_fields,
            compression=self.config.compression,
            markers=WriteMarkers(storage, self.instant),
        )
        delete_operation = self.operation == DELETE
        indexing = self._indexing()
        mode = merge_mode_of(self.meta_client.properties)
        kept = () if delete_operation else self._kept_columns(mode.ordering_field)
        rewrite = CopyOnWriteHandle(
            **common,
            # Hudi's delete operation removes keys whatever their ordering value.
            merge_mode=mode.without_ordering() if delete_operation else mode,
            bloom_filter=self.config.bloom_filter,
            indexing=indexing,
            allow_duplicate_keys=delete_operation,
            cdc=CdcLogging.of(self.meta_client.properties),
            kept_columns=kept,
        )
        append = AppendHandle(
            **common,
            table_name=self.meta_client.name,
            merge_mode=mode,
            unconditional_deletes=delete_operation,
            logs_per_instant=self.meta_client.properties.table_version >= 8,
            indexing=indexing,
            locates_updates=self.config.index_type not in LIVE_KEY_TAGGING,
            cdc=self.meta_client.properties.cdc_enabled,
            kept_columns=kept,
            timeline=self.meta_client.timeline() if kept else None,
            partial_blocks=self.meta_client.properties.table_version >= 8,
        )
        return rewrite, append

    def _kept_columns(self, ordering_field: str | None) -> tuple[str, ...]:
        """A partial update's columns that a matched key keeps from its stored version: the
        new version's data columns the config does not replace (nor the table's ordering
        field, which a partial update always takes, nor `_hoodie_is_deleted`)."""
        names = data_schema(self.schema).names
        replaced = self.config.replaced_columns(names)
        if replaced is None:
            return ()
        always = (ordering_field, IS_DELETED)
        return tuple(c for c in names if c not in replaced and c not in always)

    def _indexing(self) -> FileIndexing:
        """What the write tasks record of each file for the metadata table's indexes."""
        return file_indexing(self.meta_client, self.config.metadata_table is True,
                             self.config.metadata_indexes)  # fmt: skip


def routed_write_tasks(delete: bool, units: int, shuffle_partitions: int) -> int:
    """Write tasks of a routed write into `units` routing units (0: let Spark choose).
    Adaptive execution sizes tasks by the batch's shuffled bytes, but a task's work is the
    file groups it rewrites:

    - a delete's records are keys alone, so all of them went to one task, which then
      rewrote every touched file group in turn (measured at 3M rows, 30 file groups:
      5.9-7.7 s against 4.2-4.9 s in 8 tasks): one task per unit, up to Spark's shuffle
      partitions;
    - an upsert of a small batch into many units had the same fate (2,000 rows into 500
      partitions of a 50,000-partition table: one task, 6.4 s of writing; 3.8-4.0 s in 4
      or 8 tasks). With MANY_UNITS units or more: a task per MANY_UNITS units, at least
      MANY_UNITS / 2 tasks, at most Spark's shuffle partitions. At 1M rows in 30 units
      (`bench/compare.py`, 8 shuffle partitions, so 8 tasks) the 10% upserts took a median
      3.12 s against 3.41 s by Spark's choice, the 1% update 2.20 s against 2.98 s.
      Fewer units are Spark's to split."""
    if delete:
        return max(1, min(units, shuffle_partitions))
    if units < MANY_UNITS:
        return 0
    return max(1, min(units, shuffle_partitions, max(MANY_UNITS // 2, units // MANY_UNITS)))


class _HandleFields(TypedDict):
    """What both handles are given alike."""

    storage: FileIO
    instant: str
    targets: dict[str, FileGroupTarget]
    data_schema: pa.Schema
    record_key_fields: tuple[str, ...]
    compression: str
    markers: WriteMarkers


def _as_function(rewrite: CopyOnWriteHandle, append: AppendHandle) -> GroupTask:
    """The UDF for `applyInArrow`: the handle each file group's target calls for.

    A plain function, because PySpark inspects the argument count, which a callable object's
    `self` confuses.
    """

    def write_file_group(key: tuple[Any, ...], table: pa.Table) -> pa.Table:
        handle = append if rewrite.targets[group_key(key[0])].appends_log else rewrite
        return handle(key, table)

    return write_file_group


def _plain_function(writer: GroupTask) -> GroupTask:
    """`applyInArrow` needs a function (it counts the arguments, which `self` confuses)."""

    def write_group(key: tuple[Any, ...], table: pa.Table) -> pa.Table:
        return writer(key, table)

    return write_group


def _stats(rows: list[Row]) -> list[WriteStat]:
    """The tasks' write stats, or the first of the core's errors a task returned, raised."""
    return [WriteStat(**json.loads(text)) for text in results_or_raise(r["stat"] for r in rows)]

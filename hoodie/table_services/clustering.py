"""Clustering: rewrite small file groups into fewer, larger ones, sorted by chosen columns.

Two steps, as Apache Hudi's `SparkSizeBasedClusteringPlanStrategy` and
`SparkSortAndSizeExecutionStrategy` do them:
- *schedule*: per partition, the latest slices of file groups in no pending compaction or
  clustering whose base file is below `hoodie.clustering.plan.strategy.small.file.limit`,
  largest first, packed into groups of at most `max.bytes.per.group` input bytes (at most
  `max.num.groups` groups); a group of one slice only with `single.group.clustering.enabled`
  or sort columns (sorting it is the point). Each group writes ceil(its bytes /
  `target.file.max.bytes`) file groups. The plan is requested as
  `<t>.replacecommit.requested` (table version 6) or `<t>.clustering.requested` (8)
  (`hoodie.clustering_plan`); from then on writers keep out of its file groups;
- *execute*: one Spark task per clustering group reads its slices merged (logs included,
  `merged_slice`), sorts the rows (LINEAR: by the sort columns, nulls first as Spark sorts;
  ZORDER: by the columns' order-preserving 8-byte keys with their bits interleaved, our own
  layout; no sort columns: by record key) and writes them into the plan's number of new file
  groups, each row keeping its `_hoodie_commit_time` and sequence number (only its file name
  changes); the driver completes the instant as a `replacecommit` (`operationType`
  `CLUSTER`, the input groups in `partitionToReplaceFileIds`) through the transaction's
  commit path, which updates the metadata table's files, column stats and record index.

Readers drop the replaced groups once the replace commit completes (`fs_view`); a pending
clustering changes nothing they see, and incremental reads skip it (its rows keep their
commit times). The cleaner deletes the replaced groups once the replace commit is older than
the retained commits. A failed execution removes its files and leaves the plan pending; the
next run executes it again from the plan alone.
"""

from __future__ import annotations

import json
import logging
import math
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from ..bloom_filter import BloomFilterSpec
from ..clustering_plan import (
    CLUSTER,
    SORT_COLUMNS_PARAM,
    ClusteringGroup,
    ClusteringPlan,
    SliceInfo,
    pending_clustering_file_groups,
    pending_clusterings,
    read_plan,
    requested_instant,
)
from ..column_stats import FileIndexing
from ..compaction_plan import pending_compaction_file_groups
from ..config import BUCKET_INDEX, WriteConfig, option_default
from ..exceptions import CommitError, HoodieError, InvalidConfigError, StaleClusteringPlanError
from ..faults import crash_point
from ..fs_view import BlockSpan, CommittedInstants, FileSystemView
from ..markers import IOType, WriteMarkers
from ..merge import merge_mode_of
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata, WriteStat
from ..naming import base_file_name
from ..read.planner import FileSplit
from ..read.slice_reader import SliceReadSpec, merged_slice
from ..schema import (
    FILE_NAME,
    META_COLUMNS,
    RECORD_KEY,
    constant_column,
    to_avro_schema,
    with_meta_columns,
)
from ..storage import FileIO
from ..timeline import WRITE_ACTIONS, Action, Instant, State, Timeline
from ..transaction.conflicts import file_groups_of
from ..transaction.failed_writes import FailedWritesPolicy
from ..transaction.metadata_indexes import file_indexing
from ..transaction.record_index import hand_over_keys
from ..transaction.rollback import Rollback
from ..transaction.transaction import Transaction
from ..write.merge_handle import task_token, write_base_file
from ..write.result import WriteResult
from ..write.task_errors import task_failure
from .savepoint import refuse_pending_restore

log = logging.getLogger(__name__)
_MB = 1024 * 1024
LINEAR, ZORDER = "LINEAR", "ZORDER"


@dataclass(frozen=True)
class ClusteringConfig:
    """The clustering options (`hoodie.clustering.*`, `hoodie.layout.optimize.strategy`)."""

    small_file_limit: int = cast(int, option_default("clustering_small_file_limit"))
    max_bytes_per_group: int = cast(int, option_default("clustering_max_bytes_per_group"))
    target_file_max_bytes: int = cast(int, option_default("clustering_target_file_max_bytes"))
    max_groups: int = cast(int, option_default("clustering_max_groups"))
    sort_columns: tuple[str, ...] = ()
    single_group: bool = bool(option_default("clustering_single_group"))
    layout: str = str(option_default("layout_optimize_strategy"))

    @classmethod
    def of(cls, config: WriteConfig | None) -> ClusteringConfig:
        if config is None:
            return cls()
        return cls(
            config.clustering_small_file_limit,
            config.clustering_max_bytes_per_group,
            config.clustering_target_file_max_bytes,
            config.clustering_max_groups,
            tuple(config.clustering_sort_columns or ()),
            config.clustering_single_group,
            config.layout_optimize_strategy,
        )


def is_clustering_commit(meta_client: HoodieTableMetaClient, instant: Instant) -> bool:
    """Is this completed replace commit a clustering's (`operationType` `CLUSTER`)?"""
    if instant.action is not Action.REPLACE_COMMIT or not instant.is_completed:
        return False
    return meta_client.commit_metadata(instant).operation_type == CLUSTER


def commits_since_clustering(meta_client: HoodieTableMetaClient, timeline: Timeline) -> int:
    """Completed writes after the latest clustering (pending or completed): Apache Hudi's
    `hoodie.clustering.inline.max.commits` trigger."""
    last = None
    pending = pending_clusterings(meta_client.storage, timeline)
    if pending:
        last = pending[-1].timestamp
    for instant in reversed(timeline.completed.instants):
        if last is not None and instant.timestamp <= last:
            break
        if is_clustering_commit(meta_client, instant):
            last = instant.timestamp
            break
    return sum(
        1
        for i in timeline.completed
        if i.action in WRITE_ACTIONS
        and (last is None or i.timestamp > last)
        and not is_clustering_commit(meta_client, i)
    )


def roll_back_requested_plans(
    meta_client: HoodieTableMetaClient, policy: FailedWritesPolicy, touched: set[tuple[str, str]]
) -> list[str]:
    """`hoodie.clustering.rollback.pending.replacecommit.on.conflict`: remove the clustering
    plans a write touches that are only requested (no executor has taken them up: Apache
    Hudi's rule), under the table lock; the write then goes on. Returns their instants."""
    dropped = []
    with policy.exclusive():
        storage, timeline = meta_client.storage, meta_client.timeline()
        for instant in pending_clusterings(storage, timeline):
            if instant.state is not State.REQUESTED:
                continue
            planned = read_plan(storage, timeline.layout, instant.timestamp).file_groups()
            if planned & touched:
                meta_client.delete_pending_instant(instant)
                dropped.append(instant.timestamp)
                log.warning("table '%s': pending clustering %s rolled back, a write changes "
                            "its file groups", meta_client.name, instant.timestamp)  # fmt: skip
    return dropped


Precommit = Callable[[HoodieTableMetaClient], None]


def _plan_still_current(instant_time: str, plan: ClusteringPlan) -> Precommit:
    """The clustering's check at commit, under the table lock: no write completed since the
    plan was made changed a file group it rewrites. The plan names the slices it read; a
    write into them since (from a writer that ignores pending plans) would be lost.
    Scheduling waits for pending writes, so a write completed after the plan was requested
    after it too, on either timeline layout."""
    planned = plan.file_groups()

    def check(meta_client: HoodieTableMetaClient) -> None:
        for other in meta_client.timeline().completed:
            if other.timestamp <= instant_time or other.action not in WRITE_ACTIONS:
                continue
            overtaken = file_groups_of(meta_client.commit_metadata(other)) & planned
            if overtaken:
                partition, file_id = sorted(overtaken)[0]
                raise StaleClusteringPlanError(
                    f"clustering {instant_time} of table '{meta_client.name}' was not "
                    f"committed: {other.action.value} {other.timestamp} changed "
                    f"{len(overtaken)} of its file groups ({partition}/{file_id}, ...) after "
                    "the plan was made, and executing it would lose those changes. The plan "
                    "was removed; the next clustering plans the table afresh"
                )

    return check


# -- sorting -----------------------------------------------------------------------------------
def _order_keys(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Each value as an unsigned 64-bit key that orders as the values do; null first (0)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    valid = np.asarray(pc.is_valid(array).to_numpy(zero_copy_only=False), dtype=bool)
    n = len(array)
    if pa.types.is_dictionary(kind):
        return _order_keys(array.cast(kind.value_type))
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
        raw = array.cast(pa.binary()) if not pa.types.is_binary(kind) else array
        keys = np.zeros(n, dtype=np.uint64)
        for i, value in enumerate(raw.to_pylist()):
            if value is not None:
                keys[i] = int.from_bytes(value[:8].ljust(8, b"\0"), "big")
        return keys
    if pa.types.is_boolean(kind):
        keys = np.asarray(pc.fill_null(array, False).to_numpy(zero_copy_only=False), np.uint64)
        return np.where(valid, keys + 1, 0).astype(np.uint64)
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        floats = pc.fill_null(array.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
        bits = np.asarray(floats, dtype=np.float64).view(np.uint64)
        negative = (bits >> np.uint64(63)).astype(bool)
        keys = np.where(negative, ~bits, bits | np.uint64(1 << 63))
        return np.where(valid, keys, 0).astype(np.uint64)
    if pa.types.is_unsigned_integer(kind):
        keys = pc.fill_null(array.cast(pa.uint64()), 0).to_numpy(zero_copy_only=False)
        return np.where(valid, keys, 0).astype(np.uint64)
    if pa.types.is_integer(kind) or pa.types.is_temporal(kind):
        ints = pc.fill_null(array.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        keys = np.asarray(ints, dtype=np.int64).view(np.uint64) ^ np.uint64(1 << 63)
        return np.where(valid, keys, 0).astype(np.uint64)
    raise InvalidConfigError(
        f"hoodie.clustering.plan.strategy.sort.columns: ZORDER cannot order a column of type "
        f"{kind}; sort by columns of numbers, strings, dates or timestamps, or use LINEAR"
    )


def zorder_indices(rows: pa.Table, columns: tuple[str, ...]) -> np.ndarray:
    """Row order along the Z-order curve of `columns`: the bits of each column's 8-byte key
    interleaved, most significant first (ties keep the rows' order)."""
    keys = [_order_keys(rows.column(c)) for c in columns]
    k = len(keys)
    words = [np.zeros(rows.num_rows, dtype=np.uint64) for _ in range(k)]
    for position in range(64 * k):
        column, bit = position % k, 63 - position // k
        value = (keys[column] >> np.uint64(bit)) & np.uint64(1)
        words[position // 64] |= value << np.uint64(63 - position % 64)
    return np.lexsort(tuple(reversed(words)))  # lexsort: the last key is the primary one


def sorted_rows(rows: pa.Table, columns: tuple[str, ...], layout: str) -> pa.Table:
    """The rows in clustering order (record key order breaks ties, so the files a plan
    writes do not depend on the order the slices were read in)."""
    rows = rows.take(pc.sort_indices(rows, [(RECORD_KEY, "ascending")]))
    if not columns:
        return rows
    if layout == ZORDER:
        return rows.take(pa.array(zorder_indices(rows, columns)))
    order = pc.sort_indices(rows, [(c, "ascending", "at_start") for c in columns])
    return rows.take(order)


# -- the task ----------------------------------------------------------------------------------
@dataclass
class _ClusteringTask:
    """Runs in Spark tasks: each clustering group whose index arrives as a row."""

    storage: FileIO
    instant: str
    groups: list[ClusteringGroup]
    spec: SliceReadSpec
    sort_columns: tuple[str, ...]
    layout: str
    compression: str
    bloom_filter: BloomFilterSpec
    log_writes: dict[str, tuple[BlockSpan, ...]] = field(default_factory=dict)
    indexing: FileIndexing = FileIndexing()

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            stats = [s for i in batch.column(0).to_pylist() for s in self.cluster(self.groups[i])]
            yield pa.RecordBatch.from_arrays(
                [pa.array([json.dumps(asdict(s)) for s in stats], pa.string())], names=["stat"]
            )

    def cluster(self, group: ClusteringGroup) -> list[WriteStat]:
        parts = []
        for info in group.slices:
            split = FileSplit(
                info.partition_path,
                info.file_id,
                info.base_file,
                info.log_files,
                log_writes=tuple(self.log_writes.get(lf, ()) for lf in info.log_files),
            )
            parts.append(merged_slice(self.spec, split)[0])
        rows = sorted_rows(pa.concat_tables(parts), self.sort_columns, self.layout)
        partition = group.slices[0].partition_path
        outputs = max(1, min(group.num_output_file_groups, rows.num_rows))
        per_file = math.ceil(rows.num_rows / outputs) if rows.num_rows else 0
        stats = []
        for start in range(0, rows.num_rows, max(per_file, 1)):
            stats.append(self._write(partition, rows.slice(start, per_file)))
        return stats

    def _write(self, partition: str, rows: pa.Table) -> WriteStat:
        file_id = f"{uuid.uuid4()}-0"
        name = base_file_name(file_id, task_token(), self.instant)
        relative = f"{partition}/{name}" if partition else name
        rows = rows.set_column(
            META_COLUMNS.index(FILE_NAME),
            pa.field(FILE_NAME, pa.string()),
            constant_column(name, rows.num_rows),
        )
        WriteMarkers(self.storage, self.instant).create(relative, IOType.CREATE)
        crash_point("clustering.task.marked")
        stat = WriteStat(file_id=file_id, partition_path=partition, path=relative,
                         num_writes=rows.num_rows, num_inserts=rows.num_rows)  # fmt: skip
        size = write_base_file(self.storage, relative, rows, self.compression,
                               self.bloom_filter, self.indexing, stat)  # fmt: skip
        crash_point("clustering.task.written")
        stat.total_write_bytes = stat.file_size_in_bytes = size
        if self.indexing.record_index:  # the keys move to a new file group
            hand_over_keys(self.storage, self.instant, stat, rows.column(RECORD_KEY))
        return stat


# -- the service -------------------------------------------------------------------------------
class Clusterer:
    def __init__(
        self,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig | None = None,
        failed_writes: FailedWritesPolicy | None = None,
    ):
        if config is not None and config.index_type == BUCKET_INDEX:
            raise InvalidConfigError(
                f"table '{meta_client.name}' is written with the BUCKET index, whose file "
                "groups are its buckets: clustering would merge them (Apache Hudi clusters "
                "such tables with other strategies, which dbt-hoodie lacks)"
            )
        self.meta_client = meta_client
        self.options = ClusteringConfig.of(config)
        self.compression = str(config.compression if config else option_default("compression"))
        self.bloom_filter = config.bloom_filter if config else BloomFilterSpec()
        self.failed_writes = failed_writes or FailedWritesPolicy.of(meta_client.storage, config)

    def run(self, spark: SparkSession) -> list[WriteResult]:
        """Execute pending plans (oldest first; one another writer is executing is left to
        it), then schedule and execute a new one."""
        results: list[WriteResult] = []
        refuse_pending_restore(self.meta_client, "cluster")
        Rollback(self.meta_client).rollback_failed_writes(self.failed_writes)
        for instant in pending_clusterings(self.meta_client.storage, self.meta_client.timeline()):
            taken = Transaction.take_over(self.meta_client, self.failed_writes, instant)
            if taken is not None:
                results.append(self._execute(spark, taken))
        scheduled = self._schedule_locked()
        if scheduled is not None:
            results.append(self._execute(spark, scheduled))
        return results

    def schedule(self) -> str | None:
        """Write a plan of the small file groups; None when there is nothing to cluster."""
        refuse_pending_restore(self.meta_client, "schedule a clustering of")
        scheduled = self._schedule_locked()
        if scheduled is None:
            return None
        with scheduled.kept_pending():  # the caller executes it, or a later run takes it over
            return scheduled.instant_time

    def execute(self, spark: SparkSession, instant_time: str) -> WriteResult:
        """Execute the pending plan `instant_time` (a single writer's call)."""
        requested = requested_instant(self.meta_client.layout, instant_time)
        started_from = self.meta_client.timeline()
        return self._execute(
            spark, Transaction(self.meta_client, self.failed_writes, requested, started_from)
        )

    # -- schedule ------------------------------------------------------------------------------
    def _schedule_locked(self) -> Transaction | None:
        with self.failed_writes.exclusive():
            return self._schedule()

    def plan(self, timeline: Timeline) -> ClusteringPlan | None:
        """The size-based plan of the table as `timeline` has it; None: nothing to cluster."""
        storage = self.meta_client.storage
        busy = set(pending_compaction_file_groups(storage, timeline))
        busy |= set(pending_clustering_file_groups(storage, timeline))
        view = self.meta_client.file_system_view(
            timeline=timeline, metadata=self.failed_writes.metadata_table
        )
        by_partition: dict[str, list[tuple[int, SliceInfo, int]]] = {}
        for group in view.file_groups():
            latest = group.latest_slice
            if latest is None or (group.partition_path, group.file_id) in busy:
                continue
            base_size = latest.base_file.size if latest.base_file else 0
            if base_size >= self.options.small_file_limit:
                continue
            log_size = sum(lf.size for lf in latest.log_files)
            info = SliceInfo(
                group.partition_path,
                group.file_id,
                latest.base_file.relative_path if latest.base_file else None,
                tuple(lf.relative_path for lf in latest.log_files),
            )
            by_partition.setdefault(group.partition_path, []).append((base_size, info, log_size))
        single = self.options.single_group or bool(self.options.sort_columns)
        groups: list[ClusteringGroup] = []
        for partition in sorted(by_partition):
            candidates = sorted(by_partition[partition], key=lambda c: (-c[0], c[1].file_id))
            for packed in self._pack(candidates):
                if len(packed) > 1 or single:
                    groups.append(self._group(packed))
        groups = groups[: self.options.max_groups]
        if not groups:
            return None
        params = {}
        if self.options.sort_columns:
            params[SORT_COLUMNS_PARAM] = ",".join(self.options.sort_columns)
        return ClusteringPlan(groups, strategy_params=params)

    def _pack(
        self, candidates: list[tuple[int, SliceInfo, int]]
    ) -> Iterator[list[tuple[int, SliceInfo, int]]]:
        """Slices, largest first, into groups of at most `max_bytes_per_group` bytes."""
        current: list[tuple[int, SliceInfo, int]] = []
        size = 0
        for candidate in candidates:
            if current and size + candidate[0] > self.options.max_bytes_per_group:
                yield current
                current, size = [], 0
            current.append(candidate)
            size += candidate[0]
        if current:
            yield current

    def _group(self, packed: list[tuple[int, SliceInfo, int]]) -> ClusteringGroup:
        base = sum(c[0] for c in packed)
        logs = sum(c[2] for c in packed)
        outputs = max(1, math.ceil(base / self.options.target_file_max_bytes))
        return ClusteringGroup(
            tuple(c[1] for c in packed),
            outputs,
            {
                "TOTAL_LOG_FILES": float(sum(len(c[1].log_files) for c in packed)),
                "TOTAL_LOG_FILES_SIZE": float(logs),
                "TOTAL_IO_READ_MB": (base + logs) / _MB,
                "TOTAL_IO_WRITE_MB": base / _MB,
                "TOTAL_IO_MB": (2 * base + logs) / _MB,
            },
        )

    def _schedule(self) -> Transaction | None:
        timeline = self.meta_client.timeline()
        plans = pending_clusterings(self.meta_client.storage, timeline)
        pending_writes = [
            i.timestamp
            for i in timeline.pending
            if i.action in (Action.DELTA_COMMIT, Action.COMMIT)
            or (i.action is Action.REPLACE_COMMIT and i not in plans)
        ]
        if pending_writes:
            raise CommitError(
                f"cannot schedule a clustering of table '{self.meta_client.name}' while "
                f"write(s) {', '.join(pending_writes)} are pending; let them finish or roll "
                "them back"
            )
        plan = self.plan(timeline)
        if plan is None:
            return None
        layout = self.meta_client.layout
        action = requested_instant(layout, "0").action
        content = plan.to_avro(self.meta_client.storage, layout.version)
        transaction = Transaction.start(self.meta_client, self.failed_writes, action, content)
        crash_point("clustering.scheduled")
        log.info("scheduled clustering %s of %d group(s)", transaction.instant_time,
                 len(plan.groups))  # fmt: skip
        return transaction

    # -- execute -------------------------------------------------------------------------------
    def _execute(self, spark: SparkSession, transaction: Transaction) -> WriteResult:
        started = time.monotonic()
        instant_time = transaction.instant_time
        with transaction.kept_pending():
            storage = self.meta_client.storage
            plan = read_plan(storage, self.meta_client.layout, instant_time)
            timeline = self.meta_client.timeline()
            markers = WriteMarkers(storage, instant_time)
            markers.delete_marked_files()  # an earlier attempt's: this one starts from the plan
            transaction.inflight()
            with self._dropped_when_stale(transaction), transaction, \
                    self._back_to_plan_on_failure(instant_time):  # fmt: skip
                metadata = self._write(spark, instant_time, plan, timeline)
                markers.delete_strays(metadata)
                crash_point("clustering.files_written")
                transaction.commit(metadata, spark=spark,
                                   precommit=_plan_still_current(instant_time, plan))  # fmt: skip
        crash_point("clustering.completed")
        markers.delete_all()
        partitions = sorted({s.partition_path for s in metadata.write_stats()})
        result = WriteResult(instant_time, CLUSTER, metadata, time.monotonic() - started,
                             partitions)  # fmt: skip
        log.info("clustering %s: %d file group(s) into %d, %d records", instant_time,
                 len(plan.file_groups()), len(metadata.write_stats()),
                 metadata.total("num_writes"))  # fmt: skip
        return result

    @contextmanager
    def _dropped_when_stale(self, transaction: Transaction) -> Iterator[None]:
        """A plan a write overtook can never be executed without losing that write: once
        the attempt is undone (back to requested), the plan goes too, under the table lock,
        so that it neither keeps failing nor keeps writers out of its file groups."""
        try:
            yield
        except StaleClusteringPlanError:
            with self.failed_writes.exclusive():
                for instant in self.meta_client.timeline().pending:
                    if instant.timestamp == transaction.instant_time:
                        self.meta_client.delete_pending_instant(instant)
            log.warning("table '%s': clustering plan %s removed, a write changed its file "
                        "groups after it was made", self.meta_client.name,
                        transaction.instant_time)  # fmt: skip
            raise

    @contextmanager
    def _back_to_plan_on_failure(self, instant_time: str) -> Iterator[None]:
        try:
            yield
        except HoodieError:
            raise
        except BaseException as error:
            raise task_failure(
                error,
                f"clustering {instant_time} of table '{self.meta_client.name}' failed; its "
                "files were removed and the plan stays pending, to run again",
                self.meta_client.name,
                instant_time,
            ) from error

    def _write(
        self, spark: SparkSession, instant_time: str, plan: ClusteringPlan, timeline: Timeline
    ) -> CommitMetadata:
        crash_point("clustering.inflight")
        schema = self.meta_client.schema()
        if schema is None:
            raise HoodieError(f"table '{self.meta_client.name}' has no schema to cluster with")
        missing = [c for c in plan.sort_columns if c not in schema.names]
        if missing:
            raise InvalidConfigError(
                f"clustering {instant_time} of table '{self.meta_client.name}' sorts by "
                f"{', '.join(missing)}, which the table has no column of "
                f"({SORT_COLUMNS_PARAM}); its columns: {', '.join(schema.names)}"
            )
        spec = SliceReadSpec(
            storage=self.meta_client.storage,
            schema=with_meta_columns(schema),
            record_key_fields=self.meta_client.properties.record_key_fields,
            merge_mode=merge_mode_of(self.meta_client.properties),
            valid_instants=CommittedInstants.of(timeline),
        )
        written = FileSystemView(self.meta_client.storage, timeline).written_files
        logs = {lf for g in plan.groups for s in g.slices for lf in s.log_files}
        spans = {
            lf: tuple((w.instant, w.offset, w.end) for w in written.get(lf, ())) for lf in logs
        }
        indexing = file_indexing(self.meta_client, self.failed_writes.metadata_table,
                                 self.failed_writes.metadata_indexes)  # fmt: skip
        task = _ClusteringTask(
            self.meta_client.storage, instant_time, plan.groups, spec, plan.sort_columns,
            self.options.layout, self.compression, self.bloom_filter, spans, indexing,
        )  # fmt: skip
        indexes = spark.createDataFrame([(i,) for i in range(len(plan.groups))], "grp int")
        rows = (
            indexes.repartition(max(1, len(plan.groups))).mapInArrow(task, "stat string").collect()
        )
        replaced: dict[str, list[str]] = {}
        for partition, file_id in sorted(plan.file_groups()):
            replaced.setdefault(partition, []).append(file_id)
        metadata = CommitMetadata(
            operation_type=CLUSTER,
            partition_to_replace_file_ids=replaced,
            extra_metadata={"schema": to_avro_schema(schema, self.meta_client.name)},
        )
        for row in rows:
            metadata.add(WriteStat(**json.loads(row["stat"])))
        return metadata

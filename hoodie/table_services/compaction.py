"""Compaction: fold a merge-on-read table's log files into new base files.

Two steps, as in Hudi:
- *schedule*: the driver picks every latest file slice that has log files and records them in
  a plan, `<t>.compaction.requested`. From then on, writes to those file groups start the next
  slice (their log files name `t` as base instant), so the plan's set of files is frozen;
- *execute*: one Spark task per slice merges its base file and the plan's log files with the
  readers' rule (`hoodie.read.slice_reader`) and writes the result as the base file
  `<fileId>_<token>_<t>.parquet`; the driver completes the instant as `<t>.commit` with
  `compacted: true`. Readers switch to the new slices only then.

A pending plan is executed again from the start after a failure: files of an earlier attempt
are deleted first, so the result never depends on how many attempts there were.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from ..bloom_filter import BloomFilterSpec
from ..clustering_plan import pending_clustering_file_groups
from ..column_stats import FileIndexing
from ..compaction_plan import CompactionOperation, CompactionPlan, read_plan
from ..config import WriteConfig, option_default
from ..exceptions import CommitError, HoodieError, InvalidConfigError
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
    COMMIT_TIME,
    FILE_NAME,
    META_COLUMNS,
    constant_column,
    to_avro_schema,
    with_meta_columns,
)
from ..storage import FileIO
from ..timeline import Action, Instant, State, Timeline
from ..transaction.failed_writes import FailedWritesPolicy
from ..transaction.metadata_indexes import file_indexing
from ..transaction.rollback import Rollback
from ..transaction.transaction import Transaction
from ..write.cdc_writer import (
    CdcLogging,
    FileGroupChanges,
    change_records,
    image_schema,
    write_cdc_file,
)
from ..write.merge_handle import task_token, write_base_file
from ..write.result import WriteResult
from ..write.task_errors import task_failure
from .savepoint import refuse_pending_restore

log = logging.getLogger(__name__)
COMPACT = "COMPACT"
_MB = 1024 * 1024


def delta_commits_since_compaction(timeline: Timeline) -> int:
    """Completed delta commits after the latest compaction (completed or pending).

    This is Hudi's NUM_COMMITS trigger: compaction instants complete as `commit`, the only
    commits a merge-on-read table's timeline has besides replace commits.
    """
    return len(_delta_commits_since_compaction(timeline)[1])


def earliest_instant_to_retain_for_compaction(
    timeline: Timeline, max_delta_commits: int
) -> str | None:
    """The oldest instant archival must leave on a merge-on-read table's active timeline.

    The trigger above counts delta commits on the active timeline, so archiving the ones
    written since the latest compaction would hold compaction off for ever once
    `hoodie.keep.max.commits` is below `hoodie.compact.inline.max.delta.commits`. As Hudi's
    archiver, keep the latest compaction and the delta commits since, but no more of those
    than the trigger needs to count (with compaction off they would otherwise pile up).
    """
    compaction, deltas = _delta_commits_since_compaction(timeline)
    if len(deltas) >= max_delta_commits:
        return deltas[-max(max_delta_commits, 1)].timestamp
    return compaction or (deltas[0].timestamp if deltas else None)


def _delta_commits_since_compaction(timeline: Timeline) -> tuple[str | None, list[Instant]]:
    last = None
    for instant in timeline:
        if instant.action in (Action.COMMIT, Action.COMPACTION):
            last = instant.timestamp
    deltas = [
        i
        for i in timeline.completed
        if i.action is Action.DELTA_COMMIT and (last is None or i.timestamp > last)
    ]
    return last, deltas


@dataclass
class _CompactionTask:
    """Runs in Spark tasks: compacts the operations whose indexes arrive as rows."""

    storage: FileIO
    instant: str
    operations: list[CompactionOperation]
    spec: SliceReadSpec
    compression: str
    bloom_filter: BloomFilterSpec
    # The completed writes' blocks in each log file (relative path): a damaged block of a
    # completed delta commit stops the compaction rather than vanish into the new base file.
    log_writes: dict[str, tuple[BlockSpan, ...]] = field(default_factory=dict)
    indexing: FileIndexing = FileIndexing()  # what the metadata table's indexes get
    # The table's CDC logging: a compacted slice with a base file logs what the compaction
    # folded into it against that base file (Apache Hudi 1.x; 0.15 logs nothing, and the CDC
    # query skips compactions either way). None: off.
    cdc: CdcLogging | None = None

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            stats = [self.compact(self.operations[i]) for i in batch.column(0).to_pylist()]
            yield pa.RecordBatch.from_arrays(
                [pa.array([json.dumps(asdict(s)) for s in stats], pa.string())], names=["stat"]
            )

    def compact(self, op: CompactionOperation) -> WriteStat:
        logs = tuple(op.relative(name) for name in op.log_files)
        split = FileSplit(
            op.partition_path,
            op.file_id,
            op.relative(op.base_file) if op.base_file else None,
            logs,
            log_writes=tuple(self.log_writes.get(log, ()) for log in logs),
        )
        merged, log_records = merged_slice(self.spec, split)
        token = task_token()
        name = base_file_name(op.file_id, token, self.instant)
        relative = op.relative(name)
        merged = merged.set_column(
            META_COLUMNS.index(FILE_NAME),
            pa.field(FILE_NAME, pa.string()),
            constant_column(name, merged.num_rows),
        )
        # Stored order is by key, as the write handles leave it (readers prune by key range).
        merged = merged.sort_by([(META_COLUMNS[2], "ascending")])
        markers = WriteMarkers(self.storage, self.instant)
        markers.create(relative, IOType.MERGE if op.base_file else IOType.CREATE)
        crash_point("compaction.task.marked")
        indexed = WriteStat(file_id=op.file_id, partition_path=op.partition_path, path=relative)
        size = write_base_file(self.storage, relative, merged, self.compression,
                               self.bloom_filter, self.indexing, indexed)  # fmt: skip
        crash_point("compaction.task.written")
        from_logs = 0
        if merged.num_rows and op.base_file:
            from_logs = pc.sum(pc.greater(merged.column(COMMIT_TIME), op.base_instant)).as_py()
        elif merged.num_rows:
            from_logs = merged.num_rows
        log_sizes = sum(self.storage.size(op.relative(n)) for n in op.log_files)
        cdc_stats = None
        if self.cdc is not None and op.base_file:
            cdc_stats = self._write_cdc(op, token, merged, markers)
        return WriteStat(
            file_id=op.file_id,
            partition_path=op.partition_path,
            path=relative,
            prev_commit=op.base_instant,
            num_writes=merged.num_rows,
            num_update_writes=from_logs or 0,
            total_write_bytes=size,
            file_size_in_bytes=size,
            total_log_records=log_records,
            total_log_files_compacted=len(op.log_files),
            total_log_size_compacted=log_sizes,
            total_updated_records_compacted=from_logs or 0,
            column_ranges=indexed.column_ranges,
            cdc_stats=cdc_stats,
        )

    def _write_cdc(
        self, op: CompactionOperation, token: str, merged: pa.Table, markers: WriteMarkers
    ) -> dict[str, int]:
        """The `.cdc` file of a compacted slice: its rows that came from the logs (committed
        after the base file) as updates or inserts, the base file's rows it lost as deletes."""
        assert self.cdc is not None and op.base_file
        before = self.storage.read_parquet(op.relative(op.base_file))
        changed = (
            pc.greater(merged.column(COMMIT_TIME), op.base_instant)
            if merged.num_rows
            else pa.array([], pa.bool_())
        )
        changes = FileGroupChanges.between(before, merged, changed)
        records = change_records(self.cdc.mode, self.instant, image_schema(merged.schema),
                                 changes, before, merged)  # fmt: skip
        path, size = write_cdc_file(self.storage, markers, self.cdc, op.partition_path,
                                    op.file_id, token, self.instant, records,
                                    merged.schema)  # fmt: skip
        return {path: size}


class Compactor:
    def __init__(
        self,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig | None = None,
        failed_writes: FailedWritesPolicy | None = None,
    ):
        if not meta_client.merge_on_read:
            raise InvalidConfigError(
                f"table '{meta_client.name}' is {meta_client.properties.table_type}: only "
                "merge-on-read tables have log files to compact"
            )
        self.meta_client = meta_client
        self.compression = str(config.compression if config else option_default("compression"))
        # the base files' bloom filters: the write's options, or Apache Hudi's defaults
        self.bloom_filter = config.bloom_filter if config else BloomFilterSpec()
        # How the table is written (None: the defaults) says which pending instants are failed.
        self.failed_writes = failed_writes or FailedWritesPolicy.of(meta_client.storage, config)

    def run(self, spark: SparkSession, pending_only: bool = False) -> list[WriteResult]:
        """Execute pending plans (oldest first), then (unless `pending_only`, Apache Hudi's
        async compaction's run of scheduled plans) schedule and execute a new one.

        With concurrent writers, a pending plan another writer is executing (its heartbeat is
        live) is left to it; one whose executor failed is taken over.
        """
        results: list[WriteResult] = []
        refuse_pending_restore(self.meta_client, "compact")
        Rollback(self.meta_client).rollback_failed_writes(self.failed_writes)
        for instant in self.meta_client.timeline().pending:
            if instant.action is Action.COMPACTION:
                taken = Transaction.take_over(self.meta_client, self.failed_writes, instant)
                if taken is not None:
                    results.append(self._execute(spark, taken))
        if pending_only:
            return results
        scheduled = self._schedule_locked()
        if scheduled is not None:
            results.append(self._execute(spark, scheduled))
        return results

    def schedule(self) -> str | None:
        """Write a plan for every latest slice with log files; None when there is none.

        Refused while a write is pending: its log files could be in a slice the plan freezes,
        and changes it commits later would be left out of the compacted base file (Hudi's rule:
        a compaction's instant must precede no pending write).
        """
        refuse_pending_restore(self.meta_client, "schedule a compaction of")
        scheduled = self._schedule_locked()
        if scheduled is None:
            return None
        with scheduled.kept_pending():  # the caller executes it, or a later run takes it over
            return scheduled.instant_time

    def execute(self, spark: SparkSession, instant_time: str) -> WriteResult:
        """Execute the pending plan `instant_time` (a single writer's call)."""
        requested = Instant(instant_time, Action.COMPACTION, State.REQUESTED)
        started_from = self.meta_client.timeline()
        return self._execute(
            spark, Transaction(self.meta_client, self.failed_writes, requested, started_from)
        )

    def _schedule_locked(self) -> Transaction | None:
        """`_schedule`, with concurrent writers under the table lock (so that no write
        completes between the plan's view of the table and the plan), the plan's heartbeat
        beating from before the plan exists."""
        with self.failed_writes.exclusive():
            return self._schedule()

    def _schedule(self) -> Transaction | None:
        timeline = self.meta_client.timeline()
        pending_writes = [
            i.timestamp
            for i in timeline.pending
            if i.action in (Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT)
        ]
        if pending_writes:
            raise CommitError(
                f"cannot schedule a compaction of table '{self.meta_client.name}' while "
                f"write(s) {', '.join(pending_writes)} are pending; let them finish or roll "
                "them back"
            )
        # a group a pending clustering rewrites is left to it (Apache Hudi's rule too)
        in_plans = set(pending_clustering_file_groups(self.meta_client.storage, timeline))
        for instant in timeline.pending:
            if instant.action is Action.COMPACTION:
                in_plans |= read_plan(
                    self.meta_client.storage, self.meta_client.layout, instant.timestamp
                ).file_groups()
        view = self.meta_client.file_system_view(
            timeline=timeline, metadata=self.failed_writes.metadata_table
        )
        operations = []
        for group in view.file_groups():
            latest = group.latest_slice
            if latest is None or not latest.log_files:
                continue
            if (group.partition_path, group.file_id) in in_plans:
                continue
            log_bytes = sum(lf.size for lf in latest.log_files)
            base_bytes = latest.base_file.size if latest.base_file else 0
            operations.append(
                CompactionOperation(
                    partition_path=group.partition_path,
                    file_id=group.file_id,
                    base_instant=latest.base_instant,
                    base_file=latest.base_file.name if latest.base_file else None,
                    log_files=tuple(lf.name for lf in latest.log_files),
                    metrics={
                        "TOTAL_LOG_FILES": float(len(latest.log_files)),
                        "TOTAL_LOG_FILES_SIZE": float(log_bytes),
                        "TOTAL_IO_READ_MB": (base_bytes + log_bytes) / _MB,
                        "TOTAL_IO_WRITE_MB": base_bytes / _MB,
                        "TOTAL_IO_MB": (2 * base_bytes + log_bytes) / _MB,
                    },
                )
            )
        if not operations:
            return None
        transaction = Transaction.start(self.meta_client, self.failed_writes, Action.COMPACTION,
                                        CompactionPlan(operations).to_avro())  # fmt: skip
        crash_point("compaction.scheduled")
        log.info("scheduled compaction %s of %d file slice(s)", transaction.instant_time,
                 len(operations))  # fmt: skip
        return transaction

    def _execute(self, spark: SparkSession, transaction: Transaction) -> WriteResult:
        """Fold the plan's slices into new base files; a failure goes back to the plan."""
        started = time.monotonic()
        instant_time = transaction.instant_time
        # A plan that cannot be read, or an earlier attempt's files that cannot be removed,
        # leave the plan as it was; once inflight, a failure goes back to the plan.
        with transaction.kept_pending():
            plan = read_plan(self.meta_client.storage, self.meta_client.layout, instant_time)
            timeline = self.meta_client.timeline()
            markers = WriteMarkers(self.meta_client.storage, instant_time)
            markers.delete_marked_files()  # an earlier attempt's: this one starts from the plan
            transaction.inflight()
            with transaction, self._back_to_plan_on_failure(instant_time):
                metadata = self._write(spark, instant_time, plan, timeline)
                markers.delete_strays(metadata)
                crash_point("compaction.files_written")
                transaction.commit(metadata, check_conflicts_of=False)
        crash_point("compaction.completed")
        markers.delete_all()
        result = WriteResult(instant_time, COMPACT, metadata, time.monotonic() - started)
        log.info("compaction %s: %d file slice(s), %d records", instant_time,
                 len(plan.operations), metadata.total("num_writes"))  # fmt: skip
        return result

    @contextmanager
    def _back_to_plan_on_failure(self, instant_time: str) -> Iterator[None]:
        """A failed compaction's error, raised on to its transaction, which removes its files
        (the plan stays pending): the core's own errors as they are, any other as a
        `TaskFailedError`."""
        try:
            yield
        except HoodieError:
            raise
        except BaseException as error:
            raise task_failure(
                error,
                f"compaction {instant_time} of table '{self.meta_client.name}' failed; its "
                "files were removed and the plan stays pending, to run again",
                self.meta_client.name,
                instant_time,
            ) from error

    def _write(
        self, spark: SparkSession, instant_time: str, plan: CompactionPlan, timeline: Timeline
    ) -> CommitMetadata:
        crash_point("compaction.inflight")
        schema = self.meta_client.schema()
        if schema is None:
            raise HoodieError(f"table '{self.meta_client.name}' has no schema to compact with")
        spec = SliceReadSpec(
            storage=self.meta_client.storage,
            schema=with_meta_columns(schema),
            record_key_fields=self.meta_client.properties.record_key_fields,
            merge_mode=merge_mode_of(self.meta_client.properties),
            valid_instants=CommittedInstants.of(timeline),
        )
        written = FileSystemView(self.meta_client.storage, timeline).written_files
        logs = {op.relative(name) for op in plan.operations for name in op.log_files}
        spans = {
            log: tuple((w.instant, w.offset, w.end) for w in written.get(log, ())) for log in logs
        }
        indexing = file_indexing(self.meta_client, self.failed_writes.metadata_table,
                                 self.failed_writes.metadata_indexes)  # fmt: skip
        task = _CompactionTask(
            self.meta_client.storage, instant_time, plan.operations, spec, self.compression,
            self.bloom_filter, spans, indexing, CdcLogging.of(self.meta_client.properties),
        )  # fmt: skip
        indexes = spark.createDataFrame(
            [(i,) for i in range(len(plan.operations))], "operation int"
        )
        rows = (
            indexes.repartition(max(1, len(plan.operations)))
            .mapInArrow(task, "stat string")
            .collect()
        )
        metadata = CommitMetadata(
            operation_type=COMPACT,
            compacted=True,
            extra_metadata={"schema": to_avro_schema(schema, self.meta_client.name)},
        )
        for row in rows:
            metadata.add(WriteStat(**json.loads(row["stat"])))
        return metadata

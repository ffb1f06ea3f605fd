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
from dataclasses import asdict, dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..config import WriteConfig
from ..exceptions import CommitError, HoodieError, InvalidConfigError
from ..faults import crash_point
from ..fs_view import CommittedInstants, FileSystemView
from ..markers import IOType, WriteMarkers
from ..metadata import CommitMetadata, WriteStat
from ..naming import base_file_name
from ..properties import MERGE_ON_READ
from ..read.planner import FileSplit
from ..read.slice_reader import SliceReadSpec, merged_slice
from ..schema import COMMIT_TIME, FILE_NAME, META_COLUMNS, to_avro_schema, with_meta_columns
from ..storage import Storage
from ..table import HoodieTable
from ..timeline import Action, Instant, State, Timeline
from ..transaction.failed_writes import FailedWritesPolicy
from ..write.merge_handle import task_token, write_base_file
from .compaction_plan import CompactionOperation, CompactionPlan, read_plan
from .rollback import Rollback
from .savepoint import refuse_pending_restore

log = logging.getLogger(__name__)
COMPACT = "COMPACT"
_MB = 1024 * 1024


def delta_commits_since_compaction(timeline: Timeline) -> int:
    """Completed delta commits after the latest compaction (completed or pending).

    This is Hudi's NUM_COMMITS trigger: compaction instants complete as `commit`, the only
    commits a merge-on-read table's timeline has besides replace commits.
    """
    last = None
    for instant in timeline:
        if instant.action in (Action.COMMIT, Action.COMPACTION):
            last = instant.timestamp
    return sum(
        1
        for i in timeline.completed
        if i.action is Action.DELTA_COMMIT and (last is None or i.timestamp > last)
    )


@dataclass
class _CompactionTask:
    """Runs in Spark tasks: compacts the operations whose indexes arrive as rows."""

    storage: Storage
    instant: str
    operations: list[CompactionOperation]
    spec: SliceReadSpec
    compression: str

    def __call__(self, batches):
        for batch in batches:
            stats = [self.compact(self.operations[i]) for i in batch.column(0).to_pylist()]
            yield pa.RecordBatch.from_arrays(
                [pa.array([json.dumps(asdict(s)) for s in stats], pa.string())], names=["stat"]
            )

    def compact(self, op: CompactionOperation) -> WriteStat:
        split = FileSplit(
            op.partition_path,
            op.file_id,
            op.relative(op.base_file) if op.base_file else None,
            tuple(op.relative(name) for name in op.log_files),
        )
        merged, log_records = merged_slice(self.spec, split)
        name = base_file_name(op.file_id, task_token(), self.instant)
        relative = op.relative(name)
        merged = merged.set_column(
            META_COLUMNS.index(FILE_NAME),
            pa.field(FILE_NAME, pa.string()),
            pa.array([name] * merged.num_rows, pa.string()),
        )
        # Stored order is by key, as the write handles leave it (readers prune by key range).
        merged = merged.sort_by([(META_COLUMNS[2], "ascending")])
        markers = WriteMarkers(self.storage, self.instant)
        markers.create(relative, IOType.MERGE if op.base_file else IOType.CREATE)
        crash_point("compaction.task.marked")
        size = write_base_file(self.storage, relative, merged, self.compression)
        crash_point("compaction.task.written")
        from_logs = 0
        if merged.num_rows and op.base_file:
            from_logs = pc.sum(pc.greater(merged.column(COMMIT_TIME), op.base_instant)).as_py()
        elif merged.num_rows:
            from_logs = merged.num_rows
        log_sizes = sum(self.storage.size(op.relative(n)) for n in op.log_files)
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
        )


class Compactor:
    def __init__(self, table: HoodieTable, config: WriteConfig | None = None, lock_provider=None):
        if table.properties.table_type != MERGE_ON_READ:
            raise InvalidConfigError(
                f"table '{table.name}' is {table.properties.table_type}: only merge-on-read "
                "tables have log files to compact"
            )
        self.table = table
        self.compression = config.compression if config is not None else "snappy"
        # How the table is written (None: one writer) says which pending instants are failed.
        self.failed_writes = FailedWritesPolicy.of(table.storage, config, lock_provider)

    def run(self, spark) -> list:
        """Execute pending plans (oldest first), then schedule and execute a new one.

        With concurrent writers, a pending plan another writer is executing (its heartbeat is
        live) is left to it; one whose executor failed is taken over.
        """
        from ..write.client import WriteResult

        results: list[WriteResult] = []
        refuse_pending_restore(self.table, "compact")
        Rollback(self.table).rollback_failed_writes(self.failed_writes)
        for instant in self.table.timeline().pending:
            if instant.action is Action.COMPACTION:
                taken, heartbeat = self._take_over(instant.timestamp)
                if taken:
                    results.append(self._execute_beating(spark, instant.timestamp, heartbeat))
        scheduled, heartbeat = self._schedule_beating()
        if scheduled is not None:
            results.append(self._execute_beating(spark, scheduled, heartbeat))
        return results

    def _take_over(self, instant_time: str):
        """Whether to execute a pending plan (it is abandoned, and still pending), and the
        heartbeat to execute it with (a single writer needs none)."""
        policy = self.failed_writes
        if not policy.has_failed(instant_time):
            return False, None
        with policy.exclusive():
            still = any(i.timestamp == instant_time and i.action is Action.COMPACTION
                        for i in self.table.timeline().pending)  # fmt: skip
            if not still or not policy.has_failed(instant_time):
                return False, None
            return True, policy.take_over(instant_time)

    def _schedule_beating(self):
        """`schedule`, with concurrent writers under the table lock (so that no write completes
        between the plan's view of the table and the plan) and with the plan's heartbeat
        beating from before the plan exists."""
        with self.failed_writes.exclusive():
            return self._schedule()

    def _execute_beating(self, spark, instant_time: str, heartbeat):
        try:
            return self.execute(spark, instant_time)
        finally:
            if heartbeat is not None:
                heartbeat.stop()

    def schedule(self) -> str | None:
        """Write a plan for every latest slice with log files; None when there is none.

        Refused while a write is pending: its log files could be in a slice the plan freezes,
        and changes it commits later would be left out of the compacted base file (Hudi's rule:
        a compaction's instant must precede no pending write).
        """
        refuse_pending_restore(self.table, "schedule a compaction of")
        scheduled, heartbeat = self._schedule_beating()
        if heartbeat is not None:
            heartbeat.stop()  # the caller executes the plan, or a later run takes it over
        return scheduled

    def _schedule(self):
        timeline = self.table.timeline()
        pending_writes = [
            i.timestamp
            for i in timeline.pending
            if i.action in (Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT)
        ]
        if pending_writes:
            raise CommitError(
                f"cannot schedule a compaction of table '{self.table.name}' while write(s) "
                f"{', '.join(pending_writes)} are pending; let them finish or roll them back"
            )
        in_plans = set()
        for instant in timeline.pending:
            if instant.action is Action.COMPACTION:
                in_plans |= read_plan(self.table.storage, instant.timestamp).file_groups()
        view = FileSystemView(self.table.storage, timeline)
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
            return None, None
        instant, heartbeat = self.failed_writes.start_instant(
            self.table, Action.COMPACTION, CompactionPlan(operations).to_avro()
        )
        crash_point("compaction.scheduled")
        log.info("scheduled compaction %s of %d file slice(s)", instant.timestamp, len(operations))
        return instant.timestamp, heartbeat

    def execute(self, spark, instant_time: str):
        from ..write.client import WriteResult

        started = time.monotonic()
        plan = read_plan(self.table.storage, instant_time)
        instant = Instant(instant_time, Action.COMPACTION, State.INFLIGHT)
        timeline = self.table.timeline()
        self._remove_earlier_attempt(instant_time)
        self.table.save_instant(instant)
        try:
            crash_point("compaction.inflight")
            schema = self.table.schema()
            if schema is None:
                raise HoodieError(f"table '{self.table.name}' has no schema to compact with")
            spec = SliceReadSpec(
                storage=self.table.storage,
                schema=with_meta_columns(schema),
                record_key_fields=self.table.properties.record_key_fields,
                ordering_field=self.table.properties.precombine_field,
                valid_instants=CommittedInstants.of(timeline),
            )
            task = _CompactionTask(
                self.table.storage, instant_time, plan.operations, spec, self.compression
            )
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
                extra_metadata={"schema": to_avro_schema(schema, self.table.name)},
            )
            for row in rows:
                metadata.add(WriteStat(**json.loads(row["stat"])))
            self._delete_strays(instant_time, metadata)
            crash_point("compaction.files_written")
            self.table.save_instant(
                instant.with_state(State.COMPLETED), metadata.to_json().encode()
            )
        except BaseException as error:
            self._undo(instant_time)
            if isinstance(error, HoodieError):
                raise
            raise CommitError(
                f"compaction {instant_time} of table '{self.table.name}' failed; its files were "
                f"removed and the plan stays pending, to run again: {error}"
            ) from error
        crash_point("compaction.completed")
        WriteMarkers(self.table.storage, instant_time).delete_all()
        result = WriteResult(instant_time, COMPACT, metadata, time.monotonic() - started)
        log.info(
            "compaction %s: %d file slice(s), %d records",
            instant_time,
            len(plan.operations),
            metadata.total("num_writes"),
        )
        return result

    # -- files ---------------------------------------------------------------------------------
    def _remove_earlier_attempt(self, instant_time: str) -> None:
        """A crashed or failed attempt's files: the next attempt starts from the plan alone."""
        markers = WriteMarkers(self.table.storage, instant_time)
        for marker in markers.all():
            self.table.storage.delete(marker.data_file)
        markers.delete_all()

    def _delete_strays(self, instant_time: str, metadata: CommitMetadata) -> None:
        named = {s.path for s in metadata.write_stats()}
        for marker in WriteMarkers(self.table.storage, instant_time).all():
            if marker.data_file not in named:
                self.table.storage.delete(marker.data_file)

    def _undo(self, instant_time: str) -> None:
        """Back to requested: the plan stays, the attempt's files and inflight state go."""
        try:
            self._remove_earlier_attempt(instant_time)
            inflight = Instant(instant_time, Action.COMPACTION, State.INFLIGHT)
            self.table.delete_instant(inflight, (State.INFLIGHT,))
        except Exception:  # pragma: no cover - best effort
            log.exception("could not undo failed compaction %s", instant_time)

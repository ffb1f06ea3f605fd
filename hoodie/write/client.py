"""The write client: one upsert, from a Spark DataFrame to a completed instant.

Hudi's three steps, with the driver only planning and committing:
1. prepare: compute each record's key and partition path (Spark columns), refuse null keys;
2. tag: the index finds the file group already holding each key (a Spark join);
3. write: a planner packs inserts into small or new file groups, then one Spark task per file
   group writes its new version; the driver collects their write stats and completes the
   instant. Until that last file rename, readers see the previous snapshot.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from ..config import BUCKET_INDEX, WriteConfig
from ..exceptions import (
    CommitError,
    HoodieError,
    InvalidConfigError,
    NullRecordKeyError,
)
from ..faults import crash_point
from ..fs_view import FileSlice, FileSystemView
from ..index.bucket import BUCKET, BucketCount, BucketIndex
from ..index.simple import LOCATION, KeySource, tag_location
from ..keygen import KeyGenerator
from ..markers import WriteMarkers
from ..metadata import CommitMetadata, WriteStat
from ..naming import (
    is_partition_metadata,
    parse_base_file_name,
    parse_log_file_name,
)
from ..properties import COPY_ON_WRITE, MERGE_ON_READ, TableProperties
from ..schema import (
    IS_DELETED,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
    data_schema,
    normalize_schema,
    to_avro_schema,
)
from ..schema_evolution import writer_schema
from ..table import HoodieTable
from ..table_services.compaction_plan import pending_compaction_file_groups
from ..table_services.rollback import Rollback
from ..table_services.savepoint import refuse_pending_restore
from ..timeline import Action, Instant, State, Timeline
from ..transaction.conflicts import check_conflicts, file_groups_of
from ..transaction.failed_writes import FailedWritesPolicy
from ..transaction.heartbeat import Heartbeat
from ..transaction.lock import LockProvider, table_lock
from .append_handle import AppendHandle
from .bucket_writer import BucketWriter
from .merge_handle import (
    STAT_SCHEMA,
    TARGET,
    CopyOnWriteHandle,
    FileGroupTarget,
    group_key,
    write_partition_metadata,
)
from .planner import WorkloadProfile, next_version, plan_inserts
from .validation import check_batch, missing_key_text

# Recorded in each commit's extra metadata: which index placed the records (and, for the
# BUCKET index, into how many buckets per partition).
INDEX_TYPE_KEY = "hoodie.index.type"
BUCKET_COUNT_KEY = "hoodie.bucket.index.num.buckets"
log = logging.getLogger(__name__)
INSERT_OVERWRITE_TABLE = "INSERT_OVERWRITE_TABLE"
_BUCKET_POINT = "__hoodie_bucket_point"
_HASH_RANGE = 2_147_483_647
_MATERIALIZATION = {COPY_ON_WRITE: "cow_upsert", MERGE_ON_READ: "mor_upsert"}


@dataclass
class WriteResult:
    """What a completed write did, for logs, dbt's run results and tests."""

    instant: str
    operation: str
    metadata: CommitMetadata
    seconds: float
    partitions: list[str] = field(default_factory=list)
    compactions: list[WriteResult] = field(default_factory=list)  # inline, after the write

    @property
    def num_inserts(self) -> int:
        return self.metadata.total("num_inserts")

    @property
    def num_updates(self) -> int:
        return self.metadata.total("num_update_writes")

    @property
    def num_deletes(self) -> int:
        return self.metadata.total("num_deletes")

    @property
    def files_written(self) -> int:
        return len(self.metadata.write_stats())

    @property
    def bytes_written(self) -> int:
        return self.metadata.total("total_write_bytes")

    def summary(self) -> str:
        text = (
            f"{self.operation.lower()} {self.instant}: {self.num_inserts} inserted, "
            f"{self.num_updates} updated, {self.num_deletes} deleted in "
            f"{self.files_written} file(s)"
        )
        for compaction in self.compactions:
            text += (
                f"; compaction {compaction.instant} rewrote {compaction.files_written} "
                "file group(s)"
            )
        return text


def table_properties_for(config: WriteConfig) -> TableProperties:
    keygen = KeyGenerator(config.record_key_fields, config.partition_fields)
    return TableProperties(
        name=config.table_name,
        table_type=config.table_type,
        record_key_fields=config.record_key_fields,
        partition_fields=config.partition_fields,
        precombine_field=config.precombine_field,
        key_generator_class=keygen.class_name,
        hive_style_partitioning=config.hive_style_partitioning,
        url_encode_partition_path=config.url_encode_partition_path,
        database=config.database,
        extra={
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.compaction.payload.class": "org.apache.hudi.common.model."
            + (
                "DefaultHoodieRecordPayload"
                if config.precombine_field
                else "OverwriteWithLatestAvroPayload"
            ),
        },  # fmt: skip
    )


@dataclass
class _WritePlan:
    """What tagging and planning decided before any data file is written."""

    partitions: list[str]  # the batch's partitions
    tagged: DataFrame | None  # the batch with each record's file group (LOCATION)
    profile: WorkloadProfile
    buckets: list  # insert buckets of SIMPLE planning
    targets: dict[str, FileGroupTarget]  # file id -> where its new version goes
    replaced: dict[str, list[str]]  # insert overwrite: partition -> file ids taken out

    def inflight_metadata(self, operation: str) -> CommitMetadata:
        """The `.inflight` file's content: the file groups the write is about to touch."""
        overwrite = operation == INSERT_OVERWRITE_TABLE
        planned = CommitMetadata(
            operation_type=operation,
            partition_to_replace_file_ids=self.replaced if overwrite else None,
        )
        for target in self.targets.values():
            planned.add(WriteStat(target.file_id, target.partition_path, None,
                                  prev_commit=target.previous_instant or "null"))  # fmt: skip
        return planned


class WriteClient:
    def __init__(
        self, table: HoodieTable, config: WriteConfig, lock_provider: LockProvider | None = None
    ):
        self.table = table
        self.config = config
        self.lock_provider = lock_provider  # default: the file-system lock
        # Which pending writes (of other writers too) have failed and may be rolled back.
        self.failed_writes = FailedWritesPolicy.of(table.storage, config, lock_provider)
        self._check_matches_table()
        self.keygen = KeyGenerator(
            config.record_key_fields,
            config.partition_fields,
            hive_style_partitioning=table.properties.hive_style_partitioning,
            url_encode=table.properties.url_encode_partition_path,
        )

    def _check_matches_table(self) -> None:
        """A write must agree with the table's identity: keys and partitioning never change."""
        props, cfg = self.table.properties, self.config
        pairs = [
            ("record_key", props.record_key_fields, cfg.record_key_fields),
            ("partition_path", props.partition_fields, cfg.partition_fields),
            ("precombine_field", props.precombine_field, cfg.precombine_field),
        ]
        for name, stored, wanted in pairs:
            if stored != wanted:
                raise InvalidConfigError(
                    f"table '{props.name}' at {self.table.base_uri} was created with "
                    f"{name}={_show(stored)}, but this write asks for {name}={_show(wanted)}. "
                    "A table's keys cannot change: restore the setting, or rebuild the table "
                    "(dbt: --full-refresh)"
                )
        if props.table_type != cfg.table_type:
            raise InvalidConfigError(
                f"table '{props.name}' at {self.table.base_uri} is {props.table_type}, but this "
                f"write asks for {cfg.table_type} (dbt: materialized="
                f"'{_MATERIALIZATION[cfg.table_type]}'). A table's type cannot change: use "
                f"'{_MATERIALIZATION[props.table_type]}', or rebuild the table "
                "(dbt: --full-refresh)"
            )
        if cfg.hive_style_partitioning != props.hive_style_partitioning:
            raise InvalidConfigError(
                f"table '{props.name}' was created with hive_style_partitioning="
                f"{str(props.hive_style_partitioning).lower()}; it cannot change"
            )

    # -- public operations ---------------------------------------------------------------------
    def upsert(self, df: DataFrame) -> WriteResult:
        return self._write(df, operation="UPSERT")

    def delete(self, df: DataFrame) -> WriteResult:
        return self._write(df.withColumn(IS_DELETED, F.lit(True)), operation="DELETE")

    def insert_overwrite_table(self, df: DataFrame) -> WriteResult:
        """Replace the table's contents with `df` in one replace commit.

        Every current file group is listed as replaced and the rows go to new file groups, so
        readers switch from the old contents to the new at the commit, and time travel to
        earlier instants still finds the old files (until cleaning removes them).
        """
        return self._write(df, operation=INSERT_OVERWRITE_TABLE)

    # -- the pipeline --------------------------------------------------------------------------
    @property
    def merge_on_read(self) -> bool:
        return self.table.properties.table_type == MERGE_ON_READ

    def _write(self, df: DataFrame, operation: str) -> WriteResult:
        started = time.monotonic()
        refuse_pending_restore(self.table, "write to")
        spark = df.sparkSession
        schema = self._writer_schema(df, operation)
        # Columns the writer schema leaves out (on_schema_change='ignore') go no further.
        left_out = [c for c in df.columns if c not in schema.names
                    and c != IS_DELETED and c not in META_COLUMNS]  # fmt: skip
        if left_out and operation != "DELETE":
            df = df.drop(*left_out)
        overwrite = operation == INSERT_OVERWRITE_TABLE
        # Writes that crashed before completing are rolled back first (with concurrent writers,
        # only those whose heartbeat stopped).
        Rollback(self.table).rollback_failed_writes(self.failed_writes)
        if overwrite:
            action = Action.REPLACE_COMMIT
        else:
            action = Action.DELTA_COMMIT if self.merge_on_read else Action.COMMIT
        prepared = self._prepare(df)
        if self._bucket_index is not None:
            prepared = prepared.withColumn(BUCKET, self._bucket_index.bucket_column())
        one_job = self._bucket_index is not None and self.merge_on_read and not overwrite
        if one_job:
            prepared = prepared.withColumn(RECORD_KEY, self._key_or_error())
        if not one_job:
            # Planning and writing both read the batch: cache it, so that model SQL that is not
            # deterministic is computed once, and the key and bucket hash only once.
            prepared = prepared.persist()
        if self._bucket_index is not None and not overwrite:
            self._refuse_changed_bucket_count(self.table.timeline())
        timeline, instant, heartbeat = self._start_instant(action)
        plan: _WritePlan | None = None
        try:
            crash_point("write.requested")
            pending = pending_compaction_file_groups(self.table.storage, timeline)
            if one_job:
                planned = CommitMetadata(operation_type=operation)
            else:
                plan = self._tag_and_plan(spark, prepared, timeline, operation, pending)
                crash_point("write.tagged")
                planned = plan.inflight_metadata(operation)
            instant = self.table.save_instant(
                instant.with_state(State.INFLIGHT), planned.to_json().encode()
            )
            crash_point("write.inflight")
            if one_job:
                stats = self._write_buckets(prepared, timeline, pending, instant.timestamp,
                                            schema, operation)  # fmt: skip
                partitions = sorted({s.partition_path for s in stats})
            else:
                self._write_partition_metadata(instant.timestamp, plan.profile.partitions)
                crash_point("write.partition_metadata")
                stats = self._write_file_groups(
                    plan.tagged, plan.buckets, plan.targets, instant.timestamp, schema, operation
                )
                partitions = plan.partitions
            metadata = CommitMetadata(
                operation_type=operation,
                extra_metadata={
                    "schema": to_avro_schema(schema, self.table.name),
                    INDEX_TYPE_KEY: self.config.index_type,
                    **(
                        {BUCKET_COUNT_KEY: str(self.config.bucket_count)}
                        if self._bucket_index is not None
                        else {}
                    ),
                },
                partition_to_replace_file_ids=plan.replaced if overwrite else None,
            )
            for stat in stats:
                metadata.add(stat)
            crash_point("write.files_written")
            self._finalize(instant.timestamp, metadata)
            crash_point("write.finalized")
            self._complete(instant, metadata, timeline)
        except BaseException as error:
            self._abort(instant)
            if isinstance(error, HoodieError):
                raise
            unwrapped = _hoodie_error_in(error)
            if unwrapped is not None:
                raise unwrapped from error
            raise CommitError(
                f"write {instant.timestamp} to table '{self.table.name}' failed and was undone "
                f"(readers still see the previous snapshot): {error}"
            ) from error
        finally:
            prepared.unpersist()
            if plan is not None and plan.tagged is not None:
                plan.tagged.unpersist()
            if heartbeat is not None:
                heartbeat.stop()
        result = WriteResult(
            instant.timestamp, operation, metadata, time.monotonic() - started, partitions
        )
        crash_point("write.completed")
        WriteMarkers(self.table.storage, instant.timestamp).delete_all()
        log.info("%s", result.summary())
        if self.merge_on_read and not overwrite and self.config.inline_compaction:
            result.compactions = self._compact_inline(spark)
        if self.config.auto_clean:
            self._clean()
        if self.config.auto_archive:
            self._archive()
        return result

    def _tag_and_plan(self, spark, prepared, timeline, operation, pending) -> _WritePlan:
        """Steps 1 and 2 and the planning of step 3: check the batch, tag it, and decide
        which file group each record's new version goes to."""
        overwrite = operation == INSERT_OVERWRITE_TABLE
        delete_operation = operation == "DELETE"
        bucket_counts = self._bucket_index is not None
        partitions, incoming_rows, counts = self._check_keys_and_partitions(prepared, bucket_counts)
        view = FileSystemView(self.table.storage, timeline)
        replaced: dict[str, list[str]] = {}
        slices: list[FileSlice] = []
        if overwrite:
            for group in view.file_groups():
                replaced.setdefault(group.partition_path, []).append(group.file_id)
        else:
            groups = view.file_groups(self._existing(partitions))
            slices = [g.latest_slice for g in groups if g.latest_slice is not None]
        if bucket_counts:
            tagged, profile = self._tag_by_bucket(prepared, counts, slices, delete_operation)
            buckets, targets = [], self._bucket_targets(profile, slices, pending)
        else:
            tagged, profile = self._tag_by_key_scan(
                spark, prepared, slices, timeline, view, incoming_rows, delete_operation
            )
            buckets, targets = self._plan(profile, slices, partitions, pending)
        return _WritePlan(partitions, tagged, profile, buckets, targets, replaced)

    def _archive(self) -> None:
        """Hudi's archiving after a commit keeps the active timeline short; like cleaning, a
        failure is logged, not raised: the commit is complete."""
        from ..table_services.archival import archive

        config = self.config
        args = (config.keep_min_commits, config.keep_max_commits, config.archive_beyond_savepoint)
        try:
            if self.optimistic:
                with self._lock():
                    archive(self.table, *args)
            else:
                archive(self.table, *args)
        except HoodieError as error:
            log.warning("archiving the timeline of table '%s' failed: %s", self.table.name, error)

    def _clean(self) -> None:
        """Hudi's automatic clean after a commit; like inline compaction, it cannot fail the
        write: a failed clean leaves its plan pending for the next one."""
        from ..table_services.clean import Cleaner

        try:
            if self.optimistic:
                with self._lock():  # one cleaner at a time among concurrent writers
                    Cleaner(self.table, clean_config(self.config)).run()
            else:
                Cleaner(self.table, clean_config(self.config)).run()
        except HoodieError as error:
            log.warning("cleaning table '%s' failed: %s", self.table.name, error)

    @property
    def optimistic(self) -> bool:
        return self.config.concurrency_mode == "optimistic_concurrency_control"

    def _tag_by_key_scan(
        self, spark, prepared, slices, timeline, view, incoming_rows, delete_operation
    ):
        """SIMPLE index: join the batch's keys with the keys stored in the touched slices."""
        parallelism = self.config.parallelism or spark.conf.get(
            "spark.sql.shuffle.partitions", "200"
        )
        logged_inserts = self._groups_with_inserts_in_logs(timeline) if slices else set()
        sources = [
            KeySource.of(
                s,
                with_logs=self.merge_on_read
                and (s.base_file is None or (s.partition_path, s.file_id) in logged_inserts),
            )
            for s in slices
        ]
        tagged = tag_location(
            spark,
            prepared,
            self.table.storage,
            sources,
            view.committed,
            int(parallelism),
            incoming_rows,
        )
        if delete_operation:
            # A delete of a key the table does not hold has nothing to do. (In an upsert such
            # a delete stays: it may be the batch's latest version of a key that another of
            # its rows would insert; the write task combines them and writes neither.)
            tagged = tagged.filter(F.col(LOCATION).isNotNull())
        if not sources:
            return tagged, self._profile(tagged)  # nothing stored: `prepared` is the cache
        # Tagging joined in stored keys: cache its result, which replaces the input's.
        tagged = tagged.persist()
        profile = self._profile(tagged)
        prepared.unpersist()
        return tagged, profile

    @property
    def _bucket_index(self) -> BucketIndex | None:
        if self.config.index_type != BUCKET_INDEX:
            return None
        fields = self.config.bucket_hash_fields or self.config.record_key_fields
        return BucketIndex(self.config.bucket_count, fields)

    def _refuse_changed_bucket_count(self, timeline: Timeline) -> None:
        """A bucket count different from the one the table was written with would send keys
        to other buckets than their stored versions (duplicates after more buckets): refused,
        using the count the latest bucket-index commit recorded. (Fewer buckets than the
        table has are also caught by the file group checks, for tables other writers made.)"""
        for done in reversed(timeline.completed.write_timeline.instants):
            extra = self.table.commit_metadata(done).extra_metadata or {}
            if extra.get(INDEX_TYPE_KEY) != BUCKET_INDEX or BUCKET_COUNT_KEY not in extra:
                continue
            stored = int(extra[BUCKET_COUNT_KEY])
            if stored != self.config.bucket_count:
                raise InvalidConfigError(
                    f"table '{self.table.name}' was written with {BUCKET_COUNT_KEY}={stored} "
                    f"(commit {done.timestamp}), but this write asks for "
                    f"{self.config.bucket_count}: the bucket count cannot change after the "
                    f"table is created; set it back to {stored}, or rebuild the table with "
                    "--full-refresh"
                )
            return

    def _tag_by_bucket(self, prepared, counts, slices, delete_operation):
        """BUCKET index: every record's location is its bucket's file group, new or not."""
        tagged, counts = self._bucket_index.tag(
            prepared, counts, slices, self.table.name, LOCATION, delete_operation
        )
        profile = WorkloadProfile()
        for (partition, file_id), count in counts.items():
            profile.add(partition, file_id, count)
        return tagged, profile

    def _bucket_targets(self, profile, slices, pending_compactions):
        """Each bucket's file group takes all its records: a new base file for a new bucket;
        otherwise a new base file version (copy-on-write) or a log file (merge-on-read: new
        keys included, since the writer never learns whether a key is stored)."""
        by_group = {(s.partition_path, s.file_id): s for s in slices}
        targets: dict[str, FileGroupTarget] = {}
        for partition, groups in profile.updates.items():
            for file_id in groups:
                file_slice = by_group.get((partition, file_id))
                if file_slice is None:
                    targets[file_id] = FileGroupTarget(partition, file_id, None, None)
                else:
                    targets[file_id] = self._next_version(file_slice, pending_compactions)
        return targets

    def _next_version(self, file_slice: FileSlice, pending_compactions) -> FileGroupTarget:
        key = (file_slice.partition_path, file_slice.file_id)
        return next_version(file_slice, pending_compactions.get(key), self.merge_on_read)

    def _groups_with_inserts_in_logs(self, timeline: Timeline) -> set[tuple[str, str]]:
        """File groups where some delta commit put new keys into a log file.

        Only there (and in slices without a base file) can a key live in a log file alone:
        this writer sends inserts to base files, as Hudi does unless its index can see log
        files. Everywhere else the base file already holds every key, so tagging skips the
        logs, which would otherwise make each delta commit's tagging slower than the last.
        """
        if not self.merge_on_read:
            return set()
        groups = set()
        for instant in timeline.completed:
            if instant.action is not Action.DELTA_COMMIT:
                continue
            metadata = self.table.commit_metadata(instant)
            # A bucket-index write sends new keys to logs without counting them as inserts.
            by_bucket = (metadata.extra_metadata or {}).get(INDEX_TYPE_KEY) == BUCKET_INDEX
            for stat in metadata.write_stats():
                is_log = stat.path and parse_log_file_name(posixpath.basename(stat.path))
                if is_log and (stat.num_inserts or by_bucket):
                    groups.add((stat.partition_path, stat.file_id))
        return groups

    def _start_instant(self, action: Action) -> tuple[Timeline, Instant, Heartbeat | None]:
        """A new requested instant (and its heartbeat), and the timeline it starts from."""
        timeline = self.table.timeline()
        instant, heartbeat = self.failed_writes.start_instant(self.table, action)
        return timeline, instant, heartbeat

    def _complete(self, instant: Instant, metadata: CommitMetadata, started: Timeline) -> None:
        """Complete the instant; with concurrent writers, under the lock and after checking
        that no writer committed to the same file groups since this one started."""
        done = instant.with_state(State.COMPLETED)
        if not self.optimistic:
            self.table.save_instant(done, metadata.to_json().encode())
            return
        with self._lock():
            self._refuse_if_rolled_back(instant)
            check_conflicts(self.table, instant.timestamp, started, file_groups_of(metadata))
            crash_point("commit.conflicts_checked")
            self.table.save_instant(done, metadata.to_json().encode())
            crash_point("commit.completed_under_lock")

    def _refuse_if_rolled_back(self, instant: Instant) -> None:
        """Another writer rolls back a write whose heartbeat stopped (a stalled process); if it
        did so to this one, completing it would name files that are gone. (Rollbacks of other
        writers' instants hold the lock too, so this check cannot race one.)"""
        timeline, rollback = self.table.timeline(), Rollback(self.table)
        pending = [i for i in timeline.pending if i.timestamp == instant.timestamp]
        if not pending or any(
            rollback.target_of(i) == instant.timestamp
            for i in timeline.pending
            if i.action is Action.ROLLBACK
        ):
            raise CommitError(
                f"write {instant.timestamp} to table '{self.table.name}' was rolled back by "
                "another writer, which took it for failed: its heartbeat stopped for longer than "
                "hoodie.client.heartbeat.interval_in_ms x (tolerable.misses + 1). Run it again"
            )

    @contextmanager
    def _lock(self):
        lock = table_lock(self.table.storage, self.config, self.lock_provider)
        lock.acquire()
        try:
            yield
        finally:
            lock.release()

    def _compact_inline(self, spark) -> list[WriteResult]:
        """Hudi's inline compaction: after enough delta commits, fold the logs into base files.

        The delta commit is complete whatever happens here. A failed compaction is undone and
        its plan stays pending; the next trigger runs it again.
        """
        from ..table_services.compaction import Compactor, delta_commits_since_compaction

        timeline = self.table.timeline()
        has_pending = any(i.action is Action.COMPACTION for i in timeline.pending)
        if not has_pending and (
            delta_commits_since_compaction(timeline) < self.config.compaction_delta_commits
        ):
            return []
        try:
            return Compactor(self.table, self.config).run(spark)
        except HoodieError as error:
            log.warning(
                "inline compaction of table '%s' failed and was undone; the delta commit stands "
                "and compaction is retried after the next one: %s",
                self.table.name,
                error,
            )
            return []

    def _plan(
        self,
        profile: WorkloadProfile,
        slices: list[FileSlice],
        partitions: list[str],
        pending_compactions: dict[tuple[str, str], str],
    ):
        """Insert buckets, and where every record's file group gets its new version.

        Inserts fill small file groups first. In a merge-on-read table only slices without log
        files and outside pending compactions count as small (Hudi's rule when the index cannot
        see log files): such a group is rewritten with its inserts and updates as a new base
        file. Updates and deletes of every other existing group go to a new log file (merge-on-
        read) or a new base file version (copy-on-write).
        """
        mor = self.merge_on_read
        small = [
            s.base_file
            for s in slices
            if s.base_file is not None
            and not (mor and (s.log_files or (s.partition_path, s.file_id) in pending_compactions))
        ]
        buckets = plan_inserts(
            profile,
            {p: [f for f in small if f.partition_path == p] for p in partitions},
            max_file_size=self.config.max_file_size,
            small_file_limit=self.config.small_file_limit,
            average_record_size=self._average_record_size(),
        )
        targets: dict[str, FileGroupTarget] = {}
        for bucket in buckets:
            base = bucket.base_file
            targets[bucket.file_id] = FileGroupTarget(
                bucket.partition_path,
                bucket.file_id,
                base.relative_path if base else None,
                base.instant if base else None,
            )
        by_group = {(s.partition_path, s.file_id): s for s in slices}
        for partition, groups in profile.updates.items():
            for file_id in groups:
                if file_id in targets:
                    continue  # a small file group taking inserts is rewritten, updates included
                file_slice = by_group[(partition, file_id)]
                targets[file_id] = self._next_version(file_slice, pending_compactions)
        return buckets, targets

    def _writer_schema(self, df: DataFrame, operation: str) -> pa.Schema:
        """The user columns of the new table version, checked against the table's schema."""
        check_batch(self.table.name, self.config, df.schema, with_ordering=operation != "DELETE")
        columns = df.columns
        spark_schema = df.drop(*[c for c in META_COLUMNS if c in columns]).schema
        # Spark hands timestamps to Arrow in the session time zone; we store them as UTC.
        incoming = normalize_schema(data_schema(to_arrow_schema(spark_schema, timezone="UTC")))
        current = self.table.schema()
        if operation == "DELETE":
            if current is None:
                return incoming
            return current
        if current is None or operation == INSERT_OVERWRITE_TABLE:
            return incoming
        return writer_schema(self.table.name, current, incoming, self.config.schema_change)

    def _prepare(self, df: DataFrame) -> DataFrame:
        existing_meta = [c for c in META_COLUMNS if c in df.columns]
        if existing_meta:
            df = df.drop(*existing_meta)
        if IS_DELETED not in df.columns:
            df = df.withColumn(IS_DELETED, F.lit(False))
        return df.withColumns(
            {
                RECORD_KEY: F.when(~self.keygen.record_key_is_missing(), self.keygen.record_key()),
                PARTITION_PATH: self.keygen.partition_path(),
            }
        )

    def _check_keys_and_partitions(
        self, prepared: DataFrame, bucket_counts: bool = False
    ) -> tuple[list[str], int, list[BucketCount]]:
        """The batch's partitions and row count (and, for the BUCKET index, its records per
        partition and bucket, in the same job); null keys stop the write here."""
        by = [PARTITION_PATH, BUCKET] if bucket_counts else [PARTITION_PATH]
        extra = BucketIndex.aggregates() if bucket_counts else [F.count(F.lit(1)).alias("rows")]
        rows = (
            prepared.groupBy(*by)
            .agg(F.count_if(F.col(RECORD_KEY).isNull()).alias("nulls"), *extra)
            .collect()
        )
        nulls = sum(r["nulls"] for r in rows)
        if nulls:
            raise NullRecordKeyError(
                f"table '{self.table.name}': {nulls} row(s) have "
                f"{missing_key_text(self.config.record_key_fields)}"
            )
        counts = []
        if bucket_counts:
            counts = [BucketCount(r[PARTITION_PATH], r[BUCKET], r["rows"], r["deletes"])
                      for r in rows]  # fmt: skip
        partitions = sorted({r[PARTITION_PATH] for r in rows})
        return partitions, sum(r["rows"] for r in rows), counts

    def _key_or_error(self):
        """The record key, failing the Spark job where it is missing.

        For writes whose tasks write as they go (merge-on-read under the BUCKET index): the
        check runs before the shuffle, in a stage that completes before any task writes, so a
        row without a key stops the write with nothing written and no Spark job of its own.
        """
        prefix = f"NullRecordKeyError: table '{self.table.name}': a row"
        lacks = f" has {missing_key_text(self.config.record_key_fields)}"
        where = F.lit(prefix + lacks)
        if self.config.partition_fields:
            in_partition = F.concat(
                F.lit(" in partition '"), self.keygen.partition_path(), F.lit("'")
            )
            where = F.concat(F.lit(prefix), in_partition, F.lit(lacks))
        key = F.col(RECORD_KEY)
        return F.when(key.isNull(), F.raise_error(where)).otherwise(key)

    def _existing(self, partitions: list[str]) -> list[str]:
        """The partitions among these that the table already has."""
        storage = self.table.storage
        return [
            p for p in partitions
            if any(is_partition_metadata(f.name) for f in storage.list_files(p))
        ]  # fmt: skip

    def _profile(self, tagged: DataFrame) -> WorkloadProfile:
        profile = WorkloadProfile()
        for row in tagged.groupBy(PARTITION_PATH, LOCATION).count().collect():
            profile.add(row[PARTITION_PATH], row[LOCATION], row["count"])
        return profile

    def _average_record_size(self) -> int:
        """Bytes per record of the latest commit that wrote base files, as Hudi estimates it.

        Only base files count: a log file of a few records is mostly block headers and schema,
        and would make every new file group look full far too early.
        """
        timeline = self.table.timeline().completed.write_timeline
        for instant in reversed(timeline.instants[-10:]):
            stats = [
                s
                for s in self.table.commit_metadata(instant).write_stats()
                if s.path and parse_base_file_name(posixpath.basename(s.path)) is not None
            ]
            records = sum(s.num_writes for s in stats)
            written = sum(s.total_write_bytes for s in stats)
            if records > 0 and written > 0:
                return max(1, written // records)
        return self.config.record_size_estimate

    def _write_file_groups(
        self, tagged, buckets, targets, instant: str, schema, operation: str
    ) -> list[WriteStat]:
        spark = tagged.sparkSession
        if not targets:
            return []
        if buckets:
            ranges = spark.createDataFrame(
                [(b.partition_path, b.file_id, b.lower, b.upper) for b in buckets],
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
        rewrite, append = self._handles(instant, schema, operation, targets)
        # One shuffle partition per file group, so file groups are written in parallel.
        assigned = assigned.drop(LOCATION).repartition(len(targets), TARGET)
        write = _as_function(rewrite, append)
        rows = assigned.groupBy(TARGET).applyInArrow(write, STAT_SCHEMA).collect()
        return [_stat_from_json(r["stat"]) for r in rows]

    def _handles(self, instant: str, schema, operation: str, targets):
        """The write tasks' two handles: a base file version, and a log file."""
        common = dict(
            storage=self.table.storage,
            instant=instant,
            targets=targets,
            data_schema=schema,
            record_key_fields=self.config.record_key_fields,
            compression=self.config.compression,
            markers=WriteMarkers(self.table.storage, instant),
        )
        delete_operation = operation == "DELETE"
        rewrite = CopyOnWriteHandle(
            **common,
            # Hudi's delete operation removes keys whatever their ordering value.
            precombine_field=None if delete_operation else self.config.precombine_field,
            allow_duplicate_keys=delete_operation,
        )
        append = AppendHandle(
            **common,
            table_name=self.table.name,
            precombine_field=self.config.precombine_field,
            unconditional_deletes=delete_operation,
        )
        return rewrite, append

    def _write_buckets(
        self, prepared, timeline, pending, instant: str, schema, operation: str
    ) -> list[WriteStat]:
        """Merge-on-read under the BUCKET index: tag and write in one job (bucket_writer)."""
        create, append = self._handles(instant, schema, operation, targets={})
        writer = BucketWriter(
            storage=self.table.storage,
            timeline=timeline,
            pending_compactions=pending,
            index=self._bucket_index,
            table_name=self.table.name,
            record_key_fields=self.config.record_key_fields,
            partition_depth=len(self.config.partition_fields),
            append=append,
            create=create,
        )
        if self.config.parallelism:
            prepared = prepared.repartition(self.config.parallelism, PARTITION_PATH, BUCKET)
        write = _plain_function(writer)
        rows = prepared.groupBy(PARTITION_PATH, BUCKET).applyInArrow(write, STAT_SCHEMA).collect()
        return [_stat_from_json(r["stat"]) for r in rows]

    # -- timeline and files --------------------------------------------------------------------
    def _write_partition_metadata(self, instant: str, partitions: list[str]) -> None:
        depth = len(self.config.partition_fields)
        for partition in partitions:
            write_partition_metadata(self.table.storage, partition, instant, depth)

    def _finalize(self, instant: str, metadata: CommitMetadata) -> None:
        """Delete marked files no write stat names (from retried or speculative tasks)."""
        named = {s.path for s in metadata.write_stats()}
        for marker in WriteMarkers(self.table.storage, instant).all():
            if marker.data_file not in named:
                self.table.storage.delete(marker.data_file)

    def _abort(self, instant: Instant) -> None:
        """Undo a failed write now rather than leave it to the next writer.

        A write that created data files is rolled back (a rollback instant records it); one
        that failed before writing anything just leaves the timeline.
        """
        try:
            if WriteMarkers(self.table.storage, instant.timestamp).all():
                Rollback(self.table).rollback(instant)
            else:
                self.table.delete_pending_instant(instant)
        except Exception:  # pragma: no cover - best effort; the next writer rolls it back
            log.exception("could not undo failed write %s", instant.timestamp)


def clean_config(config: WriteConfig):
    from ..table_services.clean import CleanConfig

    return CleanConfig(
        policy=config.cleaner_policy,
        commits_retained=config.cleaner_commits_retained,
        file_versions_retained=config.cleaner_file_versions_retained,
    )


def _as_function(rewrite: CopyOnWriteHandle, append: AppendHandle):
    """The UDF for `applyInArrow`: the handle each file group's target calls for.

    A plain function, because PySpark inspects the argument count, which a callable object's
    `self` confuses.
    """

    def write_file_group(key, table):
        handle = append if rewrite.targets[group_key(key[0])].appends_log else rewrite
        return handle(key, table)

    return write_file_group


def _plain_function(writer):
    """`applyInArrow` needs a function (it counts the arguments, which `self` confuses)."""

    def write_bucket(key, table):
        return writer(key, table)

    return write_bucket


def _stat_from_json(text: str) -> WriteStat:
    return WriteStat(**json.loads(text))


def _show(value) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]" if value else "(none)"
    return str(value) if value else "(none)"


def _hoodie_error_in(error: BaseException) -> HoodieError | None:
    """A HoodieError raised inside a Spark task arrives as text in a Spark exception."""
    from .. import exceptions

    text = str(error)
    for name in (
        "DuplicateRecordKeyError",
        "SchemaError",
        "NullRecordKeyError",
        "ConcurrentWriteConflict",
        "InvalidConfigError",
    ):
        marker = f"{name}: "
        if marker in text:
            message = text.split(marker, 1)[1].split("\n", 1)[0]
            # Spark appends the SQL state to errors raised by SQL expressions (raise_error).
            message = re.sub(r"\s*SQLSTATE: \w+\s*$", "", message).strip()
            return getattr(exceptions, name)(message)
    return None

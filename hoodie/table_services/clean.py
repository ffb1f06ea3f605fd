"""Cleaning: delete file slices no retained instant needs, so old versions do not pile up.

Every copy-on-write commit leaves the previous version of the file groups it touched, and every
compaction the previous slices of a merge-on-read table; they serve time travel and readers
still running on an older snapshot. The cleaner bounds them with Hudi's policies:
- KEEP_LATEST_COMMITS (default, `hoodie.cleaner.commits.retained` = 10): the snapshot as of
  each of the last N commits stays readable. A file group keeps every slice at or after the
  earliest retained commit, plus the one slice that was latest just before it; file groups
  taken out by a replace commit older than that commit go entirely;
- KEEP_LATEST_FILE_VERSIONS (`hoodie.cleaner.fileversions.retained` = 3): the latest N slices
  of every file group stay.
Never deleted, whatever the policy: a file group's latest slice, the slices a pending
compaction reads, and files of savepointed instants.

A clean is an action on the timeline: `<t>.clean.requested` and `.clean.inflight` hold the
plan (Hudi's Avro `HoodieCleanerPlan`), `<t>.clean` what was deleted (`HoodieCleanMetadata`).
A clean is a `Transaction` as writes are: with concurrent writers it is planned under the table
lock, one at a time, and beats a heartbeat while it runs. A crash (or an error) mid-clean
leaves the plan pending; the next clean whose policy finds it abandoned finishes it first
(Hudi's `CleanActionExecutor`), deleting what is left of the plan: files already gone are
skipped. The plan's earliest retained commit is what readers report as the start of the
readable range.
"""

from __future__ import annotations

import logging
import posixpath
import time
from dataclasses import dataclass
from typing import cast

from ..avro_metadata import (
    ActionInstant,
    CleanerPlan,
    CleanFileInfo,
    CleanMetadata,
    CleanPartitionMetadata,
    SavepointMetadata,
)
from ..clustering_plan import pending_clusterings
from ..clustering_plan import read_plan as read_clustering_plan
from ..compaction_plan import read_plan
from ..config import WriteConfig, option_default
from ..exceptions import MalformedMetadataError, UnsafePathError, malformed
from ..faults import crash_point
from ..fs_view import FileSlice
from ..meta_client import HoodieTableMetaClient
from ..naming import parse_base_file_name, parse_cdc_log_file_name, parse_log_file_name
from ..options.write import CleanerPolicy
from ..partition_paths import check_data_file, problem, shown
from ..storage import FileIO
from ..timeline import Action, Instant, State, Timeline
from ..transaction.failed_writes import FailedWritesPolicy
from ..transaction.transaction import Transaction

log = logging.getLogger(__name__)
KEEP_LATEST_COMMITS = CleanerPolicy.KEEP_LATEST_COMMITS.value
KEEP_LATEST_FILE_VERSIONS = CleanerPolicy.KEEP_LATEST_FILE_VERSIONS.value
POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS)


@dataclass(frozen=True)
class CleanConfig:
    """The cleaning settings of a write config (defaults: the option table's)."""

    policy: str = cast(str, option_default("cleaner_policy"))
    commits_retained: int = cast(int, option_default("cleaner_commits_retained"))
    file_versions_retained: int = cast(int, option_default("cleaner_file_versions_retained"))
    incremental: bool = cast(bool, option_default("cleaner_incremental_mode"))

    @classmethod
    def of(cls, config: WriteConfig | None) -> CleanConfig:
        if config is None:
            return cls()
        return cls(config.cleaner_policy, config.cleaner_commits_retained,
                   config.cleaner_file_versions_retained,
                   config.cleaner_incremental_mode)  # fmt: skip


class Cleaner:
    def __init__(
        self,
        meta_client: HoodieTableMetaClient,
        config: CleanConfig | None = None,
        failed_writes: FailedWritesPolicy | None = None,
    ):
        self.meta_client = meta_client
        self.storage = meta_client.storage
        self.config = config or CleanConfig()
        # How the table is written (None: the defaults) says which pending cleans were abandoned.
        self.failed_writes = failed_writes or FailedWritesPolicy.of(meta_client.storage, None)

    def run(self, instant_time: str | None = None) -> CleanMetadata | None:
        """Finish abandoned cleans, then plan and execute a new one; None if nothing to delete.
        `instant_time`: the new clean's (a metadata table's clean is named after its latest
        delta commit on table version 6); default a new one.

        With concurrent writers, a clean another writer is executing (its heartbeat is live)
        is left to it, and no new one is planned beside it.
        """
        result = None
        for instant in self.meta_client.timeline().pending:
            if instant.action is Action.CLEAN:
                taken = Transaction.take_over(self.meta_client, self.failed_writes, instant)
                if taken is not None:
                    result = self._execute(taken)
        scheduled = self._schedule_locked(instant_time)
        if scheduled is not None:
            result = self._execute(scheduled)
        return result

    def schedule(self) -> str | None:
        """Write a clean plan; None when nothing is to be deleted (or another clean runs)."""
        scheduled = self._schedule_locked()
        if scheduled is None:
            return None
        with scheduled.kept_pending():  # the plan stays pending: the next run finishes it
            return scheduled.instant_time

    # -- planning ------------------------------------------------------------------------------
    def _schedule_locked(self, instant_time: str | None = None) -> Transaction | None:
        """Plan under the table lock with concurrent writers: one clean plan at a time."""
        with self.failed_writes.exclusive():
            timeline = self.meta_client.timeline()
            if any(i.action is Action.CLEAN for i in timeline.pending):
                return None  # another writer's clean is running (its heartbeat is live)
            return self._schedule(timeline, instant_time)

    def _schedule(self, timeline: Timeline, instant_time: str | None) -> Transaction | None:
        plan = self.plan(timeline)
        if plan is None:
            return None
        transaction = Transaction.start(self.meta_client, self.failed_writes, Action.CLEAN,
                                        plan.to_avro(), instant_time)  # fmt: skip
        crash_point("clean.requested")
        return transaction

    def plan(self, timeline: Timeline) -> CleanerPlan | None:
        """What a clean of the table at `timeline` deletes; None: nothing."""
        writes = timeline.completed.write_timeline.instants
        if not writes:
            return None
        earliest = self._earliest_to_retain(writes)
        protected = self._protected_files(timeline)
        if earliest is None and self.config.policy == KEEP_LATEST_COMMITS:
            return None  # fewer writes than retained: no slice to let go, nothing to list
        view = self.meta_client.file_system_view(
            timeline=timeline, metadata=self.failed_writes.metadata_table
        )
        doomed: dict[str, list[str]] = {}
        cdc_files = _CdcFiles(self.storage) if self.meta_client.properties.cdc_enabled else None
        for group in view.file_groups(self._partitions_to_list(timeline, earliest)):
            for file_slice in self._slices_to_clean(group.slices, earliest):
                files = _files_of(file_slice)
                base = file_slice.base_file
                if cdc_files is not None and not (base and base.relative_path in protected):
                    # (a savepoint's base file keeps the changes logged beside it)
                    files += cdc_files.of(group.partition_path, file_slice)
                for relative in files:
                    if relative not in protected:
                        doomed.setdefault(group.partition_path, []).append(relative)
        if earliest is not None:
            self._replaced_groups(timeline, earliest.timestamp, protected, doomed)
        if not doomed:
            return None
        return CleanerPlan(
            earliest_instant_to_retain=ActionInstant(
                earliest.timestamp, earliest.action.value, "COMPLETED"
            )
            if earliest is not None
            else None,
            last_completed_commit_timestamp=writes[-1].timestamp,
            policy=self.config.policy,
            file_paths_to_be_deleted_per_partition={
                partition: [CleanFileInfo(self.storage.uri(r)) for r in sorted(files)]
                for partition, files in sorted(doomed.items())
            },
        )

    def _partitions_to_list(self, timeline: Timeline, earliest: Instant | None) -> (
        list[str] | None
    ):  # fmt: skip
        """The partitions whose slices this plan may let go (None: every partition).

        Hudi's incremental cleaning (`hoodie.cleaner.incremental.mode`, KEEP_LATEST_COMMITS):
        the last clean let go of every slice older than the newest one before its earliest
        retained commit E0; a slice becomes one to let go now only where a commit from E0 on,
        and before this plan's earliest retained commit, wrote a newer one. So only the
        partitions those commits wrote are listed, not the whole table (a table of 50,000
        partitions: 3.9 s of listing per clean). On a timeline with completion times (version
        8), a commit that began before E0 but completed after the last clean was planned
        counts too (it was not on that clean's timeline). Every partition is listed for the
        first clean, and when E0 is no longer on the active timeline (archived)."""
        if not self.config.incremental or self.config.policy != KEEP_LATEST_COMMITS:
            return None
        if earliest is None:
            return None
        cleans = [i for i in timeline.completed if i.action is Action.CLEAN]
        writes = timeline.completed.write_timeline.instants
        if not cleans or not writes:
            return None
        last = cleans[-1]
        try:
            start = (self.meta_client.retained_by_clean(last) or "").strip()
        except (MalformedMetadataError, FileNotFoundError) as damaged:
            # (readers that need the retained range report it; listing all is never wrong)
            log.warning("incremental cleaning: %s; every partition is listed", damaged)
            return None
        if not start or start < writes[0].timestamp:
            return None
        completed = timeline.completion_times()
        partitions: set[str] = set()
        for instant in writes:
            if instant.timestamp >= earliest.timestamp:
                break
            finished = completed.get(instant.timestamp)
            if instant.timestamp < start and (finished is None or finished <= last.timestamp):
                continue
            meta = self.meta_client.commit_metadata(instant)
            written = {*meta.partition_to_write_stats, *(meta.partition_to_replace_file_ids or {})}
            for partition in written:
                reason = problem(partition)
                if reason is not None:
                    raise UnsafePathError(
                        f"table at {self.storage.uri()}: commit {instant.timestamp} names the "
                        f"partition {shown(partition)}, which {reason}; nothing was cleaned. "
                        "The table's metadata was altered: restore the table from a copy"
                    )
            partitions |= written
        return sorted(partitions)

    def _earliest_to_retain(self, writes: tuple[Instant, ...]) -> Instant | None:
        if self.config.policy != KEEP_LATEST_COMMITS:
            return None
        if len(writes) <= self.config.commits_retained:
            return None
        return writes[-self.config.commits_retained]

    def _slices_to_clean(
        self, slices: list[FileSlice], earliest: Instant | None
    ) -> list[FileSlice]:
        """Slices (oldest first) the policy lets go; never a file group's latest slice."""
        if self.config.policy == KEEP_LATEST_FILE_VERSIONS:
            keep = self.config.file_versions_retained
            return slices[:-keep] if len(slices) > keep else []
        if earliest is None:
            return []
        # Hudi's rule (CleanPlanner): every slice from the earliest retained commit on stays,
        # and so does the newest slice from before it, even when that commit wrote a newer
        # one: rolling that commit back, and incremental reads that start at it, need the
        # version it replaced. Older slices go.
        before = [s for s in slices if s.base_instant < earliest.timestamp]
        return before[:-1]

    def _replaced_groups(
        self,
        timeline: Timeline,
        earliest: str,
        protected: set[str],
        doomed: dict[str, list[str]],
    ) -> None:
        """Every file of the groups that replace commits older than the retained range took out."""
        replaced: set[tuple[str, str]] = set()
        for instant in timeline.completed.write_timeline:
            if instant.action is Action.REPLACE_COMMIT and instant.timestamp < earliest:
                meta = self.meta_client.commit_metadata(instant)
                for partition, ids in (meta.partition_to_replace_file_ids or {}).items():
                    replaced.update((partition, file_id) for file_id in ids)
        for partition in sorted({p for p, _ in replaced}):
            for info in self.storage.list_files(partition):
                parsed = (
                    parse_base_file_name(info.name)
                    or parse_log_file_name(info.name)
                    or parse_cdc_log_file_name(info.name)
                )
                if parsed is None or (partition, parsed.file_id) not in replaced:
                    continue
                if info.relative_path not in protected:
                    doomed.setdefault(partition, []).append(info.relative_path)

    def _protected_files(self, timeline: Timeline) -> set[str]:
        """Files a pending compaction or clustering reads, and files savepoints hold on to."""
        protected: set[str] = set()
        for instant in timeline.pending:
            if instant.action is Action.COMPACTION:
                for op in read_plan(self.storage, timeline.layout, instant.timestamp).operations:
                    if op.base_file:
                        protected.add(op.relative(op.base_file))
                    protected.update(op.relative(name) for name in op.log_files)
        for instant in pending_clusterings(self.storage, timeline):
            plan = read_clustering_plan(self.storage, timeline.layout, instant.timestamp)
            for group in plan.groups:
                for piece in group.slices:
                    protected.update([piece.base_file] if piece.base_file else [])
                    protected.update(piece.log_files)
        for instant in timeline.completed:
            if instant.action is Action.SAVEPOINT:
                savepoint = self.meta_client.parse_instant(
                    instant, SavepointMetadata.from_avro, "savepoint metadata (Avro)"
                )
                for partition, meta in savepoint.partition_metadata.items():
                    for name in meta.savepoint_data_file:
                        name = posixpath.basename(name)
                        protected.add(posixpath.join(partition, name) if partition else name)
        return protected

    # -- execution -----------------------------------------------------------------------------
    def _execute(self, transaction: Transaction) -> CleanMetadata:
        """Delete the plan's files and complete the clean. A failure leaves the plan pending,
        as a crash does: the next clean finishes it (files already gone are skipped)."""
        with transaction.kept_pending():
            return self._delete_and_complete(transaction)

    def _delete_and_complete(self, transaction: Transaction) -> CleanMetadata:
        started = time.monotonic()
        instant_time = transaction.instant_time
        requested = Instant(instant_time, Action.CLEAN, State.REQUESTED)
        plan_bytes = self.meta_client.instant_content(requested)
        with malformed(
            self.storage.uri(self.meta_client.instant_path(requested)), "a clean plan (Avro)"
        ):
            plan = CleanerPlan.from_avro(plan_bytes)
        # Every file the plan names is checked before the first goes: a crafted plan naming
        # files outside the table, or its metadata, deletes nothing.
        table, source = f"'{self.meta_client.name}'", f"clean plan {instant_time}"
        doomed = {
            info.file_path: check_data_file(table, source, self.storage.relative(info.file_path))
            for infos in plan.file_paths_to_be_deleted_per_partition.values()
            for info in infos
        }
        transaction.inflight(plan_bytes)
        partitions: dict[str, CleanPartitionMetadata] = {}
        deleted = 0
        for partition, infos in plan.file_paths_to_be_deleted_per_partition.items():
            meta = partitions.setdefault(partition, CleanPartitionMetadata(partition, plan.policy))
            for info in infos:
                relative = doomed[info.file_path]
                name = posixpath.basename(relative)
                meta.delete_path_patterns.append(name)
                if self.storage.exists(relative):
                    self.storage.delete(relative)
                    deleted += 1
                    crash_point("clean.file_deleted")
                meta.success_delete_files.append(name)
        crash_point("clean.files_deleted")
        earliest = plan.earliest_instant_to_retain
        metadata = CleanMetadata(
            start_clean_time=instant_time,
            time_taken_in_millis=int((time.monotonic() - started) * 1000),
            total_files_deleted=deleted,
            earliest_commit_to_retain=earliest.timestamp if earliest else "",
            last_completed_commit_timestamp=plan.last_completed_commit_timestamp,
            partition_metadata=partitions,
        )
        transaction.complete(metadata.to_avro())
        log.info("clean %s of table '%s': %d file(s)", instant_time, self.meta_client.name, deleted)
        return metadata


class _CdcFiles:
    """The `.cdc` files of file slices. They are in no slice (`fs_view`), but each is named
    after the base file written beside it, so it belongs to the slice starting there; Apache
    Hudi's cleaner (`CleanPlanner`, with `hoodie.table.cdc.enabled`) deletes them with it."""

    def __init__(self, storage: FileIO):
        self.storage = storage
        self._by_partition: dict[str, dict[tuple[str, str], list[str]]] = {}

    def of(self, partition: str, file_slice: FileSlice) -> list[str]:
        if partition not in self._by_partition:
            found: dict[tuple[str, str], list[str]] = {}
            for info in self.storage.list_files(partition):
                parsed = parse_cdc_log_file_name(info.name)
                if parsed is not None:
                    key = (parsed.file_id, parsed.instant)
                    found.setdefault(key, []).append(info.relative_path)
            self._by_partition[partition] = found
        return self._by_partition[partition].get((file_slice.file_id, file_slice.base_instant), [])


def _files_of(file_slice: FileSlice) -> list[str]:
    files = [lf.relative_path for lf in file_slice.log_files]
    if file_slice.base_file is not None:
        files.append(file_slice.base_file.relative_path)
    return files

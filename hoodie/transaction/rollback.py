"""Rollback: undo an instant's data files and take it off the timeline, recorded as an instant.

A write that crashed leaves a pending instant and some data files; the next writer (or table
service) rolls it back before doing anything else, once the table's failed-writes policy says
it has failed (`hoodie.transaction.failed_writes`: at once with a single writer, after its
heartbeat stopped with concurrent writers). A rollback
is itself an action: `<r>.rollback.requested` (the plan: which files go), `.rollback.inflight`,
then `<r>.rollback` (what was deleted), and only then are the rolled-back instant's own timeline
files removed. A crash at any point leaves either the failed instant (rolled back again next
time) or a pending rollback (re-executed from its plan): deleting is idempotent.

Which files an instant wrote comes from its markers (`hoodie.markers`); without them (markers
already deleted, or a table written by Apache Hudi), from the write stats in its commit or
inflight metadata, and failing that from a listing (base files carry the instant in their name;
log files are read for blocks of the instant). A log file the instant created is deleted. A log
file it appended blocks to that also holds other instants' blocks (Apache Hudi appends on HDFS)
keeps those: a new log file version with a rollback command block tells readers to skip the
instant's blocks, as Hudi does on file systems that cannot append.
"""

from __future__ import annotations

import logging
import posixpath
import time
from dataclasses import dataclass
from typing import Literal

from ..archived_timeline import archived_instants
from ..avro_metadata import (
    InstantInfo,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)
from ..clustering_plan import is_clustering
from ..exceptions import PARSE_ERRORS, HoodieError, TimelineError, malformed
from ..faults import crash_point
from ..logformat import log_file_instants, read_log_file, rollback_command_block
from ..markers import WriteMarkers
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata
from ..naming import (
    LogFileName,
    log_file_name,
    parse_base_file_name,
    parse_cdc_log_file_name,
    parse_log_file_name,
    write_token,
)
from ..partition_paths import check_data_file
from ..timeline import METAFOLDER, WRITE_ACTIONS, Action, Instant, State
from .failed_writes import FailedWritesPolicy
from .heartbeat import heartbeat_path
from .metadata_table import turn_off_metadata_table
from .metadata_writer import capture_for_undo, undone_record_index, update_metadata_table
from .record_index import forget_undone

log = logging.getLogger(__name__)


# Whose blocks a log file holds, against the instant being rolled back (`Rollback._holder`).
_Holder = Literal["this", "shared", "others", "gone"]


@dataclass(frozen=True)
class _Undo:
    """What rolling back means for one data file."""

    partition_path: str
    relative: str
    delete: bool  # False: a shared log file, retracted with a rollback command block


class Rollback:
    def __init__(self, meta_client: HoodieTableMetaClient):
        self.meta_client = meta_client
        self.storage = meta_client.storage

    # -- entry points --------------------------------------------------------------------------
    def rollback_failed_writes(self, failed_writes: FailedWritesPolicy) -> list[str]:
        """Finish interrupted rollbacks, then roll back every pending write that has failed.

        Which have failed is the table's policy (`failed_writes`): with a single writer, all;
        with concurrent writers, those whose heartbeat stopped. Pending compactions are not
        failed writes: their plan is executed again instead. Candidates are looked for without
        the lock and confirmed under it, since a write may complete meanwhile. Returns the
        instants rolled back.
        """
        if not any(self._abandoned(failed_writes)):
            return []
        with failed_writes.exclusive():
            for pending in self._abandoned(failed_writes)[0]:
                self._resume(pending, failed_writes)
            failed = self._abandoned(failed_writes)[1]  # after resuming: some may be gone
            for instant in failed:
                log.warning(
                    "rolling back failed write %s of table '%s'", instant, self.meta_client.name
                )
                self.rollback(instant, failed_writes)
        return [i.timestamp for i in failed]

    def _abandoned(self, failed_writes: FailedWritesPolicy) -> tuple[list[Instant], list[Instant]]:
        """Pending rollbacks whose writer died (those of a failed instant), and failed writes."""
        timeline = self.meta_client.timeline()
        interrupted = [
            i
            for i in timeline.pending
            if i.action is Action.ROLLBACK and failed_writes.has_failed(self.target_of(i))
        ]
        failed = [
            i
            for i in timeline.pending
            if i.action in WRITE_ACTIONS
            and failed_writes.has_failed(i.timestamp)
            # layout 1's pending clustering is a replace commit: its plan is executed again
            # instead (Apache Hudi's `getInflightTimelineExcludeCompactionAndClustering`)
            and not is_clustering(self.storage, timeline.layout, i)
        ]
        return interrupted, failed

    def target_of(self, pending_rollback: Instant) -> str:
        """The instant a pending rollback undoes (from its plan)."""
        requested = pending_rollback.with_state(State.REQUESTED)
        plan = self._plan(requested)
        return plan.instant_to_rollback.commit_time if plan.instant_to_rollback else ""

    def rollback_latest_commit(
        self, failed_writes: FailedWritesPolicy, instant_time: str | None = None
    ) -> RollbackMetadata:
        """Roll back the latest completed write (the `hoodie_rollback` operation).

        Only the latest can go: a later write may have built on its files. Older states are
        reached with a restore to a savepoint. Refused while another writer's write is in
        progress: it may be building on the commit.
        """
        self.rollback_failed_writes(failed_writes)
        with failed_writes.exclusive():
            timeline = self.meta_client.timeline()
            failed_writes.refuse_in_progress(timeline, self.meta_client.name, "a rollback")
            writes = timeline.completed.write_timeline.instants
            if not writes:
                raise TimelineError(
                    f"table '{self.meta_client.name}' has no completed commit to roll back"
                )
            latest = writes[-1]
            if any(i.action is Action.SAVEPOINT and i.timestamp == latest.timestamp
                   for i in timeline.completed):  # fmt: skip
                raise TimelineError(
                    f"commit {latest.timestamp} of table '{self.meta_client.name}' is savepointed; "
                    "delete the savepoint first, or restore to an earlier one"
                )
            if instant_time is not None and instant_time != latest.timestamp:
                raise TimelineError(
                    f"instant {instant_time} is not the latest completed commit of table "
                    f"'{self.meta_client.name}' (that is {latest.timestamp}); only the latest "
                    "can be rolled back. Restore a savepoint to go further back"
                )
            self._refuse_unrecoverable(latest, len(writes))
            return self.rollback(latest, failed_writes)

    def _refuse_unrecoverable(self, latest: Instant, completed_writes: int) -> None:
        """A rollback must leave the table as it was before `latest`. Cleaning and archival
        only keep what the latest commits need (`hoodie.cleaner.commits.retained`,
        `hoodie.keep.min.commits`), so after earlier rollbacks that state may be gone: then
        the rollback is refused rather than losing records or hiding the table."""
        name = self.meta_client.name
        if completed_writes == 1 and any(
            a.state == "COMPLETED" and a.action in {w.value for w in WRITE_ACTIONS}
            for a in archived_instants(self.storage, self.meta_client.layout)
        ):
            raise TimelineError(
                f"commit {latest.timestamp} is the only completed commit on the active timeline "
                f"of table '{name}' (the earlier ones are archived): rolling it back would "
                "leave readers no commit to read instead of the table as it was before it. "
                "Restore a savepoint, or write the change you want"
            )
        missing = self._cleaned_versions(latest)
        if missing:
            raise TimelineError(
                f"commit {latest.timestamp} of table '{name}' replaced file versions that "
                f"cleaning has removed since ({', '.join(missing[:3])}"
                f"{', ...' if len(missing) > 3 else ''}): rolling it back would lose their "
                "records instead of bringing them back. Restore a savepoint, and keep more "
                "commits (hoodie.cleaner.commits.retained) to roll back further"
            )

    def _cleaned_versions(self, instant: Instant) -> list[str]:
        """The file versions that undoing `instant` brings back, where they no longer exist:
        each rewritten base file's previous version, and every file group a replace commit
        replaced."""
        metadata = self.meta_client.commit_metadata(instant)
        needed: dict[str, set[tuple[str, str | None]]] = {}
        for stat in metadata.write_stats():
            rewritten = stat.path and parse_base_file_name(posixpath.basename(stat.path))
            if rewritten and stat.prev_commit not in ("null", "", None):
                needed.setdefault(stat.partition_path, set()).add((stat.file_id, stat.prev_commit))
        for partition, file_ids in (metadata.partition_to_replace_file_ids or {}).items():
            needed.setdefault(partition, set()).update((f, None) for f in file_ids)
        missing = []
        for partition, versions in sorted(needed.items()):
            present: set[tuple[str, str | None]] = set()
            for info in self.storage.list_files(partition):
                if base := parse_base_file_name(info.name):
                    present |= {(base.file_id, base.instant), (base.file_id, None)}
                elif log_name := parse_log_file_name(info.name):
                    present.add((log_name.file_id, None))
            missing += [
                posixpath.join(partition, file_id) + (f" as of {version}" if version else "")
                for file_id, version in sorted(versions, key=str)
                if (file_id, version) not in present
            ]
        return missing

    def rollback(
        self, instant: Instant, policy: FailedWritesPolicy | None = None
    ) -> RollbackMetadata:
        """Undo `instant`. The rollback's own instant time is taken as a write's is (under
        `policy`, the table's failed-writes policy): with concurrent writers a heartbeat claims
        it first, so that a writer starting in the same millisecond cannot get the same time
        for its own instant (the two files' names differ by action, so neither create would
        fail)."""
        started = time.monotonic()
        policy = policy or FailedWritesPolicy(self.storage)
        if not policy.metadata_table:
            turn_off_metadata_table(self.meta_client, f"rollback of {instant.timestamp}")
        plan = self.plan(instant)
        self.revert_to_inflight(instant)
        requested, heartbeat = policy.start_instant(self.meta_client, Action.ROLLBACK,
                                                    plan.to_avro())  # fmt: skip
        try:
            crash_point("rollback.planned")
            return self._execute(requested.with_state(State.INFLIGHT), plan, started, policy)
        finally:
            if heartbeat is not None:
                heartbeat.stop()

    def plan(self, instant: Instant) -> RollbackPlan:
        """What undoing `instant` takes (read before anything changes)."""
        undo = self._files_to_undo(instant)
        return RollbackPlan(
            InstantInfo(instant.timestamp, instant.action.value), self._requests(undo)
        )

    def revert_to_inflight(self, instant: Instant) -> None:
        """Readers stop seeing a completed commit before any of its files go; its write stats
        stay in the inflight file in case the rollback is interrupted."""
        if not instant.is_completed:
            return
        self.meta_client.save_instant(
            instant.with_state(State.INFLIGHT), self._metadata_bytes(instant)
        )
        crash_point("rollback.reverted_to_inflight")
        self.meta_client.delete_instant(instant, (State.COMPLETED,))

    # -- planning ------------------------------------------------------------------------------
    def _files_to_undo(self, instant: Instant) -> list[_Undo]:
        markers = WriteMarkers(self.storage, instant.timestamp).all()
        if markers:
            candidates = [m.data_file for m in markers]
        else:
            candidates = self._files_from_metadata(instant) or self._files_by_listing(instant)
        table, source = f"'{self.meta_client.name}'", f"instant {instant.timestamp}"
        for relative in candidates:  # a crafted instant names nothing outside, deletes nothing
            check_data_file(table, source, relative)
        undo = []
        for relative in sorted(set(candidates)):
            partition = posixpath.dirname(relative)
            if parse_log_file_name(posixpath.basename(relative)) is None:
                if self.storage.exists(relative):
                    undo.append(_Undo(partition, relative, delete=True))
                continue
            holder = self._holder(relative, instant.timestamp)
            if holder in ("this", "shared"):
                undo.append(_Undo(partition, relative, delete=holder == "this"))
            # "others": this write's marker names another writer's log file because its
            # create lost the race for the name (append_handle); not this write's to undo.
        return undo

    def _plan(self, requested: Instant) -> RollbackPlan:
        """The plan of a pending rollback; one that does not read is a
        `MalformedMetadataError` naming its file."""
        path = self.storage.uri(self.meta_client.instant_path(requested))
        with malformed(path, "a rollback plan (Avro)"):
            return RollbackPlan.from_avro(self._metadata_bytes(requested))

    def _metadata_bytes(self, instant: Instant) -> bytes:
        try:
            return self.meta_client.instant_content(instant)
        except FileNotFoundError:
            return b""

    def _files_from_metadata(self, instant: Instant) -> list[str]:
        """Paths the instant's write stats name (completed, or inflight after a revert).

        The metadata of a completed commit that does not read is a `MalformedMetadataError`:
        the listing below finds a table version 6 write's log files by their base instant,
        not by this one, so undoing it from the listing could leave some of its blocks. An
        inflight file that does not read (a failed write's) falls back to the listing."""
        for state in (instant.state, State.INFLIGHT):
            pending = instant.with_state(state)
            text = self._metadata_bytes(pending)
            if state is State.COMPLETED:
                path = self.storage.uri(self.meta_client.instant_path(pending))
                with malformed(path, "commit metadata"):
                    stats = CommitMetadata.parse(text).write_stats()
            else:
                try:
                    stats = CommitMetadata.parse(text).write_stats()
                except PARSE_ERRORS:
                    continue
                except HoodieError:
                    continue
            paths = [path for s in stats for path in s.written_files()]
            if paths:
                return paths
        return []

    def _files_by_listing(self, instant: Instant) -> list[str]:
        found = []
        for info in self.storage.list_files("", recursive=True):
            if info.relative_path.startswith(METAFOLDER + "/"):
                continue
            base = parse_base_file_name(info.name) or parse_cdc_log_file_name(info.name)
            if base is not None and base.instant == instant.timestamp:
                found.append(info.relative_path)
            elif parse_log_file_name(info.name) is not None and any(
                b.instant_time == instant.timestamp
                for b in read_log_file(self.storage, info.relative_path)
            ):
                found.append(info.relative_path)
        return found

    def _holder(self, relative: str, instant_time: str) -> _Holder:
        """Whose blocks a log file holds: only `instant_time`'s ("this"; also a torn file,
        whose blocks are corrupt), its and others' ("shared"), only others' ("others"), or
        "gone" (deleted meanwhile, by another rollback of the same write or of the write that
        created it)."""
        instants = log_file_instants(self.storage, relative)
        if instants is None:
            return "gone"
        if instants <= {instant_time}:
            return "this"
        return "shared" if instant_time in instants else "others"

    def _requests(self, undo: list[_Undo]) -> list[RollbackRequest]:
        """Hudi's request shapes: each request either deletes files or retracts log blocks.

        Files to delete go in one request per partition (file id and base instant empty, as
        Hudi writes them); a shared log file gets a request of its own naming its file group
        and slice, since Hudi appends the rollback block to that slice's log.
        """
        deletions: dict[str, RollbackRequest] = {}
        retractions: list[RollbackRequest] = []
        for item in undo:
            uri = self.storage.uri(item.relative)
            if item.delete:
                deletions.setdefault(
                    item.partition_path,
                    RollbackRequest(item.partition_path, file_id="", latest_base_instant=""),
                ).files_to_be_deleted.append(uri)
                continue
            log_name = _log_name(item.relative)
            retractions.append(
                RollbackRequest(
                    item.partition_path,
                    file_id=log_name.file_id,
                    latest_base_instant=log_name.instant,
                    log_blocks_to_be_deleted={uri: self.storage.size(item.relative)},
                )
            )
        return [*deletions.values(), *retractions]

    # -- execution -----------------------------------------------------------------------------
    def _resume(self, pending: Instant, policy: FailedWritesPolicy) -> None:
        requested = pending.with_state(State.REQUESTED)
        plan = self._plan(requested)
        log.warning(
            "finishing interrupted rollback %s of table '%s'", pending, self.meta_client.name
        )
        if not policy.metadata_table:
            turn_off_metadata_table(self.meta_client, f"rollback {pending.timestamp}")
        self._execute(pending.with_state(State.INFLIGHT), plan, time.monotonic(), policy)

    def _execute(
        self, inflight: Instant, plan: RollbackPlan, started: float, policy: FailedWritesPolicy
    ) -> RollbackMetadata:
        self.meta_client.save_instant(inflight)
        target = plan.instant_to_rollback
        if policy.metadata_table and target is not None:
            # what the record index must forget of the instant, read before its files go
            capture_for_undo(self.meta_client, inflight.timestamp, target, plan)
        metadata = self.undo(plan, inflight.timestamp, started)
        content = metadata.to_avro()
        if policy.metadata_table:  # the metadata table's delta commit first, as for a write
            changes = undone_record_index(self.meta_client, inflight.timestamp)
            update_metadata_table(self.meta_client, inflight, content, policy.check_lock,
                                  record_index=changes)  # fmt: skip
        self.meta_client.save_instant(inflight.with_state(State.COMPLETED), content)
        crash_point("rollback.completed")
        self.forget(plan)
        forget_undone(self.storage, inflight.timestamp)
        return metadata

    def forget(self, plan: RollbackPlan) -> None:
        """The rolled-back instant leaves the timeline, then its markers."""
        target = plan.instant_to_rollback
        if target is None:
            raise HoodieError("a rollback plan names no instant to roll back")
        self.meta_client.delete_instant(
            Instant(target.commit_time, Action(target.action), State.COMPLETED)
        )
        if target.action == Action.COMMIT.value and self.meta_client.merge_on_read:
            # A completed compaction: its plan goes too (as Hudi reverts it to its compaction
            # instant and deletes that), or the next trigger would run it again.
            self.meta_client.delete_instant(
                Instant(target.commit_time, Action.COMPACTION, State.INFLIGHT),
                (State.INFLIGHT, State.REQUESTED),
            )
        if target.action == Action.REPLACE_COMMIT.value and self.meta_client.layout.version >= 2:
            # A clustering's plan (layout 2 names it `clustering`) goes with it, as in layout 1
            # where it shares the replace commit's name: a rolled-back clustering is not
            # pending again.
            self.meta_client.delete_instant(
                Instant(target.commit_time, Action.CLUSTERING, State.INFLIGHT),
                (State.INFLIGHT, State.REQUESTED),
            )
        WriteMarkers(self.storage, target.commit_time).delete_all()
        self.storage.delete(heartbeat_path(target.commit_time))

    def undo(self, plan: RollbackPlan, rollback_time: str, started: float) -> RollbackMetadata:
        """Carry out a plan's deletions and log retractions; Hudi's metadata of what was done."""
        target = plan.instant_to_rollback
        if target is None:
            raise HoodieError(f"rollback {rollback_time} names no instant to roll back")
        table, source = f"'{self.meta_client.name}'", f"rollback plan {rollback_time}"
        for request in plan.rollback_requests:  # all checked before the first file goes
            for uri in [*request.files_to_be_deleted, *request.log_blocks_to_be_deleted]:
                check_data_file(table, source, self.storage.relative(uri))
        partitions: dict[str, RollbackPartitionMetadata] = {}
        deleted = 0
        for request in plan.rollback_requests:
            meta = partitions.setdefault(
                request.partition_path, RollbackPartitionMetadata(request.partition_path)
            )
            for uri in request.files_to_be_deleted:
                relative = self.storage.relative(uri)
                # A plan run again after a crash may name a log file its first run deleted
                # and a later write has since created under the freed name: that one stays.
                # A gone one is not deleted "again" either: the delete could take a file
                # created just after the look.
                holder = (
                    self._holder(relative, target.commit_time)
                    if parse_log_file_name(posixpath.basename(relative)) is not None
                    else "this"
                )
                if holder in ("shared", "others"):
                    continue
                if holder == "this":
                    self.storage.delete(relative)
                crash_point("rollback.file_deleted")
                meta.success_delete_files.append(uri)
                deleted += 1
            for uri, size in request.log_blocks_to_be_deleted.items():
                written = self._append_rollback_block(
                    self.storage.relative(uri), rollback_time, target.commit_time
                )
                meta.rollback_log_files[self.storage.uri(written)] = self.storage.size(written)
                meta.log_files_from_failed_commit[uri] = size
        return RollbackMetadata(
            start_rollback_time=rollback_time,
            time_taken_in_millis=int((time.monotonic() - started) * 1000),
            total_files_deleted=deleted,
            commits_rolled_back=[target.commit_time],
            partition_metadata=partitions,
            instants_rollback=[target],
        )

    def _append_rollback_block(self, relative: str, rollback_time: str, target: str) -> str:
        """A new log file version of the slice holding a command block retracting `target`."""
        parsed = _log_name(relative)
        partition = posixpath.dirname(relative)
        listed = (parse_log_file_name(info.name) for info in self.storage.list_files(partition))
        siblings = [s for s in listed if s is not None]
        version = 1 + max(
            (s.version for s in siblings
             if s.file_id == parsed.file_id and s.instant == parsed.instant),
            default=0,
        )  # fmt: skip
        block = rollback_command_block(rollback_time, target)
        while True:  # a writer appending to the slice meanwhile may take a version first
            name = log_file_name(parsed.file_id, parsed.instant, version, write_token(0, 0, 0))
            written = posixpath.join(partition, name) if partition else name
            if self.storage.create_if_absent(written, block):
                return written
            version += 1


def _log_name(relative: str) -> LogFileName:
    parsed = parse_log_file_name(posixpath.basename(relative))
    if parsed is None:
        raise HoodieError(
            f"rollback: '{relative}' is not a log file, so it has no blocks to retract"
        )
    return parsed

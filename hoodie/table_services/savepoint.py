"""Savepoints and restore: pin a snapshot so cleaning keeps it, and bring the table back to it.

A savepoint of commit `t` is the instant `<t>.savepoint` (same time as the commit, as in Hudi)
listing the files of the snapshot as of `t`; the cleaner never deletes them. A restore rolls
back, newest first, every write and compaction after the savepoint, recorded as one restore
instant (`<r>.restore.requested` holds the plan, `<r>.restore` the rollback metadata of each
instant undone). An interrupted restore resumes from its plan at the next restore to the same
savepoint; the instants it already undid are gone from the timeline and are skipped. Until it
completes, readers see the table with some of the later commits undone, so writes and
compactions are refused meanwhile (Hudi's rule): they would build on that state, and the
resumed restore, which only undoes the instants of its plan, would keep them.

A savepoint is `<t>.savepoint.inflight`, then `<t>.savepoint`; one interrupted in between
pins nothing (the cleaner and restore only trust completed savepoints) and is finished by
savepointing the same commit again.
"""

from __future__ import annotations

import getpass
import time
from dataclasses import dataclass

from ..avro_metadata import (
    InstantInfo,
    RestoreMetadata,
    RestorePlan,
    RollbackMetadata,
    SavepointMetadata,
    SavepointPartitionMetadata,
)
from ..exceptions import TimelineError
from ..faults import crash_point
from ..fs_view import FileSystemView
from ..meta_client import HoodieTableMetaClient
from ..timeline import WRITE_ACTIONS, Action, Instant, State
from ..transaction.failed_writes import FailedWritesPolicy
from ..transaction.metadata_table import turn_off_metadata_table
from ..transaction.metadata_writer import (
    capture_for_undo,
    undone_record_index,
    update_metadata_table,
)
from ..transaction.record_index import forget_undone
from ..transaction.rollback import Rollback
from ..transaction.transaction import Transaction


def savepoints(meta_client: HoodieTableMetaClient) -> list[str]:
    return meta_client.timeline().completed.savepoint_times()


@dataclass(frozen=True)
class Savepoint:
    """A savepoint made: the commit it pins (the savepoint instant is named after it, and its
    metadata does not repeat it) and Hudi's savepoint metadata, the files it keeps."""

    instant: str
    metadata: SavepointMetadata

    @property
    def files(self) -> int:
        """How many data files the savepoint pins."""
        return sum(len(p.savepoint_data_file) for p in self.metadata.partition_metadata.values())


def create_savepoint(
    meta_client: HoodieTableMetaClient,
    instant_time: str | None = None,
    user: str | None = None,
    comment: str = "",
    keep_metadata_table: bool = False,
) -> Savepoint:
    """Savepoint the completed commit `instant_time` (None: the latest). A savepoint changes
    no file: with `keep_metadata_table` (`hoodie.metadata.enable=true`) the metadata table
    stays as it is; otherwise it is turned off as before any action."""
    timeline = meta_client.timeline()
    writes = [i.timestamp for i in timeline.completed.write_timeline]
    if not writes:
        raise TimelineError(f"table '{meta_client.name}' has no completed commit to savepoint")
    instant_time = instant_time or writes[-1]
    if instant_time not in writes:
        raise TimelineError(
            f"instant {instant_time} is not a completed commit of table '{meta_client.name}'; "
            f"savepoints pin one of: {', '.join(writes[-10:])}"
        )
    if instant_time in savepoints(meta_client):
        raise TimelineError(f"table '{meta_client.name}' already has a savepoint at {instant_time}")
    view = FileSystemView(meta_client.storage, timeline, instant_time)
    files: dict[str, SavepointPartitionMetadata] = {}
    for group in view.file_groups():
        latest = group.latest_slice
        if latest is None:  # none: `file_groups()` lists groups with slices only
            continue
        names = [lf.name for lf in latest.log_files]
        if latest.base_file is not None:
            names.insert(0, latest.base_file.name)
        entry = files.setdefault(group.partition_path, SavepointPartitionMetadata(
            group.partition_path))  # fmt: skip
        entry.savepoint_data_file.extend(names)
    metadata = SavepointMetadata(
        savepointed_by=user or _user(),
        savepointed_at=int(time.time() * 1000),
        comments=comment,
        partition_metadata=files,
    )
    instant = Instant(instant_time, Action.SAVEPOINT, State.INFLIGHT)
    if not keep_metadata_table:
        turn_off_metadata_table(meta_client, f"savepoint of {instant_time}")
    meta_client.save_instant(instant)
    crash_point("savepoint.inflight")
    meta_client.save_instant(instant.with_state(State.COMPLETED), metadata.to_avro())
    return Savepoint(instant_time, metadata)


def restore(
    meta_client: HoodieTableMetaClient, savepoint_time: str, failed_writes: FailedWritesPolicy
) -> RestoreMetadata:
    """Roll the table back to the snapshot of a savepoint; refused while a write or compaction
    is in progress (`failed_writes` tells: with a single writer, none is)."""
    with failed_writes.exclusive():
        return _restore(meta_client, savepoint_time, failed_writes)


def _restore(
    meta_client: HoodieTableMetaClient, savepoint_time: str, failed_writes: FailedWritesPolicy
) -> RestoreMetadata:
    if savepoint_time not in savepoints(meta_client):
        raise TimelineError(
            f"table '{meta_client.name}' has no savepoint at {savepoint_time}; savepoints: "
            f"{', '.join(savepoints(meta_client)) or '(none)'}"
        )
    _refuse_archived_after(meta_client, savepoint_time)
    started = time.monotonic()
    timeline = meta_client.timeline()
    failed_writes.refuse_in_progress(timeline, meta_client.name, "a restore")
    pending = [i for i in timeline.pending if i.action is Action.RESTORE]
    heartbeat = None
    if pending:
        requested = pending[0].with_state(State.REQUESTED)
        plan = meta_client.parse_instant(requested, RestorePlan.from_avro, "a restore plan (Avro)")
        if plan.savepoint_to_restore_timestamp not in (None, savepoint_time):
            raise TimelineError(
                f"table '{meta_client.name}' has an interrupted restore {requested.timestamp} to "
                f"savepoint {plan.savepoint_to_restore_timestamp}; finish it first (restore "
                f"to {plan.savepoint_to_restore_timestamp} again), then restore to "
                f"{savepoint_time}"
            )
    else:
        undo = [
            i
            for i in timeline
            if i.timestamp > savepoint_time
            and (i.action in WRITE_ACTIONS or i.action in (Action.COMPACTION, Action.CLUSTERING))
        ]
        plan = RestorePlan(
            instants_to_rollback=[InstantInfo(i.timestamp, i.action.value) for i in reversed(undo)],
            savepoint_to_restore_timestamp=savepoint_time,
        )
        # Its time is claimed as a write's is (with concurrent writers, by a heartbeat), so
        # that no writer starting in the same millisecond takes it for its own instant.
        requested, heartbeat = failed_writes.start_instant(meta_client, Action.RESTORE,
                                                           plan.to_avro())  # fmt: skip
    # An interrupted restore stays pending, to be finished by restoring to the savepoint again.
    restore = Transaction(meta_client, failed_writes, requested, timeline, heartbeat)
    with restore.kept_pending():
        return _run_restore(meta_client, requested, plan, savepoint_time, started,
                            failed_writes.metadata_table)  # fmt: skip


def _run_restore(
    meta_client: HoodieTableMetaClient,
    requested: Instant,
    plan: RestorePlan,
    savepoint_time: str,
    started: float,
    metadata_table: bool = False,
) -> RestoreMetadata:
    if not metadata_table:
        turn_off_metadata_table(meta_client, f"restore to savepoint {savepoint_time}")
    inflight = meta_client.save_instant(requested.with_state(State.INFLIGHT))
    rollback = Rollback(meta_client)
    done: dict[str, list[RollbackMetadata]] = {}
    current = {(i.timestamp, i.action.value): i for i in meta_client.timeline()}
    for info in plan.instants_to_rollback:
        instant = current.get((info.commit_time, info.action))
        if instant is None and info.action in (Action.COMPACTION.value, Action.CLUSTERING.value):
            completed_as = Action(info.action).completes_as.value
            instant = current.get((info.commit_time, completed_as))
        if instant is None:
            continue  # undone before an interruption
        undo_plan = rollback.plan(instant)
        rollback.revert_to_inflight(instant)
        if metadata_table:  # what the record index must forget, read before the files go
            capture_for_undo(meta_client, inflight.timestamp, info, undo_plan)
        done[info.commit_time] = [rollback.undo(undo_plan, inflight.timestamp, time.monotonic())]
        rollback.forget(undo_plan)
        crash_point("restore.instant_undone")
    for later in meta_client.timeline():  # savepoints of commits that no longer exist
        if later.action is Action.SAVEPOINT and later.timestamp > savepoint_time:
            meta_client.delete_instant(later, (State.COMPLETED, State.INFLIGHT))
    crash_point("restore.instants_undone")
    metadata = RestoreMetadata(
        start_restore_time=inflight.timestamp,
        time_taken_in_millis=int((time.monotonic() - started) * 1000),
        instants_to_rollback=[i.commit_time for i in plan.instants_to_rollback],
        hoodie_restore_metadata=done,
        restore_instant_info=list(plan.instants_to_rollback),
    )
    content = metadata.to_avro()
    if metadata_table:  # the metadata table's delta commit first, as for a write
        changes = undone_record_index(meta_client, inflight.timestamp)
        update_metadata_table(meta_client, inflight, content, record_index=changes)
    meta_client.save_instant(inflight.with_state(State.COMPLETED), content)
    forget_undone(meta_client.storage, inflight.timestamp)
    return metadata


def refuse_pending_restore(meta_client: HoodieTableMetaClient, action: str) -> None:
    """Writes and compactions wait for an interrupted restore to be finished.

    Until then the table holds some of the commits the restore is undoing; a new instant built
    on them would survive the resumed restore (its plan lists only the instants that existed
    when it started), leaving data of undone commits in the table. Hudi refuses new commits
    for the same reason.
    """
    pending = [i for i in meta_client.timeline().pending if i.action is Action.RESTORE]
    if not pending:
        return
    requested = pending[0].with_state(State.REQUESTED)
    plan = meta_client.parse_instant(requested, RestorePlan.from_avro, "a restore plan (Avro)")
    savepoint = plan.savepoint_to_restore_timestamp or "its savepoint"
    raise TimelineError(
        f"cannot {action} table '{meta_client.name}': restore {requested.timestamp} to savepoint "
        f"{savepoint} was interrupted and the table is partly restored. Finish it first: "
        f"restore to {savepoint} again"
    )


def _refuse_archived_after(meta_client: HoodieTableMetaClient, savepoint_time: str) -> None:
    """A restore undoes instants from their metadata on the active timeline; commits archived
    beyond the savepoint (`hoodie.archive.beyond.savepoint`) have none left, so their files
    could not be found to roll back. Refuse before changing anything."""
    archived = sorted(
        {a.timestamp for a in meta_client.archived_instants() if a.timestamp > savepoint_time}
    )
    if archived:
        raise TimelineError(
            f"cannot restore table '{meta_client.name}' to savepoint {savepoint_time}: "
            f"{len(archived)} later instant(s) were archived beyond it ({archived[0]} .. "
            f"{archived[-1]}), and their files can no longer be rolled back. Restore needs "
            "them on the active timeline: archive with hoodie.archive.beyond.savepoint=false "
            "to keep them"
        )


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "dbt-hoodie"

"""Upgrade a table from version 6 (Apache Hudi 0.x's timeline) to version 8 (Hudi 1.x's).

Apache Hudi's `SixToEightUpgradeHandler` rolls back failed writes and compacts a
merge-on-read table (the client runner does that before calling here), then renames every
timeline file in place to layout 2 and converts the archived timeline to the LSM timeline, and
rewrites `hoodie.properties` last. In place, a reader listing `.hoodie/` midway would miss the
instants already moved. Here the steps are ordered so that no reader ever sees a half-upgraded
table:

1. *Build*: layout 2 is written beside layout 1, under `.hoodie/timeline/`, which no reader of
   a version 6 table lists (ours, hudi-rs, Hudi 0.x): every instant file is copied, a completed
   one named `<requested>_<completion>.<action>` and a completed write's metadata as Avro; the
   instants of `.hoodie/archived/` become the LSM timeline's first file.
2. *Switch*: `hoodie.properties` says version 8 (`HoodieTableMetaClient.replace_properties`,
   Hudi's backup protocol): from this one write on, every reader reads the new timeline.
3. *Finish*: the layout 1 files (`.hoodie/<instant>.<action>...`, `.hoodie/archived/`) go.

A crash in 1 leaves a version 6 table with part of a `.hoodie/timeline/`; the next upgrade
builds it again from nothing. A crash in 2 is the properties protocol's: readers find the old
file or the new one. A crash in 3 leaves a version 8 table with layout 1 leftovers no reader of
it lists; the next upgrade removes them.

Completion times. Hudi takes a completed instant file's modification time. So do we, kept
between the instant's own time and the next instant's: a copied table (modification times of
the copy) or a clock of another zone would otherwise order completions differently from the
instants, and a log file of version 6, named by its base instant, would join a later slice.
Inside that window the instants complete in the order version 6 readers saw them commit.
Archived instants have no file left: their own time stands in, as for any legacy instant.
The LSM entries carry no metadata: our version 6 archive keeps instant states only (readers of
the history need the completion times).
"""

from __future__ import annotations

import bisect
import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from .. import properties as props
from ..archived_timeline import (
    ARCHIVE_FOLDER,
    HISTORY_FOLDER,
    HistoryEntry,
    append_to_history,
    archived_instants,
)
from ..exceptions import HoodieError, TimelineError, UnsupportedTableError, malformed
from ..faults import crash_point
from ..merge import upgraded_merge_keys
from ..meta_client import PROPERTIES_FILE, HoodieTableMetaClient
from ..metadata import CommitMetadata
from ..storage import FileInfo, FileIO
from ..timeline import (
    INSTANT_FORMAT,
    LAYOUT_V1,
    LAYOUT_V2,
    WRITE_ACTIONS,
    Action,
    Instant,
    State,
    instant_to_datetime,
)
from ..transaction.metadata_table import turn_off_metadata_table
from ..transaction.metadata_writer import (
    FILES_PARTITION,
    MAINTAINED,
    MetadataTableWriter,
    upgraded_metadata_table_properties,
)

log = logging.getLogger(__name__)

TARGET_VERSION = 8
_TIMEZONE = props.TIMELINE_TIMEZONE
# Pending instants that carry over (their plans are the same Avro in both versions); any other
# pending instant is a write, a compaction or a restore, which must finish or be undone first.
_CARRIED_OVER = frozenset({Action.CLEAN, Action.ROLLBACK, Action.SAVEPOINT})


@dataclass(frozen=True)
class UpgradeResult:
    from_version: int
    to_version: int
    timeline_files: int  # instant files moved to the layout 2 timeline
    archived_instants: int  # completed instants moved to the LSM timeline
    leftovers_removed: int  # layout 1 files removed (0 if the table was upgraded already)


def upgrade_to_version_8(
    meta_client: HoodieTableMetaClient,
    keep_metadata_table: bool = False,
    partition_types: tuple[str, ...] = (),
) -> UpgradeResult:
    """Upgrade the table (failed writes rolled back and, on merge-on-read, its logs compacted by
    the caller); on a version 8 table, finish an upgrade that stopped before its last step.
    `keep_metadata_table` (`hoodie.metadata.enable`): a metadata table we keep, compacted by
    the caller, is upgraded with the table (`_upgrade_metadata_table`); otherwise, or where
    it cannot be, it is turned off, and the next write with it on builds it again. The key
    generator is named by class and by type (`TableProperties.to_dict`), and a custom key
    generator's partition fields get the writer's `partition_types` (`field:TYPE`), as Apache
    Hudi's upgrade takes them from its write config."""
    version = meta_client.properties.table_version
    if version == TARGET_VERSION:
        meta_client.discard_properties_backup()
        return UpgradeResult(version, version, 0, 0, _remove_layout_1(meta_client.storage))
    if version != 6:
        raise UnsupportedTableError(
            f"table '{meta_client.name}' is Hudi table version {version}; dbt-hoodie upgrades "
            f"table version 6 to {TARGET_VERSION} only"
        )
    storage = meta_client.storage
    files = _layout_1_files(storage)
    _refuse_pending(meta_client, [instant for instant, _ in files])
    # A metadata table is a table of the old version: upgraded first, while readers list
    # storage, or turned off, so that the new hoodie.properties does not list an old one.
    partitions = props.metadata_partitions(meta_client.properties.extra)
    kept = keep_metadata_table and _upgrade_metadata_table(meta_client)
    if not kept:
        turn_off_metadata_table(meta_client, f"upgrade to table version {TARGET_VERSION}")
    moved = _build(meta_client, files)
    crash_point("upgrade.timeline_built")
    if [info.name for _, info in _layout_1_files(storage)] != [info.name for _, info in files]:
        raise TimelineError(
            f"the timeline of table '{meta_client.name}' changed while it was being upgraded "
            "(another writer committed); nothing was switched: run the upgrade again once the "
            "table's writers have stopped"
        )
    extra = dict(meta_client.properties.extra)
    extra[props.INITIAL_VERSION] = str(version)
    # The merge keys as Apache Hudi 1.2's upgrade maps them (its upgradeMergeMode).
    merge_keys = upgraded_merge_keys(meta_client.properties)
    mode = merge_keys.pop(props.RECORD_MERGE_MODE)
    extra.update(merge_keys)
    if kept:  # readers list through it again from the switch on
        extra[props.METADATA_PARTITIONS] = ",".join(sorted(partitions))
        extra[props.METADATA_PARTITIONS_INFLIGHT] = ""
    stored = meta_client.properties
    custom = stored.key_generator_class == props.CUSTOM_KEYGEN
    typed = custom and not stored.partition_types and partition_types
    upgraded = replace(
        stored,
        table_version=TARGET_VERSION,
        timeline_layout_version=props.READABLE_VERSIONS[TARGET_VERSION],
        partition_types=partition_types if typed else stored.partition_types,
        record_merge_mode=mode,
        extra=extra,
    )
    meta_client.replace_properties(upgraded)  # readers switch to layout 2 here
    crash_point("upgrade.switched")
    return UpgradeResult(version, TARGET_VERSION, len(files), moved, _remove_layout_1(storage))


def _upgrade_metadata_table(meta_client: HoodieTableMetaClient) -> bool:
    """Upgrade the table's metadata table to version 8 as Apache Hudi 1.2 does (design 4.4):
    its timeline moved to layout 2 as the data table's is, its `hoodie.properties` rewritten
    (`upgraded_metadata_table_properties`). False where there is none we keep. Its log files
    keep their version 6 names (by base instant), which version 8 views place by that
    instant's completion time; the caller then compacts it at a version 8 instant, as Apache
    Hudi does before its first version 8 delta commit.

    Readers stop using it first (`files` listed as being built): until the data table's
    switch lists it again, they list storage, so no reader ever pairs a table and a metadata
    table of different versions. A crash in between leaves a version 6 table whose metadata
    table is being built: the next action turns it off and builds it again."""
    extra = meta_client.properties.extra
    completed = props.metadata_partitions(extra)
    if (FILES_PARTITION not in completed or not set(completed) <= set(MAINTAINED)
            or extra.get(props.METADATA_PARTITIONS_INFLIGHT, "").strip()):  # fmt: skip
        return False  # none, one with partitions we do not keep, or one being built
    writer = MetadataTableWriter.open_existing(meta_client)
    if writer is None:
        return False
    writer.roll_back_pending()
    try:  # carried over only if it reads: a damaged one is built again by the next write
        metadata = meta_client.table_metadata()
        if metadata is None or not metadata.all_partition_paths():
            return False
    except HoodieError as error:
        log.warning("table '%s': its metadata table is not carried over to version %d and is "
                    "turned off (the next write builds it again): %s",
                    meta_client.name, TARGET_VERSION, error)  # fmt: skip
        return False
    meta_client.set_metadata_partitions(completed=(), inflight=completed)
    crash_point("upgrade.metadata_table_hidden")
    mdt = writer.mdt
    files = _layout_1_files(mdt.storage)
    _build(mdt, files)
    stored = _read_properties(mdt.storage)
    mdt.storage.write_atomic(
        PROPERTIES_FILE,
        props.dumps(upgraded_metadata_table_properties(stored),
                    comment="Properties saved by dbt-hoodie").encode(),
    )  # fmt: skip
    crash_point("upgrade.metadata_table_switched")
    _remove_layout_1(mdt.storage)
    return True


def _read_properties(storage: FileIO) -> dict[str, str]:
    path = PROPERTIES_FILE
    with malformed(storage.uri(path), "the metadata table's properties"):
        return props.loads(storage.read_bytes(path).decode("utf-8"))


def _layout_1_files(storage: FileIO) -> list[tuple[Instant, FileInfo]]:
    found = LAYOUT_V1.instant_files(storage)
    return sorted(found, key=lambda f: (f[0].timestamp, f[0].state, f[1].name))


def _refuse_pending(meta_client: HoodieTableMetaClient, instants: list[Instant]) -> None:
    completed = {(i.timestamp, i.action.completes_as) for i in instants if i.is_completed}
    pending = sorted(
        {
            (i.timestamp, i.action.value)
            for i in instants
            if (i.timestamp, i.action.completes_as) not in completed
            and i.action not in _CARRIED_OVER
        }
    )
    if pending:
        names = ", ".join(f"{t} ({a})" for t, a in pending)
        raise TimelineError(
            f"table '{meta_client.name}' cannot be upgraded while {names} is pending: a write "
            "whose writer is still running (its heartbeat is live), a compaction or a restore "
            "must finish first (wait for the writer, or run hoodie_compact / hoodie_restore "
            "again); then run the upgrade again. Nothing was changed"
        )


def _build(meta_client: HoodieTableMetaClient, files: list[tuple[Instant, FileInfo]]) -> int:
    """Write the layout 2 timeline from scratch; the number of archived instants moved."""
    storage = meta_client.storage
    storage.delete_dir(LAYOUT_V2.folder)  # a crashed upgrade's partial build
    storage.makedirs(HISTORY_FOLDER)
    completion = _completion_times(meta_client, files)
    for instant, info in files:
        content = storage.read_bytes(info.relative_path)
        if instant.is_completed:
            if instant.action in WRITE_ACTIONS:
                with malformed(storage.uri(info.relative_path), "commit metadata (JSON)"):
                    content = _avro_commit(instant, content)
            done = completion[(instant.timestamp, instant.action)]
            instant = instant.with_state(State.COMPLETED, done)
        storage.write_atomic(LAYOUT_V2.path(instant), content)
        crash_point("upgrade.instant_copied")
    archived = [
        HistoryEntry(a.timestamp, a.timestamp, a.action, None, None)
        for a in archived_instants(storage, LAYOUT_V1)
        if a.state == State.COMPLETED.name
    ]
    if archived:
        append_to_history(storage, archived)
    return len(archived)


def _avro_commit(instant: Instant, content: bytes) -> bytes:
    metadata = CommitMetadata.parse(content)
    if instant.action is Action.REPLACE_COMMIT and metadata.partition_to_replace_file_ids is None:
        metadata.partition_to_replace_file_ids = {}
    return metadata.to_avro()


def _completion_times(
    meta_client: HoodieTableMetaClient, files: list[tuple[Instant, FileInfo]]
) -> dict[tuple[str, Action], str]:
    """Each completed instant's completion time: its file's modification time, kept at or after
    the instant and before the next instant (see the module docstring). Keyed by time and
    action: a savepoint has the time of the commit it pins."""
    local = (meta_client.properties.extra.get(_TIMEZONE) or "UTC").upper() == "LOCAL"
    times = sorted({_moment(i.timestamp) for i, _ in files})
    completion = {}
    for instant, info in files:
        if not instant.is_completed:
            continue
        requested = _moment(instant.timestamp)
        modified = meta_client.storage.mtime(info.relative_path)
        if modified is not None and local:  # the table's instants are in local time
            modified = modified.astimezone().replace(tzinfo=timezone.utc)
        done = max(modified or requested, requested)
        following = bisect.bisect_right(times, requested)
        if following < len(times):
            done = min(done, times[following] - timedelta(milliseconds=1))
        completion[(instant.timestamp, instant.action)] = _format(done)
    return completion


def _moment(timestamp: str) -> datetime:
    """An instant's time; the earliest moment for a metadata table's initialization instants
    (`00000000000000` and a suffix, before any real one)."""
    try:
        return instant_to_datetime(timestamp)
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)


def _format(moment: datetime) -> str:
    return moment.strftime(INSTANT_FORMAT) + f"{moment.microsecond // 1000:03d}"


def _remove_layout_1(storage: FileIO) -> int:
    """Remove the layout 1 timeline and archive of an upgraded table, oldest instant first and
    each instant's completed file last (as archival removes instants)."""
    files = _layout_1_files(storage)
    for _, info in files:
        storage.delete(info.relative_path)
        crash_point("upgrade.layout_1_file_removed")
    archive = storage.list_files(ARCHIVE_FOLDER)
    storage.delete_dir(ARCHIVE_FOLDER)
    return len(files) + len(archive)

"""Archival: keep the active timeline short by moving old instants to `.hoodie/archived/`.

Every reader lists `.hoodie/` and every writer reads recent commit metadata, so the active
timeline must stay bounded. When it holds more than `hoodie.keep.max.commits` (30) completed
writes, the oldest instants go until `hoodie.keep.min.commits` (20) remain, as Hudi's timeline
archiver does. Archived instants are written first, as `HoodieArchivedMetaEntry` records in an
Avro data block of a log file `.hoodie/archived/.commits_.archive.<n>_<token>`, then their
files leave `.hoodie/`, oldest instant first and each instant's completed file last. A crash
in between leaves the newer of those instants on the active timeline as well (readers see no
hole in it), until an archival reaches them again and archives them twice, which readers of
the archive tolerate: each instant is listed once, and from the active timeline while it is
there (`HoodieTable.history`). On a table version 8 timeline the archived instants go to Hudi
1.x's LSM timeline instead (`.hoodie/timeline/history/`: a parquet file of the instants, a new
manifest, `_version_`), in the same order with the same crash behaviour.

Never archived: anything at or after the first pending instant, the first savepoint, the
earliest commit the latest clean retained, a replace commit whose replaced file groups no clean
has deleted yet, or (merge-on-read with inline compaction) the latest compaction and the delta
commits since, which the trigger counts. With
`hoodie.archive.beyond.savepoint=true` archival goes past savepoints instead, keeping only the
savepoints and their commits on the active timeline (holes readers handle:
`fs_view.timeline_start`). Files of archived commits stay visible: readers count instants
older than the active timeline as committed (`fs_view.CommittedInstants`).

The archive's file format, and its reading, are `archived_timeline.py`.
"""

from __future__ import annotations

import io
import itertools
import json
import posixpath
from typing import cast

import fastavro

from ..archived_timeline import (
    ARCHIVE_FOLDER,
    ENTRY_SCHEMA,
    PARSED_ENTRY_SCHEMA,
    HistoryEntry,
    append_to_history,
    archive_file_versions,
)
from ..avro_metadata import AvroRecord
from ..config import option_default
from ..exceptions import malformed
from ..faults import crash_point
from ..logformat import BLOCK_CONTENT_VERSION, BlockType, HeaderKey, encode_block
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata
from ..timeline import Action, Instant, State, Timeline
from ..transaction.metadata_table import turn_off_metadata_table
from .compaction import earliest_instant_to_retain_for_compaction


def archive(
    meta_client: HoodieTableMetaClient,
    keep_min: int = cast(int, option_default("keep_min_commits")),
    keep_max: int = cast(int, option_default("keep_max_commits")),
    beyond_savepoint: bool = cast(bool, option_default("archive_beyond_savepoint")),
    max_delta_commits: int | None = cast(int, option_default("compaction_delta_commits")),
    keep_metadata_table: bool = False,
    retain_from: str | None = None,
) -> list[Instant]:
    """Archive old instants if the active timeline holds more than `keep_max` writes.

    `keep_metadata_table`: `hoodie.metadata.enable=true`: archival changes no file, so the
    metadata table we keep stays as it is, and no instant goes that its latest compaction has
    not folded in (`metadata_table_bound`); otherwise it is turned off as before any action.

    `retain_from`: no instant at or after it goes (a metadata table's timeline keeps what
    its data table's active timeline holds).

    `max_delta_commits`: the inline compaction trigger's, whose delta commits a merge-on-read
    table keeps; None when inline compaction is off (compaction on demand counts nothing).
    """
    timeline = meta_client.timeline()
    writes = timeline.completed.write_timeline.instants
    if len(writes) <= keep_max:
        return []
    savepointed = set(timeline.savepoint_times())
    bounds = [writes[-keep_min].timestamp]
    bounds += [i.timestamp for i in timeline.pending][:1]
    if not beyond_savepoint:
        bounds += sorted(savepointed)[:1]
    retained = meta_client.earliest_commit_to_retain()
    if retained:
        bounds.append(retained)
    # A replace commit (clustering, insert overwrite) whose replaced file groups no clean has
    # deleted yet (the cleaner deletes those of replace commits older than its retained
    # commit) stays: archived, readers would see the replaced groups again.
    uncleaned = [
        i.timestamp
        for i in writes
        if i.action is Action.REPLACE_COMMIT and (not retained or i.timestamp >= retained)
    ]
    bounds += uncleaned[:1]
    if meta_client.merge_on_read and max_delta_commits is not None:
        for_compaction = earliest_instant_to_retain_for_compaction(timeline, max_delta_commits)
        bounds += [for_compaction] if for_compaction else []
    if retain_from is not None:
        bounds.append(retain_from)
    if keep_metadata_table:
        held = metadata_table_bound(meta_client, timeline)
        if held == NOTHING:
            return []
        bounds += [held] if held else []
    bound = min(bounds)
    old = [i for i in timeline.completed if i.timestamp < bound and i.timestamp not in savepointed]
    if not old:
        return []
    if not keep_metadata_table:
        turn_off_metadata_table(meta_client, "archival")
    # Every state file of those instants; a compaction's requested and inflight files are
    # named `compaction` though the completed instant is a `commit`.
    wanted = {(i.timestamp, i.action) for i in old}
    files = []
    layout = meta_client.layout
    for found, info in layout.instant_files(meta_client.storage):
        if (found.timestamp, found.action.completes_as) in wanted:
            files.append((found.state, info.name, found))
    files.sort(key=lambda f: (f[2].timestamp, f[0]))  # oldest state first, per instant
    if layout.version >= 2:
        append_to_history(meta_client.storage, _history_entries(meta_client, old, files))
        crash_point("archive.written")
        _remove(meta_client, files)
        return old
    entries = [
        {
            "commitTime": found.timestamp,
            "actionType": found.action.value,
            "version": 1,
            "actionState": found.state.name,
            "hoodieCommitMetadata": _commit_metadata(meta_client, state, name, found),
        }
        for state, name, found in files
    ]
    _write_archive_file(meta_client, entries)
    crash_point("archive.written")
    _remove(meta_client, files)
    return old


NOTHING = ""  # `metadata_table_bound`: archive nothing


def metadata_table_bound(meta_client: HoodieTableMetaClient, timeline: Timeline) -> str | None:
    """The oldest data instant archival must keep for the table's metadata table (Apache
    Hudi's archiver, rule 4): readers count an MDT log block only while its data instant is
    on the active timeline, so only instants whose blocks the MDT's latest compaction folded
    into base files may go: those completed before it. `NOTHING` while the MDT has no
    compaction; None where the table has no metadata table."""
    metadata = meta_client.table_metadata(timeline)
    if metadata is None:
        return None
    compactions = [i for i in metadata.timeline.completed if i.action is Action.COMMIT]
    if not compactions:
        return NOTHING
    compacted = compactions[-1].timestamp
    later = [
        i.timestamp for i in timeline.completed
        if (i.completion_time or i.timestamp) > compacted
    ]  # fmt: skip
    return min([compacted, *later])


def _commit_metadata(
    meta_client: HoodieTableMetaClient, state: State, name: str, found: Instant
) -> AvroRecord | None:
    """A completed commit's or delta commit's metadata as the v6 archive entry's Avro record,
    as Apache Hudi's archiver writes it (its archived timeline reads it back as the instant's
    details); None for other instants and states."""
    if state is not State.COMPLETED or found.action not in (Action.COMMIT, Action.DELTA_COMMIT):
        return None
    path = posixpath.join(meta_client.layout.folder, name)
    content = meta_client.storage.read_bytes(path)
    with malformed(meta_client.storage.uri(path), "commit metadata"):
        return CommitMetadata.parse(content).to_avro_record()


def _remove(meta_client: HoodieTableMetaClient, files: list[tuple[State, str, Instant]]) -> None:
    for _, removed in itertools.groupby(files, key=lambda f: f[2].timestamp):
        # Requested and inflight go before completed: the instant stays completed until its
        # last file goes, for readers listing the timeline meanwhile.
        for _, name, _ in removed:
            meta_client.storage.delete(posixpath.join(meta_client.layout.folder, name))
        crash_point("archive.instant_removed")


def _history_entries(
    meta_client: HoodieTableMetaClient,
    old: list[Instant],
    files: list[tuple[State, str, Instant]],
) -> list[HistoryEntry]:
    """Layout 2: each archived instant with its completed and requested files' content."""
    folder = meta_client.layout.folder
    requested = {found.timestamp: name for state, name, found in files if state is State.REQUESTED}
    entries = []
    for instant in old:
        plan = None
        if instant.timestamp in requested:
            plan = meta_client.storage.read_bytes(
                posixpath.join(folder, requested[instant.timestamp])
            )
        entries.append(
            HistoryEntry(
                instant.timestamp,
                instant.completion_time,
                instant.action.completes_as.value,
                meta_client.instant_content(instant),
                plan or None,
            )
        )
    return entries


def _write_archive_file(meta_client: HoodieTableMetaClient, entries: list[AvroRecord]) -> None:
    versions = archive_file_versions(meta_client.storage)
    name = f".commits_.archive.{max(versions, default=0) + 1}_1-0-1"
    body = bytearray(BLOCK_CONTENT_VERSION.to_bytes(4, "big") + len(entries).to_bytes(4, "big"))
    for entry in entries:
        record = io.BytesIO()
        fastavro.schemaless_writer(record, PARSED_ENTRY_SCHEMA, entry)
        body += len(record.getvalue()).to_bytes(4, "big") + record.getvalue()
    header = {HeaderKey.SCHEMA: json.dumps(ENTRY_SCHEMA)}
    meta_client.storage.write_atomic(
        posixpath.join(ARCHIVE_FOLDER, name), encode_block(BlockType.AVRO_DATA, header, bytes(body))
    )

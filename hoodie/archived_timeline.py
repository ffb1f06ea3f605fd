"""The archived timeline: instants moved off the active timeline by archival.

Archival (`table_services/archival.py`) writes these files; readers of history and of time
travel read them. Two formats, one per timeline layout:

- layout 1 (table version 6): `.hoodie/archived/`, Hudi log files `.commits_.archive.<n>_<token>`
  of Avro data blocks of `HoodieArchivedMetaEntry` records. The entries carry the instant
  (time, action, state) and, for completed commits and delta commits, their commit metadata
  (`hoodieCommitMetadata`: Apache Hudi's archived timeline reads it, e.g. `CALL
  show_archived_commits`, which failed on entries without it); the other per-action metadata
  fields, all optional in Hudi's schema, are left null by our archival.
- layout 2 (table versions 8 and 9): Hudi 1.x's LSM timeline in `.hoodie/timeline/history/`:
  parquet files `<min>_<max>_<level>.parquet` of completed instants (`instantTime`,
  `completionTime`, `action`, and the instant's metadata and plan as bytes); `manifest_<n>`
  (JSON: `{"files": [{"fileName": ..., "fileLen": ...}]}`) lists the files of snapshot n, and
  `_version_` holds the latest n. Compaction of the tree writes new files and a new manifest,
  so only the files the latest manifest lists are the timeline; older ones await cleaning.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

import fastavro
import pyarrow as pa

from .exceptions import malformed
from .logformat import BlockType, read_log_file
from .metadata import COMMIT_SCHEMA_JSON
from .storage import FileIO
from .timeline import METAFOLDER, TIMELINE_FOLDER_V2, TimelineLayout

ARCHIVE_FOLDER = posixpath.join(METAFOLDER, "archived")
HISTORY_FOLDER = posixpath.join(TIMELINE_FOLDER_V2, "history")
HISTORY_VERSION_FILE = posixpath.join(HISTORY_FOLDER, "_version_")
HISTORY_MANIFEST = re.compile(r"^manifest_(\d+)$")
ARCHIVE_FILE = re.compile(r"^\.commits_\.archive\.(\d+)_\d+-\d+-\d+$")
ENTRY_SCHEMA = {
    "type": "record",
    "name": "HoodieArchivedMetaEntry",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "commitTime", "type": ["null", "string"], "default": None},
        {"name": "actionType", "type": ["null", "string"], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "actionState", "type": ["null", "string"], "default": None},
        {"name": "hoodieCommitMetadata", "type": ["null", COMMIT_SCHEMA_JSON], "default": None},
    ],
}
PARSED_ENTRY_SCHEMA = fastavro.parse_schema(ENTRY_SCHEMA)


@dataclass(frozen=True)
class ArchivedInstant:
    timestamp: str
    action: str
    state: str
    completion_time: str | None = None  # layout 2 only


def archive_file_versions(storage: FileIO) -> list[int]:
    """The `<n>` of every archive file, so that a new one takes the next."""
    return [
        int(m.group(1))
        for info in storage.list_files(ARCHIVE_FOLDER)
        if (m := ARCHIVE_FILE.match(info.name))
    ]


def archived_instants(storage: FileIO, layout: TimelineLayout) -> list[ArchivedInstant]:
    """The archived instants of a table whose active timeline has `layout`, oldest first."""
    if layout.version >= 2:
        return history_instants(storage)
    return _archive_log_instants(storage)


def history_instants(storage: FileIO) -> list[ArchivedInstant]:
    """The completed instants of the LSM timeline's latest snapshot (layout 2)."""
    manifest = _latest_manifest(storage)
    if manifest is None:
        return []
    manifest_path = posixpath.join(HISTORY_FOLDER, manifest)
    with malformed(storage.uri(manifest_path), "an LSM timeline manifest (JSON)"):
        listed = json.loads(storage.read_text(manifest_path))
        names = [entry["fileName"] for entry in listed.get("files") or []]
    found: dict[str, ArchivedInstant] = {}
    for name in names:
        path = posixpath.join(HISTORY_FOLDER, name)
        with malformed(storage.uri(path), "an LSM timeline file (parquet)"):
            rows = storage.read_parquet(path, columns=["instantTime", "completionTime", "action"])
        for row in rows.to_pylist():
            timestamp = row.get("instantTime") or ""
            found[timestamp] = ArchivedInstant(
                timestamp, row.get("action") or "", "COMPLETED", row.get("completionTime")
            )
    return sorted(found.values(), key=lambda i: i.timestamp)


# The LSM timeline's rows: Hudi's `HoodieLSMTimelineInstant` as parquet.
HISTORY_SCHEMA = pa.schema(
    [
        pa.field("instantTime", pa.string()),
        pa.field("completionTime", pa.string()),
        pa.field("action", pa.string()),
        pa.field("metadata", pa.binary()),
        pa.field("plan", pa.binary()),
        pa.field("version", pa.int32(), nullable=False),
    ]
)


@dataclass(frozen=True)
class HistoryEntry:
    """A completed instant as the LSM timeline keeps it: its completed file's content as
    `metadata`, and its requested file's (a clean's or compaction's plan) as `plan`."""

    instant_time: str
    completion_time: str | None
    action: str
    metadata: bytes | None
    plan: bytes | None


def append_to_history(storage: FileIO, entries: list[HistoryEntry]) -> str:
    """Add the entries as one level-0 file, then a manifest naming it with the files of the
    latest one, then `_version_`: until that last write readers see the snapshot before (a
    crash before it leaves a file no manifest lists, which readers ignore). The file's name."""
    entries = sorted(entries, key=lambda e: e.instant_time)
    current = _latest_manifest(storage)
    files = []
    if current is not None:
        manifest_path = posixpath.join(HISTORY_FOLDER, current)
        with malformed(storage.uri(manifest_path), "an LSM timeline manifest (JSON)"):
            files = json.loads(storage.read_text(manifest_path))["files"]
    name = f"{entries[0].instant_time}_{entries[-1].instant_time}_0.parquet"
    rows = pa.table(
        {
            "instantTime": [e.instant_time for e in entries],
            "completionTime": [e.completion_time for e in entries],
            "action": [e.action for e in entries],
            "metadata": [e.metadata for e in entries],
            "plan": [e.plan for e in entries],
            "version": [1] * len(entries),
        },
        schema=HISTORY_SCHEMA,
    )
    size = storage.write_parquet(posixpath.join(HISTORY_FOLDER, name), rows, "snappy")
    files = [f for f in files if f.get("fileName") != name] + [{"fileName": name, "fileLen": size}]
    version = int(current.rsplit("_", 1)[1]) + 1 if current is not None else 1
    manifest = json.dumps({"files": files}, indent=2).encode()
    storage.write_atomic(posixpath.join(HISTORY_FOLDER, f"manifest_{version}"), manifest)
    storage.write_atomic(HISTORY_VERSION_FILE, str(version).encode())
    return name


def _latest_manifest(storage: FileIO) -> str | None:
    """`manifest_<n>` of `_version_`; without one (the first archival stopped between its
    manifest and `_version_`), the largest n listed, as Hudi's reader falls back: its
    instants may then also still be on the active timeline, which readers tolerate."""
    try:
        with malformed(storage.uri(HISTORY_VERSION_FILE), "the LSM timeline's version number"):
            return f"manifest_{int(storage.read_text(HISTORY_VERSION_FILE).strip())}"
    except FileNotFoundError:
        versions = [
            int(m.group(1))
            for info in storage.list_files(HISTORY_FOLDER)
            if (m := HISTORY_MANIFEST.match(info.name))
        ]
        return f"manifest_{max(versions)}" if versions else None


def _archive_log_instants(storage: FileIO) -> list[ArchivedInstant]:
    """Instants in `.hoodie/archived/` (one entry per instant and state, oldest first).

    An archival that crashed after writing its file and before removing the instants from
    `.hoodie/` archives them again next time: each instant and state is listed once.
    """
    seen: dict[tuple[str, str, str], ArchivedInstant] = {}
    for info in storage.list_files(ARCHIVE_FOLDER):
        if not ARCHIVE_FILE.match(info.name):
            continue
        with malformed(storage.uri(info.relative_path), "an archive log file"):
            entries = [
                entry
                for block in read_log_file(storage, info.relative_path)
                if block.block_type is BlockType.AVRO_DATA
                for entry in block.records().to_pylist()
            ]
        for entry in entries:
                instant = ArchivedInstant(
                    entry.get("commitTime") or "",
                    entry.get("actionType") or "",
                    entry.get("actionState") or "COMPLETED",
                )
                seen[(instant.timestamp, instant.action, instant.state)] = instant
    return sorted(seen.values(), key=lambda i: (i.timestamp, i.action, i.state))

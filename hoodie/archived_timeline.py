"""The archived timeline: instants moved out of `.hoodie/` into `.hoodie/archived/`.

Archival (`table_services/archival.py`) writes these files; readers of history and of time
travel read them. Each file is a Hudi log file `.commits_.archive.<n>_<token>` of Avro data
blocks of `HoodieArchivedMetaEntry` records. The entries carry the instant (time, action,
state); the per-action metadata fields, all optional in Hudi's schema, are left null.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

import fastavro

from .logformat import BlockType, read_log_file
from .storage import Storage
from .timeline import METAFOLDER

ARCHIVE_FOLDER = posixpath.join(METAFOLDER, "archived")
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
    ],
}
PARSED_ENTRY_SCHEMA = fastavro.parse_schema(ENTRY_SCHEMA)


@dataclass(frozen=True)
class ArchivedInstant:
    timestamp: str
    action: str
    state: str


def archive_file_versions(storage: Storage) -> list[int]:
    """The `<n>` of every archive file, so that a new one takes the next."""
    return [
        int(m.group(1))
        for info in storage.list_files(ARCHIVE_FOLDER)
        if (m := ARCHIVE_FILE.match(info.name))
    ]


def archived_instants(storage: Storage) -> list[ArchivedInstant]:
    """Instants in `.hoodie/archived/` (one entry per instant and state, oldest first).

    An archival that crashed after writing its file and before removing the instants from
    `.hoodie/` archives them again next time: each instant and state is listed once.
    """
    seen: dict[tuple[str, str, str], ArchivedInstant] = {}
    for info in storage.list_files(ARCHIVE_FOLDER):
        if not ARCHIVE_FILE.match(info.name):
            continue
        for block in read_log_file(storage, info.relative_path):
            if block.block_type is not BlockType.AVRO_DATA:
                continue
            for entry in block.records().to_pylist():
                instant = ArchivedInstant(
                    entry.get("commitTime") or "",
                    entry.get("actionType") or "",
                    entry.get("actionState") or "COMPLETED",
                )
                seen[(instant.timestamp, instant.action, instant.state)] = instant
    return sorted(seen.values(), key=lambda i: (i.timestamp, i.action, i.state))

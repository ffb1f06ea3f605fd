"""Write markers: every data file a write creates is announced first, under `.hoodie/.temp/`.

A task creates `.hoodie/.temp/<instant>/<partition>/<file name>.marker.<IO type>` before it
writes the file (Hudi's DIRECT markers). So the set of files an instant may have left behind is
known without listing the table, whether the write completes (finalize deletes marked files no
write stat names: retried or speculative tasks), fails (its files are deleted) or crashes (the
next writer's rollback reads the markers). The marker folder goes once the instant completes.

IO types: CREATE (a new file group's first base file), MERGE (a new version of an existing
group's base file, also compaction's output), APPEND (a merge-on-read log file). Hudi 0.x names
an APPEND marker after a base file name; we name it after the log file itself, as Hudi 1.x
does, so a rollback knows the exact file.
"""

from __future__ import annotations

import enum
import posixpath
from dataclasses import dataclass

from .metadata import CommitMetadata
from .storage import FileIO
from .timeline import METAFOLDER

MARKER_FOLDER = posixpath.join(METAFOLDER, ".temp")
_SUFFIX = ".marker."


class IOType(str, enum.Enum):
    CREATE = "CREATE"
    MERGE = "MERGE"
    APPEND = "APPEND"


@dataclass(frozen=True)
class Marker:
    data_file: str  # relative to the table's base path
    io_type: IOType


@dataclass(frozen=True)
class WriteMarkers:
    """The markers of one instant. Picklable: write tasks create markers through it."""

    storage: FileIO
    instant: str

    @property
    def folder(self) -> str:
        return posixpath.join(MARKER_FOLDER, self.instant)

    def create(self, data_file: str, io_type: IOType) -> None:
        """Announce `data_file` (relative path); call before the file is created."""
        self.storage.create_if_absent(
            posixpath.join(self.folder, f"{data_file}{_SUFFIX}{io_type.value}"), b""
        )

    def all(self) -> list[Marker]:
        """Every marked data file of the instant (empty when it wrote none, or markers are gone)."""
        prefix = self.folder + "/"
        out = []
        for info in self.storage.list_files(self.folder, recursive=True):
            name = info.relative_path[len(prefix) :]
            data_file, sep, io_type = name.rpartition(_SUFFIX)
            if sep and io_type in IOType.__members__:
                out.append(Marker(data_file, IOType(io_type)))
        return sorted(out, key=lambda m: m.data_file)

    def delete_all(self) -> None:
        self.storage.delete_dir(self.folder)

    def delete_marked_files(self) -> None:
        """Undo an attempt: every file it marked, then the markers (a table service's failed
        or crashed attempt, whose next attempt starts from its plan alone)."""
        for marker in self.all():
            self.storage.delete(marker.data_file)
        self.delete_all()

    def delete_strays(self, metadata: CommitMetadata) -> None:
        """Delete the marked files no write stat of `metadata` names (retried or speculative
        tasks' files), before the instant completes."""
        named = {path for s in metadata.write_stats() for path in s.written_files()}
        for marker in self.all():
            if marker.data_file not in named:
                self.storage.delete(marker.data_file)

"""The file-system view: which file groups and file slices a table has as of an instant.

Files on disk are only candidates. A base file counts when the instant in its name is a
completed write instant on the timeline (at or before the view's instant), and its file group
was not replaced by a completed replace commit. That rule is what hides the files of crashed or
in-progress writes from every reader.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from .metadata import CommitMetadata
from .naming import is_partition_metadata, parse_base_file_name, parse_log_file_name
from .storage import FileInfo, Storage
from .timeline import METAFOLDER, Action, Timeline


@dataclass(frozen=True)
class BaseFile:
    partition_path: str
    file_id: str
    instant: str
    name: str
    size: int

    @property
    def relative_path(self) -> str:
        return posixpath.join(self.partition_path, self.name) if self.partition_path else self.name


@dataclass(frozen=True)
class LogFile:
    partition_path: str
    file_id: str
    base_instant: str
    version: int
    name: str
    size: int

    @property
    def relative_path(self) -> str:
        return posixpath.join(self.partition_path, self.name) if self.partition_path else self.name


@dataclass
class FileSlice:
    """A version of a file group: a base file plus (merge-on-read) the log files after it."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: list[LogFile] = field(default_factory=list)


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    slices: list[FileSlice] = field(default_factory=list)  # oldest first

    @property
    def latest_slice(self) -> FileSlice | None:
        return self.slices[-1] if self.slices else None


class FileSystemView:
    """File groups of a table as of `as_of` (default: the latest completed instant)."""

    def __init__(self, storage: Storage, timeline: Timeline, as_of: str | None = None):
        self.storage = storage
        completed = timeline.completed.write_timeline
        if as_of is not None:
            completed = completed.before_or_at(as_of)
        self.timeline = completed
        self._committed = set(completed.timestamps())

    @cached_property
    def replaced_file_ids(self) -> set[tuple[str, str]]:
        """(partition, fileId) pairs that completed replace commits took out of the table."""
        replaced: set[tuple[str, str]] = set()
        for instant in self.timeline:
            if instant.action is not Action.REPLACE_COMMIT:
                continue
            meta = CommitMetadata.from_json(self.storage.read_bytes(
                posixpath.join(METAFOLDER, instant.file_name)
            ))  # fmt: skip
            for partition, file_ids in (meta.partition_to_replace_file_ids or {}).items():
                replaced.update((partition, fid) for fid in file_ids)
        return replaced

    @cached_property
    def _all_files(self) -> list[FileInfo]:
        return [
            f
            for f in self.storage.list_files("", recursive=True)
            if not f.relative_path.startswith(METAFOLDER + "/")
        ]

    def partitions(self) -> list[str]:
        """Partition paths holding a `.hoodie_partition_metadata` file ('' if unpartitioned)."""
        found = {f.parent for f in self._all_files if is_partition_metadata(f.name)}
        return sorted(found)

    def file_groups(self, partitions: list[str] | None = None) -> list[FileGroup]:
        if partitions is None:
            files = self._all_files
        else:
            files = [f for p in partitions for f in self.storage.list_files(p)]
        groups: dict[tuple[str, str], FileGroup] = {}
        slices: dict[tuple[str, str, str], FileSlice] = {}
        logs: dict[tuple[str, str], list[LogFile]] = defaultdict(list)
        for info in files:
            partition = info.parent
            base = parse_base_file_name(info.name)
            if base is not None:
                if base.instant not in self._committed:
                    continue
                if (partition, base.file_id) in self.replaced_file_ids:
                    continue
                key = (partition, base.file_id)
                group = groups.setdefault(key, FileGroup(partition, base.file_id))
                file_slice = FileSlice(partition, base.file_id, base.instant)
                file_slice.base_file = BaseFile(
                    partition, base.file_id, base.instant, info.name, info.size
                )
                slices[(partition, base.file_id, base.instant)] = file_slice
                group.slices.append(file_slice)
                continue
            log = parse_log_file_name(info.name)
            if log is not None:
                logs[(partition, log.file_id)].append(
                    LogFile(partition, log.file_id, log.base_instant, log.version, info.name,
                            info.size)
                )  # fmt: skip
        for (partition, file_id), entries in logs.items():
            if (partition, file_id) in self.replaced_file_ids:
                continue
            group = groups.setdefault((partition, file_id), FileGroup(partition, file_id))
            for log in sorted(entries, key=lambda lf: (lf.base_instant, lf.version)):
                key = (partition, file_id, log.base_instant)
                if key not in slices:
                    slices[key] = FileSlice(partition, file_id, log.base_instant)
                    group.slices.append(slices[key])
                slices[key].log_files.append(log)
        for group in groups.values():
            group.slices.sort(key=lambda s: s.base_instant)
        return sorted(groups.values(), key=lambda g: (g.partition_path, g.file_id))

    def latest_base_files(self, partitions: list[str] | None = None) -> list[BaseFile]:
        out = []
        for group in self.file_groups(partitions):
            for file_slice in reversed(group.slices):
                if file_slice.base_file is not None:
                    out.append(file_slice.base_file)
                    break
        return out

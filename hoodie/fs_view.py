"""The file-system view: which file groups and file slices a table has as of an instant.

Files on disk are only candidates. A base file counts when the instant in its name is a
completed write instant on the timeline (at or before the view's instant), and its file group
was not replaced by a completed replace commit. That rule is what hides the files of crashed or
in-progress writes from every reader.

Two refinements make that rule Apache Hudi's (`HoodieTableFileSystemView`):
- instants older than the active timeline count as committed (`CommittedInstants`): archival
  moves old commits to `.hoodie/archived/`, but the files they wrote stay the latest version
  of every file group no later commit touched;
- log files written while a compaction is pending name that compaction's instant as their
  base instant, though its base file does not exist yet: until the compaction completes they
  belong to the slice before it (Hudi's `getLatestMergedFileSlicesBeforeOrOn`).

Which slice a log file belongs to depends on the timeline layout. In layout 1 (table version 6)
its name carries the slice's base instant. In layout 2 (table versions 8 and 9) its name
carries the instant of the delta commit that wrote it, and the slice is the one with the latest
base instant at or before that delta commit's completion time: a delta commit that completed
after a compaction was requested wrote changes the compaction did not see, so they belong after
its base file (Hudi 1.x's non-blocking concurrency, RFC-66).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NoReturn, Protocol

from .avro_metadata import RollbackPlan
from .exceptions import (
    PARSE_ERRORS,
    CorruptDataFileError,
    HoodieError,
    MissingDataFileError,
    is_storage_trouble,
    malformed,
)
from .logformat import BlockType, LogBlock, read_log_file
from .metadata import CommitMetadata
from .naming import (
    BASE_FILE_EXTENSION,
    marks_partition,
    parse_base_file_name,
    parse_log_file_name,
)
from .partition_paths import check_data_file
from .storage import FileInfo, FileIO
from .timeline import LAYOUT_V1, METAFOLDER, Action, Instant, State, Timeline, layout_of

# Commit metadata files read at once by a view checking its slices (small reads).
_METADATA_THREADS = 8


def timeline_start(timeline: Timeline) -> str | None:
    """The first completed write of the active timeline that no savepoint kept there.

    Archiving beyond a savepoint (`hoodie.archive.beyond.savepoint`) keeps savepointed commits
    on the active timeline while archiving the commits after them; those commits are older
    than this instant, and the savepointed ones before it are islands. Without savepoints it
    is simply the first completed write.
    """
    writes = timeline.completed.write_timeline.timestamps()
    savepointed = set(timeline.completed.savepoint_times())
    rest = [t for t in writes if t not in savepointed]
    if rest:
        return rest[0]
    return writes[0] if writes else None


@dataclass(frozen=True)
class CommittedInstants:
    """The instants whose writes a reader may see: `instant in committed`.

    A completed write instant at or before the read's instant, or an instant older than the
    first completed write on the active timeline, as Hudi's `containsOrBeforeTimelineStarts`:
    Hudi archives old instants (`hoodie.keep.max.commits`, 30 by default) and only completed
    ones, so a file or log block from before the timeline's start was written by a completed,
    archived commit. Without this, every file group untouched since its commit was archived
    vanished from our reads. As an extra guard Hudi's log scanner also applies, an instant
    still on the timeline in a non-completed state never counts. With
    `hoodie.archive.beyond.savepoint=true` archival skips savepointed commits and leaves holes:
    the timeline then starts at its first commit that is not savepointed (Hudi's
    `getFirstNonSavepointCommit`). Picklable: slice-reading tasks get it in their input
    partition.
    """

    completed: frozenset[str]
    timeline_start: str | None = None
    pending: frozenset[str] = frozenset()
    as_of: str | None = None
    layout_version: int = 1  # where a task finds the timeline (rollback plans)

    @classmethod
    def of(cls, timeline: Timeline, as_of: str | None = None) -> CommittedInstants:
        writes = timeline.completed.write_timeline
        first = timeline_start(timeline)
        if as_of is not None:
            writes = writes.before_or_at(as_of)
        return cls(
            completed=frozenset(writes.timestamps()),
            timeline_start=first,
            pending=frozenset(timeline.pending.timestamps()),
            as_of=as_of,
            layout_version=timeline.layout.version,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "completed": sorted(self.completed),
            "timeline_start": self.timeline_start,
            "pending": sorted(self.pending),
            "as_of": self.as_of,
            "layout_version": self.layout_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CommittedInstants:
        return cls(
            completed=frozenset(data["completed"]),
            timeline_start=data["timeline_start"],
            pending=frozenset(data["pending"]),
            as_of=data["as_of"],
            layout_version=data["layout_version"],
        )

    def __contains__(self, instant: object) -> bool:
        if instant in self.completed:
            return True
        return (
            isinstance(instant, str)
            and self.timeline_start is not None
            and instant < self.timeline_start
            and instant not in self.pending
            and (self.as_of is None or instant <= self.as_of)
        )


def listed_log_blocks(storage: FileIO, relative: str, committed: Container[str]) -> list[LogBlock]:
    """The blocks of a log file a view listed, or none if it has since been rolled back.

    A view lists the log files of writes still running too (their blocks do not count, see
    `committed`); with concurrent writers such a write may fail and be rolled back, deleting
    its log files, before a reader's or tagger's task opens them. A missing log file is that
    case only if a rollback of an instant the reader does not count planned its deletion (the
    plan is saved before any file goes); any other missing file is an error. (Without the
    completed writes' records of the file: see `checked_log_blocks`.)
    """
    return checked_log_blocks(storage, relative, committed)


# A completed write's blocks in a log file: (instant, first byte, end byte), as its write stat
# recorded them (`WrittenFile`). Plain tuples: they travel in read plans as JSON.
BlockSpan = tuple[str, int, int]


def checked_log_blocks(
    storage: FileIO,
    relative: str,
    committed: Container[str],
    written: tuple[BlockSpan, ...] = (),
) -> list[LogBlock]:
    """The blocks of a listed log file, held to what the completed writes that appended to it
    recorded (`written`; see `FileSystemView.written_files`).

    Apache Hudi's reader skips a block whose framing fails its checks (magic, block size, the
    trailing size) as corrupt, because a writer that crashed mid-append leaves a torn block;
    that stays so for bytes no completed write recorded (a failed write's torn tail, garbage
    after the last block). But the bytes of a completed write must hold whole blocks of that
    instant: a corrupt block there, a file cut short of them, or no block of that instant in
    them means the file was damaged after the commit, and reading around it would bring back
    deleted rows or revert updates in silence. Those are a `CorruptDataFileError` naming the
    file and the instant. The recorded bytes are parsed apart from what follows them, so
    garbage after a committed block does not make that block look torn.
    """
    try:
        data = storage.read_bytes(relative)
    except FileNotFoundError:
        if not _deleted_by_rollback(storage, relative, committed):
            if any(instant in committed for instant, _, _ in written):
                path = storage.uri(relative)
                raise MissingDataFileError(
                    f"{path} is missing: the completed commit(s) "
                    f"{', '.join(sorted({i for i, _, _ in written}))} wrote blocks to it",
                    path,
                ) from None
            raise
        return []
    spans = [w for w in written if w[0] in committed and w[2] > w[1]]
    recorded = max((end for _, _, end in spans), default=0)
    if len(data) < recorded:
        _corrupt_log(storage, relative, spans[-1][0], f"is {len(data)} bytes, cut short of the "
                     f"{recorded} bytes completed writes recorded")  # fmt: skip
    try:
        blocks = list(read_log_file(data[:recorded])) if recorded else []
        for block in read_log_file(data[recorded:]):
            block.offset += recorded
            blocks.append(block)
    except HoodieError as error:  # a block that frames whole but is of no known version or type
        if spans:
            _corrupt_log(storage, relative, spans[-1][0], f"does not read: {error}")
        raise type(error)(f"{storage.uri(relative)}: {error}") from error
    for instant, start, end in spans:
        inside = [b for b in blocks if b.offset < end and b.offset + b.size > start]
        torn = next((b for b in inside if b.block_type is BlockType.CORRUPT), None)
        if torn is not None:
            problem = f"fails its block checks at byte {torn.offset}"
            _corrupt_log(storage, relative, instant, f"{problem} (bytes {start}..{end} are that "
                         "commit's blocks)")  # fmt: skip
        if not any(b.instant_time == instant for b in inside):
            _corrupt_log(storage, relative, instant, f"holds no block of it in bytes "
                         f"{start}..{end}, where its commit recorded them")  # fmt: skip
    return blocks


def live_log_blocks(
    storage: FileIO,
    log_files: Iterable[tuple[str, tuple[BlockSpan, ...]]],
    committed: Container[str],
    counts: Container[str] | None = None,
) -> list[tuple[str, LogBlock]]:
    """The data and delete blocks of a file slice's log files (relative path, the spans
    completed writes recorded in it), in log order, with the file each is in: blocks of
    instants in `counts` (default `committed`) that no rollback command block of the slice
    retracted. Every file is read through `checked_log_blocks` (torn blocks outside recorded
    bytes skipped, damage inside them an error); readers of data tables and of the metadata
    table merge what this returns."""
    counted = committed if counts is None else counts
    blocks: list[tuple[str, LogBlock]] = []
    rolled_back: set[str] = set()
    for relative, written in log_files:
        for block in checked_log_blocks(storage, relative, committed, written):
            if block.block_type is BlockType.CORRUPT:
                continue
            if block.block_type is BlockType.COMMAND:
                if block.is_rollback and block.target_instant_time:
                    rolled_back.add(block.target_instant_time)
                continue
            blocks.append((relative, block))
    return [
        (relative, block)
        for relative, block in blocks
        if block.instant_time in counted and block.instant_time not in rolled_back
    ]


@contextmanager
def damaged_data_file(storage: FileIO, relative: str, what: str) -> Iterator[None]:
    """Parse errors of reading a data file (`what`) as a `CorruptDataFileError` naming it: a
    file a committed slice needs that does not read (a broken parquet footer or page, a log
    block whose content does not decode) is damage, never a raw Arrow or Avro error."""
    try:
        yield
    except FileNotFoundError as error:
        path = storage.uri(relative)
        raise CorruptDataFileError(f"{path} ({what}) is missing: {error}", path) from error
    except PARSE_ERRORS as error:
        if is_storage_trouble(error):  # reaching the store, not the file's bytes: as it is
            raise
        path = storage.uri(relative)
        text = str(error).replace("\n", " ")[:200]
        raise CorruptDataFileError(
            f"{path} ({what} of the table at {storage.uri()}) is damaged: "
            f"{type(error).__name__}: {text}. Restore it from a backup, or roll back or restore "
            "the table to before the commit that wrote it with Apache Hudi",
            path,
        ) from error


def _corrupt_log(storage: FileIO, relative: str, instant: str, problem: str) -> NoReturn:
    path = storage.uri(relative)
    raise CorruptDataFileError(
        f"log file {path}, written by the completed instant {instant} of the table at "
        f"{storage.uri()}, {problem}: the file was damaged after its commit. Restore it from a "
        "backup, or roll back or restore the table to before that commit with Apache Hudi",
        path,
    )


def _deleted_by_rollback(storage: FileIO, relative: str, committed: Container[str]) -> bool:
    layout = (
        layout_of(committed.layout_version)
        if isinstance(committed, CommittedInstants)
        else LAYOUT_V1
    )
    for instant in Timeline.load(storage, layout):
        if instant.action is not Action.ROLLBACK:
            continue
        requested = layout.path(instant.with_state(State.REQUESTED))
        try:
            with malformed(storage.uri(requested), "a rollback plan (Avro)"):
                plan = RollbackPlan.from_avro(storage.read_bytes(requested))
        except FileNotFoundError:
            continue
        target = plan.instant_to_rollback
        if target is None or target.commit_time in committed:
            continue
        deleted = (f for r in plan.rollback_requests for f in r.files_to_be_deleted)
        if any(storage.relative(f) == relative for f in deleted):
            return True
    return False


@dataclass(frozen=True)
class WrittenFile:
    """A file as a completed commit's write stat records it: which instant wrote it and which
    bytes (a log file's blocks of that instant start at `offset`; Hudi's `logOffset`, and
    `fileSizeInBytes` counts the bytes appended). `size` 0: not recorded."""

    relative_path: str
    partition_path: str
    file_id: str
    instant: str
    offset: int
    size: int
    base_file: str = ""  # a log file's: the name of the base file of its slice, if any
    records: int = 0  # the stat's numWrites: the rows of a base file (`hoodie.table_stats`)

    @property
    def end(self) -> int:
        return self.offset + self.size


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
    instant: str  # in its name: its slice's base instant (layout 1), its writer's (layout 2)
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


class FileListing(Protocol):
    """Where a view finds a table's partitions and files: storage (`StorageListing`), or the
    metadata table (`hoodie.table_metadata.MetadataListing`) as Apache Hudi's view lists
    through `HoodieBackedTableMetadata`. Either way the files are only candidates: the view
    holds them to the timeline alike."""

    def partitions(self) -> list[str]:
        """Partition paths ('' if unpartitioned), sorted."""
        ...

    def files(self, partitions: list[str] | None) -> list[FileInfo]:
        """The files of these partitions (None: of every partition), paths relative to the
        table."""
        ...

    def existing(self, partitions: list[str]) -> list[str]:
        """Those of these partitions the table has (a write's, before it tags against them),
        without listing the whole table."""
        ...

    def partition_count(self) -> int:
        """How many partitions the table has, or fewer where counting them takes listing the
        whole table (a write asks, to know whether to plan for its batch's partitions only)."""
        ...


class StorageListing:
    """The table's files as storage lists them (Apache Hudi's
    `FileSystemBackedTableMetadata`): the whole table once, without `.hoodie/`, for
    `partitions`; a partition's folder for `files`."""

    def __init__(self, storage: FileIO):
        self.storage = storage

    @cached_property
    def _all_files(self) -> list[FileInfo]:
        return [
            f
            for f in self.storage.list_files("", recursive=True)
            if not f.relative_path.startswith(METAFOLDER + "/")
        ]

    def partitions(self) -> list[str]:
        """Folders holding a `.hoodie_partition_metadata` file or a base or log file. A
        partition whose metadata file went missing is still read, as Apache Hudi's and
        hudi-rs's listings read it (from the files a commit wrote): taking the metadata file
        alone as the mark hid the whole partition, for good, in silence. The next write into
        it creates the file again."""
        return sorted({f.parent for f in self._all_files if marks_partition(f.name)})

    def files(self, partitions: list[str] | None) -> list[FileInfo]:
        if partitions is None:
            return self._all_files
        return [f for p in partitions for f in self.storage.list_files(p)]

    def partition_count(self) -> int:
        """The partitions, once the whole table is listed; before, the folders at its top
        (one listing; a partition path of several levels counts once per first level)."""
        if "_all_files" in self.__dict__:
            return len(self.partitions())
        return sum(1 for folder in self.storage.list_dirs("") if folder != METAFOLDER)

    def existing(self, partitions: list[str]) -> list[str]:
        """Each partition's folder listed, marked as `partitions` marks them (so a partition
        whose metadata file went missing is still tagged against: taking the metadata file
        alone as the mark inserted its keys again)."""
        return [
            p for p in partitions
            if any(marks_partition(f.name) for f in self.storage.list_files(p))
        ]  # fmt: skip


class FileSystemView:
    """File groups of a table as of `as_of` (default: the latest completed instant)."""

    def __init__(
        self,
        storage: FileIO,
        timeline: Timeline,
        as_of: str | None = None,
        base_file_extension: str = BASE_FILE_EXTENSION,
        listing: FileListing | None = None,
        keep_replaced: bool = False,
        commits: Callable[[Instant], CommitMetadata] | None = None,
    ):
        self.storage = storage
        # Where the completed writes' metadata comes from: read here, or from a meta client
        # that keeps the latest parsed (`HoodieTableMetaClient.completed_commit`).
        self._commits = commits
        # CDC reads want the groups a replace commit took out: their last slice is what it
        # deleted (`hoodie.read.cdc`); every other reader drops them
        self.keep_replaced = keep_replaced
        self.listing = listing if listing is not None else StorageListing(storage)
        self.base_file_extension = base_file_extension  # `.hfile` in the metadata table
        self.layout = timeline.layout
        self._completion_times = timeline.completion_times()
        completed = timeline.completed.write_timeline
        if as_of is not None:
            completed = completed.before_or_at(as_of)
        self.timeline = completed
        self.committed = CommittedInstants.of(timeline, as_of)
        self._pending_compactions = {
            i.timestamp for i in timeline.pending if i.action is Action.COMPACTION
        }

    @cached_property
    def replaced_file_ids(self) -> set[tuple[str, str]]:
        """(partition, fileId) pairs that completed replace commits took out of the table."""
        replaced: set[tuple[str, str]] = set()
        for instant in self.timeline:
            if instant.action is not Action.REPLACE_COMMIT:
                continue
            meta = self._commit_metadata(instant)
            for partition, file_ids in (meta.partition_to_replace_file_ids or {}).items():
                replaced.update((partition, fid) for fid in file_ids)
        return replaced

    def _commit_metadata(self, instant: Instant) -> CommitMetadata:
        if self._commits is not None:
            return self._commits(instant)
        path = self.layout.path(instant)
        with malformed(self.storage.uri(path), "commit metadata"):
            return CommitMetadata.parse(self.storage.read_bytes(path))

    @cached_property
    def written_files(self) -> dict[str, list[WrittenFile]]:
        """Relative path -> what the retained completed writes of this view (at or before its
        instant) recorded of that file, oldest first: what `check_slices` holds the listing and
        the readers to. The commit files are read in parallel (small reads; on an object store
        each is a round trip)."""
        instants = list(self.timeline)
        with ThreadPoolExecutor(max_workers=max(1, min(_METADATA_THREADS, len(instants)))) as pool:
            metadata = list(pool.map(self._commit_metadata, instants))
        written: dict[str, list[WrittenFile]] = defaultdict(list)
        for instant, meta in zip(instants, metadata, strict=True):
            path = self.storage.uri(self.layout.path(instant))
            with malformed(path, "commit metadata (its write stats)"):
                for stat in meta.write_stats():
                    if not stat.path:
                        continue
                    # a crafted commit naming a file outside the table is refused here, naming
                    # the commit, before any check looks for the file
                    check_data_file(f"at {self.storage.uri()}", f"commit {instant.timestamp}",
                                    stat.path)  # fmt: skip
                    written[stat.path].append(
                        WrittenFile(
                            stat.path,
                            str(stat.partition_path or ""),
                            str(stat.file_id),
                            instant.timestamp,
                            int(stat.log_offset or 0),
                            int(stat.file_size_in_bytes or 0),
                            str(stat.base_file or ""),
                            int(stat.num_writes or 0),
                        )
                    )
        return written

    def block_spans(self, log_files: tuple[str, ...]) -> tuple[tuple[BlockSpan, ...], ...]:
        """Per log file (relative path): the blocks the view's completed writes recorded in it,
        which readers and tagging hold the file to (`checked_log_blocks`)."""
        return tuple(
            tuple((w.instant, w.offset, w.end) for w in self.written_files.get(log, ()))
            for log in log_files
        )

    def check_slices(
        self,
        groups: list[FileGroup],
        wanted: Callable[[str], bool] | None = None,
        only: Container[tuple[str, str]] | None = None,
    ) -> None:
        """Hold the latest slices of `groups` (the file groups a read lists: of the partitions
        `wanted` keeps, and of `only` where given) to what the view's
        completed writes recorded, so that damage is an error rather than a different table:
        a base or log file a retained completed commit wrote to a latest slice must be listed,
        and not shorter than the commit recorded (a base file is never appended to; a log
        file's blocks of that commit end at `offset + size`). Listings carry sizes: this costs
        no storage call per file. The log files' blocks are checked where they are read
        (`checked_log_blocks`)."""
        latest = {(g.partition_path, g.file_id): g for g in groups}
        expected: dict[tuple[str, str], list[WrittenFile]] = defaultdict(list)
        for files in self.written_files.values():
            for file in files:
                key = (file.partition_path, file.file_id)
                if key in self.replaced_file_ids or (only is not None and key not in only):
                    continue
                if wanted is None or wanted(file.partition_path):
                    expected[key].append(file)
        for key, files in expected.items():
            group = latest.get(key)
            self._check_group(group.latest_slice if group else None, group, files)

    def _check_group(
        self, file_slice: FileSlice | None, group: FileGroup | None, files: list[WrittenFile]
    ) -> None:
        # A base file's version is the instant in its name (the commit that wrote it).
        bases = {
            parsed.instant: f
            for f in files
            if (
                parsed := parse_base_file_name(
                    posixpath.basename(f.relative_path), self.base_file_extension
                )
            )
        }
        newest_instant = max(bases, default=None)
        listed: dict[str, int] = {}
        if file_slice is not None:
            if file_slice.base_file is not None:
                listed[file_slice.base_file.relative_path] = file_slice.base_file.size
            listed.update((lf.relative_path, lf.size) for lf in file_slice.log_files)
        if newest_instant is not None:
            newest = bases[newest_instant]
            base = file_slice.base_file if file_slice is not None else None
            if base is None or base.instant < newest_instant:
                self._missing(newest)
            elif base.instant == newest_instant and base.size < newest.size:
                self._short(newest, base.size)
        base_instants = sorted(s.base_instant for s in group.slices) if group else []
        slice_instant = file_slice.base_instant if file_slice is not None else None
        for file in files:
            name = posixpath.basename(file.relative_path)
            log = parse_log_file_name(name)
            if log is None:
                continue
            if file.relative_path in listed:
                if listed[file.relative_path] < file.end:
                    self._short(file, listed[file.relative_path])
                self._check_log_base(file, file_slice, group)
                continue
            log_file = LogFile(file.partition_path, log.file_id, log.instant, log.version, name, 0)
            owner = self._slice_of(log_file, base_instants)
            if owner is not None and (slice_instant is None or owner >= slice_instant):
                self._missing(file)

    def _check_log_base(
        self, log: WrittenFile, file_slice: FileSlice | None, group: FileGroup | None
    ) -> None:
        """A log file of the latest slice whose write stat names the base file it was written
        against: that base file must be listed, unless the slice has a base file at least as
        new (a compaction since, which cleaning may follow). The commit that wrote the base
        file may have been archived, taking its own record of the file along; without this a
        deleted base file left its slice to its log files in silence."""
        base = parse_base_file_name(log.base_file) if log.base_file else None
        if file_slice is None or group is None or base is None:
            return
        current = file_slice.base_file
        if current is not None and current.instant >= base.instant:
            return
        if any(s.base_file is not None and s.base_file.name == log.base_file for s in group.slices):
            return
        relative = check_data_file(
            f"at {self.storage.uri()}", f"commit {log.instant}",
            posixpath.join(log.partition_path, log.base_file),
        )  # fmt: skip
        self._missing(WrittenFile(relative, log.partition_path, log.file_id, base.instant, 0, 0))

    def _missing(self, file: WrittenFile) -> None:
        path = self.storage.uri(file.relative_path)
        raise MissingDataFileError(
            f"{path} is missing: the completed commit {file.instant} of the table at "
            f"{self.storage.uri()} wrote it, and its rows are still the table's latest. Restore "
            "the file from a backup, or roll back or restore the table to before that commit "
            "with Apache Hudi",
            path,
        )

    def _short(self, file: WrittenFile, size: int) -> None:
        path = self.storage.uri(file.relative_path)
        raise CorruptDataFileError(
            f"{path} is {size} bytes, but the completed commit {file.instant} of the table at "
            f"{self.storage.uri()} wrote it to {file.end} bytes: the file is cut short. Restore "
            "it from a backup, or roll back or restore the table to before that commit with "
            "Apache Hudi",
            path,
        )

    def partitions(self) -> list[str]:
        """Partition paths ('' if unpartitioned), as the view's listing has them."""
        return self.listing.partitions()

    def file_groups(self, partitions: list[str] | None = None) -> list[FileGroup]:
        """The file groups of `partitions` (default: every partition's), by partition and
        file id, each with its committed slices, oldest first."""
        if partitions is None:
            return list(self._all_file_groups)
        return self._file_groups(partitions)

    @cached_property
    def _all_file_groups(self) -> list[FileGroup]:
        """Every partition's file groups, made once per view: a write asks for them to check
        the slices and again to plan its routing units (seconds each at 50,000 partitions)."""
        return self._file_groups(None)

    def _file_groups(self, partitions: list[str] | None) -> list[FileGroup]:
        files = self.listing.files(partitions)
        groups: dict[tuple[str, str], FileGroup] = {}
        slices: dict[tuple[str, str, str], FileSlice] = {}
        logs: dict[tuple[str, str], list[LogFile]] = defaultdict(list)
        for info in files:
            partition = info.parent
            base = parse_base_file_name(info.name, self.base_file_extension)
            if base is not None:
                if base.instant not in self.committed:
                    continue
                if self._replaced(partition, base.file_id):
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
                    LogFile(partition, log.file_id, log.instant, log.version, info.name, info.size)
                )
        for (partition, file_id), entries in logs.items():
            if self._replaced(partition, file_id):
                continue
            group = groups.setdefault((partition, file_id), FileGroup(partition, file_id))
            base_instants = sorted(s.base_instant for s in group.slices)
            for log_file in sorted(entries, key=lambda lf: (lf.instant, lf.version)):
                slice_instant = self._slice_of(log_file, base_instants)
                if slice_instant is None:
                    continue
                slice_key = (partition, file_id, slice_instant)
                if slice_key not in slices:
                    slices[slice_key] = FileSlice(partition, file_id, slice_instant)
                    group.slices.append(slices[slice_key])
                    base_instants.append(slice_instant)  # later logs may join a log-only slice
                slices[slice_key].log_files.append(log_file)
        for group in groups.values():
            group.slices.sort(key=lambda s: s.base_instant)
            group.slices = self._committed_slices(group.slices)
        kept = [g for g in groups.values() if g.slices]
        return sorted(kept, key=lambda g: (g.partition_path, g.file_id))

    def _replaced(self, partition: str, file_id: str) -> bool:
        return not self.keep_replaced and (partition, file_id) in self.replaced_file_ids

    def _slice_of(self, log_file: LogFile, base_instants: list[str]) -> str | None:
        """The base instant of the slice a log file belongs to; None if no reader sees it.

        Layout 2: the latest base instant (or pending compaction, whose slice joins the one
        before it until the compaction completes) at or before the completion of the delta
        commit that wrote the file; a log file of a write that did not complete is no one's.
        The completion time of an instant archived off the timeline is unknown; its own time
        stands in (it completed before every instant still on the timeline).
        """
        if self.layout.version == 1:
            return log_file.instant
        if log_file.instant not in self.committed:
            return None
        completed = self._completion_times.get(log_file.instant, log_file.instant)
        starts = [b for b in base_instants if b <= completed]
        starts += [c for c in self._pending_compactions if c <= completed]
        return max(starts, default=log_file.instant)

    def _committed_slices(self, slices: list[FileSlice]) -> list[FileSlice]:
        """Slices (oldest first) whose base instant committed, as Hudi's view keeps them.

        A slice of log files only whose base instant is not committed is either the logs
        written since a still-pending compaction was scheduled, which join the slice before it
        (else they would hide that slice's base file and older logs: snapshot reads lost those
        rows and read-optimized reads the whole file group), or logs of a write that did not
        complete (or is after the view's instant), which no reader sees.
        """
        kept: list[FileSlice] = []
        for file_slice in slices:
            if file_slice.base_file is None and file_slice.base_instant not in self.committed:
                if file_slice.base_instant in self._pending_compactions and kept:
                    kept[-1].log_files.extend(file_slice.log_files)
                continue
            kept.append(file_slice)
        return kept

    def latest_base_files(self, partitions: list[str] | None = None) -> list[BaseFile]:
        out = []
        for group in self.file_groups(partitions):
            for file_slice in reversed(group.slices):
                if file_slice.base_file is not None:
                    out.append(file_slice.base_file)
                    break
        return out

"""Reading a table's metadata table (`.hoodie/metadata`), as Apache Hudi's
`HoodieBackedTableMetadata` reads it.

The metadata table (MDT) is a merge-on-read Hudi table of its own, nested in the data table's
`.hoodie/`: HFile base files and log files of HFile data blocks, one folder per MDT partition
(`files`, `column_stats`, `bloom_filters`, `record_index`, ...), its own `hoodie.properties`
and timeline. Its records say which partitions and files the data table has, per-file column
ranges and bloom filters, and where each record key lives (`hoodie.metadata_records`).

What a reader may trust (docs/design/metadata-table.md, section 5):
- an MDT partition only once the data table's `hoodie.table.metadata.partitions` lists it
  (one still being built is in `hoodie.table.metadata.partitions.inflight`), and the MDT at
  all only when that list has `files`;
- of each MDT partition, the latest file slice of every file group as of the MDT's latest
  completed instant (the data table's file-system view, over `.hfile` base files);
- of the slice's log blocks, those of *valid* instants only: Apache Hudi commits the MDT
  delta commit of a data action before the data instant, so an MDT delta commit whose data
  instant is still pending, or failed, must not count (`HoodieTableMetadataUtil.
  getValidInstantTimestamps`); rollback command blocks retract their target's blocks;
- base records and log records merge per key by the rules of `merge_metadata_records`
  (logs among themselves first, then over the base file's), a delete block removes its keys.

This is a view: it lists nothing of the data table's storage and writes nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from . import properties as props
from .avro_metadata import RestoreMetadata, RollbackMetadata, RollbackPlan
from .exceptions import DamagedFileError, MalformedMetadataError, UnsafePathError, malformed
from .fs_view import (
    BlockSpan,
    CommittedInstants,
    FileSlice,
    FileSystemView,
    damaged_data_file,
    live_log_blocks,
)
from .hfile import HFileReader
from .logformat import BlockType, LogBlock
from .metadata_records import (
    ALL_PARTITIONS_KEY,
    NON_PARTITIONED_NAME,
    BloomFilterRecord,
    ColumnStatsRecord,
    FilesRecord,
    MetadataPartitionType,
    MetadataRecord,
    RecordIndexRecord,
    bloom_filter_key,
    column_stats_key,
    decode_metadata_record,
    file_group_index,
    merge_metadata_records,
    partition_identifier,
)
from .naming import parse_base_file_name, parse_log_file_name
from .partition_paths import problem as partition_problem
from .storage import FileInfo, FileIO
from .timeline import METAFOLDER, Action, Instant, State, Timeline, layout_of

METADATA_FOLDER = posixpath.join(METAFOLDER, "metadata")
HFILE_EXTENSION = ".hfile"
# `HoodieTimeline.INIT_INSTANT_TS`/`SOLO_COMMIT_TIMESTAMP`: the MDT's initialization instants
# start with it (a 3-digit suffix per partition, docs/design/metadata-table.md 1.4).
SOLO_COMMIT_TIMESTAMP = "00000000000000"
FILES_PARTITION = MetadataPartitionType.FILES.partition_name
COLUMN_STATS = MetadataPartitionType.COLUMN_STATS.partition_name
BLOOM_FILTERS = MetadataPartitionType.BLOOM_FILTERS.partition_name
RECORD_INDEX = MetadataPartitionType.RECORD_INDEX.partition_name
_PROPERTIES = posixpath.join(METAFOLDER, "hoodie.properties")
_HFILE_FORMAT = "HFILE"
_DISABLE_HINT = (
    "Apache Hudi's readers fail on it too. A write with hoodie.metadata.enable=false removes "
    "the metadata table (clears hoodie.table.metadata.partitions and deletes "
    f"{METADATA_FOLDER}); readers then list storage"
)
# What a reader of the data table can do meanwhile (said where a listing through the MDT fails).
_READ_HINT = (
    "A read with hoodie.metadata.enable=false lists the table's files from storage instead of "
    "through its metadata table"
)


class DataTable(Protocol):
    """What the metadata table needs of its data table: `HoodieTableMetaClient` has it (this
    floor is below the meta client, so it is named by what it offers)."""

    storage: FileIO
    properties: props.TableProperties

    def timeline(self) -> Timeline: ...


class DamagedMetadataTableError(MalformedMetadataError):
    """The metadata table the data table announces (`hoodie.table.metadata.partitions`) is missing,
    or one of its files does not read as what it must hold; the message names the file. Apache
    Hudi's readers fail on it too.

    Write once with `hoodie.metadata.enable=false`: that removes the metadata table (clears the
    property, then deletes `.hoodie/metadata`), and readers list storage; a later write with it on
    builds it again from a listing. Or read with the read option `hoodie.metadata.enable=false`
    meanwhile."""


def completed_partitions(properties: props.TableProperties) -> tuple[str, ...]:
    """The MDT partitions readers may use: `hoodie.table.metadata.partitions` less any still
    listed as being built (`.inflight`), sorted."""
    extra = properties.extra
    done = _csv(extra.get(props.METADATA_PARTITIONS))
    building = set(_csv(extra.get(props.METADATA_PARTITIONS_INFLIGHT)))
    return tuple(sorted(p for p in set(done) if p not in building))


def _csv(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


@dataclass(frozen=True)
class MetadataTableProperties:
    """The few keys of the MDT's own `hoodie.properties` a reader needs."""

    table_version: int
    timeline_layout_version: int
    name: str
    timeline_timezone: str

    @classmethod
    def load(cls, storage: FileIO) -> MetadataTableProperties:
        path = storage.uri(_PROPERTIES)
        try:
            text = storage.read_text(_PROPERTIES)
        except FileNotFoundError:
            raise DamagedMetadataTableError(
                f"{path} is missing: the table's hoodie.table.metadata.partitions lists a "
                f"metadata table at {storage.uri()}, which is not a Hudi table. {_DISABLE_HINT}",
                path,
            ) from None
        except UnicodeDecodeError as error:
            raise DamagedMetadataTableError(
                f"{path} is damaged: not UTF-8 text ({error}). {_DISABLE_HINT}", path
            ) from error
        loaded = props.loads(text)
        version = loaded.get(props.TABLE_VERSION, "").strip()
        layout = loaded.get(props.TIMELINE_LAYOUT_VERSION, "").strip() or "1"
        problem = None
        if not version.isdigit() or not layout.isdigit():
            problem = f"has no {props.TABLE_VERSION} (damaged or cut short)"
        elif props.READABLE_VERSIONS.get(int(version)) != int(layout):
            problem = (
                f"says table version {version} with timeline layout {layout}; dbt-hoodie reads "
                "metadata tables of versions 6 (layout 1), 8 and 9 (layout 2)"
            )
        elif loaded.get(props.TABLE_TYPE, "").upper() != props.MERGE_ON_READ:
            problem = f"is not a merge-on-read table ({props.TABLE_TYPE})"
        elif (loaded.get(props.BASE_FILE_FORMAT) or "").upper() != _HFILE_FORMAT:
            problem = f"does not store HFile base files ({props.BASE_FILE_FORMAT})"
        if problem is not None:
            raise DamagedMetadataTableError(f"{path} {problem}. {_DISABLE_HINT}", path)
        return cls(
            int(version),
            int(layout),
            loaded.get(props.TABLE_NAME, ""),
            loaded.get(props.TIMELINE_TIMEZONE, "LOCAL"),
        )


def valid_instants(
    data_storage: FileIO, data_timeline: Timeline, metadata_timeline: Timeline
) -> frozenset[str]:
    """The instants whose MDT log blocks a reader counts (Apache Hudi's
    `getValidInstantTimestamps`): completed data instants; completed MDT delta commits whose
    data instant is not pending (an indexing commit has none; one whose data instant is
    pending belongs to a write that failed after its MDT commit); the instants completed data
    rollbacks and restores rolled back, where newer than the earliest of those (the MDT's
    own rollback blocks target them); the MDT's rollback and restore instants; and its
    initialization delta commits (`00000000000000` and a suffix)."""
    pending = {i.timestamp for i in data_timeline.pending}
    valid = {i.timestamp for i in data_timeline.completed}
    valid.update(
        i.timestamp
        for i in metadata_timeline.completed
        if i.action is Action.DELTA_COMMIT and i.timestamp not in pending
    )
    earliest = min(valid, default=SOLO_COMMIT_TIMESTAMP)
    for instant in data_timeline.completed:
        if instant.action in (Action.ROLLBACK, Action.RESTORE) and instant.timestamp > earliest:
            valid.update(_rolled_back(data_storage, data_timeline, instant))
    valid.update(
        i.timestamp
        for i in metadata_timeline.completed
        if i.action in (Action.ROLLBACK, Action.RESTORE)
        or (i.action is Action.DELTA_COMMIT and i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP))
    )
    return frozenset(valid)


def _rolled_back(storage: FileIO, timeline: Timeline, instant: Instant) -> list[str]:
    """The instants a completed data rollback or restore rolled back. A rollback whose
    completed file is empty says it in its plan (Apache Hudi reads the plan then too)."""
    path = timeline.layout.path(instant)
    data = storage.read_bytes(path)
    if instant.action is Action.RESTORE:
        with malformed(storage.uri(path), "restore metadata (Avro)"):
            restore = RestoreMetadata.from_avro(data)
        return [c for rollbacks in restore.hoodie_restore_metadata.values()
                for r in rollbacks for c in r.commits_rolled_back]  # fmt: skip
    if data:
        with malformed(storage.uri(path), "rollback metadata (Avro)"):
            return list(RollbackMetadata.from_avro(data).commits_rolled_back)
    requested = timeline.layout.path(instant.with_state(State.REQUESTED))
    with malformed(storage.uri(requested), "a rollback plan (Avro)"):
        plan = RollbackPlan.from_avro(storage.read_bytes(requested))
    target = plan.instant_to_rollback
    return [target.commit_time] if target is not None else []


def check_file_name(storage: FileIO, partition: str, name: str) -> str:
    """A file name the metadata table lists in a partition: a plain name inside that
    partition, never a path (`/`, `..`, NUL), which a crafted MDT could use to point readers,
    cleaners or deleters at files outside it."""
    if not name or "/" in name or "\x00" in name or name in (".", ".."):
        raise UnsafePathError(
            f"the metadata table at {storage.uri(METADATA_FOLDER)} lists {name!r} in partition "
            f"{partition!r}: not a file name. Nothing was read there; the metadata table is "
            f"damaged or crafted. {_DISABLE_HINT}"
        )
    return name


class TableMetadata:
    """A data table's metadata table, opened read-only (Apache Hudi's
    `HoodieBackedTableMetadata`). `open` gives None where there is no usable one."""

    def __init__(
        self,
        data: DataTable,
        storage: FileIO,
        properties: MetadataTableProperties,
        partitions: tuple[str, ...],
        data_timeline: Timeline | None = None,
        ignore_spurious_deletes: bool = True,
    ):
        self.data = data
        self.ignore_spurious_deletes = ignore_spurious_deletes
        self.storage = storage
        self.properties = properties
        self._partitions = partitions
        self.data_timeline = data_timeline if data_timeline is not None else data.timeline()
        self.layout = layout_of(properties.timeline_layout_version)
        # `files` records read by key (`look_up_files`), None where the partition has none
        self._looked_up: dict[str, MetadataRecord | None] = {}

    def __repr__(self) -> str:
        return f"TableMetadata({self.storage.base_uri!r}, {list(self._partitions)})"

    @classmethod
    def open(
        cls, data: DataTable, timeline: Timeline | None = None, ignore_spurious_deletes: bool = True
    ) -> TableMetadata | None:
        """The metadata table of `data` (its meta client), or None when readers must list
        storage: `hoodie.table.metadata.partitions` does not list `files` as completed.
        `timeline`: the data timeline a read already loaded, so both agree. Announced but
        missing or damaged: a `DamagedMetadataTableError` naming the file.
        `ignore_spurious_deletes` false (`_hoodie.metadata.ignore.spurious.deletes`): a
        spurious delete in a `files` record a listing reads is an error too."""
        partitions = completed_partitions(data.properties)
        if FILES_PARTITION not in partitions:
            return None
        storage = data.storage.subfolder(METADATA_FOLDER)
        return cls(data, storage, MetadataTableProperties.load(storage), partitions, timeline,
                   ignore_spurious_deletes)  # fmt: skip

    # -- the MDT as a table ----------------------------------------------------------------------
    @cached_property
    def timeline(self) -> Timeline:
        """The MDT's own timeline."""
        return Timeline.load(self.storage, self.layout)

    @cached_property
    def latest_instant(self) -> str | None:
        """The MDT's latest completed instant: its file slices are read as of it."""
        return self.timeline.completed.last_timestamp()

    @cached_property
    def valid_instants(self) -> frozenset[str]:
        return valid_instants(self.data.storage, self.data_timeline, self.timeline)

    @cached_property
    def _view(self) -> FileSystemView:
        return FileSystemView(
            self.storage, self.timeline, self.latest_instant, base_file_extension=HFILE_EXTENSION
        )

    @cached_property
    def _data_committed(self) -> CommittedInstants:
        return CommittedInstants.of(self.data_timeline)

    def partitions(self) -> list[str]:
        """The MDT partitions a reader may use (`hoodie.table.metadata.partitions`, less the
        ones being built)."""
        return list(self._partitions)

    def file_slices(self, partition: str) -> list[FileSlice]:
        """The latest file slice of each file group of an MDT partition, by file id, as of the
        MDT's latest completed instant. A partition the data table does not list as usable
        has none."""
        if partition not in self._partitions or self.latest_instant is None:
            return []
        slices = []
        for group in self._view.file_groups([partition]):
            latest = group.latest_slice
            if latest is not None:
                slices.append(latest)
        return sorted(slices, key=lambda s: s.file_id)

    @cached_property
    def _committed(self) -> CommittedInstants:
        """The MDT's completed writes as of its latest instant."""
        return CommittedInstants.of(self.timeline, self.latest_instant)

    @cached_property
    def _counted(self) -> frozenset[str]:
        """The instants whose log blocks count: valid ones completed on the MDT timeline."""
        return frozenset(i for i in self.valid_instants if i in self._committed)

    def slice_read(self, file_slice: FileSlice) -> SliceRead:
        """What reading `file_slice` (of an MDT partition) takes, as plain data: its base file
        and size, its log files with the blocks completed MDT commits recorded in them, and
        which instants' blocks count. `read_slice` reads it, here or in a Spark task."""
        base = file_slice.base_file
        relatives = tuple(lf.relative_path for lf in file_slice.log_files)
        spans = self._view.block_spans(relatives)
        return SliceRead(
            self.storage,
            (base.relative_path, base.size) if base is not None else None,
            tuple(zip(relatives, spans, strict=True)),
            self._committed,
            self._counted,
        )

    def log_blocks(self, file_slice: FileSlice) -> list[tuple[str, LogBlock]]:
        """The log blocks of `file_slice` (of an MDT partition) that count, in order, with
        their file's path: those `read_slice` merges (for a merge that needs no decoding)."""
        read = self.slice_read(file_slice)
        return live_log_blocks(read.storage, read.logs, read.committed, read.counts)

    # -- records ---------------------------------------------------------------------------------
    def _file_groups(self, partition: str) -> dict[int, FileSlice]:
        """The latest slices of an MDT partition by file group index (the `NNNN` of
        `<prefix>NNNN-0`), which `file_group_index` maps keys to: exactly 0 to count - 1 (the
        count is fixed for the partition's life; a reader finds it by listing)."""
        slices: dict[int, FileSlice] = {}
        for file_slice in self.file_slices(partition):
            index = _file_group_number(file_slice.file_id)
            if index is None or index in slices:
                path = self.storage.uri(partition)
                raise DamagedMetadataTableError(
                    f"{path} holds a file group {file_slice.file_id!r} that is not one of the "
                    f"metadata table's `<prefix>NNNN-0` file groups, or two of one number. "
                    f"{_DISABLE_HINT}",
                    path,
                )
            slices[index] = file_slice
        missing = sorted(set(range(len(slices))) - set(slices))
        if missing:
            # keys hash to `index % count`: with a file group gone every count is wrong
            path = self.storage.uri(partition)
            raise DamagedMetadataTableError(
                f"{path} lacks file group(s) {', '.join(map(str, missing))} of its "
                f"{max(slices) + 1}: keys cannot be found in it. {_DISABLE_HINT}",
                path,
            )
        return slices

    def read_partition(self, partition: str) -> dict[str, MetadataRecord]:
        """Every live record of an MDT partition, by key (base and logs merged)."""
        merged: dict[str, MetadataRecord] = {}
        for file_slice in self.file_slices(partition):
            merged.update(self._read_slice(file_slice, None))
        return merged

    def slice_reads(self, partition: str) -> dict[int, SliceRead]:
        """What reading each file group of an MDT partition takes (`slice_read`), by file
        group index (what `file_group_index` maps keys to); empty where the partition is not
        usable. For lookups in Spark tasks: the driver lists once, tasks get plain data."""
        return {index: self.slice_read(s) for index, s in self._file_groups(partition).items()}

    def lookup(self, partition: str, keys: Iterable[str]) -> dict[str, MetadataRecord]:
        """The live records of these keys in an MDT partition: each key looked up in the file
        group it maps to (`file_group_index`), through the HFiles' block indexes (base files
        read by ranges: the blocks the keys fall in, `HFileReader.open`)."""
        groups = self._file_groups(partition)
        if not groups:
            return {}
        wanted: dict[int, set[str]] = {}
        for key in keys:
            wanted.setdefault(file_group_index(key, len(groups)), set()).add(key)
        found: dict[str, MetadataRecord] = {}
        for index, group_keys in sorted(wanted.items()):
            found.update(self._read_slice(groups[index], sorted(group_keys)))
        return found

    def read_file_slice(self, file_slice: FileSlice) -> dict[str, MetadataRecord]:
        """Every live record of one file slice of an MDT partition, by key (what the MDT's
        compaction writes into the slice's next base file)."""
        return self._read_slice(file_slice, None)

    def _read_slice(
        self, file_slice: FileSlice, keys: list[str] | None
    ) -> dict[str, MetadataRecord]:
        return read_slice(self.slice_read(file_slice), keys)

    # -- what readers ask ------------------------------------------------------------------------
    @cached_property
    def _files(self) -> dict[str, MetadataRecord]:
        """The `files` partition whole: one small record per data partition, read once for
        every question about the listing (its log blocks are read once too)."""
        return self.read_partition(FILES_PARTITION)

    def look_up_files(self, keys: Iterable[str]) -> None:
        """Read the `files` records of `keys` (partition identifiers) by lookups in the HFiles'
        block indexes, for the questions that follow, unless the partition is read whole
        already: a write into a few partitions of a table of 50,000 asks for theirs alone."""
        if "_files" in self.__dict__:
            return
        wanted = [k for k in keys if k not in self._looked_up]
        if wanted:
            found = self.lookup(FILES_PARTITION, wanted)
            self._looked_up.update((key, found.get(key)) for key in wanted)

    def _files_record(self, key: str) -> FilesRecord | None:
        if "_files" not in self.__dict__ and key in self._looked_up:
            record = self._looked_up[key]
        else:
            record = self._files.get(key)
        if record is None:
            return None
        if not isinstance(record, FilesRecord):
            raise DamagedMetadataTableError(
                f"the metadata table at {self.storage.uri()} holds a {type(record).__name__} "
                f"under key {key!r} of its files partition. {_DISABLE_HINT}",
                self.storage.uri(FILES_PARTITION),
            )
        spurious = sorted(name for name, entry in record.files.items() if entry.is_deleted)
        if spurious and not self.ignore_spurious_deletes:
            # Apache Hudi's `checkForSpuriousDeletes`: after merging, a record still deleting a
            # file means no earlier record of the partition added it
            what = "the partition list" if record.is_partition_list else f"partition {key!r}"
            raise DamagedMetadataTableError(
                f"the metadata table at {self.storage.uri()} deletes from {what} "
                f"{', '.join(spurious)}, which no earlier record of its files partition added "
                "(a spurious delete, as a rollback of a write whose metadata table commit never "
                "counted leaves); _hoodie.metadata.ignore.spurious.deletes=false makes that an "
                "error, as in Apache Hudi. Read with it true (the default) to ignore such "
                f"deletes. {_READ_HINT}",
                self.storage.uri(FILES_PARTITION),
            )
        return record

    def all_partition_paths(self) -> list[str]:
        """The data table's partition paths ('' for a non-partitioned table), from the
        `__all_partitions__` record of the `files` partition."""
        self.look_up_files([ALL_PARTITIONS_KEY])
        record = self._files_record(ALL_PARTITIONS_KEY)
        if record is None:
            return []
        paths = []
        for name in record.live_files():
            if name != NON_PARTITIONED_NAME:
                self.data.storage.inside(name)  # a crafted partition leading outside: refused
                reason = partition_problem(name)  # or into `.hoodie`, or with control characters
                if reason is not None:
                    raise UnsafePathError(
                        f"the metadata table at {self.storage.uri('')} lists the partition "
                        f"{name!r}, which {reason}: not a partition of the table. Nothing was "
                        f"read there; the metadata table is damaged or crafted. {_DISABLE_HINT}"
                    )
            paths.append(data_partition(name))
        return sorted(paths)

    def partition_count(self) -> int:
        """How many partitions the `__all_partitions__` record lists (`all_partition_paths`
        without checking each path: a count, not paths to go to)."""
        self.look_up_files([ALL_PARTITIONS_KEY])
        record = self._files_record(ALL_PARTITIONS_KEY)
        return 0 if record is None else sum(1 for _ in record.live_files())

    def files_in_partition(self, partition_path: str) -> dict[str, int]:
        """The files of a data partition ('' when non-partitioned), name -> size, as a
        storage listing filtered by the data timeline would give them: base and log files
        whose instant is completed on the data timeline (a log file of table version 6 names
        its slice's base instant, which may be a compaction still pending)."""
        key = partition_identifier(partition_path)
        record = self._files_record(key)
        if record is None:
            return {}
        pending_compactions = {
            i.timestamp for i in self.data_timeline.pending if i.action is Action.COMPACTION
        }
        files: dict[str, int] = {}
        for name, entry in record.files.items():
            check_file_name(self.data.storage, key, name)
            if entry.is_deleted:
                continue
            base = parse_base_file_name(name)
            if base is not None:
                if base.instant in self._data_committed:
                    files[name] = entry.size
                continue
            log = parse_log_file_name(name)
            if log is None:
                continue
            if log.instant in self._data_committed or (
                self.data_timeline.layout.version == 1 and log.instant in pending_compactions
            ):
                files[name] = entry.size
        return dict(sorted(files.items()))

    def read_record_index(self, keys: Iterable[str]) -> dict[str, RecordLocation]:
        """Where each of these data record keys lives, by the `record_index` partition; keys
        it does not hold are left out."""
        if RECORD_INDEX not in self._partitions:
            return {}
        found = self.lookup(RECORD_INDEX, set(keys))
        out: dict[str, RecordLocation] = {}
        for key, record in found.items():
            if not isinstance(record, RecordIndexRecord):
                continue
            out[key] = RecordLocation(
                data_partition(record.partition),
                record.file_id,
                record.instant_time(self.data_timezone),
                record.position,
            )
        return out

    @property
    def data_timezone(self) -> str:
        """The data table's `hoodie.table.timeline.timezone` (Apache Hudi's default: LOCAL),
        which the record index's instant times are in."""
        return self.data.properties.extra.get(props.TIMELINE_TIMEZONE) or "LOCAL"

    def column_stats(
        self, partition_path: str, file_names: Iterable[str], columns: Iterable[str]
    ) -> dict[tuple[str, str], ColumnStatsRecord]:
        """The column statistics of these files' columns in a data partition, by (file name,
        column); those the `column_stats` partition lacks (or deleted) are left out."""
        found = self.column_stats_of({partition_path: file_names}, columns)
        return {(name, column): record for (_, name, column), record in found.items()}

    def column_stats_of(
        self, files: Mapping[str, Iterable[str]], columns: Iterable[str]
    ) -> dict[tuple[str, str, str], ColumnStatsRecord]:
        """The column statistics of these columns of the files of several data partitions
        (partition path -> file names), by (partition path, file name, column), looked up at
        once (each of the partition's HFiles read once); those the `column_stats` partition
        lacks (or deleted) are left out."""
        if COLUMN_STATS not in self._partitions:
            return {}
        wanted = list(columns)
        keys = {
            column_stats_key(partition_identifier(path), name, column): (path, name, column)
            for path, names in files.items()
            for name in names
            for column in wanted
        }
        out: dict[tuple[str, str, str], ColumnStatsRecord] = {}
        if not keys:
            return out
        for key, record in self.lookup(COLUMN_STATS, keys).items():
            if isinstance(record, ColumnStatsRecord) and not record.is_deleted:
                out[keys[key]] = record
        return out

    def bloom_filter(self, partition_path: str, file_name: str) -> bytes | None:
        """The serialized bloom filter of a base file (as in its parquet footer), or None."""
        record = self.bloom_filters_of({partition_path: [file_name]}).get(
            (partition_path, file_name)
        )
        return record.bloom_filter if record is not None else None

    def bloom_filters_of(
        self, files: Mapping[str, Iterable[str]]
    ) -> dict[tuple[str, str], BloomFilterRecord]:
        """The bloom filter records of these base files (partition path -> file names), by
        (partition path, file name), looked up at once; files the `bloom_filters` partition
        lacks (or deleted) are left out."""
        if BLOOM_FILTERS not in self._partitions:
            return {}
        keys = {
            bloom_filter_key(partition_identifier(path), name): (path, name)
            for path, names in files.items()
            for name in names
        }
        out: dict[tuple[str, str], BloomFilterRecord] = {}
        if not keys:
            return out
        for key, record in self.lookup(BLOOM_FILTERS, keys).items():
            if isinstance(record, BloomFilterRecord) and not record.is_deleted:
                out[keys[key]] = record
        return out


@dataclass(frozen=True)
class SliceRead:
    """One file slice of an MDT partition as a reader needs it (`TableMetadata.slice_read`):
    plain data that pickles, so that a Spark task reads the slice without listing anything.
    `storage` is the MDT's; `base` the base HFile's path and listed size; `logs` each log
    file with the spans completed MDT commits recorded in it; `committed` the MDT's completed
    writes as of its latest instant; `counts` the instants whose blocks count (valid ones,
    `valid_instants`)."""

    storage: FileIO
    base: tuple[str, int] | None
    logs: tuple[tuple[str, tuple[BlockSpan, ...]], ...]
    committed: CommittedInstants
    counts: frozenset[str]


def read_slice(read: SliceRead, keys: list[str] | None) -> dict[str, MetadataRecord]:
    """One file slice's records (all, or only `keys`, sorted), as Apache Hudi's merged log
    scanner and `HoodieMetadataPayload` read it: the log blocks that count (valid instants
    completed on the MDT timeline, less those a rollback block retracted; torn blocks skipped
    where no completed MDT commit recorded bytes, damage inside recorded bytes) merged among
    themselves in order, then over the base file's records. A key of a delete block is gone,
    whatever the base file says. The base file is read by ranges: its index, then only the
    blocks `keys` fall in (`HFileReader.open`)."""
    storage = read.storage
    wanted = [k.encode() for k in keys] if keys is not None else None
    selected = set(keys) if keys is not None else None
    # a key's record after the log blocks, None where a delete block removed it
    logs: dict[str, MetadataRecord | None] = {}
    for relative, block in live_log_blocks(storage, read.logs, read.committed, read.counts):
        where = f"{storage.uri(relative)} (log block of instant {block.instant_time})"
        if block.block_type is BlockType.DELETE:
            with damaged_data_file(storage, relative, "a metadata table delete block"):
                deleted = block.deleted_records()
            for gone in deleted:
                if selected is None or gone.record_key in selected:
                    logs[gone.record_key] = None
            continue
        if block.block_type is not BlockType.HFILE_DATA:
            raise DamagedMetadataTableError(
                f"{where} is a {block.block_type.name} block; metadata table logs hold "
                f"HFile data, delete and command blocks only. {_DISABLE_HINT}",
                storage.uri(relative),
            )
        reader = block.hfile()
        schema = block.schema or _schema_of(reader, where)
        for key, record in _records(reader, wanted, schema, where):
            logs[key] = merge_metadata_records(logs[key], record) if key in logs else record
    merged: dict[str, MetadataRecord] = {}
    if read.base is not None:
        relative, size = read.base
        with damaged_data_file(storage, relative, "a metadata table base file"):
            reader = HFileReader.open(storage, relative, size)
        where = reader.name
        for key, record in _records(reader, wanted, _schema_of(reader, where), where):
            combined = merge_metadata_records(record, logs.pop(key)) if key in logs else record
            if combined is not None:
                merged[key] = combined
    merged.update((key, last) for key, last in logs.items() if last is not None)
    return merged


def data_partition(identifier: str | None) -> str:
    """A data partition path from its name in the metadata table (`.` or none: the table is
    not partitioned, '')."""
    if identifier is None or identifier == NON_PARTITIONED_NAME:
        return ""
    return identifier


class MetadataListing:
    """A data table's files as its metadata table lists them (`FileListing`): partitions from
    the `files` partition's `__all_partitions__` record, a partition's files from its own
    record, those of completed data instants only (`TableMetadata.files_in_partition`). No
    data partition folder is listed: a file a crashed writer left in storage that no completed
    action recorded is not seen, as Apache Hudi's readers do not see it.

    A metadata table that does not read fails the listing (never a silent fall back to
    storage, which would hide that the table's readers disagree): the error names the file
    and says how to read by listing storage."""

    def __init__(self, metadata: TableMetadata):
        self.metadata = metadata

    def __repr__(self) -> str:
        return f"MetadataListing({self.metadata!r})"

    @classmethod
    def open(
        cls, data: DataTable, timeline: Timeline | None = None, ignore_spurious_deletes: bool = True
    ) -> MetadataListing | None:
        """The listing through `data`'s metadata table, or None where it has no usable one."""
        with _listing_errors():
            metadata = TableMetadata.open(data, timeline, ignore_spurious_deletes)
        return cls(metadata) if metadata is not None else None

    def partitions(self) -> list[str]:
        with _listing_errors():
            return self.metadata.all_partition_paths()

    def existing(self, partitions: list[str]) -> list[str]:
        known = set(self.partitions())
        return [p for p in partitions if p in known]

    def partition_count(self) -> int:
        with _listing_errors():
            return self.metadata.partition_count()

    def files(self, partitions: list[str] | None) -> list[FileInfo]:
        with _listing_errors():
            if partitions is None:
                wanted = self.metadata.all_partition_paths()
            else:
                wanted = partitions
                self.metadata.look_up_files(partition_identifier(p) for p in partitions)
            return [
                FileInfo(posixpath.join(partition, name) if partition else name, size)
                for partition in wanted
                for name, size in self.metadata.files_in_partition(partition).items()
            ]


@contextmanager
def _listing_errors() -> Iterator[None]:
    """A damaged metadata table file as a `DamagedMetadataTableError` naming it and saying
    how to read without the metadata table."""
    try:
        yield
    except DamagedFileError as error:
        text = str(error).rstrip(". ")
        raise DamagedMetadataTableError(f"{text}. {_READ_HINT}", error.path) from error


@dataclass(frozen=True)
class RecordLocation:
    """Where the record index says a key lives: the data partition ('' when
    non-partitioned), the file group, and the instant that put it there."""

    partition_path: str
    file_id: str
    instant_time: str | None  # the record index's epoch milliseconds, as an instant time
    position: int | None = None  # the record's position in its base file (1.x), if stored


def _records(
    reader: HFileReader, keys: list[bytes] | None, schema: str, where: str
) -> Iterator[tuple[str, MetadataRecord]]:
    """The records of an MDT HFile (all, or those of `keys`, sorted), decoded."""
    for raw_key, value in reader.lookup(keys) if keys is not None else iter(reader):
        try:
            key = raw_key.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DamagedMetadataTableError(
                f"{where} holds a key that is not UTF-8 ({error}). {_DISABLE_HINT}", where
            ) from error
        yield key, decode_metadata_record(key, value, schema, source=where)


def _file_group_number(file_id: str) -> int | None:
    """The index in an MDT file id `<prefix>NNNN-0` (`getFileGroupIndexFromFileId`)."""
    stem = file_id[:-2] if file_id.endswith("-0") else file_id
    digits = stem.rsplit("-", 1)[-1]
    return int(digits) if digits.isdigit() else None


def _schema_of(reader: HFileReader, path: str) -> str:
    """The writer schema an MDT HFile carries in its file info (`schema`)."""
    schema = reader.file_info.get(b"schema")
    if not schema:
        raise DamagedMetadataTableError(
            f"{path} has no Avro schema in its file info: not a metadata table HFile. "
            f"{_DISABLE_HINT}",
            path,
        )
    try:
        return schema.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DamagedMetadataTableError(
            f"{path}: its schema is not UTF-8 ({error})", path
        ) from error


__all__ = [
    "FILES_PARTITION",
    "HFILE_EXTENSION",
    "METADATA_FOLDER",
    "RECORD_INDEX",
    "SOLO_COMMIT_TIMESTAMP",
    "DamagedMetadataTableError",
    "DataTable",
    "MetadataListing",
    "MetadataTableProperties",
    "RecordLocation",
    "SliceRead",
    "TableMetadata",
    "check_file_name",
    "completed_partitions",
    "data_partition",
    "read_slice",
    "valid_instants",
]

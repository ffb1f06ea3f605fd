"""The meta client: a table's identity, properties and timeline, as every floor above reads them.

Hudi's `HoodieTableMetaClient`. It knows where the table lives (its `FileIO`), what
`hoodie.properties` says, and how instants are stored under `.hoodie/`; it knows nothing of
Spark, writes of data files or table services, which all build on it. It holds no state beyond
the table's identity: every call reloads the timeline, so one object can be kept across
writes, by this process or others.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa

from . import properties as props
from .archived_timeline import HISTORY_FOLDER, ArchivedInstant, archived_instants
from .avro_metadata import CleanerPlan, CleanMetadata
from .config import WriteConfig
from .exceptions import (
    CommitError,
    MalformedMetadataError,
    TableExistsError,
    TableNotFoundError,
    UnsupportedTableError,
    malformed,
)
from .faults import crash_point
from .fs_view import FileListing, FileSystemView, StorageListing
from .keygen import KeyGenerator
from .merge import MergeMode, merge_mode_for_write, merge_mode_of
from .metadata import CommitMetadata
from .naming import BASE_FILE_EXTENSION
from .options import table as table_options
from .options.keygen import timestamp_settings
from .schema import from_avro_schema
from .storage import FileIO, load_file_io
from .table_metadata import HFILE_EXTENSION, MetadataListing, TableMetadata
from .timeline import (
    METAFOLDER,
    Action,
    Instant,
    State,
    Timeline,
    TimelineLayout,
    layout_of,
    new_instant_time,
)

PROPERTIES_FILE = posixpath.join(METAFOLDER, "hoodie.properties")
# Hudi's recovery copy while `hoodie.properties` is rewritten (HoodieTableConfig's protocol).
PROPERTIES_BACKUP = PROPERTIES_FILE + ".backup"
_LAYOUT_FOLDERS = (".temp", "archived", ".aux", ".schema")
T = TypeVar("T")


# Completed commits a meta client keeps parsed (`completed_commit`): the latest ones a write
# reads again and again.
_PARSED_COMMITS = 4


class HoodieTableMetaClient:
    def __init__(self, storage: FileIO, properties: props.TableProperties):
        self.storage = storage
        self.properties = properties
        self.layout: TimelineLayout = layout_of(properties.timeline_layout_version)
        self._commits: dict[str, CommitMetadata] = {}  # `completed_commit`'s, by file
        self._commits_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_commits"], state["_commits_lock"]  # parsed again where needed
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._commits = {}
        self._commits_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HoodieTableMetaClient({self.properties.name!r}, {self.storage.base_uri!r})"

    @property
    def base_uri(self) -> str:
        return self.storage.base_uri

    @property
    def name(self) -> str:
        return self.properties.name

    @property
    def merge_on_read(self) -> bool:
        return self.properties.table_type == props.MERGE_ON_READ

    @property
    def is_metadata_table(self) -> bool:
        """A metadata table (`.hoodie/metadata`), opened by its writer: its base file format
        is HFILE, which no data table of ours has."""
        return self.properties.extra.get(props.BASE_FILE_FORMAT, "").upper() == "HFILE"

    @property
    def base_file_extension(self) -> str:
        """What views take for base files: `.hfile` in a metadata table, else `.parquet`."""
        return HFILE_EXTENSION if self.is_metadata_table else BASE_FILE_EXTENSION

    # -- opening -------------------------------------------------------------------------------
    # `storage_options` configure the table's object store (see `hoodie.storage.load_file_io`).
    @staticmethod
    def exists(base_uri: str, storage_options: Mapping[str, str] | None = None) -> bool:
        storage = load_file_io(base_uri, storage_options)
        return storage.exists(PROPERTIES_FILE) or storage.exists(PROPERTIES_BACKUP)

    @classmethod
    def open(
        cls, base_uri: str, storage_options: Mapping[str, str] | None = None
    ) -> HoodieTableMetaClient:
        return cls.load(load_file_io(base_uri, storage_options))

    @classmethod
    def load(cls, storage: FileIO) -> HoodieTableMetaClient:
        """The table at `storage`'s base path, its properties read afresh."""
        loaded = _load_properties(storage)
        if loaded is None:
            raise TableNotFoundError(
                f"no Hudi table at '{storage.base_uri}' (missing {PROPERTIES_FILE})"
            )
        # (what does not make a table names the file: it may be one cut short at a line end)
        with malformed(storage.uri(PROPERTIES_FILE), "table properties"):
            return cls(storage, props.TableProperties.from_dict(loaded))

    def discard_properties_backup(self) -> None:
        """Drop the backup a rewrite left behind (it stopped after writing the new file), once
        `hoodie.properties` reads whole."""
        if self.storage.exists(PROPERTIES_BACKUP):
            try:
                whole = _parse_checked(_read_properties(self.storage, PROPERTIES_FILE)) is not None
            except (FileNotFoundError, MalformedMetadataError):
                whole = False
            if whole:
                self.storage.delete(PROPERTIES_BACKUP)

    def replace_properties(self, properties: props.TableProperties) -> HoodieTableMetaClient:
        """Rewrite `hoodie.properties` (an upgrade's last step) through `_rewrite_properties`."""
        self._rewrite_properties(properties.to_dict())
        return HoodieTableMetaClient(self.storage, properties)

    def clear_metadata_partitions(self) -> tuple[str, ...]:
        """Clear `hoodie.table.metadata.partitions` and its `.inflight` twin, as Apache Hudi
        does when a writer turns the metadata table off, keeping every other key as stored
        (a table of Apache Hudi's has keys we do not model). Gives the partitions that were
        listed (none: nothing was written). The file is read afresh, not taken from this
        object, which another process may have outdated; this object takes what it now says."""
        stored = _load_properties(self.storage)
        if stored is None:
            raise TableNotFoundError(f"no Hudi table at '{self.base_uri}' to update")
        listed = props.metadata_partitions(stored)
        if listed:
            stored = props.without_metadata_partitions(stored)
            self._rewrite_properties(stored, comment=None)
        self.properties = props.TableProperties.from_dict(stored)
        return listed

    def set_metadata_partitions(
        self, completed: tuple[str, ...], inflight: tuple[str, ...]
    ) -> None:
        """Set `hoodie.table.metadata.partitions` (readers may use these) and its `.inflight`
        twin (being built), as Apache Hudi's `HoodieTableConfig.setMetadataPartitionState`
        does, keeping every other key as stored (read afresh, as `clear_metadata_partitions`)."""
        stored = _load_properties(self.storage)
        if stored is None:
            raise TableNotFoundError(f"no Hudi table at '{self.base_uri}' to update")
        wanted = dict(stored)
        wanted[props.METADATA_PARTITIONS] = ",".join(sorted(completed))
        wanted[props.METADATA_PARTITIONS_INFLIGHT] = ",".join(sorted(inflight))
        if wanted != stored:
            self._rewrite_properties(wanted, comment=None)
        self.properties = props.TableProperties.from_dict(wanted)

    def _rewrite_properties(
        self, wanted: dict[str, str], comment: str | None = "Properties saved by dbt-hoodie"
    ) -> None:
        """Rewrite `hoodie.properties` as Hudi does: a backup copy first, then the new file,
        read back and checked, then the backup goes. A reader or a crash between the steps
        finds a whole file, the old one or the new one: a torn or missing `hoodie.properties`
        makes readers take the backup (`_load_properties`), and the next rewrite starts again
        from it. (Hudi deletes the file before writing the new one; `write_atomic` replaces it
        in one step instead, so readers never meet a gap.)"""
        old = _load_properties(self.storage)
        if old is None:
            raise TableNotFoundError(f"no Hudi table at '{self.base_uri}' to update")
        self.storage.write_atomic(PROPERTIES_BACKUP, props.dumps(old).encode())
        crash_point("properties.backed_up")
        self.storage.write_atomic(PROPERTIES_FILE, props.dumps(wanted, comment=comment).encode())
        crash_point("properties.written")
        if _parse_checked(self.storage.read_text(PROPERTIES_FILE)) != wanted:
            raise CommitError(
                f"hoodie.properties of table '{self.name}' did not read back as written; the "
                f"previous properties are kept in {PROPERTIES_BACKUP}"
            )
        self.storage.delete(PROPERTIES_BACKUP)

    @classmethod
    def create(
        cls,
        base_uri: str | FileIO,
        properties: props.TableProperties,
        storage_options: Mapping[str, str] | None = None,
    ) -> HoodieTableMetaClient:
        """Lay out `.hoodie/` and write `hoodie.properties`; the timeline starts empty.

        `hoodie.properties` is created exclusively and last, so of two writers creating one
        table at once exactly one succeeds, and a crash leaves no table rather than half of one.
        `base_uri` may be a `FileIO` already (a table built beside another, see `sibling`).
        """
        storage = (base_uri if isinstance(base_uri, FileIO)
                   else load_file_io(base_uri, storage_options))  # fmt: skip
        if storage.exists(PROPERTIES_FILE) or storage.exists(PROPERTIES_BACKUP):
            raise TableExistsError(f"a Hudi table already exists at '{storage.base_uri}'")
        for folder in _LAYOUT_FOLDERS:
            storage.makedirs(posixpath.join(METAFOLDER, folder))
        if properties.timeline_layout_version >= 2:
            storage.makedirs(HISTORY_FOLDER)  # and the timeline folder above it
        text = props.dumps(properties.to_dict(), comment="Properties saved by dbt-hoodie")
        if not storage.create_if_absent(PROPERTIES_FILE, text.encode()):
            raise TableExistsError(f"a Hudi table already exists at '{storage.base_uri}'")
        return cls(storage, properties)

    # -- the timeline --------------------------------------------------------------------------
    def timeline(self) -> Timeline:
        return Timeline.load(self.storage, self.layout)

    def archived_instants(self) -> list[ArchivedInstant]:
        return archived_instants(self.storage, self.layout)

    def file_system_view(
        self,
        as_of: str | None = None,
        *,
        timeline: Timeline | None = None,
        metadata: bool = False,
        ignore_spurious_deletes: bool = True,
    ) -> FileSystemView:
        """The view as of `as_of` (default: the latest completed instant). `metadata`: list
        through the table's metadata table if it has a usable one (`file_listing`)."""
        timeline = timeline if timeline is not None else self.timeline()
        return FileSystemView(
            self.storage, timeline, as_of, base_file_extension=self.base_file_extension,
            listing=self.file_listing(timeline, metadata, ignore_spurious_deletes),
            commits=self.completed_commit,
        )  # fmt: skip

    def file_listing(
        self, timeline: Timeline, metadata: bool, ignore_spurious_deletes: bool = True
    ) -> FileListing:
        """Where views of this table find its files: with `metadata` (a reader's or writer's
        `hoodie.metadata.enable`) through its metadata table when
        `hoodie.table.metadata.partitions` lists `files` as completed, as Apache Hudi 1.x's
        file-system view does; else (or without one) by listing storage. A damaged metadata
        table is an error, never a fall back to storage; so is a spurious delete in it where
        `ignore_spurious_deletes` is false (a read's `_hoodie.metadata.ignore.spurious.deletes`)."""
        listing = (MetadataListing.open(self, timeline, ignore_spurious_deletes)
                   if metadata else None)  # fmt: skip
        return listing if listing is not None else StorageListing(self.storage)

    def table_metadata(self, timeline: Timeline | None = None) -> TableMetadata | None:
        """The table's metadata table (`.hoodie/metadata`) to read, or None where readers list
        storage (`hoodie.table.metadata.partitions` lists no completed `files`). `timeline`:
        the data timeline a read already loaded."""
        return TableMetadata.open(self, timeline)

    def instant_path(self, instant: Instant) -> str:
        """The timeline file of `instant` in its state. In layout 2 a completed instant's name
        holds its completion time; an instant known by its requested time and action alone
        (one in a plan, or taken from another state) is found on the timeline."""
        if instant.is_completed and self.layout.version >= 2 and instant.completion_time is None:
            names = self._completed_file_names(instant)
            if not names:
                raise FileNotFoundError(
                    f"no completed {instant.action.completes_as.value} {instant.timestamp} on "
                    f"the timeline of table '{self.name}'"
                )
            return posixpath.join(self.layout.folder, names[0])
        return self.layout.path(instant)

    def instant_content(self, instant: Instant) -> bytes:
        """What the timeline file of `instant` in its state holds (JSON or Avro)."""
        return self.storage.read_bytes(self.instant_path(instant))

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        return self.parse_instant(instant, CommitMetadata.parse, "commit metadata")

    def completed_commit(self, instant: Instant) -> CommitMetadata:
        """`commit_metadata` of a completed instant, parsed once by this meta client (the last
        few) and shared: not to be changed. A completed instant's file never changes, and a
        write reads the latest one's several times (its schema, its record sizes, its files:
        at 50,000 write stats a parse took seconds)."""
        path = self.instant_path(instant)
        with self._commits_lock:
            found = self._commits.get(path)
        if found is not None:
            return found
        found = self._parse_at(path, CommitMetadata.parse, "commit metadata")
        if instant.is_completed:
            with self._commits_lock:
                while len(self._commits) >= _PARSED_COMMITS:
                    del self._commits[next(iter(self._commits))]
                self._commits[path] = found
        return found

    def parse_instant(self, instant: Instant, parse: Callable[[bytes], T], what: str) -> T:
        """`parse` of the timeline file of `instant`; a file that does not parse is a
        `MalformedMetadataError` naming it (`what` says what it should hold)."""
        return self._parse_at(self.instant_path(instant), parse, what)

    def _parse_at(self, path: str, parse: Callable[[bytes], T], what: str) -> T:
        with malformed(self.storage.uri(path), what):
            return parse(self.storage.read_bytes(path))

    def commit_content(self, metadata: CommitMetadata) -> bytes:
        """Commit metadata as this table's timeline stores it: JSON in table version 6,
        Avro from version 8 on."""
        if self.layout.version >= 2:
            return metadata.to_avro()
        return metadata.to_json().encode()

    def check_writable(self) -> None:
        """Refuse to change a table of a version this release does not write (9 and later:
        Apache Hudi 1.1 renamed and dropped table properties and merge settings a writer must
        keep), before anything is written."""
        version = self.properties.table_version
        if version not in props.WRITABLE_VERSIONS:
            raise UnsupportedTableError(
                f"table '{self.name}' at {self.base_uri} is Hudi table version {version} "
                f"(Apache Hudi 1.1 or later); dbt-hoodie reads it but writes table versions "
                f"{' and '.join(map(str, props.WRITABLE_VERSIONS))} only: write it with Apache "
                "Hudi, or keep this model on a table of a version dbt-hoodie writes"
            )

    def save_instant(self, instant: Instant, content: bytes = b"") -> Instant:
        """Record `instant` in its state on the timeline.

        A new instant is created exclusively, so two writers can never both own one time; later
        states replace the file atomically, so readers see the old state or the new one.
        """
        self.check_writable()
        if instant.is_completed and self.layout.version >= 2 and instant.completion_time is None:
            instant = self._with_completion_time(instant)
        path = self.layout.path(instant)
        if instant.state is State.REQUESTED:
            if not self.storage.create_if_absent(path, content):
                raise CommitError(f"instant {instant.timestamp} already exists on the timeline")
        else:
            self.storage.write_atomic(path, content)
        return instant

    def _with_completion_time(self, instant: Instant) -> Instant:
        """Layout 2: an instant completes at a time after every time on the timeline, so that
        completion order is the order in which readers could first see the instants."""
        timeline = self.timeline()
        times = [*timeline.timestamps(), *(i.completion_time or "" for i in timeline)]
        done = new_instant_time(after=max([instant.timestamp, *times]))
        return instant.with_state(State.COMPLETED, done)

    def delete_instant(
        self,
        instant: Instant,
        states: tuple[State, ...] = (State.COMPLETED, State.INFLIGHT, State.REQUESTED),
    ) -> None:
        """Remove an instant's timeline files in these states, newest first by default, so the
        instant leaves the timeline before its older states do."""
        self.check_writable()
        for state in states:
            if state is State.COMPLETED and self.layout.version >= 2:
                for name in self._completed_file_names(instant):
                    self.storage.delete(posixpath.join(self.layout.folder, name))
                continue
            self.storage.delete(self.layout.path(instant.with_state(state)))

    def _completed_file_names(self, instant: Instant) -> list[str]:
        """Layout 2: the completed file of an instant, found by its requested time and action
        (callers name instants by those; the completion time is in the file's name only)."""
        if instant.completion_time is not None:
            return [
                self.layout.file_name(instant.with_state(State.COMPLETED, instant.completion_time))
            ]
        return [
            info.name
            for found, info in self.layout.instant_files(self.storage)
            if found.is_completed
            and found.timestamp == instant.timestamp
            and found.action is instant.action.completes_as
        ]

    def delete_pending_instant(self, instant: Instant) -> None:
        """Remove the requested and inflight files of an instant that will not complete."""
        self.delete_instant(instant, (State.INFLIGHT, State.REQUESTED))

    # -- what the timeline says ----------------------------------------------------------------
    def latest_commit_metadata(self) -> tuple[Instant, CommitMetadata] | None:
        for instant in reversed(self.timeline().completed.write_timeline.instants):
            return instant, self.commit_metadata(instant)
        return None

    def schema(
        self, as_of: str | None = None, timeline: Timeline | None = None
    ) -> pa.Schema | None:
        """The latest writer schema (without meta columns), or None for a table with no commits.

        `as_of`: the schema of the latest write at or before that instant, as Apache Hudi's time
        travel reads it (and no later commit's metadata is read, so a damaged later instant
        does not stop it). `timeline`: the one a read planned against, so that its schema and
        its files come from one snapshot of the timeline."""
        writes = (timeline if timeline is not None else self.timeline()).completed.write_timeline
        if as_of is not None:
            writes = writes.before_or_at(as_of)
        for instant in reversed(writes.instants):
            avro = self.completed_commit(instant).schema
            if avro:
                path = self.storage.uri(self.instant_path(instant))
                with malformed(path, "commit metadata (its writer schema)"):
                    return from_avro_schema(avro)
        if self.properties.create_schema:
            return from_avro_schema(self.properties.create_schema)
        return None

    def earliest_commit_to_retain(self) -> str | None:
        """The start of the readable range that cleaning left: the latest clean's retained
        commit (older file versions may be gone). Where the clean's metadata is damaged, its
        plan (`.clean.requested`, which holds the same instant) says it: one damaged file
        does not make all earlier history unreadable."""
        for instant in reversed(self.timeline().completed.instants):
            if instant.action is Action.CLEAN:
                retained = self.retained_by_clean(instant)
                if retained:
                    return retained
        return None

    def retained_by_clean(self, clean: Instant) -> str | None:
        """A completed clean's earliest retained commit: from its metadata, or where that is
        damaged from its plan; `MalformedMetadataError` when neither reads."""
        retained: str | None
        try:
            retained = self.parse_instant(
                clean, CleanMetadata.from_avro, "clean metadata (Avro)"
            ).earliest_commit_to_retain
        except (MalformedMetadataError, FileNotFoundError) as damaged:
            retained = self._planned_retention(clean, damaged)
        return retained or None

    def _planned_retention(self, clean: Instant, damaged: Exception) -> str | None:
        """The earliest instant a clean's plan retained; `damaged` (the completed clean's own
        error) if the plan does not read either."""
        try:
            plan = self.parse_instant(
                clean.with_state(State.REQUESTED), CleanerPlan.from_avro, "a clean plan (Avro)"
            )
        except (MalformedMetadataError, FileNotFoundError):
            raise damaged from None
        earliest = plan.earliest_instant_to_retain
        return earliest.timestamp if earliest is not None else None


def _load_properties(storage: FileIO) -> dict[str, str] | None:
    """`hoodie.properties`, or its backup where a rewrite left the file missing or torn (see
    `_parse_checked`); None if the table has neither. A file that is neither whole nor backed
    up is a `MalformedMetadataError` naming it, never a table of other properties (an emptied
    file once read as "table version 0")."""
    for candidate in (PROPERTIES_FILE, PROPERTIES_BACKUP):
        try:
            loaded = _parse_checked(_read_properties(storage, candidate))
        except (FileNotFoundError, MalformedMetadataError):
            continue
        if loaded is not None:
            return loaded
    try:
        text = _read_properties(storage, PROPERTIES_FILE)
    except FileNotFoundError:
        return None
    loaded = props.loads(text)
    problem = None
    if not text.strip():
        problem = "is empty"
    elif not loaded.get(props.TABLE_VERSION, "").strip().isdigit():
        problem = f"has no {props.TABLE_VERSION}"
    elif props.TABLE_CHECKSUM in loaded:  # Hudi's own guard: the file is not as written
        problem = (
            f"does not match its {props.TABLE_CHECKSUM}"
            if props.TABLE_NAME not in loaded or _parse_checked(text + "\n") is None
            else "ends inside a line"
        )
    elif not text.endswith("\n"):  # Java's Properties.store ends every line
        problem = "ends inside a line"
    if problem is None:  # whole, with no checksum or no table name: another writer's, as it is
        return loaded
    path = storage.uri(PROPERTIES_FILE)
    raise MalformedMetadataError(
        f"{path} {problem} (damaged or cut short), and there is no whole backup "
        f"({PROPERTIES_BACKUP}): restore the table's hoodie.properties from a backup",
        path,
    )


def _read_properties(storage: FileIO, relative: str) -> str:
    with malformed(storage.uri(relative), "Java properties text (UTF-8)"):
        return storage.read_text(relative)


def _parse_checked(text: str) -> dict[str, str] | None:
    """The properties, if the file ends whole (on a line end) and their checksum (Hudi's guard
    against torn files; tables of other writers may carry none) is right."""
    loaded = props.loads(text)
    if not text.endswith("\n") or props.TABLE_NAME not in loaded:
        return None
    if not loaded.get(props.TABLE_VERSION, "").strip().isdigit():
        return None  # cut short at a line end, before the version
    checksum = loaded.get(props.TABLE_CHECKSUM)
    if checksum is None:
        return loaded
    expected = props.table_checksum(
        loaded.get(props.DATABASE_NAME, ""), loaded.get(props.TABLE_NAME, "")
    )
    return loaded if checksum == str(expected) else None


def merge_mode_for(config: WriteConfig, stored: props.TableProperties | None = None) -> MergeMode:
    """The merge mode a write's config asks for: its payload class and merge mode; neither
    set, the `stored` table's (if any), else the default by the precombine field."""
    if stored is not None and not (config.payload_class or config.record_merge_mode):
        return merge_mode_of(stored)
    return merge_mode_for_write(
        config.payload_class, config.record_merge_mode, config.precombine_field
    )


def table_properties_for(
    config: WriteConfig, stored: props.TableProperties | None = None
) -> props.TableProperties:
    """The `hoodie.properties` a table created by this config gets (`stored`: the table's
    properties, for what a later write leaves unsaid of its key generator, and whose merge
    mode it keeps unless the config names one)."""
    keygen = KeyGenerator.for_write(config, stored)
    # (Apache Hudi 1.2 keeps them for TimestampBasedKeyGenerator, not for a custom one's parts)
    dated = keygen.timestamp is not None and keygen.kind == "TIMESTAMP"
    timestamp = dict(keygen.timestamp.settings) if keygen.timestamp and dated else {}
    version = config.table_version or props.DEFAULT_TABLE_VERSION
    merge_keys = merge_mode_for(config, stored).table_keys(version)
    mode = merge_keys.pop(props.RECORD_MERGE_MODE, None)
    cdc_enabled, cdc_mode = _cdc_for(config, stored)
    return props.TableProperties(
        table_version=version,
        timeline_layout_version=props.READABLE_VERSIONS[version],
        name=config.table_name,
        table_type=config.table_type,
        record_key_fields=config.record_key_fields,
        partition_fields=config.partition_fields,
        precombine_field=config.precombine_field,
        key_generator_class=keygen.class_name,
        partition_types=keygen.partition_types,
        hive_style_partitioning=config.hive_style_partitioning,
        url_encode_partition_path=config.url_encode_partition_path,
        database=config.database,
        record_merge_mode=mode,
        cdc_enabled=cdc_enabled,
        cdc_supplemental_logging_mode=cdc_mode,
        extra={
            props.TIMELINE_TIMEZONE: str(table_options.TIMELINE_TIMEZONE.default),
            **merge_keys,
            **timestamp,  # only those set, as Apache Hudi 1.x keeps them
        },
    )


def _cdc_for(config: WriteConfig, stored: props.TableProperties | None) -> tuple[bool, str]:
    """CDC logging as the config asks for it, else as the `stored` table has it, else off."""
    default = str(table_options.CDC_SUPPLEMENTAL_LOGGING_MODE.default)
    enabled = config.cdc_enabled
    if enabled is None:
        enabled = stored.cdc_enabled if stored is not None else False
    mode = config.cdc_supplemental_logging_mode
    if mode is None:
        mode = stored.cdc_supplemental_logging_mode if stored is not None else default
    return enabled, mode


@dataclass(frozen=True)
class IdentityChange:
    """One setting of a table's identity that a write asks to change."""

    setting: str  # the write config's name for it
    stored: object
    wanted: object


# A table's identity: what its files are laid out by, and never changes in place.
_IDENTITY = (
    ("record_key", "record_key_fields"),
    ("partition_path", "partition_fields"),
    ("precombine_field", "precombine_field"),
    ("table_type", "table_type"),
    ("hive_style_partitioning", "hive_style_partitioning"),
    # Escaped or not, a value's folder differs: a write asking otherwise would put its keys
    # in other partitions than the table's, so it is refused (the stored setting used to be
    # taken silently, whatever the write asked).
    (props.URL_ENCODE_PARTITIONING, "url_encode_partition_path"),
)


def identity_changes(
    stored: props.TableProperties,
    wanted: props.TableProperties,
    config: WriteConfig | None = None,
) -> list[IdentityChange]:
    """The identity settings in which `wanted` differs from the table's `stored` properties;
    with the write's `config`, its merge mode too where it names one (unnamed, the table's
    is used): a table keeps how its versions merge, as Apache Hudi refuses to change it."""
    changes = [
        IdentityChange(setting, getattr(stored, field), getattr(wanted, field))
        for setting, field in _IDENTITY
        if getattr(stored, field) != getattr(wanted, field)
    ]
    if config is not None and (config.payload_class or config.record_merge_mode):
        have, want = merge_mode_of(stored), merge_mode_for(config)
        if have.name != want.name:
            changes.append(IdentityChange("merge mode", have.name, want.name))
    return changes + _cdc_changes(stored, wanted) + _key_generator_changes(stored, wanted)


def _cdc_changes(
    stored: props.TableProperties, wanted: props.TableProperties
) -> list[IdentityChange]:
    """CDC logging is set when a table is created (decision D2): turned on later, the commits
    before would have no `.cdc` files, on which Apache Hudi's CDC query fails; turned off or
    to another mode, readers would find files of two kinds."""
    if stored.cdc_enabled != wanted.cdc_enabled:
        return [IdentityChange(table_options.CDC_ENABLED.key, stored.cdc_enabled,
                               wanted.cdc_enabled)]  # fmt: skip
    have, want = stored.cdc_supplemental_logging_mode, wanted.cdc_supplemental_logging_mode
    if stored.cdc_enabled and have != want:
        return [IdentityChange(table_options.CDC_SUPPLEMENTAL_LOGGING_MODE.key, have, want)]
    return []


_DATED = (props.TIMESTAMP_KEYGEN, props.CUSTOM_KEYGEN)


def _key_generator_changes(
    stored: props.TableProperties, wanted: props.TableProperties
) -> list[IdentityChange]:
    """A timestamp or custom key generator, its part types and its timebased settings make
    the folders: a write asking for others would put keys elsewhere. (Simple, complex and
    non-partitioned follow from the fields, which `_IDENTITY` compares.)"""
    classes = stored.key_generator_class, wanted.key_generator_class
    if not set(classes) & set(_DATED):
        return []
    if classes[0] != classes[1]:
        return [IdentityChange("hoodie.datasource.write.keygenerator.class", *classes)]
    if stored.partition_types and stored.partition_types != wanted.partition_types:
        return [IdentityChange("partition field types", stored.partition_types,
                               wanted.partition_types)]  # fmt: skip
    # (Apache Hudi 0.15 keeps some of them only: those kept must agree)
    kept = timestamp_settings(stored.extra)
    asked = {k: v for k, v in timestamp_settings(wanted.extra).items() if k in kept}
    if kept != asked:
        return [IdentityChange("hoodie.keygen.timebased.*", kept, asked)]
    return []

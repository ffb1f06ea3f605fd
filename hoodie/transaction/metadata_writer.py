"""Keeping a table's metadata table's `files` partition up to date, as Apache Hudi's
`HoodieBackedTableMetadataWriter` does (docs/design/metadata-table.md, sections 1 and 4).

With `hoodie.metadata.enable=true`, every action of ours that changes the data table's files
commits one delta commit to the metadata table (MDT, `.hoodie/metadata`) with the data
instant's time, holding the action's `files` records (`hoodie.metadata_conversion`), and
completes it **before** the data instant: readers count an MDT delta commit only once its data
instant completed (or was rolled back), so an MDT ahead of the data table is harmless, and one
behind it would hide files. It runs inside the action's `Transaction`, under the table lock
when there is one, after the conflict checks.

The first such action initializes the MDT (design 4.2): `files` listed as being built
(`hoodie.table.metadata.partitions.inflight`), the MDT's own `hoodie.properties` as Apache
Hudi writes it for the table version, one initialization delta commit holding the `files`
base HFile of a listing as of the latest completed instant and the empty delete block log file
of the file group, then `files` moved to the completed list. A table with MDT partitions we do
not maintain (column stats, bloom filters, record index, ...), or an MDT we cannot read, is
turned off first and built again with `files` only.

Each delta commit writes a new log file of `files-0000-0` (never an append, so a crash leaves
a file no completed instant names): version 8 names it by its own instant
(`.files-0000-0_<instant>.log.1_0-0-0`, as 1.2 does), version 6 by the latest base file's
instant with the next log version (as 0.15 does). An MDT delta commit a crash left pending is
removed (its log file, then its instant files) before the next one: MDT writes happen under
the data table's lock, so no other writer owns it, unless that writer's lock expired while it
wrote (a stalled process): it checks that it still holds the lock just before its delta commit
completes, and fails rather than complete one whose files another writer removed.

The MDT's own compaction, clean and archival run after a write
(`hoodie.table_services.metadata_services`); a compaction a crash left pending is removed here,
with its base files, before the next delta commit (nothing reads a pending compaction's files).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import properties as props
from ..avro_metadata import (
    CleanMetadata,
    InstantInfo,
    RestoreMetadata,
    RollbackMetadata,
    RollbackPlan,
)
from ..config import BLOOM_FILTERS, COLUMN_STATS, RECORD_INDEX, MetadataIndexes
from ..exceptions import HoodieError, InvalidConfigError, MalformedMetadataError
from ..faults import armed, crash_point
from ..fs_view import CommittedInstants, FileSystemView, damaged_data_file
from ..logformat import delete_block
from ..markers import WriteMarkers
from ..merge import merge_mode_of
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata, WriteStat
from ..metadata_conversion import (
    clean_files_records,
    commit_files_records,
    listing_files_records,
    restore_files_records,
    rollback_files_records,
)
from ..metadata_records import (
    FilesRecord,
    MetadataPartitionType,
    MetadataRecord,
    file_group_id,
    file_group_index,
    metadata_record_schema,
    partition_identifier,
)
from ..naming import (
    log_file_name,
    parse_base_file_name,
    parse_cdc_log_file_name,
    parse_log_file_name,
    partition_metadata_text,
)
from ..schema import from_avro_schema, with_meta_columns
from ..storage import FileIO
from ..table_metadata import (
    HFILE_EXTENSION,
    METADATA_FOLDER,
    SOLO_COMMIT_TIMESTAMP,
    MetadataTableProperties,
)
from ..timeline import METAFOLDER, Action, Instant, State, Timeline, layout_of
from .metadata_files import deflate_of, log_content, metadata_base_file, sorted_entries
from .metadata_indexes import (
    IndexedColumns,
    IndexJob,
    IndexRecordMaker,
    IndexRecords,
    write_index_files,
)
from .metadata_table import turn_off_metadata_table
from .record_index import (
    RECORD_INDEX_ENTRY_SIZE,
    GroupWriter,
    KeySource,
    RecordIndexChanges,
    SliceReading,
    active_session,
    capture_undone,
    located_entries,
    on_driver,
    read_on_driver,
    slice_size,
    stats_of,
    undone_changes,
    unrecorded,
    write_with_spark,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

FILES = MetadataPartitionType.FILES
FILES_PARTITION = FILES.partition_name
FILES_FILE_ID = file_group_id(FILES.file_id_prefix, 0)  # files-0000-0
# The partitions we write: `files`, and the indexes of issue 41's step 7.
MAINTAINED = (FILES_PARTITION, COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX)
WRITE_TOKEN = "0-0-0"  # one writer, no Spark task: Apache Hudi's initialization token
# Version 6's initialization instant: the base plus `PARTITION_INITIALIZATION_TIME_SUFFIX`
# (10) plus the partition's position (files: 0) as 3 digits; version 8's base is 17 digits.
V6_FILES_SUFFIX = "010"
V8_SOLO_COMMIT_TIMESTAMP = SOLO_COMMIT_TIMESTAMP + "000"
PAYLOAD_CLASS = "org.apache.hudi.metadata.HoodieMetadataPayload"
V6_KEYGEN_CLASS = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
V6_MERGER_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
V8_MERGE_STRATEGY_ID = "00000000-0000-0000-0000-000000000000"
_DATA_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION,
                 Action.CLUSTERING)  # fmt: skip


def metadata_table_properties(data: props.TableProperties) -> dict[str, str]:
    """The MDT's `hoodie.properties` as Apache Hudi writes it for the data table's version
    (design 1.3; key for key what 0.15 and 1.2 wrote): a merge-on-read table of HFiles keyed
    by `key`, without meta fields."""
    version = data.table_version
    out = {
        props.TABLE_NAME: f"{data.name}_metadata",
        props.TABLE_TYPE: props.MERGE_ON_READ,
        props.TABLE_VERSION: str(version),
        props.BASE_FILE_FORMAT: "HFILE",
        props.RECORD_KEY_FIELDS: "key",
        props.POPULATE_META_FIELDS: "false",
        props.PAYLOAD_CLASS: PAYLOAD_CLASS,
        props.DROP_PARTITION_COLUMNS: "false",
        props.TIMELINE_LAYOUT_VERSION: str(props.READABLE_VERSIONS[version]),
        # no database name: Apache Hudi's checksum of the MDT is of `.<name>`
        props.TABLE_CHECKSUM: str(props.table_checksum("", f"{data.name}_metadata")),
    }
    if version >= 8:
        out.update({
            props.INITIAL_VERSION: str(version),
            props.KEY_GENERATOR_TYPE: "HOODIE_TABLE_METADATA",
            props.RECORD_MERGE_MODE: "CUSTOM",
            props.RECORD_MERGE_STRATEGY_ID: V8_MERGE_STRATEGY_ID,
            props.TIMELINE_PATH: "timeline",
            props.TIMELINE_HISTORY_PATH: "history",
            props.ARCHIVELOG_FOLDER: "history",
        })  # fmt: skip
    else:
        out.update({
            props.KEY_GENERATOR_CLASS: V6_KEYGEN_CLASS,
            props.RECORD_MERGER_STRATEGY: V6_MERGER_STRATEGY,
            props.ARCHIVELOG_FOLDER: "archived",
        })  # fmt: skip
    return out


def upgraded_metadata_table_properties(stored: dict[str, str]) -> dict[str, str]:
    """A version 6 MDT's `hoodie.properties` as Apache Hudi 1.2's upgrade to version 8 leaves
    it (design 4.4): version and layout, the initial version, the timeline path, the key
    generator's type beside its class, the CUSTOM merge mode and both strategy ids zero;
    `hoodie.archivelog.folder` kept; every other key as stored."""
    upgraded = dict(stored)
    upgraded.update({
        props.TABLE_VERSION: "8",
        props.INITIAL_VERSION: stored.get(props.TABLE_VERSION, "6"),
        props.TIMELINE_LAYOUT_VERSION: str(props.READABLE_VERSIONS[8]),
        props.TIMELINE_PATH: "timeline",
        props.KEY_GENERATOR_TYPE: "HOODIE_TABLE_METADATA",
        props.RECORD_MERGE_MODE: "CUSTOM",
        props.RECORD_MERGE_STRATEGY_ID: V8_MERGE_STRATEGY_ID,
        props.RECORD_MERGER_STRATEGY: V8_MERGE_STRATEGY_ID,
    })  # fmt: skip
    return upgraded


def files_records_of(action: Action, content: bytes) -> list[FilesRecord] | None:
    """The `files` records of a completed data action from the content of its completed
    instant file; None for an action that changes no file (a savepoint)."""
    if action in _DATA_ACTIONS:
        return commit_files_records(CommitMetadata.parse(content), action.value)
    if action is Action.CLEAN:
        return clean_files_records(CleanMetadata.from_avro(content))
    if action is Action.ROLLBACK:
        return rollback_files_records(RollbackMetadata.from_avro(content))
    if action is Action.RESTORE:
        return restore_files_records(RestoreMetadata.from_avro(content))
    return None


@dataclass
class MetadataTableWriter:
    """The `files` partition of one data table's MDT, written by actions of ours."""

    data: HoodieTableMetaClient
    mdt: HoodieTableMetaClient  # the MDT as a table: its timeline, instants, commit metadata

    @property
    def version(self) -> int:
        return self.data.properties.table_version

    @property
    def hbase_keys(self) -> bool:
        """Whole KeyValue keys in HFile indexes: Apache Hudi 0.15 (table version 6) reads the
        metadata table with HBase's reader, which needs them once a file has two blocks."""
        return self.version < 8

    @property
    def schema(self) -> str:
        return metadata_record_schema(self.version)

    # -- opening ---------------------------------------------------------------------------------
    @classmethod
    def for_action(
        cls,
        data: HoodieTableMetaClient,
        instant_time: str,
        action: str,
        records: Sequence[FilesRecord] = (),
        indexes: MetadataIndexes = MetadataIndexes(),  # noqa: B008 (frozen)
        spark: SparkSession | None = None,
    ) -> MetadataTableWriter | None:
        """The MDT to bring `instant_time`'s action into, initialized if the table has none
        usable, with the index partitions `indexes` keeps built or dropped first; None when it
        cannot be built now (a data instant older than the latest completed one is pending:
        its files are in no listing and would be missed, the rule Apache Hudi initializes
        by). `records`: the action's own `files` records, whose files a listing leaves to
        them (Apache Hudi builds the table before the action writes; here the action's files
        exist already, and a version 6 log file's name does not say which instant wrote it)."""
        data.properties = HoodieTableMetaClient.load(data.storage).properties  # afresh
        stored = props.metadata_partitions(data.properties.extra)
        completed = _csv(data.properties.extra.get(props.METADATA_PARTITIONS))
        inflight = _csv(data.properties.extra.get(props.METADATA_PARTITIONS_INFLIGHT))
        writer = None
        if FILES_PARTITION in completed and set(completed) <= set(MAINTAINED) and not inflight:
            writer = cls.open_existing(data)
        if writer is None:
            if stored or data.storage.exists(METADATA_FOLDER):
                turn_off_metadata_table(data, f"{action} (rebuilding the metadata table)")
            writer = cls._initialize(data, instant_time, records)
        if writer is not None:
            writer._sync_indexes(indexes, instant_time, records, spark)
        return writer

    @classmethod
    def open_existing(cls, data: HoodieTableMetaClient) -> MetadataTableWriter | None:
        """The MDT the table lists, or None where it must be built again (damaged, or of
        another table version)."""
        storage = data.storage.subfolder(METADATA_FOLDER)
        try:
            loaded = MetadataTableProperties.load(storage)
        except MalformedMetadataError as error:
            log.warning("table '%s': %s; building it again", data.name, error)
            return None
        if loaded.table_version != data.properties.table_version:
            return None
        return cls(data, _mdt_client(data, storage))

    @property
    def partitions(self) -> tuple[str, ...]:
        """The MDT partitions the data table lists as built."""
        return tuple(_csv(self.data.properties.extra.get(props.METADATA_PARTITIONS)))

    @classmethod
    def _initialize(
        cls, data: HoodieTableMetaClient, instant_time: str, records: Sequence[FilesRecord]
    ) -> MetadataTableWriter | None:
        timeline = data.timeline()
        if _blocking(data, timeline, instant_time):
            return None
        latest = timeline.completed.last_timestamp()
        version = data.properties.table_version
        if version >= 8:
            init = latest or V8_SOLO_COMMIT_TIMESTAMP
        else:
            init = (latest or SOLO_COMMIT_TIMESTAMP) + V6_FILES_SUFFIX
        data.set_metadata_partitions(completed=(), inflight=(FILES_PARTITION,))
        crash_point("metadata_table.init_started")
        storage = data.storage.subfolder(METADATA_FOLDER)
        mdt_props = metadata_table_properties(data.properties)
        for folder in (".temp", ".aux", ".schema", mdt_props[props.ARCHIVELOG_FOLDER]):
            storage.makedirs(posixpath.join(METAFOLDER, folder))
        layout = layout_of(int(mdt_props[props.TIMELINE_LAYOUT_VERSION]))
        storage.makedirs(layout.folder)
        storage.write_atomic(
            posixpath.join(METAFOLDER, "hoodie.properties"),
            props.dumps(mdt_props, comment="Properties saved by dbt-hoodie").encode(),
        )
        writer = cls(data, _mdt_client(data, storage))
        listing = listing_files_records(_listing(data, timeline, records))
        writer._build_partition(FILES_PARTITION, init, {FILES_PARTITION: listing}, 1)
        data.set_metadata_partitions(completed=(FILES_PARTITION,), inflight=())
        log.info("table '%s': metadata table built (files) at %s", data.name, init)
        return writer

    # -- the index partitions --------------------------------------------------------------------
    def _sync_indexes(
        self,
        indexes: MetadataIndexes,
        instant_time: str,
        records: Sequence[FilesRecord],
        spark: SparkSession | None = None,
    ) -> None:
        """Drop the index partitions `indexes` turns off, build those it turns on, unless an
        older data instant is pending (its files are in no listing, as for `files`): then a
        later action builds them, and this one's delta commit holds the partitions built.
        The record index is built from the keys of every latest slice, read in Spark tasks
        (`spark`, or the active session) unless the table is small."""
        existing = [p for p in self.partitions if p != FILES_PARTITION]
        kept = indexes.kept(existing)
        for partition in existing:
            if partition not in kept:
                self._drop_partition(partition)
        missing = [p for p in kept if p not in existing]
        if not missing:
            return
        if RECORD_INDEX in missing and not self.data.properties.populate_meta_fields:
            raise InvalidConfigError(
                f"table '{self.data.name}' was written without meta fields "
                "(hoodie.populate.meta.fields=false): its files hold no _hoodie_record_key "
                "column to build the metadata table's record index from. Leave "
                "hoodie.metadata.global.record.level.index.enable unset (or false)"
            )
        timeline = self.data.timeline()
        if _blocking(self.data, timeline, instant_time):
            return
        maker = self.index_record_maker(missing, indexes)
        own = {(r.key, name) for r in records if not r.is_partition_list for name in r.files}
        files = [
            (partition, path) for partition, path in _latest_files(self.data, timeline)
            if (partition_identifier(partition), posixpath.basename(path)) not in own
        ]  # fmt: skip
        built = maker.files(files, spark)
        for partition in missing:
            init = self._init_instant(timeline)
            self.data.set_metadata_partitions(completed=self.partitions,
                                              inflight=(partition,))  # fmt: skip
            if partition == RECORD_INDEX:
                self._build_record_index(init, timeline, indexes, spark)
            else:
                job = None
                if built.job is not None:  # a job a partition: each its own delta commit
                    job = dataclasses.replace(built.job, maker=built.job.maker.only(partition))
                self._build_partition(partition, init, built.records,
                                      indexes.file_groups(partition), job)  # fmt: skip
            self.data.set_metadata_partitions(completed=(*self.partitions, partition),
                                              inflight=())  # fmt: skip
            log.info("table '%s': metadata table's %s built at %s (%d file(s))",
                     self.data.name, partition, init, len(files))  # fmt: skip

    def index_record_maker(
        self, partitions: Sequence[str] | None = None, indexes: MetadataIndexes | None = None
    ) -> IndexRecordMaker:
        """What makes this table's `column_stats` / `bloom_filters` records (of `partitions`,
        by default those built), indexing the configured columns or the version's default."""
        indexes = indexes or MetadataIndexes()
        columns = IndexedColumns(self.version, indexes.column_list, indexes.max_columns)
        chosen = self.partitions if partitions is None else partitions
        schema = None
        if COLUMN_STATS in chosen:
            stored = self.data.schema()
            schema = with_meta_columns(stored) if stored is not None else None
        return IndexRecordMaker(self.data.storage, chosen, columns, schema)

    def _drop_partition(self, partition: str) -> None:
        """Turn one index partition off as Apache Hudi does: listed no more first (readers
        stop using it), then its folder deleted."""
        self.data.set_metadata_partitions(
            completed=tuple(p for p in self.partitions if p != partition), inflight=()
        )
        crash_point("metadata_table.index_dropped")
        self.mdt.storage.delete_dir(partition)
        log.info("table '%s': metadata table's %s dropped", self.data.name, partition)

    def _init_instant(self, timeline: Timeline) -> str:
        """The initialization instant of another partition: version 6, the latest completed
        data instant with the next free suffix from `010` (Apache Hudi 0.15's
        `createIndexInitTimestamp`); version 8, that instant plus the fewest milliseconds
        that make it new to both timelines (1.2's `generateUniqueInstantTime`)."""
        taken = {i.timestamp for i in self.mdt.timeline()} | {i.timestamp for i in timeline}
        latest = timeline.completed.last_timestamp()
        for step in range(1, 1000):
            if self.version >= 8:
                candidate = plus_millis(latest or V8_SOLO_COMMIT_TIMESTAMP, step)
            else:
                candidate = (latest or SOLO_COMMIT_TIMESTAMP) + f"{9 + step:03d}"
            if candidate not in taken:
                return candidate
        raise HoodieError(f"metadata table of '{self.data.name}': no initialization instant free")

    # -- writing ---------------------------------------------------------------------------------
    def _build_partition(
        self,
        partition: str,
        init: str,
        records: Mapping[str, Sequence[MetadataRecord]],
        file_groups: int,
        job: IndexJob | None = None,
    ) -> None:
        """A partition's initialization delta commit (Apache Hudi's `initializeFileGroups` and
        bulk insert): per file group an empty delete block log file and, where it has records,
        a base HFile of them: made here from `records`, or (`job`) by a Spark job whose tasks
        read the files and write the base files (the inflight names every group's)."""
        storage = self.mdt.storage
        storage.makedirs(partition)
        storage.write_atomic(
            posixpath.join(partition, ".hoodie_partition_metadata"),
            partition_metadata_text(init, 1).encode(),
        )
        kind = MetadataPartitionType.of(partition)
        groups: dict[str, list[MetadataRecord]] = {
            file_group_id(kind.file_id_prefix, i): [] for i in range(file_groups)
        }
        for record in records.get(partition, ()):
            file_id = file_group_id(kind.file_id_prefix, file_group_index(record.key, file_groups))
            groups[file_id].append(record)
        instant = self._begin(init)
        files: list[tuple[WriteStat, bytes]] = []
        names = {f: f"{f}_{WRITE_TOKEN}_{init}{HFILE_EXTENSION}" for f in groups}
        for file_id, grouped in groups.items():
            if grouped:
                entries = sorted_entries(grouped, self.version)
                base = metadata_base_file(entries, self.version, deflate_of(partition))
                files.append((self._stat(partition, file_id, names[file_id], len(base), init,
                                         len(entries)), base))  # fmt: skip
            empty = delete_block([], init)
            name = log_file_name(file_id, init, 1, WRITE_TOKEN)
            files.append((self._stat(partition, file_id, name, len(empty), init, 0), empty))
        stats = [stat for stat, _ in files]
        planned = []
        if job is not None:
            planned = [self._stat(partition, f, names[f], 0, init, 0) for f in groups]
        self.mdt.save_instant(
            instant.with_state(State.INFLIGHT), self._content(stats + planned, "BULK_INSERT")
        )
        for stat, content in files:
            assert stat.path is not None
            storage.write_bytes(stat.path, content)
        if job is not None:
            paths = {i: posixpath.join(partition, names[f]) for i, f in enumerate(groups)}
            written = write_index_files(job, storage, self.version, init, {partition: paths},
                                        base_file=True)  # fmt: skip
            stats += self._job_stats(written, init)
        crash_point("metadata_table.init_written")
        self.mdt.save_instant(
            instant.with_state(State.COMPLETED), self._content(stats, "BULK_INSERT")
        )

    def _build_record_index(
        self,
        init: str,
        timeline: Timeline,
        indexes: MetadataIndexes,
        spark: SparkSession | None,
    ) -> None:
        """The `record_index` partition's initialization delta commit (Apache Hudi's
        `initializeRecordIndexPartition`): the live keys of every file group's latest slice as
        of the latest completed instant, each located in its file group at the slice's base
        instant; as many file groups as `estimate_file_group_count` gives for the base files'
        rows (Apache Hudi's entry size, 48 bytes); per file group an empty delete block log
        file and a base HFile of its keys (a table without meta fields is refused before:
        `_sync_indexes`)."""
        storage = self.data.storage
        view = FileSystemView(storage, timeline)
        sources, rows = [], 0
        for file_group in view.file_groups():
            latest = file_group.latest_slice
            if latest is None:
                continue
            logs = tuple(lf.relative_path for lf in latest.log_files)
            sources.append(KeySource.of_slice(latest, latest.base_instant,
                                              view.block_spans(logs)))  # fmt: skip
            if latest.base_file is not None:
                with damaged_data_file(storage, latest.base_file.relative_path,
                                       "a parquet base file"):  # fmt: skip
                    parquet = storage.parquet_file(latest.base_file.relative_path)
                    rows += parquet.metadata.num_rows
        count = indexes.record_index_file_groups(rows, RECORD_INDEX_ENTRY_SIZE)
        kind = MetadataPartitionType.RECORD_INDEX
        file_ids = [file_group_id(kind.file_id_prefix, i) for i in range(count)]
        mdt = self.mdt.storage
        mdt.makedirs(RECORD_INDEX)
        mdt.write_atomic(posixpath.join(RECORD_INDEX, ".hoodie_partition_metadata"),
                         partition_metadata_text(init, 1).encode())  # fmt: skip
        instant = self._begin(init)
        files: list[tuple[WriteStat, bytes]] = []
        for file_id in file_ids:
            empty = delete_block([], init)
            name = log_file_name(file_id, init, 1, WRITE_TOKEN)
            files.append((self._stat(RECORD_INDEX, file_id, name, len(empty), init, 0), empty))
        names = {f: f"{f}_{WRITE_TOKEN}_{init}{HFILE_EXTENSION}" for f in file_ids}
        reading = self.slice_reading(timeline)
        session = None if on_driver(rows) else active_session(spark)
        planned: list[WriteStat] = []
        if session is None:
            grouped = located_entries(read_on_driver(storage, sources, reading, count),
                                      self.version, self.timezone)  # fmt: skip
            for group, (entries, _) in sorted(grouped.items()):
                base = metadata_base_file(entries, self.version)
                file_id = file_ids[group]
                files.append((self._stat(RECORD_INDEX, file_id, names[file_id], len(base), init,
                                         len(entries)), base))  # fmt: skip
        else:
            planned = [self._stat(RECORD_INDEX, f, names[f], 0, init, 0) for f in file_ids]
        stats = [stat for stat, _ in files]
        self.mdt.save_instant(instant.with_state(State.INFLIGHT),
                              self._content(stats + planned, "BULK_INSERT"))  # fmt: skip
        for stat, content in files:
            assert stat.path is not None
            mdt.write_bytes(stat.path, content)
        if session is not None:
            paths = {i: posixpath.join(RECORD_INDEX, names[f]) for i, f in enumerate(file_ids)}
            writer = GroupWriter(mdt, self.version, self.timezone, init, paths, base_file=True)
            written = write_with_spark(session, storage, sources, reading, writer, count)
            stats += stats_of(written, dict(enumerate(file_ids)))
        crash_point("metadata_table.init_written")
        self.mdt.save_instant(
            instant.with_state(State.COMPLETED), self._content(stats, "BULK_INSERT")
        )

    def commit(
        self,
        instant_time: str,
        records: Sequence[FilesRecord],
        check_lock: Callable[[], None] = lambda: None,
        index: IndexRecords | None = None,
        record_index: RecordIndexChanges | None = None,
        spark: SparkSession | None = None,
    ) -> None:
        """One MDT delta commit at the data instant's time holding `records` (`files`),
        `index` (the index partitions' records and deleted keys) and `record_index` (the
        record index's changes, as sources of keys): requested, inflight naming its log files
        (one per file group written: a data block, and a delete block where keys go), the log
        files, completed. The record index's log files are made here for a small action and
        by a Spark job (`spark`, or the active session) for a large one, whose inflight names
        every file group's log file (the job writes those of the groups it touches).
        `check_lock` raises unless the table lock is still held: called just before the delta
        commit completes, since a writer that took an expired lock removes a pending one
        (`roll_back_pending`)."""
        self.roll_back_pending()
        instant = self._begin(instant_time)
        by_partition: dict[str, Sequence[MetadataRecord]] = {FILES_PARTITION: records}
        deletes: Mapping[str, Sequence[str]] = {}
        if index is not None:
            by_partition.update(index.records)
            deletes = index.deletes
        files: list[tuple[WriteStat, bytes]] = []
        index_job = index.job if index is not None else None
        by_job = index_job.partitions & set(self.partitions) if index_job is not None else set()
        for partition in self.partitions:
            if partition == RECORD_INDEX or partition in by_job:
                continue
            grouped = self._grouped(partition, by_partition.get(partition, ()),
                                    deletes.get(partition, ()))  # fmt: skip
            touched = [f for f, (w, r) in grouped.items()
                       if w or r or partition == FILES_PARTITION]  # fmt: skip
            names = self._next_log_names(partition, touched, instant_time)
            for file_id in touched:
                written, removed = grouped[file_id]
                content = log_content(partition, sorted_entries(written, self.version),
                                      removed, instant_time, self.version,
                                      data_block=partition == FILES_PARTITION)  # fmt: skip
                stat = self._stat(partition, file_id, names[file_id], len(content),
                                  instant_time, len(written))  # fmt: skip
                stat.num_deletes = len(removed)
                files.append((stat, content))
        job = None
        planned: list[WriteStat] = []
        if RECORD_INDEX in self.partitions and record_index is not None and record_index.sources:
            job, planned = self._record_index_files(instant_time, record_index, files, spark)
        index_paths: dict[str, dict[int, str]] = {}
        for partition in sorted(by_job):
            file_ids = self._file_ids(partition)
            names = self._next_log_names(partition, file_ids, instant_time)
            index_paths[partition] = {i: posixpath.join(partition, names[f])
                                      for i, f in enumerate(file_ids)}  # fmt: skip
            planned += [self._stat(partition, f, names[f], 0, instant_time, 0) for f in file_ids]
        stats = [stat for stat, _ in files]
        self.mdt.save_instant(instant.with_state(State.INFLIGHT),
                              self._content(stats + planned))  # fmt: skip
        storage = self.mdt.storage
        for stat, content in files:
            assert stat.path is not None
            if armed("metadata_table.log_torn"):
                storage.write_bytes(stat.path, content[: len(content) // 2])
                crash_point("metadata_table.log_torn")
            if not storage.create_if_absent(stat.path, content):
                raise HoodieError(
                    f"metadata table of '{self.data.name}': {stat.path} exists already; another "
                    "writer is writing the metadata table"
                )
        if job is not None:
            stats += job()
        if index_job is not None and index_paths:
            made = write_index_files(index_job, storage, self.version, instant_time,
                                     index_paths)  # fmt: skip
            stats += self._job_stats(made, instant_time)
        crash_point("metadata_table.log_written")
        check_lock()
        self.mdt.save_instant(instant.with_state(State.COMPLETED), self._content(stats))
        crash_point("metadata_table.committed")

    # -- the record index ------------------------------------------------------------------------
    @property
    def timezone(self) -> str:
        """The data table's timeline zone, which the record index's instant times are in."""
        return self.data.properties.extra.get(props.TIMELINE_TIMEZONE) or "LOCAL"

    def written_changes(self, instant_time: str, metadata: CommitMetadata) -> RecordIndexChanges:
        """A commit's record index changes: the keys its write tasks handed over with their
        stats; the files of stats without them (a record index another writer built while this
        one wrote) read: their keys located, their logs' deletes removed; and for a replace
        commit the live keys of the file groups it replaced removed (the keys it wrote again
        keep their new location). A compaction changes no location."""
        changes = RecordIndexChanges()
        if metadata.compacted:
            return changes
        stats = metadata.write_stats()
        changes = RecordIndexChanges.of_stats(instant_time, stats)
        for stat in unrecorded(stats):
            assert stat.path is not None
            changes.add(KeySource(stat.partition_path, stat.file_id, instant_time,
                                  written=stat.path),
                        size=stat.file_size_in_bytes)  # fmt: skip
        views: list[FileSystemView] = []

        def view() -> FileSystemView:
            if not views:
                views.append(FileSystemView(self.data.storage, self.data.timeline()))
            return views[0]

        self._on_previous_slices(changes, view)
        replaced = metadata.partition_to_replace_file_ids or {}
        if replaced:
            for group in view().file_groups(sorted(replaced)):
                latest = group.latest_slice
                if latest is None or group.file_id not in replaced[group.partition_path]:
                    continue
                logs = tuple(lf.relative_path for lf in latest.log_files)
                changes.add(KeySource.of_slice(latest, instant_time, view().block_spans(logs),
                                               removes=True),
                            size=slice_size(latest))  # fmt: skip
        return changes

    @staticmethod
    def _on_previous_slices(
        changes: RecordIndexChanges, view: Callable[[], FileSystemView]
    ) -> None:
        """The sources of written files held to their slices (`KeySource.written`: a log
        with ordered deletes, the files of tasks that recorded no keys) get the committed
        slice each builds on: the data table's view without this action (not completed yet),
        read in the tasks of the record index job (or here, for a small action)."""
        wanted = {(s.partition, s.file_id) for s in changes.sources if s.written is not None}
        if not wanted:
            return
        latest = {}
        for group in view().file_groups(sorted({p for p, _ in wanted})):
            if (group.partition_path, group.file_id) in wanted and group.latest_slice:
                latest[(group.partition_path, group.file_id)] = group.latest_slice
        for i, source in enumerate(changes.sources):
            file_slice = latest.get((source.partition, source.file_id))
            if source.written is None or file_slice is None:
                continue
            logs = tuple(lf.relative_path for lf in file_slice.log_files)
            changes.sources[i] = source.on_slice(file_slice, view().block_spans(logs))
            changes.size += slice_size(file_slice)

    def slice_reading(self, timeline: Timeline) -> SliceReading:
        """How tasks read the data table's slices as of `timeline`."""
        return SliceReading(CommittedInstants.of(timeline), merge_mode_of(self.data.properties))

    def _record_index_files(
        self,
        instant_time: str,
        changes: RecordIndexChanges,
        files: list[tuple[WriteStat, bytes]],
        spark: SparkSession | None,
    ) -> tuple[Callable[[], list[WriteStat]] | None, list[WriteStat]]:
        """The record index's part of a delta commit: made here (added to `files`) when the
        action is small or there is no Spark session; else a Spark job to run once the
        inflight names its files (every file group's: planned), and those planned stats."""
        file_ids = self._file_ids(RECORD_INDEX)
        count = len(file_ids)
        reading = self.slice_reading(self.data.timeline())
        session = None if changes.small else active_session(spark)
        if session is None:
            rows = read_on_driver(self.data.storage, changes.sources, reading, count)
            grouped = located_entries(rows, self.version, self.timezone)
            touched = [file_ids[g] for g in sorted(grouped)]
            names = self._next_log_names(RECORD_INDEX, touched, instant_time)
            for group, (entries, removed) in sorted(grouped.items()):
                file_id = file_ids[group]
                content = log_content(RECORD_INDEX, entries, removed, instant_time, self.version)
                stat = self._stat(RECORD_INDEX, file_id, names[file_id], len(content),
                                  instant_time, len(entries))  # fmt: skip
                stat.num_deletes = len(removed)
                files.append((stat, content))
            return None, []
        names = self._next_log_names(RECORD_INDEX, file_ids, instant_time)
        paths = {i: posixpath.join(RECORD_INDEX, names[f]) for i, f in enumerate(file_ids)}
        planned = [self._stat(RECORD_INDEX, f, names[f], 0, instant_time, 0) for f in file_ids]
        writer = GroupWriter(self.mdt.storage, self.version, self.timezone, instant_time, paths)

        def job() -> list[WriteStat]:
            written = write_with_spark(session, self.data.storage, changes.sources, reading,
                                       writer, count)  # fmt: skip
            return stats_of(written, dict(enumerate(file_ids)))

        return job, planned

    def _job_stats(
        self, written: Sequence[Mapping[str, Any]], instant_time: str
    ) -> list[WriteStat]:
        """The write stats of the files an index job wrote (`write_index_files`)."""
        out = []
        for done in sorted(written, key=lambda w: (w["partition"], w["group"])):
            partition = done["partition"]
            file_id = self._file_ids(partition)[done["group"]]
            out.append(self._stat(partition, file_id, posixpath.basename(done["path"]),
                                  done["size"], instant_time, done["writes"]))  # fmt: skip
        return out

    def _grouped(
        self, partition: str, records: Sequence[MetadataRecord], deletes: Sequence[str]
    ) -> dict[str, tuple[list[MetadataRecord], set[str]]]:
        """`records` and `deletes` by the partition's file group (a key's record and its
        delete in one action: the record wins, as written after)."""
        file_ids = self._file_ids(partition)
        out: dict[str, tuple[list[MetadataRecord], set[str]]] = {f: ([], set()) for f in file_ids}
        written = set()
        for record in records:
            out[file_ids[file_group_index(record.key, len(file_ids))]][0].append(record)
            written.add(record.key)
        for key in deletes:
            if key not in written:
                out[file_ids[file_group_index(key, len(file_ids))]][1].add(key)
        return out

    def _file_ids(self, partition: str) -> list[str]:
        """The partition's file groups in index order (readers and writers find a key's file
        group by the count of them, as Apache Hudi does)."""
        if partition == FILES_PARTITION:
            return [FILES_FILE_ID]
        kind = MetadataPartitionType.of(partition)
        found = set()
        for info in self.mdt.storage.list_files(partition):
            parsed = parse_log_file_name(info.name) or parse_base_file_name(
                info.name, HFILE_EXTENSION
            )
            if parsed is not None:
                found.add(parsed.file_id)
        ids = sorted(found)
        if not ids or ids != [file_group_id(kind.file_id_prefix, i) for i in range(len(ids))]:
            raise HoodieError(
                f"metadata table of '{self.data.name}': partition {partition} has file groups "
                f"{ids or 'none'}, not {kind.file_id_prefix}0000-0 onwards; turn the metadata "
                "table off and on again (hoodie.metadata.enable=false, then true) to rebuild it"
            )
        return ids

    def roll_back_pending(self) -> None:
        """Remove MDT instants a crash left pending: a delta commit's log file (its inflight
        names it), a compaction's base files (named by its instant), a clean as it is (files it
        deleted belonged to slices no reader uses), then their instant files (no reader counts
        a pending MDT instant's files)."""
        for pending in self.mdt.timeline().pending:
            if pending.action is Action.COMPACTION:
                self._remove_base_files(pending.timestamp)
            elif pending.state is State.INFLIGHT and pending.action is Action.DELTA_COMMIT:
                try:
                    planned = self.mdt.commit_metadata(pending)
                except (MalformedMetadataError, FileNotFoundError):
                    planned = CommitMetadata()
                for stat in planned.write_stats():
                    if stat.path and self.mdt.storage.exists(stat.path):
                        self.mdt.storage.delete(stat.path)
            self.mdt.delete_pending_instant(pending)
            log.info("table '%s': pending metadata table %s %s removed", self.data.name,
                     pending.action.value, pending.timestamp)  # fmt: skip

    def _remove_base_files(self, instant_time: str) -> None:
        storage = self.mdt.storage
        for folder in storage.list_dirs(""):
            if folder.startswith("."):
                continue
            for info in storage.list_files(folder):
                parsed = parse_base_file_name(info.name, HFILE_EXTENSION)
                if parsed is not None and parsed.instant == instant_time:
                    storage.delete(info.relative_path)

    def _begin(self, instant_time: str) -> Instant:
        for existing in self.mdt.timeline():
            if existing.timestamp == instant_time:
                raise HoodieError(
                    f"metadata table of '{self.data.name}' already has instant {instant_time}"
                )
        requested = Instant(instant_time, Action.DELTA_COMMIT, State.REQUESTED)
        return self.mdt.save_instant(requested)

    def _next_log_names(
        self, partition: str, file_ids: Sequence[str], instant_time: str
    ) -> dict[str, str]:
        """The log file each of `file_ids` gets in this delta commit. Version 8: a log file
        of its own instant; version 6: the next log version of the file group's latest slice
        (every name on storage counts, failed ones too)."""
        if self.version >= 8:
            return {f: log_file_name(f, instant_time, 1, WRITE_TOKEN) for f in file_ids}
        if not file_ids:
            return {}
        view = FileSystemView(self.mdt.storage, self.mdt.timeline(),
                              base_file_extension=HFILE_EXTENSION)  # fmt: skip
        latest = {g.file_id: g.latest_slice for g in view.file_groups([partition])}
        versions: dict[tuple[str, str], int] = {}
        for info in self.mdt.storage.list_files(partition):
            parsed = parse_log_file_name(info.name)
            if parsed is not None:
                at = (parsed.file_id, parsed.instant)
                versions[at] = max(versions.get(at, 0), parsed.version)
        out = {}
        for file_id in file_ids:
            slice_ = latest.get(file_id)
            if slice_ is None:
                raise HoodieError(f"metadata table of '{self.data.name}' has no {file_id}")
            base = slice_.base_instant
            out[file_id] = log_file_name(file_id, base, versions.get((file_id, base), 0) + 1,
                                         WRITE_TOKEN)  # fmt: skip
        return out

    def _stat(
        self, partition: str, file_id: str, name: str, size: int, instant_time: str, writes: int
    ) -> WriteStat:
        return WriteStat(
            file_id=file_id, partition_path=partition,
            path=posixpath.join(partition, name), prev_commit=instant_time,
            num_writes=writes, num_inserts=writes, total_write_bytes=size,
            file_size_in_bytes=size,
        )  # fmt: skip

    def _content(self, stats: list[WriteStat], operation: str = "UPSERT_PREPPED") -> bytes:
        metadata = CommitMetadata(operation_type=operation,
                                  extra_metadata={"schema": self.schema})  # fmt: skip
        for stat in stats:
            metadata.add(stat)
        return self.mdt.commit_content(metadata)


def _csv(value: str | None) -> list[str]:
    return sorted(p.strip() for p in (value or "").split(",") if p.strip())


def _mdt_client(data: HoodieTableMetaClient, storage: FileIO) -> HoodieTableMetaClient:
    """The MDT as a table of ours to put instants on, clean and archive (its base file
    format, HFILE, makes the meta client's views take `.hfile` base files)."""
    version = data.properties.table_version
    properties = props.TableProperties(
        name=f"{data.name}_metadata", table_type=props.MERGE_ON_READ, record_key_fields=("key",),
        populate_meta_fields=False, table_version=version,
        timeline_layout_version=props.READABLE_VERSIONS[version],
        # views of it take `.hfile` base files; its instants are in the data table's zone
        extra={props.BASE_FILE_FORMAT: "HFILE", **{
            key: value for key, value in data.properties.extra.items()
            if key == props.TIMELINE_TIMEZONE
        }},
    )  # fmt: skip
    return HoodieTableMetaClient(storage, properties)


def _blocking(data: HoodieTableMetaClient, timeline: Timeline, instant_time: str) -> bool:
    """Is a data instant older than the latest completed one pending (other than the action's
    own)? Its files are in no listing, so no partition is built now (Apache Hudi's rule)."""
    latest = timeline.completed.last_timestamp()
    blocking = [
        i.timestamp for i in timeline.pending
        if i.timestamp != instant_time and latest is not None and i.timestamp < latest
        and i.action in (*_DATA_ACTIONS, Action.CLEAN, Action.ROLLBACK, Action.RESTORE)
    ]  # fmt: skip
    if blocking:
        log.warning(
            "table '%s': the metadata table is not built now: %s still pending, older than "
            "the latest completed instant %s (as Apache Hudi, it is built by a later action)",
            data.name, ", ".join(blocking), latest,
        )  # fmt: skip
    return bool(blocking)


def plus_millis(instant: str, millis: int) -> str:
    """`instant` (yyyyMMddHHmmssSSS, or an initialization instant of zeros) `millis` later."""
    try:
        moment = datetime.datetime.strptime(instant[:14], "%Y%m%d%H%M%S").replace(
            microsecond=int(instant[14:17]) * 1000
        )
    except ValueError:
        return f"{int(instant) + millis:0{len(instant)}d}"
    later = moment + datetime.timedelta(milliseconds=millis)
    return later.strftime("%Y%m%d%H%M%S") + f"{later.microsecond // 1000:03d}"


def _latest_files(data: HoodieTableMetaClient, timeline: Timeline) -> list[tuple[str, str]]:
    """The base and log files of every file group's latest slice as of the latest completed
    instant ((partition path, path)), as Apache Hudi indexes them when it builds an index;
    less those pending instants marked (a version 6 log file is named by its slice's base
    instant, not by the instant that wrote it)."""
    pending = {m.data_file for i in timeline.pending
               for m in WriteMarkers(data.storage, i.timestamp).all()}  # fmt: skip
    view = FileSystemView(data.storage, timeline)
    out: list[tuple[str, str]] = []
    for group in view.file_groups():
        latest = group.latest_slice
        if latest is None:
            continue
        partition = group.partition_path
        names = [f.name for f in latest.log_files]
        if latest.base_file is not None:
            names.insert(0, latest.base_file.name)
        paths = (posixpath.join(partition, n) if partition else n for n in names)
        out.extend((partition, path) for path in paths if path not in pending)
    return out


def _listing(
    data: HoodieTableMetaClient, timeline: Timeline, records: Sequence[FilesRecord]
) -> dict[str, dict[str, int]]:
    """Every partition and its base and log files of completed instants, as of the latest
    completed instant (Apache Hudi's `DirectoryInfo` listing), less the files `records` (the
    action's own) name and those pending instants marked (a version 6 log file is named by
    its slice's base instant, not by the instant that wrote it). The file groups a replace
    commit took out are listed too, as they are on storage until a clean deletes them: a
    time-travel read to before the replace commit lists them through the metadata table."""
    own = {(r.key, name) for r in records if not r.is_partition_list for name in r.files}
    pending = {m.data_file for i in timeline.pending
               for m in WriteMarkers(data.storage, i.timestamp).all()}  # fmt: skip
    view = FileSystemView(data.storage, timeline, keep_replaced=True)
    listing: dict[str, dict[str, int]] = {p: {} for p in view.partitions()}
    for group in view.file_groups():
        partition = group.partition_path
        files = listing.setdefault(partition, {})
        named = [
            *((s.base_file.name, s.base_file.size) for s in group.slices if s.base_file),
            *((f.name, f.size) for s in group.slices for f in s.log_files),
        ]
        for name, size in named:
            if (partition_identifier(partition), name) in own:
                continue
            if posixpath.join(partition, name) not in pending:
                files[name] = size
    if data.properties.cdc_enabled:
        _add_cdc_files(data, view, listing, own)
    return listing


def _add_cdc_files(
    data: HoodieTableMetaClient,
    view: FileSystemView,
    listing: dict[str, dict[str, int]],
    own: set[tuple[str, str]],
) -> None:
    """The `.cdc` files of the slices in `view` (in no slice themselves: each belongs to the
    slice of the base file written beside it), which Apache Hudi's listing includes."""
    slices = {(g.partition_path, g.file_id, s.base_instant)
              for g in view.file_groups() for s in g.slices}  # fmt: skip
    for partition, files in listing.items():
        for info in data.storage.list_files(partition):
            parsed = parse_cdc_log_file_name(info.name)
            if parsed is None or (partition, parsed.file_id, parsed.instant) not in slices:
                continue
            if (partition_identifier(partition), info.name) not in own:
                files[info.name] = info.size


def update_metadata_table(
    meta_client: HoodieTableMetaClient,
    instant: Instant,
    content: bytes,
    check_lock: Callable[[], None] = lambda: None,
    indexes: MetadataIndexes = MetadataIndexes(),  # noqa: B008 (frozen)
    written: CommitMetadata | None = None,
    spark: SparkSession | None = None,
    record_index: RecordIndexChanges | None = None,
) -> None:
    """Just before `instant` completes with `content` (its commit, clean, rollback or restore
    metadata): the metadata table's delta commit of it, the metadata table built first if the
    table has none we keep, its index partitions as `indexes` says. `written`: a commit's
    metadata as its write tasks returned it, whose stats carry the files' column ranges and
    bloom filters and the record index's keys (else they are read from the files).
    `record_index`: a rollback's or restore's record index changes (`rollback_changes`).
    `spark`: the session the record index's jobs run in (default: the active one; none: the
    driver does them). Called under the table lock, when there is one; `check_lock` raises
    LockLostError unless it is still held (see `MetadataTableWriter.commit`)."""
    records = files_records_of(instant.action, content)
    if records is None:
        return
    what = f"{instant.action.value} {instant.timestamp}"
    writer = MetadataTableWriter.for_action(meta_client, instant.timestamp, what, records,
                                            indexes, spark)  # fmt: skip
    if writer is None:
        return
    index = None
    if set(writer.partitions) & {COLUMN_STATS, BLOOM_FILTERS}:
        maker = writer.index_record_maker(indexes=indexes)
        if instant.action in _DATA_ACTIONS:
            stats = (written or CommitMetadata.parse(content)).write_stats()
            if written is not None and written.schema:
                maker = maker.with_schema(with_meta_columns(from_avro_schema(written.schema)))
            index = maker.written(stats, spark)
        else:
            index = maker.removed(records)
    if RECORD_INDEX in writer.partitions and instant.action in _DATA_ACTIONS:
        record_index = writer.written_changes(
            instant.timestamp, written or CommitMetadata.parse(content)
        )
    writer.commit(instant.timestamp, records, check_lock, index, record_index, spark)


def capture_for_undo(
    data: HoodieTableMetaClient,
    undoing: str,
    target: InstantInfo,
    plan: RollbackPlan,
    spark: SparkSession | None = None,
) -> None:
    """Before a rollback or restore at `undoing` undoes instant `target` by `plan`: where the
    table keeps a record index that may count the instant (its metadata table delta commit
    completed; a compaction moves no key), the keys of the files it is about to delete or
    retract and the file groups they and a replace commit's replaced groups belong to, kept
    in the rollback's temp folder (`record_index.capture_undone`)."""
    data.properties = HoodieTableMetaClient.load(data.storage).properties
    if RECORD_INDEX not in props.metadata_partitions(data.properties.extra):
        return
    if target.action == Action.COMPACTION.value or (
        target.action == Action.COMMIT.value and data.merge_on_read
    ):
        return
    writer = MetadataTableWriter.open_existing(data)
    if writer is None or not any(
        i.timestamp == target.commit_time and i.action is Action.DELTA_COMMIT
        for i in writer.mdt.timeline().completed
    ):
        return
    files, groups = [], set()
    for request in plan.rollback_requests:
        for uri in [*request.files_to_be_deleted, *request.log_blocks_to_be_deleted]:
            relative = data.storage.relative(uri)
            name = posixpath.basename(relative)
            parsed = parse_base_file_name(name) or parse_log_file_name(name)
            files.append(relative)
            if parsed is not None:
                groups.add((posixpath.dirname(relative), parsed.file_id))
    for state in (State.INFLIGHT, State.COMPLETED):
        try:
            metadata = data.commit_metadata(Instant(target.commit_time, Action(target.action),
                                                    state))  # fmt: skip
        except (FileNotFoundError, MalformedMetadataError, HoodieError):
            continue
        for partition, file_ids in (metadata.partition_to_replace_file_ids or {}).items():
            groups.update((partition, f) for f in file_ids)
        break
    capture_undone(data.storage, undoing, target.commit_time, files, groups, spark)


def undone_record_index(data: HoodieTableMetaClient, undoing: str) -> RecordIndexChanges | None:
    """Once a rollback or restore at `undoing` has undone its files: its record index changes
    (`record_index.undone_changes`), against the table as it is now."""
    view = FileSystemView(data.storage, data.timeline())
    return undone_changes(data.storage, undoing, undoing, view)

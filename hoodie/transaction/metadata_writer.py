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

import base64
import datetime
import logging
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from .. import properties as props
from ..avro_metadata import CleanMetadata, RestoreMetadata, RollbackMetadata
from ..bloom_filter import BloomFilterSpec, serialized_filter
from ..config import BLOOM_FILTERS, COLUMN_STATS, MetadataIndexes
from ..exceptions import HoodieError, MalformedMetadataError
from ..faults import armed, crash_point
from ..fs_view import FileSystemView
from ..hfile import JAVA_DEFLATE, RUN_LENGTH_DEFLATE, Deflate, write_hfile
from ..logformat import DeleteRecord, delete_block, hfile_data_block
from ..markers import WriteMarkers
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
    encode_metadata_record,
    file_group_id,
    file_group_index,
    metadata_record_schema,
    partition_identifier,
)
from ..naming import (
    log_file_name,
    parse_base_file_name,
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
from .metadata_indexes import IndexedColumns, IndexRecordMaker, IndexRecords
from .metadata_table import turn_off_metadata_table

log = logging.getLogger(__name__)

FILES = MetadataPartitionType.FILES
FILES_PARTITION = FILES.partition_name
FILES_FILE_ID = file_group_id(FILES.file_id_prefix, 0)  # files-0000-0
# The partitions we write: `files`, and the indexes of issue 41's step 7.
MAINTAINED = (FILES_PARTITION, COLUMN_STATS, BLOOM_FILTERS)
WRITE_TOKEN = "0-0-0"  # one writer, no Spark task: Apache Hudi's initialization token
# Version 6's initialization instant: the base plus `PARTITION_INITIALIZATION_TIME_SUFFIX`
# (10) plus the partition's position (files: 0) as 3 digits; version 8's base is 17 digits.
V6_FILES_SUFFIX = "010"
V8_SOLO_COMMIT_TIMESTAMP = SOLO_COMMIT_TIMESTAMP + "000"
PAYLOAD_CLASS = "org.apache.hudi.metadata.HoodieMetadataPayload"
V6_KEYGEN_CLASS = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
V6_MERGER_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
V8_MERGE_STRATEGY_ID = "00000000-0000-0000-0000-000000000000"
_DATA_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION)


def deflate_of(partition: str) -> Deflate:
    """How a metadata table partition's HFile blocks are deflated: Java's default, as Apache
    Hudi writes them, but run-length for `bloom_filters` (readers cannot tell). Each of its
    records is a base file's bloom filter as base64 text (~431 KB at the default 60,000
    entries), which the default deflate took 10-17 ms a filter over in the driver: 0.46 s of
    a 1M-row upsert's 0.57 s commit of 30 files, 1.8 s of the 2.2 s the metadata table's
    compaction of 200 files' filters took (bench/README.md, metadata_table.py)."""
    return RUN_LENGTH_DEFLATE if partition == BLOOM_FILTERS else JAVA_DEFLATE


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


def _entries(records: Sequence[MetadataRecord], version: int) -> list[tuple[bytes, bytes]]:
    return sorted((r.key.encode("utf-8"), encode_metadata_record(r, version)) for r in records)


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
    ) -> MetadataTableWriter | None:
        """The MDT to bring `instant_time`'s action into, initialized if the table has none
        usable, with the index partitions `indexes` keeps built or dropped first; None when it
        cannot be built now (a data instant older than the latest completed one is pending:
        its files are in no listing and would be missed, the rule Apache Hudi initializes
        by). An index partition that cannot be built now for that reason is left to a later
        action, and the action goes into the partitions the table has, as Apache Hudi's does
        (`files` must never miss a completed instant). `records`: the action's own `files`
        records, whose files a listing leaves to them (Apache Hudi builds the table before the
        action writes; here the action's files exist already, and a version 6 log file's name
        does not say which instant wrote it)."""
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
            writer._sync_indexes(indexes, instant_time, records)
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
        self, indexes: MetadataIndexes, instant_time: str, records: Sequence[FilesRecord]
    ) -> bool:
        """Drop the index partitions `indexes` turns off, build those it turns on; False when
        one cannot be built now (an older data instant is pending: as for `files`), which a
        later action builds."""
        existing = [p for p in self.partitions if p != FILES_PARTITION]
        kept = indexes.kept(existing)
        for partition in existing:
            if partition not in kept:
                self._drop_partition(partition)
        missing = [p for p in kept if p not in existing]
        if not missing:
            return True
        timeline = self.data.timeline()
        if _blocking(self.data, timeline, instant_time):
            return False
        maker = self.index_record_maker(missing, indexes)
        own = {(r.key, name) for r in records if not r.is_partition_list for name in r.files}
        files = [
            (partition, path) for partition, path in _latest_files(self.data, timeline)
            if (partition_identifier(partition), posixpath.basename(path)) not in own
        ]  # fmt: skip
        built = maker.files(files)
        for partition in missing:
            init = self._init_instant(timeline)
            self.data.set_metadata_partitions(completed=self.partitions,
                                              inflight=(partition,))  # fmt: skip
            self._build_partition(partition, init, built.records, indexes.file_groups(partition))
            self.data.set_metadata_partitions(completed=(*self.partitions, partition),
                                              inflight=())  # fmt: skip
            log.info("table '%s': metadata table's %s built at %s (%d file(s))",
                     self.data.name, partition, init, len(files))  # fmt: skip
        return True

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
    ) -> None:
        """A partition's initialization delta commit (Apache Hudi's `initializeFileGroups` and
        bulk insert): per file group an empty delete block log file and, where it has records,
        a base HFile of them."""
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
        for file_id, grouped in groups.items():
            if grouped:
                entries = _entries(grouped, self.version)
                base = metadata_base_file(entries, self.version, deflate_of(partition))
                name = f"{file_id}_{WRITE_TOKEN}_{init}{HFILE_EXTENSION}"
                files.append((self._stat(partition, file_id, name, len(base), init,
                                         len(entries)), base))  # fmt: skip
            empty = delete_block([], init)
            name = log_file_name(file_id, init, 1, WRITE_TOKEN)
            files.append((self._stat(partition, file_id, name, len(empty), init, 0), empty))
        stats = [stat for stat, _ in files]
        self.mdt.save_instant(
            instant.with_state(State.INFLIGHT), self._content(stats, "BULK_INSERT")
        )
        for stat, content in files:
            assert stat.path is not None
            storage.write_bytes(stat.path, content)
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
    ) -> None:
        """One MDT delta commit at the data instant's time holding `records` (`files`) and
        `index` (the index partitions' records and deleted keys): requested, inflight naming
        its log files (one per file group written: a data block, and a delete block where
        keys go), the log files, completed. `check_lock` raises unless the table lock is
        still held: called just before the delta commit completes, since a writer that took
        an expired lock removes a pending one (`roll_back_pending`)."""
        self.roll_back_pending()
        instant = self._begin(instant_time)
        by_partition: dict[str, Sequence[MetadataRecord]] = {FILES_PARTITION: records}
        deletes: Mapping[str, Sequence[str]] = {}
        if index is not None:
            by_partition.update(index.records)
            deletes = index.deletes
        files: list[tuple[WriteStat, bytes]] = []
        for partition in self.partitions:
            grouped = self._grouped(partition, by_partition.get(partition, ()),
                                    deletes.get(partition, ()))  # fmt: skip
            for file_id, (written, removed) in grouped.items():
                if partition != FILES_PARTITION and not written and not removed:
                    continue
                name = self._next_log_name(partition, file_id, instant_time)
                blocks = []
                if written or partition == FILES_PARTITION:
                    blocks.append(hfile_data_block(
                        _entries(written, self.version), instant_time, self.schema,
                        hbase_keys=self.hbase_keys, deflate=deflate_of(partition),
                    ))  # fmt: skip
                if removed:
                    # as Apache Hudi writes them: the MDT partition as partition path,
                    # ordering value 0 (no ordering), the record schema in the header
                    blocks.append(delete_block(
                        [DeleteRecord(k, partition) for k in sorted(removed)],
                        instant_time, self.schema,
                    ))  # fmt: skip
                content = b"".join(blocks)
                stat = self._stat(partition, file_id, name, len(content), instant_time,
                                  len(written))  # fmt: skip
                stat.num_deletes = len(removed)
                files.append((stat, content))
        stats = [stat for stat, _ in files]
        self.mdt.save_instant(instant.with_state(State.INFLIGHT), self._content(stats))
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
        crash_point("metadata_table.log_written")
        check_lock()
        self.mdt.save_instant(instant.with_state(State.COMPLETED), self._content(stats))
        crash_point("metadata_table.committed")

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

    def _next_log_name(self, partition: str, file_id: str, instant_time: str) -> str:
        """Version 8: a log file of its own instant; version 6: the next log version of the
        file group's latest slice (every name on storage counts, failed ones too)."""
        if self.version >= 8:
            return log_file_name(file_id, instant_time, 1, WRITE_TOKEN)
        view = FileSystemView(self.mdt.storage, self.mdt.timeline(),
                              base_file_extension=HFILE_EXTENSION)  # fmt: skip
        groups = [g for g in view.file_groups([partition]) if g.file_id == file_id]
        latest = groups[0].latest_slice if groups else None
        if latest is None:
            raise HoodieError(f"metadata table of '{self.data.name}' has no {file_id}")
        versions = [
            parsed.version
            for info in self.mdt.storage.list_files(partition)
            if (parsed := parse_log_file_name(info.name)) is not None
            and parsed.file_id == file_id and parsed.instant == latest.base_instant
        ]  # fmt: skip
        return log_file_name(file_id, latest.base_instant, max(versions, default=0) + 1,
                             WRITE_TOKEN)  # fmt: skip

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


def metadata_base_file(
    entries: Sequence[tuple[bytes, bytes]], version: int, deflate: Deflate = JAVA_DEFLATE
) -> bytes:
    """An MDT base file of `entries` (sorted (key, encoded record) pairs) as Apache Hudi writes
    it: an HFile whose file info holds the record schema, the key range and the type of the
    bloom filter of its keys, which a meta block holds; whole KeyValue keys in its indexes for
    version 6 (Apache Hudi 0.15 reads it with HBase's reader); data blocks deflated as `deflate`
    says (`deflate_of` its partition)."""
    keys = pa.array([key.decode("utf-8") for key, _ in entries], pa.string())
    bloom = base64.b64encode(serialized_filter(keys, BloomFilterSpec()))
    file_info = {
        b"schema": metadata_record_schema(version).encode("utf-8"),
        b"bloomFilterTypeCode": b"DYNAMIC_V0",
    }
    if entries:
        file_info[b"minRecordKey"] = entries[0][0]
        file_info[b"maxRecordKey"] = entries[-1][0]
    return write_hfile(entries, file_info=file_info, meta_blocks={"bloomFilter": bloom},
                       hbase_keys=version < 8, deflate=deflate)  # fmt: skip


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
    its slice's base instant, not by the instant that wrote it)."""
    own = {(r.key, name) for r in records if not r.is_partition_list for name in r.files}
    pending = {m.data_file for i in timeline.pending
               for m in WriteMarkers(data.storage, i.timestamp).all()}  # fmt: skip
    view = FileSystemView(data.storage, timeline)
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
    return listing


def update_metadata_table(
    meta_client: HoodieTableMetaClient,
    instant: Instant,
    content: bytes,
    check_lock: Callable[[], None] = lambda: None,
    indexes: MetadataIndexes = MetadataIndexes(),  # noqa: B008 (frozen)
    written: CommitMetadata | None = None,
) -> None:
    """Just before `instant` completes with `content` (its commit, clean, rollback or restore
    metadata): the metadata table's delta commit of it, the metadata table built first if the
    table has none we keep, its index partitions as `indexes` says. `written`: a commit's
    metadata as its write tasks returned it, whose stats carry the files' column ranges and
    bloom filters (else they are read from the files). Called under the table lock, when
    there is one; `check_lock` raises LockLostError unless it is still held (see
    `MetadataTableWriter.commit`)."""
    records = files_records_of(instant.action, content)
    if records is None:
        return
    what = f"{instant.action.value} {instant.timestamp}"
    writer = MetadataTableWriter.for_action(meta_client, instant.timestamp, what, records,
                                            indexes)  # fmt: skip
    if writer is None:
        return
    index = None
    if set(writer.partitions) & {COLUMN_STATS, BLOOM_FILTERS}:
        maker = writer.index_record_maker(indexes=indexes)
        if instant.action in _DATA_ACTIONS:
            stats = (written or CommitMetadata.parse(content)).write_stats()
            if written is not None and written.schema:
                maker = maker.with_schema(with_meta_columns(from_avro_schema(written.schema)))
            index = maker.written(stats)
        else:
            index = maker.removed(records)
    writer.commit(instant.timestamp, records, check_lock, index)

"""`HoodieTable`: the Python API of the core, a thin facade over its floors.

What the dbt adapter calls, and what a user of the core without dbt calls. Metadata comes from
the meta client; writes go through the write client; table services (`table.services`) run
under the concurrency policy of the table's write config. The write config is given once, to
`for_write` (or `open`), and every write and service uses it; a call's `config` argument
overrides it for that call only (a writer that changes its options between writes, as the
differential and concurrency tests do). Beyond the table's identity and that config it holds
no state, so one object can be kept across writes, by this process or others.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from .client.write_client import WriteClient
from .config import WriteConfig
from .exceptions import InvalidConfigError, TableExistsError
from .fs_view import FileSystemView
from .meta_client import HoodieTableMetaClient, identity_changes, table_properties_for
from .metadata import CommitMetadata
from .properties import TableProperties
from .read.cdc import unreadable_range
from .read.datasource import PUSHDOWN_OPTION, PYTHON_FILTER_PUSHDOWN, catalog_schema, register
from .read.native import read_changes, read_table, snapshot_as_changes
from .read.options import (
    AS_OF_INSTANT,
    BEGIN_INSTANT,
    CDC,
    END_INSTANT,
    INCREMENTAL,
    INCREMENTAL_FORMAT,
    QUERY_TYPE,
    STORAGE_PREFIX,
)
from .services import TableServices
from .storage import FileIO, load_file_io
from .table_services.savepoint import savepoints
from .table_stats import TableStats, table_stats
from .timeline import WRITE_ACTIONS, Action, Instant, Timeline
from .transaction.checkpoints import SourceCheckpoint, checkpoints_of, current_position
from .write.result import WriteResult

log = logging.getLogger(__name__)


# HistoryRow's counts: the write stats' fields they total.
_HISTORY_COUNTS = {
    "inserts": "num_inserts",
    "updates": "num_update_writes",
    "deletes": "num_deletes",
    "rows_written": "num_writes",
}


class HistoryRow(TypedDict):
    """One instant of `HoodieTable.history`. `inserts`, `updates` and `deletes` count the
    records the write changed; `rows_written` the records in the files it wrote (Apache
    Hudi's numWrites: a copy-on-write update rewrites its file group's other records too).
    The counts are "" where nothing was written (and for archived instants); `completed` (the
    completion time) is "" where the timeline keeps none (table version 6)."""

    instant: str
    action: str
    state: str
    completed: str
    inserts: int | str
    updates: int | str
    deletes: int | str
    rows_written: int | str


@dataclass(frozen=True)
class FolderBefore:
    """The table's folder as `for_write` found it before creating the table there: whether it
    existed, and the names in it. A first write that fails before its first commit takes the
    new table away again, down to this (a refused first run must leave nothing a corrected
    config would then meet as an existing table, with its stored keys and type)."""

    existed: bool
    names: frozenset[str]

    @classmethod
    def of(cls, storage: FileIO) -> FolderBefore:
        if not storage.exists(""):
            return cls(False, frozenset())
        return cls(True, frozenset(_top_level(storage)))


def _top_level(storage: FileIO) -> dict[str, bool]:
    """The names right under the base path: True for folders."""
    names = {info.relative_path: False for info in storage.list_files("")}
    names.update({name: True for name in storage.list_dirs("")})
    return names


class HoodieTable:
    """One Hudi table: its metadata, its writes and reads, its services (`services`).

    Get one with `for_write` (to write; creates the table when there is none), `open` (an
    existing table) or `create`.
    """

    def __init__(self, meta_client: HoodieTableMetaClient, config: WriteConfig | None = None):
        self.meta_client = meta_client
        # How the table is written: the default of every write and service (None: open to
        # read, or to run services with the default options; writes then need a config).
        self.config = config
        # Set by `for_write` when it created the table to be removed if the first write fails.
        self.created_over: FolderBefore | None = None

    def __repr__(self) -> str:
        return f"HoodieTable({self.name!r}, {self.base_uri!r})"

    # -- opening -------------------------------------------------------------------------------
    # `storage_options` configure the table's object store: the keyword arguments of its
    # pyarrow file system (endpoint_override, region, ...), see `hoodie.storage.load_file_io`.
    @staticmethod
    def exists(base_uri: str, storage_options: Mapping[str, str] | None = None) -> bool:
        """Is there a Hudi table (its `hoodie.properties`) at `base_uri`?"""
        return HoodieTableMetaClient.exists(base_uri, storage_options)

    @classmethod
    def open(
        cls,
        base_uri: str,
        storage_options: Mapping[str, str] | None = None,
        config: WriteConfig | None = None,
    ) -> HoodieTable:
        """The existing table at `base_uri`.

        Args:
            base_uri: the table's base path (a local path or a URI: s3://, gs://, abfss://).
            storage_options: its object store's settings (see `hoodie.storage.load_file_io`).
            config: how the table is written, for its writes and services (None: reads and
                services with the default options only).

        Raises:
            TableNotFoundError: there is no table at `base_uri`.
            UnsupportedTableError: a table this version cannot read or write.
        """
        return cls(HoodieTableMetaClient.open(base_uri, storage_options), config)

    @classmethod
    def create(
        cls,
        base_uri: str,
        properties: TableProperties,
        storage_options: Mapping[str, str] | None = None,
    ) -> HoodieTable:
        """Lay out `.hoodie/` and write `hoodie.properties`; the timeline starts empty.

        Raises:
            TableExistsError: there is a table at `base_uri` already.
        """
        return cls(HoodieTableMetaClient.create(base_uri, properties, storage_options))

    @staticmethod
    def location(base_uri: str, storage_options: Mapping[str, str] | None = None) -> str:
        """The table's base path as Spark and catalogs want it (a URI with a scheme)."""
        return load_file_io(base_uri, storage_options).uri()

    @classmethod
    def for_write(
        cls,
        base_uri: str,
        config: WriteConfig,
        storage_options: Mapping[str, str] | None = None,
        *,
        remove_if_first_write_fails: bool = False,
    ) -> HoodieTable:
        """Open the table at `base_uri` to write it with `config`, creating it from the config
        when there is none.

        With `remove_if_first_write_fails` (what dbt runs ask), a table created here is taken
        away again when this object's first write fails before its first commit (a refused
        batch, a bad partition value, a failed task): the folder is left as it was found
        (removed if it was not there), so a corrected run starts from no table. Otherwise it
        stays, empty, for the caller to write again.

        Args:
            base_uri: the table's base path (a local path or a URI).
            config: how the table is written: every write and service of the returned object
                uses it.
            storage_options: the object store's settings (see `hoodie.storage.load_file_io`).

        Raises:
            InvalidConfigError: the config cannot make a table (its table properties).
            UnsupportedTableError: the existing table is one this version cannot write.
        """
        properties = table_properties_for(config)
        if HoodieTableMetaClient.exists(base_uri, storage_options):
            return cls.open(base_uri, storage_options, config)
        before = FolderBefore.of(load_file_io(base_uri, storage_options))
        try:
            created = HoodieTableMetaClient.create(base_uri, properties, storage_options)
        except TableExistsError:  # a concurrent writer's first write created it just now
            return cls.open(base_uri, storage_options, config)
        table = cls(created, config)
        if remove_if_first_write_fails:
            table.created_over = before
        return table

    # -- metadata (the meta client's) ----------------------------------------------------------
    @property
    def storage(self) -> FileIO:
        """The table's storage (its files under the base path)."""
        return self.meta_client.storage

    @property
    def properties(self) -> TableProperties:
        """`hoodie.properties`: the table's identity (keys, partitioning, type, version)."""
        return self.meta_client.properties

    @property
    def base_uri(self) -> str:
        """The table's base path, as given."""
        return self.meta_client.base_uri

    @property
    def name(self) -> str:
        """The table's name (`hoodie.table.name`)."""
        return self.meta_client.name

    @property
    def services(self) -> TableServices:
        """The table's services: `compact`, `clean`, `archive`, `rollback`, `savepoint`,
        `restore`, `upgrade` (see `hoodie.services`)."""
        return TableServices(self)

    def timeline(self) -> Timeline:
        """The active timeline as it is now (read afresh at every call)."""
        return self.meta_client.timeline()

    def completed(self, instant: str) -> bool:
        """Did the instant complete in this table's history (on its active timeline, or on
        the archived one)? False for an instant rolled back or restored away, and for one of
        a table that was rebuilt under the same path since."""
        if instant in self.timeline().completed.timestamps():
            return True
        return any(a.timestamp == instant and a.state == "COMPLETED"
                   for a in self.meta_client.archived_instants())  # fmt: skip

    def file_system_view(self, as_of: str | None = None) -> FileSystemView:
        """The table's file groups and slices, latest or as of a completed instant."""
        return self.meta_client.file_system_view(as_of)

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """The commit metadata of a completed write instant.

        Raises:
            MalformedMetadataError: the instant's file is damaged.
        """
        return self.meta_client.commit_metadata(instant)

    def schema(self) -> pa.Schema | None:
        """The latest writer schema (without meta columns), or None for a table with no commits."""
        return self.meta_client.schema()

    def savepoints(self) -> list[str]:
        """The instants of completed savepoints, oldest first."""
        return savepoints(self.meta_client)

    def checkpoints(self) -> dict[str, SourceCheckpoint]:
        """How far this table has consumed other tables (by their base path), as its newest
        write recorded it (see `transaction/checkpoints.py`)."""
        return checkpoints_of(self.meta_client)

    def incremental_position(self, read_as: str = "latest_state") -> SourceCheckpoint | None:
        """Where a consumer reading this table's changes now (`read_as`: `latest_state`, or
        `cdc` for `read_changes`) may read up to (None while it has no write): the checkpoint
        that consumer records once it wrote what it read."""
        return current_position(self.meta_client, read_as)

    def stats(self) -> TableStats:
        """Rows, size, files, latest commit and pending services of the latest snapshot, from
        the table's metadata only (`hoodie.table_stats`): what `dbt docs generate` shows.

        Raises:
            DamagedFileError: a metadata or data file of the latest snapshot does not read.
        """
        return table_stats(self.meta_client)

    def catalog_schema(self) -> StructType:
        """The schema a catalog table of this table stores: the snapshot's, carrying the base
        path (Spark gives a catalog table's data source nothing else)."""
        return catalog_schema(self.meta_client)

    def history(self) -> list[HistoryRow]:
        """Every instant, archived ones first: time, action, state, completion time and rows
        written.

        What the `hoodie_timeline` operation prints. An instant both archived and still on the
        active timeline (an archival crashed before removing it) is listed once, as active.
        """
        meta_client = self.meta_client
        timeline = meta_client.timeline()
        active = set(timeline.timestamps())
        rows: list[HistoryRow] = [
            {
                "instant": archived.timestamp,
                "action": archived.action,
                "state": f"{archived.state} (archived)",
                "completed": archived.completion_time or "",
                "inserts": "",
                "updates": "",
                "deletes": "",
                "rows_written": "",
            }
            for archived in meta_client.archived_instants()
            if archived.state == "COMPLETED" and archived.timestamp not in active
        ]
        for instant in timeline:
            counts: dict[str, int | str] = dict.fromkeys(_HISTORY_COUNTS, "")
            if instant.is_completed and instant.action in WRITE_ACTIONS:
                metadata = meta_client.commit_metadata(instant)
                counts = {name: metadata.total(stat) for name, stat in _HISTORY_COUNTS.items()}
            rows.append(
                {
                    "instant": instant.timestamp,
                    "action": instant.action.value,
                    "state": instant.state.name,
                    "completed": instant.completion_time or "",
                    "inserts": counts["inserts"],
                    "updates": counts["updates"],
                    "deletes": counts["deletes"],
                    "rows_written": counts["rows_written"],
                }
            )
        return rows

    # -- writing and reading (Spark) -----------------------------------------------------------
    # Each write takes the table's config; `config` overrides it for that write only.
    # Every write raises the core's errors (`hoodie.exceptions`): among them
    # InvalidConfigError (an option, or a change of the table's identity: TableIdentityError),
    # SchemaError (a batch the table's schema cannot take), NullRecordKeyError,
    # DuplicateRecordKeyError, PartitionPathError, ConcurrentWriteConflict (another writer
    # committed to the same file groups first) and TaskFailedError (the Spark work failed);
    # a failed write is rolled back and readers keep the previous snapshot.
    def _write_config(self, config: WriteConfig | None) -> WriteConfig:
        found = config or self.config
        if found is None:
            raise InvalidConfigError(
                f"table '{self.name}' was opened without a write config: open it with "
                "HoodieTable.for_write(base_uri, config) or HoodieTable.open(..., config=config)"
            )
        return found

    def _client(self, config: WriteConfig | None) -> WriteClient:
        return WriteClient(self.meta_client, self._write_config(config))

    def write(
        self,
        df: DataFrame,
        config: WriteConfig | None = None,
        *,
        deletes: DataFrame | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        precommit: Callable[[HoodieTableMetaClient], None] | None = None,
    ) -> WriteResult:
        """The write the config's `hoodie.datasource.write.operation` names: upsert (the
        default), insert, bulk_insert or delete.

        Args:
            df: the rows (a Spark DataFrame holding the record key and partition columns).
            config: the write config for this write, instead of the table's.
            deletes: upsert only: keys (record key and partition columns) to delete in the
                same commit.
            extra_metadata: entries for the commit's extraMetadata, written atomically with
                the data (e.g. a reader's checkpoint).
            precommit: a check of the table at commit (where, with optimistic concurrency,
                the table lock is held); raising undoes the write.

        Returns:
            What the commit wrote: its instant, the counts of rows inserted, updated and
            deleted, the files written.

        Raises:
            HoodieError: see above; the write is rolled back.
        """
        return self._first_write_undone_on_failure(
            lambda: self._client(config).write(
                df, deletes=deletes, extra_metadata=extra_metadata, precommit=precommit
            )
        )

    def upsert(
        self,
        df: DataFrame,
        config: WriteConfig | None = None,
        *,
        deletes: DataFrame | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        precommit: Callable[[HoodieTableMetaClient], None] | None = None,
    ) -> WriteResult:
        """Insert the rows of new keys and update those of keys the table holds (by the
        precombine field when one key comes more than once, or is stored: the larger wins).

        Args:
            df: the rows (a Spark DataFrame holding the record key and partition columns).
            config: the write config for this write, instead of the table's.
            deletes: keys (record key and partition columns) to delete in the same commit,
                whatever their stored ordering value.
            extra_metadata: entries for the commit's extraMetadata, written atomically with
                the data.
            precommit: a check of the table at commit; raising undoes the write.

        Returns:
            What the commit wrote: its instant, the counts of rows inserted and updated, the
            files written.

        Raises:
            HoodieError: see above; the write is rolled back.
        """
        return self._first_write_undone_on_failure(
            lambda: self._client(config).upsert(
                df, deletes=deletes, extra_metadata=extra_metadata, precommit=precommit
            )
        )

    def insert(self, df: DataFrame, config: WriteConfig | None = None) -> WriteResult:
        """Add new keys only; rows of keys the table holds fail the write or are skipped
        (`hoodie.datasource.insert.dup.policy`). SIMPLE index only.

        Args:
            df: the rows (a Spark DataFrame holding the record key and partition columns).
            config: the write config for this write, instead of the table's.

        Returns:
            What the commit wrote.

        Raises:
            RecordKeyExistsError: a key the table holds, under the `fail` policy.
            HoodieError: see above; the write is rolled back.
        """
        return self._first_write_undone_on_failure(lambda: self._client(config).insert(df))

    def bulk_insert(self, df: DataFrame, config: WriteConfig | None = None) -> WriteResult:
        """As `insert`, into new file groups only (no small file group is rewritten).

        Args:
            df: the rows (a Spark DataFrame holding the record key and partition columns).
            config: the write config for this write, instead of the table's.

        Returns:
            What the commit wrote.

        Raises:
            HoodieError: see above; the write is rolled back.
        """
        return self._first_write_undone_on_failure(lambda: self._client(config).bulk_insert(df))

    def delete(self, df: DataFrame, config: WriteConfig | None = None) -> WriteResult:
        """Delete the keys present in `df`.

        Args:
            df: rows holding the record key and partition columns of the keys to delete.
            config: the write config for this write, instead of the table's.

        Returns:
            What the commit wrote (its count of deletes).

        Raises:
            HoodieError: see above; the write is rolled back.
        """
        return self._first_write_undone_on_failure(lambda: self._client(config).delete(df))

    def _first_write_undone_on_failure(self, write: Callable[[], WriteResult]) -> WriteResult:
        """Run a write; if it is the first write into a table `for_write` created and it fails
        before the table's first commit, take the table away again (see `FolderBefore`)."""
        created_over, self.created_over = self.created_over, None
        try:
            return write()
        except BaseException:
            if created_over is not None:
                self._undo_creation(created_over)
            raise

    def _undo_creation(self, before: FolderBefore) -> None:
        """Remove what creating the table and its failed first write added to the folder,
        unless another writer has begun to use the table meanwhile (any instant on the
        timeline but the rollbacks undoing this write's files)."""
        try:
            timeline = self.meta_client.timeline()
            if any(not (i.is_completed and i.action is Action.ROLLBACK) for i in timeline):
                return
            storage = self.storage
            if not before.existed:
                storage.delete_dir("")
            else:
                for name, is_folder in _top_level(storage).items():
                    if name in before.names:
                        continue
                    if is_folder:
                        storage.delete_dir(name)
                    else:
                        storage.delete(name)
            log.info("the first write to %s failed: the table it created was removed",
                     self.base_uri)  # fmt: skip
        except Exception:  # best effort: the error of the write is what the caller needs
            log.exception("could not remove the table %s created by a failed first write",
                          self.base_uri)  # fmt: skip

    def overwrite(
        self,
        df: DataFrame,
        config: WriteConfig | None = None,
        *,
        extra_metadata: Mapping[str, str] | None = None,
        precommit: Callable[[HoodieTableMetaClient], None] | None = None,
    ) -> WriteResult:
        """Replace the table's contents with `df`.

        With the same identity (keys, partitioning, type) this is one `insert_overwrite_table`
        replace commit, so history and time travel survive. A config that changes the
        identity needs a new table: it is built beside this one and swapped in only once it
        is complete.

        Args:
            df: the table's new rows.
            config: the write config for this write, instead of the table's.
            extra_metadata: entries for the commit's extraMetadata.
            precommit: a check of the table at commit; raising undoes the write.

        Returns:
            What the commit wrote.

        Raises:
            HoodieError: see above; the table is left as it was.
        """
        return self._first_write_undone_on_failure(
            lambda: self._overwrite(df, self._write_config(config), extra_metadata, precommit)
        )

    def _overwrite(
        self,
        df: DataFrame,
        config: WriteConfig,
        extra_metadata: Mapping[str, str] | None,
        precommit: Callable[[HoodieTableMetaClient], None] | None,
    ) -> WriteResult:
        wanted = table_properties_for(config, self.properties)
        if not identity_changes(self.properties, wanted, config):
            client = WriteClient(self.meta_client, config)
            return client.insert_overwrite_table(
                df, extra_metadata=extra_metadata, precommit=precommit
            )
        staging = self.storage.sibling(f"rebuild-{uuid.uuid4().hex[:8]}")
        staged = HoodieTableMetaClient.create(staging, wanted)
        try:
            result = WriteClient(staged, config).upsert(df, extra_metadata=extra_metadata)
        except BaseException:
            staged.storage.delete_dir()
            raise
        self.storage.swap_in(staging)
        self.meta_client = HoodieTableMetaClient.load(self.storage)
        return result

    def read(
        self,
        spark: SparkSession,
        options: Mapping[str, str] | None = None,
        *,
        native: bool | None = None,
        filters: list[Any] | None = None,
    ) -> DataFrame:
        """The table as a Spark DataFrame: the latest snapshot, or what `options` ask (the read
        options of `spark.read.format("hoodie")`: time travel, read-optimized, incremental).

        The read is planned here, once: the file slices with nothing to merge are Spark's own
        parquet scan of their base files, as Apache Hudi reads copy-on-write tables
        (`hoodie/read/native.py`); the others are read, and merged, by the `hoodie` data source
        given the same plan, pruning partitions where the session lets it
        (`spark.sql.python.filterPushdown.enabled`). `native` None scans natively on file
        systems, True also on object stores, False never. Either way the DataFrame reads the
        table as it was at this call.

        Args:
            spark: the session to read in.
            options: read options (`hoodie.datasource.query.type`, `as.of.instant`, ...).
            native: whether slices with nothing to merge are Spark's parquet scan (see above).
            filters: only the rows these match, as hudi-rs and delta-rs take them:
                `[("id", "=", 5), ("ts", ">", 10)]` (AND) or a list of such lists (OR of
                ANDs); ops = != < <= > >= in, not in. File slices no row of which can match
                are not read (`hoodie.enable.data.skipping`, default true).

        Returns:
            The rows, with Hudi's meta columns.

        Raises:
            InvalidConfigError: an unknown or malformed read option.
            TimelineError: an instant the timeline cannot serve (archived, cleaned).
            DamagedFileError: a file of the planned slices is missing or damaged.
        """
        register(spark)
        given = {STORAGE_PREFIX + k: v for k, v in self.storage.options.items()}
        given.update(options or {})
        if str(spark.conf.get(PYTHON_FILTER_PUSHDOWN, "false")).lower() == "true":
            given.setdefault(PUSHDOWN_OPTION, "true")  # the data source may prune partitions
        # A fresh meta client: another process may have upgraded or rewritten the table.
        meta_client = HoodieTableMetaClient.load(self.storage)
        return read_table(spark, meta_client, given, native, filters)

    def read_snapshot_as_changes(self, spark: SparkSession, as_of: str | None = None) -> DataFrame:
        """The snapshot (at instant `as_of`, default the latest) in `read_changes`' columns,
        every row an insert (`ts_ms`: its commit time): a first read of what a consumer of the
        changes takes afterwards, needing none of the history cleaning removes."""
        register(spark)
        given = {STORAGE_PREFIX + k: v for k, v in self.storage.options.items()}
        if as_of is not None:
            given[AS_OF_INSTANT] = as_of
        return snapshot_as_changes(spark, HoodieTableMetaClient.load(self.storage), given)

    def changes_unreadable(self, begin: str) -> str | None:
        """Why `read_changes` after `begin` cannot be done (archival or cleaning took what it
        needs), or None when it can."""
        meta_client = HoodieTableMetaClient.load(self.storage)
        writes = meta_client.timeline().completed.write_timeline.instants
        return unreadable_range(meta_client, writes, begin, None)

    def read_changes(self, spark: SparkSession, begin: str, end: str | None = None) -> DataFrame:
        """Every change the writes in (begin, end] made (Apache Hudi's CDC query, on a table
        created with `hoodie.table.cdc.enabled`), images parsed: columns `op` (i, u, d),
        `ts_ms` (the write's instant), `record_key`, `partition_path`, and `before` / `after`
        as structs of the table's columns (null where there is no image), so that SQL can
        say `after.amount`. `read` with `hoodie.datasource.query.incremental.format=cdc`
        gives the same changes as Apache Hudi's four string columns (JSON images).

        Raises:
            InvalidConfigError: the table does not log changes, or an instant is malformed.
            TimelineError: archival or cleaning removed what the range needs.
        """
        register(spark)
        given = {STORAGE_PREFIX + k: v for k, v in self.storage.options.items()}
        given.update({QUERY_TYPE: INCREMENTAL, INCREMENTAL_FORMAT: CDC, BEGIN_INSTANT: begin})
        if end is not None:
            given[END_INSTANT] = end
        return read_changes(spark, HoodieTableMetaClient.load(self.storage), given)

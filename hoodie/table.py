"""`HoodieTable`: open or create a table and reach its timeline, files and schema.

This is the entry point of the Python API (`hoodie.HoodieTable`) and what the dbt adapter
calls. It holds no state beyond the table's identity: every call reloads the timeline, so one
object can be kept across writes, by this process or others.
"""

from __future__ import annotations

import posixpath
import uuid
from typing import TYPE_CHECKING

import pyarrow as pa

from . import properties as props
from .exceptions import CommitError, TableExistsError, TableNotFoundError
from .fs_view import FileSystemView
from .metadata import CommitMetadata
from .schema import from_avro_schema
from .storage import Storage
from .timeline import METAFOLDER, WRITE_ACTIONS, Instant, State, Timeline

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .config import WriteConfig
    from .write.client import WriteResult

PROPERTIES_FILE = posixpath.join(METAFOLDER, "hoodie.properties")


class HoodieTable:
    def __init__(self, storage: Storage, properties: props.TableProperties):
        self.storage = storage
        self.properties = properties

    def __repr__(self) -> str:
        return f"HoodieTable({self.properties.name!r}, {self.storage.base_uri!r})"

    @property
    def base_uri(self) -> str:
        return self.storage.base_uri

    @property
    def name(self) -> str:
        return self.properties.name

    # -- opening -------------------------------------------------------------------------------
    @staticmethod
    def exists(base_uri: str) -> bool:
        return Storage(base_uri).exists(PROPERTIES_FILE)

    @classmethod
    def open(cls, base_uri: str) -> HoodieTable:
        storage = Storage(base_uri)
        if not storage.exists(PROPERTIES_FILE):
            raise TableNotFoundError(
                f"no Hudi table at '{storage.base_uri}' (missing {PROPERTIES_FILE})"
            )
        loaded = props.loads(storage.read_text(PROPERTIES_FILE))
        return cls(storage, props.TableProperties.from_dict(loaded))

    @classmethod
    def create(cls, base_uri: str, properties: props.TableProperties) -> HoodieTable:
        """Lay out `.hoodie/` and write `hoodie.properties`; the timeline starts empty."""
        storage = Storage(base_uri)
        if storage.exists(PROPERTIES_FILE):
            raise TableExistsError(f"a Hudi table already exists at '{storage.base_uri}'")
        for folder in (".temp", "archived", ".aux", ".schema"):
            storage.makedirs(posixpath.join(METAFOLDER, folder))
        text = props.dumps(properties.to_dict(), comment="Properties saved by dbt-hoodie")
        if not storage.create_if_absent(PROPERTIES_FILE, text.encode()):
            raise TableExistsError(f"a Hudi table already exists at '{storage.base_uri}'")
        return cls(storage, properties)

    @classmethod
    def for_write(cls, base_uri: str, config: WriteConfig) -> HoodieTable:
        """Open the table at `base_uri`, creating it from the config when there is none."""
        from .write.client import table_properties_for

        if cls.exists(base_uri):
            return cls.open(base_uri)
        try:
            return cls.create(base_uri, table_properties_for(config))
        except TableExistsError:  # a concurrent writer's first write created it just now
            return cls.open(base_uri)

    # -- metadata ------------------------------------------------------------------------------
    def timeline(self) -> Timeline:
        return Timeline.load(self.storage)

    def file_system_view(self, as_of: str | None = None) -> FileSystemView:
        return FileSystemView(self.storage, self.timeline(), as_of)

    def instant_content(self, instant: Instant) -> bytes:
        """What the timeline file of `instant` in its state holds (JSON or Avro)."""
        return self.storage.read_bytes(posixpath.join(METAFOLDER, instant.file_name))

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        return CommitMetadata.from_json(self.instant_content(instant))

    def save_instant(self, instant: Instant, content: bytes = b"") -> Instant:
        """Record `instant` in its state on the timeline.

        A new instant is created exclusively, so two writers can never both own one time; later
        states replace the file atomically, so readers see the old state or the new one.
        """
        path = posixpath.join(METAFOLDER, instant.file_name)
        if instant.state is State.REQUESTED:
            if not self.storage.create_if_absent(path, content):
                raise CommitError(f"instant {instant.timestamp} already exists on the timeline")
        else:
            self.storage.write_atomic(path, content)
        return instant

    def delete_instant(
        self,
        instant: Instant,
        states: tuple[State, ...] = (State.COMPLETED, State.INFLIGHT, State.REQUESTED),
    ) -> None:
        """Remove an instant's timeline files in these states, newest first by default, so the
        instant leaves the timeline before its older states do."""
        for state in states:
            self.storage.delete(posixpath.join(METAFOLDER, instant.with_state(state).file_name))

    def delete_pending_instant(self, instant: Instant) -> None:
        """Remove the requested and inflight files of an instant that will not complete."""
        self.delete_instant(instant, (State.INFLIGHT, State.REQUESTED))

    def latest_commit_metadata(self) -> tuple[Instant, CommitMetadata] | None:
        for instant in reversed(self.timeline().completed.write_timeline.instants):
            return instant, self.commit_metadata(instant)
        return None

    def history(self) -> list[dict]:
        """Every instant, archived ones first: time, action, state and rows written.

        What the `hoodie_timeline` operation prints. An instant both archived and still on the
        active timeline (an archival crashed before removing it) is listed once, as active.
        """
        from .table_services.archival import archived_instants

        timeline = self.timeline()
        active = set(timeline.timestamps())
        rows = [
            {
                "instant": archived.timestamp,
                "action": archived.action,
                "state": f"{archived.state} (archived)",
                "rows_written": "",
            }
            for archived in archived_instants(self)
            if archived.state == "COMPLETED" and archived.timestamp not in active
        ]
        for instant in timeline:
            written = ""
            if instant.is_completed and instant.action in WRITE_ACTIONS:
                written = self.commit_metadata(instant).total("num_writes")
            rows.append(
                {
                    "instant": instant.timestamp,
                    "action": instant.action.value,
                    "state": instant.state.name,
                    "rows_written": written,
                }
            )
        return rows

    def schema(self) -> pa.Schema | None:
        """The latest writer schema (without meta columns), or None for a table with no commits."""
        for instant in reversed(self.timeline().completed.write_timeline.instants):
            avro = self.commit_metadata(instant).schema
            if avro:
                return from_avro_schema(avro)
        if self.properties.create_schema:
            return from_avro_schema(self.properties.create_schema)
        return None

    # -- writing and reading (Spark) -----------------------------------------------------------
    def upsert(self, df: DataFrame, config: WriteConfig) -> WriteResult:
        from .write.client import WriteClient

        return WriteClient(self, config).upsert(df)

    def delete(self, df: DataFrame, config: WriteConfig) -> WriteResult:
        """Delete the keys present in `df` (it needs the record key and partition columns)."""
        from .write.client import WriteClient

        return WriteClient(self, config).delete(df)

    def overwrite(self, df: DataFrame, config: WriteConfig) -> WriteResult:
        """Replace the table's contents with `df` (dbt's --full-refresh).

        With the same keys this is one `insert_overwrite_table` replace commit, so history and
        time travel survive. A config that changes the table's keys or partitioning needs a
        new table: it is built beside this one and swapped in only once it is complete.
        """
        from .write.client import WriteClient, table_properties_for

        wanted = table_properties_for(config)
        same_identity = (
            wanted.record_key_fields == self.properties.record_key_fields
            and wanted.partition_fields == self.properties.partition_fields
            and wanted.precombine_field == self.properties.precombine_field
            and wanted.table_type == self.properties.table_type
            and wanted.hive_style_partitioning == self.properties.hive_style_partitioning
        )
        if same_identity:
            return WriteClient(self, config).insert_overwrite_table(df)
        staging_uri = f"{self.base_uri}.rebuild-{uuid.uuid4().hex[:8]}"
        staged = HoodieTable.create(staging_uri, wanted)
        try:
            result = WriteClient(staged, config).upsert(df)
        except BaseException:
            staged.storage.delete_dir()
            raise
        self.storage.swap_in(staging_uri)
        opened = HoodieTable.open(self.base_uri)
        self.properties = opened.properties
        return result

    def compact(self, spark: SparkSession, config: WriteConfig | None = None) -> list[WriteResult]:
        """Merge-on-read: finish pending compactions, then compact every slice with log files.
        `config` is how the table is written (None: one writer).

        Returns one result per compaction that ran (none when no slice has log files).
        """
        from .table_services.compaction import Compactor

        return Compactor(self, config).run(spark)

    def clean(self, config: WriteConfig | None = None):
        """Roll back failed writes, then delete file versions the cleaning policy no longer
        needs (`hoodie_clean`). `config` is how the table is written (None: one writer).

        Returns Hudi's clean metadata, or None when there was nothing to delete.
        """
        from .table_services.clean import CleanConfig, Cleaner
        from .table_services.rollback import Rollback
        from .transaction.failed_writes import FailedWritesPolicy
        from .write.client import clean_config

        failed_writes = FailedWritesPolicy.of(self.storage, config)
        Rollback(self).rollback_failed_writes(failed_writes)
        with failed_writes.exclusive():  # one cleaner at a time among concurrent writers
            return Cleaner(self, clean_config(config) if config else CleanConfig()).run()

    def savepoint(self, instant_time: str | None = None, comment: str = ""):
        """Pin the snapshot of a completed commit (default: the latest): cleaning keeps its
        files, and `restore` can return the table to it."""
        from .table_services.savepoint import create_savepoint

        return create_savepoint(self, instant_time, comment=comment)

    def restore(self, savepoint_time: str, config: WriteConfig | None = None):
        """Roll back every commit after a savepoint (Hudi's restore). `config` is how the table
        is written (None: one writer); a write in progress makes it refuse."""
        from .table_services.savepoint import restore
        from .transaction.failed_writes import FailedWritesPolicy

        return restore(self, savepoint_time, FailedWritesPolicy.of(self.storage, config))

    def rollback(self, instant_time: str | None = None, config: WriteConfig | None = None):
        """Roll back the latest completed commit (`instant_time`, if given, must be it).
        `config` is how the table is written (None: one writer); a write in progress makes
        it refuse.

        Returns Hudi's rollback metadata: the files deleted, the instant rolled back.
        """
        from .table_services.rollback import Rollback
        from .transaction.failed_writes import FailedWritesPolicy

        failed_writes = FailedWritesPolicy.of(self.storage, config)
        return Rollback(self).rollback_latest_commit(failed_writes, instant_time)

    def read(self, spark: SparkSession) -> DataFrame:
        """The latest snapshot as a Spark DataFrame (through the `hoodie` data source)."""
        from .read.datasource import register

        register(spark)
        return spark.read.format("hoodie").load(self.base_uri)

"""The write client: one write, from a Spark DataFrame to a completed instant.

Hudi's three steps, with the driver only planning and committing; this module only puts them
in order, each floor below doing its own part:
1. prepare (`write/prepare.py`): each record's key, partition path and index columns; the
   batch's schema checked; null keys refused;
2. tag and place (`index/`): the index finds the file group already holding each key and
   decides where every file group's new version and the inserts go;
3. write (`write/executor.py`): Spark tasks write each file group's new version, and the
   driver completes the instant (`transaction/transaction.py`). Until then readers see the
   previous snapshot; a failure undoes the instant.
Where the write tasks can tag their own records (the SIMPLE index's routing units, the BUCKET
index), steps 2 and 3 are one Spark job and the driver only plans them.
After the commit, table services run under the same concurrency policy
(`client/table_service_runner.py`).
"""

from __future__ import annotations

import logging
import time

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..compaction_plan import pending_compaction_file_groups
from ..config import WriteConfig
from ..exceptions import HoodieError, InvalidConfigError, TableIdentityError
from ..faults import crash_point
from ..fs_view import FileSlice, FileSystemView
from ..index import index_for
from ..index.base import LOCATION, Placement, TaggingContext
from ..index.bucket import BucketIndex
from ..index.routing import RoutingPlan
from ..index.simple import SimpleIndex, average_record_size
from ..keygen import KeyGenerator
from ..markers import WriteMarkers
from ..meta_client import HoodieTableMetaClient, identity_changes, table_properties_for
from ..metadata import CommitMetadata, WriteStat
from ..naming import marks_partition
from ..schema import IS_DELETED, PARTITION_PATH, RECORD_KEY, to_avro_schema
from ..table_services.savepoint import refuse_pending_restore
from ..timeline import WRITE_ACTIONS, Action
from ..transaction.lock import LockProvider
from ..transaction.transaction import Transaction
from ..write.bulk_insert import with_arrival
from ..write.executor import WriteExecutor
from ..write.prepare import DELETE, INSERT_OVERWRITE_TABLE, BatchPreparer, batch_writer_schema
from ..write.result import WriteResult
from ..write.task_errors import raise_task_error, task_failure
from .table_service_runner import TableServiceRunner

log = logging.getLogger(__name__)
# Hudi's operation types, as commits record them (`hoodie.datasource.write.operation` in
# capitals).
UPSERT, INSERT, BULK_INSERT = "UPSERT", "INSERT", "BULK_INSERT"


class WriteClient:
    def __init__(
        self,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig,
        lock_provider: LockProvider | None = None,
    ):
        meta_client.check_writable()
        self.meta_client = meta_client
        self.config = config
        self._refuse_version_change()
        self._refuse_identity_change()
        self.services = TableServiceRunner(meta_client, config, lock_provider)
        self.index = index_for(config)
        keygen = KeyGenerator(
            config.record_key_fields,
            config.partition_fields,
            hive_style_partitioning=meta_client.properties.hive_style_partitioning,
            url_encode=meta_client.properties.url_encode_partition_path,
        )
        self.preparer = BatchPreparer(meta_client.name, config, keygen, self.index)

    def write(self, df: DataFrame) -> WriteResult:
        """The operation the config names (`hoodie.datasource.write.operation`)."""
        return self._write(df, self.config.operation.upper())

    def upsert(self, df: DataFrame) -> WriteResult:
        return self._write(df, UPSERT)

    def insert(self, df: DataFrame) -> WriteResult:
        """Add the batch's new keys, filling small file groups as an upsert's inserts do.

        Keys the table holds (as the index finds them) never change a stored record: they
        stop the write or are skipped, as `hoodie.datasource.insert.dup.policy` says.
        """
        return self._write(df, INSERT)

    def bulk_insert(self, df: DataFrame) -> WriteResult:
        """As `insert`, but into new file groups only, sorted by partition path and key, in
        one job after the lookup: no small file group is rewritten."""
        return self._write(df, BULK_INSERT)

    def delete(self, df: DataFrame) -> WriteResult:
        return self._write(df.withColumn(IS_DELETED, F.lit(True)), DELETE)

    def insert_overwrite_table(self, df: DataFrame) -> WriteResult:
        """Replace the table's contents with `df` in one replace commit.

        Every current file group is listed as replaced and the rows go to new file groups, so
        readers switch from the old contents to the new at the commit, and time travel to
        earlier instants still finds the old files (until cleaning removes them).
        """
        return self._write(df, INSERT_OVERWRITE_TABLE)

    # -- the pipeline --------------------------------------------------------------------------
    def _write(self, df: DataFrame, operation: str) -> WriteResult:
        started = time.monotonic()
        meta_client, spark = self.meta_client, df.sparkSession
        refuse_pending_restore(meta_client, "write to")
        schema = batch_writer_schema(meta_client.name, self.config, df, meta_client.schema(),
                                     operation)  # fmt: skip
        # Writes that crashed before completing are rolled back first (with concurrent
        # writers, only those whose heartbeat stopped).
        self.services.rollback_failed_writes()
        overwrite = operation == INSERT_OVERWRITE_TABLE
        inserting = operation in (INSERT, BULK_INSERT)
        if inserting and isinstance(self.index, BucketIndex):
            raise InvalidConfigError(
                f"table '{meta_client.name}': operation {operation.lower()} needs the SIMPLE "
                "index (the BUCKET index places records without looking up which keys exist); "
                "use upsert, or the SIMPLE index"
            )
        merge_on_read = meta_client.merge_on_read
        bulk = self._untagged(operation)
        if bulk and not overwrite:
            operation = BULK_INSERT
        # An explicit bulk insert into a table with records: the index looks up which keys
        # exist (for the dup policy), then the batch goes to new file groups.
        bulk_after_lookup = operation == BULK_INSERT and not bulk
        prepared = self.preparer.prepare(df, schema, operation)
        if not overwrite:
            self.index.check_table(meta_client, meta_client.timeline())
        if overwrite:
            action = Action.REPLACE_COMMIT
        else:
            action = Action.DELTA_COMMIT if merge_on_read else Action.COMMIT
        transaction = Transaction.start(meta_client, self.services.policy, action)
        placement: Placement | None = None
        try:
            crash_point("write.requested")
            pending = pending_compaction_file_groups(meta_client.storage, transaction.started_from)
            executor = WriteExecutor(meta_client, self.config, transaction.instant_time, schema,
                                     operation)  # fmt: skip
            view = FileSystemView(meta_client.storage, transaction.started_from)
            in_write_tasks = self.index.tags_in_write_tasks() and not overwrite
            if not bulk and (in_write_tasks or self._routes(operation)):
                # As a read does: tagging or merging against a slice whose committed files are
                # gone or cut short would insert duplicates or drop rows in silence. (Routing
                # lists every file group anyway; a tagging job checks its partitions' own.)
                view.check_slices(view.file_groups())
            routing = self._routing(spark, operation, bulk, view)
            one_job = bulk or in_write_tasks or routing is not None
            if one_job:
                prepared = prepared.withColumns({
                    RECORD_KEY: self.preparer.key_or_error(),
                    PARTITION_PATH: self.preparer.partition_path_or_error(),
                })  # fmt: skip
            else:
                if bulk_after_lookup and self.config.precombine_field is not None:
                    prepared = with_arrival(prepared)  # ties go to the later row, as in an upsert
                # Tagging and writing both read the batch: cache it, so that model SQL that is
                # not deterministic is computed once, and the key and index columns only once.
                prepared = prepared.persist()
            replaced: dict[str, list[str]] = {}
            if bulk and overwrite:
                replaced = _all_file_groups(view)
            if one_job:
                planned = _planned(None, operation, replaced)
            else:
                placement, replaced, partitions = self._tag_and_place(
                    prepared, transaction, operation, pending
                )
                planned = _planned(None if bulk_after_lookup else placement, operation, replaced)
            crash_point("write.planned")
            transaction.inflight(self.meta_client.commit_content(planned))
            crash_point("write.inflight")
            if bulk:
                stats = executor.bulk_insert(prepared)
                partitions = sorted({s.partition_path for s in stats})
            elif bulk_after_lookup:
                assert placement is not None  # looked up above, as not `one_job`
                stats = executor.bulk_insert(placement.tagged.drop(LOCATION))
                partitions = sorted({s.partition_path for s in stats})
            elif routing is not None:
                stats = executor.write_routed(
                    prepared,
                    routing,
                    view.committed,
                    pending,
                    average_record_size(meta_client, self.config),
                )
                partitions = sorted({s.partition_path for s in stats})
                # (tasks create a new partition's file; one that went missing comes back here)
                executor.write_partition_metadata(partitions)
            elif one_job:
                if not isinstance(self.index, BucketIndex):
                    raise HoodieError(f"the {self.index.name} index cannot tag in write tasks")
                stats = executor.write_buckets(prepared, self.index, transaction.started_from,
                                               pending)  # fmt: skip
                partitions = sorted({s.partition_path for s in stats})
                executor.write_partition_metadata(partitions)
            else:
                assert placement is not None  # placed above, as not `one_job`
                executor.write_partition_metadata(placement.profile.partitions)
                crash_point("write.partition_metadata")
                stats = executor.write_file_groups(
                    placement.tagged, placement.insert_buckets, placement.targets
                )
            metadata = CommitMetadata(
                operation_type=operation,
                extra_metadata={
                    "schema": to_avro_schema(schema, meta_client.name),
                    **self.index.commit_metadata(),
                },
                partition_to_replace_file_ids=replaced if overwrite else None,
            )
            for stat in stats:
                metadata.add(stat)
            crash_point("write.files_written")
            executor.finalize(metadata)
            crash_point("write.finalized")
            transaction.commit(metadata)
        except BaseException as error:
            transaction.abort()
            if isinstance(error, HoodieError):
                raise
            raise_task_error(error)
            raise task_failure(
                error,
                f"write {transaction.instant_time} to table '{meta_client.name}' failed and was "
                "undone (readers still see the previous snapshot)",
                meta_client.name,
                transaction.instant_time,
            ) from error
        finally:
            prepared.unpersist()
            if placement is not None and placement.cached:
                placement.tagged.unpersist()
            transaction.end()
        result = WriteResult(transaction.instant_time, operation, metadata,
                             time.monotonic() - started, partitions)  # fmt: skip
        crash_point("write.completed")
        WriteMarkers(meta_client.storage, transaction.instant_time).delete_all()
        log.info("%s", result.summary())
        self.services.after_commit(spark, result, compact=merge_on_read and not overwrite)
        return result

    def _routing(
        self, spark: SparkSession, operation: str, bulk: bool, view: FileSystemView
    ) -> RoutingPlan | None:
        """The routing units of an upsert or delete whose write tasks tag their own records
        (SIMPLE index), or None: tag in a job of its own, or no tagging at all."""
        if bulk or not self._routes(operation):
            return None
        assert isinstance(self.index, SimpleIndex)  # (`_routes`)
        return self.index.plan_routing(spark, self.meta_client, self.config, view)

    def _routes(self, operation: str) -> bool:
        """Does this operation tag in its write tasks by routing units (SIMPLE index)?"""
        return operation in (UPSERT, DELETE) and isinstance(self.index, SimpleIndex)

    def _untagged(self, operation: str) -> bool:
        """Is this a bulk insert: no records of the table to look up (its first write, or an
        overwrite), and an index whose file groups any new ids may name (not BUCKET, whose
        one-job write already needs no tagging)?"""
        if isinstance(self.index, BucketIndex) or operation == DELETE:
            return False
        if operation == INSERT_OVERWRITE_TABLE:
            return True
        completed = self.meta_client.timeline().completed
        return not any(i.action in WRITE_ACTIONS for i in completed)

    def _tag_and_place(
        self,
        prepared: DataFrame,
        transaction: Transaction,
        operation: str,
        pending: dict[tuple[str, str], str],
    ) -> tuple[Placement, dict[str, list[str]], list[str]]:
        """Summarize the batch (null keys stop it here), then let the index tag and place it.
        An overwrite replaces every file group, so its records are all inserts."""
        summary = self.preparer.summarize(prepared)
        partitions = sorted({r[PARTITION_PATH] for r in summary})
        view = FileSystemView(self.meta_client.storage, transaction.started_from)
        replaced: dict[str, list[str]] = {}
        slices: list[FileSlice] = []
        if operation == INSERT_OVERWRITE_TABLE:
            replaced = _all_file_groups(view)
        else:
            existing = self._existing(partitions)
            groups = view.file_groups(existing)
            view.check_slices(groups, set(existing).__contains__)  # see `_write`
            slices = [g.latest_slice for g in groups if g.latest_slice is not None]
        context = TaggingContext(
            meta_client=self.meta_client,
            config=self.config,
            timeline=transaction.started_from,
            view=view,
            slices=slices,
            partitions=partitions,
            summary=summary,
            pending_compactions=pending,
            delete_operation=operation == DELETE,
            on_existing=self.config.insert_dup_policy
            if operation in (INSERT, BULK_INSERT)
            else None,
        )
        placement = self.index.tag_and_place(prepared, context)
        if placement.cached:
            prepared.unpersist()  # the tagged batch is the cache from here on
        return placement, replaced, partitions

    def _existing(self, partitions: list[str]) -> list[str]:
        """The partitions among these that the table already has: as a read lists them
        (`naming.marks_partition`), so a partition whose metadata file went missing is still
        tagged against (taking the metadata file alone as the mark inserted its keys again)."""
        storage = self.meta_client.storage
        return [
            p for p in partitions
            if any(marks_partition(f.name) for f in storage.list_files(p))
        ]  # fmt: skip

    def _refuse_version_change(self) -> None:
        stored = self.meta_client.properties.table_version
        wanted = self.config.table_version
        if wanted is not None and wanted != stored:
            raise InvalidConfigError(
                f"table '{self.meta_client.name}' at {self.meta_client.base_uri} is Hudi table "
                f"version {stored}, but this write asks for hoodie.write.table.version={wanted}. "
                "A write keeps the table's version: drop the option (or set it to "
                f"{stored}), or write the model to a new table"
                + (
                    "; to move this table to version 8, upgrade it (HoodieTable.upgrade, or "
                    "dbt's hoodie_upgrade operation) and then write"
                    if (stored, wanted) == (6, 8)
                    else ""
                )
            )

    def _refuse_identity_change(self) -> None:
        """A write must agree with the table's identity: keys, type and partitioning."""
        stored = self.meta_client.properties
        for change in identity_changes(stored, table_properties_for(self.config)):
            raise TableIdentityError(
                f"table '{stored.name}' at {self.meta_client.base_uri} was created with "
                f"{change.setting}={_show(change.stored)}, but this write asks for "
                f"{change.setting}={_show(change.wanted)}. A table's {change.setting} cannot "
                "change: restore the setting, or rebuild the table",
                setting=change.setting,
                stored=change.stored,
                wanted=change.wanted,
            )


def _all_file_groups(view: FileSystemView) -> dict[str, list[str]]:
    """What an overwrite replaces: every file group of the snapshot it started from, by
    partition."""
    replaced: dict[str, list[str]] = {}
    for group in view.file_groups():
        replaced.setdefault(group.partition_path, []).append(group.file_id)
    return replaced


def _planned(
    placement: Placement | None, operation: str, replaced: dict[str, list[str]]
) -> CommitMetadata:
    """The `.inflight` file's content: the file groups the write is about to touch (unknown
    before a one-job write: its tasks choose them)."""
    overwrite = operation == INSERT_OVERWRITE_TABLE
    planned = CommitMetadata(
        operation_type=operation, partition_to_replace_file_ids=replaced if overwrite else None
    )
    for target in placement.targets.values() if placement is not None else ():
        planned.add(WriteStat(target.file_id, target.partition_path, None,
                              prev_commit=target.previous_instant or "null"))  # fmt: skip
    return planned


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]" if value else "(none)"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if value else "(none)"

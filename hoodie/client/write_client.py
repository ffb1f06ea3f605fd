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
Each operation (upsert, insert, bulk insert, delete, insert overwrite table) is a class of
`write/operations/` that prepares the batch and plans steps 2 and 3 as its index allows
(where the write tasks can tag their own records, the SIMPLE index's routing units, the BUCKET
index, they are one Spark job and the driver only plans them). This module runs the steps
every operation shares, in one `Transaction`: started, planned, inflight, written, completed,
or undone when any step raises.
After the commit, table services run under the same concurrency policy
(`client/table_service_runner.py`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..clustering_plan import refuse_updates_to_clustering
from ..config import BUCKET_INDEX, WriteConfig
from ..exceptions import HoodieError, InvalidConfigError, TableIdentityError
from ..faults import crash_point
from ..index import index_for
from ..keygen import KeyGenerator
from ..markers import WriteMarkers
from ..merge import merge_mode_of
from ..meta_client import HoodieTableMetaClient, identity_changes, table_properties_for
from ..metadata import SCHEMA_KEY, WriteStat
from ..progress import Committed, Committing, WriteStarted, Written, emit
from ..schema import IS_DELETED
from ..table_services.clustering import roll_back_requested_plans
from ..table_services.savepoint import refuse_pending_restore
from ..transaction.conflicts import file_groups_of
from ..transaction.key_conflicts import PARTITION_SCOPE, TABLE_SCOPE, KeyScope
from ..transaction.lock import LockProvider
from ..transaction.transaction import Transaction
from ..write.executor import WriteExecutor
from ..write.operations import (
    OPERATIONS,
    BulkInsert,
    Delete,
    Insert,
    InsertOverwriteTable,
    Upsert,
    WriteContext,
    WriteOperation,
    operation_for,
)
from ..write.prepare import BatchPreparer, batch_writer_schema, with_deletes
from ..write.result import WriteResult
from ..write.task_errors import raise_task_error, task_failure
from .table_service_runner import TableServiceRunner

log = logging.getLogger(__name__)
# A caller's check of the table at commit (`Transaction.commit`'s precommit).
Precommit = Callable[[HoodieTableMetaClient], None]


class WriteClient:
    def __init__(
        self,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig,
        lock_provider: LockProvider | None = None,
    ):
        meta_client.check_writable()
        self.meta_client = meta_client
        properties = meta_client.properties
        self.config = config = config.for_table(properties.table_version, properties.extra)
        self._refuse_version_change()
        self._refuse_identity_change()
        self.services = TableServiceRunner(meta_client, config, lock_provider)
        self.index = index_for(config)
        self._refuse_column_wise_global_index()
        keygen = KeyGenerator.for_write(config, properties)
        self.preparer = BatchPreparer(meta_client.name, config, keygen, self.index)

    def write(
        self,
        df: DataFrame,
        *,
        deletes: DataFrame | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        precommit: Precommit | None = None,
    ) -> WriteResult:
        """The operation the config names (`hoodie.datasource.write.operation`); `deletes`,
        `extra_metadata` and `precommit` as for `upsert`."""
        kind = OPERATIONS[self.config.operation.upper()]
        return self._write(df, kind, deletes=deletes, extra_metadata=extra_metadata,
                           precommit=precommit)  # fmt: skip

    def upsert(
        self,
        df: DataFrame,
        *,
        deletes: DataFrame | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        precommit: Precommit | None = None,
    ) -> WriteResult:
        """Upsert `df`; in the same commit, delete the keys of `deletes` (rows holding the
        record key and partition columns), and add `extra_metadata` to the commit's
        extraMetadata. `precommit` checks the table at commit, where the conflict checks run,
        and raises to undo the write."""
        return self._write(df, Upsert, deletes=deletes, extra_metadata=extra_metadata,
                           precommit=precommit)  # fmt: skip

    def insert(self, df: DataFrame) -> WriteResult:
        """Add the batch's new keys, filling small file groups as an upsert's inserts do.

        Keys the table holds (as the index finds them) never change a stored record: they
        stop the write or are skipped, as `hoodie.datasource.insert.dup.policy` says.
        """
        return self._write(df, Insert)

    def bulk_insert(self, df: DataFrame) -> WriteResult:
        """As `insert`, but into new file groups only, sorted by partition path and key, in
        one job after the lookup: no small file group is rewritten."""
        return self._write(df, BulkInsert)

    def delete(self, df: DataFrame) -> WriteResult:
        return self._write(df.withColumn(IS_DELETED, F.lit(True)), Delete)

    def insert_overwrite_table(
        self,
        df: DataFrame,
        *,
        extra_metadata: Mapping[str, str] | None = None,
        precommit: Precommit | None = None,
    ) -> WriteResult:
        """Replace the table's contents with `df` in one replace commit.

        Every current file group is listed as replaced and the rows go to new file groups, so
        readers switch from the old contents to the new at the commit, and time travel to
        earlier instants still finds the old files (until cleaning removes them).
        """
        return self._write(df, InsertOverwriteTable, extra_metadata=extra_metadata,
                           precommit=precommit)  # fmt: skip

    # -- the pipeline --------------------------------------------------------------------------
    def _write(
        self,
        df: DataFrame,
        kind: type[WriteOperation],
        *,
        deletes: DataFrame | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        precommit: Precommit | None = None,
    ) -> WriteResult:
        started = time.monotonic()
        meta_client, spark = self.meta_client, df.sparkSession
        refuse_pending_restore(meta_client, "write to")
        extra = self._checked_extra_metadata(extra_metadata)
        schema = batch_writer_schema(meta_client.name, self.config, df, meta_client.schema(),
                                     kind.name)  # fmt: skip
        self.config.replaced_columns(schema.names)  # a partial update names columns it has
        if deletes is not None:
            if kind is not Upsert:
                raise InvalidConfigError(
                    f"table '{meta_client.name}': deleting keys in the same commit is an "
                    f"upsert's, not {kind.name.lower()}'s; write with operation upsert"
                )
            df = with_deletes(meta_client.name, self.config, df, deletes)
        # Writes that crashed before completing are rolled back first (with concurrent
        # writers, only those whose heartbeat stopped).
        self.services.rollback_failed_writes()
        policy = self.services.policy
        context = WriteContext(meta_client, self.config, self.index, self.preparer, schema, policy,
                               extra)  # fmt: skip
        operation = operation_for(kind, context)
        prepared = operation.prepare(df)
        with (
            Transaction.start(meta_client, policy, operation.action()) as transaction,
            _undone_on_failure(transaction, meta_client.name),
        ):
            instant, table = transaction.instant_time, meta_client.name
            try:
                crash_point("write.requested")
                emit(WriteStarted(table, operation.name, instant))
                plan = operation.plan(prepared, transaction)
                crash_point("write.planned")
                transaction.inflight(meta_client.commit_content(operation.planned_metadata(plan)))
                crash_point("write.inflight")
                executor = WriteExecutor(meta_client, self.config, instant, schema,
                                         operation.name)  # fmt: skip
                emit(plan.writing(table, instant))
                writing = time.monotonic()
                stats, partitions = plan.write(executor)
                emit(_written(table, instant, stats, time.monotonic() - writing))
                metadata = operation.commit_metadata(plan, stats)
                touched = file_groups_of(metadata)
                if self.config.clustering_rollback_pending_on_conflict:
                    roll_back_requested_plans(meta_client, policy, touched)
                refuse_updates_to_clustering(meta_client.storage, meta_client.timeline(),
                                             touched, meta_client.name)  # fmt: skip
                crash_point("write.files_written")
                action = transaction.instant.action.value
                emit(Committing(table, instant, action))
                committing = time.monotonic()
                executor.finalize(metadata)
                crash_point("write.finalized")
                transaction.commit(metadata, spark=spark, unique_keys=self._unique_keys(),
                                   precommit=precommit)  # fmt: skip
            finally:
                operation.release()
        result = WriteResult(instant, operation.name, metadata, time.monotonic() - started,
                             partitions)  # fmt: skip
        emit(Committed(table, instant, action, operation.name, time.monotonic() - committing,
                       result.seconds))  # fmt: skip
        crash_point("write.completed")
        WriteMarkers(meta_client.storage, transaction.instant_time).delete_all()
        log.info("%s", result.summary())
        # (an overwrite's new file groups have no log files to compact)
        compact = meta_client.merge_on_read and not operation.replaces
        self.services.after_commit(spark, result, compact=compact)
        return result

    def _checked_extra_metadata(self, given: Mapping[str, str] | None) -> dict[str, str]:
        """The caller's extraMetadata entries: text keys and values, none of the keys the
        write itself records (the schema, the index's)."""
        extra = dict(given or {})
        reserved = {SCHEMA_KEY, *self.index.commit_metadata()}
        for key, value in extra.items():
            if not isinstance(key, str) or not isinstance(value, str) or not key:
                raise InvalidConfigError(
                    f"table '{self.meta_client.name}': commit metadata entries must be "
                    f"non-empty text keys with text values, got {key!r}: {value!r}"
                )
            if key in reserved:
                raise InvalidConfigError(
                    f"table '{self.meta_client.name}': commit metadata key '{key}' is the "
                    "write's own (the schema or the index); choose another name"
                )
        return extra

    def _unique_keys(self) -> KeyScope | None:
        """Where the commit's same-key check holds this write's keys unique: in their
        partition, or (a global index) the table; None for the BUCKET index, where a key
        always goes to the same file group (which the file-group check guards)."""
        if self.config.index_type == BUCKET_INDEX:
            return None
        return TABLE_SCOPE if self.index.is_global() else PARTITION_SCOPE

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

    def _refuse_column_wise_global_index(self) -> None:
        """A global index with the column-wise payloads: Apache Hudi merges a key's batch
        records across partitions and a moved record with its stored version (its
        `HoodieIndexUtils.mergeForPartitionUpdatesIfNeeded`), which our global indexes do
        not do yet; refused rather than written otherwise."""
        mode = merge_mode_of(self.meta_client.properties)
        if mode.column_wise and self.config.partial_update_columns:
            raise InvalidConfigError(
                f"table '{self.meta_client.name}' merges by {mode.name}, whose payload already "
                "decides column by column which stored values a row keeps; a partial update "
                f"(hoodie.write.partial.update.columns={','.join(self.config.partial_update_columns)}"
                ", dbt's merge_update_columns / merge_exclude_columns) cannot be added to it. "
                "Remove the partial update, or write a table merging by EVENT_TIME_ORDERING or "
                "COMMIT_TIME_ORDERING"
            )
        if mode.column_wise and self.index.is_global():
            raise InvalidConfigError(
                f"table '{self.meta_client.name}' merges by {mode.name}, which dbt-hoodie "
                f"does not write under a global index ({self.config.index_type}): use a "
                "non-global index (SIMPLE, BLOOM, BUCKET)"
            )

    def _refuse_identity_change(self) -> None:
        """A write must agree with the table's identity: keys, type and partitioning."""
        stored = self.meta_client.properties
        for change in identity_changes(stored, table_properties_for(self.config, stored),
                                       self.config):  # fmt: skip
            raise TableIdentityError(
                f"table '{stored.name}' at {self.meta_client.base_uri} was created with "
                f"{change.setting}={_show(change.stored)}, but this write asks for "
                f"{change.setting}={_show(change.wanted)}. A table's {change.setting} cannot "
                "change: restore the setting, or rebuild the table",
                setting=change.setting,
                stored=change.stored,
                wanted=change.wanted,
            )


@contextmanager
def _undone_on_failure(transaction: Transaction, table: str) -> Iterator[None]:
    """A failed write's error, raised on to the transaction, which undoes the instant: the
    core's own errors as they are (from Spark tasks too), any other as a `TaskFailedError`."""
    try:
        yield
    except HoodieError:
        raise
    except BaseException as error:
        raise_task_error(error)
        raise task_failure(
            error,
            f"write {transaction.instant_time} to table '{table}' failed and was undone "
            "(readers still see the previous snapshot)",
            table,
            transaction.instant_time,
        ) from error


def _written(table: str, instant: str, stats: list[WriteStat], seconds: float) -> Written:
    """What the write tasks' stats say (a file group may have a base file and log files)."""
    groups = {(s.partition_path, s.file_id) for s in stats}
    new_groups = {(s.partition_path, s.file_id) for s in stats if s.prev_commit == "null"}
    return Written(
        table,
        instant,
        file_groups=len(groups),
        new_file_groups=len(new_groups),
        files=len(stats),
        records=sum(s.num_writes for s in stats),
        inserts=sum(s.num_inserts for s in stats),
        updates=sum(s.num_update_writes for s in stats),
        deletes=sum(s.num_deletes for s in stats),
        bytes=sum(s.total_write_bytes for s in stats),
        seconds=seconds,
    )


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]" if value else "(none)"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if value else "(none)"

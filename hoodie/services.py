"""`table.services`: the table services and timeline actions of a `HoodieTable`, in one group.

Writes are the table's own methods (`table.upsert(df)`); what maintains the table, or moves
its timeline back, is reached through `table.services`, as delta-rs groups `dt.optimize` and
pyiceberg `table.maintenance`: compaction, clustering, cleaning and archival (Hudi's table
services), and rollback, savepoint, restore and upgrade (Hudi's timeline actions on a table).
Each runs under the concurrency policy of the table's write config (the one given to
`for_write` or `open`; without one, the default options), or of the `config` a call is given.

The "latest" defaults are the core's, not its callers': a savepoint pins the latest completed
commit and a restore returns to the latest savepoint unless told otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import SparkSession

from .avro_metadata import CleanMetadata, RestoreMetadata, RollbackMetadata
from .client.table_service_runner import TableServiceRunner
from .config import WriteConfig
from .exceptions import TimelineError
from .meta_client import HoodieTableMetaClient
from .table_services.savepoint import Savepoint, create_savepoint
from .table_services.upgrade import UpgradeResult
from .write.result import WriteResult

if TYPE_CHECKING:
    from .table import HoodieTable


class TableServices:
    """The services of one table (`HoodieTable.services`)."""

    def __init__(self, table: HoodieTable):
        self._table = table

    def _runner(self, config: WriteConfig | None) -> TableServiceRunner:
        return TableServiceRunner(self._table.meta_client, config or self._table.config)

    def compact(
        self, spark: SparkSession, config: WriteConfig | None = None, *, pending_only: bool = False
    ) -> list[WriteResult]:
        """Merge-on-read: finish pending compactions, then compact every slice with log files.

        Args:
            spark: the session the compaction's Spark work runs in.
            config: the write config to compact under, instead of the table's.
            pending_only: execute the pending plans only (those `schedule_compaction` or
                `hoodie.compact.schedule.inline` wrote), as Apache Hudi's async compaction.

        Returns:
            One result per compaction that ran (none when no slice has log files).

        Raises:
            TimelineError: a restore is in progress, or the table is no merge-on-read table.
            LockTimeoutError: another writer held the table lock too long.
        """
        return self._runner(config).compact(spark, pending_only)

    def schedule_compaction(self, config: WriteConfig | None = None) -> str | None:
        """Merge-on-read: write a plan compacting every latest slice with log files (and not
        in a pending plan), and leave it pending for a later `compact` to execute.

        Args:
            config: the write config to schedule under, instead of the table's.

        Returns:
            The plan's instant, or None when no slice needs compacting.

        Raises:
            CommitError: a write is pending (its logs could be left out of the plan).
            TimelineError: a restore is in progress, or the table is no merge-on-read table.
        """
        return self._runner(config).schedule_compaction()

    def cluster(self, spark: SparkSession, config: WriteConfig | None = None) -> list[WriteResult]:
        """Cluster the table: execute pending clustering plans, then plan the small file
        groups (`hoodie.clustering.plan.strategy.*`) and rewrite them into fewer, sorted
        ones (`hoodie.layout.optimize.strategy`, the sort columns).

        Args:
            spark: the session the clustering's Spark work runs in.
            config: the write config to cluster under, instead of the table's.

        Returns:
            One result per clustering executed (none when there was nothing to cluster).

        Raises:
            TimelineError: a restore is in progress.
            CommitError: a write is pending (a new plan waits for it).
            LockTimeoutError: another writer held the table lock too long.
        """
        return self._runner(config).cluster(spark)

    def schedule_clustering(self, config: WriteConfig | None = None) -> str | None:
        """Write a clustering plan of the small file groups without executing it (`cluster`
        executes it later); writers keep out of its file groups meanwhile.

        Returns:
            The plan's instant time, or None when there is nothing to cluster.
        """
        return self._runner(config).schedule_clustering()

    def clean(self, config: WriteConfig | None = None) -> CleanMetadata | None:
        """Roll back failed writes, then delete the file versions the cleaning policy
        (`hoodie.cleaner.*`) no longer needs.

        Args:
            config: the write config whose cleaning options apply, instead of the table's.

        Returns:
            Hudi's clean metadata, or None when there was nothing to delete.

        Raises:
            LockTimeoutError: another writer held the table lock too long.
        """
        return self._runner(config).clean()

    def archive(self, config: WriteConfig | None = None) -> None:
        """Move old completed instants to the archived timeline (`hoodie.keep.min.commits`,
        `hoodie.keep.max.commits`), as every write does after it commits.

        Args:
            config: the write config whose archival options apply, instead of the table's.

        Raises:
            LockTimeoutError: another writer held the table lock too long.
        """
        self._runner(config).archive()

    def rollback(
        self, instant_time: str | None = None, config: WriteConfig | None = None
    ) -> RollbackMetadata:
        """Roll back the latest completed commit: its files are deleted and readers see the
        table as it was before it.

        Args:
            instant_time: the commit to roll back; it must be the latest (None: the latest).
            config: the write config to run under, instead of the table's.

        Returns:
            Hudi's rollback metadata: the instant rolled back, the files deleted.

        Raises:
            TimelineError: no commit to roll back, `instant_time` is not the latest, it is
                savepointed, or a write is in progress.
        """
        return self._runner(config).rollback(instant_time)

    def savepoint(
        self,
        instant_time: str | None = None,
        comment: str = "",
        config: WriteConfig | None = None,
    ) -> Savepoint:
        """Pin the snapshot of a completed commit: cleaning keeps its files, and `restore`
        can bring the table back to it.

        Args:
            instant_time: the completed commit to pin (None: the latest).
            comment: stored in the savepoint's metadata.
            config: how the table is written (None: the table's write config, if it was
                opened with one; else the defaults): with `hoodie.metadata.enable=true` the
                metadata table is kept (a savepoint changes no file).

        Returns:
            The savepoint: the commit it pins and Hudi's savepoint metadata.

        Raises:
            TimelineError: the table has no completed commit, `instant_time` is none of its
                completed commits, or it is savepointed already.
        """
        chosen = config or self._table.config
        properties = self._table.meta_client.properties
        keep = (chosen.keeps_metadata_table(properties.table_version, properties.extra)
                if chosen is not None else False)  # fmt: skip
        return create_savepoint(self._table.meta_client, instant_time, comment=comment,
                                keep_metadata_table=keep)  # fmt: skip

    def restore(
        self, savepoint_time: str | None = None, config: WriteConfig | None = None
    ) -> RestoreMetadata:
        """Roll back every commit after a savepoint (Hudi's restore), recorded as one restore
        instant; an interrupted restore is finished by running it again.

        Args:
            savepoint_time: the savepoint to return to (None: the latest savepoint).
            config: the write config to run under, instead of the table's.

        Returns:
            Hudi's restore metadata: the restore instant and the instants rolled back.

        Raises:
            TimelineError: the table has no savepoint (at `savepoint_time`), or a write is in
                progress.
        """
        if savepoint_time is None:
            pinned = self._table.savepoints()
            if not pinned:
                raise TimelineError(f"table '{self._table.name}' has no savepoint to restore")
            savepoint_time = pinned[-1]
        return self._runner(config).restore(savepoint_time)

    def upgrade(
        self, spark: SparkSession | None = None, config: WriteConfig | None = None
    ) -> UpgradeResult:
        """Upgrade the table from version 6 to version 8 (Apache Hudi 1.x's timeline), after
        rolling back failed writes and compacting a merge-on-read table's log files (with
        `spark`). Readers see the table whole at every step, and after a crash the upgrade is
        run again; on a version 8 table it finishes an upgrade that stopped midway.

        Args:
            spark: the session to compact in (merge-on-read tables with log files need it).
            config: the write config to run under, instead of the table's.

        Returns:
            The versions before and after and what was moved.

        Raises:
            TimelineError: something must finish first (a pending compaction, a restore), or
                a merge-on-read table has log files and no `spark` was given.
        """
        table = self._table
        result = self._runner(config).upgrade(spark)
        table.meta_client = HoodieTableMetaClient.load(table.storage)
        return result

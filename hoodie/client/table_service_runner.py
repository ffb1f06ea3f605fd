"""Table services under one concurrency policy: run on demand, or after a write's commit.

Every service first needs to know which pending instants have failed, and, with concurrent
writers, to run alone where it rewrites the timeline. Both come from the table's write config
(`FailedWritesPolicy`), built once here, so compaction, clean, archive, rollback and restore
cannot apply different rules. After a commit the write client runs inline compaction, the
automatic clean, the metadata table's services and archiving through `after_commit`: the
commit is complete whatever happens there, so their failures are logged, not raised.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from pyspark.sql import SparkSession

from ..avro_metadata import CleanMetadata, RestoreMetadata, RollbackMetadata
from ..config import WriteConfig
from ..exceptions import HoodieError, TimelineError
from ..meta_client import HoodieTableMetaClient
from ..progress import ServiceFinished, ServiceStarted, emit
from ..table_services.archival import archive
from ..table_services.clean import CleanConfig, Cleaner
from ..table_services.clustering import Clusterer, commits_since_clustering
from ..table_services.compaction import Compactor, delta_commits_since_compaction
from ..table_services.metadata_services import (
    MetadataServicesConfig,
    MetadataServicesResult,
    compact_metadata_table,
    run_metadata_table_services,
)
from ..table_services.savepoint import restore
from ..table_services.upgrade import UpgradeResult, upgrade_to_version_8
from ..timeline import Action, Instant
from ..transaction.failed_writes import FailedWritesPolicy
from ..transaction.lock import LockProvider
from ..transaction.rollback import Rollback
from ..write.result import WriteResult

log = logging.getLogger(__name__)
T = TypeVar("T")


class TableServiceRunner:
    def __init__(
        self,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig | None = None,
        lock_provider: LockProvider | None = None,
    ):
        meta_client.check_writable()
        self.meta_client = meta_client
        properties = meta_client.properties
        if config is not None:
            config = config.for_table(properties.table_version, properties.extra)
        self.config = config  # how the table is written; None: the default options
        self.policy = FailedWritesPolicy.of(meta_client.storage, config, lock_provider)

    # -- on demand -----------------------------------------------------------------------------
    def rollback_failed_writes(self) -> list[str]:
        return self._service(
            "rollback of failed writes",
            lambda: Rollback(self.meta_client).rollback_failed_writes(self.policy),
            lambda rolled_back: f"rolled back {', '.join(rolled_back)}" if rolled_back else None,
        )

    def compact(self, spark: SparkSession, pending_only: bool = False) -> list[WriteResult]:
        """Execute pending compaction plans, then (unless `pending_only`) schedule and
        execute a new one."""
        return self._service(
            "compaction",
            lambda: Compactor(self.meta_client, self.config, self.policy).run(spark, pending_only),
            _compacted,
        )

    def schedule_compaction(self) -> str | None:
        """Write a compaction plan and leave it pending (None: no slice has log files)."""
        self.rollback_failed_writes()
        return Compactor(self.meta_client, self.config, self.policy).schedule()

    def cluster(self, spark: SparkSession) -> list[WriteResult]:
        """Execute pending clustering plans, then schedule and execute a new one."""
        return self._service(
            "clustering",
            lambda: Clusterer(self.meta_client, self.config, self.policy).run(spark),
            _clustered,
        )

    def schedule_clustering(self) -> str | None:
        """Write a clustering plan without executing it; its instant, or None."""
        return Clusterer(self.meta_client, self.config, self.policy).schedule()

    def clean(self) -> CleanMetadata | None:
        self.rollback_failed_writes()
        return self._clean()

    def archive(self) -> None:
        self._service("archival", self._archive, _archived)

    def _archive(self) -> list[Instant]:
        with self.policy.exclusive():
            config = self.config
            if config is None:
                return archive(self.meta_client, keep_metadata_table=self.policy.metadata_table)
            else:
                return archive(
                    self.meta_client,
                    config.keep_min_commits,
                    config.keep_max_commits,
                    config.archive_beyond_savepoint,
                    config.compaction_delta_commits if config.inline_compaction else None,
                    self.policy.metadata_table,
                )

    def metadata_table_services(self, spark: SparkSession | None = None) -> MetadataServicesResult:
        """Clean, compact and archive the table's metadata table, under the table lock (its
        writes are the data table's writers', one at a time); nothing where it has none.
        `spark`: the session a large record index is compacted in."""
        config = self.config
        if config is None:
            return MetadataServicesResult()

        def run() -> MetadataServicesResult:
            with self.policy.exclusive():
                return run_metadata_table_services(
                    self.meta_client, MetadataServicesConfig.of(config), self.policy.check_lock,
                    spark,
                )  # fmt: skip

        return self._service("metadata table services", run, _metadata_services_done)

    def upgrade(self, spark: SparkSession | None) -> UpgradeResult:
        """Upgrade a version 6 table to version 8 as Hudi does: failed writes rolled back and
        (merge-on-read) every log file compacted first, so that the upgraded table's latest
        slices start with base files (later log files are named as version 8 names them).
        Without `spark`, a merge-on-read table must have no log files to compact."""
        if self.meta_client.properties.table_version == 6:
            self.rollback_failed_writes()
            if self.meta_client.merge_on_read and spark is not None:
                self.compact(spark)
        with self.policy.exclusive():
            keep = self.policy.metadata_table
            if self.meta_client.properties.table_version == 6:
                self._refuse_uncompacted_logs()
            types = self.config.partition_types if self.config is not None else ()
            result = upgrade_to_version_8(self.meta_client, keep, types)
            if keep and result.from_version == 6:
                # its version 6 log files folded into a base file of a version 8 instant, as
                # Apache Hudi compacts it before its first version 8 delta commit
                compact_metadata_table(self.meta_client)
            return result

    def _refuse_uncompacted_logs(self) -> None:
        if not self.meta_client.merge_on_read:
            return
        with_logs = [
            group.file_id
            for group in self.meta_client.file_system_view().file_groups()
            if group.latest_slice is not None and group.latest_slice.log_files
        ]
        if with_logs:
            raise TimelineError(
                f"merge-on-read table '{self.meta_client.name}' has log files in the latest "
                f"slices of {len(with_logs)} file group(s) (e.g. {with_logs[0]}); they are "
                "compacted before an upgrade: run it with Spark (or hoodie_compact first), "
                "once no writer is adding more"
            )

    def restore(self, savepoint_time: str) -> RestoreMetadata:
        return restore(self.meta_client, savepoint_time, self.policy)

    def rollback(self, instant_time: str | None = None) -> RollbackMetadata:
        return Rollback(self.meta_client).rollback_latest_commit(self.policy, instant_time)

    # -- after a commit ------------------------------------------------------------------------
    def after_commit(self, spark: SparkSession, result: WriteResult, compact: bool) -> None:
        """Hudi's inline table services, in its order: compaction (when `compact` and enough
        delta commits), clean, archive."""
        config = self.config
        if config is None:
            return
        if compact and (config.inline_compaction or config.schedule_inline_compaction):
            result.compactions = self._compact_inline(spark, config)
        if config.inline_clustering or config.schedule_inline_clustering:
            result.clusterings = self._cluster_inline(spark, config)
        if config.auto_clean:
            self._logged("cleaning", self._clean)
        if self.policy.metadata_table:
            self._logged("maintaining the metadata table of",
                         lambda: self.metadata_table_services(spark))  # fmt: skip
        if config.auto_archive:
            self._logged("archiving the timeline of", self.archive)

    def _compact_inline(self, spark: SparkSession, config: WriteConfig) -> list[WriteResult]:
        """After enough delta commits, fold the logs into base files (or, with only
        `hoodie.compact.schedule.inline`, write the plan and leave it pending). A failed
        compaction is undone and its plan stays pending; the next trigger runs it again."""
        timeline = self.meta_client.timeline()
        if not config.inline_compaction:
            if delta_commits_since_compaction(timeline) < config.compaction_delta_commits:
                return []
            return self._logged_compaction(lambda: self._schedule_inline())
        has_pending = any(i.action is Action.COMPACTION for i in timeline.pending)
        if not has_pending and (
            delta_commits_since_compaction(timeline) < config.compaction_delta_commits
        ):
            return []
        return self._logged_compaction(lambda: self.compact(spark))

    def _schedule_inline(self) -> list[WriteResult]:
        instant = self.schedule_compaction()
        if instant is not None:
            log.info("scheduled compaction %s of table '%s' (hoodie.compact.schedule.inline); "
                     "a compaction run executes it", instant, self.meta_client.name)  # fmt: skip
        return []

    def _logged_compaction(self, compact: Callable[[], list[WriteResult]]) -> list[WriteResult]:
        try:
            return compact()
        except HoodieError as error:
            log.warning(
                "inline compaction of table '%s' failed and was undone; the delta commit stands "
                "and compaction is retried after the next one: %s",
                self.meta_client.name,
                error,
            )
            return []

    def _cluster_inline(self, spark: SparkSession, config: WriteConfig) -> list[WriteResult]:
        """After `hoodie.clustering.inline.max.commits` commits since the last clustering:
        schedule a plan, and (`hoodie.clustering.inline`) execute it. A failed clustering is
        undone, its plan left pending for the next run; the write stands."""
        if commits_since_clustering(self.meta_client, self.meta_client.timeline()) < (
            config.clustering_max_commits
        ):
            return []
        try:
            if config.inline_clustering:
                return self.cluster(spark)
            self.schedule_clustering()
        except HoodieError as error:
            log.warning(
                "inline clustering of table '%s' failed and was undone; the write stands: %s",
                self.meta_client.name,
                error,
            )
        return []

    def _clean(self) -> CleanMetadata | None:
        return self._service(
            "clean",
            lambda: Cleaner(self.meta_client, CleanConfig.of(self.config), self.policy).run(),
            _cleaned,
        )

    def _service(self, name: str, run: Callable[[], T], outcome: Callable[[T], str | None]) -> T:
        """Run one service, its start and end told to progress listeners (`hoodie.progress`):
        what it did (`outcome` of its result; None: nothing), or that it failed."""
        table = self.meta_client.name
        emit(ServiceStarted(table, name))
        started = time.monotonic()
        try:
            result = run()
        except Exception as error:
            emit(ServiceFinished(table, name, str(error), time.monotonic() - started, True))
            raise
        emit(ServiceFinished(table, name, outcome(result), time.monotonic() - started))
        return result

    def _logged(self, what: str, service: Callable[[], object]) -> None:
        try:
            service()
        except HoodieError as error:
            log.warning("%s table '%s' failed: %s", what, self.meta_client.name, error)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _compacted(results: list[WriteResult]) -> str | None:
    if not results:
        return None
    groups = sum(r.files_written for r in results)
    records = sum(r.metadata.total("num_writes") for r in results)
    instants = ", ".join(r.instant for r in results)
    return f"compacted {_count(groups, 'file group')} ({_count(records, 'record')}) at {instants}"


def _clustered(results: list[WriteResult]) -> str | None:
    if not results:
        return None
    replaced = sum(
        len(ids)
        for r in results
        for ids in (r.metadata.partition_to_replace_file_ids or {}).values()
    )
    written = sum(r.files_written for r in results)
    instants = ", ".join(r.instant for r in results)
    return (
        f"clustered {_count(replaced, 'file group')} into {_count(written, 'file')} at {instants}"
    )


def _cleaned(metadata: CleanMetadata | None) -> str | None:
    if metadata is None:
        return None
    return f"deleted {_count(metadata.total_files_deleted, 'file')} at {metadata.start_clean_time}"


def _archived(instants: list[Instant]) -> str | None:
    return f"archived {_count(len(instants), 'instant')}" if instants else None


def _metadata_services_done(result: MetadataServicesResult) -> str | None:
    done = []
    if result.compaction is not None:
        done.append(f"compacted at {result.compaction}")
    if result.clean is not None:
        done.append(f"cleaned at {result.clean}")
    if result.archived:
        done.append(f"archived {_count(result.archived, 'instant')}")
    return ", ".join(done) or None

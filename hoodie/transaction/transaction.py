"""One action's life on the timeline: started, made inflight, then completed or undone.

Every action that writes or deletes files under an instant (a write, a compaction, a clean,
later clustering) goes through a `Transaction`, so that the concurrency policy is applied the
same way everywhere:
- the instant is created exclusively and its heartbeat beats from before it exists
  (`FailedWritesPolicy.start_instant`), so no other writer takes it for failed while it works;
- the completion checks that no other writer rolled this instant back (a write whose instant
  was rolled back never completes: its files are gone) and that nothing completed since this
  one started touched the same file groups (`conflicts.py`) or wrote the same new record
  keys (`key_conflicts.py`); with optimistic concurrency
  control (the default) under the table lock, which makes check and commit one step;
- with `hoodie.metadata.enable=true` the metadata table's delta commit of the instant completes
  under the lock just before the instant does (`metadata_writer.py`); otherwise a table's
  metadata table is turned off before the instant completes (`metadata_table.py`);
- a failure undoes the instant at once: a write's files are rolled back (a rollback instant
  records it) or, with nothing written, its pending files just leave the timeline; a
  compaction goes back to its plan, which stays pending to be run again (a clean's plan, too,
  stays pending: the next clean finishes it, without `abort`).

A transaction is a context manager, as pyiceberg's is: `with Transaction.start(...) as txn:`
undoes the instant when the block raises (and lets the error go on), and stops the heartbeat
however the block ends. An action whose failure must leave its instant pending (a clean's
plan) uses `with txn.kept_pending():` instead, which only stops the heartbeat.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING

from ..clustering_plan import is_clustering
from ..exceptions import WriteRolledBackError
from ..faults import crash_point
from ..markers import WriteMarkers
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata
from ..timeline import Action, Instant, State, Timeline
from .conflicts import FileGroups, check_conflicts, file_groups_of
from .failed_writes import FailedWritesPolicy
from .heartbeat import Heartbeat
from .key_conflicts import KeyScope, check_key_conflicts
from .metadata_table import turn_off_metadata_table
from .metadata_writer import update_metadata_table
from .rollback import Rollback

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


class Transaction:
    def __init__(
        self,
        meta_client: HoodieTableMetaClient,
        policy: FailedWritesPolicy,
        instant: Instant,
        started_from: Timeline,
        heartbeat: Heartbeat | None = None,
    ):
        self.meta_client = meta_client
        self.policy = policy
        self.instant = instant
        self.started_from = started_from  # what this action built on: conflicts are after it
        self.heartbeat = heartbeat

    @classmethod
    def start(
        cls,
        meta_client: HoodieTableMetaClient,
        policy: FailedWritesPolicy,
        action: Action,
        plan: bytes = b"",
        instant_time: str | None = None,
    ) -> Transaction:
        """A new requested instant (holding `plan`, if any; at `instant_time` if given) and
        its heartbeat."""
        started_from = meta_client.timeline()
        instant, heartbeat = policy.start_instant(meta_client, action, plan, instant_time)
        return cls(meta_client, policy, instant, started_from, heartbeat)

    @classmethod
    def take_over(
        cls, meta_client: HoodieTableMetaClient, policy: FailedWritesPolicy, instant: Instant
    ) -> Transaction | None:
        """Resume a pending instant whose writer failed (a compaction plan nobody runs), or
        None when it is not abandoned, or no longer pending."""
        if not policy.has_failed(instant.timestamp):
            return None
        with policy.exclusive():
            timeline = meta_client.timeline()
            still = any(i.timestamp == instant.timestamp and i.action is instant.action
                        for i in timeline.pending)  # fmt: skip
            if not still or not policy.has_failed(instant.timestamp):
                return None
            heartbeat = policy.take_over(instant.timestamp)
        return cls(meta_client, policy, instant, timeline, heartbeat)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Leave the transaction: a block that raised undoes the instant (`abort`) unless it
        completed; the error goes on. The heartbeat stops however the block ended."""
        try:
            if error is not None and self.instant.state is not State.COMPLETED:
                self.abort()
        finally:
            self.end()

    @contextmanager
    def kept_pending(self) -> Iterator[Transaction]:
        """The transaction of an action whose failure leaves its instant pending for a later
        run to finish (a clean's plan), rather than undone: only the heartbeat stops."""
        try:
            yield self
        finally:
            self.end()

    @property
    def instant_time(self) -> str:
        return self.instant.timestamp

    def inflight(self, content: bytes = b"") -> Instant:
        self.instant = self.meta_client.save_instant(
            self.instant.with_state(State.INFLIGHT), content
        )
        return self.instant

    def commit(
        self,
        metadata: CommitMetadata,
        check_conflicts_of: bool = True,
        spark: SparkSession | None = None,
        unique_keys: KeyScope | None = None,
        precommit: Callable[[HoodieTableMetaClient], None] | None = None,
    ) -> None:
        """Complete a write or compaction with its commit metadata; with concurrent writers,
        unless told otherwise, after checking that nothing completed since it started wrote
        to the same file groups, nor (`unique_keys`: where the index keeps a key unique) the
        same record keys (`key_conflicts.py`). `spark`: the session of the write, for the
        metadata table's record index jobs and the key check's reads. `precommit`: the
        caller's own check of the table, run where the conflict checks run (under the lock);
        it raises to undo the write (a source checkpoint another write advanced)."""
        groups = file_groups_of(metadata) if check_conflicts_of else None
        self.complete(self.meta_client.commit_content(metadata), groups, metadata, spark,
                      unique_keys if check_conflicts_of else None, precommit)  # fmt: skip

    def complete(
        self,
        content: bytes,
        file_groups: FileGroups | None = None,
        written: CommitMetadata | None = None,
        spark: SparkSession | None = None,
        unique_keys: KeyScope | None = None,
        precommit: Callable[[HoodieTableMetaClient], None] | None = None,
    ) -> None:
        """Complete the instant with `content` (a commit's JSON, a clean's Avro metadata),
        after checking that no writer rolled the instant back and, given the `file_groups` it
        wrote, that no commit since it started touched them; with optimistic concurrency
        control, under the table lock. The metadata table's delta commit of the instant
        completes first (`hoodie.metadata.enable=true`), or the metadata table goes first
        (false: its readers would miss this instant's files). A metadata table's own actions
        (its clean) have no metadata table to keep. `written`: a commit's metadata as its
        tasks returned it (with the files' column ranges and bloom filters for the indexes);
        with `unique_keys`, its record keys are held against those of the writes completed
        since it started (only when there are some)."""
        keeps = self.policy.metadata_table and not self.meta_client.is_metadata_table
        if not self.policy.metadata_table and not self.meta_client.is_metadata_table:
            turn_off_metadata_table(self.meta_client, f"{self.instant.action} {self.instant_time}")
        done = self.instant.with_state(State.COMPLETED)
        with self.policy.exclusive():
            self._refuse_if_rolled_back()
            if file_groups is not None:
                concurrent = check_conflicts(self.meta_client, self.instant_time,
                                             self.started_from, file_groups)  # fmt: skip
                if unique_keys is not None and written is not None and concurrent:
                    check_key_conflicts(self.meta_client, self.instant_time, written,
                                        concurrent, unique_keys, spark)  # fmt: skip
            if precommit is not None:
                precommit(self.meta_client)
            crash_point("commit.conflicts_checked")
            self.policy.check_lock()
            if keeps:
                update_metadata_table(self.meta_client, self.instant, content,
                                      self.policy.check_lock, self.policy.metadata_indexes,
                                      written, spark)  # fmt: skip
            done = self.meta_client.save_instant(done, content)
            crash_point("commit.completed_under_lock")
        self.instant = done

    def abort(self) -> None:
        """Undo the instant now rather than leave it to the next writer (best effort: a
        failure here leaves it pending, and the next writer's policy rolls it back)."""
        try:
            if self._rolled_back():
                return  # by another writer: its rollback owns what this instant left
            markers = WriteMarkers(self.meta_client.storage, self.instant_time)
            if self.instant.action is Action.COMPACTION or is_clustering(
                self.meta_client.storage, self.meta_client.layout, self.instant
            ):  # a table service's plan stays pending, to be executed again
                markers.delete_marked_files()
                self.meta_client.delete_instant(self.instant, (State.INFLIGHT,))
            elif markers.all():
                # under the table lock, as every rollback: its metadata table delta commit is
                # one (and removes a pending one, taken for a crashed writer's)
                with self.policy.exclusive():
                    if not self._rolled_back():
                        Rollback(self.meta_client).rollback(self.instant, self.policy)
            else:
                self.meta_client.delete_pending_instant(self.instant)
        except Exception:  # pragma: no cover - best effort; the next writer rolls it back
            log.exception("could not undo failed %s %s", self.instant.action.value,
                          self.instant_time)  # fmt: skip

    def end(self) -> None:
        """Stop the heartbeat: the instant is completed, undone, or left for a later run."""
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None

    def _rolled_back(self) -> bool:
        """Has another writer rolled this instant back, or begun to? Its own requested or
        inflight instant is gone, or a pending rollback plans to undo it."""
        timeline, rollback = self.meta_client.timeline(), Rollback(self.meta_client)
        mine = self.instant_time, self.instant.action
        return not any((i.timestamp, i.action) == mine for i in timeline.pending) or any(
            rollback.target_of(i) == self.instant_time
            for i in timeline.pending
            if i.action is Action.ROLLBACK
        )

    def _refuse_if_rolled_back(self) -> None:
        """Another writer rolls back a write whose heartbeat stopped (a stalled process); if it
        did so to this one, completing it would name files that are gone. (Under optimistic
        concurrency rollbacks of other writers' instants hold the lock too, so this check
        cannot race one.)"""
        if self._rolled_back():
            raise WriteRolledBackError(
                f"{self.instant.action.value} {self.instant_time} of table "
                f"'{self.meta_client.name}' was rolled back by another writer, which took it "
                "for failed: its heartbeat stopped for longer than "
                "hoodie.client.heartbeat.interval_in_ms x (tolerable.misses + 1). Run it again"
            )

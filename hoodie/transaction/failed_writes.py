"""Which pending instants have failed: Hudi's failed-writes cleaning policy, in one place.

A pending write (a requested or inflight commit, delta commit or replace commit) or a pending
compaction is either still being worked on or abandoned by a writer that failed, and only an
abandoned one may be rolled back or run again. Every action that does either (writes,
compaction, clean, rollback, restore) asks this policy, built from the table's write config.

In both concurrency modes the policy is Hudi's LAZY one: each writer keeps a heartbeat for its
instant (`heartbeat.py`), created before the instant itself, and an instant has failed only
once its heartbeat is older than `hoodie.client.heartbeat.interval_in_ms x
(hoodie.client.heartbeat.tolerable.misses + 1)` or missing. A crashed write is therefore rolled
back by the first write after its heartbeat expired (3 minutes by default), never one that is
still running: a second `dbt run` of a model cannot undo the first's write. The modes differ
in what guards the commit (`transaction.py`):
- optimistic concurrency control (the default): deciding an instant failed and undoing or
  re-running it, and every commit, happen under the table lock, which makes the commit's
  checks (not rolled back, no conflicting commit since it started) atomic;
- single writer: the same checks without a lock, for tables that have one writer at a time
  and no lock to take; two writers committing at the same moment (or one stalled past its
  heartbeat's expiry and another rolling it back) can each pass them before the other acts.
(Hudi's single-writer EAGER policy, which rolls back every pending write at once, is what lost
a running writer's committed rows when a model ran twice at once: it is not used.)
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from ..config import OPTIMISTIC, MetadataIndexes, WriteConfig
from ..exceptions import CommitError, TableNotFoundError, TimelineError
from ..meta_client import HoodieTableMetaClient
from ..options.write import default, default_seconds
from ..storage import FileIO
from ..timeline import WRITE_ACTIONS, Action, Instant, State, Timeline, new_instant_time
from .heartbeat import Heartbeat, is_expired
from .lock import LockProvider, table_lock


@dataclass(frozen=True)
class FailedWritesPolicy:
    storage: FileIO
    heartbeat_interval_seconds: float = default_seconds("heartbeat_interval_ms")
    tolerable_misses: int = cast(int, default("heartbeat_tolerable_misses"))
    lock: LockProvider | None = None  # optimistic concurrency: the table lock
    # hoodie.metadata.enable: actions under this policy keep the metadata table's files
    # partition up to date (`metadata_writer.py`) rather than delete it
    metadata_table: bool = False
    # hoodie.metadata.index.*: the index partitions kept beside `files` (unset: the table's)
    metadata_indexes: MetadataIndexes = MetadataIndexes()

    @classmethod
    def of(
        cls, storage: FileIO, config: WriteConfig | None, lock_provider: LockProvider | None = None
    ) -> FailedWritesPolicy:
        """The policy of a table written with `config` (None: the default options, as table
        services run on demand without a write config)."""
        if config is None:  # the default options: only the concurrency ones are read here
            name = posixpath.basename(storage.uri("").rstrip("/")) or "table"
            config = WriteConfig(table_name=name, record_key_fields=("id",))
        optimistic = config.concurrency_mode == OPTIMISTIC
        return cls(
            storage,
            heartbeat_interval_seconds=config.heartbeat_interval_ms / 1000,
            tolerable_misses=config.heartbeat_tolerable_misses,
            lock=table_lock(storage, config, lock_provider) if optimistic else None,
            metadata_table=_keeps_metadata_table(storage, config),
            metadata_indexes=config.metadata_indexes,
        )

    @property
    def optimistic(self) -> bool:
        """Optimistic concurrency control: the table lock guards commits and rollbacks."""
        return self.lock is not None

    def has_failed(self, instant: str) -> bool:
        """Is the pending instant abandoned? Only if no heartbeat for it is live."""
        return is_expired(
            self.storage, instant, self.heartbeat_interval_seconds, self.tolerable_misses
        )

    def in_progress(self, timeline: Timeline) -> list[Instant]:
        """Pending writes, compactions and clusterings that have not failed: a writer is working
        on them."""
        return [
            i
            for i in timeline.pending
            if (i.action in WRITE_ACTIONS or i.action in (Action.COMPACTION, Action.CLUSTERING))
            and not self.has_failed(i.timestamp)
        ]

    def refuse_in_progress(self, timeline: Timeline, table_name: str, action: str) -> None:
        """For actions that rewrite history (rollback, restore): not under a running write."""
        busy = self.in_progress(timeline)
        if busy:
            names = ", ".join(f"{i.timestamp} ({i.action.value})" for i in busy)
            raise TimelineError(
                f"{action} of table '{table_name}' cannot run while {names} is in progress "
                "(its writer's heartbeat is live): it may be building on the commits this "
                "would undo. Run it again once the table's writers have finished"
            )

    def start_instant(
        self,
        meta_client: HoodieTableMetaClient,
        action: Action,
        content: bytes = b"",
        instant_time: str | None = None,
    ) -> tuple[Instant, Heartbeat | None]:
        """A new requested instant, unique even against writers starting at the same moment,
        and its heartbeat, which beats from before the instant exists: no writer ever sees
        the instant pending without a heartbeat and takes it for failed. `instant_time`: the
        time it must have (a metadata table service's, named after a delta commit), tried
        once."""
        for _attempt in range(1 if instant_time else 50):
            when = instant_time or new_instant_time(after=meta_client.timeline().last_timestamp())
            instant = Instant(when, action, State.REQUESTED)
            beat = Heartbeat(self.storage, when, self.heartbeat_interval_seconds)
            if not beat.claim():
                continue  # another writer took this millisecond
            try:
                return meta_client.save_instant(instant, content), beat
            except CommitError:
                beat.stop()
        raise CommitError(f"could not start a new {action.value} on table '{meta_client.name}'")

    def take_over(self, instant: str) -> Heartbeat:
        """Beat for an abandoned instant this writer is about to run again, so that no other
        writer runs it at the same time; call it under `exclusive()`."""
        return Heartbeat(self.storage, instant, self.heartbeat_interval_seconds).start()

    def check_lock(self) -> None:
        """Inside `exclusive()`, just before committing: raise LockLostError if the table lock
        was lost meanwhile (it could not be renewed, or its lease ran out)."""
        if self.lock is not None:
            self.lock.check()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold while deciding an instant failed and undoing or re-running it, and while
        committing: optimistic concurrency takes the table lock (a single writer has none)."""
        if self.lock is None:
            yield
            return
        self.lock.acquire()
        try:
            yield
        finally:
            self.lock.release()


def _keeps_metadata_table(storage: FileIO, config: WriteConfig) -> bool:
    """`hoodie.metadata.enable` for the table at `storage`: as set, else by its version and
    whether it has one (`WriteConfig.keeps_metadata_table`)."""
    if config.metadata_table is not None:
        return config.metadata_table
    try:
        properties = HoodieTableMetaClient.load(storage).properties
    except TableNotFoundError:
        return False
    return config.keeps_metadata_table(properties.table_version, properties.extra)

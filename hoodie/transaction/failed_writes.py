"""Which pending instants have failed: Hudi's failed-writes cleaning policy, in one place.

A pending write (a requested or inflight commit, delta commit or replace commit) or a pending
compaction is either still being worked on or abandoned by a writer that failed, and only an
abandoned one may be rolled back or run again. Every action that does either (writes,
compaction, clean, rollback, restore) asks this policy, built from the table's write config:
- single writer (Hudi's EAGER policy): no other process writes, so whatever is pending when
  an action starts was left by a crash and has failed;
- optimistic concurrency control (Hudi's LAZY policy): other writers' instants are pending
  while they work. Each writer keeps a heartbeat for its instant (`heartbeat.py`), created
  before the instant itself, and an instant has failed only once its heartbeat is older than
  `hoodie.client.heartbeat.interval_in_ms x (hoodie.client.heartbeat.tolerable.misses + 1)`
  or missing. Taking over a failed instant happens under the table lock, which writers also
  hold to complete: an instant is never completed and rolled back at once.

Under either policy an instant whose heartbeat is live is never failed: a single-writer action
run by mistake beside concurrent writers (or without their config) cannot undo their work.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..config import WriteConfig
from ..exceptions import CommitError, TimelineError
from ..meta_client import HoodieTableMetaClient
from ..storage import Storage
from ..timeline import WRITE_ACTIONS, Action, Instant, State, Timeline, new_instant_time
from .heartbeat import Heartbeat, is_expired
from .lock import LockProvider, table_lock

OPTIMISTIC = "optimistic_concurrency_control"


@dataclass(frozen=True)
class FailedWritesPolicy:
    storage: Storage
    lazy: bool = False
    heartbeat_interval_seconds: float = 60.0
    tolerable_misses: int = 2
    lock: LockProvider | None = None  # LAZY: the table lock

    @classmethod
    def of(
        cls, storage: Storage, config: WriteConfig | None, lock_provider: LockProvider | None = None
    ) -> FailedWritesPolicy:
        """The policy of a table written with `config` (None: the defaults, a single writer)."""
        if config is None:
            return cls(storage)
        lazy = config.concurrency_mode == OPTIMISTIC
        return cls(
            storage,
            lazy=lazy,
            heartbeat_interval_seconds=config.heartbeat_interval_ms / 1000,
            tolerable_misses=config.heartbeat_tolerable_misses,
            lock=table_lock(storage, config, lock_provider) if lazy else None,
        )

    @property
    def name(self) -> str:
        return "LAZY" if self.lazy else "EAGER"

    def has_failed(self, instant: str) -> bool:
        """Is the pending instant abandoned? Only if no heartbeat for it is live."""
        return is_expired(
            self.storage, instant, self.heartbeat_interval_seconds, self.tolerable_misses
        )

    def in_progress(self, timeline: Timeline) -> list[Instant]:
        """Pending writes and compactions that have not failed: a writer is working on them."""
        return [
            i
            for i in timeline.pending
            if (i.action in WRITE_ACTIONS or i.action is Action.COMPACTION)
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
        self, meta_client: HoodieTableMetaClient, action: Action, content: bytes = b""
    ) -> tuple[Instant, Heartbeat | None]:
        """A new requested instant, unique even against writers starting at the same moment,
        and (LAZY) its heartbeat, which beats from before the instant exists: no writer ever
        sees the instant pending without a heartbeat and takes it for failed."""
        for _attempt in range(50):
            when = new_instant_time(after=meta_client.timeline().last_timestamp())
            instant = Instant(when, action, State.REQUESTED)
            beat = None
            if self.lazy:
                beat = Heartbeat(self.storage, when, self.heartbeat_interval_seconds)
                if not beat.claim():
                    continue  # another writer took this millisecond
            try:
                return meta_client.save_instant(instant, content), beat
            except CommitError:
                if beat is not None:
                    beat.stop()
        raise CommitError(f"could not start a new {action.value} on table '{meta_client.name}'")

    def take_over(self, instant: str) -> Heartbeat | None:
        """LAZY: beat for an abandoned instant this writer is about to run again, so that no
        other writer runs it at the same time; call it under `exclusive()`."""
        if not self.lazy:
            return None
        return Heartbeat(self.storage, instant, self.heartbeat_interval_seconds).start()

    def check_lock(self) -> None:
        """Inside `exclusive()`, just before committing: raise LockLostError if the table lock
        was lost meanwhile (it could not be renewed, or its lease ran out)."""
        if self.lock is not None:
            self.lock.check()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold while deciding an instant failed and undoing or re-running it: LAZY takes the
        table lock (a single writer has no one to exclude)."""
        if self.lock is None:
            yield
            return
        self.lock.acquire()
        try:
            yield
        finally:
            self.lock.release()

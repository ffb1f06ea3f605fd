"""The timeline: every action on the table as an instant that moves through states in `.hoodie/`.

Timeline layout 1 keeps one file per (instant, state); the newest state of an instant is its
state. A completed compaction is an instant whose final file is `<t>.commit`, so the layout
folds `compaction` into `commit` (and `logcompaction` into `deltacommit`) once complete.
Readers trust completed instants only: that is what makes a crashed write invisible.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import cached_property

from .storage import Storage

METAFOLDER = ".hoodie"
INSTANT_FORMAT = "%Y%m%d%H%M%S"  # plus three digits of milliseconds


class State(enum.IntEnum):
    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


class Action(str, enum.Enum):
    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    INDEXING = "indexing"

    def __str__(self) -> str:  # pragma: no cover - cosmetic
        return self.value

    @property
    def completes_as(self) -> Action:
        """The action a completed instant of this action shows (compaction -> commit)."""
        return _COMPLETES_AS.get(self, self)


# Actions whose completed instants change the data a snapshot reads.
WRITE_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})
# Once complete, these actions show up under another action's name.
_COMPLETES_AS = {Action.COMPACTION: Action.COMMIT, Action.LOG_COMPACTION: Action.DELTA_COMMIT}


@dataclass(frozen=True, order=True)
class Instant:
    """One point on the timeline: `yyyyMMddHHmmssSSS`, an action and the state it reached."""

    timestamp: str
    action: Action
    state: State

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def file_name(self) -> str:
        """The meta file recording this instant in this state (timeline layout 1)."""
        action = self.action
        if self.state is State.COMPLETED:
            return f"{self.timestamp}.{action.completes_as.value}"
        if action is Action.COMMIT:
            suffix = "commit.requested" if self.state is State.REQUESTED else "inflight"
            return f"{self.timestamp}.{suffix}"
        state = "requested" if self.state is State.REQUESTED else "inflight"
        return f"{self.timestamp}.{action.value}.{state}"

    def with_state(self, state: State) -> Instant:
        return Instant(self.timestamp, self.action, state)

    @classmethod
    def parse_file_name(cls, name: str) -> Instant | None:
        """The instant a `.hoodie/` file records, or None for files that are not instants."""
        timestamp, _, rest = name.partition(".")
        if not timestamp.isdigit() or not rest:
            return None
        if rest == "inflight":
            return cls(timestamp, Action.COMMIT, State.INFLIGHT)
        if rest == "commit.requested":
            return cls(timestamp, Action.COMMIT, State.REQUESTED)
        action_name, _, state_name = rest.partition(".")
        try:
            action = Action(action_name)
        except ValueError:
            return None
        state = {"": State.COMPLETED, "requested": State.REQUESTED, "inflight": State.INFLIGHT}
        if state_name not in state:
            return None
        return cls(timestamp, action, state[state_name])


class Timeline:
    """An immutable, ordered view of the instants in `.hoodie/` when it was loaded."""

    def __init__(self, instants: list[Instant]):
        self.instants: tuple[Instant, ...] = tuple(sorted(instants))

    @classmethod
    def load(cls, storage: Storage) -> Timeline:
        # One entry per (time, action): a savepoint shares its commit's time. A completed
        # compaction is `<t>.commit`, so its `.compaction.*` files are older states of it.
        latest: dict[tuple[str, Action], Instant] = {}
        for info in storage.list_files(METAFOLDER):
            instant = Instant.parse_file_name(info.name)
            if instant is None:
                continue
            key = (instant.timestamp, instant.action.completes_as)
            seen = latest.get(key)
            if seen is None or instant.state > seen.state:
                latest[key] = instant
            elif instant.state == seen.state and instant.action in _COMPLETES_AS:
                latest[key] = instant
        return cls(list(latest.values()))

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def filter(self, predicate: Callable[[Instant], bool]) -> Timeline:
        return Timeline([i for i in self.instants if predicate(i)])

    @cached_property
    def completed(self) -> Timeline:
        return self.filter(lambda i: i.is_completed)

    @cached_property
    def pending(self) -> Timeline:
        return self.filter(lambda i: not i.is_completed)

    @cached_property
    def write_timeline(self) -> Timeline:
        """Commits, delta commits and replace commits: the instants that carry data."""
        return self.filter(lambda i: i.action in WRITE_ACTIONS)

    def latest(self) -> Instant | None:
        return self.instants[-1] if self.instants else None

    def last_timestamp(self) -> str | None:
        return self.instants[-1].timestamp if self.instants else None

    def timestamps(self) -> list[str]:
        return [i.timestamp for i in self.instants]

    def savepoint_times(self) -> list[str]:
        """Times of the savepoints here, oldest first (a savepoint shares its commit's time)."""
        return [i.timestamp for i in self.instants if i.action is Action.SAVEPOINT]

    def before_or_at(self, timestamp: str) -> Timeline:
        return self.filter(lambda i: i.timestamp <= timestamp)


_MAX_CLOCK_WAIT = timedelta(seconds=2)
_clock_lock = threading.Lock()
_last_issued = ""


def new_instant_time(after: str | None = None) -> str:
    """A fresh UTC instant time, strictly later than `after` and than any issued in-process.

    Hudi instant times are milliseconds; two writes in one millisecond must still order, so we
    wait for the clock to pass the last one rather than invent a time in the future.
    """
    global _last_issued
    with _clock_lock:
        floor = max(after or "", _last_issued)
        if floor and instant_to_datetime(floor) > datetime.now(timezone.utc) + _MAX_CLOCK_WAIT:
            # The table's clock runs ahead of ours (Hudi writes local time by default): order
            # after its last instant instead of waiting hours for our clock to catch up.
            later = instant_to_datetime(floor) + timedelta(milliseconds=1)
            _last_issued = later.strftime(INSTANT_FORMAT) + f"{later.microsecond // 1000:03d}"
            return _last_issued
        while True:
            now = datetime.now(timezone.utc)
            stamp = now.strftime(INSTANT_FORMAT) + f"{now.microsecond // 1000:03d}"
            if stamp > floor:
                _last_issued = stamp
                return stamp
            time.sleep(0.001)


def instant_to_datetime(timestamp: str) -> datetime:
    base = datetime.strptime(timestamp[:14], INSTANT_FORMAT).replace(tzinfo=timezone.utc)
    millis = int(timestamp[14:17] or 0)
    return base.replace(microsecond=millis * 1000)

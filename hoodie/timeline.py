"""The timeline: every action on the table as an instant that moves through states in `.hoodie/`.

An instant is a time (when it was requested), an action and the state it reached; a completed
instant also knows when it completed. Readers trust completed instants only: that is what makes
a crashed write invisible. Two layouts store the timeline (`TimelineLayout`):

- layout 1 (table version 6, Hudi 0.x): one file per (instant, state) directly in `.hoodie/`;
  a completed instant is `<t>.<action>`, and its completion time is not recorded;
- layout 2 (table versions 8 and 9, Hudi 1.x): the same files in `.hoodie/timeline/`, a
  completed instant named `<t>_<completion time>.<action>`. Hudi 1.x orders what writers did
  by completion time (which log files make up a file slice, what an incremental query
  returns), so the completion time is part of the instant's name.

In both, a completed compaction shows as `commit` (and a log compaction as `deltacommit`).
"""

from __future__ import annotations

import enum
import posixpath
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property

from .storage import FileInfo, FileIO

METAFOLDER = ".hoodie"
TIMELINE_FOLDER_V2 = posixpath.join(METAFOLDER, "timeline")
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
    CLUSTERING = "clustering"  # layout 2's name for a pending clustering replace commit

    def __str__(self) -> str:  # pragma: no cover - cosmetic
        return self.value

    @property
    def completes_as(self) -> Action:
        """The action a completed instant of this action shows (compaction -> commit)."""
        return _COMPLETES_AS.get(self, self)


# Actions whose completed instants change the data a snapshot reads.
WRITE_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})
# Once complete, these actions show up under another action's name.
_COMPLETES_AS = {
    Action.COMPACTION: Action.COMMIT,
    Action.LOG_COMPACTION: Action.DELTA_COMMIT,
    Action.CLUSTERING: Action.REPLACE_COMMIT,
}


@dataclass(frozen=True, order=True)
class Instant:
    """One point on the timeline: `yyyyMMddHHmmssSSS`, an action and the state it reached.

    `completion_time` is known for completed instants of a layout 2 timeline only; it takes no
    part in equality or order (an instant is its requested time and action).
    """

    timestamp: str
    action: Action
    state: State
    completion_time: str | None = field(default=None, compare=False)

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    def with_state(self, state: State, completion_time: str | None = None) -> Instant:
        return Instant(self.timestamp, self.action, state, completion_time)


_PENDING_STATES = {"requested": State.REQUESTED, "inflight": State.INFLIGHT}


@dataclass(frozen=True)
class TimelineLayout:
    """Where a table's instant files live and how they are named (see the module docstring)."""

    version: int
    folder: str

    def file_name(self, instant: Instant) -> str:
        """The file recording `instant` in its state."""
        action = instant.action
        if instant.state is State.COMPLETED:
            if self.version == 1:
                return f"{instant.timestamp}.{action.completes_as.value}"
            if instant.completion_time is None:
                raise ValueError(
                    f"a completed layout 2 instant needs its completion time: {instant}"
                )
            return f"{instant.timestamp}_{instant.completion_time}.{action.completes_as.value}"
        if action is Action.COMMIT:
            suffix = "commit.requested" if instant.state is State.REQUESTED else "inflight"
            return f"{instant.timestamp}.{suffix}"
        state = "requested" if instant.state is State.REQUESTED else "inflight"
        return f"{instant.timestamp}.{action.value}.{state}"

    def path(self, instant: Instant) -> str:
        """The instant's file, relative to the table's base path."""
        return posixpath.join(self.folder, self.file_name(instant))

    def instant_files(self, storage: FileIO) -> list[tuple[Instant, FileInfo]]:
        """Every instant file in this layout's folder (each state its own), with its listing."""
        found = []
        for info in storage.list_files(self.folder):
            instant = self.parse_file_name(info.name)
            if instant is not None:
                found.append((instant, info))
        return found

    def parse_file_name(self, name: str) -> Instant | None:
        """The instant a timeline file records, or None for files that are not instants.

        In layout 2 a completed instant without a completion time in its name is one that
        Hudi's own upgrade left behind (a "legacy" instant): Apache Hudi reads it as completed
        (with its file's modification time as completion time); so do we, with none.
        """
        stem, _, rest = name.partition(".")
        timestamp, _, completion = stem.partition("_")
        if not timestamp.isdigit() or not rest or (completion and not completion.isdigit()):
            return None
        if completion:  # `<t>_<completion>.<action>`: layout 2's completed instants only
            action = _action(rest) if self.version >= 2 else None
            return Instant(timestamp, action, State.COMPLETED, completion) if action else None
        if rest == "inflight":
            return Instant(timestamp, Action.COMMIT, State.INFLIGHT)
        if rest == "commit.requested":
            return Instant(timestamp, Action.COMMIT, State.REQUESTED)
        action_name, _, state_name = rest.partition(".")
        action = _action(action_name)
        if action is None:
            return None
        if not state_name:
            return Instant(timestamp, action, State.COMPLETED)
        if state_name not in _PENDING_STATES:
            return None
        return Instant(timestamp, action, _PENDING_STATES[state_name])


def _action(name: str) -> Action | None:
    try:
        return Action(name)
    except ValueError:
        return None


LAYOUT_V1 = TimelineLayout(1, METAFOLDER)
LAYOUT_V2 = TimelineLayout(2, TIMELINE_FOLDER_V2)


def layout_of(version: int) -> TimelineLayout:
    """The timeline layout of `hoodie.timeline.layout.version`."""
    layouts = {1: LAYOUT_V1, 2: LAYOUT_V2}
    if version not in layouts:
        raise ValueError(f"unknown timeline layout version {version}")
    return layouts[version]


class Timeline:
    """An immutable, ordered view of a table's instants when they were loaded."""

    def __init__(self, instants: list[Instant], layout: TimelineLayout = LAYOUT_V1):
        self.instants: tuple[Instant, ...] = tuple(sorted(instants))
        self.layout = layout

    @classmethod
    def load(cls, storage: FileIO, layout: TimelineLayout = LAYOUT_V1) -> Timeline:
        # One entry per (time, action): a savepoint shares its commit's time. A completed
        # compaction is `<t>.commit`, so its `.compaction.*` files are older states of it.
        latest: dict[tuple[str, Action], Instant] = {}
        for instant, _ in layout.instant_files(storage):
            key = (instant.timestamp, instant.action.completes_as)
            seen = latest.get(key)
            if seen is None or instant.state > seen.state:
                latest[key] = instant
            elif instant.state == seen.state and instant.action in _COMPLETES_AS:
                latest[key] = instant
        return cls(list(latest.values()), layout)

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def filter(self, predicate: Callable[[Instant], bool]) -> Timeline:
        return Timeline([i for i in self.instants if predicate(i)], self.layout)

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

    def completion_times(self) -> dict[str, str]:
        """Requested time -> completion time of the completed instants that record one.

        Savepoints are left out: a savepoint has the time of the commit it pins, and its own
        completion (when it was taken) must not stand for that commit's.
        """
        return {
            i.timestamp: i.completion_time
            for i in self.instants
            if i.is_completed and i.completion_time is not None and i.action is not Action.SAVEPOINT
        }


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
        if floor and _clock_time(floor) > datetime.now(timezone.utc) + _MAX_CLOCK_WAIT:
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


def _clock_time(timestamp: str) -> datetime:
    """The moment an instant time stands for; Apache Hudi's initialization instants, which are
    no date (`00000000000000000`, version 6's with a suffix), stand for the distant past."""
    try:
        return instant_to_datetime(timestamp)
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)


def instant_to_datetime(timestamp: str) -> datetime:
    base = datetime.strptime(timestamp[:14], INSTANT_FORMAT).replace(tzinfo=timezone.utc)
    millis = int(timestamp[14:17] or 0)
    return base.replace(microsecond=millis * 1000)

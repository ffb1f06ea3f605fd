"""Progress of writes and table services: a typed event for each step, as it happens.

A write of a few million records spends minutes in a handful of steps (tagging, writing,
committing, the services after the commit); these events say which step is running and what
the finished ones did, from what the driver already holds at that point (the batch's summary,
the index's workload profile, the write stats the tasks return): no Spark job or action runs
to count anything, and nothing runs in the tasks. A write emits about ten events; emitting one
is a function call per listener.

Who hears them:
- the standard `logging` logger `hoodie.progress`, always: a finished step at INFO, a started
  one at DEBUG, so a user of the Python API sees them with `logging.basicConfig(level=INFO)`;
- `listening(listener)`: a listener for the steps of writes the current thread (its context)
  runs until the block ends. A context variable, so that threads writing side by side (dbt's
  models) each hear their own write only;
- `add_listener` / `remove_listener`: a listener for every write of the process.

A listener that raises never fails the write: its error is logged on `hoodie.progress` (a
warning with the traceback the first time that listener fails, at DEBUG after) and the other
listeners and the write go on. A `BaseException` that is not an `Exception` (Ctrl-C, a
`SystemExit`) is not caught.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

log = logging.getLogger("hoodie.progress")

Listener = Callable[["ProgressEvent"], None]

_scoped: ContextVar[tuple[Listener, ...]] = ContextVar("hoodie_progress", default=())
_process: tuple[Listener, ...] = ()
_lock = threading.Lock()
_failed: set[int] = set()  # ids of listeners whose first failure was logged as a warning


# -- the events ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProgressEvent:
    """One step of a write or a table service of table `table` (its name)."""

    table: str

    def message(self) -> str:
        """The step as a line of a log (without the table's name)."""
        raise NotImplementedError

    @property
    def step(self) -> str | None:
        """What runs from this event on, for a live display; None: this event ends a step."""
        return None

    @property
    def notable(self) -> bool:
        """Whether a log shows it by default: a finished step that did something."""
        return False


@dataclass(frozen=True)
class WriteStarted(ProgressEvent):
    """A write's instant was started; planning it comes next."""

    operation: str  # as commits record it: UPSERT, INSERT, BULK_INSERT, ...
    instant: str

    def message(self) -> str:
        return f"{self.operation.lower()} {self.instant}: planning"

    @property
    def step(self) -> str:
        return self.message()


@dataclass(frozen=True)
class StepStarted(ProgressEvent):
    """A step of planning that reports no result of its own (a summary job, footer reads)."""

    description: str

    def message(self) -> str:
        return self.description

    @property
    def step(self) -> str:
        return self.description


@dataclass(frozen=True)
class TaggingStarted(ProgressEvent):
    """The index looks the batch's keys up in the table before the write (a job of its own)."""

    index: str  # hoodie.index.type
    records: int  # in the batch (its summary)
    partitions: int  # the batch's
    file_slices: int  # latest slices whose keys may be looked up

    def message(self) -> str:
        return (
            f"tagging {_count(self.records, 'record')} of {_count(self.partitions, 'partition')} "
            f"against {_count(self.file_slices, 'file slice')} ({self.index} index)"
        )

    @property
    def step(self) -> str:
        return self.message()


@dataclass(frozen=True)
class Tagged(ProgressEvent):
    """The index tagged the batch: how many records found a file group, how many are new."""

    index: str
    records: int
    located: int  # records whose key a file group holds (updates, deletes)
    new: int  # records no file group holds (inserts)
    file_groups: int  # file groups holding the located keys
    file_slices: int
    seconds: float

    def message(self) -> str:
        return (
            f"tagged {_count(self.records, 'record')} against "
            f"{_count(self.file_slices, 'file slice')} ({self.index} index) in "
            f"{_seconds(self.seconds)}: {_number(self.located)} in "
            f"{_count(self.file_groups, 'file group')}, {_number(self.new)} new"
        )

    @property
    def notable(self) -> bool:
        return True


@dataclass(frozen=True)
class WritingStarted(ProgressEvent):
    """The write's Spark job starts: placed file groups, or tasks that choose them."""

    instant: str
    file_groups: int | None  # placed beforehand (None: the tasks choose them)
    records: int | None  # known on the driver (None: only the tasks count them)
    how: str = ""  # how the tasks find their file groups, where they do

    def message(self) -> str:
        text = "writing"
        if self.records is not None:
            text += f" {_count(self.records, 'record')}"
        if self.file_groups is not None:
            text += f" into {_count(self.file_groups, 'file group')}"
        return f"{text} {self.how}".rstrip()

    @property
    def step(self) -> str:
        return self.message()


@dataclass(frozen=True)
class Written(ProgressEvent):
    """The write tasks are done: what their write stats say."""

    instant: str
    file_groups: int
    new_file_groups: int
    files: int
    records: int  # records in the files written (a copy-on-write rewrite's kept ones too)
    inserts: int
    updates: int
    deletes: int
    bytes: int
    seconds: float

    def message(self) -> str:
        changes = [_count(self.inserts, "insert"), _count(self.updates, "update")]
        if self.deletes:
            changes.append(_count(self.deletes, "delete"))
        groups = _count(self.file_groups, "file group")
        if self.new_file_groups == self.file_groups:
            groups = _count(self.file_groups, "new file group")
        elif self.new_file_groups:
            groups += f" ({_number(self.new_file_groups)} new)"
        return (
            f"wrote {groups}: {', '.join(changes)}; "
            f"{_count(self.records, 'record')} in {_count(self.files, 'file')}, "
            f"{_bytes(self.bytes)}, in {_seconds(self.seconds)}"
        )

    @property
    def notable(self) -> bool:
        return True


@dataclass(frozen=True)
class Committing(ProgressEvent):
    """The files are written: the instant is being completed (conflict checks, the metadata
    table's update, the timeline)."""

    instant: str
    action: str

    def message(self) -> str:
        return f"committing {self.action} {self.instant}"

    @property
    def step(self) -> str:
        return self.message()


@dataclass(frozen=True)
class Committed(ProgressEvent):
    """The instant completed: readers see the write from now on."""

    instant: str
    action: str
    operation: str
    seconds: float  # the commit's own
    total_seconds: float  # the write's, from its first check

    def message(self) -> str:
        return (
            f"committed {self.operation.lower()} {self.instant} ({self.action}) in "
            f"{_seconds(self.seconds)}; {_seconds(self.total_seconds)} in all"
        )

    @property
    def notable(self) -> bool:
        return True


@dataclass(frozen=True)
class ServiceStarted(ProgressEvent):
    """A table service starts (after a write, or on demand)."""

    service: str  # compaction, clustering, clean, archival, metadata table, rollback

    def message(self) -> str:
        return f"{self.service}: running"

    @property
    def step(self) -> str:
        return self.service


@dataclass(frozen=True)
class ServiceFinished(ProgressEvent):
    """A table service ended: what it did (None: it found nothing to do), or how it failed."""

    service: str
    outcome: str | None
    seconds: float
    failed: bool = False

    def message(self) -> str:
        if self.failed:
            return f"{self.service} failed after {_seconds(self.seconds)}: {self.outcome}"
        if self.outcome is None:
            return f"{self.service}: nothing to do ({_seconds(self.seconds)})"
        return f"{self.service}: {self.outcome} in {_seconds(self.seconds)}"

    @property
    def notable(self) -> bool:
        return self.failed or self.outcome is not None


# -- listeners ---------------------------------------------------------------------------------
@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """`listener` hears the steps of the writes and services this context runs, until the
    block ends (other threads' writes are not heard)."""
    token = _scoped.set((*_scoped.get(), listener))
    try:
        yield
    finally:
        _scoped.reset(token)


def add_listener(listener: Listener) -> None:
    """`listener` hears the steps of every write of the process (until removed)."""
    global _process
    with _lock:
        _process = (*_process, listener)


def remove_listener(listener: Listener) -> None:
    global _process
    with _lock:
        _process = tuple(known for known in _process if known != listener)


def emit(event: ProgressEvent) -> None:
    """Tell the log and every listener of this context about `event`; a listener's error is
    logged, never raised (see the module's docstring)."""
    level = logging.INFO if event.notable else logging.DEBUG
    if log.isEnabledFor(level):
        log.log(level, "%s: %s", event.table, event.message())
    for listener in (*_process, *_scoped.get()):
        try:
            listener(event)
        except Exception:
            _listener_failed(listener, event)


def _listener_failed(listener: Listener, event: ProgressEvent) -> None:
    first = id(listener) not in _failed
    _failed.add(id(listener))
    log.log(
        logging.WARNING if first else logging.DEBUG,
        "progress listener %r failed on %s of table '%s' (the write goes on)",
        listener,
        type(event).__name__,
        event.table,
        exc_info=True,
    )


# -- numbers as people read them ---------------------------------------------------------------
def _number(n: int) -> str:
    return f"{n:,}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f} s"


def _bytes(n: int) -> str:
    """Decimal units, as `ls --si` and object stores' consoles show them."""
    size, unit = float(n), "B"
    for bigger in ("kB", "MB", "GB", "TB"):
        if size < 1000:
            break
        size, unit = size / 1000, bigger
    return f"{size:.0f} {unit}" if unit == "B" or size >= 100 else f"{size:.1f} {unit}"

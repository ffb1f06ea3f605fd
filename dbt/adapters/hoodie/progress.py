"""What a dbt run shows while a lake model writes, and while the Spark session starts.

The core tells each step of a write and of its table services as it happens
(`hoodie.progress`); here they become dbt's log lines and a live line in the terminal:

- **Log lines**: each finished step that did something is an info line of dbt's log (the
  console and `logs/dbt.log`), prefixed with the model's name, since threads run models side
  by side: `orders: wrote 40 file groups: 800,000 inserts, ...`; steps that start, and
  services that found nothing to do, are debug lines (`logs/dbt.log`, the console with
  `--debug`). They are fired in the model's thread, so dbt's JSON log carries the model's
  node too.
- **The live line**: one line at the bottom of the terminal, redrawn twice a second: per
  running model its current step, how long it has run and, while a Spark job runs, its tasks
  (classic Spark: the status tracker, reached by the model's job group; Spark Connect: the
  session's progress handler). Spark's own progress bar stays off. It is written to stderr
  only when stderr is a terminal, `CI` is unset, `TERM` is not `dumb`, the console is not
  dbt's JSON or `--quiet`, and neither the profile (`live_progress: false`) nor the
  environment (`DBT_HOODIE_LIVE_PROGRESS=false`) turns it off; it is cleared before dbt prints
  a line of its own, and not styled under `NO_COLOR` or `--no-use-colors`.
- **Start-up**: before the first model the session is built (`environment.spark_session`):
  each part says what it did and how long it took (`startup_step`).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TextIO

from dbt.adapters.events.logging import AdapterLogger

from hoodie import progress as core

logger = AdapterLogger("Hoodie")

ENV_SWITCH = "DBT_HOODIE_LIVE_PROGRESS"
_OFF = {"0", "false", "no", "off"}
_DBT_CONSOLE_LOGGER = "stdout_log"  # the Python logger of dbt's console lines
_STARTUP = 0  # the live line's row of the session's start-up (models: their thread's id)
WARMING = 1  # the row of the Python workers' start, beside the rest of the start-up
REGISTERING = 2  # the row of the data source's registration, beside the metastore's opening


@dataclass(frozen=True)
class TaskCount:
    """The tasks of the Spark stages a model's job runs now (`stages`: their ids)."""

    done: int
    total: int
    running: int
    stages: tuple[int, ...] = ()


TaskSource = Callable[[], "TaskCount | None"]


@dataclass
class _Row:
    label: str
    since: float  # when its current step began
    step: str | None = None
    tasks: TaskSource | None = None
    last: TaskCount | None = None
    # The Spark stages seen running since the step began, in order: the live line numbers
    # them ("stage 2"). Their total is not known beforehand: adaptive execution submits a
    # query's stages as jobs one after another, and a job lists stages it will skip.
    stages: list[int] = field(default_factory=list)

    def saw(self, count: TaskCount | None) -> None:
        self.last = count
        for stage in count.stages if count is not None else ():
            if stage not in self.stages:
                self.stages.append(stage)

    def stage_label(self) -> str:
        """The running stage's place in the step: "stage 2", "stages 2-3" for two at once,
        "" where none is known."""
        count = self.last
        if count is None or not count.stages:
            return ""
        known = [self.stages.index(s) + 1 for s in count.stages if s in self.stages]
        if not known:
            return ""
        low, high = min(known), max(known)
        return f"stage {low}" if low == high else f"stages {low}-{high}"


# -- when ----------------------------------------------------------------------------------------
def live_line_allowed(
    profile_setting: bool, stream: TextIO, environ: dict[str, str] | None = None
) -> bool:
    """Whether a live line may be drawn on `stream` (see the module's docstring)."""
    env = os.environ if environ is None else environ
    if not profile_setting or env.get(ENV_SWITCH, "").strip().lower() in _OFF:
        return False
    if env.get("CI", "").strip().lower() not in ("", "0", "false"):
        return False
    if env.get("TERM") == "dumb":
        return False
    flags = _dbt_flags()
    if getattr(flags, "QUIET", False) or str(getattr(flags, "LOG_FORMAT", "")) == "json":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream
        return False


def _styled(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if "NO_COLOR" in env:
        return False
    return getattr(_dbt_flags(), "USE_COLORS", True) is not False


def _dbt_flags() -> Any:
    try:
        from dbt.flags import get_flags

        return get_flags()
    except Exception:  # outside a dbt invocation
        return None


# -- the live line -------------------------------------------------------------------------------
class LiveLine:
    """One line redrawn in place on a terminal stream: a segment per running model (or the
    start-up), each its label, the time its step has run, its Spark tasks and its step."""

    SPINNER = "-\\|/"

    def __init__(
        self,
        stream: TextIO,
        *,
        styled: bool = True,
        interval: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        width: Callable[[], int] | None = None,
    ):
        self.stream = stream
        self.styled = styled
        self.interval = interval
        self.clock = clock
        self._width = width or self._terminal_width
        self._rows: dict[int, _Row] = {}
        self._lock = threading.RLock()
        self._shown = False
        self._hold_until = 0.0
        self._frame = 0
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    # rows
    def begin(self, key: int, label: str, tasks: TaskSource | None = None) -> None:
        with self._lock:
            self._rows[key] = _Row(label, self.clock(), tasks=tasks)
        self._start()

    def set_step(self, key: int, step: str | None) -> None:
        with self._lock:
            row = self._rows.get(key)
            if row is not None and step != row.step:
                row.step, row.since = step, self.clock()
                row.stages.clear()

    def end(self, key: int) -> None:
        with self._lock:
            self._rows.pop(key, None)
            if not self._rows:
                self.clear()

    # drawing
    def render(self, styled: bool = False) -> str:
        """The line as it is now, cut to the terminal's width (with `styled`, the models'
        names in bold; no other control characters)."""
        with self._lock:
            rows = list(self._rows.values())
        if not rows:
            return ""
        width = max(20, self._width() - 1)
        spinner = self.SPINNER[self._frame % len(self.SPINNER)]
        share = max(12, (width - 2 - 3 * (len(rows) - 1)) // len(rows))
        segments = []
        for row in rows:
            text = _cut(self._segment(row), share)
            if styled and text.startswith(row.label):
                text = f"\x1b[1m{row.label}\x1b[22m{text[len(row.label) :]}"
            segments.append(text)
        return f"{spinner} " + " | ".join(segments)

    def _segment(self, row: _Row) -> str:
        parts = [row.label, _clock(self.clock() - row.since)]
        count = row.last
        if count is not None and count.total:
            tasks = f"{_bar(count.done, count.total)} {count.done:,}/{count.total:,} tasks"
            if count.running:
                tasks += f" ({count.running:,} running)"
            stage = row.stage_label()
            parts.append(f"{stage} {tasks}" if stage else tasks)
        if row.step:
            parts.append(row.step)
        return "  ".join(parts)

    def draw(self) -> None:
        with self._lock:
            if self.clock() < self._hold_until:
                return
            text = self.render(self.styled)
            if not text:
                return
            self._write("\r" + text + "\x1b[K")
            self._shown = True

    def clear(self, hold: float = 0.0) -> None:
        """Erase the line (before someone else prints); not redrawn for `hold` seconds."""
        with self._lock:
            self._hold_until = max(self._hold_until, self.clock() + hold)
            if self._shown:
                self._write("\r\x1b[K")
                self._shown = False

    def tick(self) -> None:
        """Poll the rows' Spark tasks and redraw (the ticker's work, each `interval`)."""
        with self._lock:
            rows = list(self._rows.values())
        for row in rows:
            if row.tasks is not None:
                try:
                    count = row.tasks()
                except Exception:  # a session going away: no task counts, the line goes on
                    count = None
                with self._lock:
                    row.saw(count)
        self.draw()
        self._frame += 1

    def stop(self) -> None:
        self._wake.set()
        self.clear()

    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._wake.clear()
                self._thread = threading.Thread(target=self._run, name="hoodie-live-line",
                                                 daemon=True)  # fmt: skip
                self._thread.start()

    def _run(self) -> None:
        while not self._wake.wait(self.interval):
            with self._lock:
                idle = not self._rows
            if idle:
                continue
            try:
                self.tick()
            except Exception:  # the terminal went away: no more live line
                return

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def _terminal_width(self) -> int:
        """The terminal's columns (a pseudo-terminal that reports none: $COLUMNS, or 80)."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 0
        if columns > 0:
            return columns
        try:
            return int(os.environ.get("COLUMNS", "")) or 80
        except ValueError:
            return 80


class _ClearBeforeDbtPrints(logging.Filter):
    """On dbt's console logger: the live line is erased before each of dbt's lines."""

    def __init__(self, line: LiveLine):
        super().__init__()
        self.line = line

    def filter(self, record: logging.LogRecord) -> bool:
        self.line.clear(hold=0.2)
        return True


_live: LiveLine | None = None
_live_lock = threading.Lock()


def configure(profile_setting: bool, stream: TextIO | None = None) -> LiveLine | None:
    """Set up the process's live line from the profile's `live_progress` (once; later calls
    return the first one's), or None where none is allowed."""
    global _live
    stream = stream or sys.stderr
    with _live_lock:
        if _live is None and live_line_allowed(profile_setting, stream):
            _live = LiveLine(stream, styled=_styled())
            console = logging.getLogger(_DBT_CONSOLE_LOGGER)
            if not any(isinstance(f, _ClearBeforeDbtPrints) for f in console.filters):
                console.addFilter(_ClearBeforeDbtPrints(_live))
            atexit.register(_live.stop)
        return _live


def live_line() -> LiveLine | None:
    return _live


# -- a model's write -----------------------------------------------------------------------------
class ModelListener:
    """Hears the core's steps of one model's write (in the model's thread): a log line each,
    and the live line's step."""

    def __init__(self, model: str, line: LiveLine | None, key: int):
        self.model = model
        self.line = line
        self.key = key

    def __call__(self, event: core.ProgressEvent) -> None:
        text = f"{self.model}: {event.message()}"
        if event.notable:
            logger.info(text)
        else:
            logger.debug(text)
        if self.line is not None:
            self.line.set_step(self.key, event.step)


# The listener of the model whose hook this context runs (`model_step` tells its steps).
_model: ContextVar[ModelListener | None] = ContextVar("hoodie_model", default=None)


@contextmanager
def model_progress(model: str, spark: Any) -> Iterator[None]:
    """The steps of the writes this block runs for `model`: logged, and on the live line
    with the Spark tasks of its jobs."""
    line = _live
    key = threading.get_ident()
    listener = ModelListener(model, line, key)
    token = _model.set(listener)
    try:
        if line is None:
            with core.listening(listener):
                yield
            return
        with _tasks_of_this_thread(spark, key) as tasks, core.listening(listener):
            line.begin(key, model, tasks)
            try:
                yield
            finally:
                line.end(key)
    finally:
        _model.reset(token)


@dataclass
class Step:
    """A step `model_step` tells; the block may say how it ended (`outcome`)."""

    description: str
    outcome: str = "done"


@contextmanager
def model_step(description: str) -> Iterator[Step]:
    """A step of the adapter's own in the current model's hook, outside the core's write
    (registering its table in the catalog after the commit): a debug line as it starts, the
    live line's step while it runs, and a debug line with its outcome and time when it ends
    (`orders: registering analytics.orders in the catalog: created in 1.9 s`). Outside a
    model's hook the block runs untold."""
    step = Step(description)
    listener = _model.get()
    if listener is None:
        yield step
        return
    listener(core.StepStarted(listener.model, description))
    started = time.monotonic()
    try:
        yield step
    finally:
        if listener.line is not None:
            listener.line.set_step(listener.key, None)
    logger.debug(f"{listener.model}: {description}: {step.outcome} in "
                 f"{time.monotonic() - started:.1f} s")  # fmt: skip


def reports_progress(name_of: Callable[..., str]) -> Callable[[Callable[..., Any]], Any]:
    """A decorator of the adapter's hooks that write a lake table: the call runs in
    `model_progress` of the model `name_of(*args, **kwargs)` names, on the adapter's session."""

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def reporting(adapter: Any, *args: Any, **kwargs: Any) -> Any:
            with model_progress(name_of(*args, **kwargs), adapter._spark()):
                return method(adapter, *args, **kwargs)

        return reporting

    return decorate


def node_name(*args: Any, **kwargs: Any) -> str:
    """The model's name, for `reports_progress` of a hook taking dbt's node first (`model`)."""
    model = kwargs.get("model", args[0] if args else None)
    return str(model.get("name") if hasattr(model, "get") else model)


def named(*args: Any, **kwargs: Any) -> str:
    """The model's name, for a hook taking (relation, model_name, ...)."""
    return str(kwargs.get("model_name", args[1] if len(args) > 1 else None))


@contextmanager
def _tasks_of_this_thread(spark: Any, key: int) -> Iterator[TaskSource | None]:
    """Where the live line finds the tasks of the jobs this thread starts: classic Spark's
    status tracker, by a job group of the thread's own (set for the block, the previous one
    restored after); Spark Connect's progress handler, by the thread that ran the query."""
    from .environment import spark_context_of

    context = spark_context_of(spark)
    if context is not None:
        group = f"dbt-hoodie-{key}-{time.monotonic_ns()}"
        previous = context.getLocalProperty("spark.jobGroup.id")
        context.setLocalProperty("spark.jobGroup.id", group)
        try:
            yield lambda: _tracked_tasks(context, group)
        finally:
            context.setLocalProperty("spark.jobGroup.id", previous)  # type: ignore[arg-type]
        return
    handler = _connect_handler(spark)
    yield None if handler is None else (lambda: handler.counts.get(key))


def _tracked_tasks(context: Any, group: str) -> TaskCount | None:
    """The tasks of the running stages of the group's running jobs (classic Spark)."""
    tracker = context.statusTracker()
    running_jobs = set(tracker.getActiveJobsIds())
    if not running_jobs:
        return None
    active_stages = set(tracker.getActiveStageIds())
    done = total = running = 0
    stages = set()
    for job_id in tracker.getJobIdsForGroup(group):
        if job_id not in running_jobs:
            continue
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job is not None else ():
            if stage_id not in active_stages:
                continue
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                done += stage.numCompletedTasks
                total += stage.numTasks
                running += stage.numActiveTasks
                stages.add(stage_id)
    return TaskCount(done, total, running, tuple(sorted(stages))) if total else None


class _ConnectTasks:
    """A Spark Connect session's progress handler: the latest counts per client thread."""

    def __init__(self) -> None:
        self.counts: dict[int, TaskCount] = {}

    def __call__(self, stages: Any = None, inflight_tasks: int = 0, operation_id: Any = None,
                 done: bool = False, **_: Any) -> None:  # fmt: skip
        key = threading.get_ident()
        running = [s for s in stages or () if not s.done]
        if done or not running:
            self.counts.pop(key, None)
            return
        total = sum(s.num_tasks for s in running)
        finished = sum(s.num_completed_tasks for s in running)
        ids = tuple(sorted(s.stage_id for s in running))
        self.counts[key] = TaskCount(finished, total, inflight_tasks, ids)


_handlers: dict[int, _ConnectTasks] = {}


def _connect_handler(spark: Any) -> _ConnectTasks | None:
    """The session's handler, registered once (None: the session takes no handlers)."""
    handler = _handlers.get(id(spark))
    if handler is None:
        register = getattr(spark, "registerProgressHandler", None)
        if register is None:
            return None
        handler = _ConnectTasks()
        try:
            register(handler)
        except Exception:  # a PySpark without progress handlers: steps only
            return None
        _handlers[id(spark)] = handler
    return handler


# -- start-up ------------------------------------------------------------------------------------
@contextmanager
def startup_step(what: str, key: int = _STARTUP) -> Iterator[None]:
    """A part of the session's start-up: on the live line while it runs, then a log line
    with its time (`hoodie: starting Spark (local[*])... 6.2 s`). A part that runs beside the
    others (in a thread of its own) has a `key` of its own: a segment of its own on the
    line."""
    line = _live
    logger.debug(f"{what}...")
    if line is not None:
        line.begin(key, "hoodie")
        line.set_step(key, what)
    started = time.monotonic()
    try:
        yield
    finally:
        if line is not None:
            line.end(key)
    logger.info(f"{what}... {time.monotonic() - started:.1f} s")


# -- text ----------------------------------------------------------------------------------------
def _clock(seconds: float) -> str:
    seconds = int(max(0.0, seconds))
    return f"{seconds}s" if seconds < 60 else f"{seconds // 60}:{seconds % 60:02d}"


def _bar(done: int, total: int, width: int = 10) -> str:
    filled = min(width, width * done // total) if total else 0
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."

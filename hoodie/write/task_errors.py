"""The core's errors raised where Spark runs the work, raised again on the driver as themselves.

A write's work runs in Spark: Python tasks (the handles) and SQL expressions (the null-key
check before a one-job write's shuffle). An error there would reach the driver as Spark's own
exception with the original only as text. So the error travels as data instead:
- a Python task that meets one of the core's errors returns it as its result row, a JSON
  object `{"hoodie_error": <class>, "message": ...}` instead of a write stat, and the driver
  raises it once the job is done (a deterministic error is also not retried by Spark);
- a SQL expression raises Spark's `USER_RAISED_EXCEPTION` whose message parameter is that
  same JSON object, which Spark hands back as a structured parameter, not as text to parse.

Any other failure of the work (a file system refusing a path, a worker that died) is Spark's
error with the worker's Python traceback and the JVM's stack in its text, kilobytes of it:
`task_failure` makes it a `TaskFailedError` whose message names the cause in one line, with
the whole text kept apart (`detail`) for a debug log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.errors import PySparkException
from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import exceptions
from ..exceptions import HoodieError, TaskFailedError

_KEY = "hoodie_error"
# What a write's Spark work may raise; any other exception is a failure of the write itself.
TASK_ERRORS: dict[str, type[HoodieError]] = {
    cls.__name__: cls
    for cls in (
        exceptions.DuplicateRecordKeyError,
        exceptions.SchemaError,
        exceptions.ColumnTypeError,
        exceptions.NullRecordKeyError,
        exceptions.PartitionPathError,
        exceptions.UnsafePathError,
        exceptions.ConcurrentWriteConflict,
        exceptions.InvalidConfigError,
        exceptions.TableIdentityError,
        exceptions.MalformedMetadataError,
        exceptions.MissingDataFileError,
        exceptions.CorruptDataFileError,
    )
}


def encode(error: HoodieError) -> str:
    """The error as a JSON payload: its class, message and fields (`HoodieError.fields`;
    a value JSON cannot hold is sent as its text)."""
    payload = {_KEY: type(error).__name__, "message": str(error), "fields": error.fields()}
    return json.dumps(payload, default=str)


def decode(text: str | None) -> HoodieError | None:
    """The error a payload carries, or None when it carries none."""
    try:
        payload = json.loads(text or "")
    except ValueError:
        return None
    if not isinstance(payload, dict) or payload.get(_KEY) not in TASK_ERRORS:
        return None
    error_class = TASK_ERRORS[payload[_KEY]]
    message = payload.get("message", "")
    fields = payload.get("fields")
    if not isinstance(fields, dict):
        return error_class(message)
    # JSON has no tuples: the fields that held them (record key fields) get them back.
    kwargs = {str(k): tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    try:
        return error_class(message, **kwargs)
    except TypeError:  # fields this class does not take: the message alone still says it
        return error_class(message)


def raise_in_sql(error_class: type[HoodieError], message: Column) -> Column:
    """A SQL expression that fails the Spark job with `error_class` and `message`."""
    payload = F.to_json(F.struct(F.lit(error_class.__name__).alias(_KEY), message.alias("message")))
    return F.raise_error(payload)


# A grouped task function of `applyInArrow`: (the group's key, its rows) -> result rows.
GroupTask = Callable[[tuple[Any, ...], pa.Table], pa.Table]


def returning_errors(task: GroupTask) -> GroupTask:
    """A grouped task function (`applyInArrow`: key, table) that returns the core's errors
    as its result row instead of raising. Its two parameters are spelled out: PySpark counts
    them to tell a keyed function from one that takes the data alone."""

    def guarded(key: tuple[Any, ...], table: pa.Table) -> pa.Table:
        try:
            return task(key, table)
        except HoodieError as error:
            return _error_row(error)

    return guarded


# A task function of `mapInArrow`: the task's batches in, its result batches out.
BatchTask = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def _error_row(error: HoodieError) -> pa.Table:
    if type(error).__name__ not in TASK_ERRORS:
        raise error
    return pa.table({"stat": pa.array([encode(error)], pa.string())})


def returning_errors_of_batches(task: BatchTask) -> BatchTask:
    """`returning_errors` for a `mapInArrow` task: the results it yielded before the error
    stand, the error is its last row."""

    def guarded(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        try:
            yield from task(batches)
        except HoodieError as error:
            yield from _error_row(error).to_batches()

    return guarded


def results_or_raise(texts: Iterable[str]) -> list[str]:
    """The tasks' result rows; the first error one of them returned is raised."""
    results = list(texts)
    for text in results:
        error = decode(text)
        if error is not None:
            raise error
    return results


def raise_task_error(error: BaseException) -> None:
    """Raise the core's error a SQL expression of the write raised, or a task function that
    cannot return it as a row (a tagging job's key reader) raised, if `error` is one."""
    if not isinstance(error, PySparkException):
        return
    if error.getCondition() == "USER_RAISED_EXCEPTION":
        found = decode((error.getMessageParameters() or {}).get("errorMessage"))
        if found is not None:
            raise found from error
    # (the last one: an error raised from another names its cause first)
    raised = next(reversed(list(_WORKER_ERROR.finditer(str(error)))), None)
    if raised is not None and raised["name"] in TASK_ERRORS:
        raise TASK_ERRORS[raised["name"]](raised["message"]) from error


# The exception line of a Python worker's traceback that raised one of the core's errors.
_WORKER_ERROR = re.compile(r"^hoodie\.exceptions\.(?P<name>\w+): (?P<message>.*)$", re.MULTILINE)


# The longest cause a message carries: a path built from a 5,000-character value is cut.
CAUSE_LIMIT = 300
_TRACEBACK = "Traceback (most recent call last):"


def failure_cause(error: BaseException) -> str:
    """One line saying why Spark work failed: the exception line of a Python worker's
    traceback (`pyarrow.lib.ArrowInvalid: Embedded NUL char in path: ...`), else the first
    line of the error (Spark's `[CONDITION] message`), cut in the middle past CAUSE_LIMIT and
    with control characters escaped."""
    text = str(error)
    if "JVM stacktrace:" in text:
        text = text[: text.index("JVM stacktrace:")]
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if _TRACEBACK in text:
        after = lines[next(i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)) :]
        # The exception line is the last one a traceback does not indent.
        raised = [line for line in after[1:] if not line.startswith((" ", "\t"))]
        lines = raised[-1:] or lines
    line = lines[0] if lines else type(error).__name__
    # Control characters (a NUL from a data value) are shown escaped, never sent to a terminal.
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)
    if len(line) > CAUSE_LIMIT:
        half = CAUSE_LIMIT // 2
        line = f"{line[:half]}...({len(line) - 2 * half} characters)...{line[-half:]}"
    return line


def task_failure(error: BaseException, what: str, table: str, instant: str) -> TaskFailedError:
    """The error of an action whose Spark work failed with `error` (none of the core's):
    `what` says what failed and was undone, e.g. "write 2026... to table 't' failed and was
    undone (readers still see the previous snapshot)"."""
    cause = failure_cause(error)
    return TaskFailedError(
        f"{what}: {cause}", table=table, instant=instant, cause=cause, detail=str(error)
    )

"""Every error the core raises on purpose.

Each class names one failure a caller can act on. Messages name the table, option, column or
instant involved and say how to fix it, because they surface verbatim in `dbt run` output.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from contextlib import contextmanager

from fastavro.schema import SchemaParseException
from pyarrow import ArrowNotImplementedError


class HoodieError(Exception):
    """Base class: catch this to handle any deliberate failure of the core."""

    def fields(self) -> dict[str, object]:
        """What the error carries besides its message: its class's keyword arguments (a
        `TableIdentityError`'s setting, stored and wanted values, a damaged file's path), so
        that an error that travelled as data (a Spark task's result row,
        `hoodie.write.task_errors`) is raised again whole."""
        return {name: value for name, value in vars(self).items() if not name.startswith("_")}


class TableNotFoundError(HoodieError):
    """No `.hoodie/hoodie.properties` under the given base path."""


class TableExistsError(HoodieError):
    """Creating a table where one already exists."""


class UnsupportedTableError(HoodieError):
    """A table whose version, layout or type this implementation does not read or write."""


class InvalidConfigError(HoodieError):
    """A write or table option that is unknown, malformed or contradicts the table."""


class TableIdentityError(InvalidConfigError):
    """A write asks to change what the table's files are laid out by (record key, partition
    path, precombine field, table type, partitioning style, bucket count), which cannot change
    in place: only rebuilding the table (an overwrite with the new settings) can."""

    def __init__(
        self, message: str, setting: str = "", stored: object = None, wanted: object = None
    ):
        super().__init__(message)
        self.setting = setting  # the write config's name for it
        self.stored = stored
        self.wanted = wanted


class ConflictingSettingsError(InvalidConfigError):
    """One setting given twice with different values: as the caller's argument (dbt's config
    name) and as a Hudi option key."""

    def __init__(
        self,
        message: str,
        setting: str = "",
        given: object = None,
        option_key: str = "",
        option_value: object = None,
    ):
        super().__init__(message)
        self.setting = setting
        self.given = given
        self.option_key = option_key
        self.option_value = option_value


class SchemaError(HoodieError):
    """The incoming data lacks a configured column, or its types cannot be written."""


class SchemaEvolutionError(SchemaError):
    """The batch's columns differ from the table's in a way the schema-change policy refuses.

    Raised before anything is written, so the table is untouched.
    """


class MissingColumnError(SchemaError):
    """A configured record key, partition or precombine column is not in the incoming data."""


class DuplicateColumnError(SchemaError):
    """Two incoming columns have the same name, ignoring case; readers could not tell them apart."""


class MetaColumnError(SchemaError):
    """A user column named like one of Hudi's meta columns, which the writer fills in itself.
    Raised before anything is written."""

    def __init__(self, message: str, column: str = ""):
        super().__init__(message)
        self.column = column


class ColumnTypeError(SchemaError):
    """A column's type cannot serve its role (record key, partition, precombine,
    `_hoodie_is_deleted`) or cannot be stored at all. Raised before anything is written."""


class NullRecordKeyError(HoodieError):
    """Some incoming rows have a null record key; nothing was written."""


class DuplicateRecordKeyError(HoodieError):
    """Two incoming rows share a record key and no precombine field decides between them."""


class RecordKeyExistsError(HoodieError):
    """An insert (`hoodie.datasource.write.operation` insert or bulk_insert, with the default
    `hoodie.datasource.insert.dup.policy=fail`) brought keys the table already holds; nothing
    was written."""


class TimelineError(HoodieError):
    """The timeline is in a state the requested action cannot proceed from."""


class CommitError(HoodieError):
    """A write could not be completed; the instant stays inflight and readers ignore it."""


class TaskFailedError(CommitError):
    """Spark work of an action failed for a reason that is none of the core's errors (a file
    system refusing a path, a worker running out of memory, ...); the action was undone. The
    message names the cause in one line; `detail` keeps Spark's whole error (the Python and
    Java tracebacks) for a debug log."""

    def __init__(
        self, message: str, table: str = "", instant: str = "", cause: str = "", detail: str = ""
    ):
        super().__init__(message)
        self.table = table
        self.instant = instant
        self.cause = cause
        self.detail = detail


class ConcurrentWriteConflict(CommitError):
    """Another writer committed changes to the same file groups, or the same new record keys,
    first; this write was undone."""


class StaleClusteringPlanError(ConcurrentWriteConflict):
    """A write changed file groups a pending clustering plan rewrites after the plan was made
    (a writer that does not keep out of them, as Apache Hudi's with an update strategy that
    allows it): executing the plan would drop those changes, so the plan was removed and the
    next clustering plans afresh."""


class ClusteringUpdateError(CommitError):
    """A write would change a file group a pending clustering is about to rewrite (Apache
    Hudi's `HoodieClusteringUpdateException`): the write was undone, the clustering stays
    pending."""


class WriteRolledBackError(CommitError):
    """Another writer rolled this write's instant back (it took the write for failed, its
    heartbeat having stopped for too long): the write cannot complete, and nothing of it stays."""


class LockTimeoutError(HoodieError):
    """The table lock stayed held by another writer for longer than the configured wait."""


class LockLostError(CommitError):
    """This writer's table lock expired or was taken over (it could not be renewed in time),
    so what it was about to do under the lock was not done."""


class UnsafePathError(HoodieError):
    """A path made from data or read from the table's metadata (commit metadata, compaction,
    clean and rollback plans, markers, listings) would lie outside the table's base path or
    in its metadata folder; nothing was read, written or deleted there."""


class PartitionPathError(UnsafePathError):
    """Partition column values give a partition path that could escape the table or lose
    rows (see `hoodie.partition_paths`); nothing was written."""


# -- damaged files: what a table's files hold disagrees with what its timeline says ------------
class DamagedFileError(HoodieError):
    """A file of the table is gone, cut short or unreadable where the table's timeline says it
    must be whole. Messages name the table (by its files' full paths) and the file; nothing is
    read in its place, as reading around it would return a different table in silence."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path  # the damaged file (its full URI where known)


class MalformedMetadataError(DamagedFileError):
    """A metadata file (`hoodie.properties`, an instant file, a plan, the archived timeline,
    partition metadata) that does not parse as what it must hold."""


class MissingDataFileError(DamagedFileError):
    """A base or log file that a retained completed commit wrote, and a read needs, is gone."""


class CorruptDataFileError(DamagedFileError):
    """A base or log file that a retained completed commit wrote is shorter than its commit
    recorded, fails its block checks (magic, block sizes, trailing size) or its parquet
    footer, or holds no block of a commit that wrote to it."""


# What parsers of bytes raise on bytes that are not what they expect (JSON, Avro, parquet,
# text): ValueError covers JSONDecodeError, UnicodeDecodeError and pyarrow's ArrowInvalid;
# pyarrow reports unreadable parquet footers as OSError (`FileNotFoundError` is no parse
# error: callers tell a missing file apart); fastavro a damaged Avro schema as
# SchemaParseException; pyarrow damaged values it cannot convert (a 65-bit integer) as
# ArrowNotImplementedError.
PARSE_ERRORS: tuple[type[BaseException], ...] = (
    ValueError, EOFError, KeyError, IndexError, TypeError, AttributeError, struct.error,
    OSError, SchemaParseException, ArrowNotImplementedError,
)  # fmt: skip


# pyarrow raises OSError both for bytes it cannot parse and for a store it cannot reach
# (throttling, a dropped connection, denied access): the latter is no damage. Reported as
# damage it would send the user to restore a healthy file, and in a Spark task it would stop
# the retry that gets past a passing fault; so it goes through as it is.
_STORAGE_TROUBLE_TYPES = (
    PermissionError, ConnectionError, TimeoutError, InterruptedError, BlockingIOError,
)  # fmt: skip
_STORAGE_TROUBLE_TEXT = re.compile(
    r"AWS Error|Azure|GCS|google|curl|connection|connect to|timed? ?out|throttl|slow ?down|"
    r"request rate|access denied|permission denied|forbidden|unauthori[sz]ed|HTTP|"
    r"status code|service unavailable|temporarily",
    re.IGNORECASE,
)


def is_storage_trouble(error: BaseException) -> bool:
    """Is this OSError one of reaching the store, not of a file's bytes?"""
    return isinstance(error, OSError) and (
        isinstance(error, _STORAGE_TROUBLE_TYPES)
        or _STORAGE_TROUBLE_TEXT.search(str(error)) is not None
    )


@contextmanager
def malformed(path: str, what: str) -> Iterator[None]:
    """Turn the parse errors of reading `path` (a file holding `what`) into a
    `MalformedMetadataError` naming the file; a missing file stays `FileNotFoundError`, and
    an error reaching the store stays as it is (`is_storage_trouble`)."""
    try:
        yield
    except FileNotFoundError:
        raise
    except PARSE_ERRORS as error:
        if is_storage_trouble(error):
            raise
        raise MalformedMetadataError(
            f"{path} is damaged: it does not read as {what} ({type(error).__name__}: "
            f"{_short(error)}). Restore it from a backup, or remove the instant with Apache "
            "Hudi's CLI if it is not needed",
            path,
        ) from error
    except HoodieError as error:
        if isinstance(error, DamagedFileError) or path in str(error):
            raise
        if type(error) is HoodieError:
            raise MalformedMetadataError(f"{path} is damaged: {error}", path) from error
        raise type(error)(f"{path}: {error}") from error  # its own class, naming the file


def _short(error: BaseException) -> str:
    text = str(error).replace("\n", " ")
    return text if len(text) <= 200 else text[:200] + "..."

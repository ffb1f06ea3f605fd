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
    """Base class of every deliberate failure of the core: catch it to handle them all. The message
    names the table, file, option, column or instant involved and says what to do; the subclasses
    say it for each case."""

    def fields(self) -> dict[str, object]:
        """What the error carries besides its message: its class's keyword arguments (a
        `TableIdentityError`'s setting, stored and wanted values, a damaged file's path), so
        that an error that travelled as data (a Spark task's result row,
        `hoodie.write.task_errors`) is raised again whole."""
        return {name: value for name, value in vars(self).items() if not name.startswith("_")}


class TableNotFoundError(HoodieError):
    """No Hudi table (no `.hoodie/hoodie.properties`) under the given base path, where one must
    exist: opening a table to read it or run a table service.

    Check the path (a model's `location_root`, schema and alias; the URI's scheme and bucket) and
    that the table's first write completed. Tables are created by their first write
    (`HoodieTable.for_write`, a model's first run), never by opening them."""


class TableExistsError(HoodieError):
    """Creating a table where a Hudi table already exists: nothing was changed.

    Open the existing table instead (`HoodieTable.for_write` and `HoodieTable.open` do), or choose
    another path; to replace its contents, overwrite it (`--full-refresh`)."""


class UnsupportedTableError(HoodieError):
    """A table whose version, layout, file format or type this implementation does not read or write
    (table versions 5, 7 and older, Lance base files, writes of table version 9, several ordering
    fields, log blocks of Hudi before 0.14); nothing was changed.

    The message names what is unsupported. Read or write such a table with Apache Hudi, or convert
    it there (upgrade or downgrade it to table version 6 or 8, compact old log blocks) first; the
    compatibility page lists what is read and written."""


class InvalidConfigError(HoodieError):
    """A write or table option that is unknown, malformed or contradicts the table; raised before
    anything is written (in dbt, a compilation error).

    Fix the option the message names: an unknown key comes with the closest known one ("Did you mean
    ...?"), a value with the values allowed. Every option, its default and values are on the options
    page."""


class TableIdentityError(InvalidConfigError):
    """A write asks to change what the table's files are laid out by (record key, partition path,
    precombine field, table type, partitioning style, bucket count, urlencoding), which cannot
    change in place; nothing was written.

    Keep the table's setting (the message names the stored and the wanted value), or rebuild the
    table with the new one: in dbt, run the model once with `--full-refresh`; in Python,
    `HoodieTable.overwrite` with the new config."""

    def __init__(
        self, message: str, setting: str = "", stored: object = None, wanted: object = None
    ):
        super().__init__(message)
        self.setting = setting  # the write config's name for it
        self.stored = stored
        self.wanted = wanted


class ConflictingSettingsError(InvalidConfigError):
    """One setting given twice with different values: as the caller's argument (dbt's config name,
    e.g. `precombine_field`) and as a Hudi option key (`hoodie.datasource.write.precombine.field`).
    Raised before anything is written.

    Set it once: remove one of the two places the message names, or give both the same value."""

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
    """The incoming data lacks a configured column, or its columns cannot be written as they are;
    raised before anything is written.

    The subclasses name the column and the fix (cast, rename or add it in the model); this class
    itself is also raised for a damaged log block whose schema and rows disagree, which names the
    block's instant."""


class SchemaEvolutionError(SchemaError):
    """The batch's columns differ from the table's in a way the schema-change policy
    (`on_schema_change`) refuses: a column added or dropped under `ignore` or `fail`, or a type
    changed other than Hudi's widening (int -> bigint -> float -> double). Raised before anything is
    written, so the table is untouched.

    Change the model back, cast the column to the table's type, or set `on_schema_change` to
    `append_new_columns` or `sync_all_columns`; a type change beyond widening needs a rebuild
    (`--full-refresh`)."""


class MissingColumnError(SchemaError):
    """A configured record key, partition or precombine column is not in the incoming data (or keys
    to delete lack a key or partition column); the message lists the data's columns. Nothing was
    written.

    Output the column from the model, or correct `record_key`, `partition_path` or
    `precombine_field`."""


class DuplicateColumnError(SchemaError):
    """Two incoming columns have the same name, ignoring case (`select a, A`): Spark, Hive and Hudi
    readers could not tell them apart. Nothing was written.

    Rename or drop one of them in the model."""


class MetaColumnError(SchemaError):
    """A user column named like one of Hudi's meta columns (`_hoodie_commit_time`,
    `_hoodie_commit_seqno`, `_hoodie_record_key`, `_hoodie_partition_path`, `_hoodie_file_name`),
    which the writer fills in itself. Raised before anything is written.

    Rename the column in the model. (Rows selected whole from a lake table carry all five as
    strings; those are dropped and written anew, not refused.)"""

    def __init__(self, message: str, column: str = ""):
        super().__init__(message)
        self.column = column


class ColumnNameError(SchemaError):
    """A column's name, or a nested field's, is not an Avro name (`order-date`, `a.b`, `net $`,
    `2nd`): a Hudi table records its schema as Avro, and Apache Hudi refuses such a schema, so
    it could neither write nor read the table. Raised before anything is written.

    Rename the column in the model (`` `order-date` as order_date ``); letters of any script,
    digits and `_` are allowed, not a digit first."""

    def __init__(self, message: str, column: str = ""):
        super().__init__(message)
        self.column = column


class ColumnTypeError(SchemaError):
    """A column's type cannot serve its role or cannot be stored at all: a record key or partition
    column that is not string, integer, decimal, date or boolean; a precombine column that is not a
    number, string, date, timestamp or boolean; a `_hoodie_is_deleted` that is not boolean; a bare
    `null` column with no type. Raised before anything is written.

    Cast the column in the model, as the message suggests (e.g. `cast(price as decimal(18, 2))`)."""


class NullRecordKeyError(HoodieError):
    """Some incoming rows have a null or empty record key (all columns of a composite key null or
    empty); nothing was written. The message names the key columns and the partition of the first
    such row.

    Filter those rows out or fill the key in the model."""


class DuplicateRecordKeyError(HoodieError):
    """Two incoming rows share a record key and no precombine field decides which is the latest;
    nothing was written. (Also raised when a table's earlier non-global writes left one key in two
    partitions, where a global index needs one: the message names the keys.)

    Set `precombine_field` (the larger value wins), or deduplicate the rows in the model."""


class RecordKeyExistsError(HoodieError):
    """An insert (`hoodie.datasource.write.operation` insert or bulk_insert, with the default
    `hoodie.datasource.insert.dup.policy=fail`) brought keys the table already holds; the message
    names up to three. Nothing was written.

    Filter those keys out in the model, set `hoodie.datasource.insert.dup.policy=drop` to skip them
    (insert if absent), or upsert instead (the default operation)."""


class TimelineError(HoodieError):
    """The timeline is in a state the requested action cannot proceed from: a rollback of other than
    the latest commit or of a savepointed one, a restore with no savepoint, time travel or an
    incremental or CDC read before what cleaning and archival kept, a table service while a write is
    in progress, an upgrade with log files left; nothing was changed.

    The message says what is missing and the readable range where it applies: read a later instant,
    restore a savepoint, or run the action again once the table's writers have finished."""


class CommitError(HoodieError):
    """An action could not be completed (its instant could not be created, or a table service could
    not be scheduled while writes are pending); the instant stays inflight, readers ignore it, and
    the next action rolls it back.

    Run the action again once the message's cause is gone (the pending writes finished or were
    rolled back)."""


class TaskFailedError(CommitError):
    """Spark work of an action failed for a reason that is none of the core's errors (a file system
    refusing a path, a worker running out of memory, a lost executor); the action was undone. The
    message names the cause in one line; `detail` keeps Spark's whole error (the Python and Java
    tracebacks).

    In dbt the tracebacks are in the debug log (`logs/dbt.log`, or the console with `--debug`): fix
    the cause they show (memory: `spark_conf` such as `spark.driver.memory`, fewer rows per task
    with `hoodie.upsert.shuffle.parallelism`; storage access), then run again."""

    def __init__(
        self, message: str, table: str = "", instant: str = "", cause: str = "", detail: str = ""
    ):
        super().__init__(message)
        self.table = table
        self.instant = instant
        self.cause = cause
        self.detail = detail


class ConcurrentWriteConflict(CommitError):
    """Another writer committed changes to the same file groups, or the same new record keys, first
    (optimistic concurrency); this write was undone and nothing of it stays.

    Run it again: it then reads what the other writer committed. If two schedules run one model at
    once, keep them apart; concurrent writers that insert the same new keys should use the BUCKET
    index."""


class StaleClusteringPlanError(ConcurrentWriteConflict):
    """A write changed file groups a pending clustering plan rewrites after the plan was made (a
    writer that does not keep out of them, as Apache Hudi's with an update strategy that allows it):
    executing the plan would drop those changes, so the plan was removed.

    Nothing is lost: run the clustering again (`hoodie_cluster`), which plans afresh."""


class ClusteringUpdateError(CommitError):
    """A write would change a file group a pending clustering is about to rewrite (Apache Hudi's
    `HoodieClusteringUpdateException`): the write was undone, the clustering stays pending.

    Run the clustering first (`hoodie_cluster`, or let its writer finish), then the write again; or
    set `hoodie.clustering.rollback.pending.replacecommit.on.conflict=true` so writes roll back a
    plan no one executes yet."""


class WriteRolledBackError(CommitError):
    """Another writer rolled this write's instant back: it took the write for failed, its heartbeat
    having stopped for longer than `hoodie.client.heartbeat.interval_in_ms` x
    (`hoodie.client.heartbeat.tolerable.misses` + 1). The write cannot complete, and nothing of it
    stays.

    Run it again. If the writer stalls that long routinely (a loaded driver, long garbage
    collections), raise the heartbeat interval."""


class LockTimeoutError(HoodieError):
    """The table lock stayed held by another writer for longer than
    `hoodie.write.lock.wait_time_ms`; nothing was committed. The message names the holder and when
    its lock expires.

    Run the write again once that writer is done; a dead writer's lock expires by itself
    (`hoodie.write.lock.filesystem.expire`, `hoodie.write.lock.storage.validity.timeout.secs`).
    Raise the wait if commits routinely queue."""


class LockLostError(CommitError):
    """This writer's table lock expired or was taken over (it could not be renewed in time), so what
    it was about to do under the lock was not done, and nothing was committed under it.

    Run the write again. If renewals fail, check that the store is reachable and the writers' clocks
    agree, or raise `hoodie.write.lock.storage.validity.timeout.secs` (storage lock) or
    `hoodie.write.lock.filesystem.expire` (file-system lock)."""


class UnsafePathError(HoodieError):
    """A path made from data or read from the table's metadata (commit metadata, compaction, clean
    and rollback plans, markers, listings, the metadata table) would lie outside the table's base
    path or in its metadata folder; nothing was read, written or deleted there.

    The table's metadata is damaged or crafted: restore the named file from a backup, or, for a
    metadata table, write once with `hoodie.metadata.enable=false` to remove it (readers then list
    storage)."""


class PartitionPathError(UnsafePathError):
    """Partition column values give a partition path that could escape the table or lose rows: an
    empty, `.` or `..` segment, a leading or trailing `/`, a leading `.hoodie`, a control character,
    or a segment over 255 bytes. The message names the columns and the value; nothing was written.

    Clean the column in the model, or create the table with
    `hoodie.datasource.write.partitionpath.urlencode=true`, which escapes such values as Apache Hudi
    does (values over 255 bytes stay refused)."""


# -- damaged files: what a table's files hold disagrees with what its timeline says ------------
class DamagedFileError(HoodieError):
    """A file of the table is gone, cut short or unreadable where the table's timeline says it must
    be whole. Messages name the table (by its files' full paths) and the file; nothing is read in
    its place, as reading around it would return a different table in silence.

    Restore the named file from a backup or a replica of the table. If it cannot be restored, roll
    back or restore to before the commit that wrote it (`hoodie_rollback`, `hoodie_restore`), which
    removes that commit's files."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path  # the damaged file (its full URI where known)


class MalformedMetadataError(DamagedFileError):
    """A metadata file (`hoodie.properties`, an instant file, a plan, the archived timeline,
    partition metadata) does not parse as what it must hold; the message names the file.

    Restore it from a backup (`hoodie.properties` has one in `.hoodie/hoodie.properties.backup`
    while it is being rewritten), or remove an instant that is not needed with Apache Hudi's CLI."""


class MissingDataFileError(DamagedFileError):
    """A base or log file that a retained completed commit wrote, and a read or write needs, is
    gone; the message names the file and the commit.

    Restore the file from a backup, or roll back or restore the table to before that commit. Check
    that nothing outside Hudi deletes files under the table (lifecycle rules, manual clean-ups)."""


class CorruptDataFileError(DamagedFileError):
    """A base or log file that a retained completed commit wrote is shorter than its commit
    recorded, fails its block checks (magic, block sizes, trailing size), its parquet footer or its
    page checksums, or holds no block of a commit that wrote to it; the message names the file and
    the commit.

    Restore the file from a backup, or roll back or restore the table to before that commit."""


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

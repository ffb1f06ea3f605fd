"""File names Hudi gives data files, and the partition metadata file.

A base file is `<fileId>_<writeToken>_<instant>.parquet`: the file group it belongs to, the
task attempt that wrote it, and the instant that made it. A log file is
`.<fileId>_<instant>.log.<version>_<writeToken>`: in table version 6 the instant is the base
instant of the slice it belongs to (not the instant that wrote it); from version 8 on it is the
instant of the delta commit that wrote it, and its slice follows from that commit's completion
time (see `fs_view`). The name alone tells a reader which file group a file is, with no other
index. A CDC log file is a log file's name plus `.cdc`: `.<fileId>_<instant>.log.<version>_
<writeToken>.cdc`, where the instant and token are those of the base file the same write made
beside it; it is never part of a file slice (`hoodie.cdc`).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METADATA_FILE = ".hoodie_partition_metadata"
# With hoodie.partition.metafile.use.base.format, Hudi writes `.hoodie_partition_metadata.parquet`.
PARTITION_METADATA_PREFIX = PARTITION_METADATA_FILE


def is_partition_metadata(name: str) -> bool:
    return name == PARTITION_METADATA_FILE or name.startswith(PARTITION_METADATA_FILE + ".")


DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

_BASE_FILE_RE = re.compile(r"^(?P<file_id>.+)_(?P<token>\d+-\d+-\d+)_(?P<instant>\d+)\.parquet$")
_LOG_FILE_RE = re.compile(
    r"^\.(?P<file_id>.+)_(?P<instant>\d+)\.(?P<ext>log|archive)\.(?P<version>\d+)"
    r"(?:_(?P<token>\d+-\d+-\d+))?$"
)


CDC_LOG_FILE_SUFFIX = ".cdc"  # HoodieCDCUtils.CDC_LOGFILE_SUFFIX
_CDC_LOG_FILE_RE = re.compile(
    r"^\.(?P<file_id>.+)_(?P<instant>\d+)\.log\.(?P<version>\d+)_(?P<token>\d+-\d+-\d+)\.cdc$"
)


def new_file_id() -> str:
    """A new file group id: a UUID plus Hudi's `-0` suffix (the file group's first split).

    The BUCKET index reads a file group's bucket from its first 8 characters when they are
    all digits, as Hudi does; about 2% of random UUIDs start that way. Those are drawn again,
    so a table written with another index never looks like a bucket layout to our writers.
    """
    while True:
        file_id = f"{uuid.uuid4()}-0"
        if not file_id[:8].isdigit():
            return file_id


def write_token(task_partition: int, stage: int, attempt: int) -> str:
    return f"{task_partition}-{stage}-{attempt}"


def base_file_name(file_id: str, token: str, instant: str) -> str:
    return f"{file_id}_{token}_{instant}{BASE_FILE_EXTENSION}"


def log_file_name(file_id: str, base_instant: str, version: int, token: str) -> str:
    """`.<fileId>_<baseInstant>.log.<version>_<writeToken>`: a log file of the slice that
    starts at `base_instant`; versions count up from 1 within the slice."""
    return f".{file_id}_{base_instant}.log.{version}_{token}"


def cdc_log_file_name(file_id: str, instant: str, token: str, version: int = 1) -> str:
    """`.<fileId>_<instant>.log.<version>_<writeToken>.cdc`: the changes a write made to a file
    group, named after the base file it wrote (its instant and token); Apache Hudi writes one
    per file group per commit, version 1."""
    return f"{log_file_name(file_id, instant, version, token)}{CDC_LOG_FILE_SUFFIX}"


@dataclass(frozen=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant: str


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    instant: str  # the slice's base instant (table version 6), the writer's (8 and later)
    version: int
    write_token: str | None


def parse_base_file_name(name: str, extension: str = BASE_FILE_EXTENSION) -> BaseFileName | None:
    """The parts of a base file's name; `extension` is the table's base file format's (`.hfile`
    for the metadata table)."""
    if extension != BASE_FILE_EXTENSION:
        if not name.endswith(extension):
            return None
        name = name[: -len(extension)] + BASE_FILE_EXTENSION
    match = _BASE_FILE_RE.match(name)
    if not match:
        return None
    return BaseFileName(match["file_id"], match["token"], match["instant"])


def parse_log_file_name(name: str) -> LogFileName | None:
    match = _LOG_FILE_RE.match(name)
    if not match or match["ext"] != "log":
        return None
    return LogFileName(match["file_id"], match["instant"], int(match["version"]), match["token"])


def parse_cdc_log_file_name(name: str) -> LogFileName | None:
    """The parts of a CDC log file's name (`instant`: the write's), or None for any other."""
    match = _CDC_LOG_FILE_RE.match(name)
    if not match:
        return None
    return LogFileName(match["file_id"], match["instant"], int(match["version"]), match["token"])


def is_cdc_log_file(name: str) -> bool:
    return parse_cdc_log_file_name(name) is not None


def marks_partition(name: str) -> bool:
    """Does a file of this name make its folder a partition? Its `.hoodie_partition_metadata`,
    or a base or log file: a partition whose metadata file went missing is still one (Apache
    Hudi and hudi-rs list it from its files), for readers and for a write's tagging alike."""
    return (
        is_partition_metadata(name)
        or parse_base_file_name(name) is not None
        or parse_log_file_name(name) is not None
    )


def partition_folder_depth(partition: str) -> int:
    """The `partitionDepth` of a partition's metadata file: how many folders the partition is
    below the table, as Apache Hudi writes it (the partition path's depth less the base path's).
    Not the number of partition fields: a value holding `/` (not url-encoded) makes more
    folders, and Apache Hudi finds the table root from a partition folder by going up this many
    (TablePathUtils.getTablePathFromPartitionPath)."""
    return len([part for part in partition.split("/") if part])


def partition_metadata_text(instant: str, depth: int) -> str:
    """Contents of `.hoodie_partition_metadata` (Java properties, as Hudi writes it)."""
    return f"#partition metadata\ncommitTime={instant}\npartitionDepth={depth}\n"


# Bucket-index file ids: the bucket number, zero-padded, replaces the start of the UUID.
_BUCKET_DIGITS = 8


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket a file id belongs to, or None if it is not a bucket file id."""
    prefix = file_id[:_BUCKET_DIGITS]
    if len(file_id) > _BUCKET_DIGITS and prefix.isdigit() and file_id[_BUCKET_DIGITS] == "-":
        return int(prefix)
    return None


def new_bucket_file_id(bucket: int) -> str:
    """A fresh file id for a bucket: a random UUID whose first 8 characters are the bucket."""
    return f"{bucket:0{_BUCKET_DIGITS}d}{str(uuid.uuid4())[_BUCKET_DIGITS:]}-0"

"""Partition paths that stay inside the table: the rules every partition path obeys, and the
encoding of `hoodie.datasource.write.partitionpath.urlencode`.

A partition path is made from data values (see `keygen`), and becomes folders under the
table's base path. A value must never choose a folder outside the table, inside its
`.hoodie/` folder, or one that lists under another name. So a partition path is refused
(`problem` says why) when it
- holds a control character (U+0000 to U+001F, U+007F): NUL ends a path in the operating
  system, a newline makes a table hudi-rs cannot open;
- is absolute (starts with `/`), ends with `/`, or has an empty segment (`a//b`): the folder
  would list under another name than the `_hoodie_partition_path` the rows store, so the next
  upsert of a key would not find it and insert it again;
- has a `.` or `..` segment (the same folder, or one above it: outside the table);
- starts with `.hoodie` (the timeline, markers and metadata live there);
- has a segment longer than 255 bytes (UTF-8), what file systems allow for one name.
`/` inside a value is allowed without urlencode: Hudi users write values such as
`2024/01/31` as three folders on purpose.

With urlencode, values are escaped as Apache Hudi escapes them
(`PartitionPathEncodeUtils.escapePathName`: `%XX` for control characters and
``"#%'*/:=?\\{[]^`` and DEL), which already encodes `/` and control characters. We also
encode what Hudi leaves as is and would escape or hide the row: a value `.` or `..` becomes
`%2E` or `%2E%2E`, and a value starting with `.hoodie` starts with `%2E` instead. Only those
values differ from Hudi's encoding, so a table Hudi wrote keeps its partitions. Readers
unescape `%XX` (`unescape_path_name`). A value longer than 255 bytes once encoded is refused
even so. `__HIVE_DEFAULT_PARTITION__` stands for a null or empty value, as in Hudi.

The same rules hold for the data files the table's metadata names (`check_data_file`: write
stats, compaction, clean and rollback plans): a crafted plan naming `../../x` or
`.hoodie/hoodie.properties` is refused before anything is read or deleted. Below all of them,
`FileIO.inside` refuses any path leaving the base path.
"""

from __future__ import annotations

import json
import re

from .exceptions import UnsafePathError
from .naming import DEFAULT_PARTITION

MAX_SEGMENT_BYTES = 255
METADATA_FOLDER_PREFIX = ".hoodie"

# Apache Hudi's characters to escape (PartitionPathEncodeUtils.charToEscape), `%` first so
# escapes are not escaped again.
ESCAPED_CHARACTERS = "%" + "".join(chr(c) for c in range(0x20)) + "\"#'*/:=?\\\x7f{[]^"

# Why a partition path is refused; `keygen.partition_path_problem` gives the same reasons
# in Spark SQL, in the same order.
CONTROL_CHARACTER = "holds a control character"
ABSOLUTE = "is absolute (starts with '/')"
TRAILING_SLASH = "ends with '/'"
EMPTY_SEGMENT = "has an empty segment ('//')"
DOT_SEGMENT = "has a '.' or '..' segment"
METADATA_FOLDER = "starts with '.hoodie' (the table's metadata folder)"
LONG_SEGMENT = f"has a segment longer than {MAX_SEGMENT_BYTES} bytes"

CONTROL_PATTERN = "[\\x00-\\x1F\\x7F]"  # the same in Python's and Java's regular expressions
_CONTROL = re.compile(CONTROL_PATTERN)
_ESCAPE = re.compile("%([0-9A-Fa-f]{2})")
# How much of a refused value an error message shows.
SHOWN_CHARACTERS = 100
# Paths every rule below accepts, told at once: segments of ASCII letters, digits and a few
# marks, not starting with '.', of at most MAX_SEGMENT_BYTES. A write into a table of 50,000
# partitions checks the 50,000 files its commits name; the rules one by one took 0.9 s.
_PLAIN_SEGMENT = f"[A-Za-z0-9_=%+,:@~-][A-Za-z0-9_=%+,:@~.-]{{0,{MAX_SEGMENT_BYTES - 1}}}"
_PLAIN_PATH = re.compile(f"{_PLAIN_SEGMENT}(?:/{_PLAIN_SEGMENT})*")


def problem(path: str) -> str | None:
    """Why `path` cannot be a partition path, or None when it can ("" is the partition of a
    non-partitioned table)."""
    return None if _PLAIN_PATH.fullmatch(path) else _broken_rule(path)


def _broken_rule(path: str) -> str | None:
    segments = path.split("/")
    if _CONTROL.search(path):
        return CONTROL_CHARACTER
    if path.startswith("/"):
        return ABSOLUTE
    if path.endswith("/"):
        return TRAILING_SLASH
    if "//" in path:
        return EMPTY_SEGMENT
    if any(s in (".", "..") for s in segments):
        return DOT_SEGMENT
    if path.startswith(METADATA_FOLDER_PREFIX):
        return METADATA_FOLDER
    if any(len(s.encode("utf-8")) > MAX_SEGMENT_BYTES for s in segments):
        return LONG_SEGMENT
    return None


def escape_path_name(value: str) -> str:
    """One partition value as `urlencode` writes it (see the module's docstring)."""
    out = "".join(f"%{ord(c):02X}" if c in ESCAPED_CHARACTERS else c for c in value)
    if out in (".", ".."):
        return "%2E" * len(out)
    if out.startswith(METADATA_FOLDER_PREFIX):
        return "%2E" + out[1:]
    return out


def unescape_path_name(text: str) -> str:
    """A value from its `urlencode`d segment: `%XX` back to its character, as Hudi does."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def field_texts(
    path: str, fields: tuple[str, ...], hive_style: bool, url_encoded: bool
) -> dict[str, str | None] | None:
    """Each partition field's value, as text, in a partition path the key generator made
    (`keygen.KeyGenerator.partition_path`'s inverse): None for Hudi's default partition (a
    null or empty value). None for a path that does not split into one segment per field (a
    value holding `/`, written as folders without urlencode, cannot be told apart)."""
    segments = path.split("/") if path else []
    if len(segments) != len(fields):
        return None
    out: dict[str, str | None] = {}
    for name, segment in zip(fields, segments):
        text = segment.split("=", 1)[1] if hive_style and "=" in segment else segment
        if url_encoded:
            text = unescape_path_name(text)
        out[name] = None if text == DEFAULT_PARTITION else text
    return out


def shown(value: str) -> str:
    """A value for an error message: quoted, control characters escaped, cut when long."""
    text = json.dumps(value[:SHOWN_CHARACTERS], ensure_ascii=False)
    if len(value) > SHOWN_CHARACTERS:
        text += f" (first {SHOWN_CHARACTERS} of {len(value)} characters)"
    return text


def refusal(table_name: str, fields: tuple[str, ...]) -> tuple[str, str]:
    """The text around `shown(path)` and the reason in the error refusing a partition path:
    (before, after); `after` follows the reason."""
    columns = ", ".join(fields)
    noun = "column" if len(fields) == 1 else "columns"
    verb = "gives" if len(fields) == 1 else "give"
    before = f"table '{table_name}': partition {noun} {columns} {verb} the partition path "
    after = (
        "; nothing was written. Clean the values, or write the table with "
        "hoodie.datasource.write.partitionpath.urlencode=true, which escapes them (a table "
        "written without it is rebuilt: an overwrite, in dbt --full-refresh)"
    )
    return before, after


def refusal_message(table_name: str, fields: tuple[str, ...], path: str, reason: str) -> str:
    before, after = refusal(table_name, fields)
    return f"{before}{shown(path)}, which {reason}{after}"


def data_file_problem(relative: str) -> str | None:
    """Why `relative` cannot be a data file of the table (a file in a partition folder that
    obeys `problem`, or at the top of a non-partitioned table), or None."""
    return None if _PLAIN_PATH.fullmatch(relative) else _data_file_rule(relative)


def _data_file_rule(relative: str) -> str | None:
    if relative.startswith("/"):
        return ABSOLUTE
    partition, _, name = relative.rpartition("/")
    if partition and (reason := problem(partition)) is not None:
        return f"its partition path {reason}"
    if name in ("", ".", "..") or _CONTROL.search(name):
        return "is not a file name"
    if not partition and name.startswith(METADATA_FOLDER_PREFIX):
        return METADATA_FOLDER
    return None


def check_data_file(table: str, source: str, relative: str) -> str:
    """`relative`, a data file `source` (a plan, commit metadata) names; `UnsafePathError`
    naming the table (`table`: `'name'` or `at <uri>`), the source and the file when it
    cannot be one."""
    reason = data_file_problem(relative)
    if reason is not None:
        raise UnsafePathError(
            f"table {table}: {source} names the data file {shown(relative)}, which "
            f"{reason}; nothing was read, written or deleted. The table's metadata was "
            "altered: restore the table from a copy, or remove that instant's files from the "
            "timeline by hand"
        )
    return relative

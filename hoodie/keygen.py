"""Key generators: how a row becomes a Hudi key (record key + partition path).

Expressed as Spark columns so keys are computed in the tasks, next to the data. The formats
match Hudi's generators, so a table's `_hoodie_record_key` and partition folders look the same
whoever wrote them:
- simple: the field's value as text;
- complex (several key fields): `f1:v1,f2:v2`, with `__null__` / `__empty__` for missing parts;
- partition path: values joined by `/`, `col=value` when hive-style, and
  `__HIVE_DEFAULT_PARTITION__` for a null or empty value; with urlencode each value escaped as
  Hudi escapes it (extended to `.`, `..` and `.hoodie`, see `partition_paths`).
A partition path that could leave the table is refused before anything is written
(`partition_path_problem`, the Spark SQL form of `partition_paths.problem`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from . import partition_paths as paths
from .naming import DEFAULT_PARTITION
from .properties import (
    COMPLEX_KEYGEN,
    NON_PARTITIONED_KEYGEN,
    SIMPLE_KEYGEN,
)
from .schema import as_array

NULL_KEY_PART = "__null__"
EMPTY_KEY_PART = "__empty__"


@dataclass(frozen=True)
class KeyGenerator:
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style_partitioning: bool = False
    url_encode: bool = False

    @property
    def class_name(self) -> str:
        """The Hudi key generator class that produces the same keys (for hoodie.properties)."""
        if not self.partition_fields:
            return NON_PARTITIONED_KEYGEN
        if len(self.record_key_fields) == 1 and len(self.partition_fields) == 1:
            return SIMPLE_KEYGEN
        return COMPLEX_KEYGEN

    @property
    def is_complex_key(self) -> bool:
        return len(self.record_key_fields) > 1

    def record_key(self) -> Column:
        if not self.is_complex_key:
            return F.col(_quote(self.record_key_fields[0])).cast("string")
        parts = []
        for name in self.record_key_fields:
            text = F.col(_quote(name)).cast("string")
            value = (
                F.when(text.isNull(), F.lit(NULL_KEY_PART))
                .when(text == "", F.lit(EMPTY_KEY_PART))
                .otherwise(text)
            )
            parts.append(F.concat(F.lit(f"{name}:"), value))
        return F.concat_ws(",", *parts)

    def record_key_is_missing(self) -> Column:
        """True where Hudi would reject the key: null or empty (every part, for complex keys)."""
        missing = [
            F.col(_quote(n)).isNull() | (F.col(_quote(n)).cast("string") == "")
            for n in self.record_key_fields
        ]
        result = missing[0]
        for part in missing[1:]:
            result = result & part
        return result

    def partition_path(self) -> Column:
        if not self.partition_fields:
            return F.lit("")
        parts = []
        for name in self.partition_fields:
            text = F.col(_quote(name)).cast("string")
            encoded = escape_path_name(text) if self.url_encode else text
            value = F.when(text.isNull() | (text == ""), F.lit(DEFAULT_PARTITION)).otherwise(
                encoded
            )
            if self.hive_style_partitioning:
                value = F.concat(F.lit(f"{name}="), value)
            parts.append(value)
        return F.concat_ws("/", *parts)


def escape_path_name(text: Column) -> Column:
    """`partition_paths.escape_path_name` as a Spark column: Hudi's `%XX` escapes, then a
    value `.`, `..` or starting with `.hoodie` gets its dots escaped too."""
    for char in paths.ESCAPED_CHARACTERS:
        text = F.replace(text, F.lit(char), F.lit(f"%{ord(char):02X}"))
    return (
        F.when(text == ".", F.lit("%2E"))
        .when(text == "..", F.lit("%2E%2E"))
        .when(
            text.startswith(paths.METADATA_FOLDER_PREFIX),
            F.concat(F.lit("%2E"), text.substr(2, 1 << 30)),
        )
        .otherwise(text)
    )


def partition_path_problem(path: Column) -> Column:
    """Why a partition path cannot be one, or null: `partition_paths.problem` in Spark SQL
    (the same reasons, in the same order), so a write can refuse it in a stage of its own
    job, before any task writes."""
    segments = F.split(path, "/")
    return (
        F.when(path.rlike(paths.CONTROL_PATTERN), F.lit(paths.CONTROL_CHARACTER))
        .when(path.startswith("/"), F.lit(paths.ABSOLUTE))
        .when(path.endswith("/"), F.lit(paths.TRAILING_SLASH))
        .when(path.contains("//"), F.lit(paths.EMPTY_SEGMENT))
        .when(F.exists(segments, lambda s: s.isin(".", "..")), F.lit(paths.DOT_SEGMENT))
        .when(path.startswith(paths.METADATA_FOLDER_PREFIX), F.lit(paths.METADATA_FOLDER))
        .when(
            F.exists(segments, lambda s: F.octet_length(s) > paths.MAX_SEGMENT_BYTES),
            F.lit(paths.LONG_SEGMENT),
        )
    )


def shown(path: Column) -> Column:
    """`partition_paths.shown` in Spark SQL: quoted (JSON), cut when long."""
    cut = F.substring(path, 1, paths.SHOWN_CHARACTERS)
    quoted = F.regexp_extract(F.to_json(F.array(cut)), r"^\[(.*)\]$", 1)
    more = F.concat(
        F.lit(f" (first {paths.SHOWN_CHARACTERS} of "),
        F.length(path).cast("string"),
        F.lit(" characters)"),
    )
    return F.when(F.length(path) > paths.SHOWN_CHARACTERS, F.concat(quoted, more)).otherwise(quoted)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def record_keys_of(table: pa.Table, fields: tuple[str, ...]) -> pa.Array:
    """Record keys computed from the key columns of stored rows, as `KeyGenerator` makes them.

    Readers need this for tables written without meta fields (no `_hoodie_record_key`
    column): a complex key is `field:value` pairs joined by commas, with Hudi's markers for
    null and empty parts.
    """
    if len(fields) == 1:
        return as_array(table.column(fields[0])).cast(pa.string())
    parts = []
    for name in fields:
        text = as_array(table.column(name)).cast(pa.string())
        text = pc.if_else(pc.equal(text, ""), EMPTY_KEY_PART, text)
        text = pc.fill_null(text, NULL_KEY_PART)
        parts.append(pc.binary_join_element_wise(f"{name}:", text, ""))
    return pc.binary_join_element_wise(*parts, ",")

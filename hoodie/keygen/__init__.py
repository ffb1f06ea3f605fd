"""Key generators: how a row becomes a Hudi key (record key + partition path).

Expressed as Spark columns so keys are computed in the tasks, next to the data. The formats
match Hudi's generators, so a table's `_hoodie_record_key` and partition folders look the same
whoever wrote them:
- simple: the field's value as text;
- complex (several key fields): `f1:v1,f2:v2`, with `__null__` / `__empty__` for missing parts;
- partition path: values joined by `/`, `col=value` when hive-style, and
  `__HIVE_DEFAULT_PARTITION__` for a null or empty value; with urlencode each value escaped as
  Hudi escapes it (extended to `.`, `..` and `.hoodie`, see `partition_paths`);
- timestamp parts (`TimestampBasedKeyGenerator`, the `TIMESTAMP` parts of
  `CustomKeyGenerator`): the value read as an instant and written with a date pattern
  (`keygen.timestamp`), escaped and prefixed as the other parts.
A partition path that could leave the table is refused before anything is written
(`partition_path_problem`, the Spark SQL form of `partition_paths.problem`), unless the
partition columns' types alone rule every problem out (`partition_paths_safe`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .. import partition_paths as paths
from ..config import WriteConfig
from ..exceptions import InvalidConfigError
from ..naming import DEFAULT_PARTITION
from ..options.keygen import CLASS_OF_TYPE, TYPE_OF_CLASS, TimestampSpec, timestamp_settings
from ..properties import (
    COMPLEX_KEYGEN,
    NON_PARTITIONED_KEYGEN,
    SIMPLE_KEYGEN,
    TableProperties,
)
from ..schema import as_array, quoted_name
from .timestamp import timestamp_part

# What a TIMESTAMP part does with a value none of the input formats reads: (the column's
# text, the field) -> a column that fails the Spark job (the write's error), or None: a null
# partition path.
Failure = Callable[[Column, str], Column]

_SPECIAL = ("TIMESTAMP", "CUSTOM")
# Types whose text (Spark's cast to string) is digits, signs, '.', '-', ':', ' ', 'E' and the
# letters of NaN, Infinity, true and false, in at most _PLAIN_TEXT_CHARACTERS characters:
# never a '/', a control character, a value '.' or '..', nor one starting with '.'.
_PLAIN_TEXT_TYPES = (
    T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType,
    T.DoubleType, T.DecimalType, T.DateType, T.TimestampType, T.TimestampNTZType,
)  # fmt: skip
# More than any of them takes (a decimal(38, 38) below zero: 41; a timestamp: 29) and than
# the default partition's name; urlencode at most triples it (`%XX` per character).
_PLAIN_TEXT_CHARACTERS = 64
NULL_KEY_PART = "__null__"
EMPTY_KEY_PART = "__empty__"


@dataclass(frozen=True)
class KeyGenerator:
    """How rows become keys. `kind` is Apache Hudi's key generator type when it is TIMESTAMP or
    CUSTOM (None: by the fields, SIMPLE, COMPLEX or NON_PARTITION); `partition_types` each
    partition field's type under CUSTOM (SIMPLE or TIMESTAMP); `timestamp` the settings of
    the TIMESTAMP parts."""

    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style_partitioning: bool = False
    url_encode: bool = False
    kind: str | None = None
    partition_types: tuple[str, ...] = ()
    timestamp: TimestampSpec | None = None

    @property
    def class_name(self) -> str:
        """The Hudi key generator class that produces the same keys (for hoodie.properties)."""
        if self.kind in ("TIMESTAMP", "CUSTOM"):
            return CLASS_OF_TYPE[self.kind]
        if not self.partition_fields:
            return NON_PARTITIONED_KEYGEN
        if len(self.record_key_fields) == 1 and len(self.partition_fields) == 1:
            return SIMPLE_KEYGEN
        return COMPLEX_KEYGEN

    @classmethod
    def for_write(cls, config: WriteConfig, stored: TableProperties | None = None
                  ) -> KeyGenerator:  # fmt: skip
        """The key generator of a write with `config` on the table whose properties are
        `stored` (None: a new table). What the config leaves unsaid of a timestamp or custom
        key generator (the type, the part types, the timebased settings) is the table's, as
        `hoodie.properties` keeps it; what it says that differs from the table is refused
        by the identity check (`meta_client.identity_changes`), not here."""
        kind = config.key_generator
        stored_kind = TYPE_OF_CLASS.get(stored.key_generator_class) if stored else None
        if kind is None and stored_kind in _SPECIAL:
            kind = stored_kind
        types = config.partition_types
        if kind == "CUSTOM" and not types and stored is not None and stored_kind == "CUSTOM":
            types = stored.partition_types
        where = f"table '{config.table_name}'"
        if kind == "CUSTOM" and config.partition_fields and not types:
            raise InvalidConfigError(
                f"{where} uses CustomKeyGenerator and its hoodie.properties does not say the "
                "partition fields' types: give them in partition_path (`column:SIMPLE`, "
                "`column:TIMESTAMP`)"
            )
        spec = None
        if kind == "TIMESTAMP" or "TIMESTAMP" in types:
            settings = config.timestamp_settings
            if not settings and stored is not None and stored_kind == kind:
                settings = timestamp_settings(stored.extra)
            spec = TimestampSpec.of(settings, where)
        return cls(
            config.record_key_fields,
            config.partition_fields,
            stored.hive_style_partitioning if stored else config.hive_style_partitioning,
            stored.url_encode_partition_path if stored else config.url_encode_partition_path,
            kind=kind if kind in _SPECIAL else None,
            partition_types=types if kind == "CUSTOM" else (),
            timestamp=spec,
        )

    @classmethod
    def of_table(cls, stored: TableProperties) -> KeyGenerator:
        """The key generator a table's `hoodie.properties` describes: the keys and partition
        paths its rows were stored under (a CDC read gives each change its key and path)."""
        kind = TYPE_OF_CLASS.get(stored.key_generator_class)
        types = stored.partition_types if kind == "CUSTOM" else ()
        spec = None
        if kind == "TIMESTAMP" or "TIMESTAMP" in types:
            spec = TimestampSpec.of(timestamp_settings(stored.extra), f"table '{stored.name}'")
        return cls(
            stored.record_key_fields,
            stored.partition_fields,
            stored.hive_style_partitioning,
            stored.url_encode_partition_path,
            kind=kind if kind in _SPECIAL else None,
            partition_types=types,
            timestamp=spec,
        )

    @property
    def is_complex_key(self) -> bool:
        return len(self.record_key_fields) > 1

    def record_key(self) -> Column:
        if not self.is_complex_key:
            return F.col(quoted_name(self.record_key_fields[0])).cast("string")
        parts = []
        for name in self.record_key_fields:
            text = F.col(quoted_name(name)).cast("string")
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
            F.col(quoted_name(n)).isNull() | (F.col(quoted_name(n)).cast("string") == "")
            for n in self.record_key_fields
        ]
        result = missing[0]
        for part in missing[1:]:
            result = result & part
        return result

    def part_types(self) -> tuple[str, ...]:
        """Each partition field's part type: SIMPLE (its value) or TIMESTAMP (a date)."""
        if self.kind == "CUSTOM":
            return self.partition_types
        kind = "TIMESTAMP" if self.kind == "TIMESTAMP" else "SIMPLE"
        return tuple(kind for _ in self.partition_fields)

    def partition_paths_safe(self, schema: T.StructType) -> bool:
        """Whether every partition path this generator makes of rows of `schema` is one
        `partition_paths.problem` accepts, known from the types alone: each part is a
        value's text (not a date pattern's, which the config chooses) of a type in
        _PLAIN_TEXT_TYPES, so the one thing left to check is the parts' fixed text, the
        hive-style `name=`: checked here on a path of the longest values. A write then
        needs no check of each row's path (at 10M rows it cost ~4.6 s of the load's CPU)."""
        types = {f.name: f.dataType for f in schema.fields}
        if not self.partition_fields or any(kind != "SIMPLE" for kind in self.part_types()):
            return False
        if not all(isinstance(types.get(n), _PLAIN_TEXT_TYPES) for n in self.partition_fields):
            return False
        longest = "0" * _PLAIN_TEXT_CHARACTERS * (3 if self.url_encode else 1)
        prefix = "{}=" if self.hive_style_partitioning else ""
        sample = "/".join(prefix.format(n) + longest for n in self.partition_fields)
        return paths.problem(sample) is None

    def partition_path(self, schema: T.StructType | None = None,
                       unreadable: Failure | None = None) -> Column:  # fmt: skip
        """The partition path of each row. TIMESTAMP parts need the batch's `schema` (a
        number, a date and a string are read differently); `unreadable` fails the job where
        a string matches none of the input formats (None: the path is null there)."""
        if not self.partition_fields:
            return F.lit("")
        parts = []
        for name, kind in zip(self.partition_fields, self.part_types()):
            if kind == "TIMESTAMP":
                assert self.timestamp is not None and schema is not None
                if name not in schema.fieldNames():
                    raise InvalidConfigError(f"partition field {name} is not a column of the "
                                             "batch")  # fmt: skip
                column = F.col(quoted_name(name))
                text = timestamp_part(column, schema[name].dataType, self.timestamp, name)
                if unreadable is not None and self.timestamp.takes_strings:
                    text = F.when(text.isNull(), unreadable(column, name)).otherwise(text)
                value = escape_path_name(text) if self.url_encode else text
            else:
                text = F.col(quoted_name(name)).cast("string")
                encoded = escape_path_name(text) if self.url_encode else text
                value = F.when(text.isNull() | (text == ""), F.lit(DEFAULT_PARTITION)).otherwise(
                    encoded
                )
            if self.hive_style_partitioning:
                value = F.concat(F.lit(f"{name}="), value)
            parts.append(value)
        joined = parts[0]
        for part in parts[1:]:
            joined = F.concat(joined, F.lit("/"), part)
        return joined


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

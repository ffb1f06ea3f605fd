"""Table schemas: Arrow is what we compute with, Avro JSON is what Hudi's metadata records.

Hudi stores the writer schema in each commit (`extraMetadata.schema`) as Avro, every field a
union with null, records named after the table the way Hudi's Spark writer names them. Readers
(hudi-rs, Hudi itself) rebuild the table schema from there, so the mapping must be faithful:
Spark's `short`/`byte` become Avro `int`, decimals become fixed with Hudi's byte width, times
become `timestamp-micros`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np
import pyarrow as pa

from .exceptions import SchemaError

META_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME = META_COLUMNS
IS_DELETED = "_hoodie_is_deleted"
# Apache Hudi's own making of an Avro name from a table name (ASCII, unlike Avro's rule).
_AVRO_FIRST = re.compile("[^A-Za-z_]")
_AVRO_REST = re.compile("[^A-Za-z0-9_]")
# A base file's key range, in its parquet footer (Hudi's bloom index reads it; we route by it).
MIN_KEY_FOOTER = b"hoodie_min_record_key"
MAX_KEY_FOOTER = b"hoodie_max_record_key"
META_SCHEMA = pa.schema([pa.field(name, pa.string()) for name in META_COLUMNS])


def quoted_name(name: str) -> str:
    """A column name as Spark SQL reads it whatever it holds (a dot is not a struct field, a
    backtick is doubled): for `F.col` and SQL text."""
    return "`" + name.replace("`", "``") + "`"


def constant_column(value: Any, n: int, dtype: pa.DataType | None = None) -> pa.Array:
    """`value` n times (a meta column's commit time, partition path or file name), built by
    Arrow: a Python list of a file's row count cost a merge a fifth of its time."""
    return pa.repeat(pa.scalar(value, dtype if dtype is not None else pa.string()), n)


def row_numbers(start: int, n: int) -> pa.Array:
    """start, start + 1, ... as int64 (sequence numbers, arrival order), built by numpy."""
    return pa.array(np.arange(start, start + n, dtype=np.int64))


def as_array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array of a column. A lone chunk is taken as it is: `combine_chunks` copies even
    that (every column of a base file, per merged read)."""
    if not isinstance(column, pa.ChunkedArray):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def data_schema(schema: pa.Schema) -> pa.Schema:
    """The user's columns: the schema without Hudi meta columns."""
    return pa.schema([f for f in schema if f.name not in META_COLUMNS])


def with_meta_columns(schema: pa.Schema) -> pa.Schema:
    return pa.schema(list(META_SCHEMA) + list(data_schema(schema)))


def _decimal_fixed_size(precision: int) -> int:
    # Smallest two's-complement byte width holding `precision` decimal digits (as Spark/Hudi).
    return math.ceil((precision * math.log2(10) + 1) / 8)


def _avro_type(dtype: pa.DataType, name: str, namespace: str) -> Any:
    if pa.types.is_boolean(dtype):
        return "boolean"
    if pa.types.is_int8(dtype) or pa.types.is_int16(dtype) or pa.types.is_int32(dtype):
        return "int"
    if pa.types.is_uint8(dtype) or pa.types.is_uint16(dtype):
        return "int"
    if pa.types.is_int64(dtype) or pa.types.is_uint32(dtype):
        return "long"
    if pa.types.is_float32(dtype):
        return "float"
    if pa.types.is_float64(dtype):
        return "double"
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return "string"
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return "bytes"
    if pa.types.is_decimal(dtype):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": _decimal_fixed_size(dtype.precision),
            "logicalType": "decimal",
            "precision": dtype.precision,
            "scale": dtype.scale,
        }
    if pa.types.is_date32(dtype):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(dtype):
        logical = "timestamp-micros" if dtype.tz else "local-timestamp-micros"
        return {"type": "long", "logicalType": logical}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return {
            "type": "array",
            "items": _nullable(_avro_type(dtype.value_type, name, namespace)),
        }
    if pa.types.is_map(dtype):
        if not pa.types.is_string(dtype.key_type):
            raise SchemaError(
                f"column '{name}' is a map with {dtype.key_type} keys; Hudi (Avro) maps need "
                "string keys: cast the keys to string in the model"
            )
        return {"type": "map", "values": _nullable(_avro_type(dtype.item_type, name, namespace))}
    if pa.types.is_struct(dtype):
        return _record(list(dtype), name, namespace)
    raise SchemaError(f"column '{name}' has type {dtype}, which Hudi tables cannot store")


def _nullable(avro: Any) -> list[Any]:
    return ["null", avro]


def _record(fields: list[pa.Field], name: str, namespace: str) -> dict[str, Any]:
    child_namespace = f"{namespace}.{name}"
    return {
        "type": "record",
        "name": name,
        "namespace": namespace,
        "fields": [
            {
                "name": f.name,
                "type": _nullable(_avro_type(f.type, f.name, child_namespace)),
                "default": None,
            }
            for f in fields
        ],
    }


def to_avro_schema(schema: pa.Schema, table_name: str) -> str:
    """The Avro JSON Hudi's Spark writer would record for this (meta-column-free) schema."""
    name, namespace = avro_record_name(table_name)
    record = _record(list(data_schema(schema)), name, namespace)
    return json.dumps(record, separators=(",", ":"))


def avro_record_name(table_name: str) -> tuple[str, str]:
    """The name and namespace of a table's Avro record: `<table>_record` in `hoodie.<table>`,
    the table name made an Avro name as Apache Hudi makes it (a first character other than an
    ASCII letter or `_`, and every later one other than those or a digit, becomes `__`): a
    dbt model may be named `daily-orders`, and Avro's parser refuses `daily-orders_record`."""
    table = _AVRO_FIRST.sub("__", table_name[:1]) + _AVRO_REST.sub("__", table_name[1:])
    return f"{table}_record", f"hoodie.{table}"


def avro_name_problem(name: str) -> str | None:
    """Why `name` cannot name an Avro field, or None when it can.

    Apache Hudi's Avro (Java) takes a letter or `_` first, then letters, digits and `_`, as
    `Character.isLetter` / `isLetterOrDigit` judge each UTF-16 unit: letters of any script
    (`é`, `ß`, `名`) pass; `-`, `.`, spaces, `$`, a digit first, and characters beyond the Basic
    Multilingual Plane (two UTF-16 units, neither a letter) do not. Apache Hudi neither writes
    a column named otherwise nor reads a table whose commit schema has one.
    """
    if not name:
        return "an empty name"
    for position, char in enumerate(name):
        if _avro_name_char(char, first=position == 0):
            continue
        if position == 0 and char.isdecimal():
            return "starts with a digit"
        return f"has {char!r} at position {position + 1}"
    return None


def avro_name_like(name: str) -> str:
    """An Avro name close to `name`, to suggest as a rename: each character Avro refuses made
    `_`, and `_` put first where the name starts with a digit."""
    renamed = "".join(c if _avro_name_char(c, first=False) else "_" for c in name)
    return renamed if renamed and _avro_name_char(renamed[0], first=True) else f"_{renamed}"


def _avro_name_char(char: str, first: bool) -> bool:
    """`avro_name_problem`'s rule for one character (`first`: the name's first)."""
    if ord(char) > 0xFFFF:
        return False
    return char.isalpha() or char == "_" or (not first and char.isdecimal())


def _arrow_type(avro: Any) -> tuple[pa.DataType, bool]:
    """Arrow type of an Avro type, and whether it is nullable."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise SchemaError(f"Avro union {avro} has no Arrow equivalent")
        return _arrow_type(branches[0])[0], True
    if isinstance(avro, str):
        simple = {
            "boolean": pa.bool_(),
            "int": pa.int32(),
            "long": pa.int64(),
            "float": pa.float32(),
            "double": pa.float64(),
            "string": pa.string(),
            "bytes": pa.binary(),
            "null": pa.null(),
        }
        if avro not in simple:
            raise SchemaError(f"Avro type '{avro}' is not supported")
        return simple[avro], False
    logical = avro.get("logicalType")
    kind = avro["type"]
    if logical == "decimal":
        return pa.decimal128(avro["precision"], avro.get("scale", 0)), False
    if logical == "date":
        return pa.date32(), False
    if logical in ("timestamp-micros", "timestamp-millis"):
        return pa.timestamp("us", tz="UTC"), False
    if logical in ("local-timestamp-micros", "local-timestamp-millis"):
        return pa.timestamp("us"), False
    if kind == "record":
        fields = []
        for f in avro["fields"]:
            dtype, nullable = _arrow_type(f["type"])
            fields.append(pa.field(f["name"], dtype, nullable))
        return pa.struct(fields), False
    if kind == "array":
        dtype, nullable = _arrow_type(avro["items"])
        return pa.list_(pa.field("element", dtype, nullable)), False
    if kind == "map":
        dtype, nullable = _arrow_type(avro["values"])
        return pa.map_(pa.string(), pa.field("value", dtype, nullable)), False
    if kind == "enum":
        return pa.string(), False
    if kind == "fixed":
        return pa.binary(avro["size"]), False
    return _arrow_type(kind)


def from_avro_schema(text: str) -> pa.Schema:
    record = json.loads(text)
    dtype, _ = _arrow_type(record)
    return pa.schema(list(dtype))


def normalize_type(dtype: pa.DataType) -> pa.DataType:
    """The Arrow type we store: plain (not large) strings/lists, UTC timestamps in micros.

    Spark hands Arrow data over with large variable-width types and the session's time zone;
    writing the plain forms keeps our parquet files like the ones Hudi's Spark writer makes.
    """
    if pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return pa.string()
    if pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype):
        return pa.binary()
    if pa.types.is_timestamp(dtype):
        return pa.timestamp("us", tz="UTC" if dtype.tz else None)
    if pa.types.is_large_list(dtype) or pa.types.is_list(dtype):
        item = dtype.value_field
        return pa.list_(pa.field(item.name, normalize_type(item.type), item.nullable))
    if pa.types.is_map(dtype):
        item = dtype.item_field
        return pa.map_(
            normalize_type(dtype.key_type),
            pa.field(item.name, normalize_type(item.type), item.nullable),
        )
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, normalize_type(f.type), f.nullable) for f in dtype])
    return dtype


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, normalize_type(f.type), True) for f in schema])


def avro_type_of(field: pa.Field) -> str:
    """A field's Avro type as canonical JSON, for comparing types the way Hudi sees them."""
    return json.dumps(_avro_type(field.type, field.name, "c"), sort_keys=True).strip('"')

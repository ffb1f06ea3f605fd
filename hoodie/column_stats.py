"""A data file's column statistics as Apache Hudi's metadata table `column_stats` records hold
them (docs/design/metadata-table.md, section 2.2; checked against the records Apache Hudi 0.15
and 1.2 wrote for the same files).

- A base file's come from its parquet footer: min and max over its row groups, the value count
  is the column chunks' `num_values` (nulls included), null counts and the chunks' compressed and
  uncompressed sizes summed. A column a row group has no statistics of gets no range (readers
  then keep the file).
- A log file's come from the rows its data blocks hold (sizes 0), as Apache Hudi's append
  handle collects them; a log file of deletes alone has counts 0 and no bounds.
- Values are stored in the wrapper of the column's type (`stat_kind`): timestamps as the raw
  long parquet stores (LongWrapper, as both versions write them), dates as days, decimals at
  scale 15. Strings and bytes are ordered as Java orders them (UTF-16 code units, signed
  bytes), as Apache Hudi merges row groups' bounds.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .exceptions import InvalidConfigError
from .metadata_records import (
    ColumnStatsRecord,
    StatKind,
    StatValue,
    column_stats_key,
    partition_identifier,
)
from .schema import COMMIT_TIME, META_COLUMNS, PARTITION_PATH, RECORD_KEY

COLUMN_LIST_OPTION = "hoodie.metadata.index.column.stats.column.list"
# Apache Hudi 1.x indexes these meta columns first (`META_COLS_TO_ALWAYS_INDEX`); 0.15 all five.
V8_META_COLUMNS = (COMMIT_TIME, PARTITION_PATH, RECORD_KEY)
_DECIMAL_DIGITS = 30
_DECIMAL_SCALE = 15
_EPOCH = datetime.date(1970, 1, 1)


def stat_kind(dtype: pa.DataType) -> StatKind | None:
    """The wrapper a column of this type is stored in; None for types Apache Hudi does not
    index (nested, time, unsigned 64-bit, half floats, decimals beyond decimal(30, 15))."""
    if pa.types.is_dictionary(dtype):
        return stat_kind(dtype.value_type)
    if pa.types.is_boolean(dtype):
        return StatKind.BOOLEAN
    if pa.types.is_int8(dtype) or pa.types.is_int16(dtype) or pa.types.is_int32(dtype):
        return StatKind.INT
    if pa.types.is_uint8(dtype) or pa.types.is_uint16(dtype):
        return StatKind.INT
    if pa.types.is_int64(dtype) or pa.types.is_uint32(dtype) or pa.types.is_timestamp(dtype):
        return StatKind.LONG
    if pa.types.is_float32(dtype):
        return StatKind.FLOAT
    if pa.types.is_float64(dtype):
        return StatKind.DOUBLE
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return StatKind.STRING
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return StatKind.BYTES
    if pa.types.is_fixed_size_binary(dtype) and not pa.types.is_decimal(dtype):
        return StatKind.BYTES
    if pa.types.is_date32(dtype):
        return StatKind.DATE
    if pa.types.is_decimal(dtype):
        fits = dtype.scale <= _DECIMAL_SCALE and dtype.precision - dtype.scale <= (
            _DECIMAL_DIGITS - _DECIMAL_SCALE
        )
        return StatKind.DECIMAL if fits and dtype.scale >= 0 else None
    return None


def columns_to_index(
    schema: pa.Schema,
    table_version: int,
    column_list: Sequence[str] | None = None,
    max_columns: int = 32,
) -> tuple[str, ...]:
    """The columns a file of `schema` (meta columns included) gets statistics of: the listed
    ones, each of which must exist and have a type with statistics; else the table version's
    default: version 6 (Apache Hudi 0.15) every meta column and every data column, version 8
    (1.x) three meta columns and the data columns, at most `max_columns` (types without
    statistics left out)."""
    if column_list:
        for name in column_list:
            if name not in schema.names:
                raise InvalidConfigError(
                    f"{COLUMN_LIST_OPTION} names {name!r}, which the table does not have "
                    f"(columns: {', '.join(n for n in schema.names if n not in META_COLUMNS)})"
                )
            if stat_kind(schema.field(name).type) is None:
                raise InvalidConfigError(
                    f"{COLUMN_LIST_OPTION} names {name!r}, of type {schema.field(name).type}, "
                    "which has no column statistics: leave it out"
                )
        return tuple(column_list)
    meta = META_COLUMNS if table_version < 8 else V8_META_COLUMNS
    data = [n for n in schema.names if n not in META_COLUMNS]
    chosen = [
        n for n in (*(m for m in meta if m in schema.names), *data)
        if stat_kind(schema.field(n).type) is not None
    ]  # fmt: skip
    return tuple(chosen[:max_columns])


@dataclass(frozen=True)
class ColumnRange:
    """One column's statistics over one data file."""

    column: str
    min_value: StatValue | None
    max_value: StatValue | None
    value_count: int
    null_count: int
    total_size: int = 0
    total_uncompressed_size: int = 0

    def record(self, partition_path: str, file_name: str) -> ColumnStatsRecord:
        """The `column_stats` record of this range of `file_name` in a data partition."""
        key = column_stats_key(partition_identifier(partition_path), file_name, self.column)
        return ColumnStatsRecord(
            key, file_name, self.column, self.min_value, self.max_value, self.value_count,
            self.null_count, self.total_size, self.total_uncompressed_size,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (a write task hands ranges to the driver as JSON)."""
        bound = self.min_value or self.max_value
        kind = bound.kind.value if bound is not None else None
        return {
            "column": self.column,
            "kind": kind,
            "min": _json_value(self.min_value),
            "max": _json_value(self.max_value),
            "values": self.value_count,
            "nulls": self.null_count,
            "size": self.total_size,
            "uncompressed": self.total_uncompressed_size,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ColumnRange:
        kind = StatKind(data["kind"]) if data.get("kind") else None
        return cls(
            data["column"], _from_json(kind, data.get("min")), _from_json(kind, data.get("max")),
            int(data["values"]), int(data["nulls"]), int(data.get("size", 0)),
            int(data.get("uncompressed", 0)),
        )  # fmt: skip


def _json_value(stat: StatValue | None) -> Any:
    if stat is None:
        return None
    value = stat.value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return repr(value)
    return value


def _from_json(kind: StatKind | None, value: Any) -> StatValue | None:
    if value is None or kind is None:
        return None
    if kind is StatKind.BYTES:
        return StatValue(kind, base64.b64decode(value))
    if kind is StatKind.DECIMAL:
        return StatValue(kind, decimal.Decimal(value))
    if kind in (StatKind.FLOAT, StatKind.DOUBLE):
        return StatValue(kind, float(value))
    return StatValue(kind, value)


# -- order as Java compares ----------------------------------------------------------------------
def _java_key(value: Any) -> Any:
    """The sort key Apache Hudi's Java comparison gives: strings by UTF-16 code units, bytes
    as signed bytes; the rest as Python orders them."""
    if isinstance(value, str):
        return value.encode("utf-16-be")
    if isinstance(value, bytes):
        return bytes((b + 128) & 0xFF for b in value)
    return value


def _stat(kind: StatKind, value: Any) -> StatValue:
    if kind is StatKind.DATE and isinstance(value, datetime.date):
        value = (value - _EPOCH).days
    elif kind is StatKind.DECIMAL:
        value = decimal.Decimal(value)
    elif kind in (StatKind.FLOAT, StatKind.DOUBLE):
        value = float(value)
    elif kind in (StatKind.INT, StatKind.LONG) and isinstance(value, bool):
        value = int(value)
    return StatValue(kind, value)


# -- base files: the footer ---------------------------------------------------------------------
def ranges_from_parquet(metadata: Any, columns: Sequence[str]) -> list[ColumnRange]:
    """The ranges of `columns` (top-level, in `metadata`'s Arrow schema) of a parquet file;
    `metadata`: its footer, pyarrow's `FileMetaData`."""
    arrow = metadata.schema.to_arrow_schema()
    leaves = {}
    for index in range(metadata.num_columns):
        path = metadata.schema.column(index).path
        if "." not in path:
            leaves[path] = index
    out = []
    for name in columns:
        if name not in leaves or name not in arrow.names:
            continue
        kind = stat_kind(arrow.field(name).type)
        if kind is None:
            continue
        found = _chunks_range(metadata, leaves[name], name, kind)
        if found is not None:
            out.append(found)
    return out


def _chunks_range(
    metadata: Any, leaf: int, name: str, kind: StatKind
) -> ColumnRange | None:
    values = nulls = size = uncompressed = 0
    lows: list[Any] = []
    highs: list[Any] = []
    raw = kind is StatKind.LONG or kind is StatKind.DATE
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(leaf)
        stats = chunk.statistics
        values += chunk.num_values
        size += chunk.total_compressed_size
        uncompressed += chunk.total_uncompressed_size
        if chunk.num_values == 0:
            continue
        if stats is None or not stats.has_null_count:
            return None
        nulls += stats.null_count
        if stats.null_count == chunk.num_values:
            continue  # all null: no bounds to merge
        if not stats.has_min_max:
            return None
        lows.append(stats.min_raw if raw else stats.min)
        highs.append(stats.max_raw if raw else stats.max)
    low = _stat(kind, min(lows, key=_java_key)) if lows else None
    high = _stat(kind, max(highs, key=_java_key)) if highs else None
    return ColumnRange(name, low, high, values, nulls, size, uncompressed)


# -- log files: the rows ------------------------------------------------------------------------
def ranges_from_table(rows: pa.Table, columns: Sequence[str]) -> list[ColumnRange]:
    """The ranges of `columns` over `rows` (a log file's records), sizes 0."""
    out = []
    for name in columns:
        if name not in rows.column_names:
            continue
        column = rows.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        kind = stat_kind(column.type)
        if kind is None:
            continue
        if pa.types.is_timestamp(column.type):
            column = column.cast(pa.int64())
        nulls = column.null_count
        low = high = None
        if nulls < len(column):
            if kind is StatKind.STRING and not _all_bmp_ordered(column):
                present = [v for v in column.to_pylist() if v is not None]
                bounds = (min(present, key=_java_key), max(present, key=_java_key))
            elif kind is StatKind.BYTES:
                present = [v for v in column.to_pylist() if v is not None]
                bounds = (min(present, key=_java_key), max(present, key=_java_key))
            else:
                found = pc.min_max(column).as_py()
                bounds = (found["min"], found["max"])
            nan = isinstance(bounds[0], float) and math.isnan(bounds[0])  # NaN alone: none
            if bounds[0] is not None and not nan:
                low, high = _stat(kind, bounds[0]), _stat(kind, bounds[1])
        out.append(ColumnRange(name, low, high, len(column), nulls))
    return out


def _all_bmp_ordered(column: pa.ChunkedArray) -> bool:
    """Do UTF-8 byte order and Java's UTF-16 order agree on these strings? They differ only
    between characters beyond U+FFFF and those in U+E000..U+FFFF: true when no value has a
    4-byte UTF-8 sequence (no character beyond U+FFFF)."""
    beyond = pc.any(pc.match_substring_regex(column, "[\\x{10000}-\\x{10FFFF}]")).as_py()
    return not beyond

"""A data file's column statistics, as Apache Hudi's metadata table keeps them (`column_stats`).

With `hoodie.metadata.index.column.stats.enable`, Apache Hudi records for every data file it
writes one `ColumnStatsRecord` per indexed column: min, max, value count (nulls included),
null count and the column's size in the file; readers skip the files whose ranges rule a
filter out. This module computes those statistics the way Apache Hudi does, from what our
writers have at hand, with no file access:

- a base file's from its parquet footer (`ranges_from_parquet`), as Apache Hudi's
  `ParquetUtils.readColumnStatsFromMetadata`: each row group's statistics as the file stores
  them, merged over row groups with Java's `compareTo` (so strings by UTF-16 code units, bytes
  as signed bytes, -0.0 below 0.0), counts and compressed/uncompressed sizes summed;
- a log file's from the rows its data block holds (`ranges_from_table`), as Apache Hudi's
  `HoodieTableMetadataUtil.collectColumnRangeMetadata` compares Avro values: strings by their
  UTF-8 bytes (Avro's `Utf8`), bytes as signed bytes (`ByteBuffer`), floats by
  `Double.compare` (NaN above every number, so a NaN is the max), sizes 0.

Apache Hudi 0.15 and 1.2 recorded exactly those orders when run (strings U+E000 and U+1F600,
bytes 0x01 and 0xFF, a NaN, in a log file of each: min U+E000, max U+1F600; min 0xFF, max
0x01; max NaN). The values are stored raw where Apache Hudi stores them raw: timestamps as
the stored long (LongWrapper, whatever the unit), dates as days (DateWrapper), decimals at
DecimalWrapper's scale 15. `columns_to_index` says which columns a table version indexes.

A column whose statistics a file lacks (a row group without them, a string statistic that is
not UTF-8, a NaN bound in a footer) gets no range: no record, so readers keep the file.
Apache Hudi records such a column without min and max (as all nulls where the statistics are
missing), which lets readers skip a file that matches.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .bloom_filter import BLOOM_TYPE_FOOTER
from .exceptions import HoodieError, InvalidConfigError
from .metadata_records import (
    ColumnStatsRecord,
    StatKind,
    StatValue,
    column_stats_key,
    partition_identifier,
)
from .schema import COMMIT_TIME, META_COLUMNS, PARTITION_PATH, RECORD_KEY

COLUMN_LIST_OPTION = "hoodie.metadata.index.column.stats.column.list"
MAX_COLUMNS_OPTION = "hoodie.metadata.index.column.stats.max.columns.to.index"
DEFAULT_MAX_COLUMNS = 32
# The meta columns Apache Hudi 1.x always indexes first (`META_COLS_TO_ALWAYS_INDEX`).
V8_META_COLUMNS = (COMMIT_TIME, PARTITION_PATH, RECORD_KEY)

_SCALE_15 = decimal.Decimal(1).scaleb(-15)  # DecimalWrapper: decimal(30, 15)
_WIDE = decimal.Context(prec=60)


# -- which columns ------------------------------------------------------------------------------
def stat_kind(dtype: pa.DataType) -> StatKind | None:
    """The wrapper Apache Hudi stores a column of this Arrow type's min and max in, or None
    when it has none: nested types, times, uint64 (beyond a long), float16, decimals that do
    not fit decimal(30, 15) exactly (Apache Hudi 1.2 skips those), null. Timestamps of any
    unit are LongWrapper (the stored long: Apache Hudi keeps them raw)."""
    if pa.types.is_dictionary(dtype):
        return stat_kind(dtype.value_type)
    if pa.types.is_boolean(dtype):
        return StatKind.BOOLEAN
    if any(is_type(dtype) for is_type in _INT_TYPES):
        return StatKind.INT
    if pa.types.is_int64(dtype) or pa.types.is_uint32(dtype) or pa.types.is_timestamp(dtype):
        return StatKind.LONG
    if pa.types.is_float32(dtype):
        return StatKind.FLOAT
    if pa.types.is_float64(dtype):
        return StatKind.DOUBLE
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or _is_view(dtype, "string"):
        return StatKind.STRING
    if (
        pa.types.is_binary(dtype)
        or pa.types.is_large_binary(dtype)
        or pa.types.is_fixed_size_binary(dtype)
        or _is_view(dtype, "binary")
    ):
        return StatKind.BYTES
    if pa.types.is_date32(dtype):
        return StatKind.DATE
    if pa.types.is_decimal(dtype) and dtype.scale <= 15 and dtype.precision - dtype.scale <= 15:
        return StatKind.DECIMAL
    return None


_INT_TYPES = (
    pa.types.is_int8,
    pa.types.is_int16,
    pa.types.is_int32,
    pa.types.is_uint8,
    pa.types.is_uint16,
)


def _is_view(dtype: pa.DataType, name: str) -> bool:
    test: Callable[[pa.DataType], bool] | None = getattr(pa.types, f"is_{name}_view", None)
    return test is not None and test(dtype)


def columns_to_index(
    schema: pa.Schema,
    table_version: int,
    column_list: Sequence[str] | None = None,
    max_columns: int = DEFAULT_MAX_COLUMNS,
) -> tuple[str, ...]:
    """The columns a table of `table_version` keeps statistics of, in Apache Hudi's order;
    `schema` is the stored one (meta columns first).

    Unset (None or empty) `column_list`: version 6 (Apache Hudi 0.15) takes every column, the
    five meta columns first; version 8 (1.x) takes `_hoodie_commit_time`,
    `_hoodie_partition_path`, `_hoodie_record_key`, then the first `max_columns` data columns
    (0.15 has no such limit). Columns without a wrapper (`stat_kind`) are passed over.

    Given `column_list`: those columns, each of which must exist and have a wrapper; version 8
    puts its three meta columns first all the same, as Apache Hudi 1.x does (they are in the
    schema unless the table does not populate meta fields)."""
    if max_columns < 0:
        raise InvalidConfigError(f"{MAX_COLUMNS_OPTION} is {max_columns}: it is at least 0")
    kinds = {field.name: stat_kind(field.type) for field in schema}
    always = V8_META_COLUMNS if table_version >= 8 else META_COLUMNS
    meta = [name for name in always if kinds.get(name) is not None]
    if not column_list:
        data = [f.name for f in schema if f.name not in META_COLUMNS and kinds[f.name]]
        return tuple(meta + (data[:max_columns] if table_version >= 8 else data))
    for name in column_list:
        if name not in kinds:
            raise InvalidConfigError(
                f"{COLUMN_LIST_OPTION} names the column {name!r}, which the table does not "
                f"have (its columns: {', '.join(schema.names)})"
            )
        if kinds[name] is None:
            raise InvalidConfigError(
                f"{COLUMN_LIST_OPTION} names the column {name!r} of type "
                f"{schema.field(name).type}, which has no column statistics in Apache Hudi's "
                "metadata table (nested, time, uint64, float16 and decimals beyond "
                "decimal(30, 15) have none)"
            )
    listed = list(column_list)
    return tuple(dict.fromkeys(meta + listed if table_version >= 8 else listed))


# -- the statistics -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnRange:
    """One column's statistics over one data file: min and max (None when every value is
    null or there is none), values (nulls included), nulls, and the column's compressed and
    uncompressed bytes in a base file (0 for log files, as Apache Hudi leaves them)."""

    column: str
    min_value: StatValue | None
    max_value: StatValue | None
    value_count: int
    null_count: int
    total_size: int = 0
    total_uncompressed_size: int = 0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (bytes as base64, decimals and non-finite floats as strings), so a
        range crosses from Spark tasks to the driver as text and comes back equal."""
        return {
            "column": self.column,
            "min": _stat_to_json(self.min_value),
            "max": _stat_to_json(self.max_value),
            "value_count": self.value_count,
            "null_count": self.null_count,
            "total_size": self.total_size,
            "total_uncompressed_size": self.total_uncompressed_size,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ColumnRange:
        """The range `to_json` gave; anything else is refused naming what is wrong."""
        try:
            counts = [
                data[name]
                for name in ("value_count", "null_count", "total_size", "total_uncompressed_size")
            ]
            if not isinstance(data["column"], str) or not all(_is_int(n) for n in counts):
                raise TypeError("the column is not a string or a count is not an integer")
            return cls(
                data["column"], _stat_from_json(data["min"]), _stat_from_json(data["max"]), *counts
            )
        except (KeyError, TypeError, ValueError, binascii.Error, decimal.DecimalException) as e:
            raise HoodieError(f"{str(data)[:300]} is not a column range: {e!r}") from e

    def record(self, partition_path: str, file_name: str) -> ColumnStatsRecord:
        """The `column_stats` record of this range of `file_name` (a name, no folder) in the
        data partition `partition_path` (`""` when unpartitioned)."""
        key = column_stats_key(partition_identifier(partition_path), file_name, self.column)
        return ColumnStatsRecord(
            key,
            file_name,
            self.column,
            self.min_value,
            self.max_value,
            self.value_count,
            self.null_count,
            self.total_size,
            self.total_uncompressed_size,
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_JSON_TYPES: dict[StatKind, type] = {
    StatKind.BOOLEAN: bool,
    StatKind.INT: int,
    StatKind.LONG: int,
    StatKind.DATE: int,
    StatKind.LOCAL_DATE: int,
    StatKind.TIMESTAMP_MICROS: int,
    StatKind.STRING: str,
}
_FLOATS = (StatKind.FLOAT, StatKind.DOUBLE)


def _stat_to_json(stat: StatValue | None) -> dict[str, Any] | None:
    if stat is None:
        return None
    value = stat.value
    if stat.kind is StatKind.BYTES:
        value = base64.b64encode(value).decode("ascii")
    elif stat.kind is StatKind.DECIMAL:
        value = str(value)
    elif stat.kind in _FLOATS:
        value = value if math.isfinite(value) else repr(value)  # 'nan', 'inf', '-inf'
    elif stat.kind not in _JSON_TYPES:
        raise HoodieError(f"a {stat.kind.value} is no statistic of a data file's column")
    return {"kind": stat.kind.value, "value": value}


def _stat_from_json(data: Any) -> StatValue | None:
    if data is None:
        return None
    kind, value = StatKind(data["kind"]), data["value"]
    if kind is StatKind.BYTES:
        return StatValue(kind, base64.b64decode(value, validate=True))
    if kind is StatKind.DECIMAL:
        return StatValue(kind, decimal.Decimal(value))
    if kind in _FLOATS:
        if isinstance(value, str) and value in ("nan", "inf", "-inf"):
            return StatValue(kind, float(value))
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"a {kind.value} holds a number, not {value!r}")
        return StatValue(kind, float(value))
    expected = _JSON_TYPES.get(kind)
    if expected is None or type(value) is not expected:
        raise TypeError(f"a {kind.value} does not hold {value!r}")
    return StatValue(kind, value)


# -- Java's orders ------------------------------------------------------------------------------
_FLIP_HIGH_BIT = bytes(b ^ 0x80 for b in range(256))


def _java_order(kind: StatKind) -> Callable[[Any], Any]:
    """A sort key putting values in the order Java's `compareTo` puts Apache Hudi's values in:
    strings by UTF-16 code units, bytes as signed bytes (`ByteBuffer`), floats as
    `Double.compare` (-0.0 below 0.0, NaN above all)."""
    if kind is StatKind.STRING:
        return lambda text: text.encode("utf-16-be", "surrogatepass")
    if kind is StatKind.BYTES:
        return lambda raw: raw.translate(_FLIP_HIGH_BIT)
    if kind in _FLOATS:
        return lambda x: (True, 0.0, 0.0) if math.isnan(x) else (False, x, math.copysign(1, x))
    return lambda value: value


# -- base files ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Part:
    """One row group's statistics of a column (min and max None when all its values are null)."""

    low: Any
    high: Any
    values: int
    nulls: int
    size: int
    uncompressed: int


def ranges_from_parquet(metadata: pq.FileMetaData, columns: Sequence[str]) -> list[ColumnRange]:
    """The ranges of `columns` (top-level) in a parquet file with this footer metadata (as
    `ParquetWriter` gives it after closing: `writer.writer.metadata`), in `columns`' order. A
    column the file lacks, or whose statistics it lacks in a row group, gets no range; a
    column without a wrapper is refused. A file of no rows has ranges of counts 0."""
    types = {field.name: field.type for field in metadata.schema.to_arrow_schema()}
    leaves = {}  # top-level column -> its leaf's index: the leaf whose path is its own name
    for index in range(metadata.num_columns):
        leaf = metadata.schema.column(index)
        if leaf.path == leaf.name:
            leaves[leaf.name] = index
    ranges = []
    for name in columns:
        if name not in leaves or name not in types:
            continue
        kind = _kind_of(name, types[name])
        parts = [
            _row_group_part(metadata.row_group(group).column(leaves[name]), kind, types[name])
            for group in range(metadata.num_row_groups)
        ]
        if all(part is not None for part in parts):
            ranges.append(_merged(name, kind, [p for p in parts if p is not None]))
    return ranges


def _kind_of(name: str, dtype: pa.DataType) -> StatKind:
    kind = stat_kind(dtype)
    if kind is None:
        raise HoodieError(
            f"column {name!r} of type {dtype} has no column statistics in Apache Hudi's "
            "metadata table (columns_to_index leaves it out)"
        )
    return kind


def _row_group_part(chunk: Any, kind: StatKind, dtype: pa.DataType) -> _Part | None:
    """A column chunk's statistics as Apache Hudi reads them (through parquet-mr): min/max as
    the file stores them (timestamps and dates raw, strings decoded, decimals at scale 15, a
    zero min -0.0 and a zero max +0.0), `num_values` (nulls included), the null count and
    sizes; None when they are missing or unusable."""
    values = chunk.num_values
    stats = chunk.statistics if chunk.is_stats_set else None
    low = high = None
    if stats is None or not stats.has_null_count:
        if values:
            return None
        nulls = 0
    else:
        nulls = stats.null_count
        if stats.has_min_max:
            try:
                low = _footer_value(stats, "min", kind, dtype)
                high = _footer_value(stats, "max", kind, dtype)
            except UnicodeDecodeError:
                return None
            if kind in _FLOATS:
                if math.isnan(low) or math.isnan(high):
                    return None  # parquet-mr's readers drop such bounds too
                # as parquet-mr reads zeros (PARQUET-1222): a min of -0.0, a max of +0.0
                low, high = (-0.0 if low == 0 else low), (0.0 if high == 0 else high)
        elif nulls < values:
            return None
    size, uncompressed = chunk.total_compressed_size, chunk.total_uncompressed_size
    return _Part(low, high, values, nulls, size, uncompressed)


def _footer_value(stats: Any, which: str, kind: StatKind, dtype: pa.DataType) -> Any:
    raw = getattr(stats, f"{which}_raw")
    if kind is StatKind.STRING:
        return raw.decode("utf-8")
    if kind in (StatKind.BYTES, StatKind.DATE) or pa.types.is_timestamp(dtype):
        return raw  # bytes, days, the stored long
    value = getattr(stats, which)  # ints of any width and sign, floats, booleans, decimals
    return _scale_15(value) if kind is StatKind.DECIMAL else value


def _scale_15(value: decimal.Decimal) -> decimal.Decimal:
    return value.quantize(_SCALE_15, context=_WIDE)


def _merged(name: str, kind: StatKind, parts: list[_Part]) -> ColumnRange:
    """Row groups' statistics merged as `HoodieColumnRangeMetadata.merge` merges them."""
    order = _java_order(kind)
    lows = [p.low for p in parts if p.low is not None]
    highs = [p.high for p in parts if p.high is not None]
    return ColumnRange(
        name,
        StatValue(kind, min(lows, key=order)) if lows else None,
        StatValue(kind, max(highs, key=order)) if highs else None,
        sum(p.values for p in parts),
        sum(p.nulls for p in parts),
        sum(p.size for p in parts),
        sum(p.uncompressed for p in parts),
    )


# -- log files ----------------------------------------------------------------------------------
def ranges_from_table(rows: pa.Table, columns: Sequence[str]) -> list[ColumnRange]:
    """The ranges of `columns` over the rows a log file's data block holds (as stored: meta
    columns stamped), in `columns`' order, sizes 0. Values as `ranges_from_parquet` gives them
    (timestamps as the stored long in the column's unit, dates as days, decimals at scale 15),
    ordered as Apache Hudi orders a log's values (see the module's docstring: strings by UTF-8
    bytes, bytes signed, NaN the greatest float). A column the rows lack gets no range; a
    column without a wrapper is refused; no rows give counts 0."""
    ranges = []
    for name in columns:
        if name not in rows.column_names:
            continue
        column = rows.column(name)
        kind = _kind_of(name, column.type)
        low, high = _log_min_max(column, kind)
        ranges.append(
            ColumnRange(
                name,
                None if low is None else StatValue(kind, low),
                None if high is None else StatValue(kind, high),
                len(column),
                column.null_count,
            )
        )
    return ranges


def _log_min_max(column: pa.ChunkedArray, kind: StatKind) -> tuple[Any, Any]:
    dtype = column.type
    if pa.types.is_dictionary(dtype):
        column, dtype = column.cast(dtype.value_type), dtype.value_type
    if pa.types.is_timestamp(dtype):
        column = column.cast(pa.int64())  # the stored long
    elif kind is StatKind.DATE:
        column = column.cast(pa.int32())  # days
    elif _is_view(dtype, "string"):
        column = column.cast(pa.large_string())
    elif _is_view(dtype, "binary"):
        column = column.cast(pa.large_binary())
    if kind in _FLOATS:
        return _java_float_min_max(column)
    if kind is StatKind.BYTES:
        flipped = pa.chunked_array([_flip_high_bits(c) for c in column.chunks], column.type)
        low, high = _min_max(flipped)
        if low is None:
            return None, None
        return low.translate(_FLIP_HIGH_BIT), high.translate(_FLIP_HIGH_BIT)
    low, high = _min_max(column)
    if kind is StatKind.DECIMAL and low is not None:
        return _scale_15(low), _scale_15(high)
    return low, high


def _min_max(column: pa.ChunkedArray) -> tuple[Any, Any]:
    bounds = pc.min_max(column)
    return bounds["min"].as_py(), bounds["max"].as_py()


def _java_float_min_max(column: pa.ChunkedArray) -> tuple[float | None, float | None]:
    """Min and max as `Double.compare` orders: -0.0 below 0.0 (Arrow holds them equal and
    may return either) and NaN above every number (Arrow skips NaN)."""
    values = column.drop_null().to_numpy()
    if not len(values):
        return None, None
    nan = np.isnan(values)
    if nan.all():
        return math.nan, math.nan
    numbers = values[~nan]
    low, high = float(numbers.min()), float(numbers.max())
    zeros = np.signbit(numbers[numbers == 0])
    if low == 0:
        low = -0.0 if zeros.any() else 0.0
    if high == 0:
        high = 0.0 if not zeros.all() else -0.0
    return low, math.nan if nan.any() else high


def _flip_high_bits(array: pa.Array) -> pa.Array:
    """The binary array with the top bit of every byte flipped: Arrow's order of the result
    (unsigned bytes) is Java's order of the original (signed bytes)."""
    *head, data = array.buffers()
    if data is None:
        return array
    flipped = pa.py_buffer(np.bitwise_xor(np.frombuffer(data, np.uint8), 0x80).tobytes())
    return pa.Array.from_buffers(
        array.type, len(array), [*head, flipped], array.null_count, array.offset
    )


SIMPLE_FILTER_TYPE = "SIMPLE"  # a footer without a type code holds a simple filter


def filter_type_of(footer: Mapping[bytes, bytes]) -> str:
    """The type code of a base file's footer bloom filter (`DYNAMIC_V0`, `SIMPLE`), as the
    metadata table's `bloom_filters` record names it."""
    kind = footer.get(BLOOM_TYPE_FOOTER)
    return kind.decode("ascii") if kind else SIMPLE_FILTER_TYPE


# -- what a write task records -----------------------------------------------------------------
@dataclass(frozen=True)
class IndexedColumns:
    """The columns `column_stats` indexes: `fixed` (a configured list) or, when None, the
    table version's default for each file's schema (`columns_to_index`)."""

    table_version: int
    fixed: tuple[str, ...] | None = None
    max_columns: int = DEFAULT_MAX_COLUMNS

    def of(self, schema: pa.Schema) -> tuple[str, ...]:
        """The indexed columns a file of `schema` holds (a column added later is not in an
        older file; the configured list is checked against the table by `columns_to_index`
        when the write starts)."""
        if self.fixed is None:
            return columns_to_index(schema, self.table_version, None, self.max_columns)
        names = set(schema.names)
        listed = columns_to_index(schema, self.table_version, [c for c in self.fixed
                                                                if c in names])  # fmt: skip
        return listed if any(c in names for c in self.fixed) else ()


@dataclass(frozen=True)
class FileIndexing:
    """What a write task records of each file it writes for the metadata table's indexes,
    handed to the driver with the file's write stat (`WriteStat.column_ranges`), so that the
    commit does not read the files back: the indexed columns' ranges when `column_stats` is
    kept (`columns`). A base file's bloom filter is not handed over (~431 KB serialized at
    the default 60,000 entries: a write of 1,000 files would bring ~430 MB to the driver):
    the commit reads it from the file's footer, in Spark tasks for many files
    (`transaction/metadata_indexes.py`)."""

    columns: IndexedColumns | None = None
    # `record_index` is kept: the keys each written file's group gained and lost go to the
    # commit with its stat (`transaction/record_index.hand_over_keys`)
    record_index: bool = False

    def base_file(self, metadata: pq.FileMetaData) -> list[dict[str, Any]] | None:
        """A base file's column ranges from its footer as written (None: not kept)."""
        if self.columns is None:
            return None
        columns = self.columns.of(metadata.schema.to_arrow_schema())
        return [r.to_json() for r in ranges_from_parquet(metadata, columns)]

    def log_file(self, rows: pa.Table | None, schema: pa.Schema) -> list[dict[str, Any]] | None:
        """A log file's column ranges: over the rows of its data block (None: deletes only,
        whose ranges are of `schema`'s indexed columns, with no rows)."""
        if self.columns is None:
            return None
        if rows is None:
            rows = schema.empty_table()
        return [r.to_json() for r in ranges_from_table(rows, self.columns.of(rows.schema))]

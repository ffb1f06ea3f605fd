"""A data file's column statistics as Apache Hudi's `column_stats` records hold them
(hoodie/column_stats.py): from pyarrow-written footers (every wrapper, nulls, row groups merged
in Java's orders, NaN and -0.0, columns without statistics left out) and from a log block's
rows (Avro's orders, as Apache Hudi 0.15 and 1.2 recorded them for a log file holding
U+E000 and U+1F600, bytes 0x01 and 0xFF and a NaN); which columns each table version indexes;
the JSON form and the records they become.

Checked once against Apache Hudi itself (not a test: it needs tables Apache Hudi wrote): every
live base and log file of tables 0.15 and 1.2 wrote with column stats on gave the records
Apache Hudi wrote, sizes and column sets included."""

from __future__ import annotations

import datetime
import io
import json
import math
import struct
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.column_stats import (
    COLUMN_LIST_OPTION,
    ColumnRange,
    columns_to_index,
    ranges_from_parquet,
    ranges_from_table,
    stat_kind,
)
from hoodie.exceptions import HoodieError, InvalidConfigError
from hoodie.metadata_records import (
    ColumnStatsRecord,
    StatKind,
    StatValue,
    column_stats_key,
    decode_metadata_record,
    encode_metadata_record,
    metadata_record_schema,
)
from hoodie.schema import META_COLUMNS

NAN = float("nan")
EMOJI = "\U0001f600"  # beyond U+FFFF: UTF-16 D83D DE00, UTF-8 F0 9F 98 80
PRIVATE = "\ue000"  # UTF-16 E000, UTF-8 EE 80 80


def footer(table: pa.Table, row_group_size: int | None = None, **options) -> pq.FileMetaData:
    """The footer metadata pyarrow's writer gives for `table` (what our writers hand over)."""
    buffer = io.BytesIO()
    with pq.ParquetWriter(buffer, table.schema, **options) as writer:
        writer.write_table(table, row_group_size=row_group_size)
    return writer.writer.metadata


def by_column(ranges: list[ColumnRange]) -> dict[str, ColumnRange]:
    return {r.column: r for r in ranges}


def bounds(column_range: ColumnRange) -> tuple:
    low, high = column_range.min_value, column_range.max_value
    return (None if low is None else low.value, None if high is None else high.value)


def chunk_sizes(metadata: pq.FileMetaData, leaf: int) -> tuple[int, int]:
    chunks = [metadata.row_group(g).column(leaf) for g in range(metadata.num_row_groups)]
    return (
        sum(c.total_compressed_size for c in chunks),
        sum(c.total_uncompressed_size for c in chunks),
    )


def is_negative_zero(value: float) -> bool:
    return value == 0 and math.copysign(1, value) < 0


# One column of every type with a wrapper: (values, Arrow type, wrapper, min, max) where min
# and max are as stored (a null in every column, so null counts are 1).
TYPES = {
    "b": ([True, None, False], pa.bool_(), StatKind.BOOLEAN, False, True),
    "i8": ([5, None, -7], pa.int8(), StatKind.INT, -7, 5),
    "i16": ([300, None, -300], pa.int16(), StatKind.INT, -300, 300),
    "i32": ([2**31 - 1, None, -(2**31)], pa.int32(), StatKind.INT, -(2**31), 2**31 - 1),
    "u8": ([255, None, 0], pa.uint8(), StatKind.INT, 0, 255),
    "u16": ([65535, None, 1], pa.uint16(), StatKind.INT, 1, 65535),
    "u32": ([4_000_000_000, None, 1], pa.uint32(), StatKind.LONG, 1, 4_000_000_000),
    "i64": ([2**63 - 1, None, -(2**63)], pa.int64(), StatKind.LONG, -(2**63), 2**63 - 1),
    "f32": ([1.5, None, -2.25], pa.float32(), StatKind.FLOAT, -2.25, 1.5),
    "f64": ([1e300, None, -0.5], pa.float64(), StatKind.DOUBLE, -0.5, 1e300),
    "s": (["n0002", None, "n0010"], pa.string(), StatKind.STRING, "n0002", "n0010"),
    "ls": (["b", None, "a"], pa.large_string(), StatKind.STRING, "a", "b"),
    "bin": ([b"\x02\x01", None, b"\x00"], pa.binary(), StatKind.BYTES, b"\x00", b"\x02\x01"),
    "lbin": ([b"z", None, b"y"], pa.large_binary(), StatKind.BYTES, b"y", b"z"),
    "fbin": ([b"ab", None, b"aa"], pa.binary(2), StatKind.BYTES, b"aa", b"ab"),
    "day": (
        [datetime.date(2024, 1, 1), None, datetime.date(1969, 12, 31)],
        pa.date32(),
        StatKind.DATE,
        -1,
        19723,
    ),
    "t_us": (
        [1704067200000000, None, 5],
        pa.timestamp("us", "UTC"),
        StatKind.LONG,
        5,
        1704067200000000,
    ),
    "t_ns": (
        [1704067200000000123, None, -5],
        pa.timestamp("ns"),
        StatKind.LONG,
        -5,
        1704067200000000123,
    ),
    "t_ms": ([1704067200000, None, 7], pa.timestamp("ms"), StatKind.LONG, 7, 1704067200000),
    "dec": (
        [Decimal("1.25"), None, Decimal("-3.50")],
        pa.decimal128(5, 2),
        StatKind.DECIMAL,
        Decimal("-3.500000000000000"),
        Decimal("1.250000000000000"),
    ),
    "dec_wide": (
        [Decimal("123456789012345.123456789012345"), None, Decimal("-1")],
        pa.decimal256(30, 15),
        StatKind.DECIMAL,
        Decimal("-1.000000000000000"),
        Decimal("123456789012345.123456789012345"),
    ),
    "dict": (["q", None, "p"], pa.dictionary(pa.int8(), pa.string()), StatKind.STRING, "p", "q"),
}


def every_type() -> pa.Table:
    arrays = {}
    for name, (values, dtype, *_) in TYPES.items():
        if pa.types.is_dictionary(dtype):
            arrays[name] = pa.array(values, dtype.value_type).dictionary_encode()
        else:
            arrays[name] = pa.array(values, dtype)
    return pa.table(arrays)


# -- stat_kind ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(TYPES))
def test_every_indexable_type_has_its_wrapper(name):
    assert stat_kind(TYPES[name][1]) is TYPES[name][2]


@pytest.mark.parametrize(
    "dtype, kind",
    [
        (pa.string_view(), StatKind.STRING),
        (pa.binary_view(), StatKind.BYTES),
        (pa.timestamp("s"), StatKind.LONG),
        (pa.dictionary(pa.int32(), pa.int64()), StatKind.LONG),
        (pa.decimal128(15, 0), StatKind.DECIMAL),
        (pa.decimal128(30, 15), StatKind.DECIMAL),
        (pa.decimal128(5, -2), StatKind.DECIMAL),  # up to 9,999,900: 7 integer digits
    ],
)
def test_more_types_with_a_wrapper(dtype, kind):
    assert stat_kind(dtype) is kind


@pytest.mark.parametrize(
    "dtype",
    [
        pa.struct([("a", pa.int32())]),
        pa.list_(pa.int32()),
        pa.map_(pa.string(), pa.int32()),
        pa.time32("ms"),
        pa.time64("us"),
        pa.uint64(),  # beyond a long
        pa.float16(),
        pa.null(),
        pa.date64(),  # our tables store dates as date32
        pa.duration("us"),
        pa.decimal128(16, 0),  # 16 integer digits: beyond decimal(30, 15)
        pa.decimal128(17, 16),  # 16 fraction digits
        pa.decimal128(38, 20),
        pa.decimal128(5, -11),  # 16 integer digits
        pa.dictionary(pa.int8(), pa.time64("us")),
    ],
)
def test_types_without_a_wrapper(dtype):
    assert stat_kind(dtype) is None


# -- base files: footers ------------------------------------------------------------------------
def test_every_type_from_a_footer():
    table = every_type()
    metadata = footer(table)
    ranges = ranges_from_parquet(metadata, table.column_names)
    assert [r.column for r in ranges] == table.column_names
    for leaf, found in enumerate(ranges):
        _, _, kind, low, high = TYPES[found.column]
        assert found.min_value == StatValue(kind, low), found.column
        assert found.max_value == StatValue(kind, high), found.column
        assert type(found.min_value.value) is type(low), found.column
        assert (found.value_count, found.null_count) == (3, 1), found.column  # nulls counted
        sizes = (found.total_size, found.total_uncompressed_size)
        assert sizes == chunk_sizes(metadata, leaf), found.column
        assert found.total_size > 0
    decimal = by_column(ranges)["dec"].min_value.value
    assert decimal.as_tuple().exponent == -15  # DecimalWrapper's scale


@pytest.mark.parametrize("as_integer", [False, True])
def test_decimals_stored_as_integers_or_bytes_read_alike(as_integer):
    table = pa.table({"d": pa.array([Decimal("0.02"), Decimal("-7.10")], pa.decimal128(9, 2))})
    (found,) = ranges_from_parquet(footer(table, store_decimal_as_integer=as_integer), ["d"])
    assert bounds(found) == (Decimal("-7.100000000000000"), Decimal("0.020000000000000"))


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
def test_timestamps_are_the_stored_long_in_their_unit(unit):
    moments = [datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)] * 2
    table = pa.table({"t": pa.array(moments, pa.timestamp(unit, "UTC"))})
    (found,) = ranges_from_parquet(footer(table), ["t"])
    per_second = {"ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    assert found.min_value == StatValue(StatKind.LONG, 1704067200 * per_second)


def test_row_groups_are_merged_min_of_mins_max_of_maxes_and_sums():
    table = pa.table({"id": pa.array([5, 3, None, 9, 1, None, None], pa.int32())})
    metadata = footer(table, row_group_size=2)
    assert metadata.num_row_groups == 4
    (found,) = ranges_from_parquet(metadata, ["id"])
    assert bounds(found) == (1, 9)
    assert (found.value_count, found.null_count) == (7, 3)
    assert (found.total_size, found.total_uncompressed_size) == chunk_sizes(metadata, 0)


def test_strings_across_row_groups_merge_in_java_order():
    """A row group's bounds are parquet's (UTF-8 bytes); Apache Hudi merges row groups by
    `String.compareTo` (UTF-16 units), where U+1F600 (D83D...) sorts below U+E000."""
    one_group = pa.table({"s": [PRIVATE, EMOJI]})
    (single,) = ranges_from_parquet(footer(one_group), ["s"])
    assert bounds(single) == (PRIVATE, EMOJI)
    two_groups = footer(one_group, row_group_size=1)
    assert two_groups.num_row_groups == 2
    (merged,) = ranges_from_parquet(two_groups, ["s"])
    assert bounds(merged) == (EMOJI, PRIVATE)
    accents = pa.table({"s": ["zèbre", "été", "Ärger", "abc"]})
    (found,) = ranges_from_parquet(footer(accents, row_group_size=1), ["s"])
    assert bounds(found) == ("abc", "été")  # below U+E000 both orders agree


def test_bytes_across_row_groups_merge_as_signed_bytes():
    table = pa.table({"b": pa.array([b"\x01", b"\xff", b"\x7f"], pa.binary())})
    (merged,) = ranges_from_parquet(footer(table, row_group_size=1), ["b"])
    assert bounds(merged) == (b"\xff", b"\x7f")  # 0xFF is -1 as Java's ByteBuffer compares
    (single,) = ranges_from_parquet(footer(table), ["b"])
    assert bounds(single) == (b"\x01", b"\xff")  # one row group: parquet's unsigned bounds


def test_all_null_column_has_no_bounds():
    table = pa.table({"n": pa.array([None, None, None], pa.string()), "k": [1, 2, 3]})
    metadata = footer(table, row_group_size=2)
    (found,) = ranges_from_parquet(metadata, ["n"])
    assert bounds(found) == (None, None)
    assert (found.value_count, found.null_count) == (3, 3)
    assert found.total_size == chunk_sizes(metadata, 0)[0] > 0


def test_a_null_row_group_does_not_hide_the_others_bounds():
    table = pa.table({"n": pa.array([None, None, 4, 2], pa.int64())})
    (found,) = ranges_from_parquet(footer(table, row_group_size=2), ["n"])
    assert bounds(found) == (2, 4)
    assert (found.value_count, found.null_count) == (4, 2)


def test_a_file_of_no_rows_has_counts_zero():
    table = every_type().slice(0, 0)
    metadata = footer(table)
    ranges = ranges_from_parquet(metadata, table.column_names)
    assert [r.column for r in ranges] == table.column_names
    for found in ranges:
        assert bounds(found) == (None, None)
        assert (found.value_count, found.null_count) == (0, 0)


def test_nan_is_no_bound_of_a_footer():
    table = pa.table({"x": [1.0, NAN, 3.0], "nan": [NAN, NAN, None], "k": [1, 2, 3]})
    found = by_column(ranges_from_parquet(footer(table), ["x", "nan"]))
    assert bounds(found["x"]) == (1.0, 3.0)  # parquet writers leave NaN out
    assert "nan" not in found  # values but no bounds: no range, so readers keep the file


def test_zero_bounds_are_read_as_parquet_mr_reads_them():
    """A zero min is -0.0 and a zero max +0.0 (PARQUET-1222), whatever the footer says:
    Apache Hudi recorded -0.0 for files whose footer (parquet-mr's) said 0.0."""
    table = pa.table(
        {
            "up": pa.array([0.0, 1.0], pa.float64()),
            "down": pa.array([-1.0, -0.0], pa.float32()),
            "zeros": pa.array([0.0, 0.0], pa.float64()),
        }
    )
    found = by_column(ranges_from_parquet(footer(table), table.column_names))
    assert is_negative_zero(bounds(found["up"])[0]) and bounds(found["up"])[1] == 1.0
    low, high = bounds(found["down"])
    assert low == -1.0 and high == 0 and math.copysign(1, high) > 0
    low, high = bounds(found["zeros"])
    assert is_negative_zero(low) and math.copysign(1, high) > 0


def test_a_column_without_statistics_is_left_out():
    table = pa.table(
        {"a": [1, 2], "b": ["x", None], "c": [None, None]},
        pa.schema([("a", pa.int64()), ("b", pa.string()), ("c", pa.string())]),
    )
    metadata = footer(table, write_statistics=["a"])
    assert [r.column for r in ranges_from_parquet(metadata, ["a", "b"])] == ["a"]
    # one row group without statistics is enough
    two = footer(table, write_statistics=["a"], row_group_size=1)
    assert [r.column for r in ranges_from_parquet(two, ["b"])] == []


def test_a_column_the_file_lacks_is_left_out():
    table = pa.table({"a": [1, 2]})
    assert [r.column for r in ranges_from_parquet(footer(table), ["z", "a"])] == ["a"]


def test_a_column_without_a_wrapper_is_refused():
    table = pa.table(
        {
            "d": pa.array([Decimal("1.5")], pa.decimal128(38, 20)),
            "t": pa.array([1], pa.time64("us")),
        }
    )
    metadata = footer(table)
    for column in ("d", "t"):
        with pytest.raises(HoodieError, match=f"column '{column}' of type"):
            ranges_from_parquet(metadata, [column])


def test_only_top_level_columns_are_read():
    """A struct's field has a leaf path spelling a top-level column's name (`a.b`) or a leaf
    name that is one (`b`): the top-level column's chunk is the one read."""
    table = pa.table(
        {
            "a.b": pa.array([1, 2], pa.int64()),
            "b": pa.array([3, 4], pa.int64()),
            "a": pa.array([{"b": 100}, {"b": 200}]),
            "l": pa.array([[7], [8]]),
        }
    )
    found = by_column(ranges_from_parquet(footer(table), ["a.b", "b", "l", "a", "element"]))
    assert list(found) == ["a.b", "b"]
    assert (bounds(found["a.b"]), bounds(found["b"])) == ((1, 2), (3, 4))


def patched_footer(table: pa.Table, old: bytes, new: bytes) -> pq.FileMetaData:
    """The footer of `table`'s file with the bytes `old` (a statistic) replaced by `new`, as
    another writer (parquet-mr) would have written the statistic."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    data = buffer.getvalue()
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    assert old in data[start:]
    patched = data[:start] + data[start:].replace(old, new)
    return pq.ParquetFile(io.BytesIO(patched)).metadata


def test_a_zero_min_in_a_footer_is_read_as_negative_zero():
    """parquet-mr writes a min of +0.0 (pyarrow writes -0.0) and reads it as -0.0
    (PARQUET-1222): Apache Hudi recorded -0.0 for such files."""
    table = pa.table({"x": pa.array([0.0, 1.0], pa.float64())})
    negative_zero, zero = struct.pack("<d", -0.0), struct.pack("<d", 0.0)
    metadata = patched_footer(table, negative_zero, zero)
    assert str(metadata.row_group(0).column(0).statistics.min) == "0.0"
    (found,) = ranges_from_parquet(metadata, ["x"])
    assert is_negative_zero(bounds(found)[0]) and bounds(found)[1] == 1.0


def test_a_nan_bound_in_a_footer_leaves_the_column_out():
    """parquet-mr writes NaN bounds; its readers then drop them (Apache Hudi recorded min 0.0,
    max 0.0 for a file of 0.0 and NaN, which would skip the file for `x = 5` had it held 5.0):
    no range, so readers keep the file."""
    table = pa.table({"x": pa.array([0.5, 5.0], pa.float64())})
    metadata = patched_footer(table, struct.pack("<d", 5.0), struct.pack("<d", NAN))
    assert math.isnan(metadata.row_group(0).column(0).statistics.max)
    assert ranges_from_parquet(metadata, ["x"]) == []


# -- log files: rows ----------------------------------------------------------------------------
def test_every_type_from_rows_as_from_a_footer():
    """Where both orders agree (no NaN, zeros, bytes above 0x7F or characters above U+E000),
    a log block's ranges are a footer's without sizes."""
    table = every_type()
    from_rows = ranges_from_table(table, table.column_names)
    from_footer = ranges_from_parquet(footer(table), table.column_names)
    assert [r.column for r in from_rows] == table.column_names
    for rows_range, footer_range in zip(from_rows, from_footer):
        assert (rows_range.total_size, rows_range.total_uncompressed_size) == (0, 0)
        sizes = {"total_size": 0, "total_uncompressed_size": 0}
        assert rows_range == ColumnRange(**{**footer_range.__dict__, **sizes}), rows_range.column
        low, high = bounds(rows_range)
        assert type(low) is type(bounds(footer_range)[0]), rows_range.column


def test_rows_order_strings_by_utf8_as_apache_hudi_does():
    """Apache Hudi compares a log's strings as Avro `Utf8`s (UTF-8 bytes): 0.15 and 1.2 both
    recorded min U+E000, max U+1F600 for a log of these two."""
    rows = pa.table({"s": [EMOJI, PRIVATE, None, "zèbre"]})
    (found,) = ranges_from_table(rows, ["s"])
    assert bounds(found) == ("zèbre", EMOJI)
    (pair,) = ranges_from_table(pa.table({"s": [EMOJI, PRIVATE]}), ["s"])
    assert bounds(pair) == (PRIVATE, EMOJI)


def test_rows_order_bytes_as_signed_bytes():
    """Apache Hudi 0.15 and 1.2 recorded min 0xFF, max 0x01 for a log of these two."""
    (pair,) = ranges_from_table(pa.table({"b": pa.array([b"\x01", b"\xff"])}), ["b"])
    assert bounds(pair) == (b"\xff", b"\x01")
    chunks = pa.chunked_array(
        [
            pa.array([b"\x80", None, b"\x7f\xff", b""], pa.binary()).slice(1),
            pa.array([b"\x7f", b"\x00\x80", None], pa.binary()),
        ]
    )
    (found,) = ranges_from_table(pa.table({"b": chunks}), ["b"])
    assert bounds(found) == (b"", b"\x7f\xff")
    assert (found.value_count, found.null_count) == (6, 2)
    for dtype in (pa.large_binary(), pa.binary_view()):
        rows = pa.table({"b": pa.array([b"\x01", b"\xff", None], dtype)})
        assert bounds(ranges_from_table(rows, ["b"])[0]) == (b"\xff", b"\x01")
    fixed = pa.table({"b": pa.array([b"\x01\x00", b"\xff\x00", b"\x00\xff"], pa.binary(2))})
    assert bounds(ranges_from_table(fixed, ["b"])[0]) == (b"\xff\x00", b"\x01\x00")


def test_rows_make_nan_the_greatest_float():
    """Apache Hudi compares a log's doubles with `Double.compare`: 0.15 and 1.2 both recorded
    max NaN for a log of 1.0 and NaN."""
    rows = pa.table(
        {
            "x": pa.array([1.0, NAN, -2.0, None], pa.float64()),
            "f": pa.array([NAN, 0.5], pa.float32()).take([0, 1, 0, 1]),
            "all_nan": pa.array([NAN, None, NAN, None], pa.float64()),
        }
    )
    found = by_column(ranges_from_table(rows, rows.column_names))
    low, high = bounds(found["x"])
    assert low == -2.0 and math.isnan(high)
    low, high = bounds(found["f"])
    assert low == 0.5 and math.isnan(high)
    assert all(math.isnan(v) for v in bounds(found["all_nan"]))
    assert (found["all_nan"].value_count, found["all_nan"].null_count) == (4, 2)  # NaN counts


def test_rows_put_negative_zero_below_zero():
    rows = pa.table(
        {
            "mixed": pa.array([0.0, -0.0, 0.0], pa.float64()),
            "plus": pa.array([0.0, 2.0, None], pa.float64()),
            "minus": pa.array([-0.0, -3.0, -0.0], pa.float32()),
        }
    )
    found = by_column(ranges_from_table(rows, rows.column_names))
    low, high = bounds(found["mixed"])
    assert is_negative_zero(low) and high == 0 and not is_negative_zero(high)
    low, high = bounds(found["plus"])
    assert low == 0 and not is_negative_zero(low)  # no -0.0 among the rows
    low, high = bounds(found["minus"])
    assert low == -3.0 and is_negative_zero(high)


def test_rows_keep_raw_timestamps_days_and_decimals_at_scale_15():
    rows = pa.table(
        {
            "t": pa.array([1704067200000000, 1], pa.timestamp("us", "UTC")),
            "t_ns": pa.array([3, 2], pa.timestamp("ns")),
            "day": pa.array([datetime.date(1970, 1, 2), datetime.date(1960, 1, 1)]),
            "dec": pa.array([Decimal("0.02"), Decimal("-1")], pa.decimal128(4, 2)),
        }
    )
    found = by_column(ranges_from_table(rows, rows.column_names))
    assert found["t"].min_value == StatValue(StatKind.LONG, 1)
    assert found["t"].max_value == StatValue(StatKind.LONG, 1704067200000000)
    assert bounds(found["t_ns"]) == (2, 3)
    assert found["day"].min_value == StatValue(StatKind.DATE, -3653)
    assert bounds(found["dec"]) == (Decimal("-1.000000000000000"), Decimal("0.020000000000000"))
    assert bounds(found["dec"])[1].as_tuple().exponent == -15


def test_rows_of_views_and_dictionaries():
    rows = pa.table(
        {
            "sv": pa.array(["b", None, "a"], pa.string_view()),
            "dict": pa.array(["q", "p", None]).dictionary_encode(),
        }
    )
    found = by_column(ranges_from_table(rows, rows.column_names))
    assert found["sv"].min_value == StatValue(StatKind.STRING, "a")
    assert bounds(found["dict"]) == ("p", "q")


def test_no_rows_or_only_nulls():
    """A log of deletes only: every column with counts 0 and no bounds, as Apache Hudi writes."""
    empty = every_type().slice(0, 0)
    for found in ranges_from_table(empty, empty.column_names):
        assert (bounds(found), found.value_count, found.null_count) == ((None, None), 0, 0)
    nulls = pa.table({"n": pa.array([None, None], pa.int32())})
    (found,) = ranges_from_table(nulls, ["n"])
    assert (bounds(found), found.value_count, found.null_count) == ((None, None), 2, 2)


def test_rows_lacking_a_column_or_without_a_wrapper():
    rows = pa.table({"a": [1], "t": pa.array([1], pa.time64("us"))})
    assert [r.column for r in ranges_from_table(rows, ["missing", "a"])] == ["a"]
    with pytest.raises(HoodieError, match="column 't' of type time64"):
        ranges_from_table(rows, ["t"])


# -- JSON -----------------------------------------------------------------------------------------
def json_round_trip(column_range: ColumnRange) -> ColumnRange:
    text = json.dumps(column_range.to_json(), allow_nan=False)  # strict JSON
    return ColumnRange.from_json(json.loads(text))


def same_range(a: ColumnRange, b: ColumnRange) -> bool:
    """Equal, NaN equal to NaN and -0.0 told from 0.0."""

    def norm(stat):
        if stat is None or not isinstance(stat.value, float):
            return stat
        return (stat.kind, "nan" if math.isnan(stat.value) else stat.value.hex())

    return (norm(a.min_value), norm(a.max_value), a.column, a.value_count, a.null_count,
            a.total_size, a.total_uncompressed_size) == (
        norm(b.min_value), norm(b.max_value), b.column, b.value_count, b.null_count,
        b.total_size, b.total_uncompressed_size)  # fmt: skip


SPECIAL = [
    ColumnRange("x", StatValue(StatKind.DOUBLE, -0.0), StatValue(StatKind.DOUBLE, NAN), 3, 0),
    ColumnRange(
        "f", StatValue(StatKind.FLOAT, float("-inf")), StatValue(StatKind.FLOAT, float("inf")), 2, 0
    ),
    ColumnRange("b", StatValue(StatKind.BYTES, b"\x00\xff"), StatValue(StatKind.BYTES, b""), 2, 0),
    ColumnRange("s", StatValue(StatKind.STRING, EMOJI), StatValue(StatKind.STRING, 'é\n"'), 2, 0),
    ColumnRange("n", None, None, 4, 4, 10, 20),
    ColumnRange("z", None, None, 0, 0),
]


def test_json_round_trip_of_every_kind():
    table = every_type()
    ranges = ranges_from_parquet(footer(table), table.column_names) + SPECIAL
    assert {r.min_value.kind for r in ranges if r.min_value} >= {
        StatKind.BOOLEAN, StatKind.INT, StatKind.LONG, StatKind.FLOAT, StatKind.DOUBLE,
        StatKind.BYTES, StatKind.STRING, StatKind.DATE, StatKind.DECIMAL,
    }  # fmt: skip
    for column_range in ranges:
        back = json_round_trip(column_range)
        assert same_range(back, column_range), column_range
        if column_range.min_value is not None:
            assert type(back.min_value.value) is type(column_range.min_value.value)
    decimal = json_round_trip(by_column(ranges)["dec"]).min_value.value
    assert decimal.as_tuple().exponent == -15


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda d: d.pop("null_count"), "null_count"),
        (lambda d: d.update(value_count="3"), "count is not an integer"),
        (lambda d: d.update(value_count=True), "count is not an integer"),
        (lambda d: d.update(column=7), "column is not a string"),
        (lambda d: d.update(min={"kind": "NoWrapper", "value": 1}), "NoWrapper"),
        (lambda d: d.update(min={"kind": "IntWrapper", "value": "1"}), "IntWrapper"),
        (lambda d: d.update(min={"kind": "IntWrapper", "value": True}), "IntWrapper"),
        (lambda d: d.update(min={"kind": "BytesWrapper", "value": "**"}), "Error"),
        (lambda d: d.update(min={"kind": "DecimalWrapper", "value": "x"}), "Invalid"),
        (lambda d: d.update(min={"kind": "DoubleWrapper", "value": "NaN!"}), "number"),
        (lambda d: d.update(min={"kind": "TimeMicrosWrapper", "value": 1}), "TimeMicros"),
        (lambda d: d.update(min={"kind": "StringWrapper"}), "value"),
    ],
)
def test_from_json_refuses_what_to_json_does_not_give(change, problem):
    data = ColumnRange("id", StatValue(StatKind.INT, 1), StatValue(StatKind.INT, 2), 2, 0).to_json()
    change(data)
    with pytest.raises(HoodieError, match="is not a column range") as error:
        ColumnRange.from_json(data)
    assert problem in str(error.value)


def test_to_json_refuses_wrappers_no_data_file_gives():
    column_range = ColumnRange("t", StatValue(StatKind.TIME_MICROS, datetime.time(1)), None, 1, 0)
    with pytest.raises(HoodieError, match="TimeMicrosWrapper"):
        column_range.to_json()


# -- records --------------------------------------------------------------------------------------
@pytest.mark.parametrize("partition, identifier", [("dt=a/x", "dt=a/x"), ("", ".")])
def test_record_is_keyed_and_filled_as_apache_hudi_writes_it(partition, identifier):
    table = every_type()
    name = "c87a47ac-6ea4-4bfd-9873-4d56df3dacb5-0_0-22-21_20261128002809504.parquet"
    for column_range in ranges_from_parquet(footer(table), table.column_names) + SPECIAL:
        record = column_range.record(partition, name)
        assert record.key == column_stats_key(identifier, name, column_range.column)
        assert record == ColumnStatsRecord(
            record.key,
            name,
            column_range.column,
            column_range.min_value,
            column_range.max_value,
            column_range.value_count,
            column_range.null_count,
            column_range.total_size,
            column_range.total_uncompressed_size,
        ) or math.isnan(column_range.max_value.value)
        assert (record.is_deleted, record.is_tight_bound, record.value_type) == (False, False, None)
        for version in (6, 8):
            value = encode_metadata_record(record, version)
            back = decode_metadata_record(record.key, value, metadata_record_schema(version))
            assert isinstance(back, ColumnStatsRecord)
            as_range = ColumnRange(
                back.column_name, back.min_value, back.max_value, back.value_count,
                back.null_count, back.total_size, back.total_uncompressed_size,
            )  # fmt: skip
            assert same_range(as_range, column_range), (version, column_range)


# -- columns_to_index -----------------------------------------------------------------------------
def stored_schema(*data: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([(name, pa.string()) for name in META_COLUMNS] + list(data))


DATA = (
    ("id", pa.int32()),
    ("nested", pa.struct([("a", pa.int32())])),
    ("name", pa.string()),
    ("wide", pa.decimal128(38, 10)),
    ("day", pa.date32()),
)


def test_version_6_indexes_every_column_meta_columns_first():
    assert columns_to_index(stored_schema(*DATA), 6) == (*META_COLUMNS, "id", "name", "day")


def test_version_8_indexes_three_meta_columns_then_the_data_columns():
    assert columns_to_index(stored_schema(*DATA), 8) == (
        "_hoodie_commit_time",
        "_hoodie_partition_path",
        "_hoodie_record_key",
        "id",
        "name",
        "day",
    )


def test_max_columns_counts_data_columns_on_version_8_only():
    """Apache Hudi 1.2 takes the first `max.columns.to.index` data columns with a wrapper,
    after its three meta columns; 0.15 has no such option."""
    many = [(f"c{i:02d}", pa.int64()) for i in range(40)]
    schema = stored_schema(("skipped", pa.list_(pa.int32())), *many)
    default = columns_to_index(schema, 8)
    assert len(default) == 3 + 32 and default[3:] == tuple(f"c{i:02d}" for i in range(32))
    assert columns_to_index(schema, 8, max_columns=2)[3:] == ("c00", "c01")
    assert columns_to_index(schema, 8, max_columns=0) == default[:3]
    assert len(columns_to_index(schema, 6, max_columns=2)) == 5 + 40
    with pytest.raises(InvalidConfigError, match="max.columns.to.index is -1"):
        columns_to_index(schema, 8, max_columns=-1)


def test_a_table_without_meta_columns():
    schema = pa.schema(DATA)
    assert columns_to_index(schema, 6) == ("id", "name", "day")
    assert columns_to_index(schema, 8) == ("id", "name", "day")
    assert columns_to_index(schema, 8, ["day"]) == ("day",)


def test_an_explicit_list_is_taken_in_its_order():
    schema = stored_schema(*DATA)
    assert columns_to_index(schema, 6, ["day", "id"]) == ("day", "id")
    assert columns_to_index(schema, 6, ["_hoodie_file_name"]) == ("_hoodie_file_name",)
    assert columns_to_index(schema, 6, []) == columns_to_index(schema, 6)  # empty: unset


def test_version_8_puts_its_meta_columns_before_an_explicit_list():
    schema = stored_schema(*DATA)
    meta = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
    assert columns_to_index(schema, 8, ["day", "id"]) == (*meta, "day", "id")
    listed = ["id", "_hoodie_record_key", "_hoodie_commit_seqno"]
    assert columns_to_index(schema, 8, listed) == (*meta, "id", "_hoodie_commit_seqno")
    many = stored_schema(*[(f"c{i}", pa.int64()) for i in range(40)])
    assert len(columns_to_index(many, 8, [f"c{i}" for i in range(40)])) == 43  # no cut


def test_an_explicit_list_naming_an_unknown_column_is_refused():
    with pytest.raises(InvalidConfigError) as error:
        columns_to_index(stored_schema(*DATA), 8, ["id", "nope"])
    message = str(error.value)
    assert COLUMN_LIST_OPTION in message and "'nope'" in message
    assert "id, nested, name, wide, day" in message  # the columns it has


@pytest.mark.parametrize(
    "column, dtype", [("nested", "struct<a: int32>"), ("wide", "decimal128(38, 10)")]
)
def test_an_explicit_list_naming_a_column_without_a_wrapper_is_refused(column, dtype):
    for version in (6, 8):
        with pytest.raises(InvalidConfigError) as error:
            columns_to_index(stored_schema(*DATA), version, ["id", column])
        message = str(error.value)
        assert COLUMN_LIST_OPTION in message and f"{column!r} of type {dtype}" in message

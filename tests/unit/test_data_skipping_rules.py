"""Data skipping's predicate evaluation on real parquet footers: a file is skipped only when no
row of it can match (every operator, nulls, missing columns, row groups, the types whose order
parquet statistics and Spark disagree on, the record key's range and bloom filter)."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringEndsWith,
    StringStartsWith,
)

from hoodie.bloom_filter import BloomFilterSpec, bloom_filter_footer, java_min_max
from hoodie.exceptions import CorruptDataFileError, InvalidConfigError
from hoodie.properties import COMPLEX_KEYGEN, SIMPLE_KEYGEN
from hoodie.read.data_skipping import Footer, StatsEvaluator, skip_slices
from hoodie.read.planner import FileSplit
from hoodie.read.predicates import (
    ANYTHING,
    AllOf,
    Among,
    AnyOf,
    Compare,
    KeyIn,
    KeyRule,
    NullCheck,
    Prefix,
    RowFilter,
    from_spark,
)
from hoodie.schema import MAX_KEY_FOOTER, MIN_KEY_FOOTER, RECORD_KEY
from hoodie.storage import load_file_io


@pytest.fixture
def footer_of(tmp_path):
    """footer_of(table, row_group_size=None, metadata=None): the footer of that file."""
    count = iter(range(1000))

    def write(table: pa.Table, row_group_size=None, metadata=None) -> Footer:
        name = f"f{next(count)}.parquet"
        if metadata:
            table = table.replace_schema_metadata(metadata)
        pq.write_table(table, tmp_path / name, row_group_size=row_group_size)
        return Footer.read(load_file_io(str(tmp_path)), name)

    return write


def may(predicate, footer, schema=None):
    return StatsEvaluator(schema if schema is not None else footer.schema).file_may_match(
        predicate, footer
    )


def test_each_comparison_on_an_integer_column(footer_of):
    footer = footer_of(pa.table({"n": pa.array(range(10, 21), pa.int64())}))
    cases = {
        ("=", 5): False, ("=", 15): True, ("=", 21): False,
        ("<", 10): False, ("<", 11): True, ("<=", 10): True, ("<=", 9): False,
        (">", 20): False, (">", 19): True, (">=", 20): True, (">=", 21): False,
        ("!=", 15): True,
    }  # fmt: skip
    for (op, value), expected in cases.items():
        assert may(Compare("n", op, value), footer) is expected, (op, value)
    constant = footer_of(pa.table({"n": pa.array([7, 7], pa.int64())}))
    assert not may(Compare("n", "!=", 7), constant)
    assert may(Compare("n", "!=", 8), constant)


def test_in_not_in_and_boolean_combinations(footer_of):
    footer = footer_of(pa.table({"n": pa.array(range(10, 21), pa.int32())}))
    assert may(Among("n", (1, 2, 12)), footer)
    assert not may(Among("n", (1, 2, 30)), footer)
    assert not may(Among("n", ()), footer)
    assert may(Among("n", (12,), negated=True), footer)
    constant = footer_of(pa.table({"n": pa.array([3, 3], pa.int32())}))
    assert not may(Among("n", (3, 4), negated=True), constant)
    assert may(Among("n", (3, None), negated=True), constant)  # not folded: kept
    out = Compare("n", "=", 5)
    inside = Compare("n", "=", 15)
    assert not may(AllOf((out, inside)), footer)
    assert may(AnyOf((out, inside)), footer)
    assert not may(AnyOf((out, Compare("n", ">", 100))), footer)
    assert may(ANYTHING, footer)


def test_nulls(footer_of):
    footer = footer_of(
        pa.table(
            {
                "none": pa.array([None, None], pa.int64()),
                "some": pa.array([1, None], pa.int64()),
                "full": pa.array([1, 2], pa.int64()),
            }
        )
    )
    assert may(NullCheck("none", True), footer) and not may(NullCheck("none", False), footer)
    assert not may(Compare("none", "=", 1), footer)  # a comparison with null is never true
    assert not may(Compare("none", "!=", 1), footer)
    assert not may(Among("none", (1,), negated=True), footer)
    assert may(NullCheck("some", True), footer) and may(NullCheck("some", False), footer)
    assert not may(NullCheck("full", True), footer) and may(NullCheck("full", False), footer)


def test_a_column_the_file_lacks_is_null_in_every_row(footer_of):
    footer = footer_of(pa.table({"n": pa.array([1, 2], pa.int64())}))
    table = pa.schema([("n", pa.int64()), ("added", pa.string())])
    assert not may(Compare("added", "=", "x"), footer, table)
    assert not may(NullCheck("added", False), footer, table)
    assert may(NullCheck("added", True), footer, table)
    # A column the table does not have (nothing Spark would push): never a reason to skip.
    assert may(Compare("unknown", "=", 1), footer, table)


def test_each_row_group_is_judged_on_its_own(footer_of):
    values = list(range(0, 10)) + list(range(100, 110))
    footer = footer_of(pa.table({"n": pa.array(values, pa.int64())}), row_group_size=10)
    assert len(footer.groups) == 2
    assert not may(Compare("n", "=", 50), footer)  # inside the file's range, in no row group
    assert may(Compare("n", "=", 105), footer)
    # A conjunction holds in one row: both parts must fit the same row group.
    assert not may(AllOf((Compare("n", "<", 5), Compare("n", ">", 105))), footer)


def test_floats_are_never_skipped_where_a_nan_may_match(footer_of):
    footer = footer_of(pa.table({"x": pa.array([1.0, 2.0, math.nan], pa.float64())}))
    assert not may(Compare("x", "<", 0.5), footer)
    assert not may(Compare("x", "<=", 0.5), footer)
    assert not may(Compare("x", "=", 5.0), footer)
    assert not may(Among("x", (5.0, 7.0)), footer)
    # Spark orders NaN above every number: x > 5 holds for the NaN row.
    assert may(Compare("x", ">", 5.0), footer)
    assert may(Compare("x", ">=", 5.0), footer)
    assert may(Compare("x", "=", math.nan), footer)
    assert may(Among("x", (math.nan,)), footer)
    constant = footer_of(pa.table({"x": pa.array([1.0, math.nan], pa.float64())}))
    assert may(Compare("x", "!=", 1.0), constant)
    assert may(Among("x", (1.0,), negated=True), constant)


def test_strings_beyond_ascii_compare_by_their_utf8_bytes(footer_of):
    # Parquet orders strings by unsigned bytes, Spark too; Python's code point order is the same.
    footer = footer_of(pa.table({"s": pa.array(["a", "é", "\uffff"])}))
    assert may(Compare("s", "=", "z"), footer)
    assert may(Compare("s", "=", "ü"), footer)
    assert not may(Compare("s", "=", "\U0001f600"), footer)  # above U+FFFF in UTF-8 too
    assert may(Compare("s", "<", "b"), footer)
    assert not may(Compare("s", "<", "a"), footer)
    assert not may(Compare("s", ">", "\uffff"), footer)


def test_prefix(footer_of):
    footer = footer_of(pa.table({"s": pa.array(["apple", "apricot"])}))
    assert may(Prefix("s", "ap"), footer)
    assert may(Prefix("s", "apr"), footer)
    assert not may(Prefix("s", "apz"), footer)
    assert not may(Prefix("s", "b"), footer)
    assert not may(Prefix("s", "aa"), footer)
    assert may(Prefix("s", ""), footer)
    assert not may(Prefix("s", "ap", negated=True), footer)
    assert may(Prefix("s", "app", negated=True), footer)


def test_dates_and_booleans_are_ordered(footer_of):
    footer = footer_of(
        pa.table(
            {
                "d": pa.array([dt.date(2026, 1, 1), dt.date(2026, 1, 31)], pa.date32()),
                "b": pa.array([False, False]),
            }
        )
    )
    assert not may(Compare("d", ">", dt.date(2026, 1, 31)), footer)
    assert may(Compare("d", "=", dt.date(2026, 1, 15)), footer)
    assert not may(Compare("b", "=", True), footer)


def test_decimals_and_timestamps_are_judged_by_nulls_only(footer_of):
    footer = footer_of(
        pa.table(
            {
                "dec": pa.array([decimal.Decimal("1.50")], pa.decimal128(10, 2)),
                "ts": pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("us", tz="UTC")),
            }
        )
    )
    assert may(Compare("dec", "=", decimal.Decimal("99.00")), footer)
    far = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
    assert may(Compare("ts", ">", far), footer)
    assert not may(NullCheck("dec", True), footer)
    assert not may(NullCheck("ts", True), footer)


def test_a_widened_column_compares_as_the_table_reads_it(footer_of):
    # 2^53 + 3 is read as the double 2^53 + 4: `x = 2^53 + 4` holds for it in Spark.
    footer = footer_of(pa.table({"x": pa.array([1, 2**53 + 3], pa.int64())}))
    table = pa.schema([("x", pa.float64())])
    assert may(Compare("x", "=", float(2**53 + 4)), footer, table)
    assert not may(Compare("x", "=", float(2**53 + 8)), footer, table)
    assert not may(Compare("x", "<", 1.0), footer, table)
    narrow = footer_of(pa.table({"n": pa.array([1, 5], pa.int32())}))
    assert not may(Compare("n", ">", 5), narrow, pa.schema([("n", pa.int64())]))


def test_a_value_that_does_not_compare_keeps_the_file(footer_of):
    footer = footer_of(pa.table({"n": pa.array([1, 5], pa.int64())}))
    assert may(Compare("n", "=", "text"), footer)


def test_spark_filters_with_not_pushed_to_the_leaves():
    assert from_spark([Not(GreaterThan(("n",), 5))]) == AllOf((Compare("n", "<=", 5),))
    assert from_spark([Not(Not(LessThan(("n",), 5)))]) == AllOf((Compare("n", "<", 5),))
    assert from_spark([Not(In(("n",), [1, 2]))]) == AllOf((Among("n", (1, 2), True),))
    assert from_spark([Not(IsNull(("n",)))]) == AllOf((NullCheck("n", False),))
    assert from_spark([IsNotNull(("n",))]) == AllOf((NullCheck("n", False),))
    assert from_spark([EqualNullSafe(("n",), None)]) == AllOf((NullCheck("n", True),))
    assert from_spark([Not(EqualNullSafe(("n",), 3))]) == AllOf(
        (AnyOf((NullCheck("n", True), Compare("n", "!=", 3))),)
    )
    assert from_spark([Not(StringStartsWith(("s",), "a"))]) == AllOf((Prefix("s", "a", True),))
    assert from_spark([StringEndsWith(("s",), "a")]) == AllOf((ANYTHING,))
    assert from_spark([EqualTo(("s", "inner"), 1)]) == AllOf((ANYTHING,))
    assert from_spark([GreaterThanOrEqual(("n",), 1), LessThanOrEqual(("n",), 2)]) == AllOf(
        (Compare("n", ">=", 1), Compare("n", "<=", 2))
    )


def test_row_filters_in_disjunctive_normal_form():
    columns = ["id", "name"]
    one = RowFilter.parse([("id", "==", 1), ("name", "in", ["a", "b"])], columns)
    assert one.predicate == AllOf((Compare("id", "=", 1), Among("name", ("a", "b"))))
    either = RowFilter.parse([[("id", "<", 1)], [("id", "not in", [5])]], columns)
    assert either.predicate == AnyOf(
        (AllOf((Compare("id", "<", 1),)), AllOf((Among("id", (5,), True),)))
    )
    for bad in (
        [("nope", "=", 1)],
        [("id", "~", 1)],
        [("id", "in", "ab")],
        [("id", "=", None)],
        [("id", "=")],
    ):
        with pytest.raises(InvalidConfigError):
            RowFilter.parse(bad, columns)


def test_the_record_key_named_by_its_field_or_the_meta_column():
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    rule = KeyRule.of(("id",), SIMPLE_KEYGEN, schema)
    assert rule.keys(Compare("id", "=", 5)) == ("5",)
    assert rule.keys(Among("id", (5, None, 6))) == ("5", "6")
    assert rule.keys(Compare("id", "=", "5")) is None  # Spark would cast: '05' = 5
    assert rule.keys(Compare("id", "=", True)) is None
    assert rule.keys(Compare("id", ">", 5)) is None
    assert rule.keys(Among("id", (5,), negated=True)) is None
    assert rule.keys(Compare(RECORD_KEY, "=", "k")) == ("k",)
    assert rule.keys(Compare("name", "=", "k")) is None
    assert KeyRule.of(("id", "name"), COMPLEX_KEYGEN, schema).keys(Compare("id", "=", 5)) is None
    assert KeyRule.of(("id",), COMPLEX_KEYGEN, schema).keys(Compare("id", "=", 5)) is None
    wrapped = rule.with_keys(AnyOf((Compare("id", "=", 5), Compare("name", "=", "x"))))
    assert wrapped == AnyOf(
        (AllOf((Compare("id", "=", 5), KeyIn(("5",)))), Compare("name", "=", "x"))
    )


def _keyed_file(footer_of, keys: list[str], bloom=True):
    array = pa.array(keys, pa.string())
    low, high = java_min_max(array)
    metadata = {MIN_KEY_FOOTER: low.encode(), MAX_KEY_FOOTER: high.encode()}
    if bloom:
        metadata.update(bloom_filter_footer(array, BloomFilterSpec()))
    return footer_of(pa.table({RECORD_KEY: array}), metadata=metadata)


def test_record_keys_outside_the_key_range_or_the_bloom_filter(footer_of):
    keys = [f"k{n:04d}" for n in range(0, 2000, 2)]  # even numbers only
    footer = _keyed_file(footer_of, keys)
    evaluator = StatsEvaluator(footer.schema)
    assert evaluator.file_may_match(KeyIn(("k0100",)), footer)
    assert not evaluator.file_may_match(KeyIn(("k9999",)), footer)  # outside the range
    assert not evaluator.file_may_match(KeyIn(("k0101",)), footer)  # inside, not in the filter
    assert evaluator.file_may_match(KeyIn(("k0101", "k0102")), footer)
    assert not evaluator.file_may_match(KeyIn(()), footer)
    without = _keyed_file(footer_of, keys, bloom=False)
    assert evaluator.file_may_match(KeyIn(("k0101",)), without)  # no filter: the range alone
    assert not evaluator.file_may_match(KeyIn(("k9999",)), without)


def test_the_key_range_is_in_javas_order(footer_of):
    # Java orders U+FFFD above a surrogate pair (U+1F600), UTF-8 below it.
    footer = _keyed_file(footer_of, ["\U0001f600", "\ufffd"], bloom=False)
    assert footer.key_range == ("\U0001f600", "\ufffd")
    evaluator = StatsEvaluator(footer.schema)
    assert evaluator.file_may_match(KeyIn(("\uff00",)), footer)
    assert not evaluator.file_may_match(KeyIn(("a",)), footer)


def test_a_foreign_bloom_filter_keeps_the_file(footer_of):
    keys = pa.array(["a", "c"])
    metadata = {
        MIN_KEY_FOOTER: b"a",
        MAX_KEY_FOOTER: b"c",
        b"org.apache.hudi.bloomfilter": b"AAAA",
    }
    footer = footer_of(pa.table({RECORD_KEY: keys}), metadata=metadata)
    assert StatsEvaluator(footer.schema).file_may_match(KeyIn(("b",)), footer)


def test_skip_slices_keeps_slices_whose_logs_are_merged(tmp_path, footer_of):
    storage = load_file_io(str(tmp_path))
    schema = pa.schema([("n", pa.int64())])
    for name, values in (("low.parquet", [1, 2]), ("high.parquet", [100, 200])):
        pq.write_table(pa.table({"n": pa.array(values, pa.int64())}), tmp_path / name)
    low = FileSplit("", "low", "low.parquet")
    high = FileSplit("", "high", "high.parquet")
    logged = FileSplit("", "logged", "low.parquet", (".low.log.1",))
    only_logs = FileSplit("", "logs", None, (".x.log.1",))
    splits = [low, high, logged, only_logs]
    wanted = Compare("n", ">", 50)
    kept, report = skip_slices(storage, splits, True, wanted, schema)
    assert kept == [high, logged, only_logs]
    # without the metadata table's statistics of their logs: both slices with logs unchecked
    assert (report.considered, report.by_stats, report.by_key, report.with_logs) == (4, 1, 0, 2)
    assert report.skipped_files == ["low.parquet"] and report.footers_read == 2
    assert "1 skipped" in report.describe("t")
    # Read-optimized (no log merged): the base file alone is the slice.
    kept, report = skip_slices(storage, splits, False, wanted, schema)
    assert kept == [high, only_logs] and report.by_stats == 2


def test_a_damaged_footer_is_an_error(tmp_path):
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not a parquet file PAR1")
    storage = load_file_io(str(tmp_path))
    split = FileSplit("", "bad", "bad.parquet")
    with pytest.raises(CorruptDataFileError, match="bad.parquet"):
        skip_slices(storage, [split], True, Compare("n", "=", 1), pa.schema([("n", pa.int64())]))


def test_no_footer_is_read_for_a_filter_that_cannot_rule_a_file_out(tmp_path):
    storage = load_file_io(str(tmp_path))  # the split's file does not exist: never opened
    split = FileSplit("", "f", "absent.parquet")
    schema = pa.schema([("n", pa.int64())])
    for predicate in (ANYTHING, AllOf((Compare("gone", "=", 1),)), AnyOf(()),
                      AnyOf((Compare("n", "=", 1), ANYTHING))):  # fmt: skip
        kept, report = skip_slices(storage, [split], True, predicate, schema)
        assert kept == [split] and report.footers_read == 0
    with pytest.raises(CorruptDataFileError, match="absent.parquet"):
        skip_slices(storage, [split], True, Compare("n", "=", 1), schema)

"""Data skipping by the metadata table's `column_stats` and `bloom_filters` partitions
(`hoodie.read.data_skipping`): how a column stats record becomes the evaluator's statistics
(every wrapper Apache Hudi 0.15 and 1.2 wrote in tests/fixtures/mdt-records, nulls, NaN, values
not compared exactly), that a file the metadata table decides needs no footer while one it
lacks falls back to its footer, and, on the sample tables Apache Hudi wrote with those
partitions (tests/fixtures/mdt-tables, hudi-rs's v8 trips), that no slice holding a matching
row is skipped and the metadata table prunes without a footer read.
tests/judge/test_apache_hudi_column_stats_skipping.py does the same through Spark on tables
Apache Hudi 1.2 writes during the test."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sample_tables import unzip
from test_metadata_records_real import decoded, entries

from hoodie.bloom_filter import BloomFilterSpec, bloom_filter_footer
from hoodie.merge import merge_mode_of
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import BloomFilterRecord, ColumnStatsRecord, StatKind, StatValue
from hoodie.read import data_skipping
from hoodie.read.data_skipping import (
    ColumnStats,
    IndexedStats,
    StatsEvaluator,
    indexed_column_stats,
    skip_slices,
)
from hoodie.read.datasource import snapshot_arrow_schema
from hoodie.read.options import ReadOptions
from hoodie.read.planner import FileSplit, plan_read
from hoodie.read.predicates import (
    AllOf,
    Among,
    AnyOf,
    Compare,
    KeyIn,
    KeyRule,
    NullCheck,
    Predicate,
)
from hoodie.read.slice_reader import SliceReadSpec, read_slice
from hoodie.storage import load_file_io
from hoodie.table_metadata import BLOOM_FILTERS, COLUMN_STATS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TRIPS = FIXTURES / "hudi-rs/quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
HUDI_0_15 = FIXTURES / "mdt-tables/hudi-0.15.0-mor-v6.zip"
HUDI_1_2 = FIXTURES / "mdt-tables/hudi-1.2.0-mor-v8-rollback.zip"

# The table types of tests/fixtures/mdt-records/write_typed.py's columns.
TYPED = {
    "id": pa.string(),
    "ts": pa.int64(),
    "i": pa.int32(),
    "f": pa.float32(),
    "d": pa.float64(),
    "b": pa.bool_(),
    "dec": pa.decimal128(10, 2),
    "day": pa.date32(),
    "at": pa.timestamp("us", tz="UTC"),
    "bin": pa.binary(),
    "s": pa.string(),
    "nothing": pa.string(),
}


def typed_records(table: str) -> dict[str, list[ColumnStatsRecord]]:
    """The column stats records of the typed table's base files, by column."""
    out: dict[str, list[ColumnStatsRecord]] = {}
    for entry in entries():
        if not entry["source"].startswith(table + "/column_stats/"):
            continue
        record = decoded(entry)
        if type(record) is ColumnStatsRecord and (record.file_name or "").endswith(".parquet"):
            out.setdefault(record.column_name or "", []).append(record)
    return out


@pytest.mark.parametrize("table", ["typed-0.15.0-cow-v6", "typed-1.2.0-cow-v8"])
def test_every_wrapper_apache_hudi_writes_maps_to_statistics(table):
    """Each column of the typed table, as Apache Hudi wrote its stats: ordered types keep
    their bounds (in the values Spark compares), decimals and timestamps their counts, strings
    and binary beyond ASCII are the footer's, an all-null column is all null."""
    by_column = typed_records(table)
    assert set(TYPED) <= set(by_column)
    for column, records in by_column.items():
        if column not in TYPED:
            continue  # meta columns
        for record in records:
            got = indexed_column_stats(record, TYPED[column])
            low, high = record.min_value, record.max_value
            if column in ("i", "ts", "f", "d", "b", "day"):
                assert got is not None and got.bounded, (column, record)
                assert (got.low, got.high) == (low.to_python(), high.to_python())
                assert got.rows == record.value_count and got.nulls == record.null_count
                assert got.low <= got.high
            elif column in ("dec", "at"):
                assert got == ColumnStats(record.value_count, record.null_count), column
            elif column == "nothing":
                assert got is not None and got.all_null and not got.bounded
            else:  # id (an emoji key), s ('välue'), bin (bytes above 0x7f)
                assert low is not None and not (low.value.isascii() and high.value.isascii())
                assert got is None, column
    day = indexed_column_stats(by_column["day"][0], pa.date32())
    assert day is not None and isinstance(day.low, dt.date)
    assert dt.date(2024, 2, 28) <= day.low <= day.high
    ints = [indexed_column_stats(r, pa.int32()) for r in by_column["i"]]
    assert min(s.low for s in ints if s) == -(2**31)
    # the all-null column counts nulls in its value count (parquet's and Apache Hudi's way)
    assert all(r.value_count == r.null_count > 0 for r in by_column["nothing"])
    # nullable values: 's' has nulls in every other row
    assert any(0 < (r.null_count or 0) < (r.value_count or 0) for r in by_column["s"])


def record(low, high, rows=10, nulls=0, kind=StatKind.LONG) -> ColumnStatsRecord:
    def wrap(value):
        return None if value is None else StatValue(kind, value)

    return ColumnStatsRecord("k", "f.parquet", "c", wrap(low), wrap(high), rows, nulls, 1, 1)


def test_what_a_record_gives_and_what_it_leaves_to_the_footer():
    long, double = pa.int64(), pa.float64()
    assert indexed_column_stats(record(1, 5), long) == ColumnStats(10, 0, 1, 5, True)
    # widened by schema evolution: compared as Spark casts (long -> double rounds)
    widened = indexed_column_stats(record(2**53 + 1, 2**53 + 3), double)
    assert widened is not None and (widened.low, widened.high) == (2.0**53, float(2**53 + 4))
    assert isinstance(widened.low, float)
    floats = record(-1.5, 2.5, kind=StatKind.FLOAT)
    assert indexed_column_stats(floats, double) == ColumnStats(10, 0, -1.5, 2.5, True)
    assert indexed_column_stats(record(-1.5, 2.5, kind=StatKind.DOUBLE), pa.float32()) is None
    # NaN bounds: counts only
    nan = indexed_column_stats(record(0.0, math.nan, nulls=2, kind=StatKind.DOUBLE), double)
    assert nan == ColumnStats(10, 2)
    # all null: no bounds, every value null
    assert indexed_column_stats(record(None, None, nulls=10), long) == ColumnStats(10, 10)
    assert indexed_column_stats(record(None, None, rows=0), long) == ColumnStats(0, 0)
    # unknown null count stays unknown
    assert indexed_column_stats(record(1, 2, nulls=None), long) == ColumnStats(10, None, 1, 2, True)
    # left to the footer: no value count, counts that do not add up, one-sided or crossed
    # bounds, a wrapper of another type, a nested column, text beyond ASCII
    for bad, wanted in [
        (record(1, 2, rows=None), long),
        (record(1, 2, rows=3, nulls=4), long),
        (record(1, 2, nulls=-1), long),
        (record(1, None), long),
        (record(5, 1), long),
        (record("a", "b", kind=StatKind.STRING), long),
        (record(1, 2, kind=StatKind.INT), pa.date32()),
        (record(1, 2), pa.struct([("x", long)])),
        (record("a", "é", kind=StatKind.STRING), pa.string()),
        (record(b"a", b"\x80", kind=StatKind.BYTES), pa.binary()),
    ]:
        assert indexed_column_stats(bad, wanted) is None, bad
    mixed = ColumnStatsRecord(
        "k", "f", "c", StatValue(StatKind.INT, 1), StatValue(StatKind.LONG, 2), 3, 0, 1, 1
    )
    assert indexed_column_stats(mixed, long) is None
    text = indexed_column_stats(record("a1", "a9", kind=StatKind.STRING), pa.large_string())
    assert text == ColumnStats(10, 0, "a1", "a9", True)
    # decimals and timestamps: null counts only, whatever the wrapper
    money = record(decimal.Decimal("1.5"), decimal.Decimal("2.5"), nulls=1, kind=StatKind.DECIMAL)
    assert indexed_column_stats(money, pa.decimal128(10, 2)) == ColumnStats(10, 1)
    assert indexed_column_stats(record(1, 2), pa.timestamp("us")) == ColumnStats(10, 0)


def test_the_evaluator_on_whole_file_statistics_alone():
    table = pa.schema([("n", pa.int64()), ("x", pa.float64()), ("s", pa.string())])
    held = IndexedStats(
        {
            "n": ColumnStats(10, 0, 5, 9, True),
            "x": ColumnStats(10, 3, 1.0, 2.0, True),
            "s": ColumnStats(10, 10),
        }
    )
    evaluator = StatsEvaluator(table)

    def may(predicate: Predicate) -> bool:
        return evaluator.file_may_match(predicate, None, held)

    assert not may(Compare("n", "=", 4)) and may(Compare("n", "=", 5))
    assert not may(Compare("n", ">", 9)) and may(Compare("n", ">=", 9))
    assert not may(Among("n", (1, 2, 10))) and may(Among("n", (1, 7)))
    assert not may(NullCheck("n", True)) and may(NullCheck("x", True))
    assert not may(Compare("s", "=", "a")) and not may(NullCheck("s", False))
    assert may(Compare("x", ">", 5.0))  # a NaN may be above the bounds
    assert not may(Compare("x", "<", 1.0))
    assert not may(AllOf((Compare("n", "=", 7), Compare("x", "=", 7.0))))
    assert may(AnyOf((Compare("n", "=", 1), Compare("x", "=", 1.5))))
    # a column the metadata table has nothing of may match
    assert may(Compare("missing", "=", 1))
    assert StatsEvaluator(table.append(pa.field("m", pa.int64()))).file_may_match(
        Compare("m", "=", 1), None, held
    )


class FakeMetadata:
    """A metadata table with these records, counting its lookups."""

    def __init__(self, stats, blooms=None, partitions=(COLUMN_STATS, BLOOM_FILTERS)):
        self.stats, self.blooms, self.completed = stats, blooms or {}, list(partitions)
        self.lookups = 0

    def partitions(self):
        return self.completed

    def column_stats_of(self, files, columns):
        self.lookups += 1
        wanted = {(p, n, c) for p, names in files.items() for n in names for c in columns}
        return {k: v for k, v in self.stats.items() if k in wanted}

    def bloom_filters_of(self, files):
        self.lookups += 1
        wanted = {(p, n) for p, names in files.items() for n in names}
        return {k: v for k, v in self.blooms.items() if k in wanted}


def test_files_the_metadata_table_decides_need_no_footer(tmp_path):
    """`gone.parquet` and `kept.parquet` do not exist: a footer read of either would fail.
    `real.parquet` has no record: its footer decides."""
    storage = load_file_io(str(tmp_path))
    (tmp_path / "p").mkdir()
    pq.write_table(pa.table({"n": pa.array([50, 60], pa.int64())}), tmp_path / "p/real.parquet")
    table = pa.schema([("n", pa.int64())])
    stats = {
        ("p", "gone.parquet", "n"): record(1, 5),
        ("p", "kept.parquet", "n"): record(1, 9),
    }
    splits = [FileSplit("p", f"f{i}", f"p/{name}") for i, name in
              enumerate(["gone.parquet", "kept.parquet", "real.parquet"])]  # fmt: skip
    metadata = FakeMetadata(stats)
    kept, report = skip_slices(storage, splits, True, Compare("n", "=", 7), table,
                               metadata=metadata)  # fmt: skip
    assert [s.base_file for s in kept] == ["p/kept.parquet"]
    assert (report.by_stats, report.by_metadata, report.by_footers) == (2, 1, 1)
    assert (report.indexed, report.footers_read) == (2, 1)
    assert metadata.lookups == 1  # one lookup for all files; no bloom filter asked
    assert "1 by the metadata table's column_stats" in report.describe("t")
    # without column_stats completed the footers decide: the missing files fail the read
    bare = FakeMetadata(stats, partitions=(BLOOM_FILTERS,))
    with pytest.raises(Exception, match="gone.parquet"):
        skip_slices(storage, splits, True, Compare("n", "=", 7), table, metadata=bare)


def test_a_key_equality_takes_the_bloom_filter_from_the_metadata_table(tmp_path):
    storage = load_file_io(str(tmp_path))
    table = pa.schema([("_hoodie_record_key", pa.string()), ("n", pa.int64())])
    footer = bloom_filter_footer(pa.array(["a", "b"]), BloomFilterSpec())
    bloom = BloomFilterRecord(
        "k", footer[b"hoodie_bloom_filter_type_code"].decode(), "1",
        footer[b"org.apache.hudi.bloomfilter"],
    )  # fmt: skip
    splits = [FileSplit("", "g", "has.parquet"), FileSplit("", "h", "other.parquet")]
    blooms = {("", "has.parquet"): bloom, ("", "other.parquet"): bloom}
    rule = KeyRule.of(("n",), None, table)
    predicate = rule.with_keys(Compare("_hoodie_record_key", "=", "zz-not-there"))
    metadata = FakeMetadata({}, blooms)
    kept, report = skip_slices(storage, splits, False, predicate, table, metadata=metadata)
    assert kept == [] and (report.by_key, report.by_metadata, report.footers_read) == (2, 2, 0)
    # a key the filter may hold: kept, by the key column's statistics too (the files do not
    # exist: without them, their footers would be read, and fail)
    predicate = rule.with_keys(Compare("_hoodie_record_key", "=", "a"))
    keys = record("a", "b", kind=StatKind.STRING)
    stats = {("", name, "_hoodie_record_key"): keys for name in ("has.parquet", "other.parquet")}
    kept, report = skip_slices(storage, splits, False, predicate, table,
                               metadata=FakeMetadata(stats, blooms))  # fmt: skip
    assert kept == splits and report.footers_read == 0
    with pytest.raises(Exception, match="has.parquet"):
        skip_slices(storage, splits, False, predicate, table, metadata=metadata)


# -- the sample tables Apache Hudi wrote ------------------------------------------------------


def matches(row: dict, predicate: Predicate) -> bool:
    """Spark's value of `predicate` on a row, for the leaves used here (null: false)."""
    if isinstance(predicate, AllOf):
        return all(matches(row, p) for p in predicate.parts)
    if isinstance(predicate, AnyOf):
        return any(matches(row, p) for p in predicate.parts)
    if isinstance(predicate, KeyIn):
        return row["_hoodie_record_key"] in predicate.keys
    if isinstance(predicate, NullCheck):
        return (row[predicate.column] is None) == predicate.is_null
    value = row[predicate.column]
    if value is None:
        return False
    if isinstance(predicate, Among):
        return value in predicate.values
    assert isinstance(predicate, Compare)
    ops = {"=": value == predicate.value, "<": value < predicate.value,
           "<=": value <= predicate.value, ">": value > predicate.value,
           ">=": value >= predicate.value}  # fmt: skip
    return ops[predicate.op]


SAMPLES = {
    "v6-hudi-0.15": (
        HUDI_0_15,
        [
            Compare("id", "=", 4),
            Compare("id", "<", 3),
            Among("id", (5, 6)),
            Compare("name", "=", "u"),
            Compare("name", ">=", "x"),
            Compare("ts", ">", 3),
            NullCheck("name", True),
            Compare("_hoodie_record_key", "=", "5"),
            Compare("id", "=", 99),
        ],
    ),
    "v8-hudi-1.2": (
        HUDI_1_2,
        [
            Compare("id", "=", 3),
            Compare("id", "<=", 2),
            Among("name", ("w", "y")),
            Compare("ts", ">=", 3),
            NullCheck("id", False),
            Compare("_hoodie_record_key", "=", "1"),
            Compare("name", "<", "a"),
        ],
    ),
    "v8-trips": (
        TRIPS,
        [
            Compare("fare", "<", 30.0),
            Compare("fare", "=", 41.06),
            Compare("rider", "=", "rider-E"),
            Among("driver", ("driver-S", "driver-K")),
            NullCheck("rider", True),
            AnyOf((Compare("rider", "=", "rider-I"), Compare("fare", "<=", 0.0))),
        ],
    ),
}


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_sample_tables_skip_by_the_metadata_table_soundly(tmp_path, sample, monkeypatch):
    archive, predicates = SAMPLES[sample]
    root = unzip(archive, tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    plan = plan_read(meta, ReadOptions.parse({}))
    assert plan.metadata is not None and COLUMN_STATS in plan.metadata.partitions()
    schema = snapshot_arrow_schema(meta)
    props = meta.properties
    rule = KeyRule.of(props.record_key_fields, props.key_generator_class, schema)
    spec = SliceReadSpec(meta.storage, schema, props.record_key_fields, merge_mode_of(props),
                         plan.committed)  # fmt: skip
    rows = {  # the merged rows of every slice: base file and logs
        split: pa.Table.from_batches(list(read_slice(spec, split)), schema).to_pylist()
        for split in plan.splits
    }
    read: list[str] = []

    def no_footers(storage, paths):
        read.extend(paths)
        assert not read, f"footers read: {read}"
        return {}

    monkeypatch.setattr(data_skipping, "read_footers", no_footers)
    pruned = combined = 0
    for predicate in predicates:
        predicate = rule.with_keys(predicate)
        kept, report = skip_slices(meta.storage, list(plan.splits), True, predicate, schema,
                                   metadata=plan.metadata)  # fmt: skip
        for split, found in rows.items():
            if any(matches(row, predicate) for row in found):
                assert split in kept, (predicate, split.base_file)
        logged = [s for s in plan.splits if s.log_files]
        # a slice with logs is decided by its files' combined statistics, or kept unchecked
        assert report.with_logs + report.combined == len(logged), predicate
        assert report.indexed == len(plan.splits) - len(logged), predicate
        assert report.skipped == report.by_metadata and report.footers_read == 0
        pruned += report.by_metadata
        combined += report.by_combined
    assert pruned >= len(predicates) // 2
    if any(s.log_files for s in plan.splits):  # (hudi-rs's trips): their stats are indexed
        assert combined >= 1, sample

"""Data skipping on reads (`hoodie.enable.data.skipping`, on by default): a read whose filters
no row of a file slice can match does not read that slice, by either path: Spark's parquet scan
(`HoodieTable.read(filters=...)`: the files it scans) and the `hoodie` data source (Spark's
pushed filters; a skipped base file is spoiled, so reading it would fail the query). The rows
are those of the same read without skipping; unit tests of the predicates' evaluation are in
tests/unit/test_data_skipping_rules.py."""

from __future__ import annotations

import logging
import posixpath
import shutil
from collections import Counter

import pyarrow.parquet as pq
import pytest
from _spark_helpers import id_dt_ts_config

from hoodie import HoodieTable
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.properties import MERGE_ON_READ
from hoodie.storage import TracingFileIO, load_file_io

pytestmark = pytest.mark.spark

# Keys padded to one width: their text order (a bulk insert's) is their numbers' order, so
# every column's statistics are narrow per file.
DDL = "id string, dt string, ts long, v int"
# Small files (several file groups per partition, disjoint key ranges after a bulk insert) with
# small bloom filters.
SMALL = {
    "hoodie.parquet.max.file.size": "4000",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.index.bloom.num_entries": "200",
    "hoodie.bloom.index.filter.type": "SIMPLE",
}
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
OFF = {"hoodie.enable.data.skipping": "false"}
N = 3000  # rows of the bulk-loaded table


def key(i: int) -> str:
    return f"{i:05d}"


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def scanned(df) -> set[str]:
    return {posixpath.basename(uri) for uri in df.inputFiles()}


def latest_base_files(table: HoodieTable) -> dict[str, str]:
    """Latest base file name -> its path relative to the table."""
    return {
        f.name: posixpath.join(f.partition_path, f.name) if f.partition_path else f.name
        for f in table.file_system_view().latest_base_files()
    }


def spoil(path: str) -> None:
    """Flip bytes inside the first column chunk's pages: the footer still reads, the data does
    not (its page checksums fail)."""
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    at = start + chunk.total_compressed_size - 3
    with open(path, "r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ 0xFF]))


@pytest.fixture(scope="module")
def bulk_loaded(spark, tmp_path_factory):
    """`bulk_loaded(tmp_path, table_type)`: the table at `tmp_path / "t"` after one bulk
    insert of N rows, with its config and the rows. Each table type's is written once and
    copied for every test that asks."""
    data = [(key(i), "a" if i % 2 else "b", 1, i) for i in range(N)]
    written: dict[str, str] = {}

    def load(tmp_path, table_type="COPY_ON_WRITE"):
        cfg = id_dt_ts_config("skipping", table_type, SMALL)
        if table_type not in written:
            template = str(tmp_path_factory.mktemp("skipping") / "t")
            HoodieTable.for_write(template, cfg).bulk_insert(spark.createDataFrame(data, DDL), cfg)
            written[table_type] = template
        shutil.copytree(written[table_type], tmp_path / "t")
        return HoodieTable.for_write(str(tmp_path / "t"), cfg), cfg, data

    return load


def test_a_point_read_and_a_range_read_scan_few_files(spark, tmp_path, bulk_loaded, caplog):
    table, _, _ = bulk_loaded(tmp_path)
    files = latest_base_files(table)
    assert len(files) >= 8, files  # several file groups per partition

    with caplog.at_level(logging.INFO, logger="hoodie.read.data_skipping"):
        point = table.read(spark, filters=[("id", "=", key(1234))])
        assert [(r.id, r.v) for r in point.collect()] == [(key(1234), 1234)]
    assert len(scanned(point)) == 1
    assert f"1 of {len(files)} file slices read" in caplog.text
    assert "table 'skipping'" in caplog.text

    narrow = table.read(spark, filters=[("v", ">=", 1000), ("v", "<", 1030)])  # 1%
    assert rows(narrow.select("v")) == [(i,) for i in range(1000, 1030)]
    assert 1 <= len(scanned(narrow)) <= 2

    # Skipping off: the same rows, every file scanned.
    everything = table.read(spark, OFF, filters=[("id", "=", key(1234))])
    assert scanned(everything) == set(files)
    assert rows(everything) == rows(point)
    either = table.read(spark, filters=[[("v", "=", 7)], [("id", "in", [key(2001), key(2002)])]])
    assert sorted(r.v for r in either.collect()) == [7, 2001, 2002]
    assert len(scanned(either)) <= 4  # 7 and 2001 (partition a), 2002 (b): a boundary may add one
    assert table.read(spark, filters=[("v", "=", -5)]).collect() == []
    assert table.read(spark, filters=[("id", "=", "x")]).collect() == []


def test_the_data_source_skips_by_pushed_filters(spark, tmp_path, bulk_loaded):
    table, _, _ = bulk_loaded(tmp_path)
    # The files skipping keeps for v = 1235 (its own, and one of partition b whose range
    # holds 1235); every other base file is spoiled: a query that reads one fails.
    keep = scanned(table.read(spark, filters=[("v", "=", 1235)]))
    assert len(keep) <= 2
    for name, relative in latest_base_files(table).items():
        if name not in keep:
            spoil(str(tmp_path / "t" / relative))
    spark.conf.set(PUSHDOWN, "true")
    try:
        reader = spark.read.format("hoodie").option("hoodie.read.filter.pushdown", "true")
        table_path = str(tmp_path / "t")
        assert [r.v for r in reader.load(table_path).where("v = 1235").collect()] == [1235]
        by_key = reader.load(table_path).where(f"_hoodie_record_key = '{key(1235)}'")
        assert [r.v for r in by_key.collect()] == [1235]
        by_field = reader.load(table_path).where(f"id in ('{key(1235)}', 'nope')")
        assert [r.v for r in by_field.collect()] == [1235]
        off = reader.options(**OFF).load(table_path).where("v = 1235")
        with pytest.raises(Exception, match="CorruptDataFileError"):
            off.collect()
        with pytest.raises(Exception, match="CorruptDataFileError"):
            reader.load(table_path).where("v = 1").collect()
        # HoodieTable.read, both paths.
        for native in (True, False):
            found = table.read(spark, filters=[("v", "=", 1235)], native=native).collect()
            assert [r.v for r in found] == [1235]
    finally:
        spark.conf.unset(PUSHDOWN)


def test_slices_with_log_files_are_never_skipped_on_base_file_statistics(
    spark, tmp_path, bulk_loaded
):
    table, cfg, _ = bulk_loaded(tmp_path, MERGE_ON_READ)
    # A new version of key 11 lands in a log file with a value outside its base file's range,
    # and a delete of key 13 in another.
    table.upsert(spark.createDataFrame([(key(11), "a", 2, 99999)], DDL), cfg)
    table.delete(spark.createDataFrame([(key(13), "a")], "id string, dt string"), cfg)
    changed = table.read(spark, filters=[("v", "=", 99999)])
    assert [r.id for r in changed.collect()] == [key(11)]
    assert table.read(spark, filters=[("id", "=", key(13))]).collect() == []
    assert table.read(spark, filters=[("v", "=", 11)]).collect() == []
    # Read-optimized reads the base files alone: their statistics decide.
    optimized = {"hoodie.datasource.query.type": "read_optimized"}
    old = table.read(spark, optimized, filters=[("id", "=", key(11))])
    assert [r.v for r in old.collect()] == [11]
    assert len(scanned(old)) == 1
    assert table.read(spark, optimized, filters=[("v", "=", 99999)]).collect() == []


def test_time_travel_and_incremental_reads_keep_their_rows(spark, tmp_path, bulk_loaded):
    table, cfg, _ = bulk_loaded(tmp_path)
    first = table.timeline().completed.write_timeline.last_timestamp()
    table.upsert(spark.createDataFrame([(key(21), "a", 2, -21)], DDL), cfg)
    old = table.read(spark, {"as.of.instant": first}, filters=[("id", "=", key(21))])
    assert [r.v for r in old.collect()] == [21]
    assert table.read(spark, {"as.of.instant": first}, filters=[("v", "=", -21)]).collect() == []
    new = table.read(spark, filters=[("id", "=", key(21))])
    assert [r.v for r in new.collect()] == [-21]
    changes = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": first,
    }
    changed = table.read(spark, changes, filters=[("v", "<", 0)])
    assert [r.id for r in changed.collect()] == [key(21)]
    assert table.read(spark, changes, filters=[("id", "=", key(23))]).collect() == []


def test_a_point_read_by_key_reads_each_footer_once_and_scans_one_file(
    spark, tmp_path, bulk_loaded
):
    """Through `TracingFileIO`: every base file's footer is read once, on the driver (data
    skipping's read serves the native path's type check), and Spark scans the one kept file.
    (The data source's tasks open the table themselves, untraced: the spoiled files of
    `test_the_data_source_skips_by_pushed_filters` show what they read.)"""
    bulk_loaded(tmp_path)
    path, trace = str(tmp_path / "t"), tmp_path / "io.trace"
    traced = HoodieTable(HoodieTableMetaClient.load(TracingFileIO(load_file_io(path), str(trace))))
    files = latest_base_files(traced)
    point = traced.read(spark, filters=[("id", "=", key(42))])
    opened = Counter(
        line.split("\t")[1]
        for line in trace.read_text().splitlines()
        if line.split("\t")[0] in ("parquet_file", "read_parquet")
    )
    assert opened == Counter(files.values())
    assert [r.v for r in point.collect()] == [42]
    (only,) = scanned(point)
    assert files[only].startswith("b/")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", MERGE_ON_READ])
def test_a_nan_matches_greater_than_through_every_read_path(spark, tmp_path, table_type):
    """Spark orders NaN above every number, so `x > 5` matches a NaN row. pyarrow's min/max
    leave NaN out and Spark's parquet row-group filter would trust them: base files we write
    carry no min/max for a float column holding a NaN, and our own skipping does not prune on
    `>` over floats. A compaction rewrites the file: its NaN stays readable."""
    cfg = id_dt_ts_config("nan", table_type, {})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    ddl = "id string, dt string, ts long, x double"
    nan = float("nan")
    table.upsert(spark.createDataFrame([("1", "a", 1, nan), ("2", "a", 1, 1.0)], ddl), cfg)
    table.upsert(spark.createDataFrame([("3", "a", 1, 2.0), ("4", "a", 1, nan)], ddl), cfg)
    spark.conf.set(PUSHDOWN, "true")
    try:
        for native in (True, False):
            where = table.read(spark, native=native).where("x > 5")
            assert sorted(r.id for r in where.collect()) == ["1", "4"], native
            pruned = table.read(spark, filters=[("x", ">", 5.0)], native=native)
            assert sorted(r.id for r in pruned.collect()) == ["1", "4"], native
        source = spark.read.format("hoodie").load(str(tmp_path / "t")).where("x > 5")
        assert sorted(r.id for r in source.collect()) == ["1", "4"]
    finally:
        spark.conf.unset(PUSHDOWN)

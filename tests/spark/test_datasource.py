"""The `hoodie` Spark data source: `spark.read.format("hoodie").load(path)`."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pyarrow as pa
import pytest
from _spark_helpers import id_dt_ts_config
from sample_tables import ROOT, unzip

from hoodie import HoodieTable, WriteConfig
from hoodie.read.datasource import register
from hoodie.schema import META_COLUMNS

pytestmark = pytest.mark.spark

FIXTURES = ROOT / "sample_table" / "cow"
META = list(META_COLUMNS)


def _unzip(name: str, target: Path) -> str:
    return str(unzip(FIXTURES / f"{name}.zip", target))


def test_load_returns_latest_snapshot(spark, tmp_path):
    register(spark)
    path = str(tmp_path / "ds")
    cfg = WriteConfig.build("ds", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(path, cfg)
    schema = "id int, name string, dt string"
    table.upsert(spark.createDataFrame([(1, "a", "A"), (2, "b", "A"), (3, "c", "B")], schema), cfg)
    second = table.upsert(spark.createDataFrame([(2, "b2", "A"), (4, "d", "C")], schema), cfg)

    df = spark.read.format("hoodie").load(path)
    assert df.columns == META + ["id", "name", "dt"]
    rows = sorted((r["id"], r["name"], r["dt"]) for r in df.collect())
    assert rows == [(1, "a", "A"), (2, "b2", "A"), (3, "c", "B"), (4, "d", "C")]
    # Only the latest version of each file group is read.
    latest = {f.name for f in table.file_system_view().latest_base_files()}
    assert {r["_hoodie_file_name"] for r in df.select("_hoodie_file_name").collect()} == latest
    # Filters, projections and SQL work on top of the source.
    updated = df.filter(df["_hoodie_commit_time"] == second.instant).select("id").collect()
    assert sorted(r["id"] for r in updated) == [2, 4]
    df.createOrReplaceTempView("hoodie_ds_view")
    count = spark.sql("select count(*) as n from hoodie_ds_view where dt = 'A'").collect()
    assert count[0]["n"] == 2


def test_table_without_commits_reads_no_rows(spark, tmp_path):
    register(spark)
    path = str(tmp_path / "empty")
    cfg = WriteConfig.build("empty", record_key="id", partition_path="dt")
    HoodieTable.for_write(path, cfg)  # creates .hoodie/ only
    df = spark.read.format("hoodie").load(path)
    assert df.collect() == []
    assert df.columns[:5] == META


def test_hudi_written_empty_table_reads_no_rows(spark, tmp_path):
    register(spark)
    df = spark.read.format("hoodie").load(_unzip("v6_empty", tmp_path))
    assert df.count() == 0
    assert df.columns[:5] == META


def test_reads_hudi_written_table_like_hudi_rs(spark, tmp_path):
    import hudi

    register(spark)
    path = _unzip("v6_nonpartitioned", tmp_path)
    columns = ["id", "name", "isActive", "intField", "longField", "dateField", "timestampField"]
    ours = sorted(
        tuple(r[c] for c in columns)
        for r in spark.read.format("hoodie").load(path).select(*columns).collect()
    )
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read()).select(columns).to_pylist()
    expected = sorted(
        tuple(
            v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            if isinstance(v, datetime.datetime) and v.tzinfo
            else v
            for v in (row[c] for c in columns)
        )
        for row in theirs
    )
    assert ours == expected


# -- reads that name their columns --------------------------------------------------------------
@pytest.mark.layout_v6
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_read_given_a_schema_returns_only_those_columns_merged_correctly(
    spark, tmp_path, table_type
):
    """PySpark never tells a Python source which columns a query uses; a read that names them
    with .schema() gets just those, yet merge-on-read still merges by key and ordering field
    (neither of which the projection returns) and applies deletes."""
    register(spark)
    path = str(tmp_path / table_type)
    cfg = id_dt_ts_config("proj", table_type, {"hoodie.compact.inline": "false"})
    table = HoodieTable.for_write(path, cfg)
    schema = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
    table.upsert(
        spark.createDataFrame(
            [(1, "a", "A", 5, False), (2, "b", "A", 5, False), (3, "c", "B", 5, False)], schema
        ),
        cfg,
    )
    # Later commits: 1 updated, 2's update loses on ordering, 3 deleted, 4 inserted.
    table.upsert(
        spark.createDataFrame(
            [(1, "a2", "A", 9, False), (2, "b-old", "A", 1, False), (4, "d", "B", 5, False)],
            schema,
        ),
        cfg,
    )
    second = table.upsert(spark.createDataFrame([(3, "c", "B", 6, True)], schema), cfg)
    if table_type == "MERGE_ON_READ":
        assert any(".log." in name for _, _, names in os.walk(path) for name in names)

    first = table.timeline().completed.instants[0].timestamp
    projected = spark.read.format("hoodie").schema("name string, id int").load(path)
    assert projected.columns == ["name", "id"]
    assert sorted((r["id"], r["name"]) for r in projected.collect()) == [
        (1, "a2"),
        (2, "b"),
        (4, "d"),
    ]
    full = spark.read.format("hoodie").load(path)
    assert sorted(projected.collect()) == sorted(full.select("name", "id").collect())

    changes = (
        spark.read.format("hoodie")
        .schema("id int")
        .option("hoodie.datasource.query.type", "incremental")
        .option("hoodie.datasource.read.begin.instanttime", first)
        .option("hoodie.datasource.read.end.instanttime", second.instant)
        .load(path)
    )
    assert sorted(r["id"] for r in changes.collect()) == [1, 4]


def test_a_schema_naming_an_unknown_column_is_an_error(spark, tmp_path):
    register(spark)
    path = str(tmp_path / "unknown")
    cfg = WriteConfig.build("unknown_cols", record_key="id")
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame([(1, "a")], "id int, name string"), cfg)
    with pytest.raises(Exception, match=r"column\(s\) nmae are not in table 'unknown_cols'"):
        spark.read.format("hoodie").schema("id int, nmae string").load(path).collect()


# -- tasks ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_small_file_slices_are_packed_into_fewer_tasks_and_read_the_same(
    spark, tmp_path, table_type
):
    """Six partitions of a few rows each: by default the slices share tasks (a task per core at
    most, as Spark packs small files); with a byte cap below every slice each is a task of its
    own. Both read the same rows, merge-on-read logs merged in either case."""
    register(spark)
    path = str(tmp_path / table_type)
    cfg = id_dt_ts_config("packed", table_type, {"hoodie.compact.inline": "false"})
    table = HoodieTable.for_write(path, cfg)
    schema = "id int, name string, dt string, ts bigint"
    table.upsert(
        spark.createDataFrame([(i, f"n{i}", f"d{i % 6}", 1) for i in range(60)], schema), cfg
    )
    table.upsert(
        spark.createDataFrame([(i, f"new{i}", f"d{i % 6}", 2) for i in range(0, 60, 7)], schema),
        cfg,
    )
    slices = sum(1 for _ in table.file_system_view().file_groups())
    assert slices == 6
    if table_type == "MERGE_ON_READ":
        assert any(".log." in name for _, _, names in os.walk(path) for name in names)
    expected = sorted((i, f"new{i}" if i % 7 == 0 else f"n{i}") for i in range(60))

    def read(**options):
        reader = spark.read.format("hoodie")
        for key, value in options.items():
            reader = reader.option(key, value)
        df = reader.load(path)
        return df.rdd.getNumPartitions(), sorted((r["id"], r["name"]) for r in df.collect())

    tasks, rows = read(**{"hoodie.read.parallelism": "2"})
    assert (tasks, rows) == (2, expected)
    tasks, rows = read(**{"hoodie.read.parallelism": "1"})
    assert (tasks, rows) == (1, expected)
    tasks, rows = read(**{"hoodie.read.max.partition.bytes": "1"})
    assert (tasks, rows) == (slices, expected)


def test_a_bad_task_sizing_option_names_itself(spark, tmp_path):
    register(spark)
    path = str(tmp_path / "sizing")
    cfg = WriteConfig.build("sizing", record_key="id")
    HoodieTable.for_write(path, cfg).upsert(spark.createDataFrame([(1,)], "id int"), cfg)
    reader = spark.read.format("hoodie").option("hoodie.read.parallelism", "0")
    with pytest.raises(Exception, match=r"'hoodie.read.parallelism'='0' must be a positive"):
        reader.load(path).collect()

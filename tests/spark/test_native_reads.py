"""`HoodieTable.read` scans base files with Spark's own parquet reader when nothing needs
merging (`hoodie.read.native`), and reads through the `hoodie` data source otherwise. Either
way the rows are the data source's, which the differential test holds to its model."""

from __future__ import annotations

import pytest
from _spark_helpers import completed, id_dt_ts_config

from hoodie import HoodieTable, WriteConfig
from hoodie.properties import MERGE_ON_READ

pytestmark = pytest.mark.spark

DDL = "id int, dt string, ts long, v string"


def scans_parquet(df) -> bool:
    """Is `df` Spark's parquet scan (it lists files), not our Python data source?"""
    return bool(df.inputFiles())


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def same_as_data_source(table: HoodieTable, spark, options=None) -> None:
    """The read's native and data source forms agree, schema and rows, and the first is
    Spark's parquet scan."""
    native = table.read(spark, options, native=True)
    assert scans_parquet(native)
    source = table.read(spark, options, native=False)
    assert not scans_parquet(source)
    assert native.schema == source.schema
    assert rows(native) == rows(source)


def write(spark, table, cfg, data, ddl=DDL):
    return table.upsert(spark.createDataFrame(data, ddl), cfg)


def test_copy_on_write_snapshot_and_time_travel(spark, tmp_path):
    cfg = id_dt_ts_config("native_cow")
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x"), (2, "b", 1, "y"), (3, "a", 1, "z")])
    first = completed(table)[-1]
    write(spark, table, cfg, [(1, "a", 2, "x2"), (4, "c", 1, "w")])
    table.delete(spark.createDataFrame([(2, "b")], "id int, dt string"), cfg)

    latest = table.read(spark)  # native by default on a local file system
    assert scans_parquet(latest)
    assert [(r.id, r.v) for r in latest.orderBy("id").collect()] == [
        (1, "x2"), (3, "z"), (4, "w")
    ]  # fmt: skip
    same_as_data_source(table, spark)
    same_as_data_source(table, spark, {"as.of.instant": first})
    old = table.read(spark, {"as.of.instant": first})
    assert [(r.id, r.v) for r in old.orderBy("id").collect()] == [(1, "x"), (2, "y"), (3, "z")]
    # Spark prunes columns and pushes filters into the scan of our files
    assert [r.v for r in latest.where("id = 3").select("v").collect()] == ["z"]


def test_merge_on_read_merges_through_the_data_source(spark, tmp_path):
    cfg = id_dt_ts_config("native_mor", MERGE_ON_READ, {"hoodie.compact.inline": "false"})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x"), (2, "a", 1, "y")])
    assert scans_parquet(table.read(spark))  # base files only so far
    write(spark, table, cfg, [(1, "a", 2, "x2")])  # a log file now

    snapshot = table.read(spark)
    assert not scans_parquet(snapshot)
    assert {(r.id, r.v) for r in snapshot.collect()} == {(1, "x2"), (2, "y")}
    # read-optimized skips the logs: Spark scans the base files
    optimized = table.read(spark, {"hoodie.datasource.query.type": "read_optimized"})
    assert scans_parquet(optimized)
    same_as_data_source(table, spark, {"hoodie.datasource.query.type": "read_optimized"})
    assert {(r.id, r.v) for r in optimized.collect()} == {(1, "x"), (2, "y")}

    table.compact(spark)
    assert scans_parquet(table.read(spark))
    same_as_data_source(table, spark)


def test_incremental_reads_stay_with_the_data_source(spark, tmp_path):
    cfg = id_dt_ts_config("native_incr")
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x")])
    first = completed(table)[-1]
    write(spark, table, cfg, [(2, "a", 1, "y")])
    changes = table.read(
        spark,
        {"hoodie.datasource.query.type": "incremental",
         "hoodie.datasource.read.begin.instanttime": first},
        native=True,
    )  # fmt: skip
    assert not scans_parquet(changes)
    assert [r.id for r in changes.collect()] == [2]


@pytest.mark.parametrize(
    ("widenings", "natively"),
    [
        # Spark reads an int column as long or double and a float as double ...
        ({"a": ("int", "long"), "b": ("int", "double"), "c": ("float", "double")}, True),
        # ... not an int as float or a long as double: the data source reads (and casts)
        ({"a": ("int", "float")}, False),
        ({"a": ("long", "double")}, False),
    ],
    ids=["int-long,int-double,float-double", "int-float", "long-double"],
)
def test_widened_columns(spark, tmp_path, widenings, natively):
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("native_widen", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(path, cfg)

    def batch(rows, which):  # which: 0 = the stored types, 1 = the widened ones
        types = {c: pair[which] for c, pair in widenings.items()}
        data = [
            (i, dt, *[float(v) if types[c] in ("float", "double") else v for c in types])
            for i, dt, v in rows
        ]
        ddl = ", ".join(["id int", "dt string", *[f"{c} {t}" for c, t in types.items()]])
        return spark.createDataFrame(data, ddl)

    table.upsert(batch([(1, "a", 5), (2, "b", 6)], 0), cfg)
    table.upsert(batch([(3, "b", 7)], 1), cfg)

    read = table.read(spark)
    assert scans_parquet(read) == natively
    for column, (_, widened) in widenings.items():
        assert dict(read.select("id", column).collect()) == {1: 5, 2: 6, 3: 7}
        wanted = "bigint" if widened == "long" else widened
        assert read.schema[column].dataType.simpleString() == wanted
    if natively:
        same_as_data_source(table, spark)


def test_a_column_added_later_reads_as_null_in_older_files(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("native_added", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(path, cfg)
    write(spark, table, cfg, [(1, "a"), (2, "b")], "id int, dt string")
    write(spark, table, cfg, [(3, "b", "new")], "id int, dt string, extra string")

    read = table.read(spark)
    assert scans_parquet(read)
    assert dict(read.select("id", "extra").collect()) == {1: None, 2: None, 3: "new"}
    same_as_data_source(table, spark)


def test_hive_style_partition_folders_are_not_read_as_columns(spark, tmp_path):
    """Spark's parquet reader infers partition columns from `name=value` folders; the planned
    files are read as files, with the table's columns only."""
    cfg = WriteConfig.build(
        "native_hive", record_key="id", partition_path="dt", precombine_field="ts",
        hive_style_partitioning=True,
    )  # fmt: skip
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x"), (2, "b", 1, "y")])
    read = table.read(spark)
    assert scans_parquet(read)
    assert read.columns == table.read(spark, native=False).columns
    assert {r._hoodie_partition_path for r in read.collect()} == {"dt=a", "dt=b"}
    same_as_data_source(table, spark)


def test_a_table_without_files(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("native_empty", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(path, cfg)
    write(spark, table, cfg, [(1, "a")], "id int, dt string")
    table.delete(spark.createDataFrame([(1, "a")], "id int, dt string"), cfg)
    read = table.read(spark)
    assert read.count() == 0
    assert read.columns == table.read(spark, native=False).columns


def test_paths_spark_would_read_as_glob_patterns_stay_with_the_data_source(spark, tmp_path):
    """Spark expands `[`, `{`, `*` and `?` in the paths given to `spark.read.parquet`; a
    partition value holding one is read by the data source."""
    cfg = id_dt_ts_config("native_glob")
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a[1]", 1, "x"), (2, "b", 1, "y")])
    read = table.read(spark)
    assert not scans_parquet(read)
    assert {(r.id, r.dt) for r in read.collect()} == {(1, "a[1]"), (2, "b")}

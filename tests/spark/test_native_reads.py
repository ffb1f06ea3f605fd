"""`HoodieTable.read` plans once and scans the base files of the file slices with nothing to
merge with Spark's own parquet reader (`hoodie.read.native`); the `hoodie` data source reads
the other slices of the same plan. Either way the rows are the data source's, which the
differential test holds to its model."""

from __future__ import annotations

import posixpath
from dataclasses import replace

import pytest
from _spark_helpers import completed, id_dt_ts_config

from hoodie import HoodieTable, WriteConfig
from hoodie.properties import MERGE_ON_READ

pytestmark = pytest.mark.spark

DDL = "id int, dt string, ts long, v string"


def scans_parquet(df) -> bool:
    """Does `df` scan files with Spark's parquet reader (our Python data source lists none)?"""
    return bool(df.inputFiles())


def scanned(df) -> set[str]:
    """The names of the files Spark's parquet reader scans for `df`."""
    return {posixpath.basename(uri) for uri in df.inputFiles()}


def base_files(table: HoodieTable, *partitions: str) -> set[str]:
    """The latest base files' names in `partitions`."""
    return {
        f.name
        for f in table.file_system_view().latest_base_files()
        if f.partition_path in partitions
    }


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def written_by(table: HoodieTable, instant: str) -> set[str]:
    """The names of the latest base files `instant` wrote."""
    return {f.name for f in table.file_system_view().latest_base_files() if f.instant == instant}


def same_as_data_source(table: HoodieTable, spark, options=None) -> set[str]:
    """The read's native and data source forms agree, schema and rows; returns the files the
    first scans with Spark's parquet reader."""
    native = table.read(spark, options, native=True)
    source = table.read(spark, options, native=False)
    assert not scans_parquet(source)
    assert native.schema == source.schema
    assert rows(native) == rows(source)
    return scanned(native)


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
    # (partition b's file group holds an empty base file now)
    assert same_as_data_source(table, spark) == base_files(table, "a", "b", "c")
    assert len(same_as_data_source(table, spark, {"as.of.instant": first})) == 2
    old = table.read(spark, {"as.of.instant": first})
    assert [(r.id, r.v) for r in old.orderBy("id").collect()] == [(1, "x"), (2, "y"), (3, "z")]
    # Spark prunes columns and pushes filters into the scan of our files
    assert [r.v for r in latest.where("id = 3").select("v").collect()] == ["z"]


def test_merge_on_read_scans_the_slices_without_log_files(spark, tmp_path):
    cfg = id_dt_ts_config("native_mor", MERGE_ON_READ, {"hoodie.compact.inline": "false"})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x"), (2, "a", 1, "y"), (3, "b", 1, "z")])
    assert scanned(table.read(spark)) == base_files(table, "a", "b")  # base files only so far
    write(spark, table, cfg, [(1, "a", 2, "x2")])  # a log file in partition a

    # Partition b's slice is Spark's scan; a's, with its log file, the data source's merge.
    snapshot = table.read(spark)
    assert scanned(snapshot) == base_files(table, "b")
    assert {(r.id, r.v) for r in snapshot.collect()} == {(1, "x2"), (2, "y"), (3, "z")}
    assert same_as_data_source(table, spark) == base_files(table, "b")
    assert {(r.id, r.v) for r in snapshot.where("dt = 'a'").collect()} == {(1, "x2"), (2, "y")}
    # read-optimized skips the logs: Spark scans every base file
    read_optimized = {"hoodie.datasource.query.type": "read_optimized"}
    optimized = table.read(spark, read_optimized)
    assert scanned(optimized) == base_files(table, "a", "b")
    assert same_as_data_source(table, spark, read_optimized) == base_files(table, "a", "b")
    assert {(r.id, r.v) for r in optimized.collect()} == {(1, "x"), (2, "y"), (3, "z")}

    table.services.compact(spark)
    assert scanned(table.read(spark)) == base_files(table, "a", "b")
    assert same_as_data_source(table, spark) == base_files(table, "a", "b")


def test_both_halves_read_the_table_as_it_was_at_the_read_call(spark, tmp_path):
    """The data source reads the slices `HoodieTable.read` planned, counting the instants the
    plan counted: a write between `read` and the action shows in neither half (as in
    Spark's scan of the planned files), so the two never disagree on the snapshot."""
    cfg = id_dt_ts_config("native_pinned", MERGE_ON_READ, {"hoodie.compact.inline": "false"})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x"), (2, "a", 1, "y"), (3, "b", 1, "z")])
    write(spark, table, cfg, [(1, "a", 2, "x2")])
    snapshot = table.read(spark)
    assert scanned(snapshot) == base_files(table, "b")

    write(spark, table, cfg, [(2, "a", 3, "y3"), (3, "b", 3, "z3"), (5, "a", 1, "new")])
    assert {(r.id, r.v) for r in snapshot.collect()} == {(1, "x2"), (2, "y"), (3, "z")}
    later = table.read(spark)
    assert {(r.id, r.v) for r in later.collect()} == {
        (1, "x2"), (2, "y3"), (3, "z3"), (5, "new")
    }  # fmt: skip


def after(table: HoodieTable) -> str:
    """The begin instant of an incremental read of what comes after the latest write: its
    instant, or on table version 8 its completion time (ranges are of completion times)."""
    latest = table.timeline().completed.write_timeline.instants[-1]
    return latest.completion_time or latest.timestamp


@pytest.mark.parametrize("version", ["6", "8"])
def test_incremental_reads_scan_base_files_and_keep_the_range(spark, tmp_path, version):
    """A base file holds rows of earlier commits too: the scan keeps the range's, by commit
    time (table version 6) or by the instants that completed in it (version 8); slices with
    log files are merged by the data source."""
    options = {"hoodie.write.table.version": version, "hoodie.compact.inline": "false"}
    cow = id_dt_ts_config("native_incr", options=options)
    table = HoodieTable.for_write(str(tmp_path / "cow"), cow)
    write(spark, table, cow, [(1, "a", 1, "x"), (2, "b", 1, "y")])
    first = after(table)
    write(spark, table, cow, [(3, "a", 1, "z")])
    since_first = {"hoodie.datasource.query.type": "incremental",
                   "hoodie.datasource.read.begin.instanttime": first}  # fmt: skip
    last = completed(table)[-1]
    changes = table.read(spark, since_first)
    assert scanned(changes) == written_by(table, last)  # may hold row 1 too (a small file)
    assert [r.id for r in changes.collect()] == [3]
    assert same_as_data_source(table, spark, since_first) == written_by(table, last)
    nothing = {**since_first, "hoodie.datasource.read.begin.instanttime": after(table)}
    assert table.read(spark, nothing).count() == 0

    mor = id_dt_ts_config("native_incr_mor", MERGE_ON_READ, options)
    table = HoodieTable.for_write(str(tmp_path / "mor"), mor)
    write(spark, table, mor, [(1, "a", 1, "x"), (2, "b", 1, "y")])
    first = after(table)
    write(spark, table, mor, [(1, "a", 2, "x2"), (3, "c", 1, "w")])  # a log file, a new base
    since_first["hoodie.datasource.read.begin.instanttime"] = first
    changes = table.read(spark, since_first)  # the file groups the range wrote: a's and c's
    assert scanned(changes) == base_files(table, "c")
    assert {(r.id, r.v) for r in changes.collect()} == {(1, "x2"), (3, "w")}
    assert same_as_data_source(table, spark, since_first) == base_files(table, "c")


@pytest.mark.parametrize(
    ("widenings", "natively"),
    [
        # Spark reads an int column as long or double and a float as double ...
        ({"a": ("int", "long"), "b": ("int", "double"), "c": ("float", "double")}, {"a", "b"}),
        # ... not an int as float or a long as double: the data source reads (and casts)
        # partition a's file, which has the old type
        ({"a": ("int", "float")}, {"b"}),
        ({"a": ("long", "double")}, {"b"}),
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
    assert scanned(read) == base_files(table, *natively)
    for column, (_, widened) in widenings.items():
        assert dict(read.select("id", column).collect()) == {1: 5, 2: 6, 3: 7}
        wanted = "bigint" if widened == "long" else widened
        assert read.schema[column].dataType.simpleString() == wanted
    assert same_as_data_source(table, spark) == base_files(table, *natively)


def test_a_column_added_later_reads_as_null_in_older_files(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("native_added", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(path, cfg)
    write(spark, table, cfg, [(1, "a"), (2, "b")], "id int, dt string")
    write(spark, table, cfg, [(3, "b", "new")], "id int, dt string, extra string")

    read = table.read(spark)
    assert scanned(read) == base_files(table, "a", "b")
    assert dict(read.select("id", "extra").collect()) == {1: None, 2: None, 3: "new"}
    same_as_data_source(table, spark)


@pytest.mark.parametrize("version", ["6", "8"])
def test_an_incremental_read_has_the_latest_columns(spark, tmp_path, version):
    """A range before a column was added reads it as null, in the table's latest schema, as
    the data source and Apache Hudi read it (the native read took the columns as of the
    range's end; found by Apache Hudi as the judge, tests/judge/test_we_read_hudi.py)."""
    cfg = id_dt_ts_config("native_incr_added", options={"hoodie.write.table.version": version})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x"), (2, "b", 1, "y")])
    first = after(table)
    write(spark, table, cfg, [(3, "a", 1, "z", "new")], f"{DDL}, extra string")
    until_first = {"hoodie.datasource.query.type": "incremental",
                   "hoodie.datasource.read.begin.instanttime": "0",
                   "hoodie.datasource.read.end.instanttime": first}  # fmt: skip
    source = spark.read.format("hoodie").options(**until_first).load(table.base_uri)
    assert "extra" in source.columns
    changes = table.read(spark, until_first)
    assert changes.schema == source.schema
    assert {(r.id, r.extra) for r in changes.collect()} == {(1, None), (2, None)}
    same_as_data_source(table, spark, until_first)


def test_an_incremental_range_of_a_log_compaction_alone_is_empty(spark, tmp_path):
    """A log compaction (Hudi 1.x: a delta commit whose metadata says LOG_COMPACT) rewrites
    log blocks into one, its rows stamped with its own instant, and changes no row: Apache
    Hudi's incremental query of its range gives nothing, and so do we (we gave the rewritten
    rows; found by Apache Hudi as the judge, tests/judge/test_we_read_hudi.py). Our writer
    runs no log compaction: the last delta commit is relabelled as one."""
    options = {"hoodie.write.table.version": "8", "hoodie.compact.inline": "false"}
    cfg = id_dt_ts_config("log_compacted", MERGE_ON_READ, options)
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a", 1, "x"), (2, "b", 1, "y")])
    write(spark, table, cfg, [(1, "a", 2, "x2")])
    before = after(table)
    write(spark, table, cfg, [(1, "a", 3, "x3")])
    last = table.timeline().completed.write_timeline.instants[-1]
    meta_client = table.meta_client
    relabelled = replace(meta_client.commit_metadata(last), operation_type="LOG_COMPACT")
    table.storage.write_atomic(
        meta_client.instant_path(last), meta_client.commit_content(relabelled)
    )
    its_range = {"hoodie.datasource.query.type": "incremental",
                 "hoodie.datasource.read.begin.instanttime": before,
                 "hoodie.datasource.read.end.instanttime": after(table)}  # fmt: skip
    assert spark.read.format("hoodie").options(**its_range).load(table.base_uri).count() == 0
    assert table.read(spark, its_range).count() == 0
    until = {**its_range, "hoodie.datasource.read.begin.instanttime": "0",
             "hoodie.datasource.read.end.instanttime": before}  # fmt: skip
    assert {(r.id, r.v) for r in table.read(spark, until).collect()} == {(1, "x2"), (2, "y")}


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
    assert scanned(read) == base_files(table, "dt=a", "dt=b")
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
    """Spark expands `[`, `{`, `*` and `?` in the paths given to `spark.read.parquet`; the
    slices of a partition value holding one are read by the data source."""
    cfg = id_dt_ts_config("native_glob")
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    write(spark, table, cfg, [(1, "a[1]", 1, "x"), (2, "b", 1, "y")])
    read = table.read(spark)
    assert scanned(read) == base_files(table, "b")
    assert {(r.id, r.dt) for r in read.collect()} == {(1, "a[1]"), (2, "b")}
    assert same_as_data_source(table, spark) == base_files(table, "b")

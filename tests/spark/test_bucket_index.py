"""BUCKET index writes: each key's file group follows from its hash, with no key scan."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from _spark_helpers import all_files, id_dt_ts_config, snapshot

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import InvalidConfigError
from hoodie.index.bucket import BucketIndex, bucket_id, bucket_of_file_id
from hoodie.naming import parse_log_file_name

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
A, B = "2024-01-01", "2024-01-02"
BUCKETS = 3


def bucket_config(table_type: str, buckets: int = BUCKETS, **options) -> WriteConfig:
    return id_dt_ts_config(
        "bucketed",
        table_type,
        {
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": str(buckets),
            "hoodie.compact.inline": "false",
            **options,
        },
    )


def file_groups(path: str) -> set[tuple[str, str]]:
    """(partition, file id) of every data file: base files and log files."""
    groups = set()
    for relative in all_files(path):
        partition, name = os.path.split(relative)
        if partition.startswith(".hoodie") or not (".parquet" in name or ".log." in name):
            continue
        log = parse_log_file_name(name)
        groups.add((partition, log.file_id if log else name.split("_")[0]))
    return groups


def test_bucket_column_is_the_java_hash(spark):
    """The Spark expression and the reference agree, for simple and multi-field keys."""
    values = ["", "k1", "hello", "Ünïcödé", "😀x", "id:1,name:x", None, "1234567890123"]
    df = spark.createDataFrame([(v, str(i)) for i, v in enumerate(values)], "a string, b string")
    one = BucketIndex(7, ("a",))
    two = BucketIndex(5, ("a", "b"))
    got = df.select(one.bucket_column().alias("one"), two.bucket_column().alias("two")).collect()
    assert [r["one"] for r in got] == [bucket_id([v], 7) for v in values]
    assert [r["two"] for r in got] == [bucket_id([v, str(i)], 5) for i, v in enumerate(values)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_records_stay_in_their_buckets(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    cfg = bucket_config(table_type)
    table = HoodieTable.for_write(path, cfg)
    first = [(i, f"n{i}", (A, B)[i % 2], 1, False) for i in range(40)]
    table.upsert(spark.createDataFrame(first, SCHEMA), cfg)
    groups = file_groups(path)
    assert {(p, bucket_of_file_id(f)) for p, f in groups} <= {
        (p, b) for p in (A, B) for b in range(BUCKETS)
    }
    assert len(groups) == len({(p, bucket_of_file_id(f)) for p, f in groups})

    # Updates, a stale update, new keys in old and new partitions, a delete, a delete of an
    # unknown key (nothing to do, even in a bucket the partition does not have yet).
    second = [(1, "n1-v2", B, 2, False), (2, "stale", A, 0, False), (3, None, B, 2, True),
              (100, "new", A, 2, False), (101, "new", "2024-01-03", 2, False),
              (500, None, "2024-01-04", 2, True)]  # fmt: skip
    table.upsert(spark.createDataFrame(second, SCHEMA), cfg)
    expected = {i: f"n{i}" for i in range(40) if i != 3} | {1: "n1-v2", 100: "new", 101: "new"}
    rows = snapshot(table, spark)
    assert {int(k): v["name"] for k, v in rows.items()} == expected
    # Every record sits in the file group of its bucket, and buckets were never split.
    for key, row in rows.items():
        file_id = row["_hoodie_file_name"].split("_")[0]
        assert bucket_of_file_id(file_id) == bucket_id([key], BUCKETS), key
    after = file_groups(path)
    assert groups < after  # one new bucket (2024-01-03), the same file groups otherwise
    assert {p for p, _ in after - groups} == {"2024-01-03"}
    if table_type == "MERGE_ON_READ":
        # Changes to existing buckets (the new key 100 too) went to log files.
        logs = [f for f in all_files(path) if ".log." in f]
        assert logs and all(f.startswith((A, B)) for f in logs)
        table.services.compact(spark, cfg)
        assert {int(k): v["name"] for k, v in snapshot(table, spark).items()} == expected
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    assert dict(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist())) == expected

    # A later SIMPLE-index write still finds keys that only live in bucket log files.
    simple = id_dt_ts_config("bucketed", table_type, {"hoodie.compact.inline": "false"})
    table.upsert(spark.createDataFrame([(100, "again", A, 3, False)], SCHEMA), simple)
    rows = snapshot(table, spark)
    assert rows["100"]["name"] == "again" and len(rows) == len(expected)


def data_files(path: str) -> set[str]:
    return {f for f in all_files(path) if ".parquet" in f or ".log." in f}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_table_laid_out_otherwise_is_refused(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    simple = id_dt_ts_config("bucketed", table_type)
    table = HoodieTable.for_write(path, simple)
    data = spark.createDataFrame([(1, "a", A, 1, False)], SCHEMA)
    table.upsert(data, simple)
    before = data_files(path)
    # The batch also has a new partition: on merge-on-read the refusal comes from the write
    # task of partition A, after the task of partition B may have written its base file,
    # which the rollback then removes.
    both = spark.createDataFrame([(1, "a2", A, 2, False), (2, "b", B, 2, False)], SCHEMA)
    # One random file id in 43 starts with 8 digits and so reads as a (far too high) bucket.
    (file_id,) = {f.file_id for f in table.file_system_view().latest_base_files()}
    refusal = (
        "not a bucket file group"
        if bucket_of_file_id(file_id) is None
        else (f"{file_id} .* names bucket {int(file_id[:8])}, .* or with another index")
    )
    with pytest.raises(InvalidConfigError, match=refusal):
        table.upsert(both, bucket_config(table_type))
    assert data_files(path) == before
    assert not list(table.timeline().pending)
    assert {int(k): v["name"] for k, v in snapshot(table, spark).items()} == {1: "a"}
    # A full refresh lays the table out in buckets; bucket writes then work.
    table.overwrite(data, bucket_config(table_type))
    table.upsert(spark.createDataFrame([(2, "b", A, 1, False)], SCHEMA),
                 bucket_config(table_type))  # fmt: skip
    assert sorted(int(k) for k in snapshot(table, spark)) == [1, 2]

    path = str(tmp_path / "b")
    table = HoodieTable.for_write(path, bucket_config(table_type, buckets=8))
    many = spark.createDataFrame([(i, "a", A, 1, False) for i in range(50)], SCHEMA)
    table.upsert(many, bucket_config(table_type, buckets=8))
    before = data_files(path)
    with pytest.raises(InvalidConfigError, match="bucket count cannot change"):
        table.upsert(many, bucket_config(table_type, buckets=2))
    # More buckets would send stored keys' new versions to other buckets (duplicates): the
    # count recorded in the commits refuses it too.
    with pytest.raises(InvalidConfigError, match=r"num.buckets=8 .*asks for 16"):
        table.upsert(many, bucket_config(table_type, buckets=16))
    assert data_files(path) == before and not list(table.timeline().pending)
    assert len(snapshot(table, spark)) == 50


@pytest.mark.layout_v6
def test_merge_on_read_bucket_writes_refuse_null_keys_and_respect_pending_compactions(
    spark, tmp_path
):
    """The one-job merge-on-read write (bucket_writer): its tasks check keys and find the
    slice a pending compaction will start, like the planned write does."""
    from hoodie.exceptions import NullRecordKeyError
    from hoodie.table_services.compaction import Compactor

    cfg = bucket_config("MERGE_ON_READ", buckets=2)
    path = str(tmp_path / "t")
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame([(i, f"n{i}", A, 1, False) for i in range(10)], SCHEMA),
                 cfg)  # fmt: skip
    table.upsert(spark.createDataFrame([(1, "n1-v2", A, 2, False)], SCHEMA), cfg)
    before = data_files(path)
    bad = spark.createDataFrame([(2, "x", A, 3, False), (None, "no key", B, 3, False)], SCHEMA)
    timeline = table.timeline().timestamps()
    with pytest.raises(NullRecordKeyError, match=r"a row in partition '2024-01-02' has .*'id'"):
        table.upsert(bad, cfg)
    assert data_files(path) == before and table.timeline().timestamps() == timeline

    planned = Compactor(table.meta_client).schedule()
    assert planned is not None
    # Written while the plan is pending: the logs start the slice the compaction creates.
    during = table.upsert(
        spark.createDataFrame([(1, "n1-v3", A, 3, False), (3, None, A, 3, True)], SCHEMA), cfg
    )
    for stat in during.metadata.write_stats():
        assert parse_log_file_name(os.path.basename(stat.path)).instant == planned
    expected = {i: f"n{i}" for i in range(10) if i != 3} | {1: "n1-v3"}
    assert {int(k): v["name"] for k, v in snapshot(table, spark).items()} == expected
    Compactor(table.meta_client).execute(spark, planned)
    assert {int(k): v["name"] for k, v in snapshot(table, spark).items()} == expected
    table.services.compact(spark, cfg)
    assert {int(k): v["name"] for k, v in snapshot(table, spark).items()} == expected

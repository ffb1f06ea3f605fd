"""Writes are as strict as reads: a write that would tag or merge against a damaged file of a
completed commit stops before its commit, naming the file, instead of inserting duplicates or
dropping rows in silence."""

from __future__ import annotations

import os

import pytest
from _spark_helpers import all_files, completed, id_dt_ts_config, snapshot

from hoodie import HoodieTable
from hoodie.exceptions import CorruptDataFileError, MissingDataFileError

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
A = "2024-01-01"


def data_files(path: str) -> dict[str, int]:
    return {f: n for f, n in all_files(path).items() if not f.startswith(".hoodie")}


@pytest.mark.parametrize(
    "operation, options",
    [
        ("upsert", {}),  # tagged in the write tasks (routed)
        ("insert", {"hoodie.datasource.insert.dup.policy": "drop"}),  # a tagging job first
    ],
)
def test_a_write_stops_on_a_corrupt_log_block_of_a_completed_instant(
    spark, tmp_path, operation, options
):
    """Key 2 lives only in a log block of a completed delta commit (a bucket-index write sent
    it there). With that block's framing broken, tagging skipped it: the next write did not
    find key 2 and wrote it again, a duplicate both readers returned."""
    path = str(tmp_path / "t")
    bucket = id_dt_ts_config("t", "MERGE_ON_READ", {
        "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1",
        "hoodie.compact.inline": "false",
    })  # fmt: skip
    table = HoodieTable.for_write(path, bucket)
    table.upsert(spark.createDataFrame([(1, "a", A, 1, False)], SCHEMA), bucket)
    logged = table.upsert(spark.createDataFrame([(2, "b", A, 1, False)], SCHEMA), bucket)
    (stat,) = logged.metadata.write_stats()
    assert ".log." in stat.path  # (bucket writes count new keys in logs as updates)
    log = os.path.join(path, stat.path)
    with open(log, "r+b") as handle:  # the block's magic: it no longer frames as a block
        handle.seek(int(stat.log_offset or 0))
        handle.write(b"XXXXXX")
    before, history = data_files(path), completed(table)

    simple = id_dt_ts_config("t", "MERGE_ON_READ", {"hoodie.compact.inline": "false", **options})
    batch = spark.createDataFrame([(2, "b2", A, 2, False)], SCHEMA)
    with pytest.raises(CorruptDataFileError) as raised:
        getattr(table, operation)(batch, simple)
    message = str(raised.value)
    assert stat.path in message and logged.instant in message and path in message
    assert completed(table) == history and data_files(path) == before  # nothing written


@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET"])
def test_an_upsert_stops_on_a_missing_base_file_of_a_completed_commit(spark, tmp_path, index):
    """The newest base file of a file group is gone: the upsert merged into the older
    version instead, bringing back what the lost commit had overwritten."""
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("t", "COPY_ON_WRITE", {"hoodie.index.type": index})
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame([(1, "a", A, 1, False), (2, "b", A, 1, False)], SCHEMA), cfg)
    second = table.upsert(spark.createDataFrame([(1, "a2", A, 2, False)], SCHEMA), cfg)
    (stat,) = second.metadata.write_stats()
    os.remove(os.path.join(path, stat.path))
    before, history = data_files(path), completed(table)
    with pytest.raises(MissingDataFileError) as raised:
        table.upsert(spark.createDataFrame([(2, "b2", A, 2, False)], SCHEMA), cfg)
    assert stat.path in str(raised.value) and second.instant in str(raised.value)
    assert completed(table) == history and data_files(path) == before
    with pytest.raises(MissingDataFileError):
        snapshot(table, spark)


@pytest.mark.parametrize("operation", ["insert", "upsert"])
def test_a_partition_that_lost_its_metadata_file_is_still_tagged(spark, tmp_path, operation):
    """A partition whose `.hoodie_partition_metadata` is gone is still read; a write that tags
    in a job of its own (here an insert that drops known keys; upserts of big partitions too)
    took the metadata file alone as the mark of an existing partition, did not look up its
    keys and wrote key 1 again: a duplicate both readers returned. An upsert (routed here)
    updates the key and writes the metadata file again."""
    path = str(tmp_path / "t")
    options = {"hoodie.datasource.insert.dup.policy": "drop"} if operation == "insert" else {}
    config = id_dt_ts_config("t", "COPY_ON_WRITE", options)
    table = HoodieTable.for_write(path, config)
    table.insert(spark.createDataFrame([(1, "a", A, 1, False), (2, "b", A, 1, False)], SCHEMA),
                 config)  # fmt: skip
    os.remove(os.path.join(path, A, ".hoodie_partition_metadata"))

    getattr(table, operation)(spark.createDataFrame([(1, "a2", A, 2, False)], SCHEMA), config)
    rows = snapshot(table, spark)  # (asserts no key twice)
    assert {k: (r["name"], r["ts"]) for k, r in rows.items()} == {
        "1": ("a", 1) if operation == "insert" else ("a2", 2), "2": ("b", 1),
    }  # fmt: skip
    if operation == "upsert":  # it wrote into the partition: the metadata file is back
        assert os.path.exists(os.path.join(path, A, ".hoodie_partition_metadata"))

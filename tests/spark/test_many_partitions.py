"""A table of many partitions, written as the code for them writes it (not how fast).

The first load is a bulk insert whose tasks each write hundreds of one-file partitions: their
records split by partition in one sort, the bloom filters of their few keys made together and
set bit by bit (`bloom_filter_footers`), the marker folder deleted by threads. The upsert into
1% of the partitions comes to a table of MANY_PARTITIONS (lowered here): its partitions are
found by a job first, and only theirs are listed (through the metadata table's lookups),
checked and planned into routing units, which reach the tasks packed by partition. Read back
by us and by hudi-rs, with the metadata table listing what storage holds.
"""

from __future__ import annotations

import os

import hudi
import pytest
from _spark_helpers import id_dt_ts_config
from listing_compare import assert_metadata_table_whole
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable
from hoodie.markers import MARKER_FOLDER
from hoodie.progress import StepStarted, WritingStarted, listening
from hoodie.write.operations import base

pytestmark = pytest.mark.spark
SCHEMA = "id string, name string, dt string, ts bigint"
PARTITIONS = 500
TOUCHED = range(0, PARTITIONS, 100)  # 1%: five partitions
# Footers of a few KB rather than 431 (a filter sized for 60,000 keys), still sized so that a
# file's two keys set their bits one by one.
OPTIONS = {"hoodie.index.bloom.num_entries": "2000"}


def _partition(number: int) -> str:
    return f"d{number:04d}"


@pytest.mark.parametrize(
    ("table_type", "version"),
    [("COPY_ON_WRITE", 8), pytest.param("MERGE_ON_READ", 6, marks=pytest.mark.full)],
)
def test_load_and_upsert_into_a_few_of_many_partitions(
    spark, tmp_path, monkeypatch, table_type, version
):
    monkeypatch.setattr(base, "MANY_PARTITIONS", PARTITIONS // 2)
    cfg = id_dt_ts_config("many", table_type,
                          {**OPTIONS, "hoodie.write.table.version": str(version)})  # fmt: skip
    path = str(tmp_path / "many")
    table = HoodieTable.for_write(path, cfg)
    expected = {
        f"k{i:05d}": ("v", _partition(i % PARTITIONS), 1) for i in range(2 * PARTITIONS)
    }  # fmt: skip
    rows = [(key, name, dt, ts) for key, (name, dt, ts) in expected.items()]
    load = table.upsert(spark.createDataFrame(rows, SCHEMA), cfg)
    assert load.files_written == PARTITIONS  # one file a partition

    updates = {f"k{p:05d}": ("u", _partition(p), 2) for p in TOUCHED}
    inserts = {f"n{p:05d}": ("n", _partition(p), 2) for p in TOUCHED}
    inserts["n-new"] = ("n", "dnew", 2)  # and a partition the table lacks
    batch = {**updates, **inserts}
    heard: list = []
    with listening(heard.append):
        result = table.upsert(
            spark.createDataFrame([(k, *v) for k, v in batch.items()], SCHEMA), cfg
        )
    steps = [e.message() for e in heard if isinstance(e, StepStarted)]
    assert "finding the batch's partitions" in steps
    # planned over the batch's partitions only: the five holding file groups, not 500
    (writing,) = [e for e in heard if isinstance(e, WritingStarted)]
    assert "5 routing units over 5 file groups" in writing.how, writing.how
    assert (result.num_updates, result.num_inserts) == (len(updates), len(inserts))

    expected.update(batch)
    ours = read_ours(spark, path)
    got = {r["id"]: (r["name"], r["dt"], r["ts"]) for r in ours.to_pylist()}
    assert got == expected and ours.num_rows == len(expected)
    assert_same_rows("many partitions", "_hoodie_record_key", ours,
                     read_theirs(hudi.HudiTable(path)))  # fmt: skip
    if version >= 8:  # the metadata table is on by default
        assert_metadata_table_whole(table.meta_client)
    # both writes' marker folders are gone
    markers = os.path.join(path, MARKER_FOLDER)
    assert not os.path.isdir(markers) or not os.listdir(markers)

"""A writer killed midway through a merge-on-read upsert on object storage (a local S3 server,
Azurite).

The same guarantees as test_crash_recovery's on a local disk: readers see the last completed
snapshot, the next write rolls the crashed one back, and the table then holds exactly the
expected rows, for us and for hudi-rs, with nothing of the crashed instant left pending.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from crash_support import apply, assert_killed, run_child
from tests_support import SCHEMA, write_config

from hoodie import HoodieTable
from hoodie.read.datasource import register
from hoodie.timeline import WRITE_ACTIONS, Action

pytestmark = pytest.mark.slow

POINT = "task.log_file.written"  # a log block on the store, the delta commit not complete


def _ours(spark, table: HoodieTable) -> dict:
    return {r["id"]: (r["name"], r["ts"]) for r in table.read(spark).collect()}


def _hudi_rs(bucket, uri: str) -> dict:
    hudi = pytest.importorskip("hudi")
    batches = hudi.HudiTable(uri, options=bucket.hudi_rs_options).read()
    table = pa.Table.from_batches(batches)
    return dict(zip(table["id"].to_pylist(), zip(table["name"].to_pylist(),
                                                 table["ts"].to_pylist())))  # fmt: skip


# make test: S3; make test-full: Azurite too (session 41, for the 20-minute target)
@pytest.mark.parametrize("store", ["s3", pytest.param("azure", marks=pytest.mark.full)])
def test_a_killed_write_is_rolled_back_by_the_next(spark, store, tmp_path, bucket_on):
    register(spark)
    bucket = bucket_on(store)
    uri, options = bucket.uri("lake/crashed"), bucket.storage_options
    cfg = write_config("MERGE_ON_READ")
    first = [(1, "a", "d1", 1, False), (2, "b", "d2", 1, False)]
    table = HoodieTable.for_write(uri, cfg, options)
    table.upsert(spark.createDataFrame(first, SCHEMA), cfg)
    state = apply({}, first)

    crashed = [[1, "lost", "d1", 2, False], [3, "lost", "d2", 2, False]]
    plan = {"action": "upsert", "table_type": "MERGE_ON_READ", "rows": crashed,
            "storage_options": options}  # fmt: skip
    assert_killed(run_child(uri, plan, POINT, tmp_path), POINT)
    assert [i for i in table.timeline().pending if i.action in WRITE_ACTIONS]
    assert _ours(spark, HoodieTable.open(uri, options)) == state

    recovery = [(2, "B", "d2", 3, False), (4, "d", "d1", 3, False)]
    table.upsert(spark.createDataFrame(recovery, SCHEMA), cfg)
    state = apply(state, recovery)
    timeline = table.timeline()
    assert not [i for i in timeline.pending if i.action in WRITE_ACTIONS]
    assert any(i.action is Action.ROLLBACK for i in timeline.completed)
    assert _ours(spark, HoodieTable.open(uri, options)) == state
    assert _hudi_rs(bucket, uri) == state

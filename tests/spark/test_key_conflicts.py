"""The commit's same-key check (`transaction/key_conflicts.py`) on instants of a real table:
which keys an instant wrote (a copy-on-write rewrite's own rows, a merge-on-read log's blocks
of the instant, no deletes), held per partition or across the table, read on the driver and
in Spark tasks. (Two writers at once end to end: tests/faults/test_two_writers_at_once.py.)"""

from __future__ import annotations

import pytest
from _spark_helpers import id_dt_ts_config

from hoodie import HoodieTable
from hoodie.exceptions import ConcurrentWriteConflict
from hoodie.transaction import key_conflicts
from hoodie.transaction.key_conflicts import PARTITION_SCOPE, TABLE_SCOPE, check_key_conflicts

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
A, B = "2024-01-01", "2024-01-02"


def _rows(keys, dt, ts, deleted=False):
    return [(k, f"n{k}", dt, ts, deleted) for k in keys]


# `make test` runs copy-on-write read on the driver and merge-on-read in Spark tasks.
CASES = [
    pytest.param(table_type, in_tasks, id=f"{short}-{where}",
                 marks=() if (table_type == "MERGE_ON_READ") is in_tasks else pytest.mark.full)
    for table_type, short in (("COPY_ON_WRITE", "cow"), ("MERGE_ON_READ", "mor"))
    for in_tasks, where in ((False, "driver"), (True, "spark"))
]  # fmt: skip


@pytest.mark.parametrize("table_type, in_tasks", CASES)
def test_the_keys_an_instant_wrote_are_held_against_another_instants(
    spark, tmp_path, monkeypatch, table_type, in_tasks
):
    if in_tasks:
        monkeypatch.setattr(key_conflicts, "DRIVER_FILES", 0)
    cfg = id_dt_ts_config("keys", table_type, {"hoodie.compact.inline": "false"})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)

    def write(rows):
        result = table.upsert(spark.createDataFrame(rows, SCHEMA), cfg)
        instant = next(i for i in table.timeline().completed if i.timestamp == result.instant)
        return instant, table.meta_client.commit_metadata(instant)

    a = write(_rows(range(1, 6), A, 1))  # 1..5 in A
    b = write(_rows(range(3, 9), B, 1))  # 3..8 in B (SIMPLE: other keys than A's 3..5)
    c = write(_rows([1], A, 2))  # an update of 1: copy-on-write rewrites A's file group
    d = write(_rows([6], B, 3, deleted=True))  # a delete of 6
    meta = table.meta_client

    def check(mine, others, scope):
        check_key_conflicts(meta, mine[0].timestamp, mine[1], others, scope, spark)

    # across the table, 3..5 of b are a's; in their partitions they are not
    with pytest.raises(ConcurrentWriteConflict) as raised:
        check(b, [a], TABLE_SCOPE)
    message = str(raised.value)
    assert f"write {b[0].timestamp} to table 'keys' conflicts with {a[0].timestamp} (" in message
    assert "record key(s) 3, 4, 5 (the index keeps" in message and "rolled back" in message
    check(b, [a], PARTITION_SCOPE)
    # c wrote key 1 only (its rewritten file holds 2..5 too, with a's commit time)
    check(c, [b], TABLE_SCOPE)
    with pytest.raises(ConcurrentWriteConflict, match=r"record key\(s\) 1 in partition"):
        check(c, [a, b], PARTITION_SCOPE)
    # a delete writes no key: deleting 6 is no duplicate of b's 6
    check(d, [b], PARTITION_SCOPE)
    check(b, [d], PARTITION_SCOPE)
    # no concurrent write: nothing read
    check(b, [], TABLE_SCOPE)


def test_a_write_with_no_concurrent_commit_reads_no_keys(spark, tmp_path, monkeypatch):
    """The common single-writer case pays nothing: no file is read for the check."""
    read = []
    real = key_conflicts.written_keys
    monkeypatch.setattr(key_conflicts, "written_keys", lambda *a: read.append(a) or real(*a))
    cfg = id_dt_ts_config("single", options={"hoodie.index.type": "GLOBAL_SIMPLE"})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    table.upsert(spark.createDataFrame(_rows(range(1, 4), A, 1), SCHEMA), cfg)
    table.upsert(spark.createDataFrame(_rows(range(3, 6), B, 2), SCHEMA), cfg)
    assert read == []

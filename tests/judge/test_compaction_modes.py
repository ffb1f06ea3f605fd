"""Compaction scheduled apart from its execution, as Apache Hudi's async compaction runs it:
`hoodie.compact.schedule.inline` (and `TableServices.schedule_compaction`) leave a plan
pending; `compact(pending_only=True)` executes the pending plans only. Apache Hudi reads a
table with our pending plan and executes it (`CALL run_compaction(op => 'run')`), and we
execute the plan its `op => 'schedule'` wrote; every read agrees with the rows written."""

from __future__ import annotations

import pytest
from apache_hudi import HUDI_1, assert_same_as_apache_hudi
from rs_compare import read_ours

from hoodie import HoodieTable, WriteConfig
from hoodie.timeline import Action

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"


def _pending_compactions(table: HoodieTable) -> list[str]:
    return [i.timestamp for i in table.timeline().pending if i.action is Action.COMPACTION]


def _compactions(table: HoodieTable) -> list[str]:
    return [i.timestamp for i in table.timeline().completed
            if i.action is Action.COMMIT and table.commit_metadata(i).compacted]  # fmt: skip


@pytest.mark.parametrize("version", [8, pytest.param(6, marks=pytest.mark.hudi_full)])
def test_schedule_then_run_pending_with_apache_hudi(spark, tmp_path, apache_hudi, version):
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("modes", record_key="id", partition_path="dt", precombine_field="ts",
                            table_type="MERGE_ON_READ", options={
                                "hoodie.compact.inline": "false",
                                "hoodie.compact.schedule.inline": "true",
                                "hoodie.compact.inline.max.delta.commits": "2",
                                "hoodie.write.table.version": str(version),
                            })  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame([(i, f"a{i}", "d1", 1) for i in range(6)], SCHEMA))
    assert _pending_compactions(table) == []
    table.upsert(spark.createDataFrame([(1, "b1", "d1", 2), (2, "b2", "d1", 2)], SCHEMA))
    # The second delta commit met the trigger: a plan, left pending, nothing compacted.
    (ours,) = _pending_compactions(table)
    assert _compactions(table) == []
    expected = {i: f"a{i}" for i in range(6)} | {1: "b1", 2: "b2"}
    assert {r["id"]: r["name"] for r in table.read(spark).collect()} == expected

    # Apache Hudi reads the table around our pending plan, then executes it.
    judge = apache_hudi(HUDI_1)
    theirs = judge.read(path)
    assert_same_as_apache_hudi("pending plan", read_ours(spark, path), theirs, "id")
    judge.sql(f"CALL run_compaction(op => 'run', path => '{path}')")
    table = HoodieTable.open(path, config=cfg)
    assert _pending_compactions(table) == [] and _compactions(table) == [ours]
    assert {r["id"]: r["name"] for r in table.read(spark).collect()} == expected

    # Apache Hudi schedules; our run of pending plans executes its plan and schedules none.
    table.upsert(spark.createDataFrame([(3, "c3", "d1", 3)], SCHEMA))
    judge.sql(
        f"CALL run_compaction(op => 'schedule', path => '{path}', "
        "options => 'hoodie.compact.inline.max.delta.commits=1')"
    )
    (planned,) = _pending_compactions(table)
    table.upsert(spark.createDataFrame([(4, "c4", "d1", 4)], SCHEMA))  # after the plan
    results = table.services.compact(spark, pending_only=True)
    assert [r.instant for r in results] == [planned] and _pending_compactions(table) == []
    expected |= {3: "c3", 4: "c4"}
    rows = read_ours(spark, path)
    assert {i: n for i, n in zip(rows["id"].to_pylist(), rows["name"].to_pylist())} == expected
    assert_same_as_apache_hudi("after both", rows, judge.read(path), "id")
    # `schedule_compaction` plans the log written after Apache Hudi's plan; nothing else does.
    scheduled = table.services.schedule_compaction()
    assert scheduled is not None and _pending_compactions(table) == [scheduled]
    assert table.services.schedule_compaction() is None  # its slice is in a plan now
    assert [r.instant for r in table.services.compact(spark)] == [scheduled]

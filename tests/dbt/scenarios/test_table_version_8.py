"""`dbt run` of cow_upsert and mor_upsert models on Hudi table version 8
(`options={'hoodie.write.table.version': '8'}`): the functional scenario of
test_cow_upsert.py (two batches: updates, a stale version, a delete, an insert), on both table
types, checked through Spark, the files and hudi-rs."""

from __future__ import annotations

import pyarrow as pa
import pytest
from test_cow_upsert import SEED, SEED_CONFIG

from hoodie import HoodieTable
from hoodie import properties as P

pytestmark = pytest.mark.slow

MODEL = """\
{{ config(materialized='MATERIALIZATION', record_key='id', partition_path='day',
          precombine_field='ts', options={'hoodie.write.table.version': '8'}) }}
select id, name, amount, ts, day, deleted as _hoodie_is_deleted
from {{ ref('raw') }} where batch = {{ var('batch') }}
"""

EXPECTED = [(1, "alice", 1), (2, "bob", 2), (4, "dave", 1), (5, "erin", 2)]


def test_upsert_models_write_table_version_8(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    dbt_project.write("models/cow_v8.sql", MODEL.replace("MATERIALIZATION", "cow_upsert"))
    dbt_project.write("models/mor_v8.sql", MODEL.replace("MATERIALIZATION", "mor_upsert"))
    # Written at version 6 (the default), upgraded between the batches.
    upgraded = MODEL.replace("MATERIALIZATION", "mor_upsert").replace(
        ", options={'hoodie.write.table.version': '8'}", ""
    )
    dbt_project.write("models/mor_upgraded.sql", upgraded)
    report = dbt_project.run(
        [
            ["seed"],
            ["run", "--vars", "{batch: 1}"],
            ["run-operation", "hoodie_upgrade", "--args", "{model: mor_upgraded}"],
            ["run-operation", "hoodie_upgrade", "--args", "{model: mor_upgraded, version: 9}"],
            ["run", "--vars", "{batch: 2}"],
            ["run-operation", "hoodie_timeline", "--args", "{model: mor_v8}"],
            ["run-operation", "hoodie_upgrade", "--args", "{model: mor_upgraded}"],
        ],
        tables=["cow_v8", "mor_v8", "mor_upgraded"],
    )
    outcomes = [c["success"] for c in report["commands"]]
    assert outcomes == [True, True, True, False, True, True, True], report["commands"]
    assert "table version 8 only" in report["commands"][3]["error"]
    # The upgraded model: version 8 with its version 6 history, the second batch a version 8
    # delta commit, read alike by hudi-rs.
    base = dbt_project.lake / "mor_upgraded"
    props = P.loads((base / ".hoodie" / "hoodie.properties").read_text())
    assert (props[P.TABLE_VERSION], props[P.INITIAL_VERSION]) == ("8", "6")
    rows = sorted(report["tables"]["mor_upgraded"]["rows"], key=lambda r: r["id"])
    assert [(r["id"], r["name"], r["ts"]) for r in rows] == EXPECTED
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(str(base)).read())
    got = zip(theirs["id"].to_pylist(), theirs["name"].to_pylist(), theirs["ts"].to_pylist())
    assert sorted(got) == EXPECTED
    timeline = HoodieTable.open(str(base)).timeline().completed.instants
    assert [i.action.value for i in timeline] == ["deltacommit", "deltacommit"]
    assert all(i.completion_time for i in timeline)
    hudi = pytest.importorskip("hudi")
    for name, completed in (("cow_v8", "commit"), ("mor_v8", "deltacommit")):
        rows = sorted(report["tables"][name]["rows"], key=lambda r: r["id"])
        assert [(r["id"], r["name"], r["ts"]) for r in rows] == EXPECTED, name
        base = dbt_project.lake / name
        props = P.loads((base / ".hoodie" / "hoodie.properties").read_text())
        assert props[P.TABLE_VERSION] == "8" and props[P.TIMELINE_LAYOUT_VERSION] == "2"
        # Two completed writes, named with their completion times, in .hoodie/timeline/.
        done = sorted(p.name for p in (base / ".hoodie" / "timeline").glob(f"*_*.{completed}"))
        assert len(done) == 2, done
        theirs = pa.Table.from_batches(hudi.HudiTable(str(base)).read())
        assert (
            sorted(
                zip(theirs["id"].to_pylist(), theirs["name"].to_pylist(), theirs["ts"].to_pylist())
            )
            == EXPECTED
        ), name
    writes = HoodieTable.open(str(dbt_project.lake / "mor_v8")).timeline().completed.instants
    assert all(i.completion_time for i in writes) and len(writes) == 2

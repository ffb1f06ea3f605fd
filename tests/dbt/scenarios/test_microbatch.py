"""dbt's incremental configs on lake tables.

incremental_strategy='microbatch' (materialized='incremental', file_format='hudi'): dbt-core
runs one batch per day, each one commit that upserts the batch's rows and deletes the rows of
its window the batch no longer has; a re-run batch replaces its window, and `dbt retry` runs
only the batch that failed. incremental_predicates bound the partitions a run may touch."""

from __future__ import annotations

import pytest

from hoodie import HoodieTable

pytestmark = pytest.mark.slow

EVENTS = """\
id,v,ts
1,a,2026-01-01 10:00:00
2,b,2026-01-02 09:00:00
3,c,2026-01-02 18:00:00
4,d,2026-01-03 07:00:00
"""
# Day 2 changed at the source: key 2 is gone, key 3 has a new value, key 5 is new.
EVENTS_DAY_2_AGAIN = """\
id,v,ts
1,a,2026-01-01 10:00:00
3,C,2026-01-02 18:00:00
5,e,2026-01-02 20:00:00
4,d,2026-01-03 07:00:00
"""

SOURCE = """\
{{ config(materialized='table', event_time='ts') }}
select id, v, cast(ts as timestamp) as ts from {{ ref('events') }}
"""

# Fails the write of the batch HOODIE_TEST_FAIL_BATCH names (a null record key: a run that
# breaks halfway, inside the materialization).
DAILY = """\
{{ config(materialized='incremental', file_format='hudi', table_type='%s',
          incremental_strategy='microbatch', event_time='ts', batch_size='day',
          begin='2026-01-01', unique_key='id', precombine_field='ts') }}
{%% set fail = model.batch is not none
               and model.batch.id == env_var('HOODIE_TEST_FAIL_BATCH', '-') %%}
select {{ 'cast(null as bigint)' if fail else 'id' }} as id, v, ts from {{ ref('source') }}
"""
WINDOW = ["--event-time-start", "2026-01-01", "--event-time-end", "2026-01-04"]
DAY_2 = ["--event-time-start", "2026-01-02", "--event-time-end", "2026-01-03"]


def _rows(report, name):
    return sorted((r["id"], r["v"]) for r in report["tables"][name]["rows"])


@pytest.mark.parametrize("table_type", ["mor", pytest.param("cow", marks=pytest.mark.full)])
def test_microbatch_batches_replace_their_window(make_dbt_project, monkeypatch, table_type):
    project = make_dbt_project()
    project.write("seeds/events.csv", EVENTS)
    project.write("models/source.sql", SOURCE)
    project.write("models/daily.sql", DAILY % table_type)

    # Batch 2026-01-03 fails; the other two commit. dbt retry runs the third only.
    monkeypatch.setenv("HOODIE_TEST_FAIL_BATCH", "20260103")
    failed = project.run(
        [["seed"], ["run", "-s", "source"], ["run", "-s", "daily", *WINDOW]], tables=["daily"]
    )
    assert [c["success"] for c in failed["commands"]] == [True, True, False], failed["commands"]
    # The table the first batch created stays in the catalog through the failed batch (a
    # relation dbt cached itself carries no catalog information: it was taken for another
    # kind of object and dropped before each later batch).
    assert _rows(failed, "daily") == [(1, "a"), (2, "b"), (3, "c")]
    assert failed["commands"][2]["batches"]["daily"] == {
        "successful": ["2026-01-01 00:00:00+00:00", "2026-01-02 00:00:00+00:00"],
        "failed": ["2026-01-03 00:00:00+00:00"],
    }
    monkeypatch.delenv("HOODIE_TEST_FAIL_BATCH")
    retried = project.run([["retry"]], tables=["daily"])
    assert retried["commands"][0]["success"], retried["commands"]
    # dbt's result counts the earlier successes too; the timeline shows what ran (below).
    assert retried["commands"][0]["batches"]["daily"]["failed"] == []
    assert _rows(retried, "daily") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]

    table = HoodieTable.open(str(project.lake / "daily"))
    wanted_type = "MERGE_ON_READ" if table_type == "mor" else "COPY_ON_WRITE"
    assert table.properties.table_type == wanted_type
    batches = [table.commit_metadata(i).extra_metadata for i in table.timeline().completed]
    # One commit per batch; the retry ran the failed batch alone.
    assert [m.get("dbt.batch.id") for m in batches] == ["20260101", "20260102", "20260103"]
    assert batches[1]["dbt.batch.event_time_start"] == "2026-01-02T00:00:00+00:00"
    assert batches[1]["dbt.batch.event_time_end"] == "2026-01-03T00:00:00+00:00"
    assert all(m["dbt.node"] == "model.functional.daily" for m in batches)
    assert all(m["dbt.invocation_id"] for m in batches)

    # The source's day 2 changes; re-running that day's batch replaces its window only.
    project.write("seeds/events.csv", EVENTS_DAY_2_AGAIN)
    again = project.run(
        [["seed"], ["run", "-s", "source"], ["run", "-s", "daily", *DAY_2]], tables=["daily"]
    )
    assert all(c["success"] for c in again["commands"]), again["commands"]
    assert _rows(again, "daily") == [(1, "a"), (3, "C"), (4, "d"), (5, "e")]
    # One commit: key 5 inserted, key 3 updated, key 2 (in the window, gone from the batch)
    # deleted; days 1 and 3 untouched.
    table = HoodieTable.open(str(project.lake / "daily"))
    last = table.commit_metadata(list(table.timeline().completed)[-1])
    assert last.extra_metadata["dbt.batch.id"] == "20260102"
    counts = [last.total(c) for c in ("num_inserts", "num_update_writes", "num_deletes")]
    assert counts == [1, 1, 1]


BOUNDED = """\
{{ config(materialized='cow_upsert', record_key='id', partition_path='dt',
          incremental_predicates=["DBT_INTERNAL_DEST.dt >= '2026-01-02'"]) }}
select * from {{ ref('orders_src') }} where batch = {{ var('batch') }}
"""
ORDERS = """\
id,v,dt,batch
1,a,2026-01-01,1
2,b,2026-01-02,1
2,B,2026-01-02,2
3,c,2026-01-01,3
"""


def test_incremental_predicates_bound_an_upsert(make_dbt_project):
    project = make_dbt_project()
    project.write("seeds/orders_src.csv", ORDERS)
    project.write("models/bounded.sql", BOUNDED)
    report = project.run(
        [["seed"], ["run", "--vars", "{batch: 1}"], ["run", "--vars", "{batch: 2}"],
         ["run", "--vars", "{batch: 3}"]],
        tables=["bounded"],
    )  # fmt: skip
    # The first run builds the table (dbt applies predicates to incremental runs only); the
    # second stays inside them; the third has a row outside and writes nothing.
    assert [c["success"] for c in report["commands"]] == [True, True, True, False]
    assert "1 row(s) of this run lie in partitions incremental_predicates exclude" in (
        report["commands"][3]["error"] + " ".join(report["commands"][3]["messages"])
    )
    assert _rows(report, "bounded") == [(1, "a"), (2, "B")]

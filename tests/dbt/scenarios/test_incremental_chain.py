"""hoodie_incremental: a lake model consuming another lake table's changes exactly once. The
position it read up to is committed with its data; a run that fails before its commit leaves
it where it was, so the next run reads the same changes again."""

from __future__ import annotations

import json

import pytest

from hoodie import HoodieTable

pytestmark = pytest.mark.slow

RAW = """\
id,v,batch
1,a,1
2,b,1
2,B,2
3,c,2
"""
ORDERS = """\
{{ config(materialized='cow_upsert', record_key='id') }}
select id, v from {{ ref('raw') }} where batch = {{ var('batch') }}
"""
# A run with break=true fails in its write (a null record key), after it read its changes.
COPY = """\
{{ config(materialized='mor_upsert', record_key='id') }}
select case when {{ var('break', false) }} then null else id end as id, v
from {{ hoodie_incremental(ref('orders')) }}
"""
BAD = """\
{{ config(materialized='table') }}
select * from {{ hoodie_incremental(ref('orders')) }}
"""


def _counts(command):
    message = command["messages"][0]  # "upsert <instant>: 2 inserted, 0 updated, ..."
    inserted = int(message.split(": ")[1].split(" inserted")[0])
    updated = int(message.split(" inserted, ")[1].split(" updated")[0])
    return inserted, updated


def test_a_model_consumes_each_upstream_change_once(make_dbt_project):
    project = make_dbt_project()
    project.write("seeds/raw.csv", RAW)
    project.write("models/orders.sql", ORDERS)
    project.write("models/orders_copy.sql", COPY)
    report = project.run([
        ["seed"],
        ["run", "-s", "orders", "--vars", "{batch: 1}"],
        ["run", "-s", "orders_copy"],  # everything so far: 1, 2
        ["run", "-s", "orders", "--vars", "{batch: 2}"],
        ["run", "-s", "orders_copy", "--vars", "{break: true}"],  # reads 2, 3; fails
        ["run", "-s", "orders_copy"],  # reads 2, 3 again
        ["run", "-s", "orders_copy"],  # nothing new
    ], tables=["orders_copy"])  # fmt: skip
    commands = report["commands"]
    assert [c["success"] for c in commands] == [True] * 4 + [False, True, True], commands
    assert _counts(commands[2]) == (2, 0)
    assert _counts(commands[5]) == (1, 1)
    assert _counts(commands[6]) == (0, 0)
    rows = sorted((r["id"], r["v"]) for r in report["tables"]["orders_copy"]["rows"])
    assert rows == [(1, "a"), (2, "B"), (3, "c")]

    upstream = HoodieTable.open(str(project.lake / "orders"))
    copy = HoodieTable.open(str(project.lake / "orders_copy"))
    ((source, checkpoint),) = copy.checkpoints().items()
    assert source.endswith("/orders")
    assert checkpoint == upstream.incremental_position()
    last = list(copy.timeline().completed)[-1]
    stored = json.loads(copy.commit_metadata(last).extra_metadata["hoodie.incremental.checkpoints"])
    assert stored[source]["instant"] == checkpoint.instant

    # A model that cannot keep a checkpoint is told so.
    project.write("models/orders_bad.sql", BAD)
    bad = project.run([["run", "-s", "orders_bad"]])
    assert not bad["commands"][0]["success"]
    assert "must be one (materialized='cow_upsert'" in bad["commands"][0]["error"] + " ".join(
        bad["commands"][0]["messages"]
    )

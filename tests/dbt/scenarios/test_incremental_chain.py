"""hoodie_incremental: a lake model consuming another lake table's changes exactly once. The
position it read up to is committed with its data; a run that fails before its commit leaves
it where it was, so the next run reads the same changes again."""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest
from test_read_macros import ORDERS
from test_read_macros import SEED as RAW

from hoodie import HoodieTable

pytestmark = pytest.mark.slow

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


def _counts(message):
    # "upsert <instant>: 2 inserted, 0 updated, ..."
    inserted = int(message.split(": ")[1].split(" inserted")[0])
    updated = int(message.split(" inserted, ")[1].split(" updated")[0])
    return inserted, updated


# Counts how often each upstream change reached it: a change consumed twice counts twice.
COUNTER = """\
{{ config(materialized='cow_upsert', record_key='id') }}
select c.id, c.v,
  {% if is_incremental() %} coalesce(t.n, 0) + 1 {% else %} 1 {% endif %} as n
from {{ hoodie_incremental(ref('orders')) }} c
{% if is_incremental() %} left join {{ this }} t on t.id = c.id {% endif %}
"""


# Before the instant is inflight, inflight with its files, completed but not cleaned up after:
# `make test` reruns from one of these, drawn at random; `make test-dbt` from every point the
# write passes.
KEY_POINTS = ("write.inflight", "commit.completed_under_lock", "write.completed")


@pytest.mark.parametrize("every_point", [False, pytest.param(True, marks=pytest.mark.dbt_full)])
def test_a_model_consumes_each_upstream_change_once(
    make_dbt_project, monkeypatch, tmp_path, every_point
):
    """orders_copy's runs: everything at first, then only what changed, a run that fails in
    its write reads the same changes again. counter (counting how often each change reached
    it) runs once copying its table at every crash point of its write as a SIGKILL there
    would leave it (`hoodie.faults`' snapshots); from each copy a rerun must end where the
    uninterrupted run did: each upstream change counted once."""
    project = make_dbt_project()
    project.write("seeds/raw.csv", RAW)
    project.write("models/orders.sql", ORDERS)
    project.write("models/orders_copy.sql", COPY)
    project.write("models/counter.sql", COUNTER)
    report = project.run([
        ["seed"],
        ["run", "-s", "orders", "--vars", "{batch: 1}"],
        ["run", "-s", "orders_copy", "counter"],  # everything so far: 1, 2
        ["run", "-s", "orders", "--vars", "{batch: 2}"],
        ["run", "-s", "orders_copy", "--vars", "{break: true}"],  # reads 2, 3; fails
        ["run", "-s", "orders_copy"],  # reads 2, 3 again
        ["run", "-s", "orders_copy"],  # nothing new
    ], tables=["orders_copy"])  # fmt: skip
    commands = report["commands"]
    assert [c["success"] for c in commands] == [True] * 4 + [False, True, True], commands
    assert sorted(map(_counts, commands[2]["messages"])) == [(2, 0), (2, 0)]
    assert _counts(commands[5]["messages"][0]) == (1, 1)
    assert _counts(commands[6]["messages"][0]) == (0, 0)
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

    counter = project.lake / "counter"
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    monkeypatch.setenv("HOODIE_CRASH_SNAPSHOTS", str(snapshots))
    monkeypatch.setenv("HOODIE_CRASH_TABLE", str(counter))
    # make test reruns from one of KEY_POINTS drawn at random (HOODIE_TEST_SEED repeats a
    # draw): each copy costs a copy of the table with its metadata table, and a rerun
    seed = int(os.environ.get("HOODIE_TEST_SEED") or random.randrange(1 << 30))
    drawn = random.Random(seed).choice(KEY_POINTS)
    if not every_point:
        monkeypatch.setenv("HOODIE_CRASH_SNAPSHOT_POINTS", drawn)
    whole = project.run([["run", "-s", "counter"]], tables=["counter"])
    monkeypatch.delenv("HOODIE_CRASH_SNAPSHOTS")
    assert whole["commands"][0]["success"], whole["commands"]
    expected = sorted((r["id"], r["v"], r["n"]) for r in whole["tables"]["counter"]["rows"])
    assert expected == [(1, "a", 1), (2, "B", 2), (3, "c", 1)]
    points = sorted(p.name for p in snapshots.iterdir())
    assert set(KEY_POINTS if every_point else [drawn]) <= set(points), points
    for point in points:
        shutil.rmtree(counter)
        shutil.copytree(snapshots / point / "table", counter, symlinks=True)
        # A run killed under the table lock leaves it held; the rerun would wait out its lease
        # (a minute; tests/faults checks that) before going on. Here the lease has run out.
        (counter / ".hoodie" / "lock").unlink(missing_ok=True)
        rerun = project.run([["run", "-s", "counter"]], tables=["counter"])
        where = f"{point} (HOODIE_TEST_SEED={seed})"
        assert rerun["commands"][0]["success"], (where, rerun["commands"])
        rows = sorted((r["id"], r["v"], r["n"]) for r in rerun["tables"]["counter"]["rows"])
        assert rows == expected, where

    # A model that cannot keep a checkpoint is told so.
    project.write("models/orders_bad.sql", BAD)
    bad = project.run([["run", "-s", "orders_bad"]])
    assert not bad["commands"][0]["success"]
    assert "must be one (materialized='cow_upsert'" in bad["commands"][0]["error"] + " ".join(
        bad["commands"][0]["messages"]
    )

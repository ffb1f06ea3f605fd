"""Fault injection: a writer is killed with SIGKILL at a crash point, then the table must hold.

For every point (planning, marker and data file writes, completion; copy-on-write and
merge-on-read upserts, compaction, rollback) a child process runs one action on a copy of a
prepared table and dies at that point. Then, in this process:
- readers see exactly the last completed snapshot;
- the next write succeeds (rolling back what the crash left) and the table holds exactly the
  expected rows, for us and for hudi-rs;
- nothing of the crashed instant is left pending.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest
from tests_support import SCHEMA, write_config

from hoodie import HoodieTable
from hoodie.faults import CRASH_AT
from hoodie.markers import MARKER_FOLDER
from hoodie.read.datasource import register
from hoodie.timeline import WRITE_ACTIONS, Action

pytestmark = pytest.mark.slow

CHILD = Path(__file__).with_name("crash_writer.py")
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
A, B, C = "2024-01-01", "2024-01-02", "2024-01-03"

FIRST = [(i, f"n{i}", (A, B)[i % 2], 1, False) for i in range(1, 7)]
SECOND = [(1, "n1-v2", B, 2, False), (2, "n2-v2", A, 2, False), (3, "n3-v2", B, 2, False)]
# What the killed writer tries: an update, a delete, inserts into old and new partitions.
CRASHED = [(1, "n1-crash", B, 10, False), (2, None, A, 10, True), (7, "n7", B, 10, False),
           (8, "n8", C, 10, False)]  # fmt: skip
RECOVERY = [(3, "n3-rec", B, 20, False), (9, "n9", A, 20, False), (4, "n4-rec", A, 20, False)]

WRITE_POINTS = [
    "write.requested",
    "write.tagged",
    "write.inflight",
    "write.partition_metadata",
    "task.base_file.marked",
    "task.base_file.written",
    "write.files_written",
    "write.finalized",
    "write.completed",
]
MOR_WRITE_POINTS = ["task.log_file.marked", "task.log_file.torn", "task.log_file.written"]
COMPACTION_POINTS = [
    "compaction.scheduled",
    "compaction.inflight",
    "compaction.task.marked",
    "compaction.task.written",
    "compaction.files_written",
    "compaction.completed",
]
ROLLBACK_POINTS = [
    "rollback.reverted_to_inflight",
    "rollback.planned",
    "rollback.file_deleted",
    "rollback.completed",
]

# Every point once (each child costs a JVM start): copy-on-write for the points both table
# types share, merge-on-read for log files, compaction and the rollback of a delta commit.
SCENARIOS = (
    [(COW, "upsert", p) for p in WRITE_POINTS]
    + [(MOR, "upsert", p) for p in MOR_WRITE_POINTS]
    + [(MOR, "compact", p) for p in COMPACTION_POINTS]
    + [(COW, "rollback", p) for p in ROLLBACK_POINTS[:-1]]
    + [(MOR, "rollback", ROLLBACK_POINTS[-1])]
)
CONCURRENT_CHILDREN = 3  # JVM start-up dominates a child; overlap it


def apply(state: dict, rows) -> dict:
    out = dict(state)
    for key, name, _dt, ts, deleted in rows:
        stored = out.get(key)
        if stored is not None and ts < stored[1]:
            continue
        if deleted:
            out.pop(key, None)
        else:
            out[key] = (name, ts)
    return out


S1 = apply({}, FIRST)
S2 = apply(S1, SECOND)


def snapshot(spark, path: str) -> dict:
    rows = spark.read.format("hoodie").load(path).select("id", "name", "ts").collect()
    out = {r.id: (r.name, r.ts) for r in rows}
    assert len(out) == len(rows), "duplicate keys in the snapshot"
    return out


def hudi_rs(path: str) -> dict:
    hudi = pytest.importorskip("hudi")
    batches = hudi.HudiTable(path).read()
    if not batches:
        return {}
    table = pa.Table.from_batches(batches)
    return dict(zip(table["id"].to_pylist(), zip(table["name"].to_pylist(),
                                                  table["ts"].to_pylist())))  # fmt: skip


@pytest.fixture(scope="module")
def prepared(spark, tmp_path_factory):
    """Each table type with two completed writes (merge-on-read: the second in log files)."""
    register(spark)
    out = {}
    for table_type in (COW, MOR):
        path = str(tmp_path_factory.mktemp("prepared") / table_type.lower())
        cfg = write_config(table_type)
        table = HoodieTable.for_write(path, cfg)
        table.upsert(spark.createDataFrame(FIRST, SCHEMA), cfg)
        table.upsert(spark.createDataFrame(SECOND, SCHEMA), cfg)
        assert snapshot(spark, path) == S2
        out[table_type] = path
    return out


def run_child(path: str, plan: dict, point: str, workdir: Path) -> subprocess.CompletedProcess:
    plan_file = workdir / "plan.json"
    plan_file.write_text(json.dumps(plan))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, **{CRASH_AT: point})
    return subprocess.run(
        [sys.executable, str(CHILD), path, str(plan_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def crashed(prepared, tmp_path_factory):
    """Every scenario's killed child, run a few at a time: (table path, completed process)."""
    root = tmp_path_factory.mktemp("crashes")

    def crash(scenario):
        table_type, action, point = scenario
        workdir = root / f"{table_type}-{action}-{point}"
        workdir.mkdir()
        path = str(workdir / "table")
        shutil.copytree(prepared[table_type], path)
        plan = {"action": action, "table_type": table_type, "rows": [list(r) for r in CRASHED]}
        return path, run_child(path, plan, point, workdir)

    with ThreadPoolExecutor(CONCURRENT_CHILDREN) as pool:
        return dict(zip(SCENARIOS, pool.map(crash, SCENARIOS)))


@pytest.mark.parametrize("table_type, action, point", SCENARIOS,
                         ids=[f"{t[:3].lower()}-{a}-{p}" for t, a, p in SCENARIOS])  # fmt: skip
def test_crash_then_recover(spark, crashed, table_type, action, point):
    path, child = crashed[(table_type, action, point)]
    assert child.returncode == -signal.SIGKILL, (
        f"the writer was not killed at {point} (exit {child.returncode}):\n"
        f"{child.stdout[-2000:]}\n{child.stderr[-3000:]}"
    )

    # Readers see exactly the last completed snapshot.
    if action == "upsert":
        after_crash = apply(S2, CRASHED) if point == "write.completed" else S2
    elif action == "rollback":
        after_crash = S2 if point == "rollback.reverted_to_inflight" else S1
    else:
        after_crash = S2
    assert snapshot(spark, path) == after_crash

    # The next write succeeds and the table holds exactly the expected rows.
    table = HoodieTable.open(path)
    cfg = write_config(table_type)
    table.upsert(spark.createDataFrame(RECOVERY, SCHEMA), cfg)
    expected = apply(after_crash, RECOVERY)
    assert snapshot(spark, path) == expected
    if action == "compact":
        table.compact(spark, cfg)  # runs the pending plan the crash left, then a new one
        assert snapshot(spark, path) == expected
        ro = spark.read.format("hoodie").option("hoodie.datasource.query.type", "read_optimized")
        assert {r.id: (r.name, r.ts) for r in ro.load(path).collect()} == expected
    assert hudi_rs(path) == expected

    # Nothing of the crash is left pending, and no markers of unfinished instants remain.
    timeline = table.timeline()
    assert not [i for i in timeline.pending if i.action in WRITE_ACTIONS | {Action.ROLLBACK}]
    assert not [i for i in timeline.pending if i.action is Action.COMPACTION]
    marker_root = Path(path) / MARKER_FOLDER
    leftover = sorted(p.name for p in marker_root.iterdir()) if marker_root.exists() else []
    completed = {i.timestamp for i in timeline.completed}
    assert set(leftover) <= completed, leftover

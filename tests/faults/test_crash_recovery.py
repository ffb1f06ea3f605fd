"""Fault injection: a writer crashes at a crash point, then the table must hold.

For every point (planning, marker and data file writes, completion; copy-on-write and
merge-on-read upserts, compaction, rollback) a child process runs one action on a copy of a
prepared table and crashes at that point. (Table services that run on the driver alone, and
the commit step of concurrent writers, are in test_service_crashes.) Then, in this process:
- readers see exactly the last completed snapshot;
- the next write succeeds (rolling back what the crash left) and the table holds exactly the
  expected rows, for us and for hudi-rs;
- nothing of the crashed instant is left pending.

A crash is a SIGKILL at the point for the rollback's points, the torn log block, and one
point inside a Spark task of each Spark action (a killed driver takes its tasks' workers
with it). The other points of a Spark action share one child, which copies the table at each
point it passes and goes on (`HOODIE_CRASH_SNAPSHOTS`): a SIGKILL leaves on disk exactly
what the table holds at that moment, and one child per action instead of one per point saves
a JVM start each (the fixture took 100-140 s with 17 of them).
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from crash_support import (
    COW,
    CRASHED,
    MOR,
    RECOVERY,
    S1,
    S2,
    apply,
    assert_killed,
    assert_snapshotted,
    hudi_rs,
    run_child,
    run_snapshotting_child,
    snapshot,
)
from tests_support import SCHEMA, write_config

from hoodie import HoodieTable
from hoodie.markers import MARKER_FOLDER
from hoodie.timeline import WRITE_ACTIONS, Action

pytestmark = pytest.mark.slow

WRITE_POINTS = [
    "write.requested",
    "write.planned",
    "write.inflight",
    "task.partition_metadata",
    "task.base_file.marked",
    "task.base_file.written",
    "write.files_written",
    "write.finalized",
    "write.completed",
]
MOR_WRITE_POINTS = ["task.log_file.marked", "task.log_file.torn", "task.log_file.written"]
# (compaction.scheduled, reached before a compaction needs Spark, is in test_service_crashes)
COMPACTION_POINTS = [
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

# Every point once (the child of an upsert or compaction costs a JVM start; a rollback runs on
# the driver alone, and its child starts no Spark): copy-on-write for the points both table
# types share, merge-on-read for log files, compaction and the rollback of a delta commit.
SCENARIOS = (
    [(COW, "upsert", p) for p in WRITE_POINTS]
    + [(MOR, "upsert", p) for p in MOR_WRITE_POINTS]
    + [(MOR, "compact", p) for p in COMPACTION_POINTS]
    + [(COW, "rollback", p) for p in ROLLBACK_POINTS[:-1]]
    + [(MOR, "rollback", ROLLBACK_POINTS[-1])]
)
# Scenarios whose child is killed; the other points of their action are copied by one child.
KILLED = {
    (COW, "upsert", "task.base_file.written"),
    (MOR, "upsert", "task.log_file.torn"),  # the torn block is staged only when armed
    (MOR, "compact", "compaction.task.written"),
    *((t, a, p) for t, a, p in SCENARIOS if a == "rollback"),
}
CONCURRENT_CHILDREN = 3  # JVM start-up dominates a child; overlap it


@pytest.fixture(scope="module")
def crashed(prepared, tmp_path_factory):
    """The children, a few at a time: per killed scenario (table path, completed process); per
    action whose points are copied, keyed by point None, (work folder, completed process)."""
    root = tmp_path_factory.mktemp("crashes")

    def run(job):
        table_type, action, point = job
        workdir = root / f"{table_type}-{action}-{point or 'snapshots'}"
        workdir.mkdir()
        path = str(workdir / "table")
        shutil.copytree(prepared[table_type], path)
        plan = {"action": action, "table_type": table_type, "rows": [list(r) for r in CRASHED]}
        if point is None:
            return workdir, run_snapshotting_child(path, plan, workdir)
        return path, run_child(path, plan, point, workdir)

    copied = sorted({(t, a, None) for t, a, p in SCENARIOS if (t, a, p) not in KILLED})
    jobs = [*copied, *(s for s in SCENARIOS if s in KILLED)]
    with ThreadPoolExecutor(CONCURRENT_CHILDREN) as pool:
        return dict(zip(jobs, pool.map(run, jobs)))


@pytest.mark.parametrize("table_type, action, point", SCENARIOS,
                         ids=[f"{t[:3].lower()}-{a}-{p}" for t, a, p in SCENARIOS])  # fmt: skip
def test_crash_then_recover(spark, crashed, table_type, action, point):
    if (table_type, action, point) in KILLED:
        path, child = crashed[(table_type, action, point)]
        assert_killed(child, point)
    else:
        workdir, child = crashed[(table_type, action, None)]
        path = assert_snapshotted(child, workdir, point)

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
        table.services.compact(spark, cfg)  # runs the pending plan the crash left, then a new one
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


@pytest.mark.full
@pytest.mark.parametrize("table_type", [COW, MOR])
def test_clustering_killed_in_a_task_is_executed_again(spark, prepared, tmp_path, table_type):
    """Killed after a task wrote a clustered file: readers see the table as before (the
    replaced groups stay, the new file is no committed file), the plan stays pending, a write
    keeps out of its file groups, and the next clustering executes it from the plan alone;
    then both readers see the rows, each with its commit time."""
    path = str(tmp_path / "table")
    shutil.copytree(prepared[table_type], path)
    before = HoodieTable.open(path).read(spark).collect()
    times = {r["_hoodie_record_key"]: r["_hoodie_commit_time"] for r in before}
    child = run_child(path, {"action": "cluster", "table_type": table_type},
                      "clustering.task.written", tmp_path)  # fmt: skip
    assert_killed(child, "clustering.task.written")
    assert snapshot(spark, path) == S2
    table = HoodieTable.open(path)
    cfg = write_config(table_type)
    pending = [i for i in table.timeline().pending if i.action is not Action.ROLLBACK]
    assert len(pending) == 1
    table.services.cluster(spark, cfg)
    assert snapshot(spark, path) == S2
    after = HoodieTable.open(path).read(spark).collect()
    assert {r["_hoodie_record_key"]: r["_hoodie_commit_time"] for r in after} == times
    assert hudi_rs(path) == S2
    table.upsert(spark.createDataFrame(RECOVERY, SCHEMA), cfg)
    assert snapshot(spark, path) == apply(S2, RECOVERY) == hudi_rs(path)
    timeline = table.timeline()
    assert not list(timeline.pending)
    assert Action.REPLACE_COMMIT in [i.action for i in timeline.completed]

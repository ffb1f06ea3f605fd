"""Fault injection in the actions that run on the driver alone: clean, archive, savepoint,
restore, compaction scheduling, and the commit step of optimistic concurrency control.

None of them needs Spark, so each child here is a plain Python process (about a second, no
JVM) that runs one action on a copy of a table this process prepared, and is killed with
SIGKILL at a crash point. (The commit step's child completes a write this process ran up to
that step, from a copy of the table and the step's inputs taken just before it.) Then, in
this process:
- readers (ours and hudi-rs) see a consistent table: the rows before the action or after it
  (clean, archive and savepoint never change rows; a restore shows the commits it undid so far);
- the next action recovers, as in Hudi: the next clean finishes a pending clean; archival runs
  again; the savepoint is taken again; writes are refused until the restore is run again, which
  finishes it; the next write and compaction run with a plan that is whole or absent; the next
  concurrent writer rolls the crashed write back once its heartbeat stops, and breaks the dead
  writer's table lock once it expires;
- afterwards both readers see exactly the expected rows and nothing is left pending.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from crash_support import (
    COW,
    MOR,
    RECOVERY,
    S1,
    S2,
    C,
    apply,
    assert_killed,
    hudi_rs,
    run_child,
    snapshot,
)
from tests_support import SCHEMA, write_config

from hoodie import HoodieTable
from hoodie.avro_metadata import CleanMetadata
from hoodie.exceptions import TimelineError
from hoodie.markers import MARKER_FOLDER
from hoodie.naming import parse_base_file_name
from hoodie.table_services.archival import archive
from hoodie.table_services.savepoint import savepoints
from hoodie.timeline import LAYOUT_V1, Action, State
from hoodie.transaction.heartbeat import heartbeat_path
from hoodie.transaction.lock import LOCK_FILE
from hoodie.transaction.transaction import Transaction

pytestmark = pytest.mark.slow

# A third commit into a partition of its own, so c2's files stay the latest in A and B.
THIRD = [(10, "n10", C, 3, False), (11, "n11", C, 3, False)]
S3 = apply(S2, THIRD)
CLEAN = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
         "hoodie.cleaner.fileversions.retained": "1"}  # fmt: skip
ARCHIVE = {"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2"}
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
LEASE_SECONDS = 2  # the dead writer's table lock expires this long after it took it

SCENARIOS = [
    ("clean", "clean.requested"),
    ("clean", "clean.file_deleted"),
    ("clean", "clean.files_deleted"),
    ("archive", "archive.written"),
    ("archive", "archive.instant_removed"),
    ("savepoint", "savepoint.inflight"),
    ("restore", "rollback.file_deleted"),  # inside the rollback of the first instant
    ("restore", "restore.instant_undone"),
    ("restore", "restore.instants_undone"),
    ("schedule_compaction", "create.staged"),  # the plan's bytes written, not yet requested
    ("schedule_compaction", "compaction.scheduled"),
    ("commit", "commit.conflicts_checked"),
    ("commit", "commit.completed_under_lock"),
]
CONCURRENT_CHILDREN = 4


def points(action: str) -> list[str]:
    return [p for a, p in SCENARIOS if a == action]


@pytest.fixture(scope="module")
def sources(spark, prepared, tmp_path_factory) -> dict:
    """The tables the children start from, and the instants c1 < c2 < c3 of their commits."""
    root = tmp_path_factory.mktemp("service-sources")
    cow3, ready = root / "cow3", root / "ready"
    shutil.copytree(prepared[COW], cow3)
    third = HoodieTable.open(str(cow3))
    with capturing_commit(ready):  # the third commit, an optimistic-concurrency write
        third.upsert(spark.createDataFrame(THIRD, SCHEMA), write_config(COW, options=OCC))
    assert snapshot(spark, str(cow3)) == S3
    c1, c2, c3 = third.timeline().completed.write_timeline.timestamps()
    restorable = root / "restorable"  # savepoints at c1 and c2; the children restore to c1
    shutil.copytree(cow3, restorable)
    for instant in (c1, c2):
        HoodieTable.open(str(restorable)).services.savepoint(instant)
    return {
        "clean": Path(prepared[COW]),
        "archive": cow3,
        "savepoint": Path(prepared[COW]),
        "restore": restorable,
        "schedule_compaction": Path(prepared[MOR]),
        "commit": ready,
        "instants": (c1, c2, c3),
    }


@contextmanager
def capturing_commit(ready: Path):
    """Copy the table of a write to `ready/table` just before its commit step (files written
    and finalized, the instant inflight), with what that step is given in `ready/commit.json`:
    the instant, the write stats, the timeline the write started from."""
    commit = Transaction.commit

    def capture(transaction, metadata, *args, **kwargs):
        shutil.copytree(transaction.meta_client.base_uri, ready / "table")
        inputs = {
            "instant": transaction.instant.timestamp,
            "action": transaction.instant.action.value,
            "metadata": metadata.to_json(),
            "started": [LAYOUT_V1.file_name(i) for i in transaction.started_from],
        }
        (ready / "commit.json").write_text(json.dumps(inputs))
        return commit(transaction, metadata, *args, **kwargs)

    with mock.patch.object(Transaction, "commit", capture):
        yield


@pytest.fixture(scope="module")
def crashed(sources, tmp_path_factory) -> dict:
    """Every scenario's killed child: (table path, completed process)."""
    root = tmp_path_factory.mktemp("service-crashes")
    c1 = sources["instants"][0]

    def crash(scenario):
        action, point = scenario
        workdir = root / f"{action}-{point}"
        workdir.mkdir()
        path = workdir / "table"
        source = sources[action]
        plan = {"action": action, "table_type": COW, "instant": c1}
        if action == "clean":
            plan["options"] = CLEAN
        elif action == "archive":
            plan["options"] = ARCHIVE
        elif action == "schedule_compaction":
            plan["table_type"] = MOR
        elif action == "commit":
            source = source / "table"
            plan.update(options=OCC, ready=str(sources["commit"] / "commit.json"),
                        lease_seconds=LEASE_SECONDS)  # fmt: skip
        shutil.copytree(source, path)
        return str(path), run_child(str(path), plan, point, workdir)

    with ThreadPoolExecutor(CONCURRENT_CHILDREN) as pool:
        return dict(zip(SCENARIOS, pool.map(crash, SCENARIOS)))


def assert_rows(spark, path: str, expected: dict) -> None:
    assert snapshot(spark, path) == expected
    assert hudi_rs(path) == expected


def assert_settled(table: HoodieTable) -> None:
    """Nothing pending, and markers only of completed instants."""
    timeline = table.timeline()
    assert not timeline.pending, timeline.pending.instants
    marker_root = Path(table.base_uri) / MARKER_FOLDER
    leftover = {p.name for p in marker_root.iterdir()} if marker_root.exists() else set()
    assert leftover <= {i.timestamp for i in timeline.completed}, leftover


def base_files_of(path: str, instant: str) -> list[str]:
    return sorted(
        f.name
        for f in Path(path).rglob("*.parquet")
        if (parsed := parse_base_file_name(f.name)) and parsed.instant == instant
    )


@pytest.mark.parametrize("point", points("clean"))
def test_clean_crash(spark, sources, crashed, point):
    path, child = crashed[("clean", point)]
    assert_killed(child, point)
    c1, c2, _ = sources["instants"]
    superseded = base_files_of(str(sources["clean"]), c1)  # c2 rewrote both file groups
    assert len(superseded) == 2
    assert_rows(spark, path, S2)

    table = HoodieTable.open(path)
    table.services.clean(write_config(COW, options=CLEAN))  # finishes the pending clean first
    assert_rows(spark, path, S2)
    assert_settled(table)
    cleans = [i for i in table.timeline() if i.action is Action.CLEAN]
    assert len(cleans) == 1  # the plan the crash left, finished; nothing else to clean
    deleted = CleanMetadata.from_avro(table.meta_client.instant_content(cleans[0]))
    assert sorted(name for p in deleted.partition_metadata.values()
                  for name in p.success_delete_files) == superseded  # fmt: skip
    assert base_files_of(path, c1) == []
    assert len(base_files_of(path, c2)) == 2


@pytest.mark.parametrize("point", points("archive"))
def test_archive_crash(spark, sources, crashed, point):
    path, child = crashed[("archive", point)]
    assert_killed(child, point)
    _, c2, c3 = sources["instants"]
    everything = sorted((i.timestamp, i.action.value)
                        for i in HoodieTable.open(str(sources["archive"])).timeline())  # fmt: skip

    def listed() -> list[tuple[str, str]]:
        """What `hoodie_timeline` lists as completed: each instant once, none lost."""
        return sorted((row["instant"], row["action"]) for row in table.history()
                      if row["state"].startswith("COMPLETED"))  # fmt: skip

    table = HoodieTable.open(path)
    assert_rows(spark, path, S3)
    assert listed() == everything

    archive(table.meta_client, keep_min=1, keep_max=2)  # the next archival
    assert_rows(spark, path, S3)  # c2's files stay readable, archived or not
    assert listed() == everything
    assert_settled(table)
    # Interrupted before removing anything: archived again. After removing c1: c2 stays on the
    # active timeline (and in the archive) until an archival reaches it again.
    active = table.timeline().completed.write_timeline.timestamps()
    assert active == ([c2, c3] if point == "archive.instant_removed" else [c3])


def test_savepoint_crash(spark, sources, crashed):
    path, child = crashed[("savepoint", "savepoint.inflight")]
    assert_killed(child, "savepoint.inflight")
    c1, _, _ = sources["instants"]
    assert_rows(spark, path, S2)
    table = HoodieTable.open(path)
    assert savepoints(table.meta_client) == []  # an unfinished savepoint pins nothing

    table.services.savepoint(c1)  # taken again
    assert savepoints(table.meta_client) == [c1]
    assert_settled(table)
    pinned = base_files_of(path, c1)
    # This clean would delete c1's files, but for the savepoint.
    table.services.clean(write_config(COW, options=CLEAN))
    assert base_files_of(path, c1) == pinned and len(pinned) == 2
    assert_rows(spark, path, S2)
    assert snapshot(spark, path, **{"as.of.instant": c1}) == S1


@pytest.mark.parametrize("point", points("restore"))
def test_restore_crash(spark, sources, crashed, point):
    path, child = crashed[("restore", point)]
    assert_killed(child, point)
    c1, c2, _ = sources["instants"]
    # Undone so far: c3 (or, at the end, c3 and c2).
    after_crash = S1 if point == "restore.instants_undone" else S2
    assert_rows(spark, path, after_crash)

    table = HoodieTable.open(path)
    cfg = write_config(COW)
    before = sorted(p.relative_to(path) for p in Path(path).rglob("*"))
    with pytest.raises(TimelineError, match=f"restore .* to savepoint {c1} was interrupted"):
        table.upsert(spark.createDataFrame(RECOVERY, SCHEMA), cfg)
    if c2 in savepoints(table.meta_client):
        with pytest.raises(TimelineError, match=f"interrupted restore .* to savepoint {c1}"):
            table.services.restore(c2)
    assert sorted(p.relative_to(path) for p in Path(path).rglob("*")) == before  # untouched

    table.services.restore(c1)  # run again: finishes the plan
    assert_rows(spark, path, S1)
    assert_settled(table)
    timeline = table.timeline()
    assert timeline.completed.write_timeline.timestamps() == [c1]
    assert savepoints(table.meta_client) == [c1]
    assert len([i for i in timeline if i.action is Action.RESTORE]) == 1
    if point == "restore.instant_undone":  # writes work again (once is enough: a Spark write)
        table.upsert(spark.createDataFrame(RECOVERY, SCHEMA), cfg)
        assert_rows(spark, path, apply(S1, RECOVERY))


@pytest.mark.parametrize("point", points("schedule_compaction"))
def test_compaction_scheduling_crash(spark, crashed, point):
    path, child = crashed[("schedule_compaction", point)]
    assert_killed(child, point)
    assert_rows(spark, path, S2)
    table = HoodieTable.open(path)
    plans = [i for i in table.timeline() if i.action is Action.COMPACTION]
    # A plan is on the timeline whole, or not at all.
    assert [i.state for i in plans] == ([State.REQUESTED] if point == "compaction.scheduled"
                                        else [])  # fmt: skip

    cfg = write_config(MOR)
    table.upsert(spark.createDataFrame(RECOVERY, SCHEMA), cfg)  # reads no torn plan
    expected = apply(S2, RECOVERY)
    if not plans:
        assert_rows(spark, path, expected)
        assert_settled(table)
        return
    # Logs written while the plan is pending start the slice after it. (hudi-rs 0.5 does not
    # read such logs before the compaction completes, so it is compared after.)
    assert snapshot(spark, path) == expected
    table.services.compact(spark, cfg)  # runs the pending plan, then a new one
    assert_rows(spark, path, expected)
    options = {"hoodie.datasource.query.type": "read_optimized"}
    assert snapshot(spark, path, **options) == expected
    assert_settled(table)


@pytest.mark.parametrize("point", points("commit"))
def test_concurrent_commit_crash(spark, crashed, point):
    path, child = crashed[("commit", point)]
    assert_killed(child, point)
    completed = point == "commit.completed_under_lock"
    after_crash = S3 if completed else S2
    assert_rows(spark, path, after_crash)
    assert "expires_at" in json.loads((Path(path) / LOCK_FILE).read_text())  # the dead holder's

    # The next writer rolls the crashed write back once its heartbeat is stale (at once here),
    # and breaks the table lock once its lease has run out.
    cfg = write_config(COW, options={**OCC, "hoodie.client.heartbeat.interval_in_ms": "100",
                                     "hoodie.client.heartbeat.tolerable.misses": "0",
                                     "hoodie.write.lock.wait_time_ms": "30000"})  # fmt: skip
    table = HoodieTable.open(path)
    crashed_write = table.timeline().write_timeline.instants[-1].timestamp
    assert (Path(path) / heartbeat_path(crashed_write)).exists()  # stale: its writer is dead
    table.upsert(spark.createDataFrame(RECOVERY, SCHEMA), cfg)
    assert_rows(spark, path, apply(after_crash, RECOVERY))
    assert_settled(table)
    assert not (Path(path) / LOCK_FILE).exists()
    rollbacks = [i for i in table.timeline() if i.action is Action.ROLLBACK]
    assert len(rollbacks) == (0 if completed else 1)
    if not completed:  # rolled back, with its heartbeat
        assert not (Path(path) / heartbeat_path(crashed_write)).exists()

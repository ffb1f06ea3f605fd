"""What the crash tests share: the batches, the rows each state holds, readers, child runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie.faults import CRASH_AT, SNAPSHOT_OF, SNAPSHOT_TO

CHILD = Path(__file__).with_name("crash_writer.py")
FINISHED = 3  # the child's exit status when its action ran to the end (crash_writer.NOT_REACHED)
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
A, B, C = "2024-01-01", "2024-01-02", "2024-01-03"

FIRST = [(i, f"n{i}", (A, B)[i % 2], 1, False) for i in range(1, 7)]
SECOND = [(1, "n1-v2", B, 2, False), (2, "n2-v2", A, 2, False), (3, "n3-v2", B, 2, False)]
# What a killed writer tries: an update, a delete, inserts into old and new partitions.
CRASHED = [(1, "n1-crash", B, 10, False), (2, None, A, 10, True), (7, "n7", B, 10, False),
           (8, "n8", C, 10, False)]  # fmt: skip
RECOVERY = [(3, "n3-rec", B, 20, False), (9, "n9", A, 20, False), (4, "n4-rec", A, 20, False)]


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


def snapshot(spark, path: str, **options) -> dict:
    rows = (
        spark.read.format("hoodie").options(**options).load(path)
        .select("id", "name", "ts").collect()
    )  # fmt: skip
    out = {r.id: (r.name, r.ts) for r in rows}
    assert len(out) == len(rows), "duplicate keys in the snapshot"
    return out


def hudi_rs(path: str) -> dict:
    hudi = pytest.importorskip("hudi")
    batches = hudi.HudiTable(path).read()
    if not batches:
        return {}
    table = pa.Table.from_batches(batches)
    out = dict(zip(table["id"].to_pylist(), zip(table["name"].to_pylist(),
                                                 table["ts"].to_pylist())))  # fmt: skip
    assert len(out) == table.num_rows, "hudi-rs: duplicate keys in the snapshot"
    return out


def run_child(path: str, plan: dict, point: str, workdir: Path) -> subprocess.CompletedProcess:
    """Run `plan` on the table at `path` in a child that SIGKILLs itself at `point`."""
    return _child(path, plan, workdir, {CRASH_AT: point})


def run_snapshotting_child(path: str, plan: dict, workdir: Path) -> subprocess.CompletedProcess:
    """Run `plan` to its end in a child that copies the table at every crash point it passes
    to `workdir/<point>/table` (see `hoodie.faults`)."""
    return _child(path, plan, workdir, {SNAPSHOT_TO: str(workdir), SNAPSHOT_OF: path})


def _child(path: str, plan: dict, workdir: Path, faults: dict[str, str]):
    plan_file = workdir / "plan.json"
    plan_file.write_text(json.dumps(plan))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, **faults)
    return subprocess.run(
        [sys.executable, str(CHILD), path, str(plan_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def assert_snapshotted(child: subprocess.CompletedProcess, workdir: Path, point: str) -> str:
    """The child finished its action having copied the table at `point`: the copy's path."""
    assert child.returncode == FINISHED, (
        f"the snapshotting child failed (exit {child.returncode}):\n"
        f"{child.stdout[-2000:]}\n{child.stderr[-3000:]}"
    )
    copy = workdir / point / "table"
    assert copy.is_dir(), f"the child never reached {point}"
    return str(copy)


def assert_killed(child: subprocess.CompletedProcess, point: str) -> None:
    assert child.returncode == -signal.SIGKILL, (
        f"the child was not killed at {point} (exit {child.returncode}):\n"
        f"{child.stdout[-2000:]}\n{child.stderr[-3000:]}"
    )

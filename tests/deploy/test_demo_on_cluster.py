"""The sample project (`make demo`) on a multi-process cluster, against the same on local[2].

`run_demo.py --target cluster` runs the seed, two batches of its pipeline (a cow_upsert model,
a microbatch model with CDC, a mor_upsert model reading its changes) and a compaction, on
`local-cluster[2,1,1024]` whose executors' Python lacks
dbt-hoodie (the adapter ships the core). What it prints of the tables after each batch must
equal what the local target prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.deploy]

SAMPLE = Path(__file__).resolve().parents[2] / "sample_project"
KEPT = ("dbt_project.yml", "profiles.yml", "run_demo.py", "models", "seeds")


def _demo(tmp_path: Path, target: str, workers: str) -> str:
    project = tmp_path / target
    project.mkdir()
    for name in KEPT:
        source = SAMPLE / name
        if source.is_dir():
            shutil.copytree(source, project / name)
        else:
            shutil.copy(source, project / name)
    run = subprocess.run(
        [sys.executable, str(project / "run_demo.py"), "--target", target],
        env=dict(os.environ, PYSPARK_PYTHON=workers),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run.stdout


def _tables(output: str) -> list[str]:
    """The rows the demo printed, batch by batch (not the timelines: instants differ)."""
    lines = [line for line in output.splitlines()
             if line.startswith(("===", "analytics.", "    "))]  # fmt: skip
    return [re.sub(r"\s+", " ", line) for line in lines]


def test_the_sample_project_on_a_cluster(tmp_path, worker_python):
    on_cluster = _tables(_demo(tmp_path, "cluster", worker_python))
    local = _tables(_demo(tmp_path, "local", sys.executable))
    assert on_cluster == local
    # After batch 2, analytics.transactions holds txn 2's update and not the deleted txn 4.
    batch_2 = next(i for i, line in enumerate(on_cluster) if "after batch 2" in line)
    start = on_cluster.index("analytics.transactions: 7 rows", batch_2) + 1
    rows = [line for line in on_cluster[start:] if line.startswith(" txn_id=")]
    ids = [int(line.split(",")[0].split("=")[1]) for line in rows[:7]]
    assert ids == [1, 2, 3, 5, 6, 7, 8], rows
    assert "amount=13.50" in rows[1] and "amount=42.00" in rows[3], rows  # newer ts wins

"""The core on a multi-process cluster whose Python workers do not have dbt-hoodie.

`local-cluster[2,1,1024]` starts two executor JVMs beside the driver (as a standalone
cluster would, from pyspark's own distribution), each with Python workers of its own. The
workers run a Python that has the core's dependencies but not the core. Shipping the core
(`hoodie.integration.ship_core`, what the dbt adapter does on a cluster) makes writes, a
compaction and reads work there; without it the same run fails for want of the `hoodie` module,
which shows the workers really lack it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.deploy]
WRITER = Path(__file__).with_name("cluster_writer.py")


def _run(tmp_path: Path, python: str, ship: str) -> dict:
    out = tmp_path / f"{ship}.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYSPARK_PYTHON=python)  # the workers' Python; the driver's is this one
    proc = subprocess.run(
        [sys.executable, str(WRITER), str(tmp_path / ship / "table"), ship, str(out)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-5000:]
    return json.loads(out.read_text())


def test_a_cluster_without_the_core_gets_it_shipped(tmp_path, worker_python):
    shipped = _run(tmp_path, worker_python, "ship")
    assert shipped.get("rows") == [[1, "a"], [2, "B"], [3, "c"]], shipped
    bare = _run(tmp_path, worker_python, "no-ship")
    assert "hoodie" in bare.get("error", ""), bare

"""The core on a multi-process cluster whose Python workers do not have dbt-hoodie.

`local-cluster[2,1,1024]` starts two executor JVMs beside the driver (as a standalone
cluster would, from pyspark's own distribution), each with Python workers of its own. The
workers run a Python that has the core's dependencies but not the core. Shipping the core
(`hoodie.ship_core`, what the dbt adapter does on a cluster) makes writes, a compaction and
reads work there; without it the same run fails for want of the `hoodie` module, which shows
the workers really lack it.
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


@pytest.fixture(scope="module")
def worker_python(tmp_path_factory) -> str:
    """A venv that sees this environment's packages except dbt-hoodie (a plain path entry to
    site-packages: the editable install's .pth there is not run)."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([python, "-c", where], capture_output=True, text=True,
                             check=True).stdout.strip()  # fmt: skip
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (Path(purelib) / "_test_dependencies.pth").write_text("\n".join(ours) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = (
        "import pyarrow, fastavro, obstore\ntry:\n import hoodie\nexcept ImportError: print('OK')"
    )
    probe = subprocess.run([python, "-c", check], capture_output=True, text=True, cwd=venv,
                           env=env)  # fmt: skip
    assert probe.stdout.strip() == "OK", probe.stdout + probe.stderr
    return python


def _run(tmp_path: Path, python: str, ship: str) -> dict:
    out = tmp_path / f"{ship}.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(WORKER_PYTHON=python, PYSPARK_PYTHON=python)
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

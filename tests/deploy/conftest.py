"""Deployment tests (marker `deploy`, `make test-deploy`): clusters of separate processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
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

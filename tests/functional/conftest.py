"""Functional tests that run dbt in child processes: a scenario that needs another interpreter
(a clean venv with the built wheel) or several dbt processes at once, each with its own JVM
and Derby metastore. Scenarios that need neither run in tests/dbt/scenarios, in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dbt_runs import DbtProject

DRIVER = Path(__file__).with_name("dbt_driver.py")


class ChildProcessProject(DbtProject):
    """A project with its own warehouse and metastore, whose plans run in a child process."""

    def __init__(self, root: Path):
        super().__init__(root, spark_root=root, schema="func")

    def run(
        self, commands: list[list[str]], tables: list[str] = (), python: str = sys.executable
    ) -> dict:
        plan = self.root / "plan.json"
        out = self.root / "report.json"
        plan.write_text(json.dumps(self.plan(commands, tables)))
        env = dict(os.environ, PYSPARK_PYTHON=python)
        if python != sys.executable:
            # Another interpreter (a clean venv) must import its own install, not a checkout.
            env.pop("PYTHONPATH", None)
        proc = subprocess.run(
            [python, str(DRIVER), str(self.root), str(plan), str(out)],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0 or not out.exists():
            output = f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            raise AssertionError(f"dbt driver failed:\n{output}")
        return json.loads(out.read_text())


@pytest.fixture
def dbt_project(tmp_path) -> ChildProcessProject:
    return ChildProcessProject(tmp_path / "project")


@pytest.fixture
def make_dbt_project(tmp_path):
    """Several projects of one test (each its own dbt process, warehouse and metastore)."""
    return lambda name: ChildProcessProject(tmp_path / name)

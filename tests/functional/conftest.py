"""Functional tests run dbt in a child process: dbt needs its own Hive-enabled SparkSession,
and one child per scenario keeps that JVM apart from the test process's shared session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DRIVER = Path(__file__).with_name("dbt_driver.py")


class DbtProject:
    def __init__(self, root: Path):
        self.root = root
        self.lake = root / "lake"
        (root / "models").mkdir(parents=True)
        (root / "seeds").mkdir()
        (root / "dbt_project.yml").write_text(
            textwrap.dedent("""\
            name: functional
            version: "1.0"
            config-version: 2
            profile: functional
            vars:
              batch: 1
            """)
        )
        (root / "profiles.yml").write_text(
            textwrap.dedent(f"""\
            functional:
              target: test
              outputs:
                test:
                  type: hoodie
                  schema: func
                  master: "local[2]"
                  warehouse_dir: {root / "warehouse"}
                  metastore_dir: {root / "metastore"}
                  spark_conf:
                    spark.sql.shuffle.partitions: "2"
                    spark.ui.enabled: "false"
            """)
        )

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    def run(
        self, commands: list[list[str]], tables: list[str] = (), python: str = sys.executable
    ) -> dict:
        plan = self.root / "plan.json"
        out = self.root / "report.json"
        plan.write_text(json.dumps({"commands": commands, "tables": list(tables)}))
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
def dbt_project(tmp_path) -> DbtProject:
    return DbtProject(tmp_path / "project")


@pytest.fixture
def make_dbt_project(tmp_path):
    """Several projects of one test (each its own dbt process, warehouse and metastore)."""
    return lambda name: DbtProject(tmp_path / name)

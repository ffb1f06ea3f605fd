"""Functional tests that run dbt in child processes: a scenario that needs another interpreter
(a clean venv with the built wheel) or several dbt processes at once, each with its own JVM
and Derby metastore. Scenarios that need neither run in tests/dbt/scenarios, in-process."""

from __future__ import annotations

import pytest
from dbt_runs import ChildProcessProject


@pytest.fixture
def dbt_project(tmp_path) -> ChildProcessProject:
    return ChildProcessProject(tmp_path / "project")


@pytest.fixture
def make_dbt_project(tmp_path):
    """Several projects of one test (each its own dbt process, warehouse and metastore)."""
    return lambda name: ChildProcessProject(tmp_path / name)

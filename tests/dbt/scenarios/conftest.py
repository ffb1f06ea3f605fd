"""Our dbt scenarios, run in this process by dbt's programmatic runner (see tests/dbt)."""

from __future__ import annotations

import re

import pytest
from dbt_runs import DbtProject, run_plan


class InProcessProject(DbtProject):
    """A project whose plans run here, on the process's shared warehouse and metastore."""

    def run(self, commands: list[list[str]], tables: list[str] = ()) -> dict:
        return run_plan(str(self.root), self.plan(commands, tables))


@pytest.fixture
def make_dbt_project(request, tmp_path, hoodie_spark_root):
    """The test's project (one per test), its schema named after the test (the warehouse is
    shared); keyword arguments are profile keys."""
    schema = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:60]
    return lambda **profile: InProcessProject(
        tmp_path / "project", hoodie_spark_root, schema, **profile
    )


@pytest.fixture
def dbt_project(make_dbt_project) -> InProcessProject:
    return make_dbt_project()

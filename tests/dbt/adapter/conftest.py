"""dbt's own adapter test suite (`dbt-tests-adapter`) run against a `type: hoodie` profile."""

from __future__ import annotations

import os

import pytest
from dbt_runs import profile_target


def pytest_collection_modifyitems(items):
    """A test its class names in `dbt_full` (test_lake_incremental.py's `Lake`) runs in
    `make test-dbt` only: `make test` runs it on the other lake materialization."""
    for item in items:
        if getattr(item, "originalname", item.name) in getattr(item.cls, "dbt_full", ()):
            item.add_marker(pytest.mark.dbt_full)


@pytest.fixture(scope="class")
def dbt_profile_target(hoodie_spark_root):
    """The hoodie session profile every class runs on; the framework adds the schema."""
    return profile_target(hoodie_spark_root)


@pytest.fixture(scope="class")
def logs_dir(request, prefix, tmp_path_factory):
    """dbt's logs under pytest's temp dir, not in a `logs/` folder of the checkout."""
    path = tmp_path_factory.mktemp("dbt-logs") / prefix
    os.environ["DBT_LOG_PATH"] = str(path)
    yield str(path)
    del os.environ["DBT_LOG_PATH"]

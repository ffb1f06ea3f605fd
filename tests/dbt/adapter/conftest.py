"""dbt's own adapter test suite (`dbt-tests-adapter`) run against a `type: hoodie` profile."""

from __future__ import annotations

import os

import pytest
from dbt_runs import profile_target


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

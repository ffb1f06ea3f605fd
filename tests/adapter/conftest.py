"""dbt's own adapter test suite (`dbt-tests-adapter`) run against a `type: hoodie` profile.

This folder runs in a pytest process of its own (the Makefile's second invocation; the main
run ignores it through `collect_ignore` in tests/conftest.py). `run_dbt` runs dbt in this
process, so dbt's Hive-enabled SparkSession lives here too, and a JVM holds one SparkContext:
the main suite's plain `spark` fixture and this session cannot share a process.
"""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]


def pytest_configure(config):
    # dbt-tests-adapter declares its class-scoped fixtures (models, seeds, ...) as methods, so
    # every subclass overriding one must too; pytest 9 warns about each of them.
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Class-scoped fixtures defined as instance methods:pytest.PytestRemovedIn10Warning",
    )


@pytest.fixture(scope="session")
def hoodie_spark_root(tmp_path_factory):
    """One warehouse and metastore for every test class in the process.

    The adapter keeps one SparkSession per distinct session conf, and static settings such
    as the warehouse and the Derby metastore cannot change once the JVM runs, so every class
    must hand dbt the same absolute paths; each class still gets its own schema.
    """
    return tmp_path_factory.mktemp("hoodie-adapter")


@pytest.fixture(scope="class")
def dbt_profile_target(hoodie_spark_root):
    """The hoodie session profile every class runs on; the framework adds the schema."""
    return {
        "type": "hoodie",
        "threads": 1,
        "master": "local[2]",
        "warehouse_dir": str(hoodie_spark_root / "warehouse"),
        "metastore_dir": str(hoodie_spark_root / "metastore"),
        "spark_conf": {
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
        },
    }


@pytest.fixture(scope="class")
def logs_dir(request, prefix, tmp_path_factory):
    """dbt's logs under pytest's temp dir, not in a `logs/` folder of the checkout."""
    path = tmp_path_factory.mktemp("dbt-logs") / prefix
    os.environ["DBT_LOG_PATH"] = str(path)
    yield str(path)
    del os.environ["DBT_LOG_PATH"]

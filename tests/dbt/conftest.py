"""Tests that run dbt in this pytest process, on one Hive-enabled SparkSession.

This folder runs in a pytest process of its own (the Makefile's second invocation; the main
run ignores it through `collect_ignore` in tests/conftest.py): dbt builds its SparkSession
with Hive support, and a JVM holds one SparkContext, so the main suite's plain `spark`
fixture and this session cannot share a process. Sharing one JVM, metastore and Python
workers across every dbt command here is what keeps dbt's suite and our scenarios cheap;
each test class or scenario gets a schema of its own.

- adapter/: dbt's own adapter test suite (`dbt-tests-adapter`) on a `type: hoodie` profile.
- scenarios/: our end-to-end dbt scenarios (seeds, runs, snapshots, run-operations), checked
  through Spark, the files on disk and hudi-rs.
"""

from __future__ import annotations

import os

import pytest
from s3_server import KEY, REGION, SECRET

pytest_plugins = ["dbt.tests.fixtures.project"]

# Credentials for the local S3 server, where a user's come from: the environment the JVM and
# its Python workers start with (set before any test starts the process's one JVM).
os.environ.setdefault("AWS_ACCESS_KEY_ID", KEY)
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", SECRET)
os.environ.setdefault("AWS_REGION", REGION)
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")


def pytest_configure(config):
    # dbt-tests-adapter declares its class-scoped fixtures (models, seeds, ...) as methods, so
    # every subclass overriding one must too; pytest 9 warns about each of them.
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Class-scoped fixtures defined as instance methods:pytest.PytestRemovedIn10Warning",
    )


@pytest.fixture(scope="session")
def hoodie_spark_root(tmp_path_factory):
    """One warehouse and metastore for every test in the process.

    The adapter keeps one SparkSession per distinct session conf, and static settings such
    as the warehouse and the Derby metastore cannot change once the JVM runs, so every test
    must hand dbt the same absolute paths (see `dbt_runs.profile_target`).
    """
    return tmp_path_factory.mktemp("hoodie-dbt")

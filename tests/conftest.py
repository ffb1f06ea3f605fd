"""Shared fixtures: one local SparkSession per test process."""

from __future__ import annotations

import os
import sys

import pytest

# tests/dbt runs dbt in-process with a Hive-enabled SparkSession, which cannot share a JVM
# with the `spark` fixture below: it runs as its own pytest invocation (`pytest tests/dbt`,
# see the Makefile), and naming the folder collects it as usual.
collect_ignore = ["dbt"]
pytest_plugins = ["s3_server", "azure_server", "connect_server"]
# The object stores the tests start: name -> the fixture of a fresh bucket (container) there.
OBJECT_STORES = {"s3": "s3_bucket", "azure": "azure_container"}


@pytest.fixture
def bucket_on(request):
    """`bucket_on("s3")`, `bucket_on("azure")`: a fresh bucket of that store, with `uri(path)`,
    `storage_options` (what the core takes) and `hudi_rs_options` (what hudi-rs takes)."""
    return lambda store: request.getfixturevalue(OBJECT_STORES[store])


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A local SparkSession for the whole test process (no Hive support)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    root = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hoodie-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.warehouse.dir", str(root / "warehouse"))
        .config("spark.local.dir", str(root / "local"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={root / 'derby'}")
        .config("spark.log.level", "WARN")
        .getOrCreate()
    )
    yield session
    session.stop()

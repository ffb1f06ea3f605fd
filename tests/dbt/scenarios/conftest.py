"""Our dbt scenarios, on this process's session, over Spark Connect and on a cluster.

Each scenario that takes `dbt_project` runs three times: here, by dbt's programmatic runner
on the process's shared Hive-enabled session (see tests/dbt); as a Spark Connect client (a
child process whose profile is `remote: sc://...`) against a Connect server started from
PySpark's distribution; and in a child process whose profile's master is a local-cluster
(executor JVMs of their own). The Connect server's and the cluster's Python workers lack
dbt-hoodie. Over Connect, the scenarios of CONNECT_IN_MAKE_TEST run in `make test`; the rest,
and every cluster run, carry the marker `deploy` (`make test-deploy`).
"""

from __future__ import annotations

import hashlib
import re

import pytest
from dbt_runs import ClusterProject, ConnectProject, DbtProject, run_plan

# Session 39: empty (the full refresh over Connect, 40 s of the dbt lane, went to `deploy`);
# `make test` runs the core's upsert over Spark Connect (tests/integration/test_spark_connect.py).
CONNECT_IN_MAKE_TEST: set[str] = set()


class InProcessProject(DbtProject):
    """A project whose plans run here, on the process's shared warehouse and metastore."""

    def run(self, commands: list[list[str]], tables: list[str] = ()) -> dict:
        return run_plan(str(self.root), self.plan(commands, tables))


def pytest_collection_modifyitems(items):
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None and spec.params.get("dbt_project") == "connect":
            item.add_marker(pytest.mark.connect)
            if item.originalname not in CONNECT_IN_MAKE_TEST:
                item.add_marker(pytest.mark.deploy)


def _schema(request) -> str:
    """The test's name, cut to 60 characters; a cut name ends with a hash of the whole one,
    so that the parameters of a long test's variants still tell their schemas apart."""
    name = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())
    if len(name) <= 60:
        return name
    return f"{name[:51]}_{hashlib.sha1(name.encode()).hexdigest()[:8]}"


@pytest.fixture
def make_dbt_project(request, tmp_path, hoodie_spark_root):
    """The test's project (one per test), its schema named after the test (the warehouse is
    shared); keyword arguments are profile keys."""
    return lambda **profile: InProcessProject(
        tmp_path / "project", hoodie_spark_root, _schema(request), **profile
    )


@pytest.fixture(params=["session", "connect", pytest.param("cluster", marks=pytest.mark.deploy)])
def dbt_project(request, tmp_path, make_dbt_project) -> DbtProject:
    if request.param == "session":
        return make_dbt_project()
    if request.param == "cluster":
        workers = request.getfixturevalue("worker_python")
        return ClusterProject(tmp_path / "project", workers)
    server = request.getfixturevalue("connect_server")
    return ConnectProject(tmp_path / "project", server.url, server.warehouse, _schema(request))

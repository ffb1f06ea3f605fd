"""Over Spark Connect the server's Python workers need the core: the adapter ships it.

The other scenarios run over Connect too (see conftest.py), with `ship_core` on (its default
for `remote: sc://...`). Here, with `ship_core: false`, a model fails naming the missing
module: the server's workers really lack dbt-hoodie, so what the shipped runs prove holds.
"""

from __future__ import annotations

import pytest
from dbt_runs import ConnectProject

pytestmark = [pytest.mark.slow, pytest.mark.deploy, pytest.mark.connect]

MODEL = """\
{{ config(materialized='cow_upsert', record_key='id') }}
select id, 'x' as name from range(0, 3) as r
"""


def test_without_the_core_shipped_the_servers_workers_fail(tmp_path, connect_server):
    project = ConnectProject(tmp_path / "project", connect_server.url, connect_server.warehouse,
                             "connect_not_shipped", ship_core=False)  # fmt: skip
    project.write("models/orders.sql", MODEL)
    report = project.run([["run"]])
    (ran,) = report["commands"]
    assert not ran["success"], ran
    assert "No module named 'hoodie'" in ran["error"] + " ".join(ran["messages"]), ran

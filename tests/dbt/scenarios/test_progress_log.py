"""A lake model's write shows its steps in dbt's log, with the model's name and its counts;
off a terminal no live line (nor any control sequence of one) is written."""

from __future__ import annotations

import json

import pytest

from dbt.adapters.hoodie import progress

pytestmark = pytest.mark.slow

SEED = """\
id,amount,batch
1,10,1
2,20,1
3,30,1
2,21,2
4,40,2
"""

ORDERS = """\
{{ config(materialized='cow_upsert', record_key='id') }}
select id, amount from {{ ref('raw_orders') }} where batch = {{ var('batch') }}
"""


def test_the_dbt_log_shows_each_step_of_a_write(make_dbt_project, capfd):
    project = make_dbt_project()
    project.write("seeds/raw_orders.csv", SEED)
    project.write("models/orders.sql", ORDERS)
    report = project.run(
        [["seed"], ["run"], ["run", "--vars", "{batch: 2}", "--log-format-file", "json"]],
        tables=["orders"],
    )
    assert [c["success"] for c in report["commands"]] == [True, True, True], report["commands"]
    assert sorted((r["id"], r["amount"]) for r in report["tables"]["orders"]["rows"]) == [
        (1, 10), (2, 21), (3, 30), (4, 40)]  # fmt: skip

    text, json_lines = [], []
    for line in (project.root / "logs" / "dbt.log").read_text().splitlines():
        (json_lines if line.startswith("{") else text).append(line)
    first = [line for line in text if "Hoodie adapter: orders: " in line]
    # The first run (text): a bulk insert into a new file group, each step as it happened.
    assert any("[debug]" in line and "orders: writing into new file groups" in line
               for line in first)  # fmt: skip
    assert any("[info ]" in line and "orders: wrote 1 new file group: 3 inserts, 0 updates; "
               "3 records in 1 file" in line for line in first)  # fmt: skip
    assert any("[info ]" in line and "orders: committed bulk_insert " in line for line in first)
    # After the commit, the table's registration in the catalog is a step of its own.
    registering = f"orders: registering {project.schema}.orders in the catalog"
    told = [i for i, line in enumerate(first) if "[debug]" in line and registering in line]
    assert len(told) == 2 and f"{registering}: created in " in first[told[1]], first
    assert "committed bulk_insert" in " ".join(first[: told[0]])

    # The second (JSON): an upsert tagged in its write task, told with the model's node.
    steps = [json.loads(line) for line in json_lines]
    steps = [s for s in steps if s["data"].get("base_msg", "").startswith("orders: ")]
    messages = [(s["info"]["level"], s["data"]["base_msg"]) for s in steps]
    assert ("debug", "orders: writing with tagging in the write tasks (1 routing unit over 1 "
            "file group, SIMPLE index)") in messages  # fmt: skip
    wrote = [m for level, m in messages if level == "info" and m.startswith("orders: wrote")]
    assert wrote and wrote[0].startswith("orders: wrote 1 file group: 1 insert, 1 update; "
                                         "4 records in 1 file")  # fmt: skip
    committed = [s for s in steps if s["data"]["base_msg"].startswith("orders: committed upsert")]
    assert committed and committed[0]["data"]["node_info"]["node_name"] == "orders"
    order = [m.split(":")[1].split()[0] for _, m in messages]
    assert order.index("writing") < order.index("wrote") < order.index("committed")
    assert any(level == "debug" and m.startswith(f"{registering}: unchanged in ")
               for level, m in messages), messages  # fmt: skip

    # Off a terminal (pytest captures stderr): no live line.
    assert progress.live_line() is None
    err = capfd.readouterr().err
    assert "\x1b[K" not in err and "\r" not in err

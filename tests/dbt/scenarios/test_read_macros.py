"""hoodie_as_of, hoodie_changes, hoodie_cdc and hoodie_snapshot: models reading a lake table at
an instant, its changes (latest state, or every change with images), or its latest snapshot (a
parquet scan of the planned files)."""

from __future__ import annotations

import pytest

from hoodie import HoodieTable

pytestmark = pytest.mark.slow

SEED = """\
id,v,batch
1,a,1
2,b,1
2,B,2
3,c,2
"""

ORDERS = """\
{{ config(materialized='cow_upsert', record_key='id') }}
select id, v from {{ ref('raw') }} where batch = {{ var('batch') }}
"""

AS_OF = """\
{{ config(materialized='table') }}
select id, v from {{ hoodie_as_of(ref('orders'), var('first')) }}
"""

CHANGES = """\
{{ config(materialized='table') }}
select id, v from {{ hoodie_changes(ref('orders'), var('first')) }}
"""

LATEST = """\
{{ config(materialized='table') }}
select id, v from {{ hoodie_snapshot(ref('orders')) }} where id >= 2
"""

# Every change since the start: the first write's inserts (into a new file group: inferred
# from its base file), the second's update and insert (from the .cdc file it wrote), with
# the images' columns reached as struct fields.
CDC = """\
{{ config(materialized='table') }}
select op, ts_ms, record_key, partition_path, after.id as id, after.v as v, before.v as was
from {{ hoodie_cdc(ref('orders'), '0') }}
"""
# orders logging its changes (hoodie.table.cdc.enabled) for hoodie_cdc
LOGGED = ORDERS.replace(
    "record_key='id'", "record_key='id', options={'hoodie.table.cdc.enabled': 'true'}"
)

BAD = """\
{{ config(materialized='table') }}
select id from {{ hoodie_as_of(ref('orders'), '1999-01-01') }}
"""


def test_as_of_and_changes_macros(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("models/orders.sql", LOGGED)
    report = dbt_project.run(
        [
            ["seed"],
            ["run", "-s", "orders", "--vars", "{batch: 1}"],
            ["run", "-s", "orders", "--vars", "{batch: 2}"],
        ]  # fmt: skip
    )
    assert all(c["success"] for c in report["commands"]), report["commands"]
    table = HoodieTable.open(str(dbt_project.lake / "orders"))
    first, second = [i.timestamp for i in table.timeline().completed]

    dbt_project.write("models/orders_then.sql", AS_OF)
    dbt_project.write("models/orders_changes.sql", CHANGES)
    dbt_project.write("models/orders_latest.sql", LATEST)
    dbt_project.write("models/orders_bad.sql", BAD)
    dbt_project.write("models/orders_cdc.sql", CDC)
    report = dbt_project.run(
        [
            [
                "run",
                "-s",
                "orders_then",
                "orders_changes",
                "orders_latest",
                "orders_bad",
                "orders_cdc",
                "--vars",
                f"{{batch: 2, first: '{first}'}}",
            ]
        ],  # fmt: skip
        tables=["orders_then", "orders_changes", "orders_latest", "orders_cdc"],
    )
    then = sorted((r["id"], r["v"]) for r in report["tables"]["orders_then"]["rows"])
    assert then == [(1, "a"), (2, "b")]  # the table as of the first commit
    changes = sorted((r["id"], r["v"]) for r in report["tables"]["orders_changes"]["rows"])
    assert changes == [(2, "B"), (3, "c")]  # what the second commit changed
    latest = sorted((r["id"], r["v"]) for r in report["tables"]["orders_latest"]["rows"])
    assert latest == [(2, "B"), (3, "c")]
    cdc = sorted(tuple(r.values()) for r in report["tables"]["orders_cdc"]["rows"])
    assert cdc == [
        ("i", first, "1", "", 1, "a", None),
        ("i", first, "2", "", 2, "b", None),
        ("i", second, "3", "", 3, "c", None),
        ("u", second, "2", "", 2, "B", "b"),
    ]
    messages = " ".join(report["commands"][0]["messages"])
    assert "before the earliest readable instant" in messages
    assert f"readable range: {first} .. {second}" in messages

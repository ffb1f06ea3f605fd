"""dbt models whose lake tables live on object storage (a local S3 server).

The profile says how to reach the store (`storage_options`: endpoint, scheme, region; the
credentials come from the environment), the models say where (`location_root: s3://...`).
Two runs of a cow_upsert and a mor_upsert model, a compaction, and a model reading the
table as of its first commit; hudi-rs reads the same tables from the same endpoint.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

pytestmark = pytest.mark.slow

SEED = """\
id,name,ts,batch
1,a,1,1
2,b,1,1
2,B,2,2
3,c,2,2
"""

# No small-file filling: the update of 2 goes to a log file, for the compaction to fold in.
MODEL = """\
{{{{ config(materialized='{materialized}', record_key='id', precombine_field='ts',
          location_root='{root}', options={{'hoodie.parquet.small.file.limit': '0'}}) }}}}
select id, name, ts from {{{{ ref('raw') }}}} where batch = {{{{ var('batch') }}}}
"""

AS_OF = """\
{{ config(materialized='table') }}
select id, name from {{ hoodie_as_of(ref('cow_orders'), var('first')) }}
"""


def _hudi_rs(bucket, uri: str) -> dict:
    hudi = pytest.importorskip("hudi")
    rows = pa.Table.from_batches(hudi.HudiTable(uri, options=bucket.hudi_rs_options).read())
    return dict(zip(rows["id"].to_pylist(), rows["name"].to_pylist()))


def test_models_on_s3(make_dbt_project, s3_bucket):
    host = s3_bucket.endpoint.split("://", 1)[1]
    project = make_dbt_project(
        storage_options={"endpoint_override": host, "scheme": "http", "region": "us-east-1"}
    )
    root = s3_bucket.uri("lake")
    project.write("seeds/raw.csv", SEED)
    for materialized in ("cow_upsert", "mor_upsert"):
        name = f"{materialized.split('_')[0]}_orders"
        project.write(f"models/{name}.sql", MODEL.format(materialized=materialized, root=root))
    report = project.run(
        [
            ["seed"],
            ["run", "--vars", "{batch: 1}"],
            ["run", "--vars", "{batch: 2}"],
            ["run-operation", "hoodie_compact", "--args", "{model: mor_orders}"],
            ["run-operation", "hoodie_timeline", "--args", "{model: cow_orders}"],
        ],
        tables=["cow_orders", "mor_orders"],
    )
    for command in report["commands"]:
        assert command["success"], command
    expected = {1: "a", 2: "B", 3: "c"}
    for name in ("cow_orders", "mor_orders"):
        rows = {r["id"]: r["name"] for r in report["tables"][name]["rows"]}
        assert rows == expected, name
        assert _hudi_rs(s3_bucket, f"{root}/{name}") == expected, name
    # Only the seed (a plain Spark table) is in the local warehouse.
    assert sorted(path.name for path in project.lake.iterdir()) == ["raw"]

    from hoodie import HoodieTable

    options = s3_bucket.storage_options
    table = HoodieTable.open(f"{root}/cow_orders", options)
    first = table.timeline().completed.timestamps()[0]
    mor = HoodieTable.open(f"{root}/mor_orders", options).timeline().completed
    assert [i.action.value for i in mor] == ["deltacommit", "deltacommit", "commit"]
    project.write("models/orders_then.sql", AS_OF)
    report = project.run(
        [["run", "-s", "orders_then", "--vars", f"{{batch: 2, first: '{first}'}}"]],
        tables=["orders_then"],
    )
    assert report["commands"][0]["success"], report["commands"][0]
    assert {r["id"]: r["name"] for r in report["tables"]["orders_then"]["rows"]} == {
        1: "a", 2: "b",
    }  # fmt: skip

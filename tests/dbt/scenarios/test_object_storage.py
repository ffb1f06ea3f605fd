"""dbt models whose lake tables live on object storage: a local S3 server, and Azurite.

The profile says how to reach the store (`storage_options`: endpoint, scheme, region; the
credentials come from the environment: AWS_ACCESS_KEY_ID, AZURE_STORAGE_ACCOUNT_KEY), the
models say where (`location_root: s3://...`, `abfs://container@account.dfs.../...`).
Two runs of a cow_upsert and a mor_upsert model, a compaction, and a model reading the
table as of its first commit; then the table operations (savepoint, rollback, restore, clean)
and a snapshot, whose table is on the store too. hudi-rs reads the same tables from the same
endpoint.
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
1,A,3,3
4,d,3,3
"""

# No small-file filling: the update of 2 goes to a log file, for the compaction to fold in.
MODEL = """\
{{{{ config(materialized='{materialized}', record_key='id', precombine_field='ts',
          location_root='{root}', options={{'hoodie.parquet.small.file.limit': '0'}}) }}}}
select id, name, ts from {{{{ ref('raw') }}}} where batch = {{{{ var('batch') }}}}
"""

SNAPSHOT = """\
{{% snapshot orders_snap %}}
{{{{ config(strategy='check', unique_key='id', check_cols=['name'], location_root='{root}') }}}}
select id, name from {{{{ ref('cow_orders') }}}}
{{% endsnapshot %}}
"""

AS_OF = """\
{{ config(materialized='table') }}
select id, name from {{ hoodie_as_of(ref('cow_orders'), var('first')) }}
"""


def _hudi_rs(bucket, uri: str) -> dict:
    hudi = pytest.importorskip("hudi")
    rows = pa.Table.from_batches(hudi.HudiTable(uri, options=bucket.hudi_rs_options).read())
    return dict(zip(rows["id"].to_pylist(), rows["name"].to_pylist()))


def _hudi_rs_rows(bucket, uri: str) -> list[dict]:
    hudi = pytest.importorskip("hudi")
    return pa.Table.from_batches(
        hudi.HudiTable(uri, options=bucket.hudi_rs_options).read()
    ).to_pylist()


@pytest.fixture(params=["s3", pytest.param("azure", marks=pytest.mark.deploy)])
def store(request, monkeypatch):
    """The bucket and the profile's `storage_options` for it: no credentials, which come
    from the environment (Spark's reads of catalog tables see nothing else)."""
    if request.param == "s3":
        bucket = request.getfixturevalue("s3_bucket")
        host = bucket.endpoint.split("://", 1)[1]
        return bucket, {"endpoint_override": host, "scheme": "http", "region": "us-east-1"}
    bucket = request.getfixturevalue("azure_container")
    options = dict(bucket.storage_options)
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", options.pop("account_key"))
    return bucket, options


def test_models_on_object_storage(make_dbt_project, store):
    bucket, storage_options = store
    project = make_dbt_project(storage_options=storage_options)
    root = bucket.uri("lake")
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
        assert _hudi_rs(bucket, f"{root}/{name}") == expected, name
    # Only the seed (a plain Spark table) is in the local warehouse.
    assert sorted(path.name for path in project.lake.iterdir()) == ["raw"]

    from hoodie import HoodieTable

    options = bucket.storage_options
    table = HoodieTable.open(f"{root}/cow_orders", options)
    commits = [i.timestamp for i in table.timeline().completed if i.action.value == "commit"]
    first = commits[0]
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

    # Table operations and a snapshot, all on the store.
    project.write("snapshots/orders_snap.sql", SNAPSHOT.format(root=root))

    def operation(name: str, extra: str = "") -> list[str]:
        return ["run-operation", name, "--args", f"{{model: cow_orders{extra}}}"]

    run_3 = ["run", "-s", "cow_orders", "--vars", "{batch: 3}"]
    report = project.run(
        [
            ["snapshot"],
            operation("hoodie_savepoint"),  # of batch 2's commit
            run_3,
            ["snapshot"],
            operation("hoodie_rollback"),  # batch 3 undone
            run_3,
            operation("hoodie_restore"),  # to the savepoint: batch 3 undone again
            operation("hoodie_clean"),
        ],
        tables=["cow_orders", "orders_snap"],
    )
    assert [c["success"] for c in report["commands"]] == [True] * 8, report["commands"]
    assert {r["id"]: r["name"] for r in report["tables"]["cow_orders"]["rows"]} == expected
    assert _hudi_rs(bucket, f"{root}/cow_orders") == expected
    completed = HoodieTable.open(f"{root}/cow_orders", options).timeline().completed
    actions = {i.action.value for i in completed}
    assert {"savepoint", "rollback", "restore"} <= actions, actions
    assert [i.timestamp for i in completed if i.action.value == "commit"] == commits
    versions = sorted((r["id"], r["name"], r["dbt_valid_to"] is None)
                      for r in report["tables"]["orders_snap"]["rows"])  # fmt: skip
    assert versions == [(1, "A", True), (1, "a", False), (2, "B", True), (3, "c", True),
                        (4, "d", True)]  # fmt: skip
    snap = _hudi_rs_rows(bucket, f"{root}/orders_snap")
    assert sorted((r["id"], r["name"]) for r in snap) == [(1, "A"), (1, "a"), (2, "B"),
                                                         (3, "c"), (4, "d")]  # fmt: skip
    assert not (project.lake / "orders_snap").exists()  # the snapshot's table is on the store

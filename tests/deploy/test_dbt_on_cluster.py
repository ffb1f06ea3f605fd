"""dbt models on a multi-process cluster whose Python workers do not have dbt-hoodie.

The profile's `master` is `local-cluster[2,1,1024]` (two executor JVMs beside the driver)
and the workers' Python (`PYSPARK_PYTHON`) lacks dbt-hoodie: the adapter ships the core to
them (`ship_core`, on by default off `local[...]`). Two runs of a cow_upsert and a mor_upsert
model, a compaction and the tables' reads run their Spark tasks there. With `ship_core: false`
the first model fails, naming the missing module: the workers really lack it.
"""

from __future__ import annotations

import pytest
from dbt_runs import ClusterProject

pytestmark = [pytest.mark.slow, pytest.mark.deploy]

SEED = """\
id,name,ts,batch
1,a,1,1
2,b,1,1
2,B,2,2
3,c,2,2
"""

MODEL = """\
{{{{ config(materialized='{materialized}', record_key='id', precombine_field='ts',
          options={{'hoodie.parquet.small.file.limit': '0'}}) }}}}
select id, name, ts from {{{{ ref('raw') }}}} where batch = {{{{ var('batch') }}}}
"""


def test_models_on_a_cluster_without_the_core(tmp_path, worker_python):
    def project(name: str, **profile: object) -> ClusterProject:
        made = ClusterProject(tmp_path / name, worker_python, **profile)
        made.write("seeds/raw.csv", SEED)
        for materialized in ("cow_upsert", "mor_upsert"):
            model = f"{materialized.split('_')[0]}_orders"
            made.write(f"models/{model}.sql", MODEL.format(materialized=materialized))
        return made

    report = project("shipped").run(
        [
            ["seed"],
            ["run", "--vars", "{batch: 1}"],
            ["run", "--vars", "{batch: 2}"],
            ["run-operation", "hoodie_compact", "--args", "{model: mor_orders}"],
        ],
        tables=["cow_orders", "mor_orders"],
    )
    assert [c["success"] for c in report["commands"]] == [True] * 4, report["commands"]
    for name in ("cow_orders", "mor_orders"):
        rows = {r["id"]: r["name"] for r in report["tables"][name]["rows"]}
        assert rows == {1: "a", 2: "B", 3: "c"}, name

    bare = project("not_shipped", ship_core=False).run([["seed"], ["run", "-s", "cow_orders"]])
    seeded, ran = bare["commands"]
    assert seeded["success"] and not ran["success"], bare["commands"]
    assert "hoodie" in str(ran), ran

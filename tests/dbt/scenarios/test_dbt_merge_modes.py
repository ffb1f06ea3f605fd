"""`dbt run` of a mor_upsert model with `options={'hoodie.datasource.write.payload.class':
...}` (design: incremental-pipelines.md, 2.4): the payload reaches hoodie.properties and merges
the probe's shape (a stale and a newer update with a null column) as Apache Hudi's
PartialUpdateAvroPayload does; a later run naming another payload is refused, the table
unchanged."""

from __future__ import annotations

import pytest

from hoodie import properties as P

pytestmark = [pytest.mark.slow, pytest.mark.dbt_full]

SEED = """\
id,name,amount,ts,batch
1,a1,10,5,1
2,b1,20,5,1
1,,11,3,2
2,,21,7,2
"""
SEED_CONFIG = """\
seeds:
  - name: raw
    config:
      column_types: {id: int, name: string, amount: int, ts: bigint, batch: int}
"""
MODEL = """\
{{ config(materialized='mor_upsert', record_key='id', precombine_field='ts',
          options={'hoodie.datasource.write.payload.class':
                   'org.apache.hudi.common.model.' ~ var('payload')}) }}
select id, name, amount, ts from {{ ref('raw') }} where batch = {{ var('batch') }}
"""


def test_a_models_payload_class_is_the_tables_merge_mode(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    dbt_project.write("models/partial.sql", MODEL)
    report = dbt_project.run(
        [
            ["seed"],
            ["run", "--vars", "{batch: 1, payload: PartialUpdateAvroPayload}"],
            ["run", "--vars", "{batch: 2, payload: PartialUpdateAvroPayload}"],
            ["run", "--vars", "{batch: 2, payload: OverwriteWithLatestAvroPayload}"],
        ],
        tables=["partial"],
    )
    outcomes = [c["success"] for c in report["commands"]]
    assert outcomes == [True, True, True, False], report["commands"]
    assert "merge mode" in report["commands"][3]["error"]
    props = P.loads((dbt_project.lake / "partial" / ".hoodie" / "hoodie.properties").read_text())
    assert props[P.PAYLOAD_CLASS].endswith(".PartialUpdateAvroPayload")
    rows = sorted(report["tables"]["partial"]["rows"], key=lambda r: r["id"])
    # what Apache Hudi 1.2 reads for the same writes (runs/merge-*.txt)
    assert [(r["id"], r["ts"], r["name"], r["amount"]) for r in rows] == [
        (1, 5, "a1", 10),
        (2, 7, "b1", 21),
    ]

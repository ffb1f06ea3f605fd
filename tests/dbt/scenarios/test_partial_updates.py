"""`merge_update_columns` and `merge_exclude_columns` (design: incremental-pipelines.md 3.2,
D6) on cow_upsert, mor_upsert and materialized='incremental', file_format='hudi' models, in one
dbt invocation (names matched without case): a stored key whose new row wins takes the listed
columns (or all but the excluded ones) and the ordering column, keeps the rest; a stale row
loses whole; a new key is inserted whole."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

SEED = """\
id,name,amount,ts,batch
1,a1,10,5,1
2,b1,20,5,1
1,x,11,7,2
2,y,21,3,2
3,c,30,1,2
"""
SEED_CONFIG = """\
seeds:
  - name: raw
    config:
      column_types: {id: int, name: string, amount: int, ts: bigint, batch: int}
"""
ROWS = "select id, name, amount, ts from {{ ref('raw') }} where batch = {{ var('batch') }}\n"
MODELS = {
    "cow_update": "materialized='cow_upsert', merge_update_columns=['amount']",
    "mor_exclude": "materialized='mor_upsert', merge_exclude_columns=['NAME']",
    "inc_mor_update": "materialized='incremental', file_format='hudi', table_type='mor', "
    "merge_update_columns=['Amount']",
}


def test_merge_update_and_exclude_columns_update_part_of_a_row(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    for name, config in MODELS.items():
        dbt_project.write(
            f"models/{name}.sql",
            f"{{{{ config({config}, record_key='id', precombine_field='ts') }}}}\n{ROWS}",
        )
    report = dbt_project.run(
        [["seed"], ["run", "--vars", "{batch: 1}"], ["run", "--vars", "{batch: 2}"]],
        tables=list(MODELS),
    )
    assert [c["success"] for c in report["commands"]] == [True] * 3, report["commands"]
    for name in MODELS:
        rows = sorted((r["id"], r["ts"], r["name"], r["amount"])
                      for r in report["tables"][name]["rows"])  # fmt: skip
        # 1: newer, amount and ts taken, name kept; 2: stale, unchanged; 3: new, whole
        assert rows == [(1, 7, "a1", 11), (2, 5, "b1", 20), (3, 1, "c", 30)], name

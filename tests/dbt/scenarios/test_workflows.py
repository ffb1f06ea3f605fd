"""Everyday dbt workflows on lake tables, in one dbt process: several lake models built at once
with --threads 4, schema changes through on_schema_change, persist_docs, table properties set
by ALTER TABLE between runs, and docs generate with the tables' Hudi facts."""

from __future__ import annotations

import json
from datetime import datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

SEED = """\
id,grp,amount,day,batch
1,a,10,2026-11-01,1
2,b,20,2026-11-02,1
3,a,30,2026-11-01,1
2,b,25,2026-11-02,2
4,c,40,2026-11-03,2
"""

LAKE = """\
{{{{ config(materialized='{materialized}', record_key='id', partition_path='day') }}}}
select id, grp, amount, day from {{{{ ref('raw') }}}} where batch = {{{{ var('batch') }}}}
"""

# Batch 2 widens amount (int -> bigint) and adds a column.
APPENDING = """\
{{ config(materialized='cow_upsert', record_key='id', on_schema_change='append_new_columns') }}
{% if var('batch') == 1 %}
select id, grp, amount from {{ ref('raw') }} where batch = 1
{% else %}
select id, grp, cast(amount as bigint) as amount, concat('note ', id) as note
from {{ ref('raw') }} where batch = 2
{% endif %}
"""

# Batch 2 drops grp: the table's schema loses it. With no small-file filling the update of
# id 2 goes to a log file written with the new schema.
SYNCING = """\
{{ config(materialized='mor_upsert', record_key='id', on_schema_change='sync_all_columns',
          options={'hoodie.parquet.small.file.limit': '0'}) }}
{% if var('batch') == 1 %}
select id, grp, amount from {{ ref('raw') }} where batch = 1
{% else %}
select id, amount * 2 as amount from {{ ref('raw') }} where batch = 2
{% endif %}
"""

FAILING = """\
{{ config(materialized='cow_upsert', record_key='id', on_schema_change='fail') }}
select id, amount{% if var('batch') == 2 %}, grp{% endif %} from {{ ref('raw') }}
where batch = 1
"""

# A plain lake model whose catalog entry gets a Hudi read option as a table property.
PROPERTIED = """\
{{ config(materialized='cow_upsert', record_key='id') }}
select id from {{ ref('raw') }} where batch = {{ var('batch') }}
"""

# Between the runs, as a hook or run-operation would: a write option and a property of the
# team's on `documented` (taken by its next write; kept), a read option on `propertied`
# (refused: no write takes it).
SET_PROPERTIES = """\
{% macro set_properties() %}
  {% do run_query("alter table " ~ target.schema ~ ".documented set tblproperties "
                  ~ "('hoodie.parquet.compression.codec' = 'gzip', 'team' = 'payments')") %}
  {% do run_query("alter table " ~ target.schema ~ ".propertied set tblproperties "
                  ~ "('hoodie.datasource.query.type' = 'read_optimized')") %}
{% endmacro %}
"""

DOCS = """\
version: 2
models:
  - name: documented
    description: "Payments by day, as a Hudi copy-on-write table"
    config:
      persist_docs: {relation: true, columns: true}
    columns:
      - name: id
        description: "The payment's id (the record key)"
      - name: amount
        description: "Amount in cents; it's never negative"
      - name: not_a_column
        description: "Documented but not selected: ignored"
"""


def _execute_window(timing: list[dict]) -> tuple[datetime, datetime]:
    step = next(t for t in timing if t["name"] == "execute")
    return datetime.fromisoformat(step["started_at"]), datetime.fromisoformat(step["completed_at"])


def _hudi_rs(path) -> list[dict]:
    hudi = pytest.importorskip("hudi")
    tables = [pa.Table.from_batches([b]) for b in hudi.HudiTable(str(path)).read()]
    rows = pa.concat_tables(tables, promote_options="permissive").to_pylist()
    return sorted(rows, key=lambda r: r["id"])


def test_threads_schema_changes_and_docs(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("models/documented.sql", LAKE.format(materialized="cow_upsert"))
    dbt_project.write("models/merged.sql", LAKE.format(materialized="mor_upsert"))
    dbt_project.write("models/appending.sql", APPENDING)
    dbt_project.write("models/syncing.sql", SYNCING)
    dbt_project.write("models/failing.sql", FAILING)
    dbt_project.write("models/schema.yml", DOCS)
    dbt_project.write("models/propertied.sql", PROPERTIED)
    dbt_project.write("macros/set_properties.sql", SET_PROPERTIES)
    lake = ["documented", "merged", "appending", "syncing", "failing", "propertied"]
    report = dbt_project.run(
        [
            ["seed"],
            ["run", "--threads", "4", "--vars", "{batch: 1}"],
            ["run-operation", "set_properties"],
            ["run", "--threads", "4", "--vars", "{batch: 2}"],
            ["docs", "generate"],
        ],
        tables=lake,
    )
    seed, first, altered, second, docs = report["commands"]
    assert seed["success"] and first["success"] and docs["success"], report["commands"]
    assert altered["success"], altered

    # Threads: the lake models of one run were written at the same time, each correctly.
    windows = [_execute_window(t) for name, t in first["timings"].items() if name in lake]
    assert len(windows) == len(lake)
    assert any(
        a[0] < b[1] and b[0] < a[1] for i, a in enumerate(windows) for b in windows[i + 1 :]
    ), "no two lake models ran at once with --threads 4"
    tables = report["tables"]
    for name in ("documented", "merged"):
        rows = sorted(tables[name]["rows"], key=lambda r: r["id"])
        assert [(r["id"], r["amount"]) for r in rows] == [(1, 10), (2, 25), (3, 30), (4, 40)]

    # on_schema_change='fail': that model failed, naming the difference.
    assert not second["success"]
    failed = " ".join(second["messages"])
    assert "Model 'failing'" in failed and "new columns grp (string)" in failed, failed
    # A Hudi read option set on a catalog entry: its next run failed, saying what to do.
    refused = f"{dbt_project.schema}.propertied has table property hoodie.datasource.query.type"
    unset = "UNSET TBLPROPERTIES ('hoodie.datasource.query.type')"
    assert refused in failed and unset in failed, failed
    assert sorted(r["id"] for r in tables["propertied"]["rows"]) == [1, 2, 3]
    assert [r["id"] for r in tables["failing"]["rows"]] != []
    assert "grp" not in tables["failing"]["columns"]

    # append_new_columns + widening: the catalog table shows the new column and type.
    appending = tables["appending"]
    assert appending["types"]["amount"] == "bigint" and appending["types"]["note"] == "string"
    expected = [
        (1, "a", 10, None), (2, "b", 25, "note 2"), (3, "a", 30, None), (4, "c", 40, "note 4"),
    ]  # fmt: skip
    got = sorted((r["id"], r["grp"], r["amount"], r["note"]) for r in appending["rows"])
    assert got == expected
    base = dbt_project.lake
    theirs = [(r["id"], r["grp"], r["amount"], r["note"]) for r in _hudi_rs(base / "appending")]
    assert theirs == expected

    # sync_all_columns on merge-on-read: grp left the table; the update went to a log file.
    syncing = tables["syncing"]
    assert "grp" not in syncing["columns"]
    expected = [(1, 10), (2, 50), (3, 30), (4, 80)]
    assert sorted((r["id"], r["amount"]) for r in syncing["rows"]) == expected
    assert list((base / "syncing").glob("**/.*.log.*"))
    assert [(r["id"], r["amount"]) for r in _hudi_rs(base / "syncing")] == expected

    # The write option set on documented's catalog entry was taken by its second write (the
    # file group of 2026-11-02 rewritten with gzip); the entry, recreated for the comment
    # Spark's ALTER TABLE dropped, kept both properties.
    versions = sorted(
        (base / "documented").glob("*2026-11-02/*.parquet"), key=lambda p: p.name.rsplit("_", 1)[1]
    )  # by the instant that wrote it
    codecs = [pq.ParquetFile(p).metadata.row_group(0).column(0).compression for p in versions]
    assert len(codecs) == 2 and codecs[0] != "GZIP" and codecs[1] == "GZIP", codecs
    documented = tables["documented"]
    properties = documented["properties"]
    assert "hoodie.parquet.compression.codec=gzip" in properties and "team=payments" in properties
    # The log names them, in a line that starts with the model's name as its progress lines do.
    log = (dbt_project.root / "logs" / "dbt.log").read_text()
    assert "Hoodie adapter: documented: write options from the catalog table's properties" in log
    assert "Model 'documented': write options" not in log

    # persist_docs: the table and column comments are in the catalog.
    assert documented["description"] == "Payments by day, as a Hudi copy-on-write table"
    assert documented["comments"]["id"] == "The payment's id (the record key)"
    assert documented["comments"]["amount"] == "Amount in cents; it's never negative"
    assert documented["comments"]["grp"] is None

    # docs generate: lake tables with their columns (no Hudi meta columns, numbered from 0),
    # the table and column comments, and the Hudi facts: rows exact on copy-on-write, an
    # estimate with the log file pending compaction on merge-on-read.
    catalog = json.loads((dbt_project.root / "target" / "catalog.json").read_text())
    nodes = {key.split(".")[-1]: node for key, node in catalog["nodes"].items()}
    for name, table_type in (("documented", "COPY_ON_WRITE"), ("merged", "MERGE_ON_READ")):
        node = nodes[name]
        assert list(node["columns"]) == ["id", "grp", "amount", "day"], node["columns"]
        assert [c["index"] for c in node["columns"].values()] == [0, 1, 2, 3], node["columns"]
        assert node["metadata"]["type"] == "table"
        stats = node["stats"]
        assert stats["hoodie_table_type"]["value"] == table_type
        assert stats["hoodie_record_key"]["value"] == "id"
        assert stats["hoodie_partition_path"]["value"] == "day"
        assert stats["bytes"]["value"] > 0 and stats["has_stats"]["value"] is True
        assert " UTC (" in stats["hoodie_latest_commit"]["value"]
    assert nodes["documented"]["metadata"]["comment"] == documented["description"]
    assert {name: c["comment"] for name, c in nodes["documented"]["columns"].items()} == {
        "id": "The payment's id (the record key)", "grp": None,
        "amount": "Amount in cents; it's never negative", "day": None,
    }  # fmt: skip
    assert nodes["documented"]["stats"]["rows"]["value"] == 4
    assert nodes["documented"]["stats"]["hoodie_files"]["value"] == "3 base files"
    merged = nodes["merged"]["stats"]
    estimate = "~4 (base files; 1 log file pending compaction)"
    assert merged["hoodie_rows_estimate"]["value"] == estimate, merged
    assert merged["hoodie_pending_compactions"]["value"] == 0
    assert list(nodes["appending"]["columns"]) == ["id", "grp", "amount", "note"]

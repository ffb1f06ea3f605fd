"""`dbt run` of cow_upsert models, twice, checked through Spark, the files and hudi-rs."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

pytestmark = pytest.mark.slow

SEED = """\
id,name,amount,ts,day,batch,deleted
1,alice,10.00,1,2026-11-01,1,false
2,bob,20.00,1,2026-11-01,1,false
3,carol,30.00,1,2026-11-02,1,false
4,dave,40.00,1,2026-11-02,1,false
2,bob,21.00,2,2026-11-01,2,false
3,carol,0.00,2,2026-11-02,2,true
4,dave,39.00,0,2026-11-02,2,false
5,erin,50.00,2,2026-11-03,2,false
"""

SEED_CONFIG = """\
seeds:
  - name: raw
    config:
      column_types: {id: int, amount: 'decimal(10,2)', ts: bigint, day: date, batch: int,
                     deleted: boolean}
"""

PARTITIONED = """\
{{ config(materialized='cow_upsert', record_key='id', partition_path='day',
          precombine_field='ts') }}
select id, name, amount, ts, day, deleted as _hoodie_is_deleted,
       {{ 'true' if is_incremental() else 'false' }} as was_incremental
from {{ ref('raw') }} where batch = {{ var('batch') }}
"""

# dbt's own spellings of the configs: unique_key and partition_by.
UNPARTITIONED = """\
{{ config(materialized='cow_upsert', unique_key='name') }}
select name, count(*) as versions from {{ ref('raw') }}
where batch <= {{ var('batch') }} group by name
"""

# An append-only model that keeps each id's first version: every run selects all batches so
# far, and the insert skips the ids earlier runs wrote (dup policy drop).
FIRST_SEEN = """\
{{ config(materialized='cow_upsert', record_key='id', partition_path='day',
          precombine_field='ts',
          options={'hoodie.datasource.write.operation': 'insert',
                   'hoodie.datasource.insert.dup.policy': 'drop'}) }}
select id, name, ts, day from {{ ref('raw') }} where batch <= {{ var('batch') }}
"""


# A plain dbt-spark `table` model: shows dbt-spark's materializations still work, and what
# dbt's column introspection sees of the lake table.
COLUMNS = """\
-- depends_on: {{ ref('payments') }}
{{ config(materialized='table') }}
{% set cols = adapter.get_columns_in_relation(ref('payments')) if execute else [] %}
select '{{ cols | map(attribute="name") | join(",") }}' as names
"""


def _rows(report, table, key):
    return sorted(report["tables"][table]["rows"], key=lambda r: r[key])


def test_cow_upsert_model_runs_twice(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    dbt_project.write("models/payments.sql", PARTITIONED)
    custom_root = dbt_project.root / "custom_lake"
    dbt_project.write(
        "models/names.sql",
        UNPARTITIONED.replace(
            "unique_key='name'", f"unique_key='name', location_root='{custom_root}'"
        ),
    )
    dbt_project.write("models/payment_columns.sql", COLUMNS)
    dbt_project.write("models/first_seen.sql", FIRST_SEEN)
    report = dbt_project.run(
        [
            ["seed"],
            ["run", "--vars", "{batch: 1}"],
            ["run", "--vars", "{batch: 2}"],
            ["run-operation", "hoodie_timeline", "--args", "{model: payments}"],
        ],
        tables=["payments", "names", "payment_columns", "first_seen"],
    )
    for command in report["commands"]:
        assert command["success"], command
    second_run = report["commands"][2]["messages"]
    assert any("1 inserted, 1 updated, 1 deleted" in m for m in second_run), second_run

    payments = _rows(report, "payments", "id")
    assert [(r["id"], r["name"], r["ts"]) for r in payments] == [
        (1, "alice", 1),  # untouched
        (2, "bob", 2),  # updated by the newer ts
        (4, "dave", 1),  # the stale (ts=0) version lost to the stored row
        (5, "erin", 2),  # inserted
    ]  # 3 was deleted
    assert Decimal(str(payments[1]["amount"])) == Decimal("21.00")
    # is_incremental() is false on the first run and true on the second.
    assert {r["id"]: r["was_incremental"] for r in payments} == {
        1: False, 2: True, 4: False, 5: True,
    }  # fmt: skip
    # Hudi's meta columns are in the table (as with Hudi's own Spark reader).
    assert report["tables"]["payments"]["columns"][:2] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
    ]
    introspected = report["tables"]["payment_columns"]["rows"][0]["names"]
    assert introspected == "id,name,amount,ts,day,_hoodie_is_deleted,was_incremental"
    names = _rows(report, "names", "name")
    assert [(r["name"], r["versions"]) for r in names] == [
        ("alice", 1), ("bob", 2), ("carol", 2), ("dave", 2), ("erin", 1),
    ]  # fmt: skip

    first_seen = _rows(report, "first_seen", "id")
    assert [(r["id"], r["name"], r["ts"]) for r in first_seen] == [
        (1, "alice", 1), (2, "bob", 1), (3, "carol", 1), (4, "dave", 1), (5, "erin", 2),
    ]  # fmt: skip

    # location_root puts the table at <location_root>/<alias>.
    assert (custom_root / "names" / ".hoodie" / "hoodie.properties").is_file()
    assert not (dbt_project.lake / "names").exists()

    # On disk: a real Hudi table under <warehouse>/<schema>.db/<alias>, read by hudi-rs.
    base = dbt_project.lake / "payments"
    commits = sorted(p.name for p in (base / ".hoodie").glob("*.commit"))
    assert len(commits) == 2
    assert sorted(p.name for p in base.iterdir() if not p.name.startswith(".")) == [
        "2026-11-01", "2026-11-02", "2026-11-03",
    ]  # fmt: skip
    hudi = pytest.importorskip("hudi")
    table = pa.Table.from_batches(hudi.HudiTable(str(base)).read())
    assert sorted(zip(table["id"].to_pylist(), table["ts"].to_pylist())) == [
        (1, 1), (2, 2), (4, 1), (5, 2),
    ]  # fmt: skip


def test_bad_configs_fail_with_clear_errors(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    dbt_project.write(
        "models/no_key.sql",
        "{{ config(materialized='cow_upsert') }} select 1 as id",
    )
    dbt_project.write(
        "models/missing_column.sql",
        "{{ config(materialized='cow_upsert', record_key='txn_id') }} select 1 as id",
    )
    dbt_project.write(
        "models/conflicting.sql",
        "{{ config(materialized='cow_upsert', record_key='id', unique_key='other') }} "
        "select 1 as id, 2 as other",
    )
    dbt_project.write(
        "models/bad_option.sql",
        "{{ config(materialized='cow_upsert', record_key='id', "
        "options={'hoodie.parquet.max.fil.size': '10'}) }} select 1 as id",
    )
    dbt_project.write(
        "models/null_keys.sql",
        "{{ config(materialized='cow_upsert', record_key='id') }} "
        "select cast(null as int) as id union all select 1 as id",
    )
    dbt_project.write(
        "models/float_key.sql",
        "{{ config(materialized='cow_upsert', record_key='price') }} select 1.5d as price",
    )
    # mor_upsert's compaction configs (one dbt process for all bad configs keeps this fast).
    dbt_project.write(
        "models/cow_with_compaction.sql",
        "{{ config(materialized='cow_upsert', record_key='id', compaction='off') }} select 1 as id",
    )
    dbt_project.write(
        "models/bad_switch.sql",
        "{{ config(materialized='mor_upsert', record_key='id', compaction='sometimes') }} "
        "select 1 as id",
    )
    dbt_project.write(
        "models/bad_count.sql",
        "{{ config(materialized='mor_upsert', record_key='id', compaction_delta_commits=0) }} "
        "select 1 as id",
    )
    dbt_project.write(
        "models/bad_schema_change.sql",
        "{{ config(materialized='cow_upsert', record_key='id', on_schema_change='merge') }} "
        "select 1 as id",
    )
    report = dbt_project.run([["run"], ["run-operation", "hoodie_compact", "--args",
                                        "{model: bad_count}"]])  # fmt: skip
    messages = " ".join(report["commands"][0]["messages"])
    assert "Model 'cow_with_compaction'" in messages and "mor_upsert' only" in messages
    assert "compaction must be 'inline'" in messages and "'sometimes'" in messages
    assert "compaction_delta_commits must be a positive integer" in messages
    assert not report["commands"][1]["success"]
    assert "Model 'no_key'" in messages and "record_key" in messages
    assert "column 'txn_id'" in messages
    assert "unique_key='other'" in messages and "record_key='id'" in messages
    assert "unknown option 'hoodie.parquet.max.fil.size'" in messages
    assert "hoodie.parquet.max.file.size" in messages  # the list of supported options
    # (A first write is a bulk insert: its null-key check stops at the first such row.)
    assert "a row has a null or empty record key (column 'id'); nothing was written" in messages
    assert "Model 'float_key': table 'float_key': the record key column 'price' is double" in (
        messages
    )
    assert "Model 'bad_schema_change': on_schema_change must be one of ignore, " in messages
    # Nothing was half-written: the failed models left no completed instant behind.
    lake = dbt_project.lake
    for model in ("missing_column", "null_keys"):
        assert not list((lake / model / ".hoodie").glob("*.commit"))
        assert not list((lake / model).glob("**/*.parquet"))
    # A first run refused for its columns creates no table, so a corrected config is no
    # change of the table's keys.
    for model in ("missing_column", "float_key"):
        assert not (lake / model).exists()


def test_full_refresh_replaces_contents_and_keeps_history(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    dbt_project.write("models/payments.sql", PARTITIONED)
    report = dbt_project.run(
        [
            ["seed"],
            ["run", "--vars", "{batch: 1}"],
            ["run", "--full-refresh", "--vars", "{batch: 2}"],
        ],
        tables=["payments"],
    )
    assert [c["success"] for c in report["commands"]] == [True, True, True], report["commands"]
    rows = _rows(report, "payments", "id")
    # Only batch 2's rows (the delete of 3 has nothing to delete in a fresh table).
    assert [(r["id"], r["ts"], r["was_incremental"]) for r in rows] == [
        (2, 2, False), (4, 0, False), (5, 2, False),
    ]  # fmt: skip
    hoodie_dir = dbt_project.lake / "payments" / ".hoodie"
    assert len(list(hoodie_dir.glob("*.commit"))) == 1
    assert len(list(hoodie_dir.glob("*.replacecommit"))) == 1

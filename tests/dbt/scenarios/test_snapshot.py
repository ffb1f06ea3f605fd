"""`dbt snapshot` into Hudi copy-on-write tables: three runs of three snapshots (timestamp,
check with invalidated hard deletes, timestamp with new_record hard deletes and renamed meta
columns), a fourth run after the catalog lost a table, and the configs a snapshot refuses.

One dbt process runs everything: each process costs a JVM start.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

pytestmark = pytest.mark.slow

# Three batches of the same source; the snapshot of batch N sees only rows of batch N.
SEED = """\
id,name,updated_at,batch
1,alice,2026-01-01 00:00:00,1
2,bob,2026-01-01 00:00:00,1
3,carol,2026-01-01 00:00:00,1
1,alice,2026-01-01 00:00:00,2
2,bobby,2026-01-02 00:00:00,2
3,carol,2026-01-01 00:00:00,2
4,dave,2026-01-02 00:00:00,2
1,alice,2026-01-01 00:00:00,3
2,bobby,2026-01-02 00:00:00,3
4,david,2026-01-03 00:00:00,3
5,erin,2026-01-03 00:00:00,3
"""

SEED_CONFIG = """\
seeds:
  - name: raw
    config:
      column_types: {id: int, updated_at: timestamp, batch: int}
"""

SOURCE = "select id, name, updated_at from {{ ref('raw') }} where batch = {{ var('batch') }}"
# ts_snap's source gains a column in batch 3.
WIDER = SOURCE.replace(
    "updated_at from", "updated_at{% if var('batch') >= 3 %}, upper(name) as shout{% endif %} from"
)


def _snapshot(name: str, config: str) -> str:
    source = WIDER if name == "ts_snap" else SOURCE
    return f"{{% snapshot {name} %}}\n{{{{ config({config}) }}}}\n{source}\n{{% endsnapshot %}}\n"


SNAPSHOTS = {
    "ts_snap": "strategy='timestamp', unique_key='id', updated_at='updated_at'",
    "check_snap": "strategy='check', unique_key='id', check_cols=['name'], "
    "hard_deletes='invalidate'",
    "nr_snap": "strategy='timestamp', unique_key='id', updated_at='updated_at', "
    "hard_deletes='new_record', dbt_valid_to_current=\"to_timestamp('9999-12-31')\", "
    "snapshot_meta_column_names={'dbt_scd_id': 'version_id', 'dbt_valid_to': 'valid_until', "
    "'dbt_is_deleted': 'gone'}",
    "bad_format": "strategy='timestamp', unique_key='id', updated_at='updated_at', "
    "file_format='delta'",
    "bad_partition": "strategy='timestamp', unique_key='id', updated_at='updated_at', "
    "partition_by='name'",
}
GOOD = ["ts_snap", "check_snap", "nr_snap"]

DROP_TABLE = """\
{% macro drop_catalog_table(name) %}
  {% do run_query('drop table ' ~ target.schema ~ '.' ~ name) %}
{% endmacro %}
"""

T1, T2, T3 = "2026-01-01 00:00:00", "2026-01-02 00:00:00", "2026-01-03 00:00:00"
FOREVER = "9999-12-31 00:00:00"


def _versions(report, table: str, valid_to: str = "dbt_valid_to") -> list[dict]:
    rows = report["tables"][table]["rows"]
    return sorted(rows, key=lambda r: (r["id"], r["dbt_valid_from"], r[valid_to] or "~"))


def test_snapshots_keep_history_in_a_hudi_table(dbt_project):
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    dbt_project.write("macros/drop_catalog_table.sql", DROP_TABLE)
    for name, config in SNAPSHOTS.items():
        dbt_project.write(f"snapshots/{name}.sql", _snapshot(name, config))
    good = ["--select", *GOOD]
    report = dbt_project.run(
        [
            ["seed"],
            ["snapshot", *good, "--vars", "{batch: 1}"],
            ["snapshot", *good, "--vars", "{batch: 2}"],
            ["snapshot", *good, "--vars", "{batch: 3}"],
            # The catalog forgets ts_snap; its lake files are its history and are merged into.
            ["run-operation", "drop_catalog_table", "--args", "{name: ts_snap}"],
            ["snapshot", *good, "--vars", "{batch: 3}"],
            ["snapshot", "--select", "bad_format", "bad_partition", "--vars", "{batch: 1}"],
        ],
        tables=GOOD,
    )
    *runs, refused = report["commands"]
    for command in runs:
        assert command["success"], command
    assert any("3 new version(s), 0 closed" in m for m in runs[1]["messages"]), runs[1]
    assert any("2 new version(s), 1 closed" in m for m in runs[2]["messages"]), runs[2]
    # The fourth run saw nothing new, in the re-registered table too.
    assert all("0 new version(s), 0 closed" in m for m in runs[5]["messages"]), runs[5]

    # timestamp: a change closes the stored version at the new version's updated_at; rows
    # that did not change, and the hard-deleted 3 (hard_deletes defaults to ignore), stay.
    ts = _versions(report, "ts_snap")
    assert [(r["id"], r["name"], r["dbt_valid_from"], r["dbt_valid_to"]) for r in ts] == [
        (1, "alice", T1, None),
        (2, "bob", T1, T2),
        (2, "bobby", T2, None),
        (3, "carol", T1, None),
        (4, "dave", T2, T3),
        (4, "david", T3, None),
        (5, "erin", T3, None),
    ]
    assert all(r["dbt_updated_at"] == r["dbt_valid_from"] for r in ts)
    # The column added in batch 3 is in the versions written since; older ones read null.
    assert [r["shout"] for r in ts] == [None, None, None, None, None, "DAVID", "ERIN"]
    assert len({r["dbt_scd_id"] for r in ts}) == len(ts)

    # check (on name): versions start and end at snapshot times; 3 is invalidated, not
    # versioned again, and the closed version ends where its successor starts.
    check = _versions(report, "check_snap")
    assert [(r["id"], r["name"], r["dbt_valid_to"] is None) for r in check] == [
        (1, "alice", True),
        (2, "bob", False),
        (2, "bobby", True),
        (3, "carol", False),
        (4, "dave", False),
        (4, "david", True),
        (5, "erin", True),
    ]
    first_run = check[0]["dbt_valid_from"]
    assert check[1]["dbt_valid_from"] == first_run < check[1]["dbt_valid_to"]
    assert check[1]["dbt_valid_to"] == check[2]["dbt_valid_from"]  # 2 changed in run 2
    assert check[3]["dbt_valid_to"] == check[5]["dbt_valid_from"]  # 3 gone in run 3
    assert check[0]["dbt_valid_from"] == first_run  # untouched since run 1

    # new_record, with renamed columns and a far-future end for current versions: the hard
    # delete of 3 closes its version and adds a deletion record.
    nr = _versions(report, "nr_snap", valid_to="valid_until")
    assert "dbt_scd_id" not in nr[0] and "dbt_valid_to" not in nr[0]
    assert [(r["id"], r["name"], r["gone"]) for r in nr] == [
        (1, "alice", "False"),
        (2, "bob", "False"),
        (2, "bobby", "False"),
        (3, "carol", "False"),
        (3, "carol", "True"),
        (4, "dave", "False"),
        (4, "david", "False"),
        (5, "erin", "False"),
    ]
    assert [r["valid_until"] for r in nr if r["id"] in (1, 2)] == [FOREVER, T2, FOREVER]
    assert nr[3]["valid_until"] == nr[4]["dbt_valid_from"] not in (None, FOREVER)
    assert nr[4]["valid_until"] == FOREVER

    # Refused configs name the snapshot and the option.
    assert not refused["success"]
    messages = " ".join(refused["messages"])
    assert "Snapshot 'bad_format': file_format='delta' is not supported" in messages
    assert "Snapshot 'bad_partition': partition_by='name' does not apply" in messages

    # On disk: Hudi copy-on-write tables keyed by the scd id column, which hudi-rs reads.
    lake = dbt_project.lake
    for name, key in (("ts_snap", "dbt_scd_id"), ("check_snap", "dbt_scd_id"),
                      ("nr_snap", "version_id")):  # fmt: skip
        properties = (lake / name / ".hoodie" / "hoodie.properties").read_text()
        assert "hoodie.table.type=COPY_ON_WRITE" in properties, name
        assert f"hoodie.table.recordkey.fields={key}" in properties, name
    assert not (lake / "bad_format").exists() and not (lake / "bad_partition").exists()
    hudi = pytest.importorskip("hudi")
    read = pa.Table.from_batches(hudi.HudiTable(str(lake / "ts_snap")).read())
    theirs = sorted(zip(read["dbt_scd_id"].to_pylist(), read["name"].to_pylist(),
                        [v is None for v in read["dbt_valid_to"].to_pylist()]))  # fmt: skip
    assert theirs == sorted((r["dbt_scd_id"], r["name"], r["dbt_valid_to"] is None) for r in ts)
    # Alice's version was written by the first commit and never rewritten as a change since.
    commits = sorted(p.name.split(".")[0] for p in (lake / "ts_snap" / ".hoodie").glob("*.commit"))
    alice = read.filter(pc.equal(read["name"], "alice"))
    assert alice["_hoodie_commit_time"].to_pylist() == [commits[0]]

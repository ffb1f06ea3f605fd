"""`dbt run` of a mor_upsert model through several batches, inline and on-demand compaction."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hoodie import HoodieTable
from hoodie.index.bucket import bucket_of_file_id
from hoodie.naming import parse_log_file_name
from hoodie.timeline import Action

pytestmark = pytest.mark.slow

SEED = """\
id,name,ts,day,batch,deleted
1,alice,1,2026-11-01,1,false
2,bob,1,2026-11-01,1,false
3,carol,1,2026-11-02,1,false
2,bob-2,2,2026-11-01,2,false
3,carol,2,2026-11-02,2,true
1,alice-3,3,2026-11-01,3,false
4,dave,3,2026-11-02,3,false
2,bob-stale,0,2026-11-01,4,false
4,dave-4,4,2026-11-02,4,false
3,carol-again,4,2026-11-02,4,false
"""

SEED_CONFIG = """\
seeds:
  - name: raw
    config:
      column_types: {id: int, ts: bigint, day: date, batch: int, deleted: boolean}
"""

MODEL = """\
{{ config(materialized='mor_upsert', record_key='id', partition_path='day',
          precombine_field='ts', compaction_delta_commits=3) }}
select id, name, ts, day, deleted as _hoodie_is_deleted
from {{ ref('raw') }} where batch = {{ var('batch') }}
"""

BUCKET_MODEL = """\
{{ config(materialized='mor_upsert', options={
     'hoodie.datasource.write.recordkey.field': 'id',
     'hoodie.datasource.write.partitionpath.field': 'day',
     'hoodie.datasource.write.precombine.field': 'ts',
     'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
     'hoodie.index.type': 'BUCKET', 'hoodie.bucket.index.num.buckets': '2'}) }}
select id, name, ts, day, deleted as _hoodie_is_deleted
from {{ ref('raw') }} where batch = {{ var('batch') }}
"""

# Expected rows after each batch: id -> (name, ts).
AFTER = {
    1: {1: ("alice", 1), 2: ("bob", 1), 3: ("carol", 1)},
    2: {1: ("alice", 1), 2: ("bob-2", 2)},
    3: {1: ("alice-3", 3), 2: ("bob-2", 2), 4: ("dave", 3)},
    4: {1: ("alice-3", 3), 2: ("bob-2", 2), 3: ("carol-again", 4), 4: ("dave-4", 4)},
}


def _data_log_files(base):
    """The table's log files, less its metadata table's (`.hoodie/metadata`, kept by default
    on version 8 tables)."""
    return [p for p in base.rglob(".*.log.*") if ".hoodie" not in p.relative_to(base).parts]


def _version(version: int) -> str:
    return f"options={{'hoodie.write.table.version': '{version}'}}"


def _hudi_rs(base: Path, read_optimized: bool = False) -> dict:
    hudi = pytest.importorskip("hudi")
    options = hudi.HudiReadOptions()
    if read_optimized:
        options = options.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    batches = hudi.HudiTable(str(base)).read(options)
    table = pa.Table.from_batches(batches)
    return {
        i: (n, t)
        for i, n, t in zip(
            table["id"].to_pylist(), table["name"].to_pylist(), table["ts"].to_pylist()
        )  # fmt: skip
    }


@pytest.mark.parametrize(
    "version",
    [
        pytest.param(6, id="table-version-6"),
        pytest.param(8, id="table-version-8", marks=pytest.mark.dbt_full),
    ],
)
def test_mor_upsert_batches_compaction_and_table_operations(request, dbt_project, version):
    """Two models in one dbt process (one JVM): `orders` through four batches with inline and
    on-demand compaction; `orders_ops` through savepoint, rollback, restore and clean. Both
    table versions we write (README: "Compatibility"); version 8 in-process only (the
    Connect variant runs the same writes through another session), in `make test-dbt` (marker
    `dbt_full`): the models and operations are the same for both versions, `make test` writes
    version 8 through dbt in test_table_version_8.py, and runs each of these table services
    on a version 8 merge-on-read table in tests/interop/test_metadata_table_files.py."""
    if version != 6 and request.node.callspec.params["dbt_project"] != "session":
        pytest.skip("table version 8 runs in-process only")
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("seeds/schema.yml", SEED_CONFIG)
    model = MODEL
    bucket_model = BUCKET_MODEL
    if version != 6:
        model = MODEL.replace(
            "compaction_delta_commits=3", f"compaction_delta_commits=3, {_version(version)}"
        )
        bucket_model = BUCKET_MODEL.replace(
            "options={", f"options={{'hoodie.write.table.version': '{version}', "
        )
    dbt_project.write("models/orders.sql", model)
    dbt_project.write(
        "models/orders_ops.sql", model.replace("compaction_delta_commits=3", "compaction='off'")
    )
    # The BUCKET index: merge-on-read writes are one Spark job (hoodie/write/bucket_writer.py).
    # This model names its table's identity with Apache Hudi's own option keys, as a config
    # brought from a Hudi job does, instead of record_key / partition_path / precombine_field.
    dbt_project.write("models/orders_bucket.sql", bucket_model)

    def run(batch, model):
        return ["run", "--select", model, "--vars", f"{{batch: {batch}}}"]

    def operation(name, args="{model: orders_ops}"):
        return ["run-operation", name, "--args", args]

    commands = [
        ["seed"],
        run(1, "orders"),
        run(2, "orders"),
        run(3, "orders"),  # 3rd delta commit: inline compaction (compaction_delta_commits=3)
        run(4, "orders"),
        # on demand, as Apache Hudi's async compaction: a plan, then a run of pending plans
        operation("hoodie_compact", "{model: orders, mode: schedule}"),
        operation("hoodie_compact", "{model: orders, mode: run_pending}"),
        operation("hoodie_cluster", "{model: orders}"),  # the same rows, in new file groups
        operation("hoodie_timeline", "{model: orders}"),
        run(1, "orders_ops"),
        operation("hoodie_savepoint"),
        run(2, "orders_ops"),
        operation("hoodie_rollback"),
        run(2, "orders_ops"),
        run(3, "orders_ops"),
        operation("hoodie_restore"),
        operation("hoodie_clean"),
        operation("hoodie_rollback", "{model: orders_ops, instant: '1'}"),
        *[run(batch, "orders_bucket") for batch in (1, 2, 3, 4)],
    ]
    tables = ["orders", "orders_ops", "orders_bucket"]
    report = dbt_project.run(commands, tables=tables)
    outcomes = [c["success"] for c in report["commands"]]
    assert outcomes == [True] * 17 + [False] + [True] * 4, report["commands"]
    assert any("compaction" in m for m in report["commands"][3]["messages"])

    # orders: the four batches, compacted.
    rows = {r["id"]: (r["name"], r["ts"]) for r in report["tables"]["orders"]["rows"]}
    assert rows == AFTER[4]
    base = dbt_project.lake / "orders"
    table = HoodieTable.open(str(base))
    assert table.properties.table_type == "MERGE_ON_READ"
    actions = [i.action for i in table.timeline().completed]
    # 3 delta commits, the inline compaction, the 4th delta commit, the on-demand compaction
    # (scheduled by one operation, executed by the next), the on-demand clustering
    # (hoodie_cluster: the same rows in new file groups).
    assert actions == [Action.DELTA_COMMIT] * 3 + [
        Action.COMMIT, Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT
    ]  # fmt: skip
    # Other Hudi readers see the same rows (hudi-rs drops the groups clustering replaced);
    # after the last compaction the base files hold all.
    assert _hudi_rs(base) == AFTER[4]
    assert _hudi_rs(base, read_optimized=True) == AFTER[4]
    assert any(parse_log_file_name(p.name) for p in _data_log_files(base))

    # orders_ops: batch 2 was rolled back, batches 2 and 3 then undone by the restore to the
    # savepoint of batch 1; the savepointed commit cannot be rolled back on its own.
    assert "savepointed" in report["commands"][17]["error"]
    rows = {r["id"]: (r["name"], r["ts"]) for r in report["tables"]["orders_ops"]["rows"]}
    assert rows == AFTER[1]
    base = dbt_project.lake / "orders_ops"
    assert _hudi_rs(base) == AFTER[1]
    table = HoodieTable.open(str(base))
    assert [i.action for i in table.timeline()] == [
        Action.DELTA_COMMIT, Action.SAVEPOINT, Action.ROLLBACK, Action.RESTORE,
    ]  # fmt: skip
    assert not list(_data_log_files(base))  # the rolled-back log files are gone

    # orders_bucket: the same batches through the BUCKET index, no compaction in between
    # (the default trigger is 5 delta commits): bucket file groups, updates in their logs.
    rows = {r["id"]: (r["name"], r["ts"]) for r in report["tables"]["orders_bucket"]["rows"]}
    assert rows == AFTER[4]
    base = dbt_project.lake / "orders_bucket"
    assert _hudi_rs(base) == AFTER[4]
    table = HoodieTable.open(str(base))
    assert [i.action for i in table.timeline().completed] == [Action.DELTA_COMMIT] * 4
    identity = table.properties
    assert (identity.record_key_fields, identity.partition_fields) == (("id",), ("day",))
    assert identity.precombine_field == "ts" and identity.name == "orders_bucket"
    logs = [parse_log_file_name(p.name) for p in _data_log_files(base)]
    assert logs and all(bucket_of_file_id(log.file_id) in (0, 1) for log in logs)
    assert table.properties.table_version == version

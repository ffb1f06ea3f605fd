"""Archival keeps the active timeline bounded; archived commits' files stay readable."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from hoodie import HoodieTable, WriteConfig
from hoodie.read.datasource import register
from hoodie.table_services.archival import archived_instants
from hoodie.timeline import WRITE_ACTIONS

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_old_instants_are_archived_and_their_files_stay_visible(spark, tmp_path, table_type):
    register(spark)
    path = str(tmp_path / "t")
    cfg = WriteConfig.build(
        "archived",
        record_key="id",
        partition_path="dt",
        precombine_field="ts",
        table_type=table_type,
        options={"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                 "hoodie.cleaner.commits.retained": "1"},
    )  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    # Each write touches its own partition, so the first partitions' files are only ever
    # named by commits that end up archived.
    instants = []
    for n in range(6):
        df = spark.createDataFrame([(n, f"n{n}", f"2024-01-0{n + 1}", n)], SCHEMA)
        instants.append(table.upsert(df, cfg).instant)
    active = [i.timestamp for i in table.timeline().completed if i.action in WRITE_ACTIONS]
    assert len(active) <= 3 and active[-1] == instants[-1]
    archived = {a.timestamp for a in archived_instants(table) if a.state == "COMPLETED"}
    assert set(instants) - set(active) <= archived and archived
    assert os.listdir(os.path.join(path, ".hoodie", "archived"))
    # Archiving a compaction takes its `.compaction.*` files too: nothing looks pending.
    assert not list(table.timeline().pending)
    # The timeline operation's rows list archived and active instants, oldest first.
    history = table.history()
    listed = [row["instant"] for row in history if row["action"] in ("commit", "deltacommit")]
    assert set(instants) <= set(listed)
    assert {row["state"] for row in history if row["instant"] == instants[0]} == {
        "COMPLETED (archived)"
    }
    expected = {n: f"n{n}" for n in range(6)}
    got = {r.id: r.name for r in spark.read.format("hoodie").load(path).collect()}
    assert got == expected
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    assert dict(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist())) == expected
    # Time travel to an archived instant names the readable range.
    with pytest.raises(Exception, match="readable range"):
        spark.read.format("hoodie").option("as.of.instant", instants[0]).load(path).collect()

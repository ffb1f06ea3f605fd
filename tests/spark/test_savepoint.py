"""Savepoints pin a snapshot against cleaning; restore brings the table back to it."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from _spark_helpers import all_files, id_dt_ts_config

from hoodie import HoodieTable, WriteConfig
from hoodie.avro_metadata import RestoreMetadata, SavepointMetadata
from hoodie.exceptions import TimelineError
from hoodie.read.datasource import register
from hoodie.timeline import LAYOUT_V1, Action

pytestmark = pytest.mark.spark

A, B = "2024-01-01", "2024-01-02"
SCHEMA = "id int, name string, dt string, ts bigint"


def rows(spark, path) -> dict:
    register(spark)
    return {r.id: r.name for r in spark.read.format("hoodie").load(path).collect()}


@pytest.mark.layout_v6
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_savepoint_survives_cleaning_and_restore_returns_to_it(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config(
        "sp",
        table_type,
        {"hoodie.cleaner.commits.retained": "1", "hoodie.compact.inline": "false"}
        if table_type == "MERGE_ON_READ"
        else {"hoodie.cleaner.commits.retained": "1"},
    )
    table = HoodieTable.for_write(path, cfg)
    first = table.upsert(spark.createDataFrame([(1, "a", A, 1), (2, "b", B, 1)], SCHEMA), cfg)
    saved = table.services.savepoint(comment="before the big change")
    assert (tmp_path / "t" / ".hoodie" / f"{first.instant}.savepoint").is_file()
    meta = SavepointMetadata.from_avro(
        open(os.path.join(path, ".hoodie", f"{first.instant}.savepoint"), "rb").read()
    )
    assert meta.comments == "before the big change" and meta == saved.metadata
    pinned = {
        os.path.join(p, name) for p, m in meta.partition_metadata.items()
        for name in m.savepoint_data_file
    }  # fmt: skip
    assert saved.instant == first.instant and saved.files == len(pinned)  # the latest commit
    table.upsert(spark.createDataFrame([(1, "a2", A, 2), (3, "c", A, 2)], SCHEMA), cfg)
    table.upsert(spark.createDataFrame([(2, "b3", B, 3)], SCHEMA), cfg)
    if table_type == "MERGE_ON_READ":
        table.services.compact(spark, cfg)
        table.upsert(spark.createDataFrame([(1, "a4", A, 4)], SCHEMA), cfg)
    # Cleaning ran after every write with one commit retained, yet the savepoint's files stay.
    assert pinned <= set(all_files(path))
    with pytest.raises(TimelineError, match="savepointed|not the latest"):
        table.services.rollback(first.instant)

    restored = table.services.restore()  # the latest savepoint: the only one, first's
    assert rows(spark, path) == {1: "a", 2: "b"}
    restore_instant = [i for i in table.timeline() if i.action is Action.RESTORE]
    assert len(restore_instant) == 1 and restore_instant[0].is_completed
    meta = RestoreMetadata.from_avro(
        open(os.path.join(path, LAYOUT_V1.path(restore_instant[0])), "rb").read()
    )
    assert meta == restored and first.instant not in meta.instants_to_rollback
    writes = [i.timestamp for i in table.timeline().completed.write_timeline]
    assert writes == [first.instant]
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    assert dict(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist())) == {1: "a", 2: "b"}
    # The table takes writes again.
    table.upsert(spark.createDataFrame([(5, "e", A, 9)], SCHEMA), cfg)
    assert rows(spark, path) == {1: "a", 2: "b", 5: "e"}


def test_savepoint_and_restore_errors(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("sp_errors", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(path, cfg)
    with pytest.raises(TimelineError, match="no completed commit"):
        table.services.savepoint()
    first = table.upsert(spark.createDataFrame([(1, "a", A, 1)], SCHEMA), cfg)
    with pytest.raises(TimelineError, match="not a completed commit"):
        table.services.savepoint("20000101000000000")
    with pytest.raises(TimelineError, match="no savepoint at"):
        table.services.restore(first.instant)
    with pytest.raises(TimelineError, match="table 'sp_errors' has no savepoint to restore"):
        table.services.restore()
    table.services.savepoint()
    with pytest.raises(TimelineError, match="already has a savepoint"):
        table.services.savepoint(first.instant)

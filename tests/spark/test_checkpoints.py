"""Source checkpoints (`transaction/checkpoints.py`): kept in a table's newest write commit,
carried past table services, checked at commit against another write that moved them, and a
source's position never passing a write still pending on a version 6 timeline."""

from __future__ import annotations

import pytest
from _spark_helpers import id_dt_ts_config

from hoodie import HoodieTable
from hoodie.exceptions import MalformedMetadataError
from hoodie.integration import (
    CHECKPOINTS_KEY,
    CheckpointConflictError,
    SourceCheckpoint,
    encode_checkpoints,
    expect_checkpoints,
)
from hoodie.timeline import Action, Instant, State

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"
SOURCE = "/lake/orders"


def _cp(position: str) -> SourceCheckpoint:
    return SourceCheckpoint(position, position, 6)


def test_checkpoints_commit_with_the_data_and_conflict_when_moved(spark, tmp_path):
    cfg = id_dt_ts_config("sink", "MERGE_ON_READ", {"hoodie.compact.inline.max.delta.commits": "2"})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    rows = spark.createDataFrame([(1, "a", "d", 1)], SCHEMA)
    assert table.checkpoints() == {}
    first = {SOURCE: _cp("20260101000000000")}
    table.upsert(rows, extra_metadata={CHECKPOINTS_KEY: encode_checkpoints(first)})
    assert table.checkpoints() == first

    # Two runs read `first`; the one that commits second finds it moved and is undone.
    second = {SOURCE: _cp("20260102000000000")}
    table.upsert(rows, extra_metadata={CHECKPOINTS_KEY: encode_checkpoints(second)},
                 precommit=expect_checkpoints(first))  # fmt: skip
    before = [i.timestamp for i in table.timeline().completed.write_timeline]
    with pytest.raises(CheckpointConflictError, match="another write consumed /lake/orders"):
        table.upsert(spark.createDataFrame([(2, "b", "d", 1)], SCHEMA),
                     extra_metadata={CHECKPOINTS_KEY: encode_checkpoints(second)},
                     precommit=expect_checkpoints(first))  # fmt: skip
    assert [i.timestamp for i in table.timeline().completed.write_timeline] == before
    assert sorted(r["id"] for r in table.read(spark).collect()) == [1]
    # The second delta commit compacted the table: the compaction carries no checkpoint,
    # and the newest write's are still the table's.
    assert any(table.commit_metadata(i).compacted for i in table.timeline().completed)
    assert table.checkpoints() == second

    # A damaged entry is an error naming the commit, never "no checkpoint".
    table.upsert(rows, extra_metadata={CHECKPOINTS_KEY: '{"/lake/orders": {"position": 1}}'})
    with pytest.raises(MalformedMetadataError, match="'hoodie.incremental.checkpoints' is damaged"):
        table.checkpoints()


def test_a_version_6_position_waits_for_pending_writes(spark, tmp_path):
    table = HoodieTable.for_write(str(tmp_path / "t"), id_dt_ts_config("source"))
    assert table.incremental_position() is None
    first = table.upsert(spark.createDataFrame([(1, "a", "d", 1)], SCHEMA)).instant
    later = table.upsert(spark.createDataFrame([(2, "b", "d", 1)], SCHEMA)).instant
    # A writer that started between the two and is still writing (another process; this
    # one would have rolled it back): its rows will carry its instant time, below `later`,
    # so a consumer must not pass it before it completes.
    pending = Instant(str(int(first) + 1), Action.COMMIT, State.REQUESTED)
    assert first < pending.timestamp < later
    table.meta_client.save_instant(pending)
    assert table.incremental_position() == SourceCheckpoint(first, first, 6)
    table.meta_client.storage.delete(table.meta_client.instant_path(pending))
    assert table.incremental_position() == SourceCheckpoint(later, later, 6)


def test_completed_knows_a_tables_history_not_a_rebuilt_ones(spark, tmp_path):
    """`HoodieTable.completed`: what a consumer's checkpoint names must be in the upstream's
    history; a table rebuilt under the same path never had the old instants."""
    import shutil

    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("up", "COPY_ON_WRITE")
    rows = spark.createDataFrame([(1, "a", "d", 1)], SCHEMA)
    old = HoodieTable.for_write(path, cfg).upsert(rows).instant
    table = HoodieTable.open(path)
    assert table.completed(old) and not table.completed("20200101000000000")
    shutil.rmtree(path)
    new = HoodieTable.for_write(path, cfg).upsert(rows).instant
    rebuilt = HoodieTable.open(path)
    assert rebuilt.completed(new) and not rebuilt.completed(old)
    # a cdc consumer's position: requested times, on either layout
    version = rebuilt.properties.table_version
    assert rebuilt.incremental_position("cdc") == SourceCheckpoint(new, new, version, "cdc")

"""insert_overwrite_table (dbt --full-refresh): one replace commit, history kept."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from hoodie import HoodieTable, WriteConfig
from hoodie.timeline import Action

pytestmark = pytest.mark.spark


def _rows(table, spark):
    return sorted(tuple(r) for r in table.read(spark).select("id", "v").collect())


@pytest.mark.layout_v6
def test_overwrite_replaces_contents_in_one_replace_commit(spark, tmp_path):
    base = str(tmp_path / "t")
    cfg = WriteConfig.build("t", record_key="id", partition_path="p")
    table = HoodieTable.for_write(base, cfg)
    table.upsert(
        spark.createDataFrame([(1, "a", "x"), (2, "b", "y")], "id int, v string, p string"), cfg
    )
    old_view = table.file_system_view()
    old_groups = {(g.partition_path, g.file_id) for g in old_view.file_groups()}

    result = table.overwrite(
        spark.createDataFrame([(3, "c", "y"), (4, "d", "z")], "id int, v string, p string"), cfg
    )
    assert result.operation == "INSERT_OVERWRITE_TABLE"
    assert _rows(table, spark) == [(3, "c"), (4, "d")]
    latest = table.timeline().completed.instants[-1]
    assert latest.action is Action.REPLACE_COMMIT
    meta = json.loads(
        (tmp_path / "t" / ".hoodie" / f"{latest.timestamp}.replacecommit").read_text()
    )
    replaced = {(p, f) for p, ids in meta["partitionToReplaceFileIds"].items() for f in ids}
    assert replaced == old_groups
    assert meta["operationType"] == "INSERT_OVERWRITE_TABLE"
    # The old version is still there for time travel: the view as of the first commit has it.
    first = table.timeline().completed.instants[0].timestamp
    assert {
        (g.partition_path, g.file_id) for g in table.file_system_view(first).file_groups()
    } == old_groups

    hudi = pytest.importorskip("hudi")
    got = pa.Table.from_batches(hudi.HudiTable(base).read())
    assert sorted(got["id"].to_pylist()) == [3, 4]


def test_overwrite_with_new_keys_rebuilds_the_table(spark, tmp_path):
    base = str(tmp_path / "t")
    cfg = WriteConfig.build("t", record_key="id", partition_path="p")
    table = HoodieTable.for_write(base, cfg)
    table.upsert(spark.createDataFrame([(1, "a", "x")], "id int, v string, p string"), cfg)

    new_cfg = WriteConfig.build("t", record_key="v")
    table.overwrite(
        spark.createDataFrame([(7, "k", "x"), (8, "l", "x")], "id int, v string, p string"), new_cfg
    )
    reopened = HoodieTable.open(base)
    assert reopened.properties.record_key_fields == ("v",)
    assert reopened.properties.partition_fields == ()
    assert _rows(reopened, spark) == [(7, "k"), (8, "l")]
    assert len(reopened.timeline().completed) == 1
    assert not list(tmp_path.glob("t.rebuild-*")) and not list(tmp_path.glob("t.replaced-*"))


def test_failed_rebuild_leaves_the_old_table(spark, tmp_path):
    base = str(tmp_path / "t")
    cfg = WriteConfig.build("t", record_key="id")
    table = HoodieTable.for_write(base, cfg)
    table.upsert(spark.createDataFrame([(1, "a")], "id int, v string"), cfg)
    new_cfg = WriteConfig.build("t", record_key="v")
    with pytest.raises(Exception, match="null or empty record key"):
        table.overwrite(spark.createDataFrame([(2, None)], "id int, v string"), new_cfg)
    assert HoodieTable.open(base).properties.record_key_fields == ("id",)
    assert _rows(HoodieTable.open(base), spark) == [(1, "a")]
    assert not list(tmp_path.glob("t.rebuild-*"))

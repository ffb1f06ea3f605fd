"""Clustering both ways with Apache Hudi (issue 42, step 9): it reads tables we clustered
(snapshot and incremental queries: clustering keeps every row's commit time), and we read
tables it clustered, decode its pending plan and execute it. One case each way in `make
test`; the table types and versions under `hudi_full`."""

from __future__ import annotations

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, TABLE_TYPES, ApacheHudiError, assert_same_as_apache_hudi
from apache_hudi import datasource_options as hudi_options
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie.clustering_plan import pending_clusterings, read_plan
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.storage import load_file_io
from hoodie.table_services.clustering import Clusterer
from hoodie.timeline import Action

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"
KEY = "_hoodie_record_key"
NAMES = ["m", "c", "x", "a", "q", "k"]
BATCHES = [[(b * 3 + i, NAMES[b * 3 + i], "p", 1) for i in range(3)] for b in range(2)]
INCREMENTAL = "hoodie.datasource.query.type"


def arrow(rows) -> pa.Table:
    ids, names, dts, ts = zip(*rows)
    return pa.table({"id": pa.array(ids, pa.int32()), "name": pa.array(names),
                     "dt": pa.array(dts), "ts": pa.array(ts, pa.int64())})  # fmt: skip


def our_config(kind: str, version: int, **extra: str) -> WriteConfig:
    return WriteConfig.build(
        "clustered", record_key="id", partition_path="dt", precombine_field="ts",
        table_type=TABLE_TYPES[kind], options={
            "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0",  # a file group per write
            "hoodie.compact.inline": "false",
            "hoodie.clustering.plan.strategy.sort.columns": "name",
            **extra,
        },
    )  # fmt: skip


def assert_reads_agree(spark, judge, path: str) -> None:
    theirs = judge.read(path)
    assert theirs.num_rows == 6
    assert_same_as_apache_hudi("snapshot", read_ours(spark, path), theirs, KEY)
    everything = {INCREMENTAL: "incremental", "hoodie.datasource.read.begin.instanttime": "0"}
    assert_same_as_apache_hudi("incremental", read_ours(spark, path, **everything),
                               judge.read(path, **everything), KEY)  # fmt: skip


def clustered_by_us(spark, path: str, kind: str, version: int) -> HoodieTable:
    cfg = our_config(kind, version)
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame(BATCHES[0], SCHEMA), cfg)
    # the second write triggers inline clustering: two commits since none
    inline = our_config(kind, version, **{"hoodie.clustering.inline": "true",
                                          "hoodie.clustering.inline.max.commits": "2"})  # fmt: skip
    result = table.upsert(spark.createDataFrame(BATCHES[1], SCHEMA), inline)
    assert [c.operation for c in result.clusterings] == ["CLUSTER"]
    groups = table.meta_client.file_system_view().file_groups(["p"])
    assert len([g for g in groups if g.latest_slice is not None]) == 1
    return table


@pytest.mark.parametrize("kind, version, hudi", [
    pytest.param("cow", 8, HUDI_1, id="cow-v8-1.2"),
    pytest.param("mor", 8, HUDI_1, id="mor-v8-1.2", marks=pytest.mark.hudi_full),
    pytest.param("cow", 6, HUDI_0, id="cow-v6-0.15", marks=pytest.mark.hudi_full),
    pytest.param("mor", 6, HUDI_1, id="mor-v6-1.2", marks=pytest.mark.hudi_full),
])  # fmt: skip
def test_apache_hudi_reads_our_clustered_table(spark, apache_hudi, tmp_path, kind, version, hudi):
    path = str(tmp_path / "ours")
    clustered_by_us(spark, path, kind, version)
    assert_reads_agree(spark, apache_hudi(hudi), path)
    import hudi  # hudi-rs drops the replaced groups too

    assert_same_rows("hudi-rs", KEY, read_ours(spark, path), read_theirs(hudi.HudiTable(path)))


def theirs(kind: str, **extra: str) -> dict[str, str]:
    return {
        **hudi_options("theirs", kind, "bulk_insert"),
        "hoodie.write.table.version": "8",
        "hoodie.clustering.plan.strategy.sort.columns": "name",
        "hoodie.clustering.inline.max.commits": "2",
        **extra,
    }


def clustered_by_apache_hudi(judge, path: str, kind: str) -> HoodieTableMetaClient:
    """Two bulk inserts, its inline clustering after the second."""
    for batch in BATCHES:
        judge.write(path, arrow(batch), theirs(kind, **{"hoodie.clustering.inline": "true"}))
    meta_client = HoodieTableMetaClient.load(load_file_io(path))
    done = [i for i in meta_client.timeline().completed if i.action is Action.REPLACE_COMMIT]
    assert done and meta_client.commit_metadata(done[0]).operation_type == "CLUSTER"
    return meta_client


@pytest.mark.parametrize("kind", [
    pytest.param("cow", id="cow"),
    pytest.param("mor", id="mor", marks=pytest.mark.hudi_full),
])  # fmt: skip
def test_we_read_apache_hudis_clustered_table(spark, apache_hudi, tmp_path, kind):
    judge = apache_hudi(HUDI_1)
    path = str(tmp_path / "theirs")
    clustered_by_apache_hudi(judge, path, kind)
    assert_reads_agree(spark, judge, path)


@pytest.mark.hudi_full
@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_we_execute_apache_hudis_plan(spark, apache_hudi, tmp_path, kind):
    """A plan it only scheduled: pending, we read past it, decode it (paths checked inside
    the table) and execute it; it reads our result."""
    judge = apache_hudi(HUDI_1)
    path = str(tmp_path / "theirs")
    clustered_by_apache_hudi(judge, path, kind)
    more = [(20 + i, f"y{i}", "p", 2) for i in range(3)]
    judge.write(path, arrow(more), theirs(kind))
    judge.sql(f"CALL run_clustering(path => '{path}', op => 'schedule', "
              "options => 'hoodie.clustering.plan.strategy.sort.columns=name')")  # fmt: skip
    meta_client = HoodieTableMetaClient.load(load_file_io(path))
    (pending,) = pending_clusterings(meta_client.storage, meta_client.timeline())
    plan = read_plan(meta_client.storage, meta_client.layout, pending.timestamp)
    assert plan.sort_columns == ("name",) and plan.groups
    assert all(s.base_file and s.base_file.startswith("p/") for g in plan.groups for s in g.slices)
    theirs_now = judge.read(path)
    assert_same_as_apache_hudi("pending", read_ours(spark, path), theirs_now, KEY)
    Clusterer(meta_client).execute(spark, pending.timestamp)
    after = judge.read(path)
    assert sorted(after.column(KEY).to_pylist()) == sorted(theirs_now.column(KEY).to_pylist())
    assert_same_as_apache_hudi("executed by us", read_ours(spark, path), after, KEY)


@pytest.mark.hudi_full
@pytest.mark.parametrize("version, hudi", [(8, HUDI_1), (6, HUDI_0)], ids=["v8-1.2", "v6-0.15"])
def test_apache_hudi_keeps_out_of_our_pending_clustering(
    spark, apache_hudi, tmp_path, version, hudi
):
    """It reads our pending plan as its own: its upsert of a key in a planned file group fails
    with its `HoodieClusteringUpdateException` (ours says the same), its snapshot ignores the
    plan, and after we execute it, it reads the clustered table."""
    path = str(tmp_path / "ours")
    cfg = our_config("cow", version)
    table = HoodieTable.for_write(path, cfg)
    for batch in BATCHES:
        table.upsert(spark.createDataFrame(batch, SCHEMA), cfg)
    assert table.services.schedule_clustering(cfg) is not None
    judge = apache_hudi(hudi)
    options = {**hudi_options("clustered", "cow"), "hoodie.write.table.version": str(version)}
    with pytest.raises(ApacheHudiError, match="Not allowed to update the clustering file group"):
        judge.write(path, arrow([(0, "changed", "p", 9)]), options)
    assert_reads_agree(spark, judge, path)
    table.services.cluster(spark, cfg)
    assert_reads_agree(spark, judge, path)

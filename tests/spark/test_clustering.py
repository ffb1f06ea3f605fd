"""Clustering: plans of the small file groups, executed into fewer sorted file groups; readers
see the same rows (commit times kept), the replaced groups dropped."""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest
from _spark_helpers import id_dt_ts_config, snapshot

from hoodie import HoodieTable
from hoodie.clustering_plan import (
    CLUSTER,
    pending_clustering_file_groups,
    pending_clusterings,
    read_plan,
)
from hoodie.exceptions import ClusteringUpdateError, StaleClusteringPlanError
from hoodie.properties import COPY_ON_WRITE, MERGE_ON_READ
from hoodie.timeline import Action, State

pytestmark = pytest.mark.spark

A, B = "2024-01-01", "2024-01-02"
SCHEMA = "id int, name string, dt string, ts bigint"


def config(name: str, table_type: str, version: int, **options):
    return id_dt_ts_config(name, table_type, {
        "hoodie.compact.inline": "false",
        "hoodie.parquet.small.file.limit": "0",  # every insert a new file group
        "hoodie.write.table.version": str(version),
        "hoodie.clustering.plan.strategy.sort.columns": "name",
        **options,
    })  # fmt: skip


def base_files(table: HoodieTable, partition: str) -> list[str]:
    view = table.meta_client.file_system_view()
    return sorted(
        g.latest_slice.base_file.relative_path
        for g in view.file_groups([partition])
        if g.latest_slice is not None and g.latest_slice.base_file is not None
    )


def build(spark, path: str, table_type: str, version: int, scheduled=False, **options):
    """Three bulk inserts (three file groups in A, two in B) and an upsert (a log file on
    merge-on-read), which (`scheduled`) plans a clustering: the fourth commit since none."""
    cfg = config("clustered", table_type, version, **options)
    bulk = config("clustered", table_type, version,
                  **{"hoodie.datasource.write.operation": "bulk_insert", **options})  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    names = ["m", "c", "x", "a", "q", "k", "b", "z", "e"]
    for batch in range(3):
        data = [(batch * 3 + i, names[batch * 3 + i], A, 1) for i in range(3)]
        if batch < 2:
            data.append((100 + batch, f"n{batch}", B, 1))
        table.upsert(spark.createDataFrame(data, SCHEMA), bulk)
    last = config("clustered", table_type, version, **{
        "hoodie.clustering.schedule.inline": str(scheduled).lower(),
        "hoodie.clustering.inline.max.commits": "4", **options})  # fmt: skip
    result = table.upsert(spark.createDataFrame([(4, "d", A, 2)], SCHEMA), last)
    assert result.clusterings == []  # planned only
    return table, cfg


@pytest.fixture(scope="module", params=[
    pytest.param((COPY_ON_WRITE, 6), id="cow-v6"),
    pytest.param((MERGE_ON_READ, 8), id="mor-v8", marks=pytest.mark.full),
])  # fmt: skip
def clustered(request, spark, tmp_path_factory):
    table_type, version = request.param
    path = str(tmp_path_factory.mktemp("cluster") / "t")
    table, cfg = build(spark, path, table_type, version, scheduled=True)
    out = {"table": table, "cfg": cfg, "before": snapshot(table, spark)}
    out["groups_before"] = base_files(table, A)
    (planned,) = pending_clusterings(table.storage, table.meta_client.timeline())
    out["instant"] = planned.timestamp
    out["pending"] = pending_clustering_file_groups(table.storage, table.meta_client.timeline())
    out["during"] = snapshot(table, spark)
    # writers keep out of the plan's groups: an update fails, nothing written ...
    with pytest.raises(ClusteringUpdateError, match="Not allowed to update the clustering "
                       "file group 2024-01-01/"):  # fmt: skip
        table.upsert(spark.createDataFrame([(0, "changed", A, 9)], SCHEMA), cfg)
    assert snapshot(table, spark) == out["before"]
    # ... and inserts go to new file groups, not into small ones of the plan
    fills = config("clustered", table_type, version,
                   **{"hoodie.parquet.small.file.limit": "104857600"})  # fmt: skip
    inserted = table.upsert(spark.createDataFrame([(50, "new", A, 1)], SCHEMA), fills)
    assert {s.file_id for s in inserted.metadata.write_stats()}.isdisjoint(
        {f for _, f in out["pending"]}
    )
    out["with_insert"] = snapshot(table, spark)
    out["results"] = table.services.cluster(spark, cfg)
    out["after"] = snapshot(table, spark)
    return out


def test_clustering_keeps_rows_and_commit_times(clustered):
    before, after = clustered["before"], clustered["after"]
    assert clustered["during"] == before  # a pending plan changes nothing readers see
    before = clustered["with_insert"]
    strip = lambda rows: {k: {c: v for c, v in r.items() if c != "_hoodie_file_name"}  # noqa: E731
                          for k, r in rows.items()}  # fmt: skip
    assert strip(after) == strip(before)
    assert {r["_hoodie_file_name"] for r in after.values()}.isdisjoint(
        {r["_hoodie_file_name"] for r in before.values()}
    )


def test_clustering_replaces_groups_with_one_sorted_file(clustered):
    table = clustered["table"]
    # the pending plan first, then a new one: sort columns cluster single groups again
    first, second = clustered["results"]
    assert first.instant == clustered["instant"] and first.operation == CLUSTER
    assert len(clustered["pending"]) == 5  # every small group of both partitions
    completed = [i for i in table.meta_client.timeline().completed
                 if i.action is Action.REPLACE_COMMIT]  # fmt: skip
    assert [i.timestamp for i in completed] == [first.instant, second.instant]
    meta = table.meta_client.commit_metadata(completed[0])
    assert meta.operation_type == CLUSTER
    assert sorted(meta.partition_to_replace_file_ids[A]) == sorted(
        os.path.basename(f).split("_")[0] for f in clustered["groups_before"]
    )
    (only,) = base_files(table, A)
    names = pq.read_table(os.path.join(table.meta_client.storage.base_path, only)).column("name")
    assert names.to_pylist() == sorted(names.to_pylist())
    plan = read_plan(table.storage, table.meta_client.layout, clustered["instant"])
    assert plan.sort_columns == ("name",)
    assert not pending_clustering_file_groups(table.storage, table.meta_client.timeline())


def test_incremental_read_skips_clustering(clustered, spark):
    table = clustered["table"]
    timeline = table.meta_client.timeline()
    writes = [i for i in timeline.completed if i.action is not Action.REPLACE_COMMIT]
    last_write = writes[-1]
    begin = last_write.completion_time or last_write.timestamp
    rows = table.read(
        spark,
        {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": begin,
        },
    ).collect()
    assert rows == []


@pytest.mark.full
def test_zorder_keeps_rows(spark, tmp_path):
    table, _ = build(spark, str(tmp_path / "z"), COPY_ON_WRITE, 6)
    cfg = config("clustered", COPY_ON_WRITE, 6, **{
        "hoodie.layout.optimize.strategy": "ZORDER",
        "hoodie.clustering.plan.strategy.sort.columns": "id,name",
    })  # fmt: skip
    before = snapshot(table, spark)
    table.services.cluster(spark, cfg)
    after = snapshot(table, spark)
    assert {k: r["_hoodie_commit_time"] for k, r in after.items()} == {
        k: r["_hoodie_commit_time"] for k, r in before.items()
    }


@pytest.mark.full
def test_a_write_rolls_back_a_requested_plan_when_told(spark, tmp_path):
    """hoodie.clustering.rollback.pending.replacecommit.on.conflict=true: the update goes
    through and the plan (requested, not executing) is gone; an inflight one still refuses."""
    table, cfg = build(spark, str(tmp_path / "t"), COPY_ON_WRITE, 6)
    yielding = config("clustered", COPY_ON_WRITE, 6, **{
        "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "true"})  # fmt: skip
    instant = table.services.schedule_clustering(cfg)
    table.upsert(spark.createDataFrame([(0, "changed", A, 9)], SCHEMA), yielding)
    assert not pending_clustering_file_groups(table.storage, table.meta_client.timeline())
    assert snapshot(table, spark)["0"]["name"] == "changed"
    assert instant not in {i.timestamp for i in table.meta_client.timeline()}
    instant = table.services.schedule_clustering(cfg)
    requested = table.meta_client.timeline().pending.instants[-1]
    table.meta_client.save_instant(requested.with_state(State.INFLIGHT))  # an executor's
    with pytest.raises(ClusteringUpdateError):
        table.upsert(spark.createDataFrame([(0, "again", A, 10)], SCHEMA), yielding)
    assert pending_clustering_file_groups(table.storage, table.meta_client.timeline())


def test_a_plan_a_write_overtook_is_removed(spark, tmp_path):
    """A writer that ignores pending plans (Apache Hudi's with an update strategy that allows
    it; here ours, kept from seeing the plan) updates a planned file group. Executing the
    plan would drop that update: the clustering fails, its plan is removed (not left to fail
    the same way forever and keep writers out), and the next clustering keeps the update."""
    table, cfg = build(spark, str(tmp_path / "t"), COPY_ON_WRITE, 6)
    instant = table.services.schedule_clustering(cfg)
    (plan_file,) = (tmp_path / "t" / ".hoodie").glob(f"{instant}.*requested")
    hidden = plan_file.read_bytes()
    plan_file.unlink()
    table.upsert(spark.createDataFrame([(0, "changed", A, 9)], SCHEMA), cfg)
    plan_file.write_bytes(hidden)
    with pytest.raises(
        StaleClusteringPlanError,
        match=f"clustering {instant} of table "
        "'clustered' was not committed: commit .* changed 1 of its file",
    ):
        table.services.cluster(spark, cfg)  # fmt: skip
    timeline = table.meta_client.timeline()
    assert instant not in {i.timestamp for i in timeline}
    assert not pending_clusterings(table.storage, timeline)
    assert snapshot(table, spark)["0"]["name"] == "changed"
    (result,) = table.services.cluster(spark, cfg)
    assert result.instant != instant
    rows = snapshot(table, spark)
    assert rows["0"]["name"] == "changed" and len(rows) == 11


def test_a_metadata_table_built_after_clustering_lists_the_replaced_groups(spark, tmp_path):
    """A metadata table first built after a clustering lists the file groups it replaced (on
    storage until a clean deletes them), as Apache Hudi's listing does: a time-travel read
    to before the clustering lists its files through the metadata table (it found a file
    "missing" when the metadata table's listing left them out)."""
    table, cfg = build(spark, str(tmp_path / "t"), COPY_ON_WRITE, 6)
    before = snapshot(table, spark)
    first = table.timeline().completed.instants[0].timestamp
    then = {k: r for k, r in before.items() if r["_hoodie_commit_time"] == first}
    table.services.cluster(spark, cfg)
    with_mdt = config("clustered", COPY_ON_WRITE, 6, **{"hoodie.metadata.enable": "true"})
    table.upsert(spark.createDataFrame([(60, "late", B, 1)], SCHEMA), with_mdt)
    assert table.properties.extra.get("hoodie.table.metadata.partitions") == "files"
    rows = table.read(spark, {"as.of.instant": first}).collect()
    assert sorted(r["_hoodie_record_key"] for r in rows) == sorted(then)


def test_clean_deletes_the_replaced_groups_and_archival_waits_for_it(clustered, spark):
    """(Last: it changes the module's table.) Archival keeps the replace commits until a
    clean deleted what they replaced; with one commit retained, the next clean does."""
    table, cfg = clustered["table"], clustered["cfg"]
    replaced = clustered["groups_before"]
    storage = table.storage
    archive = config("clustered", cfg.table_type, cfg.table_version or 6, **{
        "hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2",
        "hoodie.clean.automatic": "false", "hoodie.cleaner.commits.retained": "1",
    })  # fmt: skip
    table.services.archive(archive)
    kept = {i.timestamp for i in table.meta_client.timeline().completed}
    assert {r.instant for r in clustered["results"]} <= kept
    assert all(storage.exists(f) for f in replaced)
    table.upsert(spark.createDataFrame([(51, "w", B, 1)], SCHEMA), archive)
    table.services.clean(archive)
    assert not any(storage.exists(f) for f in replaced)
    table.services.archive(archive)
    rows = snapshot(table, spark)
    assert {k: r["_hoodie_commit_time"] for k, r in rows.items() if k != "51"} == {
        k: r["_hoodie_commit_time"] for k, r in clustered["after"].items()
    }

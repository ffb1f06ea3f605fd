"""Cleaning: old file versions go by policy; what retained instants, pending compactions and
readers need stays."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pyarrow as pa
import pytest
from _spark_helpers import all_files, id_dt_ts_config

from hoodie import HoodieTable, WriteConfig
from hoodie.avro_metadata import CleanerPlan, CleanMetadata
from hoodie.exceptions import MalformedMetadataError, TimelineError
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.read.datasource import register
from hoodie.table_services import clean
from hoodie.table_services.clean import CleanConfig, Cleaner
from hoodie.table_services.compaction import Compactor
from hoodie.timeline import LAYOUT_V1, Action, State
from hoodie.transaction.failed_writes import FailedWritesPolicy
from hoodie.transaction.heartbeat import HEARTBEAT_FOLDER, heartbeat_path

pytestmark = pytest.mark.spark

A = "2024-01-01"
SCHEMA = "id int, name string, dt string, ts bigint"


def config(name, table_type="COPY_ON_WRITE", **options) -> WriteConfig:
    """`id_dt_ts_config` with options as keywords (`hoodie_cleaner_commits_retained="2"`)."""
    return id_dt_ts_config(name, table_type, {k.replace("_", "."): v for k, v in options.items()})


def versions(path: str) -> list[str]:
    """Base file instants on disk, oldest first."""
    return sorted(p.rsplit("_", 1)[1][:17] for p in all_files(path) if p.endswith(".parquet"))


def rows(spark, path, **options) -> dict:
    register(spark)
    reader = spark.read.format("hoodie")
    for key, value in options.items():
        reader = reader.option(key, value)
    return {r.id: r.name for r in reader.load(path).collect()}


def clean_states(table) -> dict[str, str]:
    """instant time -> state of every clean on the timeline."""
    return {i.timestamp: i.state.name for i in table.timeline() if i.action is Action.CLEAN}


def write_versions(spark, table, cfg, count: int) -> list[str]:
    instants = []
    for v in range(1, count + 1):
        df = spark.createDataFrame([(1, f"v{v}", A, v), (2, "same", A, 1)], SCHEMA)
        instants.append(table.upsert(df, cfg).instant)
    return instants


@pytest.mark.layout_v6
def test_keep_latest_commits(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = config("keep_commits", hoodie_cleaner_commits_retained="2")
    table = HoodieTable.for_write(path, cfg)
    instants = write_versions(spark, table, cfg, 4)
    # The snapshots as of the last two commits stay readable: their file versions stay, and
    # (Hudi's CleanPlanner) so does the version the earliest of them replaced, which rolling
    # it back or reading changes from it needs. The first version goes.
    assert versions(path) == instants[1:]
    cleans = [i for i in table.timeline().completed if i.action is Action.CLEAN]
    assert cleans, "automatic cleaning ran"
    meta = CleanMetadata.from_avro(
        open(os.path.join(path, LAYOUT_V1.path(cleans[-1])), "rb").read()
    )
    assert meta.earliest_commit_to_retain == instants[2]
    assert rows(spark, path, **{"as.of.instant": instants[2]}) == {1: "v3", 2: "same"}
    with pytest.raises(Exception, match=f"readable range: {instants[2]}"):
        rows(spark, path, **{"as.of.instant": instants[1]})
    hudi = pytest.importorskip("hudi")
    table_rs = pa.Table.from_batches(hudi.HudiTable(path).read())
    assert sorted(table_rs["name"].to_pylist()) == ["same", "v4"]


def test_keep_latest_file_versions_and_manual_clean(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = config(
        "keep_versions",
        hoodie_clean_automatic="false",
        hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
        hoodie_cleaner_fileversions_retained="1",
    )
    table = HoodieTable.for_write(path, cfg)
    instants = write_versions(spark, table, cfg, 3)
    assert versions(path) == instants  # automatic cleaning is off
    meta = table.services.clean(cfg)
    assert meta.total_files_deleted == 2
    assert versions(path) == instants[-1:]
    assert rows(spark, path) == {1: "v3", 2: "same"}
    assert table.services.clean(cfg) is None  # nothing left to clean: no instant either
    assert len(clean_states(table)) == 1
    # A file-versions clean records no readable range: time travel to a snapshot whose file
    # it deleted says so (not "damaged table, restore the file from a backup").
    with pytest.raises(Exception, match="needs .*which clean .*deleted .policy "
                                            "KEEP_LATEST_FILE_VERSIONS"):  # fmt: skip
        rows(spark, path, **{"as.of.instant": instants[0]})


@pytest.mark.layout_v6
def test_a_pending_clean_is_finished_first(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = config("pending_clean", hoodie_clean_automatic="false")
    table = HoodieTable.for_write(path, cfg)
    instants = write_versions(spark, table, cfg, 3)
    cleaner = Cleaner(table.meta_client, CleanConfig(commits_retained=1))
    planned = cleaner.schedule()  # a crash after planning leaves the plan pending
    plan = CleanerPlan.from_avro(
        open(os.path.join(path, ".hoodie", f"{planned}.clean.requested"), "rb").read()
    )
    assert plan.earliest_instant_to_retain.timestamp == instants[-1]
    assert versions(path) == instants
    Cleaner(table.meta_client, CleanConfig(commits_retained=1)).run()
    assert versions(path) == instants[-2:]  # the retained commit's, and the one it replaced
    assert clean_states(table) == {planned: "COMPLETED"}


def test_a_running_clean_is_left_to_its_writer(spark, tmp_path, monkeypatch):
    """A clean is a transaction as a write is: under optimistic concurrency its heartbeat beats
    while it runs, and another writer's clean neither takes it over nor plans a second one
    beside it; once the heartbeat stops, the next clean finishes it."""
    path = str(tmp_path / "t")
    cfg = config(
        "occ_clean",
        hoodie_write_concurrency_mode="optimistic_concurrency_control",
        hoodie_clean_automatic="false",
        hoodie_cleaner_commits_retained="1",
    )
    table = HoodieTable.for_write(path, cfg)
    instants = write_versions(spark, table, cfg, 3)
    beating = []
    real = clean.crash_point

    def point(name):
        if name == "clean.files_deleted":
            beating.extend(os.listdir(os.path.join(path, HEARTBEAT_FOLDER)))
        real(name)

    monkeypatch.setattr(clean, "crash_point", point)
    first = table.services.clean(cfg)
    assert beating == [first.start_clean_time]
    assert os.listdir(os.path.join(path, HEARTBEAT_FOLDER)) == []
    assert versions(path) == instants[1:]

    df = spark.createDataFrame([(1, "v4", A, 4), (2, "same", A, 1)], SCHEMA)
    instants.append(table.upsert(df, cfg).instant)
    policy = FailedWritesPolicy.of(table.meta_client.storage, cfg)
    planned = Cleaner(table.meta_client, CleanConfig.of(cfg), policy).schedule()
    beat = os.path.join(path, heartbeat_path(planned))
    with open(beat, "w") as handle:  # another writer is executing that plan
        handle.write(str(time.time()))
    assert table.services.clean(cfg) is None
    assert clean_states(table) == {first.start_clean_time: "COMPLETED", planned: "REQUESTED"}
    assert versions(path) == instants[1:]

    with open(beat, "w") as handle:  # that writer died: its heartbeat stopped long ago
        handle.write("0")
    assert table.services.clean(cfg).start_clean_time == planned
    assert clean_states(table) == {first.start_clean_time: "COMPLETED", planned: "COMPLETED"}
    assert versions(path) == instants[2:]
    assert rows(spark, path) == {1: "v4", 2: "same"}


def test_files_a_pending_compaction_reads_are_kept(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = config(
        "mor_clean",
        table_type="MERGE_ON_READ",
        hoodie_compact_inline="false",
        hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
        hoodie_cleaner_fileversions_retained="1",
    )
    table = HoodieTable.for_write(path, cfg)
    write_versions(spark, table, cfg, 2)  # base file + a log file
    planned = Compactor(table.meta_client).schedule()
    write_versions(spark, table, cfg, 1)  # a log file on the slice being compacted
    before = set(all_files(path))
    table.services.clean(cfg)  # one slice per file group so far: nothing to clean
    assert set(all_files(path)) == before
    Compactor(table.meta_client).execute(spark, planned)
    table.services.clean(cfg)  # now the compacted slice is the latest: the old one goes
    after = {p for p in all_files(path) if not p.startswith(".hoodie")}
    assert not [p for p in after if p.endswith(".parquet") and planned not in p]
    # The third write's row (v1, ts=1) lost to the stored ts=2 version.
    assert rows(spark, path) == {1: "v2", 2: "same"}


def test_replaced_file_groups_are_cleaned_once_out_of_the_retained_range(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = config("replaced", hoodie_cleaner_commits_retained="1")
    table = HoodieTable.for_write(path, cfg)
    first = table.upsert(spark.createDataFrame([(1, "a", A, 1)], SCHEMA), cfg)
    table.overwrite(spark.createDataFrame([(5, "e", A, 1)], SCHEMA), cfg)
    table.upsert(spark.createDataFrame([(6, "f", A, 1)], SCHEMA), cfg)
    old_group = first.metadata.write_stats()[0].file_id
    assert not [p for p in all_files(path) if old_group in p and p.endswith(".parquet")]
    assert rows(spark, path) == {5: "e", 6: "f"}


def test_time_travel_errors_name_the_cleaned_range(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = config("errors", hoodie_cleaner_commits_retained="1")
    table = HoodieTable.for_write(path, cfg)
    instants = write_versions(spark, table, cfg, 3)  # the third write's clean deletes a file
    from hoodie.read.options import ReadOptions
    from hoodie.read.planner import plan_read, readable_range

    assert readable_range(table.meta_client) == (instants[2], instants[2])
    options = ReadOptions.parse(
        {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": "0",
            "hoodie.datasource.read.end.instanttime": instants[0],
        }
    )
    with pytest.raises(TimelineError, match="cleaned"):
        plan_read(table.meta_client, options)


def test_a_rollback_that_needs_cleaned_versions_is_refused(spark, tmp_path):
    """After one rollback the retained range no longer covers the next: rolling back the
    commit whose replaced version cleaning took would lose the record, so it is refused and
    the table stays as it was; the first rollback, whose replaced version stayed, works."""
    path = str(tmp_path / "t")
    cfg = config("rolled", hoodie_cleaner_commits_retained="1")
    table = HoodieTable.for_write(path, cfg)
    instants = write_versions(spark, table, cfg, 3)
    assert versions(path) == instants[1:]  # v1's file went with the clean after v3
    table.services.rollback(config=cfg)
    assert rows(spark, path) == {1: "v2", 2: "same"}
    before = all_files(path)
    with pytest.raises(TimelineError) as refused:
        table.services.rollback(config=cfg)
    message = str(refused.value)
    assert f"commit {instants[1]} of table 'rolled' replaced file versions that cleaning" in message
    assert f"as of {instants[0]}" in message and "hoodie.cleaner.commits.retained" in message
    assert all_files(path) == before
    assert rows(spark, path) == {1: "v2", 2: "same"}



# make test: version 8 (completion times); make test-full: 6 too
@pytest.mark.parametrize("version", [pytest.param(6, marks=pytest.mark.full), 8])
def test_incremental_cleaning_plans_what_a_full_listing_plans(spark, tmp_path, monkeypatch,
                                                              version):  # fmt: skip
    """`hoodie.cleaner.incremental.mode` (the default): after the first clean, a plan lists
    only the partitions that commits since the last clean's earliest retained commit wrote.
    Upserts into different partitions in turn (some untouched for several commits): before
    every automatic clean, its plan is the one a listing of every partition makes, and the
    incremental ones list fewer partitions than the table has."""
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("incremental_clean", "COPY_ON_WRITE", {
        "hoodie.cleaner.commits.retained": "2", "hoodie.write.table.version": str(version),
    })  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    compared, listed = [], []
    plan, partitions_to_list = Cleaner.plan, Cleaner._partitions_to_list

    def compared_plan(cleaner, timeline):
        ours = plan(cleaner, timeline)
        full = Cleaner(cleaner.meta_client, replace(cleaner.config, incremental=False),
                       cleaner.failed_writes)  # fmt: skip
        theirs = plan(full, timeline)
        compared.append((doomed(theirs), doomed(ours)))
        return ours

    def doomed(cleaner_plan):
        if cleaner_plan is None:
            return {}
        return {partition: sorted(f.file_path for f in files) for partition, files
                in cleaner_plan.file_paths_to_be_deleted_per_partition.items()}  # fmt: skip

    def recorded(cleaner, timeline, earliest):
        partitions = partitions_to_list(cleaner, timeline, earliest)
        if cleaner.config.incremental:
            listed.append(partitions)
        return partitions

    monkeypatch.setattr(Cleaner, "plan", compared_plan)
    monkeypatch.setattr(Cleaner, "_partitions_to_list", recorded)
    days = ["2024-01-01", "2024-01-02", "2024-01-03"]
    for step, day in enumerate([0, 0, 1, 0, 2, 2, 1, 0, 0, 2, 1]):
        batch = [(step, f"n{step}", days[day], step), (100 + day, f"s{step}", days[day], step)]
        table.upsert(spark.createDataFrame(batch, SCHEMA), cfg)
    assert compared and all(full == ours for full, ours in compared)
    assert sum(1 for full, _ in compared if full) >= 4  # cleans that deleted files
    incremental = [p for p in listed if p is not None]
    assert len(incremental) >= 4 and all(len(p) < len(days) for p in incremental), listed


def test_a_damaged_last_clean_leaves_incremental_cleaning_to_its_plan_or_a_full_listing(
    spark, tmp_path
):
    """The last clean's metadata says where incremental cleaning starts: damaged, its plan
    says it (as for readers' retained range); both damaged, every partition is listed. The
    plan is the full listing's either way, and no clean stops on it."""
    path = str(tmp_path / "t")
    cfg = config("damaged_clean", hoodie_cleaner_commits_retained="2",
                 hoodie_clean_automatic="false")  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    days = ["2024-01-01", "2024-01-02"]
    for step, day in enumerate([0, 0, 0, 1, 0, 0]):  # (one key per day, updated)
        table.upsert(spark.createDataFrame([(day, f"n{step}", days[day], step)], SCHEMA), cfg)
    assert Cleaner(HoodieTableMetaClient.open(path), CleanConfig(commits_retained=2)).run()
    for step, day in enumerate([1, 1, 0, 1], start=6):
        table.upsert(spark.createDataFrame([(day, f"n{step}", days[day], step)], SCHEMA), cfg)
    meta = HoodieTableMetaClient.open(path)
    timeline = meta.timeline()
    last = [i for i in timeline.completed if i.action is Action.CLEAN][-1]

    def planned(incremental: bool) -> dict:
        cleaner = Cleaner(meta, CleanConfig(commits_retained=2, incremental=incremental))
        plan = cleaner.plan(timeline)
        assert plan is not None
        return {p: sorted(f.file_path for f in files)
                for p, files in plan.file_paths_to_be_deleted_per_partition.items()}  # fmt: skip

    def damage(instant) -> None:
        with open(os.path.join(path, LAYOUT_V1.path(instant)), "r+b") as handle:
            handle.truncate(7)

    full = planned(False)
    damage(last)
    assert meta.retained_by_clean(last)  # from its plan
    assert planned(True) == full
    damage(last.with_state(State.REQUESTED))
    with pytest.raises(MalformedMetadataError):
        meta.retained_by_clean(last)
    assert planned(True) == full  # every partition listed

"""Merge-on-read writes: delta commits with log files, tagging through logs, and compaction."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest
from _spark_helpers import all_files, id_dt_ts_config, parquet_files, snapshot, user_columns

from hoodie import HoodieTable, WriteConfig
from hoodie.compaction_plan import read_plan
from hoodie.exceptions import InvalidConfigError, TableIdentityError
from hoodie.logformat import BlockType, add_meta_fields, parquet_data_block, read_log_file
from hoodie.naming import parse_base_file_name, parse_log_file_name
from hoodie.properties import COPY_ON_WRITE, MERGE_ON_READ
from hoodie.read.datasource import register
from hoodie.schema import META_COLUMNS, to_avro_schema
from hoodie.storage import load_file_io
from hoodie.table_services.compaction import Compactor
from hoodie.timeline import Action, State

pytestmark = pytest.mark.spark

A, B = "2024-01-01", "2024-01-02"
SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"


def mor_config(name: str, **options) -> WriteConfig:
    return id_dt_ts_config(name, MERGE_ON_READ, {"hoodie.compact.inline": "false", **options})


def rows(table: HoodieTable, spark) -> dict[int, tuple]:
    return {r["id"]: (r["name"], r["ts"]) for r in snapshot(table, spark).values()}


def read_optimized(table: HoodieTable, spark) -> dict[int, tuple]:
    register(spark)
    df = (
        spark.read.format("hoodie")
        .option("hoodie.datasource.query.type", "read_optimized")
        .load(table.base_uri)
    )
    return {r["id"]: (r["name"], r["ts"]) for r in df.collect()}


def log_files(base: str) -> list[str]:
    return sorted(p for p in all_files(base) if parse_log_file_name(os.path.basename(p)))


def instant_json(base: str, name: str) -> dict:
    with open(os.path.join(base, ".hoodie", name)) as handle:
        return json.load(handle)


def df(spark, data):
    return spark.createDataFrame(data, SCHEMA)


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    """One table through an insert, an update (log), a delete (log) and a compaction."""
    path = str(tmp_path_factory.mktemp("mor") / "orders")
    cfg = mor_config("orders")
    table = HoodieTable.for_write(path, cfg)
    out = {"path": path, "table": table, "cfg": cfg}
    out["insert"] = table.upsert(
        df(spark, [(1, "a", A, 1, False), (2, "b", A, 1, False), (3, "c", B, 1, False)]), cfg
    )
    out["files_after_insert"] = all_files(path)
    out["update"] = table.upsert(
        df(spark, [(1, "a2", A, 5, False), (3, "c-old", B, 0, False)]), cfg
    )
    out["snapshot_after_update"] = rows(table, spark)
    out["ro_after_update"] = read_optimized(table, spark)
    out["update2"] = table.upsert(df(spark, [(1, "a-stale", A, 3, False)]), cfg)
    out["snapshot_after_update2"] = rows(table, spark)
    out["delete"] = table.delete(df(spark, [(2, None, A, None, None)]).select("id", "dt"), cfg)
    out["snapshot_after_delete"] = rows(table, spark)
    out["logs_before_compaction"] = log_files(path)
    out["compactions"] = table.services.compact(spark)
    out["snapshot_after_compaction"] = rows(table, spark)
    out["ro_after_compaction"] = read_optimized(table, spark)
    out["files_after_compaction"] = all_files(path)
    out["second_compaction"] = table.services.compact(spark)
    out["files_after_second_compaction"] = all_files(path)
    return out


@pytest.mark.layout_v6
def test_table_is_merge_on_read_with_delta_commits(history):
    table = history["table"]
    assert table.properties.table_type == MERGE_ON_READ
    actions = [(i.action, i.state) for i in table.timeline()]
    assert actions[:4] == [(Action.DELTA_COMMIT, State.COMPLETED)] * 4
    for result in ("insert", "update", "update2", "delete"):
        name = f"{history[result].instant}.deltacommit"
        assert {f"{history[result].instant}.deltacommit.requested",
                f"{history[result].instant}.deltacommit.inflight", name} <= set(
            os.listdir(os.path.join(history["path"], ".hoodie"))
        )  # fmt: skip


def test_inserts_go_to_base_files(history):
    files = [p for p in history["files_after_insert"] if p.endswith(".parquet")]
    assert len(files) == 2  # one file group per partition
    data_files = [p for p in history["files_after_insert"] if not p.startswith(".hoodie")]
    assert not any(parse_log_file_name(os.path.basename(p)) for p in data_files)


@pytest.mark.layout_v6
def test_updates_append_a_log_file_to_the_slice(history):
    update = history["update"]
    assert (update.num_updates, update.num_inserts) == (2, 0)
    stats = update.metadata.write_stats()
    assert len(stats) == 2
    for stat in stats:
        name = os.path.basename(stat.path)
        parsed = parse_log_file_name(name)
        assert parsed is not None, name
        assert parsed.version == 1 and parsed.file_id == stat.file_id
        # The log file belongs to the slice its base file started.
        assert parsed.instant == history["insert"].instant == stat.prev_commit
        assert parse_base_file_name(stat.base_file).file_id == stat.file_id
        assert stat.log_files == [name] and stat.log_version == 1
    # No base file was written by the update.
    instants = {parse_base_file_name(os.path.basename(p)).instant
                for p in parquet_files(history["path"])}  # fmt: skip
    assert update.instant not in instants


@pytest.mark.layout_v6
def test_delta_commit_metadata_is_hudis(history):
    meta = instant_json(history["path"], f"{history['update'].instant}.deltacommit")
    assert meta["operationType"] == "UPSERT" and meta["compacted"] is False
    stat = next(s for stats in meta["partitionToWriteStats"].values() for s in stats)
    for key in ("logVersion", "logOffset", "baseFile", "logFiles", "prevCommit", "path"):
        assert key in stat, key
    assert stat["path"].split("/")[-1].startswith(".")


def test_log_file_holds_a_parquet_data_block_of_the_instant(history):
    path = history["path"]
    first_log = history["update"].metadata.write_stats()[0].path
    blocks = list(read_log_file(load_file_io(path), first_log))
    assert [b.block_type for b in blocks] == [BlockType.PARQUET_DATA]
    assert blocks[0].instant_time == history["update"].instant
    records = blocks[0].records()
    assert records.column_names[:5] == list(META_COLUMNS)
    # Log records name their file group in _hoodie_file_name, as Hudi's append handle does.
    assert set(records.column("_hoodie_file_name").to_pylist()) == {
        history["update"].metadata.write_stats()[0].file_id
    }


def test_snapshot_merges_logs_and_read_optimized_skips_them(history):
    # id 3's update has a lower ordering value than the stored row: it loses at merge time.
    assert history["snapshot_after_update"] == {1: ("a2", 5), 2: ("b", 1), 3: ("c", 1)}
    assert history["ro_after_update"] == {1: ("a", 1), 2: ("b", 1), 3: ("c", 1)}


@pytest.mark.layout_v6
def test_precombine_across_log_files(history):
    # The second log's version of id 1 has ts=3 < 5 in the first log: the first one wins.
    assert history["snapshot_after_update2"][1] == ("a2", 5)
    versions = sorted(parse_log_file_name(os.path.basename(p)).version
                      for p in history["logs_before_compaction"])  # fmt: skip
    assert versions.count(2) >= 1  # the second update made a second log file version


def test_delete_operation_writes_a_delete_block(history):
    delete = history["delete"]
    assert delete.num_deletes == 1
    stat = delete.metadata.write_stats()[0]
    blocks = list(read_log_file(load_file_io(history["path"]), stat.path))
    assert [b.block_type for b in blocks] == [BlockType.DELETE]
    assert [r.record_key for r in blocks[0].deleted_records()] == ["2"]
    assert history["snapshot_after_delete"] == {1: ("a2", 5), 3: ("c", 1)}


@pytest.mark.layout_v6
def test_compaction_folds_logs_into_new_base_files(history):
    (compaction,) = history["compactions"]
    table = history["table"]
    path = history["path"]
    assert history["snapshot_after_compaction"] == history["snapshot_after_delete"]
    assert history["ro_after_compaction"] == history["snapshot_after_compaction"]
    # requested (the plan) -> inflight -> <t>.commit
    names = set(os.listdir(os.path.join(path, ".hoodie")))
    t = compaction.instant
    assert {f"{t}.compaction.requested", f"{t}.compaction.inflight", f"{t}.commit"} <= names
    meta = instant_json(path, f"{t}.commit")
    assert meta["compacted"] is True and meta["operationType"] == "COMPACT"
    plan = read_plan(table.storage, table.meta_client.layout, t)
    compacted = {(op.partition_path, op.file_id) for op in plan.operations}
    written = {(s.partition_path, s.file_id) for s in compaction.metadata.write_stats()}
    assert compacted == written and len(written) == 2
    for stat in compaction.metadata.write_stats():
        assert parse_base_file_name(os.path.basename(stat.path)).instant == t
        assert stat.total_log_files_compacted >= 1
        assert stat.prev_commit == history["insert"].instant
    # The timeline shows the compaction as a completed commit.
    assert table.timeline().completed.instants[-1].action is Action.COMMIT


def test_compacted_base_files_keep_record_commit_times(history):
    (compaction,) = history["compactions"]
    stat = next(s for s in compaction.metadata.write_stats() if s.partition_path.endswith(A))
    data = pq.read_table(os.path.join(history["path"], stat.path)).to_pylist()
    by_id = {r["id"]: r for r in data}
    assert set(by_id) == {1}
    assert by_id[1]["_hoodie_commit_time"] == history["update"].instant
    assert by_id[1]["_hoodie_file_name"] == os.path.basename(stat.path)


def test_compaction_is_idempotent(history):
    assert history["second_compaction"] == []
    assert history["files_after_second_compaction"] == history["files_after_compaction"]


def test_soft_delete_reinsert_and_compaction_of_a_slice_with_only_deletes(spark, tmp_path):
    cfg = mor_config("soft")
    table = HoodieTable.for_write(str(tmp_path / "soft"), cfg)
    table.upsert(df(spark, [(1, "a", A, 1, False), (2, "b", A, 1, False), (3, "c", B, 1, False)]),
                 cfg)  # fmt: skip
    # Soft deletes: id 2's has an older ordering value than stored and loses, as in COW.
    table.upsert(df(spark, [(1, None, A, 2, True), (2, None, A, 0, True),
                            (3, None, B, 2, True)]), cfg)  # fmt: skip
    assert rows(table, spark) == {2: ("b", 1)}
    # Re-insert a deleted key: it returns, in its old file group.
    reinsert = table.upsert(df(spark, [(1, "a-again", A, 3, False)]), cfg)
    assert rows(table, spark) == {1: ("a-again", 3), 2: ("b", 1)}
    assert reinsert.num_updates == 1 and reinsert.num_inserts == 0
    (compaction,) = table.services.compact(spark)
    assert rows(table, spark) == {1: ("a-again", 3), 2: ("b", 1)}
    # Partition B's slice held one row, deleted in a log: it compacts to an empty base file.
    stat_b = next(s for s in compaction.metadata.write_stats() if s.partition_path.endswith(B))
    assert stat_b.num_writes == 0
    assert pq.read_table(os.path.join(table.base_uri, stat_b.path)).num_rows == 0
    assert read_optimized(table, spark) == rows(table, spark)


def test_inline_compaction_after_n_delta_commits(spark, tmp_path):
    cfg = mor_config("inline", **{"hoodie.compact.inline": "true",
                                  "hoodie.compact.inline.max.delta.commits": "2"})  # fmt: skip
    table = HoodieTable.for_write(str(tmp_path / "inline"), cfg)
    first = table.upsert(df(spark, [(1, "a", A, 1, False)]), cfg)
    second = table.upsert(df(spark, [(1, "b", A, 2, False)]), cfg)
    third = table.upsert(df(spark, [(1, "c", A, 3, False)]), cfg)
    assert first.compactions == [] and third.compactions == []
    (compaction,) = second.compactions
    assert "compaction" in second.summary()
    actions = [i.action for i in table.timeline().completed]
    assert actions == [Action.DELTA_COMMIT, Action.DELTA_COMMIT, Action.COMMIT,
                       Action.DELTA_COMMIT]  # fmt: skip
    assert rows(table, spark) == {1: ("c", 3)}
    assert read_optimized(table, spark) == {1: ("b", 2)}


@pytest.mark.layout_v6
def test_writes_during_a_pending_compaction_are_not_lost(spark, tmp_path):
    cfg = mor_config("pending")
    table = HoodieTable.for_write(str(tmp_path / "pending"), cfg)
    table.upsert(df(spark, [(1, "a", A, 1, False), (2, "b", A, 1, False)]), cfg)
    table.upsert(df(spark, [(1, "a2", A, 2, False)]), cfg)
    compactor = Compactor(table.meta_client)
    planned = compactor.schedule()
    assert planned is not None
    # A write while the plan is pending starts the slice the compaction will create.
    during = table.upsert(df(spark, [(2, "b2", A, 2, False), (1, "a3", A, 3, False)]), cfg)
    (stat,) = during.metadata.write_stats()
    log = parse_log_file_name(os.path.basename(stat.path))
    assert log.instant == planned and log.version == 1 and stat.prev_commit == planned
    assert rows(table, spark) == {1: ("a3", 3), 2: ("b2", 2)}
    # Inserts do not go to file groups under compaction.
    insert = table.upsert(df(spark, [(9, "new", A, 1, False)]), cfg)
    (insert_stat,) = insert.metadata.write_stats()
    assert insert_stat.file_id != stat.file_id
    compactor.execute(spark, planned)
    assert rows(table, spark) == {1: ("a3", 3), 2: ("b2", 2), 9: ("new", 1)}
    # The compacted base file holds the plan's state; the later log file sits on top of it.
    assert read_optimized(table, spark) == {1: ("a2", 2), 2: ("b", 1), 9: ("new", 1)}
    (after,) = table.services.compact(spark)
    assert after.instant > planned
    assert read_optimized(table, spark) == rows(table, spark)


@pytest.mark.layout_v6
def test_tagging_finds_keys_that_only_live_in_log_files(spark, tmp_path):
    cfg = mor_config("logonly")
    path = str(tmp_path / "logonly")
    table = HoodieTable.for_write(path, cfg)
    first = table.upsert(df(spark, [(1, "a", A, 1, False)]), cfg)
    # A file group that exists only as a log file (Hudi writes these when its index can see
    # log files): key 7 lives there, written by the completed first instant.
    file_id = "00000000-0000-0000-0000-000000000007-0"
    partition = first.metadata.write_stats()[0].partition_path
    avro = add_meta_fields(to_avro_schema(table.schema(), table.name))
    import pyarrow as pa

    record = pa.table(
        {
            "_hoodie_commit_time": [first.instant],
            "_hoodie_commit_seqno": [f"{first.instant}_0_9"],
            "_hoodie_record_key": ["7"],
            "_hoodie_partition_path": [partition],
            "_hoodie_file_name": [file_id],
            "id": pa.array([7], pa.int32()),
            "name": ["log-only"],
            "dt": [A],
            "ts": pa.array([1], pa.int64()),
            "_hoodie_is_deleted": [False],
        }
    )
    log_name = f".{file_id}_{first.instant}.log.1_0-0-0"
    load_file_io(path).write_bytes(
        f"{partition}/{log_name}", parquet_data_block(record, first.instant, avro)
    )
    assert rows(table, spark) == {1: ("a", 1), 7: ("log-only", 1)}
    update = table.upsert(df(spark, [(7, "updated", A, 2, False)]), cfg)
    assert (update.num_updates, update.num_inserts) == (1, 0)
    (stat,) = update.metadata.write_stats()
    assert stat.file_id == file_id
    assert parse_log_file_name(os.path.basename(stat.path)).version == 2
    assert rows(table, spark) == {1: ("a", 1), 7: ("updated", 2)}


def test_table_type_cannot_change_without_full_refresh(spark, tmp_path):
    cfg = mor_config("typed")
    table = HoodieTable.for_write(str(tmp_path / "typed"), cfg)
    table.upsert(df(spark, [(1, "a", A, 1, False)]), cfg)
    cow = WriteConfig.build("typed", record_key="id", partition_path="dt",
                            precombine_field="ts", table_type=COPY_ON_WRITE)  # fmt: skip
    with pytest.raises(TableIdentityError, match="table_type=MERGE_ON_READ.*rebuild the table"):
        table.upsert(df(spark, [(1, "b", A, 2, False)]), cow)
    # An overwrite (dbt's --full-refresh) rebuilds it as copy-on-write.
    table.overwrite(df(spark, [(1, "b", A, 2, False)]), cow)
    assert HoodieTable.open(table.base_uri).properties.table_type == COPY_ON_WRITE
    assert rows(HoodieTable.open(table.base_uri), spark) == {1: ("b", 2)}


def test_compaction_of_a_copy_on_write_table_is_an_error(spark, tmp_path):
    cfg = WriteConfig.build("cow", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(str(tmp_path / "cow"), cfg)
    with pytest.raises(InvalidConfigError, match="only merge-on-read"):
        table.services.compact(spark)


def test_mixed_batch_fills_small_file_groups_without_logs(spark, tmp_path):
    cfg = mor_config("small")
    table = HoodieTable.for_write(str(tmp_path / "small"), cfg)
    table.upsert(df(spark, [(1, "a", A, 1, False)]), cfg)
    # Inserts into a partition whose only slice has no logs: Hudi rewrites that small file
    # group (new base file) instead of starting a new one.
    mixed = table.upsert(df(spark, [(1, "a2", A, 2, False), (2, "b", A, 1, False)]), cfg)
    (stat,) = mixed.metadata.write_stats()
    assert parse_base_file_name(os.path.basename(stat.path)) is not None
    assert (stat.num_update_writes, stat.num_inserts) == (1, 1)
    # Now the group has no logs still; an update-only batch appends a log.
    update = table.upsert(df(spark, [(2, "b2", A, 2, False)]), cfg)
    (log_stat,) = update.metadata.write_stats()
    assert parse_log_file_name(os.path.basename(log_stat.path)) is not None
    assert {k: user_columns(v)["name"] for k, v in snapshot(table, spark).items()} == {
        "1": "a2",
        "2": "b2",
    }


@pytest.mark.layout_v6
def test_time_travel_and_incremental_reads_see_log_files(spark, history):
    table = history["table"]
    register(spark)

    def read(**options):
        reader = spark.read.format("hoodie")
        for key, value in options.items():
            reader = reader.option(key, value)
        return {r["id"]: (r["name"], r["ts"]) for r in reader.load(table.base_uri).collect()}

    assert read(**{"as.of.instant": history["insert"].instant}) == {
        1: ("a", 1), 2: ("b", 1), 3: ("c", 1),
    }  # fmt: skip
    assert read(**{"as.of.instant": history["update"].instant}) == history["snapshot_after_update"]
    # What changed after the insert: id 1's winning version (id 3's update lost; deletes are
    # not rows). The compaction in between rewrote files but kept commit times.
    changes = read(
        **{
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": history["insert"].instant,
        }
    )
    assert changes == {1: ("a2", 5)}


def test_history_counts_what_each_write_changed(history):
    """`hoodie_timeline`'s rows: the records each write inserted, updated and deleted, beside
    Apache Hudi's numWrites (the records in the files it wrote)."""
    rows = {row["instant"]: row for row in history["table"].history()}
    insert, delete = rows[history["insert"].instant], rows[history["delete"].instant]
    assert (insert["inserts"], insert["updates"], insert["deletes"]) == (3, 0, 0)
    assert insert["rows_written"] == 3
    assert (delete["inserts"], delete["updates"], delete["deletes"]) == (0, 0, 1)

"""The metadata table's `record_index` partition, written by our actions
(`hoodie/transaction/record_index.py`): after every action kind (insert, upsert, delete, a
global index's move, insert overwrite, compaction, clean, rollback of a completed commit,
restore to a savepoint, the metadata table's compaction) it equals {key: (partition, file id)}
of the table as read (`listing_compare.assert_record_index_whole`), on version 6
copy-on-write and version 8 merge-on-read, by the driver path (few keys) and the Spark job.
Apache Hudi reading and writing on it: tests/judge/test_hudi_uses_our_record_index.py.
"""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from killed_writes import upsert_killed_at
from listing_compare import assert_metadata_table_whole, assert_record_index_whole

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.exceptions import InvalidConfigError
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import encode_metadata_record
from hoodie.read.datasource import register
from hoodie.table_metadata import TableMetadata
from hoodie.table_services import metadata_services
from hoodie.table_services.metadata_services import (
    MetadataServicesConfig,
    run_metadata_table_services,
)
from hoodie.timeline import Action
from hoodie.transaction import metadata_writer, record_index
from hoodie.write import executor

pytestmark = pytest.mark.spark

RECORD_INDEX = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "4",
    "hoodie.cleaner.commits.retained": "2",
    "hoodie.compact.inline.max.delta.commits": "2",
}
SCHEMA = "id string, dt string, ts long, n int"


def config(version: int, table_type: str, **options: str) -> WriteConfig:
    merged = {**RECORD_INDEX, "hoodie.write.table.version": str(version), **options}
    return WriteConfig.build("ri", "id", "dt", "ts", table_type=table_type, options=merged)


def frame(spark, ids, step: int, moved: frozenset[int] = frozenset()):
    rows = [(f"k{i:04d}", "ab"[(i + (i in moved)) % 2], step, i * 10 + step) for i in ids]
    return spark.createDataFrame(rows, SCHEMA)


@pytest.mark.parametrize(
    ("version", "table_type", "path"),
    [
        # (make test's driver path: the soft-delete test's version 6 case)
        pytest.param(6, props.COPY_ON_WRITE, "driver", marks=pytest.mark.hudi_full),
        (8, props.MERGE_ON_READ, "spark"),
        pytest.param(6, props.COPY_ON_WRITE, "spark", marks=pytest.mark.hudi_full),
        pytest.param(8, props.MERGE_ON_READ, "driver", marks=pytest.mark.hudi_full),
        pytest.param(6, props.MERGE_ON_READ, "spark", marks=pytest.mark.hudi_full),
        pytest.param(8, props.COPY_ON_WRITE, "driver", marks=pytest.mark.hudi_full),
    ],
)
def test_every_action_keeps_the_record_index_whole(
    spark, tmp_path, monkeypatch, version, table_type, path
):
    register(spark)
    location = str(tmp_path / "t")
    jobs, key_files = [], []
    if path == "spark":
        monkeypatch.setattr(record_index, "DRIVER_KEYS", -1)
        job = metadata_writer.write_with_spark
        monkeypatch.setattr(metadata_writer, "write_with_spark",
                            lambda *a, **k: jobs.append(1) or job(*a, **k))  # fmt: skip
    else:  # the driver path must never start a job of its own
        monkeypatch.setattr(metadata_writer, "write_with_spark", _no_job)
    handed_over = record_index.RecordIndexChanges.of_stats.__func__

    def of_stats(cls, instant, stats):
        stats = list(stats)
        key_files.extend(s.keys_file for s in stats if s.keys_file)
        return handed_over(cls, instant, stats)

    monkeypatch.setattr(record_index.RecordIndexChanges, "of_stats", classmethod(of_stats))
    cfg = config(version, table_type)
    moving = config(
        version,
        table_type,
        **{
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.simple.index.update.partition.path": "true",
        },
    )
    table = HoodieTable.for_write(location, cfg)
    meta = table.meta_client
    sizes = {}

    def check(step: str) -> None:
        sizes[step] = assert_record_index_whole(spark, meta, step)
        assert_metadata_table_whole(HoodieTableMetaClient.load(meta.storage), step)

    # 600 keys: 300 a file group in each partition, beyond what a stat carries (key files)
    table.upsert(frame(spark, range(600), 1), cfg)
    check("insert")
    table.upsert(frame(spark, range(500, 900), 2), cfg)  # 100 updates, 300 inserts
    check("upsert")
    table.delete(frame(spark, range(0, 40), 0), cfg)
    check("delete")
    moved = frozenset(range(560, 580))
    table.upsert(frame(spark, [*moved, *range(900, 910)], 3, moved), moving)
    check("global move")
    savepoint = table.services.savepoint(config=cfg)
    table.upsert(frame(spark, range(850, 950), 4), cfg)
    check("upsert after the savepoint")
    table.services.rollback(config=cfg)
    check("rollback of a completed commit")
    assert sizes["rollback of a completed commit"] == sizes["global move"]
    table.upsert(frame(spark, range(950, 990), 5), cfg)
    table.delete(frame(spark, range(40, 60), 0), cfg)
    check("more writes")
    table.services.restore(savepoint.instant, cfg)
    check("restore")
    assert sizes["restore"] == sizes["global move"]
    table.overwrite(frame(spark, range(2000, 2300), 6), cfg)
    check("insert overwrite table")
    assert sizes["insert overwrite table"] == 300
    for step in range(7, 11):  # compactions, cleans and the metadata table's compaction
        table.upsert(frame(spark, range(2250 + step, 2400, 7), step), cfg)
        check(f"upsert {step}")
    timeline = meta.timeline().completed
    assert any(i.action is Action.CLEAN for i in timeline)
    if table_type == props.MERGE_ON_READ:
        assert any(i.action is Action.COMMIT for i in timeline)  # a compaction
    metadata = TableMetadata.open(HoodieTableMetaClient.load(meta.storage))
    assert metadata is not None
    assert any(i.action is Action.COMMIT for i in metadata.timeline.completed)
    assert all(s.base_file is not None for s in metadata.file_slices("record_index"))
    # write tasks handed over keys in key files (more than a stat carries), none left behind
    assert key_files
    assert not list((tmp_path / "t" / ".hoodie" / ".temp").rglob("*.parquet"))
    # every action with record index changes ran its job (writes, build, rollback, restore)
    assert len(jobs) >= (14 if path == "spark" else 0)


def _no_job(*args, **kwargs):
    raise AssertionError("a small action started a record index job")


@pytest.mark.hudi_full  # a child process and its JVM a case: ~1.5 minutes each
@pytest.mark.parametrize(
    ("point", "version"),
    [
        ("task.record_index_file.written", 8),
        ("metadata_table.log_written", 6),
        ("task.record_index_file.written", 6),
        ("metadata_table.log_written", 8),
        ("task.record_index_keys.written", 8),
        ("metadata_table.init_written", 8),
    ],
    ids=str,
)
def test_a_crash_around_the_record_index_files_leaves_no_record_read(
    spark, tmp_path, point, version
):
    """Killed in a Spark task that wrote a record index log file, with the job's files all
    written, in a write task that wrote its key file, or while the partition is built: the
    record index (read before any other write) is still the table's, which reads as before;
    the next write removes the failed delta commit's files and leaves it whole."""
    register(spark)
    path = str(tmp_path / "t")
    options = {**RECORD_INDEX, "hoodie.write.table.version": str(version),
               "hoodie.compact.inline": "false"}  # fmt: skip
    first = dict(options)
    if point == "metadata_table.init_written":
        first["hoodie.metadata.record.index.enable"] = "false"
    schema = "id string, dt string, ts long, v string"

    def write(rows: list[tuple], opts: dict[str, str]) -> None:
        cfg = WriteConfig.build("mdt", "id", "dt", "ts", table_type=props.MERGE_ON_READ,
                                options=opts)  # fmt: skip
        HoodieTable.for_write(path, cfg).upsert(spark.createDataFrame(rows, schema), cfg)

    keys = [(f"{i}", "ab"[i % 2], 1, "x") for i in range(10, 400)]  # key files in the tasks
    write(keys, first)
    meta = HoodieTableMetaClient.open(path)
    before = sorted(spark.read.format("hoodie").load(path).toArrow().to_pylist(), key=str)
    if point != "metadata_table.init_written":
        assert_record_index_whole(spark, meta, "before")
    prelude = "from hoodie.transaction import record_index; record_index.DRIVER_KEYS = -1"
    # 1 update, 300 inserts into partition c: a key file from its write task
    crashing = [("10", "a", 5, "crash"), *((f"{i}", "c", 5, "new") for i in range(500, 800))]
    assert upsert_killed_at(path, options, point, prelude, crashing) != 0
    after = sorted(spark.read.format("hoodie").load(path).toArrow().to_pylist(), key=str)
    assert after == before
    if point != "metadata_table.init_written":
        assert_record_index_whole(spark, meta, f"killed at {point}")
    write([("4", "d", 6, "after"), ("12", "a", 6, "z")], options)
    meta = HoodieTableMetaClient.open(path)
    assert "record_index" in props.metadata_partitions(meta.properties.extra)
    assert_record_index_whole(spark, meta, f"after {point}")
    assert_metadata_table_whole(meta, point)
    metadata = TableMetadata.open(meta)
    assert metadata is not None and not list(metadata.timeline.pending)


def test_the_metadata_tables_compaction_of_the_record_index_in_spark_tasks_is_the_drivers(
    spark, tmp_path, monkeypatch
):
    """A large record index is compacted in Spark tasks, a file group a task: the same base
    files, byte for byte, as the driver writes (version 6: the compaction's instant is the
    latest delta commit's, `<t>001`, so two copies of one table compact to the same names)."""
    register(spark)
    path = tmp_path / "t"
    cfg = config(6, props.MERGE_ON_READ, **{"hoodie.metadata.compact.max.delta.commits": "100"})
    table = HoodieTable.for_write(str(path), cfg)
    table.upsert(frame(spark, range(300), 1), cfg)
    table.upsert(frame(spark, range(200, 400), 2), cfg)
    table.delete(frame(spark, range(0, 30), 0), cfg)
    # the record index's slices merge without decoding, as decoding them merges
    meta = HoodieTableMetaClient.open(str(path))
    metadata = TableMetadata.open(meta)
    compactor = metadata_services.SliceCompactor(metadata, 6, "x")
    slices = metadata.file_slices("record_index")
    assert sum(len(s.log_files) for s in slices) > 10
    for file_slice in slices:
        decoded = sorted((k.encode(), encode_metadata_record(r, 6))
                         for k, r in metadata.read_file_slice(file_slice).items())  # fmt: skip
        assert compactor._raw_entries(file_slice) == decoded
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    services = MetadataServicesConfig(compaction_delta_commits=1)
    driver = run_metadata_table_services(HoodieTableMetaClient.open(str(path)), services)
    tasks = []
    real = metadata_services.SliceCompactor.in_tasks
    monkeypatch.setattr(record_index, "DRIVER_BYTES", -1)
    monkeypatch.setattr(metadata_services.SliceCompactor, "in_tasks",
                        lambda self, *a: tasks.append(1) or real(self, *a))  # fmt: skip
    in_spark = run_metadata_table_services(HoodieTableMetaClient.open(str(copy)), services,
                                           spark=spark)  # fmt: skip
    assert tasks and driver.compaction is not None and driver.compaction == in_spark.compaction
    ours = sorted((path / ".hoodie/metadata/record_index").glob(f"*{driver.compaction}.hfile"))
    theirs = sorted((copy / ".hoodie/metadata/record_index").glob(f"*{driver.compaction}.hfile"))
    assert len(ours) == 10 and [p.name for p in ours] == [p.name for p in theirs]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(ours, theirs, strict=True))
    for root in (path, copy):
        assert_record_index_whole(spark, HoodieTableMetaClient.open(str(root)), str(root))


def test_turned_off_it_goes_unset_it_stays_turned_on_it_is_built_from_the_table(spark, tmp_path):
    register(spark)
    path = tmp_path / "t"
    on = config(8, props.COPY_ON_WRITE)
    unset = WriteConfig.build("ri", "id", "dt", "ts", options={"hoodie.write.table.version": "8"})
    off = config(8, props.COPY_ON_WRITE, **{"hoodie.metadata.record.index.enable": "false"})
    table = HoodieTable.for_write(str(path), on)

    def partitions() -> list[str]:
        meta = HoodieTableMetaClient.open(str(path))
        return props.metadata_partitions(meta.properties.extra)

    table.upsert(frame(spark, range(50), 1), on)
    table.upsert(frame(spark, range(40, 60), 2), unset)  # kept: unset keeps the table's
    assert "record_index" in partitions()
    assert_record_index_whole(spark, HoodieTableMetaClient.open(str(path)), "kept")
    table.upsert(frame(spark, range(60, 70), 3), off)
    assert "record_index" not in partitions()
    assert not (path / ".hoodie" / "metadata" / "record_index").exists()
    table.upsert(frame(spark, range(70, 80), 4), unset)
    assert "record_index" not in partitions()
    table.delete(frame(spark, range(0, 5), 0), on)  # built from the table, then this delete
    assert "record_index" in partitions()
    assert assert_record_index_whole(spark, HoodieTableMetaClient.open(str(path)), "built") == 75


@pytest.mark.parametrize("index", ["BUCKET", "SIMPLE"])
def test_merge_on_read_log_inserts_and_soft_deletes_keep_it_whole(spark, tmp_path, index):
    """Keys new to the table that a merge-on-read write puts in log files (the BUCKET index
    sends every record of a bucket to its file group's log), soft deletes
    (`_hoodie_is_deleted`), and a key a log deleted coming back as an "update" (SIMPLE tags by
    the slice's keys, the base file's included): the record index stays the table's."""
    register(spark)
    path = str(tmp_path / "t")
    cfg = config(8, props.MERGE_ON_READ, **{"hoodie.index.type": index,
                                            "hoodie.bucket.index.num.buckets": "2",
                                            "hoodie.compact.inline": "false"})  # fmt: skip
    schema = f"{SCHEMA}, _hoodie_is_deleted boolean"

    def write(ids, step: int, deleted: bool = False) -> None:
        rows = [(f"k{i:04d}", "ab"[i % 2], step, i, deleted) for i in ids]
        HoodieTable.for_write(path, cfg).upsert(spark.createDataFrame(rows, schema), cfg)
        assert_record_index_whole(spark, HoodieTableMetaClient.open(path), f"{index} {step}")

    write(range(0, 40), 1)
    write(range(30, 70), 2)  # 10 updates, 30 inserts: into logs under BUCKET
    write(range(0, 10), 3, deleted=True)  # soft deletes into logs
    write([*range(5, 15), 80], 4)  # 5 deleted keys back (tagged as updates by SIMPLE), 1 new
    meta = HoodieTableMetaClient.open(path)
    view = meta.file_system_view()
    assert any(g.latest_slice.log_files for g in view.file_groups() if g.latest_slice)


def test_a_table_without_meta_fields_is_refused_a_record_index(spark, tmp_path):
    """Its files hold no key column to build the record index from (an Apache Hudi table
    written with hoodie.populate.meta.fields=false): refused naming the option; nothing is
    left half built, and the write without it goes on."""
    register(spark)
    path = tmp_path / "t"
    plain = config(8, props.COPY_ON_WRITE, **{"hoodie.metadata.record.index.enable": "false"})
    HoodieTable.for_write(str(path), plain).upsert(frame(spark, range(10), 1), plain)
    properties = path / ".hoodie" / "hoodie.properties"
    text = properties.read_text()
    assert "hoodie.populate.meta.fields=true" in text
    properties.write_text(text.replace("hoodie.populate.meta.fields=true",
                                       "hoodie.populate.meta.fields=false"))  # fmt: skip
    on = config(8, props.COPY_ON_WRITE)
    with pytest.raises(InvalidConfigError, match="hoodie.populate.meta.fields=false"):
        HoodieTable.for_write(str(path), on).upsert(frame(spark, range(10, 20), 2), on)
    meta = HoodieTableMetaClient.open(str(path))
    assert "record_index" not in props.metadata_partitions(meta.properties.extra)
    assert not meta.timeline().pending


@pytest.mark.parametrize(
    ("version", "index", "path"),
    [
        (6, "SIMPLE", "driver"),
        # (make test's differential test draws RECORD_INDEX with a losing delete too)
        pytest.param(8, "RECORD_INDEX", "spark", marks=pytest.mark.full),
        pytest.param(8, "SIMPLE", "driver", marks=pytest.mark.full),
        pytest.param(6, "RECORD_INDEX", "spark", marks=pytest.mark.full),
    ],
)
def test_merge_on_read_soft_deletes_by_ordering_value_keep_it_the_tables(
    spark, tmp_path, monkeypatch, version, index, path
):
    """Soft deletes (`_hoodie_is_deleted`) on merge-on-read carry their ordering value into
    the log; one smaller than the stored version's loses when the slice is merged (the record
    stays), so the record index keeps the key; one that is larger removes it; an update whose
    ordering value loses neither moves nor duplicates the key. Before the fix the losing
    delete removed the key, and the next upsert of it under RECORD_INDEX inserted it again in
    another file group."""
    register(spark)
    if path == "spark":
        monkeypatch.setattr(record_index, "DRIVER_KEYS", -1)
    location = str(tmp_path / "t")
    cfg = config(version, props.MERGE_ON_READ, **{"hoodie.index.type": index,
                                                  "hoodie.compact.inline": "false"})  # fmt: skip
    schema = f"{SCHEMA}, _hoodie_is_deleted boolean"

    def write(ids, ts: int, deleted: bool = False) -> None:
        rows = [(f"k{i:04d}", "ab"[i % 2], ts, i, deleted) for i in ids]
        HoodieTable.for_write(location, cfg).upsert(spark.createDataFrame(rows, schema), cfg)
        assert_record_index_whole(spark, HoodieTableMetaClient.open(location), f"ts {ts}")

    def live() -> dict[str, int]:
        rows = spark.read.format("hoodie").load(location).select("id", "ts").collect()
        return {r.id: r.ts for r in rows}

    write(range(0, 300), 10)
    write(range(0, 20), 5, deleted=True)  # loses: ordering 5 < 10, the records stay
    assert len(live()) == 300
    write(range(20, 30), 15, deleted=True)  # wins: ordering 15 > 10
    write([*range(0, 20, 2), *range(100, 110)], 3)  # updates that lose: stay where they are
    got = live()
    assert sorted(got) == [f"k{i:04d}" for i in [*range(20), *range(30, 300)]]
    assert {got[f"k{i:04d}"] for i in range(100, 110)} == {10}
    # deleted keys written again: by SIMPLE's tagging an update in their file group, which at
    # 12 loses to the delete at 15 logged there; by RECORD_INDEX's, an insert
    write(range(20, 25), 12)
    write(range(25, 30), 16)
    got = live()
    back = range(20, 30) if index == "RECORD_INDEX" else range(25, 30)
    assert sorted(got) == [f"k{i:04d}" for i in [*range(20), *back, *range(30, 300)]]
    # deletes that win and deletes that lose in one write; then every key written again wins
    write([*range(0, 10), *range(40, 50)], 12, deleted=True)
    write([*range(0, 5), *range(10, 20), *range(50, 60)], 4, deleted=True)
    assert sorted(set(got) - set(live())) == [f"k{i:04d}" for i in [*range(10), *range(40, 50)]]
    write(range(0, 60), 20)
    got = live()
    assert len(got) == 300 and {got[f"k{i:04d}"] for i in range(60)} == {20}


@pytest.mark.parametrize(
    ("version", "table_type", "path"),
    [
        pytest.param(6, props.COPY_ON_WRITE, "driver", marks=pytest.mark.full),
        (8, props.MERGE_ON_READ, "spark"),
        pytest.param(8, props.COPY_ON_WRITE, "spark", marks=pytest.mark.full),
        pytest.param(6, props.MERGE_ON_READ, "driver", marks=pytest.mark.full),
    ],
)
def test_a_write_whose_tasks_recorded_no_keys_keeps_it_whole(
    spark, tmp_path, monkeypatch, version, table_type, path
):
    """A record index another writer built while a write ran: the write's tasks recorded no
    keys (simulated: they are told the table has none), so its commit reads its files. A
    copy-on-write rewrite's deleted keys and moves out (keys the previous slice held and the
    new one does not), a merge-on-read log's deletes, a soft delete that loses by its
    ordering value: the record index stays the table's. Before the fix a copy-on-write
    delete left the deleted keys in it."""
    register(spark)
    if path == "spark":
        monkeypatch.setattr(record_index, "DRIVER_KEYS", -1)
    location = str(tmp_path / "t")
    cfg = config(version, table_type, **{"hoodie.compact.inline": "false"})
    moving = config(version, table_type, **{"hoodie.index.type": "GLOBAL_SIMPLE",
                                            "hoodie.simple.index.update.partition.path": "true",
                                            "hoodie.compact.inline": "false"})  # fmt: skip
    table = HoodieTable.for_write(location, cfg)
    table.upsert(frame(spark, range(300), 1), cfg)
    real = executor.file_indexing
    monkeypatch.setattr(executor, "file_indexing",
                        lambda *a: replace(real(*a), record_index=False))  # fmt: skip

    def check(step: str) -> None:
        assert_record_index_whole(spark, HoodieTableMetaClient.open(location), step)

    seen = []

    def unrecorded(stats):
        seen.extend(record_index.unrecorded(stats))
        return record_index.unrecorded(stats)

    monkeypatch.setattr(metadata_writer, "unrecorded", unrecorded)
    table.delete(frame(spark, range(0, 40), 0), cfg)
    check("delete")
    moved = frozenset(range(100, 120))
    table.upsert(frame(spark, [*moved, *range(290, 320)], 2, moved), moving)
    check("global move, updates and inserts")
    schema = f"{SCHEMA}, _hoodie_is_deleted boolean"
    rows = [(f"k{i:04d}", "ab"[i % 2], 0 if i < 250 else 9, i, True) for i in range(240, 260)]
    table.upsert(spark.createDataFrame(rows, schema), cfg)  # ordering 0 loses to 1, 9 wins
    check("soft deletes")
    got = {r.id for r in spark.read.format("hoodie").load(location).select("id").collect()}
    assert got == {f"k{i:04d}" for i in [*range(40, 250), *range(260, 320)]}
    assert seen and all(s.index_keys is None for s in seen)

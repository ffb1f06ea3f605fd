"""The metadata table's `column_stats` and `bloom_filters` partitions, written by our actions
(`hoodie/transaction/metadata_indexes.py`): after every write, compaction, clean and the MDT's
own compaction, each file storage holds has the records its rows call for and no deleted file
has any left (`listing_compare.assert_indexes_whole`), filtered reads skip files by them and
return what an unfiltered read filtered in Python returns; turned on later they are built from
the files, turned off they go. Apache Hudi reading them: tests/judge/test_hudi_reads_our_indexes.py.
"""

from __future__ import annotations

import datetime as dt
import decimal
import operator

import pytest
from killed_writes import upsert_killed_at
from listing_compare import (
    assert_indexes_whole,
    assert_metadata_table_whole,
    assert_reads_list_alike,
    deflated_with,
    storage_listing,
)
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.exceptions import InvalidConfigError
from hoodie.hfile import JAVA_DEFLATE, RUN_LENGTH_DEFLATE, HFileReader
from hoodie.logformat import BlockType, read_log_file
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.naming import parse_log_file_name
from hoodie.read import native
from hoodie.read.datasource import register
from hoodie.table_metadata import METADATA_FOLDER, TableMetadata
from hoodie.timeline import Action
from hoodie.transaction import metadata_indexes, metadata_writer
from hoodie.transaction.failed_writes import FailedWritesPolicy
from hoodie.transaction.metadata_indexes import IndexRecordMaker
from hoodie.transaction.metadata_writer import plus_millis
from hoodie.transaction.transaction import Transaction

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

INDEXES = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.compact.inline.max.delta.commits": "2",
}
SCHEMA = (
    "id string, dt string, ts long, n int, x double, day date, at timestamp, "
    "amount decimal(10,2), ok boolean"
)
DAY0 = dt.date(2024, 1, 1)


def config(version: int, table_type: str, **options: str) -> WriteConfig:
    merged = {**INDEXES, "hoodie.write.table.version": str(version), **options}
    return WriteConfig.build("idx", "id", "dt", "ts", table_type=table_type, options=merged)


def rows(ids: list[int], step: int) -> list[tuple]:
    return [
        (
            f"k{i:03d}", "ab"[i % 2], step, None if i % 7 == 0 else i * 10 + step, i * 1.5,
            DAY0 + dt.timedelta(days=i), dt.datetime(2024, 1, 1, 0, 0, i % 60),
            decimal.Decimal(i) / 100, i % 3 == 0,
        )
        for i in ids
    ]  # fmt: skip


def upsert(spark, path: str, cfg: WriteConfig, ids: list[int], step: int) -> None:
    frame = spark.createDataFrame(rows(ids, step), SCHEMA)
    HoodieTable.for_write(path, cfg).upsert(frame, cfg)


def delete(spark, path: str, cfg: WriteConfig, ids: list[int]) -> None:
    frame = spark.createDataFrame(rows(ids, 0), SCHEMA)
    HoodieTable.for_write(path, cfg).delete(frame, cfg)


FILTERS = [
    [("n", "=", 125)],
    [("x", ">", 60.0)],
    [("day", "<", DAY0 + dt.timedelta(days=3))],
    [("id", "=", "k031")],
    [("n", "=", 99999)],
]
COMPARE = {"=": operator.eq, "<": operator.lt, ">": operator.gt}


def check_reads(spark, path: str, step: str, monkeypatch) -> int:
    """Every filter reads what the unfiltered read filtered in Python; the skipped slices
    the metadata table decided, summed."""
    reports = []
    real = native.skip_slices

    def recorded(*args, **kwargs):
        kept, report = real(*args, **kwargs)
        reports.append(report)
        return kept, report

    monkeypatch.setattr(native, "skip_slices", recorded)
    table = HoodieTable.open(path)
    everything = [r.asDict() for r in table.read(spark).collect()]
    by_metadata = 0
    for filters in FILTERS:
        reports.clear()
        got = sorted(r["id"] for r in table.read(spark, filters=filters).collect())
        want = sorted(
            r["id"] for r in everything
            if all(r[c] is not None and COMPARE[op](r[c], v) for c, op, v in filters)
        )  # fmt: skip
        assert got == want, (step, filters)
        by_metadata += sum(report.by_metadata for report in reports)
    return by_metadata


@pytest.mark.parametrize(
    ("version", "table_type", "made"),
    [
        pytest.param(6, props.COPY_ON_WRITE, "driver", marks=pytest.mark.hudi_full),
        (8, props.MERGE_ON_READ, "driver"),
        # every commit's index records made by a Spark job (`metadata_indexes.DRIVER_READS`;
        # make test has the job's files equal the driver's: test_metadata_index_jobs.py)
        pytest.param(6, props.MERGE_ON_READ, "tasks", marks=pytest.mark.full),
        pytest.param(8, props.COPY_ON_WRITE, "tasks", marks=pytest.mark.hudi_full),
    ],
)
def test_every_action_keeps_the_indexes_whole(
    spark, tmp_path, monkeypatch, version, table_type, made
):
    register(spark)
    path = str(tmp_path / "t")
    cfg = config(version, table_type)
    skipped = 0
    jobs = []
    if made == "tasks":
        monkeypatch.setattr(metadata_indexes, "DRIVER_READS", 0)
        real = metadata_indexes.write_index_files

        def counted(*args, **kwargs):
            jobs.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(metadata_writer, "write_index_files", counted)

    def read_back(*args, **kwargs):
        raise AssertionError("the commit read a written file back: its task recorded nothing")

    # the write tasks hand each file's ranges over: the driver reads no file back but a few
    # base files' footers, for their bloom filters (never handed over: too large)
    for name in ("_base_file_ranges", "_log_file_ranges"):
        monkeypatch.setattr(IndexRecordMaker, name, read_back)
    steps = [
        ("insert", lambda s: upsert(spark, path, cfg, list(range(0, 40)), s)),
        ("insert more", lambda s: upsert(spark, path, cfg, list(range(40, 60)), s)),
        ("update", lambda s: upsert(spark, path, cfg, [1, 2, 3, 41], s)),
        ("delete", lambda s: delete(spark, path, cfg, [4, 5, 42])),
        ("update again", lambda s: upsert(spark, path, cfg, [6, 7, 8, 60], s)),
        ("update a third time", lambda s: upsert(spark, path, cfg, [9, 10, 43], s)),
    ]
    for step, (name, act) in enumerate(steps, start=1):
        act(step)
        meta = HoodieTableMetaClient.open(path)
        assert_metadata_table_whole(meta, name)
        assert_indexes_whole(meta, name)
        skipped += check_reads(spark, path, name, monkeypatch)
        # hudi-rs lists a version 8 table through the metadata table's files partition
        assert_same_rows(name, "_hoodie_record_key", read_ours(spark, path),
                         read_theirs(hudi.HudiTable(path)))  # fmt: skip
    meta = HoodieTableMetaClient.open(path)
    partitions = props.metadata_partitions(meta.properties.extra)
    assert set(partitions) == {"files", "column_stats", "bloom_filters"}
    assert_deflated_as_meant(meta)
    timeline = meta.timeline()
    assert any(i.action.value == "clean" for i in timeline.completed), "no clean ran"
    if table_type == props.MERGE_ON_READ:
        assert any(i.action.value == "commit" for i in timeline.completed), "no compaction ran"
    assert skipped > 0, "no slice was skipped by the metadata table"
    if made == "tasks":  # each commit's that wrote a base file (a bloom filter to read)
        commits = [
            i
            for i in timeline.completed
            if i.action.value in ("commit", "deltacommit")
            and any(
                s.path.endswith(".parquet") for s in meta.commit_metadata(i).write_stats() if s.path
            )
        ]
        assert len(jobs) == len(commits) >= 5, (len(jobs), commits)


def assert_deflated_as_meant(meta: HoodieTableMetaClient) -> None:
    """The bloom_filters partition's HFiles (base files and log blocks) are deflated
    run-length, the others as Java's default (`metadata_writer.deflate_of`)."""
    storage = meta.storage.subfolder(METADATA_FOLDER)
    seen = set()
    for partition in ("files", "column_stats", "bloom_filters"):
        for info in storage.list_files(partition):
            if info.name.endswith(".hfile"):
                hfiles = [storage.read_bytes(info.relative_path)]
            elif parse_log_file_name(info.name) is not None:
                blocks = read_log_file(storage, info.relative_path)
                hfiles = [b.content for b in blocks if b.block_type is BlockType.HFILE_DATA]
            else:
                continue
            for hfile in hfiles:
                if not HFileReader(hfile, info.name).data_index:
                    continue  # no data block (a file group no key maps to)
                if partition == "bloom_filters":  # filters of ~431 KB: the two differ
                    assert deflated_with(hfile, RUN_LENGTH_DEFLATE), info.name
                    assert not deflated_with(hfile, JAVA_DEFLATE), info.name
                else:
                    assert deflated_with(hfile, JAVA_DEFLATE), info.name
                seen.add((partition, info.name.endswith(".hfile")))
    assert ("bloom_filters", True) in seen and ("bloom_filters", False) in seen, seen


def test_indexes_are_built_from_the_files_and_dropped(spark, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    files_only = config(8, props.COPY_ON_WRITE, **{
        "hoodie.metadata.index.column.stats.enable": "false",
        "hoodie.metadata.index.bloom.filter.enable": "false",
    })  # fmt: skip
    for step in range(1, 4):
        upsert(spark, path, files_only, list(range(step * 10, step * 10 + 15)), step)
    meta = HoodieTableMetaClient.open(path)
    assert props.metadata_partitions(meta.properties.extra) == ("files",)
    # turned on: built from the footers of the latest slices, then kept by the write
    on = config(
        8,
        props.COPY_ON_WRITE,
        **{"hoodie.cleaner.commits.retained": "10", "hoodie.bloom.index.filter.type": "SIMPLE"},
    )
    upsert(spark, path, on, [11, 12, 50], 4)
    meta = HoodieTableMetaClient.open(path)
    metadata = TableMetadata.open(meta)
    assert metadata is not None
    kinds = {r.filter_type for r in metadata.read_partition("bloom_filters").values()}
    assert kinds == {"DYNAMIC_V0", "SIMPLE"}, kinds  # built from footers; this write's SIMPLE
    meta = HoodieTableMetaClient.open(path)
    assert set(props.metadata_partitions(meta.properties.extra)) == {
        "files", "column_stats", "bloom_filters"}  # fmt: skip
    metadata = TableMetadata.open(meta)
    assert metadata is not None
    instants = [i.timestamp for i in metadata.timeline]
    # files at the initialization instant; each index 1 ms after the latest data instant
    assert instants[0] == "00000000000000000", instants
    latest = meta.timeline().completed.instants[-2].timestamp  # the write before the last
    assert plus_millis(latest, 1) in instants and plus_millis(latest, 2) in instants, instants
    check_reads(spark, path, "built", monkeypatch)
    unset = WriteConfig.build("idx", "id", "dt", "ts", options={
        "hoodie.metadata.enable": "true", "hoodie.cleaner.commits.retained": "10"})  # fmt: skip
    upsert(spark, path, unset, [13], 5)  # unset keeps what the table has
    meta = HoodieTableMetaClient.open(path)
    assert set(props.metadata_partitions(meta.properties.extra)) == {
        "files", "column_stats", "bloom_filters"}  # fmt: skip
    off = config(8, props.COPY_ON_WRITE, **{"hoodie.metadata.index.column.stats.enable": "false"})
    upsert(spark, path, off, [14], 6)
    meta = HoodieTableMetaClient.open(path)
    assert set(props.metadata_partitions(meta.properties.extra)) == {"files", "bloom_filters"}
    assert not meta.storage.exists(f"{METADATA_FOLDER}/column_stats")
    assert_metadata_table_whole(meta, "dropped")
    check_reads(spark, path, "dropped", monkeypatch)


def test_a_write_that_cannot_build_the_indexes_yet_still_commits_to_the_metadata_table(
    spark, tmp_path
):
    """Indexes turned on while another writer's write, older than the latest commit, is still
    running: as Apache Hudi, no partition is built now (that write's files would be missed),
    but the write's delta commit still goes into the partitions the table has. Before the
    fix the write committed no delta commit at all, and reads through the metadata table
    lost its rows."""
    register(spark)
    path = str(tmp_path / "t")
    files_only = config(8, props.COPY_ON_WRITE, **{
        "hoodie.metadata.index.column.stats.enable": "false",
        "hoodie.metadata.index.bloom.filter.enable": "false",
    })  # fmt: skip
    upsert(spark, path, files_only, list(range(0, 10)), 1)
    meta = HoodieTableMetaClient.open(path)
    # another writer's write, started now and still running (its heartbeat beats)
    running = Transaction.start(meta, FailedWritesPolicy.of(meta.storage, files_only),
                                Action.COMMIT)  # fmt: skip
    try:
        upsert(spark, path, files_only, [1, 20], 2)  # completes after it started
        on = config(8, props.COPY_ON_WRITE)
        upsert(spark, path, on, [2, 30], 3)
        meta = HoodieTableMetaClient.open(path)
        assert props.metadata_partitions(meta.properties.extra) == ("files",)  # not built yet
        assert_metadata_table_whole(meta, "indexes not built")
        assert_reads_list_alike(meta, "indexes not built")
        ids = sorted(r.id for r in HoodieTable.open(path).read(spark).collect())
        assert ids == [f"k{i:03d}" for i in [*range(10), 20, 30]]
    finally:
        running.abort()
        running.end()
    upsert(spark, path, on, [3, 40], 4)  # nothing older pending: built now
    meta = HoodieTableMetaClient.open(path)
    assert set(props.metadata_partitions(meta.properties.extra)) == {
        "files", "column_stats", "bloom_filters"}  # fmt: skip
    assert_metadata_table_whole(meta, "built")
    assert_indexes_whole(meta, "built")


def test_index_options_that_cannot_hold_are_refused():
    with pytest.raises(InvalidConfigError, match="hoodie.metadata.enable=false"):
        WriteConfig.build("t", "id", options={
            "hoodie.metadata.enable": "false",
            "hoodie.metadata.index.column.stats.enable": "true",
        })  # fmt: skip
    with pytest.raises(InvalidConfigError, match="bloom.filter.column.list names ts"):
        WriteConfig.build("t", "id", options={
            "hoodie.metadata.index.bloom.filter.column.list": "ts",
        })  # fmt: skip


@pytest.mark.parametrize(
    "point, version",
    [
        # both in `make test-hudi` (the crash points of the commit all partitions share run
        # in `make test`: tests/interop/test_metadata_table_files.py)
        pytest.param("metadata_table.log_written", 8, marks=pytest.mark.hudi_full),
        pytest.param("metadata_table.init_written", 6, marks=pytest.mark.hudi_full),
        # a task of the index job (`metadata_indexes.write_index_files`) killed having
        # written its file group's log file
        pytest.param("task.metadata_index_file.written", 6, marks=pytest.mark.hudi_full),
    ],
    ids=str,
)
def test_a_crash_in_the_indexes_commit_leaves_them_whole_after_the_next_write(
    spark, tmp_path, point, version
):
    """Killed with the delta commit's log files written in every index partition's file groups
    (or while the indexes are built on a table with `files` alone): the table reads as before,
    and the next write removes the failed delta commit's files (or builds the metadata table
    again) and leaves every partition whole."""
    register(spark)
    path = str(tmp_path / "t")
    options = {**INDEXES, "hoodie.write.table.version": str(version),
               "hoodie.compact.inline": "false"}  # fmt: skip
    first = dict(options)
    if point == "metadata_table.init_written":
        first["hoodie.metadata.index.column.stats.enable"] = "false"
        first["hoodie.metadata.index.bloom.filter.enable"] = "false"
    schema = "id string, dt string, ts long, v string"

    def write(rows: list[tuple], opts: dict[str, str]) -> None:
        cfg = WriteConfig.build("mdt", "id", "dt", "ts", table_type=props.MERGE_ON_READ,
                                options=opts)  # fmt: skip
        HoodieTable.for_write(path, cfg).upsert(spark.createDataFrame(rows, schema), cfg)

    write([("1", "a", 1, "x"), ("2", "b", 1, "y")], first)
    before = sorted(read_ours(spark, path).to_pylist(), key=str)
    prelude = ""
    if point.startswith("task."):
        prelude = (
            "from hoodie.transaction import metadata_indexes\nmetadata_indexes.DRIVER_READS = 0"
        )
    assert upsert_killed_at(path, options, point, prelude) != 0
    assert sorted(read_ours(spark, path).to_pylist(), key=str) == before
    write([("4", "d", 6, "after"), ("2", "b", 6, "z")], options)
    meta = HoodieTableMetaClient.open(path)
    assert set(props.metadata_partitions(meta.properties.extra)) == {
        "files", "column_stats", "bloom_filters"}  # fmt: skip
    if point == "metadata_table.init_written":
        # built again from a listing by the next write: the writes before have no delta
        # commit in it, but it lists what storage holds
        metadata = TableMetadata.open(meta)
        assert metadata is not None
        listed = {p: metadata.files_in_partition(p) for p in metadata.all_partition_paths()}
        assert {p: f for p, f in listed.items() if f} == storage_listing(meta)
        assert not list(metadata.timeline.pending)
    else:
        assert_metadata_table_whole(meta, point)
    assert_indexes_whole(meta, point)


def test_an_index_asked_for_brings_the_metadata_table_on_a_version_6_table():
    """Unset `hoodie.metadata.enable` keeps a version 6 table without a metadata table as it
    is, unless one of the metadata table's indexes is asked for: then it comes with it."""
    plain = WriteConfig.build("t", "id")
    assert not plain.keeps_metadata_table(6, {})
    for key in ("hoodie.metadata.index.column.stats.enable",
                "hoodie.metadata.index.bloom.filter.enable"):  # fmt: skip
        assert WriteConfig.build("t", "id", options={key: "true"}).keeps_metadata_table(6, {})
        off = WriteConfig.build("t", "id", options={key: "false"})
        assert not off.keeps_metadata_table(6, {})

"""Apache Hudi reads our table through the metadata table we keep (issue 41, item 4: the
`files` partition, `hoodie/transaction/metadata_writer.py`), and writes on top of it.

A merge-on-read table of ours with `hoodie.metadata.enable=true`, table version 8 read by
Apache Hudi 1.2 and version 6 by 0.15: after the first write (which builds the metadata
table), an upsert into a new partition, a delete, a compaction, a clean and a rollback,
Apache Hudi reads the table with `hoodie.metadata.enable=true` (listing through our metadata
table) and agrees with our reader. Then Apache Hudi upserts with its metadata table on: its
metadata delta commit lands beside ours (the metadata table is not built again), and after a
write of ours, and a restore to a savepoint before Apache Hudi's write, both readers agree.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, assert_same_as_apache_hudi, datasource_options
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.read.datasource import register
from hoodie.table_metadata import TableMetadata

hudi = pytest.importorskip("hudi")

pytestmark = [pytest.mark.spark, pytest.mark.hudi_full]

KEY = "_hoodie_record_key"
SCHEMA = "id int, dt string, ts bigint, name string"
QUIET = {
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
    "hoodie.compact.inline": "false",
    "hoodie.metadata.enable": "true",
}
VERSIONS = {HUDI_1: 8, HUDI_0: 6}


def hudi_writes_files_only(version: str) -> dict[str, str]:
    """Apache Hudi's write options on our table: its metadata table on, with `files` alone
    (the partitions we keep), no inline compaction; version 8 tables from 1.2."""
    options = datasource_options("judge", "mor")
    options.update({
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.index.column.stats.enable": "false",
        "hoodie.metadata.index.bloom.filter.enable": "false",
        "hoodie.metadata.record.index.enable": "false",
        "hoodie.compact.inline": "false",
    })  # fmt: skip
    if version == HUDI_1:
        options["hoodie.write.table.version"] = "8"
        options["hoodie.metadata.index.partition.stats.enable"] = "false"
    return options


def mdt_instants(path: str) -> list[str]:
    metadata = TableMetadata.open(HoodieTableMetaClient.open(path))
    assert metadata is not None
    return [i.timestamp for i in metadata.timeline.completed]


@pytest.mark.parametrize("version", [HUDI_1, HUDI_0])
def test_apache_hudi_reads_through_our_metadata_table_after_each_action(
    spark, apache_hudi, tmp_path, version
):
    register(spark)
    judge = apache_hudi(version)
    path = str(tmp_path / "t")
    table_version = VERSIONS[version]

    def config(**extra: str) -> WriteConfig:
        options = {**QUIET, "hoodie.write.table.version": str(table_version), **extra}
        return WriteConfig.build("judge", "id", "dt", "ts", table_type=props.MERGE_ON_READ,
                                 options=options)  # fmt: skip

    def write(rows: list[tuple], operation: str = "upsert") -> None:
        frame = spark.createDataFrame(rows, SCHEMA)
        getattr(HoodieTable.for_write(path, config()), operation)(frame, config())

    def agree(step: str) -> None:
        theirs = judge.read(path, **{"hoodie.metadata.enable": "true"})
        assert_same_as_apache_hudi(f"{version} after {step}", read_ours(spark, path), theirs, KEY)

    write([(1, "a", 1, "a1"), (2, "b", 1, "b1"), (3, "a", 1, "c1")])
    agree("the first write")
    write([(1, "a", 2, "a2"), (4, "c", 2, "d2")])
    agree("an upsert into a new partition")
    write([(2, "b", 3, "")], operation="delete")
    agree("a delete")
    assert HoodieTable.open(path).services.compact(spark, config())
    agree("a compaction")
    cleaning = config(**{"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                         "hoodie.cleaner.fileversions.retained": "1"})  # fmt: skip
    assert HoodieTable.open(path).services.clean(cleaning) is not None
    agree("a clean")
    write([(5, "d", 4, "e4"), (3, "a", 4, "c4")])
    HoodieTable.open(path).services.rollback(config=config())
    agree("a rollback")
    savepoint = HoodieTable.open(path).services.savepoint(config=config())

    ours_before = mdt_instants(path)
    options = hudi_writes_files_only(version)
    rows = pa.table({"id": [6, 1], "dt": ["a", "a"], "ts": [5, 5], "name": ["f5", "a5"]})
    judge.write(path, rows, options)
    theirs = HoodieTableMetaClient.open(path).timeline().completed.last_timestamp()
    after = mdt_instants(path)
    assert set(ours_before) <= set(after), "Apache Hudi built the metadata table again"
    assert theirs in after, "Apache Hudi's write has no delta commit in our metadata table"
    agree("Apache Hudi's upsert")
    write([(7, "b", 6, "g6")])
    agree("our write after Apache Hudi's")
    HoodieTable.open(path).services.restore(savepoint.instant, config())
    agree("a restore past Apache Hudi's write")


@pytest.mark.parametrize("version", [HUDI_1, HUDI_0])
def test_apache_hudi_reads_our_compacted_metadata_table_and_compacts_it_itself(
    spark, apache_hudi, tmp_path, version
):
    """After our writes compacted, cleaned and archived the metadata table (and archived the
    data table up to its compaction: `hoodie/table_services/metadata_services.py`), Apache
    Hudi reads through it; Apache Hudi's upsert, with a compaction of the metadata table after
    each of its delta commits, leaves a base file of its own there, which we read, and we go on
    writing (and compacting) on top."""
    register(spark)
    judge = apache_hudi(version)
    path = str(tmp_path / "t")
    table_version = VERSIONS[version]
    options = {
        "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
        "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3", "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.write.table.version": str(table_version),
    }  # fmt: skip
    config = WriteConfig.build("judge", "id", "dt", "ts", table_type=props.MERGE_ON_READ,
                               options=options)  # fmt: skip

    def write(step: int) -> None:
        rows = [(step % 3, "ab"[step % 2], step, f"v{step}"), (10 + step, "c", step, "new")]
        HoodieTable.for_write(path, config).upsert(spark.createDataFrame(rows, SCHEMA), config)

    def agree(step: str) -> None:
        theirs = judge.read(path, **{"hoodie.metadata.enable": "true"})
        assert_same_as_apache_hudi(f"{version} after {step}", read_ours(spark, path), theirs, KEY)

    for step in range(8):
        write(step)
    meta = HoodieTableMetaClient.open(path)
    metadata = TableMetadata.open(meta)
    assert metadata is not None
    ours = [i.timestamp for i in metadata.timeline.completed if i.action.value == "commit"]
    assert ours, "our writes did not compact the metadata table"
    assert meta.archived_instants(), "the data table archived nothing"
    agree("our compactions, cleans and archivals of both timelines")

    hudi_options = hudi_writes_files_only(version)
    hudi_options["hoodie.metadata.compact.max.delta.commits"] = "1"
    for step in (20, 21):
        rows = pa.table({"id": pa.array([step, 1], pa.int32()), "dt": ["a", "a"],
                         "ts": [step, step], "name": [f"h{step}", f"a{step}"]})  # fmt: skip
        judge.write(path, rows, hudi_options)
    metadata = TableMetadata.open(HoodieTableMetaClient.open(path))
    assert metadata is not None
    compactions = [i.timestamp for i in metadata.timeline.completed if i.action.value == "commit"]
    assert set(compactions) - set(ours), "Apache Hudi did not compact the metadata table"
    agree("Apache Hudi's upserts and metadata table compaction")
    for step in range(30, 34):
        write(step)
    agree("our writes on top of Apache Hudi's metadata table compaction")


def test_apache_hudi_reads_a_table_we_upgraded_with_its_metadata_table(
    spark, apache_hudi, tmp_path
):
    """A version 6 table Apache Hudi 0.15 wrote with its metadata table, written on by us
    (keeping it: our writers' default on a version 6 table that has one), upgraded to version
    8 by us with the metadata table carried over (design 4.4): Apache Hudi 1.2 and hudi-rs
    read it through the metadata table, Apache Hudi 1.2 writes on top, and we read that."""
    register(spark)
    path = str(tmp_path / "t")
    options = hudi_writes_files_only(HUDI_0)
    old = apache_hudi(HUDI_0)
    for step in (1, 2):
        rows = pa.table({"id": pa.array([step, 10 + step], pa.int32()), "dt": ["a", "b"],
                         "ts": [step, step], "name": [f"a{step}", f"b{step}"]})  # fmt: skip
        old.write(path, rows, options)
    config = WriteConfig.build("judge", "id", "dt", "ts", table_type=props.MERGE_ON_READ)
    assert config.metadata_table is None  # the writers' default: kept, the table has one
    frame = spark.createDataFrame([(1, "a", 3, "a3"), (5, "c", 3, "c3")], SCHEMA)
    HoodieTable.for_write(path, config).upsert(frame, config)
    before = mdt_instants(path)
    assert HoodieTableMetaClient.open(path).timeline().completed.last_timestamp() in before
    HoodieTable.open(path).services.upgrade(spark, config)
    meta = HoodieTableMetaClient.open(path)
    assert meta.properties.table_version == 8
    assert meta.properties.extra.get(props.METADATA_PARTITIONS) == "files"
    new = apache_hudi(HUDI_1)
    theirs = new.read(path, **{"hoodie.metadata.enable": "true"})
    assert_same_as_apache_hudi("1.2 after our upgrade", read_ours(spark, path), theirs, KEY)
    assert_same_rows("hudi-rs after our upgrade", KEY, read_ours(spark, path),
                     read_theirs(hudi.HudiTable(path)))  # fmt: skip
    options = hudi_writes_files_only(HUDI_1)
    rows = pa.table({"id": pa.array([6, 11], pa.int32()), "dt": ["a", "b"], "ts": [4, 4],
                     "name": ["f4", "b4"]})  # fmt: skip
    new.write(path, rows, options)
    assert set(before) <= set(mdt_instants(path)), "Apache Hudi built the metadata table again"
    theirs = new.read(path, **{"hoodie.metadata.enable": "true"})
    assert_same_as_apache_hudi("1.2's write after our upgrade", read_ours(spark, path), theirs,
                               KEY)  # fmt: skip

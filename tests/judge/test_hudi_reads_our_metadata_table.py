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
from rs_compare import read_ours

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.read.datasource import register
from hoodie.table_metadata import TableMetadata

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

    hudi_options = datasource_options("judge", "mor")
    hudi_options.update({
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.compact.max.delta.commits": "1",
        "hoodie.metadata.index.column.stats.enable": "false",
        "hoodie.metadata.index.bloom.filter.enable": "false",
        "hoodie.metadata.record.index.enable": "false",
        "hoodie.compact.inline": "false",
    })  # fmt: skip
    if version == HUDI_1:
        hudi_options["hoodie.write.table.version"] = "8"
        hudi_options["hoodie.metadata.index.partition.stats.enable"] = "false"
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

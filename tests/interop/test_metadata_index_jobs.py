"""The `column_stats` / `bloom_filters` records of many files, made in Spark tasks
(`metadata_indexes.write_index_files`, issue 41): the files the tasks write are the bytes the
driver path writes for the same files (base HFiles of a partition's initialization, a delta
commit's log files), on copy-on-write and merge-on-read tables of versions 6 and 8; a table
whose indexes are built by the job holds the same base files as one built on the driver; and
with the job forced for every commit (tests/interop/test_metadata_table_indexes.py's
`forced` cases) the metadata table stays whole.
"""

from __future__ import annotations

import shutil

import pytest
from listing_compare import assert_metadata_table_whole

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.config import BLOOM_FILTERS, COLUMN_STATS, MetadataIndexes
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import file_group_index
from hoodie.table_metadata import METADATA_FOLDER
from hoodie.transaction import metadata_indexes
from hoodie.transaction.metadata_files import (
    deflate_of,
    log_content,
    metadata_base_file,
    sorted_entries,
)
from hoodie.transaction.metadata_indexes import IndexedFile, IndexJob, write_index_files
from hoodie.transaction.metadata_writer import MetadataTableWriter, _latest_files

pytestmark = pytest.mark.spark

SCHEMA = "id string, dt string, ts long, n int, v string"
FILES_ONLY = {"hoodie.metadata.enable": "true", "hoodie.compact.inline": "false",
              "hoodie.metadata.index.column.stats.enable": "false",
              "hoodie.metadata.index.bloom.filter.enable": "false"}  # fmt: skip
INDEXES = {**FILES_ONLY, "hoodie.metadata.index.column.stats.enable": "true",
           "hoodie.metadata.index.bloom.filter.enable": "true"}  # fmt: skip
INSTANT = "20240101000000000"


def config(version: int, table_type: str, options: dict[str, str]) -> WriteConfig:
    return WriteConfig.build(
        "jobs",
        "id",
        "dt",
        "ts",
        table_type=table_type,
        options={**options, "hoodie.write.table.version": str(version)},
    )


def upsert(spark, path: str, cfg: WriteConfig, ids: list[int], step: int) -> None:
    rows = [(f"k{i:03d}", "abc"[i % 3], step, None if i % 4 == 0 else i * step, f"v{i}")
            for i in ids]  # fmt: skip
    HoodieTable.for_write(path, cfg).upsert(spark.createDataFrame(rows, SCHEMA), cfg)


def a_table(spark, path: str, version: int, table_type: str) -> None:
    """Three partitions, updates (log files on merge-on-read) and deletes, `files` only."""
    cfg = config(version, table_type, FILES_ONLY)
    upsert(spark, path, cfg, list(range(0, 30)), 1)
    upsert(spark, path, cfg, [1, 2, 3, 4, 5, 31], 2)
    rows = [("k006", "a", 3, 0, "x"), ("k007", "b", 3, 0, "x")]
    HoodieTable.for_write(path, cfg).delete(spark.createDataFrame(rows, SCHEMA), cfg)


@pytest.mark.parametrize(
    ("version", "table_type"),
    [
        (8, props.MERGE_ON_READ),
        (6, props.COPY_ON_WRITE),
        pytest.param(8, props.COPY_ON_WRITE, marks=pytest.mark.full),
        pytest.param(6, props.MERGE_ON_READ, marks=pytest.mark.full),
    ],
)
def test_files_written_in_tasks_are_the_drivers(spark, tmp_path, version, table_type):
    path = str(tmp_path / "t")
    a_table(spark, path, version, table_type)
    meta = HoodieTableMetaClient.open(path)
    writer = MetadataTableWriter.open_existing(meta)
    assert writer is not None
    maker = writer.index_record_maker([COLUMN_STATS, BLOOM_FILTERS], MetadataIndexes())
    latest = _latest_files(meta, meta.timeline())
    logs = [p for _, p in latest if ".log." in p]
    assert (len(logs) > 0) == (table_type == props.MERGE_ON_READ), latest
    # half the files with their ranges recorded (as a write task hands them over), half read
    files = []
    for number, (partition, relative) in enumerate(latest):
        ranges = None
        if number % 2:
            read = maker._log_file_ranges if ".log." in relative else maker._base_file_ranges
            ranges = tuple(r.to_json() for r in read(relative))
        files.append(IndexedFile(partition, relative, ranges))
    driver = maker.planned(files, spark=None)
    assert driver.job is None
    assert driver.records[COLUMN_STATS] and driver.records[BLOOM_FILTERS]
    scratch = meta.storage.subfolder(".hoodie/.temp/scratch")
    counts = {COLUMN_STATS: 2, BLOOM_FILTERS: 3}
    for base_file in (False, True):
        paths = {p: {i: f"{p}/{base_file}-{i}" for i in range(n)} for p, n in counts.items()}
        written = write_index_files(IndexJob(maker, tuple(files), spark), scratch, version,
                                    INSTANT, paths, base_file)  # fmt: skip
        touched = 0
        for partition, count in counts.items():
            for group in range(count):
                records = [r for r in driver.records[partition]
                           if file_group_index(r.key, count) == group]  # fmt: skip
                entries = sorted_entries(records, version)
                if base_file:
                    want = metadata_base_file(entries, version, deflate_of(partition))
                else:
                    want = log_content(partition, entries, (), INSTANT, version)
                if records:
                    assert scratch.read_bytes(paths[partition][group]) == want, (partition, group)
                    touched += 1
                else:
                    assert not scratch.exists(paths[partition][group])
        assert len(written) == touched
        assert {w["path"] for w in written} == {paths[w["partition"]][w["group"]] for w in written}


@pytest.mark.parametrize(
    ("version", "table_type"),
    [(6, props.MERGE_ON_READ), pytest.param(8, props.COPY_ON_WRITE, marks=pytest.mark.full)],
)
def test_indexes_built_in_tasks_are_built_as_on_the_driver(
    spark, tmp_path, monkeypatch, version, table_type
):
    """Two copies of a table get both indexes turned on by the same write: built on the
    driver in one, by the job in the other; their base files are the same bytes, and each
    metadata table is whole. A copy, so that both build at the same instant."""
    path = str(tmp_path / "driver")
    a_table(spark, path, version, table_type)
    shutil.copytree(path, str(tmp_path / "tasks"))
    jobs = []
    real = metadata_indexes.write_index_files

    def counted(*args, **kwargs):
        jobs.append(args[0].partitions)
        return real(*args, **kwargs)

    monkeypatch.setattr("hoodie.transaction.metadata_writer.write_index_files", counted)
    cfg = config(version, table_type, INDEXES)
    upsert(spark, path, cfg, [40], 4)
    assert not jobs
    monkeypatch.setattr(metadata_indexes, "DRIVER_READS", 0)
    upsert(spark, str(tmp_path / "tasks"), cfg, [40], 4)
    # a job a partition built, then the write's own delta commit by one more
    assert sorted(map(sorted, jobs)) == sorted([[BLOOM_FILTERS], [COLUMN_STATS],
                                                [BLOOM_FILTERS, COLUMN_STATS]])  # fmt: skip
    built = {}
    for copy in ("driver", "tasks"):
        meta = HoodieTableMetaClient.open(str(tmp_path / copy))
        assert_metadata_table_whole(meta, copy)  # (the build indexes latest slices only)
        mdt = meta.storage.subfolder(METADATA_FOLDER)
        built[copy] = {
            info.relative_path: mdt.read_bytes(info.relative_path)
            for partition in (COLUMN_STATS, BLOOM_FILTERS)
            for info in mdt.list_files(partition) if info.name.endswith(".hfile")
        }  # fmt: skip
    assert built["driver"], "no base file built"
    assert built["tasks"].keys() == built["driver"].keys()
    for name, content in built["driver"].items():
        assert built["tasks"][name] == content, name

"""Listing a table's files through its metadata table (`hoodie.table_metadata.MetadataListing`),
the readers' default (`hoodie.metadata.enable`), without Spark or a JVM.

The read plans (which file slices, which files, their sizes and recorded blocks) through the
metadata table are the plans by listing storage, for snapshot, time-travel and incremental
reads, on the tables of tests/unit/test_table_metadata.py: hudi-rs's v8 trips (Apache Hudi 1.x),
Apache Hudi 0.15's version 6 table, and hudi-rs's version 9 samples. A read through the metadata
table lists no data partition folder; a file no completed action recorded in it is not read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from listing_compare import OFF, assert_reads_list_alike, plan
from sample_tables import unzip

from hoodie.exceptions import InvalidConfigError
from hoodie.fs_view import StorageListing
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import FileEntry, FilesRecord
from hoodie.naming import parse_base_file_name
from hoodie.read.options import ReadOptions
from hoodie.storage import TracingFileIO, load_file_io
from hoodie.table_metadata import METADATA_FOLDER, DamagedMetadataTableError
from hoodie.timeline import Action, Instant, State
from hoodie.transaction.metadata_writer import MetadataTableWriter, _mdt_client

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TRIPS = FIXTURES / "hudi-rs/quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
HUDI_0_15 = FIXTURES / "mdt-tables/hudi-0.15.0-mor-v6.zip"
V9 = FIXTURES / "hudi-rs/sample_table"
TABLES = [
    TRIPS,
    HUDI_0_15,
    V9 / "mor/avro/v9_nonpartitioned_rollback.zip",
    V9 / "cow/v9_timebasedkeygen_nonhivestyle.zip",
    V9 / "mor/avro/v9_timebasedkeygen_nonhivestyle.zip",
    V9 / "cow/v9_txns_simple_overwrite.zip",
    V9 / "mor/avro/v9_txns_simple_overwrite.zip",
]


@pytest.mark.parametrize("zipped", TABLES, ids=lambda p: p.stem)
def test_reads_through_the_metadata_table_plan_what_listing_storage_plans(tmp_path, zipped):
    root = unzip(zipped, tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    assert isinstance(meta.file_listing(meta.timeline(), False), StorageListing)
    assert plan(meta).splits
    assert_reads_list_alike(meta)


def listings(trace: Path) -> list[str]:
    """The folders the traced storage listed, outside `.hoodie/` (the timeline's)."""
    calls = [line.split("\t") for line in trace.read_text().splitlines()]
    return [
        f"{op}\t{path}"
        for op, path in calls
        if op.startswith("list_files") and not path.startswith(".hoodie")
    ]


@pytest.mark.parametrize("zipped", [TRIPS, HUDI_0_15], ids=["v8-trips", "v6-hudi-0.15"])
def test_a_read_through_the_metadata_table_lists_no_data_partition(tmp_path, zipped):
    root = unzip(zipped, tmp_path / "table")
    trace = tmp_path / "trace"
    meta = HoodieTableMetaClient.load(TracingFileIO(load_file_io(str(root)), str(trace)))
    assert plan(meta).splits
    assert listings(trace) == []
    assert plan(meta, **OFF).splits
    assert listings(trace)  # by listing storage: the table, then its partitions


def orphan(root: Path, meta: HoodieTableMetaClient) -> Path:
    """A copy of a committed base file under a file id no commit wrote: what a crashed task's
    retry leaves beside the files its completed commit recorded (Apache Hudi's markers delete
    it; a crash before that leaves it)."""
    view = meta.file_system_view()
    base = next(b for b in view.latest_base_files() if b.partition_path)
    parsed = parse_base_file_name(base.name)
    assert parsed is not None
    name = base.name.replace(parsed.file_id, "00000000-dead-beef-0000-000000000000-0", 1)
    copied = root / base.partition_path / name
    shutil.copyfile(root / base.relative_path, copied)
    return copied


@pytest.mark.parametrize("zipped", [TRIPS, HUDI_0_15], ids=["v8-trips", "v6-hudi-0.15"])
def test_a_file_the_metadata_table_does_not_list_is_not_read_through_it(tmp_path, zipped):
    root = unzip(zipped, tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    before = plan(meta)
    copied = orphan(root, meta)
    through = plan(meta)
    assert through == before
    listed = plan(meta, **OFF)  # storage listing, as before this change: the orphan is read
    extra = [s for s in listed.splits if s not in through.splits]
    assert [s.base_file for s in extra] == [str(copied.relative_to(root))]


def test_a_damaged_metadata_table_fails_the_read_naming_the_file_and_the_way_out(tmp_path):
    root = unzip(TRIPS, tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    listed = plan(meta, **OFF)
    metadata = meta.table_metadata()
    assert metadata is not None
    (latest,) = metadata.file_slices("files")
    assert latest.base_file is not None
    files = root / METADATA_FOLDER / latest.base_file.relative_path
    files.write_bytes(files.read_bytes()[:-100])
    with pytest.raises(DamagedMetadataTableError) as error:
        plan(meta)
    assert files.name in str(error.value) and files.name in error.value.path
    assert "hoodie.metadata.enable=false lists the table's files from storage" in str(error.value)
    assert plan(meta, **OFF) == listed
    shutil.rmtree(root / METADATA_FOLDER)  # announced by hoodie.properties, gone
    with pytest.raises(DamagedMetadataTableError, match="is missing.*hoodie.metadata.enable=false"):
        plan(meta)
    assert plan(meta, **OFF) == listed


def test_the_readers_option_is_a_boolean_defaulting_to_true():
    assert ReadOptions.parse({}).metadata_enable
    assert ReadOptions.parse({"hoodie.metadata.enable": "True"}).metadata_enable
    assert not ReadOptions.parse({"hoodie.metadata.enable": "false"}).metadata_enable
    with pytest.raises(InvalidConfigError, match="hoodie.metadata.enable"):
        ReadOptions.parse({"hoodie.metadata.enable": "yes"})


def test_a_table_without_a_metadata_table_is_listed_from_storage(tmp_path):
    root = unzip(FIXTURES / "hudi-rs/sample_table/cow/v8_nonpartitioned.zip", tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    assert not (root / METADATA_FOLDER).exists()
    assert isinstance(meta.file_listing(meta.timeline(), True), StorageListing)
    assert plan(meta).splits and plan(meta) == plan(meta, **OFF)


def test_a_writes_partitions_are_found_alike_by_either_listing(tmp_path):
    """What a write tags against (`FileListing.existing`): the partitions the table has, by
    its metadata table or by listing each partition folder (a partition whose metadata file
    went missing still counts), never the whole table."""
    root = unzip(TRIPS, tmp_path / "table")
    trace = tmp_path / "trace"
    meta = HoodieTableMetaClient.load(TracingFileIO(load_file_io(str(root)), str(trace)))
    timeline = meta.timeline()
    through, listed = meta.file_listing(timeline, True), meta.file_listing(timeline, False)
    partitions = through.partitions()
    asked = [partitions[0], "city=nowhere", partitions[-1]]
    assert through.existing(asked) == [partitions[0], partitions[-1]]
    assert listings(trace) == []
    (root / partitions[0] / ".hoodie_partition_metadata").unlink()
    assert listed.existing(asked) == [partitions[0], partitions[-1]]
    assert sorted(listings(trace)) == sorted(f"list_files\t{p}" for p in asked)


SPURIOUS = "_hoodie.metadata.ignore.spurious.deletes"


def test_a_spurious_delete_fails_a_read_only_that_asks(tmp_path):
    """A `files` record deleting a file no earlier record added (what a rollback of a write
    whose metadata table commit never counted leaves) is ignored by default, as by Apache
    Hudi; with `_hoodie.metadata.ignore.spurious.deletes=false` the read fails naming the
    partition and the file, as Apache Hudi's `checkForSpuriousDeletes` does."""
    root = unzip(HUDI_0_15, tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    strict = {SPURIOUS: "false"}
    before = plan(meta, **strict)  # Apache Hudi's own metadata table has none
    assert before == plan(meta)
    data = meta.timeline().completed.write_timeline.latest()
    assert data is not None
    instant = "20261127190000000"
    partition = plan(meta).splits[0].partition_path
    ghost = f"00000000-0000-0000-0000-000000000000-0_0-1-1_{instant}.parquet"
    writer = MetadataTableWriter(meta, _mdt_client(meta, meta.storage.subfolder(METADATA_FOLDER)))
    writer.commit(instant, [FilesRecord(partition, False, {ghost: FileEntry(0, True)})])
    requested = meta.save_instant(Instant(instant, Action.DELTA_COMMIT, State.REQUESTED))
    meta.save_instant(requested.with_state(State.COMPLETED), meta.instant_content(data))
    meta = HoodieTableMetaClient.open(str(root))
    assert plan(meta).splits == before.splits  # ignored
    with pytest.raises(DamagedMetadataTableError) as error:
        plan(meta, **strict)
    message = str(error.value)
    assert f"partition {partition!r}" in message and ghost in message
    assert f"{SPURIOUS}=false" in message and error.value.path.endswith("metadata/files")
    assert plan(meta, **strict, **OFF).splits == before.splits  # storage listing: no check


def test_the_spurious_deletes_option_is_a_boolean_defaulting_to_true():
    assert ReadOptions.parse({}).ignore_spurious_deletes
    assert not ReadOptions.parse({SPURIOUS: "FALSE"}).ignore_spurious_deletes
    with pytest.raises(InvalidConfigError, match=SPURIOUS):
        ReadOptions.parse({SPURIOUS: "no"})

"""The metadata table writer (`hoodie.transaction.metadata_writer`) without Spark, on the
metadata table Apache Hudi 0.15 wrote (tests/fixtures/mdt-tables/hudi-0.15.0-mor-v6.zip): our
delta commit goes where 0.15 would put it (the next log version of the latest slice, which
0.15's own compaction started), reads back through `hoodie.table_metadata` over Apache Hudi's
records, and a delta commit a crash left pending is removed before the next one."""

from __future__ import annotations

from pathlib import Path

import pytest
from sample_tables import unzip

from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import ALL_PARTITIONS_KEY, FileEntry, FilesRecord
from hoodie.table_metadata import METADATA_FOLDER, TableMetadata
from hoodie.timeline import Action, Instant, State
from hoodie.transaction.metadata_writer import (
    FILES_FILE_ID,
    FILES_PARTITION,
    MetadataTableWriter,
    _mdt_client,
)

HUDI_0_15 = Path(__file__).resolve().parents[1] / "fixtures/mdt-tables/hudi-0.15.0-mor-v6.zip"
FILES = ".hoodie/metadata/files"


@pytest.fixture
def writer(tmp_path) -> MetadataTableWriter:
    root = unzip(HUDI_0_15, tmp_path)
    data = HoodieTableMetaClient.open(str(root))
    return MetadataTableWriter(data, _mdt_client(data, data.storage.subfolder(METADATA_FOLDER)))


def commit_as_data(writer: MetadataTableWriter, instant_time: str) -> None:
    """The data instant completes after its MDT delta commit, as a write of ours does."""
    data = writer.data
    requested = data.save_instant(Instant(instant_time, Action.DELTA_COMMIT, State.REQUESTED))
    data.save_instant(requested.with_state(State.COMPLETED), b"{}")


def test_our_delta_commit_lands_where_apache_hudi_0_15_puts_it_and_reads_back(writer):
    root = Path(writer.data.base_uri.removeprefix("file://"))
    before = {p.name for p in (root / FILES).iterdir()}
    instant = "20261127190000000"
    added = {"d9af338e-ff9e-4eae-9527-9f8359509368-0_0-1-1_20261127190000000.parquet": 77}
    writer.commit(instant, [
        FilesRecord(ALL_PARTITIONS_KEY, True, {"a": FileEntry(0)}),
        FilesRecord("a", False, {name: FileEntry(size) for name, size in added.items()}),
    ])  # fmt: skip
    new = {p.name for p in (root / FILES).iterdir()} - before
    # 0.15's compaction at ...448001 started the slice; its delta commit wrote log 1
    assert new == {".files-0000-0_20261127183705448001.log.2_0-0-0"}
    commit_as_data(writer, instant)
    metadata = TableMetadata.open(HoodieTableMetaClient.open(str(root)))
    assert metadata is not None
    listed = metadata.files_in_partition("a")
    assert set(added) <= set(listed) and len(listed) > len(added)  # Apache Hudi's files kept


def test_a_pending_delta_commit_is_removed_before_the_next(writer):
    root = Path(writer.data.base_uri.removeprefix("file://"))
    mdt = writer.mdt
    stale = Instant("20261127185900000", Action.DELTA_COMMIT, State.REQUESTED)
    mdt.save_instant(stale)
    name = writer._next_log_names(FILES_PARTITION, [FILES_FILE_ID], stale.timestamp)[FILES_FILE_ID]
    stats = [writer._stat(FILES_PARTITION, FILES_FILE_ID, name, 3, stale.timestamp, 1)]
    mdt.save_instant(stale.with_state(State.INFLIGHT), writer._content(stats))
    (root / FILES / name).write_bytes(b"torn")
    writer.commit("20261127190000000", [FilesRecord("a", False, {})])
    # the torn file went with its instant; the next delta commit took the free name
    assert (root / FILES / name).read_bytes()[:4] == b"#HUD"
    pending = [i.timestamp for i in mdt.timeline().pending]
    assert pending == []
    completed = [i.timestamp for i in mdt.timeline().completed]
    assert "20261127185900000" not in completed and "20261127190000000" in completed

"""The metadata table's own services (`hoodie/table_services/metadata_services.py`): after
enough writes it is compacted into a new HFile base file, cleaned and archived as Apache Hudi
does, the data table's archival stops at its latest compaction, and every reader still lists
what storage holds (Apache Hudi's readers: tests/judge/test_hudi_reads_our_metadata_table.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from killed_writes import upsert_killed_at
from listing_compare import assert_reads_list_alike, storage_listing
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.naming import parse_log_file_name
from hoodie.read.datasource import register
from hoodie.table_metadata import HFILE_EXTENSION, METADATA_FOLDER, TableMetadata
from hoodie.timeline import Action, State
from hoodie.transaction.metadata_writer import MetadataTableWriter

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

OPTIONS = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.compact.inline": "false",
    # one writer at a time, as in tests/faults: a killed writer leaves no lock held
    "hoodie.write.concurrency.mode": "single_writer",
    "hoodie.client.heartbeat.interval_in_ms": "250",
    "hoodie.client.heartbeat.tolerable.misses": "1",
}


def config(version: int, table_type: str) -> WriteConfig:
    options = {**OPTIONS, "hoodie.write.table.version": str(version)}
    return WriteConfig.build("mdt", "id", "dt", "ts", table_type=table_type, options=options)


def upsert(spark, path: str, cfg: WriteConfig, step: int) -> None:
    rows = [(str(step % 4), "ab"[step % 2], step, f"v{step}"), (f"n{step}", "c", step, "new")]
    frame = spark.createDataFrame(rows, "id string, dt string, ts long, v string")
    HoodieTable.for_write(path, cfg).upsert(frame, cfg)


def check(spark, path: str, step: str) -> TableMetadata:
    """The MDT lists what storage holds; our reads through it plan what listing plans;
    hudi-rs (which lists a version 8 table through it) reads our rows."""
    meta = HoodieTableMetaClient.open(path)
    metadata = TableMetadata.open(meta)
    assert metadata is not None, step
    listed = {p: metadata.files_in_partition(p) for p in metadata.all_partition_paths()}
    assert {p: f for p, f in listed.items() if f} == storage_listing(meta), step
    assert_reads_list_alike(meta, step)
    assert_same_rows(step, "_hoodie_record_key", read_ours(spark, path),
                     read_theirs(hudi.HudiTable(path)))  # fmt: skip
    return metadata


def base_files(path: str) -> list[str]:
    return sorted(p.name for p in Path(path, METADATA_FOLDER, "files").glob(f"*{HFILE_EXTENSION}"))


@pytest.mark.parametrize(
    ("version", "table_type"),
    # make test: version 8; make test-full: version 6 too (session 42, for the 20-minute CI
    # target; tests/interop/test_metadata_table_files.py keeps a version 6 table's metadata
    # table through upserts, a compaction, a clean and a rollback in make test)
    [pytest.param(6, props.COPY_ON_WRITE, marks=pytest.mark.full), (8, props.MERGE_ON_READ)],
)
def test_the_metadata_table_compacts_cleans_and_archives_itself(
    spark, tmp_path, version, table_type
):
    register(spark)
    path = str(tmp_path / "t")
    cfg = config(version, table_type)
    for step in range(10):
        upsert(spark, path, cfg, step)
        metadata = check(spark, path, f"upsert {step}")
    timeline = metadata.timeline
    compactions = [i for i in timeline.completed if i.action is Action.COMMIT]
    cleans = [i for i in timeline.completed if i.action is Action.CLEAN]
    assert len(compactions) >= 2, [str(i) for i in timeline]
    assert cleans, [str(i) for i in timeline]
    data = HoodieTableMetaClient.open(path)
    if version == 6:
        # named after the MDT's latest delta commit, so after a data instant (0.15's names)
        instants = {i.timestamp for i in data.timeline()}
        instants |= {i.timestamp for i in data.archived_instants()}
        for instant in [*compactions, *cleans]:
            suffix = "001" if instant.action is Action.COMMIT else "002"
            assert instant.timestamp[-3:] == suffix and instant.timestamp[:-3] in instants
    # the latest slice starts with the latest compaction's base file; older slices are cleaned
    latest = compactions[-1].timestamp
    (files_slice,) = metadata.file_slices("files")
    assert files_slice.base_file is not None and files_slice.base_instant == latest
    assert len(base_files(path)) <= 2, base_files(path)
    # the MDT's timeline is archived, never past what the data table's active timeline holds
    writer = MetadataTableWriter.open_existing(data)
    assert writer is not None
    mdt_archived = {i.timestamp for i in writer.mdt.archived_instants()}
    assert mdt_archived, [str(i) for i in timeline]
    assert max(mdt_archived) < min(i.timestamp for i in data.timeline())
    # the data table archived, never an instant after the MDT's latest compaction
    archived = [i.timestamp for i in data.archived_instants()]
    assert archived, "the data table archived nothing"
    assert max(archived) < latest


def test_data_archival_waits_for_the_metadata_tables_first_compaction(spark, tmp_path):
    """Readers count a metadata log block only while its data instant is on the active
    timeline: before the MDT's first compaction, nothing of the data table is archived."""
    register(spark)
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("mdt", "id", "dt", "ts", table_type=props.COPY_ON_WRITE, options={
        **OPTIONS, "hoodie.write.table.version": "8",
        "hoodie.metadata.compact.max.delta.commits": "8", "hoodie.clean.automatic": "false",
    })  # fmt: skip
    for step in range(6):
        upsert(spark, path, cfg, step)
    data = HoodieTableMetaClient.open(path)
    assert not data.archived_instants()
    assert len(list(data.timeline().completed.write_timeline)) == 6
    check(spark, path, "six writes, no MDT compaction")
    for step in range(6, 9):
        upsert(spark, path, cfg, step)
    assert HoodieTableMetaClient.open(path).archived_instants()
    check(spark, path, "after the MDT's first compaction")


@pytest.mark.parametrize(
    ("point", "version"),
    [
        # `make test-hudi` runs both (session 40: out of `make test`, 17 s, for the 20-minute
        # CI target; tests/faults keeps the data table's compaction crashes there)
        pytest.param("metadata_table.compaction_requested", 8, marks=pytest.mark.hudi_full),
        pytest.param("metadata_table.compaction_written", 6, marks=pytest.mark.hudi_full),
    ],
)
def test_a_crash_in_the_metadata_tables_compaction_leaves_it_readable(
    spark, tmp_path, point, version
):
    """Killed after its compaction plan, or after its base file but before it completed:
    readers ignore the pending compaction; the next write removes it (and its base file),
    and a later one compacts again."""
    register(spark)
    path = str(tmp_path / "t")
    cfg = config(version, props.MERGE_ON_READ)
    upsert(spark, path, cfg, 0)  # its delta commit and the MDT's initialization: the 3rd compacts
    options = {**OPTIONS, "hoodie.write.table.version": str(version)}
    assert upsert_killed_at(path, options, point) != 0
    metadata = TableMetadata.open(HoodieTableMetaClient.open(path))
    assert metadata is not None
    pending = [i for i in metadata.timeline.pending if i.action is Action.COMPACTION]
    assert pending, "the crash left no pending compaction"
    # the data write completed before its services ran: it reads, through the MDT too
    assert check(spark, path, f"after {point}").timeline.pending
    upsert(spark, path, cfg, 7)
    metadata = check(spark, path, f"the write after {point}")
    assert not [i for i in metadata.timeline if i.state is not State.COMPLETED]
    assert pending[0].timestamp not in {i.timestamp for i in metadata.timeline}
    assert all(pending[0].timestamp not in name for name in base_files(path))
    for step in range(8, 11):
        upsert(spark, path, cfg, step)
    metadata = check(spark, path, "compacted again")
    assert [i for i in metadata.timeline.completed if i.action is Action.COMMIT]


def test_the_upgrade_to_version_8_keeps_the_metadata_table(spark, tmp_path):
    """As Apache Hudi 1.2 upgrades a version 6 table with a metadata table (design 4.4): the
    metadata table is compacted (no version 6 log file left in its latest slices), its
    timeline moves to layout 2 and its properties to version 8 with the data table's, and it
    is listed again; every reader lists through it, and version 8 writes go on keeping it
    (log files named by their own delta commit, compactions at fresh instants)."""
    register(spark)
    path = str(tmp_path / "t")
    cfg = config(6, props.MERGE_ON_READ)
    for step in range(4):
        upsert(spark, path, cfg, step)
    before = read_ours(spark, path)
    HoodieTable.open(path).services.upgrade(spark, cfg)
    data = HoodieTableMetaClient.open(path)
    assert data.properties.table_version == 8
    assert data.properties.extra.get(props.METADATA_PARTITIONS) == "files"
    assert not data.properties.extra.get(props.METADATA_PARTITIONS_INFLIGHT)
    stored = props.loads(Path(path, METADATA_FOLDER, ".hoodie/hoodie.properties").read_text())
    assert {k: stored.get(k) for k in (
        "hoodie.table.version", "hoodie.table.initial.version", "hoodie.timeline.layout.version",
        "hoodie.timeline.path", "hoodie.table.keygenerator.type", "hoodie.record.merge.mode",
        "hoodie.record.merge.strategy.id", "hoodie.compaction.record.merger.strategy",
        "hoodie.archivelog.folder",
    )} == {
        "hoodie.table.version": "8", "hoodie.table.initial.version": "6",
        "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
        "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
        "hoodie.record.merge.mode": "CUSTOM",
        "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
        "hoodie.compaction.record.merger.strategy": "00000000-0000-0000-0000-000000000000",
        "hoodie.archivelog.folder": "archived",
    }  # fmt: skip
    layout_1 = [p.name for p in Path(path, METADATA_FOLDER, ".hoodie").iterdir() if p.is_file()]
    assert layout_1 == ["hoodie.properties"], layout_1
    metadata = check(spark, path, "upgrade")
    (latest,) = metadata.file_slices("files")
    assert not latest.log_files  # compacted before the switch
    assert_same_rows("upgrade", "_hoodie_record_key", read_ours(spark, path), before)
    cfg8 = config(8, props.MERGE_ON_READ)
    for step in range(4, 9):
        upsert(spark, path, cfg8, step)
        metadata = check(spark, path, f"version 8 upsert {step}")
    logs = [f.name for f in metadata.file_slices("files")[0].log_files]
    deltas = {i.timestamp for i in metadata.timeline if i.action is Action.DELTA_COMMIT}
    assert all(parse_log_file_name(n).instant in deltas for n in logs), logs
    compactions = [i for i in metadata.timeline.completed if i.action is Action.COMMIT]
    assert any(len(i.timestamp) == 17 for i in compactions), [str(i) for i in compactions]

"""The `files` records of each action (`hoodie.metadata_conversion`), and the metadata
table's own `hoodie.properties` (`hoodie.transaction.metadata_writer`).

The real case: Apache Hudi 0.15 wrote tests/fixtures/mdt-tables/hudi-0.15.0-mor-v6.zip with its
metadata table; for every data instant whose MDT delta commit's log block is still there, our
records of the instant's commit metadata equal the records Apache Hudi wrote. Cleans, rollbacks
and restores are table-driven (the fixture has none).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sample_tables import unzip

from hoodie.avro_metadata import (
    CleanMetadata,
    CleanPartitionMetadata,
    RestoreMetadata,
    RollbackMetadata,
    RollbackPartitionMetadata,
)
from hoodie.exceptions import HoodieError
from hoodie.logformat import BlockType, read_log_file
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata import CommitMetadata, WriteStat
from hoodie.metadata_conversion import (
    clean_files_records,
    commit_files_records,
    listing_files_records,
    restore_files_records,
    rollback_files_records,
)
from hoodie.metadata_records import (
    ALL_PARTITIONS_KEY,
    FileEntry,
    FilesRecord,
    decode_metadata_record,
    merge_metadata_records,
)
from hoodie.properties import TableProperties
from hoodie.timeline import Action
from hoodie.transaction.metadata_writer import metadata_table_properties

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HUDI_0_15 = FIXTURES / "mdt-tables/hudi-0.15.0-mor-v6.zip"


def as_dict(records: list[FilesRecord]) -> dict[str, tuple[bool, dict[str, FileEntry]]]:
    return {r.key: (r.is_partition_list, dict(r.files)) for r in records}


def hudi_files_blocks(root: Path) -> dict[str, list[FilesRecord]]:
    """The `files` records of each HFile data block in the MDT's log files, by instant."""
    folder = root / ".hoodie/metadata/files"
    out: dict[str, list[FilesRecord]] = {}
    for path in sorted(folder.glob(".files-*.log.*")):
        for block in read_log_file(str(path)):
            if block.block_type != BlockType.HFILE_DATA:
                continue
            schema = block.schema
            assert schema is not None and block.instant_time is not None
            records = []
            for key, value in block.hfile():
                record = decode_metadata_record(key.decode(), value, schema)
                assert isinstance(record, FilesRecord)
                records.append(FilesRecord(record.key, record.is_partition_list, record.files))
            out[block.instant_time] = records
    return out


def test_commit_records_equal_apache_hudi_0_15s(tmp_path):
    root = unzip(HUDI_0_15, tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    written = hudi_files_blocks(root)
    compared = []
    for instant in meta.timeline().completed:
        if instant.action not in (Action.DELTA_COMMIT, Action.COMMIT):
            continue
        if instant.timestamp not in written:  # compacted into the MDT's base file since
            continue
        metadata = meta.commit_metadata(instant)
        assert as_dict(commit_files_records(metadata)) == as_dict(written[instant.timestamp])
        compared.append(instant.action)
    # the delta commits after the MDT's first compaction, and the data compaction's commit
    assert Action.COMMIT in compared and compared.count(Action.DELTA_COMMIT) >= 1, compared


def stat(partition: str, name: str | None, size: int) -> WriteStat:
    path = None if name is None else (f"{partition}/{name}" if partition else name)
    return WriteStat(file_id="f", partition_path=partition, path=path, file_size_in_bytes=size)


def commit(*stats: WriteStat, operation: str = "UPSERT", replaced=None) -> CommitMetadata:
    metadata = CommitMetadata(operation_type=operation, partition_to_replace_file_ids=replaced)
    for s in stats:
        metadata.add(s)
    return metadata


LIVE, GONE = FileEntry(0), FileEntry(0, True)


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        pytest.param(
            commit(stat("a", "f1_0-1-1_1.parquet", 10), stat("b", ".f2_1.log.1_0-1-1", 5)),
            {
                ALL_PARTITIONS_KEY: (True, {"a": LIVE, "b": LIVE}),
                "a": (False, {"f1_0-1-1_1.parquet": FileEntry(10)}),
                "b": (False, {".f2_1.log.1_0-1-1": FileEntry(5)}),
            },
            id="two-partitions",
        ),
        pytest.param(
            commit(stat("", "f1_0-1-1_1.parquet", 10)),
            {
                ALL_PARTITIONS_KEY: (True, {".": LIVE}),
                ".": (False, {"f1_0-1-1_1.parquet": FileEntry(10)}),
            },
            id="non-partitioned-is-dot",
        ),
        pytest.param(
            commit(stat("a", ".f_1.log.1_0-1-1", 5), stat("a", ".f_1.log.1_0-1-1", 9)),
            {
                ALL_PARTITIONS_KEY: (True, {"a": LIVE}),
                "a": (False, {".f_1.log.1_0-1-1": FileEntry(9)}),
            },
            id="same-file-twice-largest-size",
        ),
        pytest.param(
            commit(stat("a/b=1", None, 0)),
            {ALL_PARTITIONS_KEY: (True, {"a/b=1": LIVE}), "a/b=1": (False, {})},
            id="stat-without-path-lists-the-partition",
        ),
        pytest.param(
            commit(operation="DELETE_PARTITION", replaced={"a": ["f1"], "b": ["f2"]}),
            {ALL_PARTITIONS_KEY: (True, {"a": GONE, "b": GONE})},
            id="delete-partition",
        ),
        pytest.param(
            commit(stat("a", "n_0-1-1_2.parquet", 7), operation="INSERT_OVERWRITE",
                   replaced={"a": ["old"]}),
            {
                ALL_PARTITIONS_KEY: (True, {"a": LIVE}),
                "a": (False, {"n_0-1-1_2.parquet": FileEntry(7)}),
            },
            id="overwrite-keeps-replaced-files-until-clean",
        ),
    ],
)  # fmt: skip
def test_commit_records(metadata, expected):
    records = commit_files_records(metadata)
    assert as_dict(records) == expected
    assert [r.key for r in records] == sorted(expected)


def test_a_partition_named_like_the_partition_list_is_refused():
    with pytest.raises(HoodieError, match="__all_partitions__"):
        commit_files_records(commit(stat(ALL_PARTITIONS_KEY, "f_0-1-1_1.parquet", 1)))


def clean(**partitions: tuple[list[str], bool]) -> CleanMetadata:
    return CleanMetadata(
        start_clean_time="3", time_taken_in_millis=0, total_files_deleted=0,
        earliest_commit_to_retain="2", last_completed_commit_timestamp="2",
        partition_metadata={
            p.replace("_", "/"): CleanPartitionMetadata(
                p.replace("_", "/"), "KEEP_LATEST_COMMITS", delete_path_patterns=names,
                success_delete_files=names, is_partition_deleted=deleted,
            )
            for p, (names, deleted) in partitions.items()
        },
    )  # fmt: skip


def test_clean_records_tombstone_deleted_files_and_partitions():
    records = clean_files_records(clean(a=(["x_0-1-1_1.parquet"], False), b=([], True)))
    assert as_dict(records) == {
        ALL_PARTITIONS_KEY: (True, {"b": GONE}),
        "a": (False, {"x_0-1-1_1.parquet": GONE}),
        "b": (False, {}),
    }


def rollback(time: str, **partitions: RollbackPartitionMetadata) -> RollbackMetadata:
    return RollbackMetadata(
        start_rollback_time=time, time_taken_in_millis=0, total_files_deleted=0,
        commits_rolled_back=["2"], partition_metadata=partitions,
    )  # fmt: skip


def test_rollback_records_delete_files_and_keep_appended_logs():
    metadata = rollback(
        "3",
        a=RollbackPartitionMetadata(
            "a",
            success_delete_files=["file:/t/a/f1_0-1-1_2.parquet", "file:/t/a/.f2_2.log.1_0-1-1"],
            failed_delete_files=["file:/t/a/stays_0-1-1_2.parquet"],
        ),
        b=RollbackPartitionMetadata(
            "b",
            rollback_log_files={"file:/t/b/.f3_1.log.2_0-1-1": 120},
            log_files_from_failed_commit={"file:/t/b/.f3_1.log.1_0-1-1": 80,
                                          "file:/t/b/.f3_1.log.2_0-1-1": 100},
        ),
    )  # fmt: skip
    assert as_dict(rollback_files_records(metadata)) == {
        "a": (False, {"f1_0-1-1_2.parquet": GONE, ".f2_2.log.1_0-1-1": GONE}),
        "b": (False, {".f3_1.log.2_0-1-1": FileEntry(120), ".f3_1.log.1_0-1-1": FileEntry(80)}),
    }


def test_rollback_deleting_a_file_it_appends_to_is_damage():
    metadata = rollback(
        "3",
        a=RollbackPartitionMetadata(
            "a", success_delete_files=["a/.f_1.log.1_0-1-1"],
            rollback_log_files={"a/.f_1.log.1_0-1-1": 10},
        ),
    )  # fmt: skip
    with pytest.raises(HoodieError, match="both written and deleted"):
        rollback_files_records(metadata)


def test_restore_records_union_its_rollbacks_later_deletes_win():
    newest = rollback(
        "9",
        a=RollbackPartitionMetadata(
            "a", success_delete_files=["a/n_0-1-1_5.parquet"],
            rollback_log_files={"a/.f_4.log.1_0-1-1": 50},
        ),
    )  # fmt: skip
    older = rollback(
        "9", a=RollbackPartitionMetadata("a", success_delete_files=["a/.f_4.log.1_0-1-1"])
    )
    restore = RestoreMetadata(
        start_restore_time="9", time_taken_in_millis=0, instants_to_rollback=["5", "4"],
        hoodie_restore_metadata={"5": [newest], "4": [older]},
    )  # fmt: skip
    assert as_dict(restore_files_records(restore)) == {
        "a": (False, {"n_0-1-1_5.parquet": GONE, ".f_4.log.1_0-1-1": GONE})
    }


def test_listing_records_bootstrap_every_partition():
    assert as_dict(listing_files_records({"": {"f_0-1-1_1.parquet": 3}})) == {
        ALL_PARTITIONS_KEY: (True, {".": LIVE}),
        ".": (False, {"f_0-1-1_1.parquet": FileEntry(3)}),
    }
    assert as_dict(listing_files_records({"a": {}, "b": {"x": 1}})) == {
        ALL_PARTITIONS_KEY: (True, {"a": LIVE, "b": LIVE}),
        "a": (False, {}),
        "b": (False, {"x": FileEntry(1)}),
    }
    assert as_dict(listing_files_records({})) == {ALL_PARTITIONS_KEY: (True, {})}


def test_a_files_listing_built_from_actions_merges_to_what_storage_holds():
    """Bootstrap, a commit, a clean and a rollback, merged with Apache Hudi's rules in order:
    the live files are exactly those still present."""
    actions = [
        listing_files_records({"a": {"b1_0-1-1_1.parquet": 10}}),
        commit_files_records(commit(stat("a", "b2_0-1-1_2.parquet", 11),
                                    stat("c", "c1_0-1-1_2.parquet", 12))),
        clean_files_records(clean(a=(["b1_0-1-1_1.parquet"], False))),
        commit_files_records(commit(stat("c", "c2_0-1-1_3.parquet", 13))),
        rollback_files_records(rollback(
            "4", c=RollbackPartitionMetadata("c", success_delete_files=["c/c2_0-1-1_3.parquet"]))),
    ]  # fmt: skip
    merged: dict[str, FilesRecord] = {}
    for records in actions:
        for record in records:
            older = merged.get(record.key)
            combined = record if older is None else merge_metadata_records(older, record)
            assert isinstance(combined, FilesRecord)
            merged[record.key] = combined
    assert {k: r.live_files() for k, r in merged.items()} == {
        ALL_PARTITIONS_KEY: {"a": 0, "c": 0},
        "a": {"b2_0-1-1_2.parquet": 11},
        "c": {"c1_0-1-1_2.parquet": 12},
    }


SAMPLES = Path(__file__).resolve().parents[2] / "docs/design/mdt-samples/runs"


def _hudi_properties(dump: str) -> dict[str, str]:
    """The metadata table's hoodie.properties in an mdt-samples dump (comment lines dropped)."""
    text = (SAMPLES / dump).read_text().split("== .hoodie/metadata/.hoodie/hoodie.properties\n")
    lines = text[1].split("\n\n", 1)[0].splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


@pytest.mark.parametrize(
    ("version", "dump"), [(6, "dump-0.15.0-mor-v6.txt"), (8, "dump-1.2.0-mor-v8.txt")]
)
def test_the_metadata_tables_properties_are_apache_hudis(version, dump):
    data = TableProperties(
        name="mdt_mor", table_type="MERGE_ON_READ", record_key_fields=("id",),
        table_version=version, timeline_layout_version=1 if version == 6 else 2,
    )  # fmt: skip
    assert metadata_table_properties(data) == _hudi_properties(dump)

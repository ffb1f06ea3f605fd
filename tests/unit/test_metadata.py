"""Commit metadata JSON, as Apache Hudi writes and reads it."""

from __future__ import annotations

import json

import pytest

from hoodie.metadata import CommitMetadata, WriteStat, stat_as_dict

COW_NONHIVE = "sample_table/cow/v6_simplekeygen_nonhivestyle"
LATEST = "20240418172804498"
FID_10 = "97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0"
FID_30 = "6db57019-98ee-480e-8eb1-fb3de48e1c24-0"


@pytest.fixture
def commit_text(sample_table) -> str:
    root = sample_table(COW_NONHIVE)
    return (root / ".hoodie" / f"{LATEST}.commit").read_text()


def test_from_json_fixture_commit(commit_text):
    meta = CommitMetadata.from_json(commit_text)
    assert meta.operation_type == "UPSERT"
    assert meta.compacted is False
    assert meta.partition_to_replace_file_ids is None
    assert sorted(meta.partition_to_write_stats) == ["10", "30"]

    (s10,) = meta.partition_to_write_stats["10"]
    assert s10.file_id == FID_10
    assert s10.partition_path == "10"
    assert s10.path == f"10/{FID_10}_0-119-166_{LATEST}.parquet"
    assert s10.prev_commit == "20240418172802262"
    assert (s10.num_writes, s10.num_update_writes, s10.num_inserts, s10.num_deletes) == (2, 1, 0, 0)
    assert s10.total_write_bytes == 441352
    assert s10.file_size_in_bytes == 441352

    (s30,) = meta.partition_to_write_stats["30"]
    assert s30.file_id == FID_30
    assert s30.prev_commit == "null"
    assert (s30.num_writes, s30.num_inserts) == (1, 1)

    assert meta.total("num_writes") == 3
    assert meta.total("num_inserts") == 1
    assert meta.total("num_update_writes") == 1
    assert {s.file_id for s in meta.write_stats()} == {FID_10, FID_30}

    schema = json.loads(meta.schema)
    assert schema["name"] == "v6_simplekeygen_nonhivestyle_record"
    assert len(schema["fields"]) == 16


def test_from_json_keeps_unknown_fields_in_extra(commit_text):
    meta = CommitMetadata.from_json(commit_text)
    (s10,) = meta.partition_to_write_stats["10"]
    assert s10.extra["runtimeStats"] == {
        "totalScanTime": 0,
        "totalUpsertTime": 103,
        "totalCreateTime": 0,
    }
    assert s10.cdc_stats is None and "cdcStats" not in s10.extra  # a known field (`hoodie.cdc`)
    assert "tempPath" in s10.extra
    # Known fields are attributes, not extras.
    assert "fileId" not in s10.extra
    assert "numWrites" not in s10.extra


def test_fixture_commit_round_trip(commit_text):
    meta = CommitMetadata.from_json(commit_text)
    again = CommitMetadata.from_json(meta.to_json())
    assert again == meta
    # Every field Hudi wrote for a stat is written back with the same value.
    original = json.loads(commit_text)
    rewritten = json.loads(meta.to_json())
    assert rewritten["extraMetadata"] == original["extraMetadata"]
    assert rewritten["operationType"] == original["operationType"]
    assert rewritten["compacted"] == original["compacted"]
    for partition, stats in original["partitionToWriteStats"].items():
        for theirs, ours in zip(stats, rewritten["partitionToWriteStats"][partition]):
            assert ours == theirs


def test_inflight_fixture_metadata_reads(sample_table):
    root = sample_table(COW_NONHIVE)
    meta = CommitMetadata.from_json((root / ".hoodie" / f"{LATEST}.inflight").read_bytes())
    # Hudi writes null partitionPath in the inflight plan: the map key fills it in.
    assert {s.partition_path for s in meta.write_stats()} == {"10", "30"}
    assert all(s.path is None for s in meta.write_stats())
    assert meta.schema is None


def test_round_trip_preserves_stats():
    meta = CommitMetadata(operation_type="INSERT", extra_metadata={"schema": '{"a":1}'})
    meta.add(
        WriteStat(
            file_id="f1-0",
            partition_path="2024/01/01",
            path="2024/01/01/f1-0_0-1-2_20240101000000000.parquet",
            prev_commit="20231231000000000",
            num_writes=10,
            num_deletes=1,
            num_update_writes=3,
            num_inserts=7,
            total_write_bytes=1234,
            file_size_in_bytes=1234,
            total_log_records=5,
            total_log_blocks=2,
        )
    )
    meta.add(
        WriteStat(
            file_id="f2-0",
            partition_path="2024/01/02",
            path="2024/01/02/.f2-0_20240101000000000.log.1_0-1-2",
            num_writes=4,
            num_inserts=4,
            base_file="f2-0_0-1-2_20240101000000000.parquet",
            log_files=[".f2-0_20240101000000000.log.1_0-1-2"],
            log_version=1,
            log_offset=0,
            extra={"custom": {"x": [1, 2]}},
        )
    )
    meta.add(WriteStat(file_id="f3-0", partition_path="2024/01/01", path=None))
    text = meta.to_json()
    data = json.loads(text)
    assert data["operationType"] == "INSERT"
    assert data["extraMetadata"] == {"schema": '{"a":1}'}
    assert "partitionToReplaceFileIds" not in data
    s1 = data["partitionToWriteStats"]["2024/01/01"][0]
    assert s1["fileId"] == "f1-0"
    assert s1["partitionPath"] == "2024/01/01"
    assert s1["prevCommit"] == "20231231000000000"
    assert s1["numWrites"] == 10 and s1["numUpdateWrites"] == 3
    assert "baseFile" not in s1 and "logFiles" not in s1
    s2 = data["partitionToWriteStats"]["2024/01/02"][0]
    assert s2["baseFile"] == "f2-0_0-1-2_20240101000000000.parquet"
    assert s2["logVersion"] == 1 and s2["logOffset"] == 0
    assert s2["custom"] == {"x": [1, 2]}
    assert s2["prevCommit"] == "null"

    again = CommitMetadata.from_json(text)
    assert again.operation_type == "INSERT"
    assert again.schema == '{"a":1}'
    assert sorted(again.partition_to_write_stats) == ["2024/01/01", "2024/01/02"]
    for ours, theirs in zip(meta.write_stats(), again.write_stats()):
        # Reading adds the Hudi-only null fields (cdcStats, tempPath, ...) as extras.
        mine = stat_as_dict(ours)
        back = stat_as_dict(theirs)
        extra_back = back.pop("extra")
        extra_mine = mine.pop("extra")
        assert back == mine
        assert {k: v for k, v in extra_back.items() if v is not None} == extra_mine
    assert again.total("num_writes") == 14
    assert again.total("total_write_bytes") == 1234
    # A second round trip is stable.
    assert CommitMetadata.from_json(again.to_json()) == again


def test_replace_commit_round_trip():
    meta = CommitMetadata(
        operation_type="INSERT_OVERWRITE_TABLE",
        partition_to_replace_file_ids={"a": ["f1-0", "f2-0"], "b": []},
    )
    again = CommitMetadata.from_json(meta.to_json())
    assert again.partition_to_replace_file_ids == {"a": ["f1-0", "f2-0"], "b": []}
    assert again.operation_type == "INSERT_OVERWRITE_TABLE"


@pytest.mark.parametrize("text", ["", b"", "   \n", b"\n"])
def test_from_json_empty(text):
    meta = CommitMetadata.from_json(text)
    assert meta.partition_to_write_stats == {}
    assert meta.write_stats() == []
    assert meta.schema is None


def test_from_json_null_fields():
    meta = CommitMetadata.from_json(
        json.dumps(
            {
                "partitionToWriteStats": {"p": [{"fileId": "f", "prevCommit": None}]},
                "extraMetadata": None,
            }
        )
    )
    (stat,) = meta.write_stats()
    assert stat.partition_path == "p"
    assert stat.prev_commit == "null"
    assert stat.path is None
    assert meta.operation_type == "UNKNOWN"
    assert meta.extra_metadata == {}

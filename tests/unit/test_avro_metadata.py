"""The Avro timeline metadata of rollback, cleaning, savepoints and restore.

Round trips of our own files, and the rollback files Hudi itself wrote into a sample table.
"""

from __future__ import annotations

import io

import fastavro
import pytest

from hoodie.avro_metadata import (
    ROLLBACK_METADATA_SCHEMA,
    ActionInstant,
    CleanerPlan,
    CleanFileInfo,
    CleanMetadata,
    CleanPartitionMetadata,
    InstantInfo,
    RestoreMetadata,
    RestorePlan,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
    SavepointMetadata,
    SavepointPartitionMetadata,
)
from hoodie.exceptions import HoodieError

ROLLBACK_TABLE = "sample_table/mor/parquet/v6_nonpartitioned_rollback"
ROLLBACK_INSTANT = "20250126040936578"
ROLLED_BACK = "20250126040826878"
BASE = "/opt/data/external_tables/v6_nonpartitioned_rollback"
FILE_GROUP = "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
FAILED_BASE_FILE = f"{BASE}/cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_{ROLLED_BACK}.parquet"
FAILED_LOG_FILE = f"file:{BASE}/.{FILE_GROUP}_20250126040823628.log.1_0-33-43"
ROLLBACK_LOG_FILE = f"file:{BASE}/.{FILE_GROUP}_20250126040823628.log.2_1-0-1"

ROLLBACK_METADATA = RollbackMetadata(
    start_rollback_time="20240102000000000",
    time_taken_in_millis=321,
    total_files_deleted=2,
    commits_rolled_back=["20240101000000000"],
    partition_metadata={
        "dt=2024-01-01": RollbackPartitionMetadata(
            partition_path="dt=2024-01-01",
            success_delete_files=["/t/dt=2024-01-01/f1-0_0-1-0_20240101000000000.parquet"],
            failed_delete_files=["/t/dt=2024-01-01/f2-0_0-1-0_20240101000000000.parquet"],
            rollback_log_files={"/t/dt=2024-01-01/.f3-0_20231231000000000.log.2_0-1-0": 105},
            log_files_from_failed_commit={
                "/t/dt=2024-01-01/.f3-0_20231231000000000.log.1_0-1-0": 4096
            },
        ),
        "dt=2024-01-02": RollbackPartitionMetadata("dt=2024-01-02", [], []),
    },
    instants_rollback=[InstantInfo("20240101000000000", "deltacommit")],
)

CLEAN_PARTITION = CleanPartitionMetadata(
    partition_path="dt=2024-01-01",
    policy="KEEP_LATEST_COMMITS",
    delete_path_patterns=["f1-0_0-1-0_20240101000000000.parquet"],
    success_delete_files=["f1-0_0-1-0_20240101000000000.parquet"],
    failed_delete_files=[],
)

SAMPLES = [
    RollbackPlan(
        instant_to_rollback=InstantInfo("20240101000000000", "commit"),
        rollback_requests=[
            RollbackRequest("dt=2024-01-01", "", "", ["/t/dt=2024-01-01/f1-0_0-1-0_2024.parquet"]),
            RollbackRequest(
                partition_path="dt=2024-01-01",
                file_id="f3-0",
                latest_base_instant="20231231000000000",
                log_blocks_to_be_deleted={
                    "/t/dt=2024-01-01/.f3-0_20231231000000000.log.1_0-1-0": 4096
                },
            ),
        ],
    ),
    ROLLBACK_METADATA,
    CleanerPlan(
        earliest_instant_to_retain=ActionInstant("20240101000000000", "commit", "COMPLETED"),
        last_completed_commit_timestamp="20240105000000000",
        policy="KEEP_LATEST_COMMITS",
        file_paths_to_be_deleted_per_partition={
            "dt=2024-01-01": [
                CleanFileInfo("/t/dt=2024-01-01/f1-0_0-1-0_20231230000000000.parquet"),
                CleanFileInfo("/bootstrap/src/dt=2024-01-01/part-0.parquet", True),
            ]
        },
        partitions_to_be_deleted=["dt=2023-12-31"],
        extra_metadata={"savepointed_timestamps": "20231229000000000"},
    ),
    CleanMetadata(
        start_clean_time="20240106000000000",
        time_taken_in_millis=88,
        total_files_deleted=1,
        earliest_commit_to_retain="20240101000000000",
        last_completed_commit_timestamp="20240105000000000",
        partition_metadata={
            "dt=2024-01-01": CLEAN_PARTITION,
            "dt=2023-12-31": CleanPartitionMetadata(
                "dt=2023-12-31", "KEEP_LATEST_COMMITS", is_partition_deleted=True
            ),
        },
        bootstrap_partition_metadata={"dt=2024-01-01": CLEAN_PARTITION},
    ),
    SavepointMetadata(
        savepointed_by="analyst",
        savepointed_at=1_704_067_200_000,
        comments="before the backfill",
        partition_metadata={
            "dt=2024-01-01": SavepointPartitionMetadata(
                "dt=2024-01-01", ["f1-0_0-1-0_20240101000000000.parquet"]
            )
        },
    ),
    RestorePlan(
        instants_to_rollback=[
            InstantInfo("20240103000000000", "replacecommit"),
            InstantInfo("20240102000000000", "commit"),
        ],
        savepoint_to_restore_timestamp="20240101000000000",
    ),
    RestoreMetadata(
        start_restore_time="20240104000000000",
        time_taken_in_millis=1234,
        instants_to_rollback=["20240102000000000", "20240103000000000"],
        hoodie_restore_metadata={
            "20240102000000000": [ROLLBACK_METADATA],
            "20240103000000000": [],
        },
        restore_instant_info=[
            InstantInfo("20240102000000000", "commit"),
            InstantInfo("20240103000000000", "replacecommit"),
        ],
    ),
]
SAMPLE_IDS = [type(sample).__name__ for sample in SAMPLES]

HUDI_RECORD_NAMES = {
    RollbackPlan: "HoodieRollbackPlan",
    RollbackMetadata: "HoodieRollbackMetadata",
    CleanerPlan: "HoodieCleanerPlan",
    CleanMetadata: "HoodieCleanMetadata",
    SavepointMetadata: "HoodieSavepointMetadata",
    RestorePlan: "HoodieRestorePlan",
    RestoreMetadata: "HoodieRestoreMetadata",
}


def _avro_file(schema: dict, record: dict) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [record])
    return out.getvalue()


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_round_trip(sample):
    assert type(sample).from_avro(sample.to_avro()) == sample


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_written_file_is_an_avro_container_named_as_hudi_names_it(sample):
    data = sample.to_avro()
    assert data[:4] == b"Obj\x01"
    reader = fastavro.reader(io.BytesIO(data))
    name = HUDI_RECORD_NAMES[type(sample)]
    assert reader.writer_schema["name"] == f"org.apache.hudi.avro.model.{name}"
    assert len(list(reader)) == 1


def test_versions_are_those_hudi_0_14_writes():
    records = {type(s): next(iter(fastavro.reader(io.BytesIO(s.to_avro())))) for s in SAMPLES}
    assert {cls.__name__: record["version"] for cls, record in records.items()} == {
        "RollbackPlan": 1,
        "RollbackMetadata": 1,
        "CleanerPlan": 2,
        "CleanMetadata": 2,
        "SavepointMetadata": 1,
        "RestorePlan": 2,
        "RestoreMetadata": 1,
    }
    # Hudi writes the deprecated version-1 file list as an empty map, not null.
    assert records[CleanerPlan]["filesToBeDeletedPerPartition"] == {}


@pytest.fixture
def rollback_timeline(sample_table):
    return sample_table(ROLLBACK_TABLE) / ".hoodie"


def test_reads_hudis_rollback_plan(rollback_timeline):
    data = (rollback_timeline / f"{ROLLBACK_INSTANT}.rollback.requested").read_bytes()
    plan = RollbackPlan.from_avro(data)

    assert plan.instant_to_rollback == InstantInfo(ROLLED_BACK, "deltacommit")
    assert plan.version == 1
    delete, roll_back_log = plan.rollback_requests
    # The base file the failed delta commit created is deleted outright...
    assert delete == RollbackRequest(
        partition_path="",
        file_id="",
        latest_base_instant="",
        files_to_be_deleted=[FAILED_BASE_FILE],
        log_blocks_to_be_deleted={},
    )
    # ...while its append to an existing file group's log is undone by a rollback block.
    assert roll_back_log.file_id == FILE_GROUP
    assert roll_back_log.latest_base_instant == "20250126040823628"
    assert roll_back_log.files_to_be_deleted == []
    assert roll_back_log.log_blocks_to_be_deleted == {FAILED_LOG_FILE: 11828}

    assert RollbackPlan.from_avro(plan.to_avro()) == plan


def test_reads_hudis_rollback_metadata(rollback_timeline):
    data = (rollback_timeline / f"{ROLLBACK_INSTANT}.rollback").read_bytes()
    metadata = RollbackMetadata.from_avro(data)

    assert metadata.start_rollback_time == ROLLBACK_INSTANT
    assert metadata.time_taken_in_millis == 195
    assert metadata.total_files_deleted == 1
    assert metadata.commits_rolled_back == [ROLLED_BACK]
    assert metadata.instants_rollback == [InstantInfo(ROLLED_BACK, "deltacommit")]
    assert metadata.version == 1
    assert metadata.partition_metadata == {
        "": RollbackPartitionMetadata(
            partition_path="",
            success_delete_files=[FAILED_BASE_FILE],
            failed_delete_files=[],
            rollback_log_files={ROLLBACK_LOG_FILE: 105},
            log_files_from_failed_commit={FAILED_LOG_FILE: 11828},
        )
    }
    # The rollback block went into a new log file of the group, which is on disk.
    assert (rollback_timeline.parent / ROLLBACK_LOG_FILE.rsplit("/", 1)[1]).is_file()

    assert RollbackMetadata.from_avro(metadata.to_avro()) == metadata


def _comparable(schema):
    """A writer schema without what does not change how data resolves: docs, Java string hints,
    and defaults placed on types rather than fields (Hudi's avsc has some; Avro ignores them)."""
    if isinstance(schema, list):
        return [_comparable(branch) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        key: _comparable(value)
        for key, value in schema.items()
        if key not in {"doc", "avro.java.string", "default", "fields"}
    }
    if "fields" in schema:
        out["fields"] = [
            {**_comparable(f), **({"default": f["default"]} if "default" in f else {})}
            for f in schema["fields"]
        ]
    # Without its Java hint, Hudi's {"type": "string"} is plain "string".
    return out["type"] if out.keys() == {"type"} else out


@pytest.mark.parametrize(
    ("file_name", "ours"),
    [("rollback.requested", SAMPLES[0]), ("rollback", ROLLBACK_METADATA)],
    ids=["plan", "metadata"],
)
def test_rollback_schemas_are_the_ones_hudi_wrote(rollback_timeline, file_name, ours):
    hudi = (rollback_timeline / f"{ROLLBACK_INSTANT}.{file_name}").read_bytes()
    hudi_schema = fastavro.reader(io.BytesIO(hudi)).writer_schema
    our_schema = fastavro.reader(io.BytesIO(ours.to_avro())).writer_schema
    assert _comparable(our_schema) == _comparable(hudi_schema)


def test_older_rollback_metadata_decodes_with_hudis_defaults():
    """A file with an older field set: no version, no `instantsRollback`, and the failed
    commit's log files under `writtenLogFiles` (an earlier Hudi name), which is skipped."""
    partition = {
        "type": "record",
        "name": "HoodieRollbackPartitionMetadata",
        "fields": [
            {"name": "partitionPath", "type": "string"},
            {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
            {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
            {"name": "writtenLogFiles", "type": ["null", {"type": "map", "values": "long"}]},
        ],
    }
    schema = {
        "type": "record",
        "name": "HoodieRollbackMetadata",
        "namespace": "org.apache.hudi.avro.model",
        "fields": [
            {"name": "startRollbackTime", "type": "string"},
            {"name": "timeTakenInMillis", "type": "long"},
            {"name": "totalFilesDeleted", "type": "int"},
            {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
            {"name": "partitionMetadata", "type": {"type": "map", "values": partition}},
        ],
    }
    data = _avro_file(
        schema,
        {
            "startRollbackTime": "2",
            "timeTakenInMillis": 5,
            "totalFilesDeleted": 1,
            "commitsRollback": ["1"],
            "partitionMetadata": {
                "p": {
                    "partitionPath": "p",
                    "successDeleteFiles": ["/t/p/f.parquet"],
                    "failedDeleteFiles": [],
                    "writtenLogFiles": {"/t/p/.f.log.1": 7},
                }
            },
        },
    )
    metadata = RollbackMetadata.from_avro(data)
    assert metadata == RollbackMetadata(
        "2", 5, 1, ["1"], {"p": RollbackPartitionMetadata("p", ["/t/p/f.parquet"], [])}
    )
    assert metadata.version == 1 and metadata.instants_rollback == []


def test_version_1_cleaner_plan_decodes_with_hudis_defaults():
    """Old plans lack the last completed commit and list file names per partition."""
    instant = {
        "type": "record",
        "name": "HoodieActionInstant",
        "fields": [{"name": name, "type": "string"} for name in ("timestamp", "action", "state")],
    }
    schema = {
        "type": "record",
        "name": "HoodieCleanerPlan",
        "namespace": "org.apache.hudi.avro.model",
        "fields": [
            {"name": "earliestInstantToRetain", "type": ["null", instant]},
            {"name": "policy", "type": "string"},
            {
                "name": "filesToBeDeletedPerPartition",
                "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}],
            },
            {"name": "version", "type": ["int", "null"]},
        ],
    }
    data = _avro_file(
        schema,
        {
            "earliestInstantToRetain": None,
            "policy": "KEEP_LATEST_FILE_VERSIONS",
            "filesToBeDeletedPerPartition": {"p": ["f1-0_0-1-0_1.parquet"]},
            "version": 1,
        },
    )
    plan = CleanerPlan.from_avro(data)
    assert plan == CleanerPlan(
        earliest_instant_to_retain=None,
        last_completed_commit_timestamp="",
        policy="KEEP_LATEST_FILE_VERSIONS",
        file_paths_to_be_deleted_per_partition={},
        version=1,
        files_to_be_deleted_per_partition={"p": ["f1-0_0-1-0_1.parquet"]},
    )
    assert CleanerPlan.from_avro(plan.to_avro()) == plan


def test_restore_plan_without_savepoint_field_takes_hudis_default_version():
    schema = {
        "type": "record",
        "name": "HoodieRestorePlan",
        "namespace": "org.apache.hudi.avro.model",
        "fields": [
            {
                "name": "instantsToRollback",
                "type": {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieInstantInfo",
                        "fields": [
                            {"name": "commitTime", "type": "string"},
                            {"name": "action", "type": "string"},
                        ],
                    },
                },
            },
        ],
    }
    data = _avro_file(schema, {"instantsToRollback": [{"commitTime": "3", "action": "commit"}]})
    assert RestorePlan.from_avro(data) == RestorePlan([InstantInfo("3", "commit")], version=2)


def test_rejects_empty_content_and_other_records():
    with pytest.raises(HoodieError, match="empty"):
        RollbackMetadata.from_avro(b"")
    with pytest.raises(HoodieError, match="HoodieCleanMetadata"):
        RollbackMetadata.from_avro(SAMPLES[3].to_avro())
    (record,) = fastavro.reader(io.BytesIO(ROLLBACK_METADATA.to_avro()))
    two = io.BytesIO()
    fastavro.writer(two, ROLLBACK_METADATA_SCHEMA, [record, record])
    with pytest.raises(HoodieError, match="found 2"):
        RollbackMetadata.from_avro(two.getvalue())

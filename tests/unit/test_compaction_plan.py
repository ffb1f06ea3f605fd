"""The compaction plan's Avro encoding and the inline compaction trigger."""

from __future__ import annotations

import io

import fastavro

from hoodie.compaction_plan import (
    PLAN_VERSION,
    CompactionOperation,
    CompactionPlan,
    read_plan,
)
from hoodie.storage import load_file_io
from hoodie.table_services.compaction import delta_commits_since_compaction
from hoodie.timeline import LAYOUT_V1, LAYOUT_V2, Action, Instant, State, Timeline

OPERATIONS = [
    CompactionOperation(
        partition_path="2024/01/01",
        file_id="f1-0",
        base_instant="20240101000000000",
        base_file="f1-0_0-1-0_20240101000000000.parquet",
        log_files=(".f1-0_20240101000000000.log.1_0-2-0", ".f1-0_20240101000000000.log.2_0-3-0"),
        metrics={"TOTAL_LOG_FILES": 2.0},
    ),
    CompactionOperation(
        "", "f2-0", "20240101000000000", None, (".f2-0_20240101000000000.log.1_0-2-0",)
    ),
]


def test_plan_round_trips():
    data = CompactionPlan(OPERATIONS).to_avro()
    plan = CompactionPlan.from_avro(data)
    assert plan.operations == OPERATIONS
    assert plan.operations[0].metrics == {"TOTAL_LOG_FILES": 2.0}
    assert plan.version == PLAN_VERSION
    assert plan.file_groups() == {("2024/01/01", "f1-0"), ("", "f2-0")}


def test_plan_is_an_avro_data_file_with_hudis_record_names():
    reader = fastavro.reader(io.BytesIO(CompactionPlan(OPERATIONS).to_avro()))
    schema = reader.writer_schema
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieCompactionPlan"
    (record,) = list(reader)
    first = record["operations"][0]
    assert first["dataFilePath"] == "f1-0_0-1-0_20240101000000000.parquet"
    assert first["deltaFilePaths"][1] == ".f1-0_20240101000000000.log.2_0-3-0"
    assert first["baseInstantTime"] == "20240101000000000"
    assert record["version"] == 2


def test_version_1_plans_with_full_paths_are_read_by_file_name():
    raw = io.BytesIO()
    from hoodie.compaction_plan import PLAN_SCHEMA

    fastavro.writer(raw, PLAN_SCHEMA, [{
        "operations": [{
            "baseInstantTime": "1", "fileId": "f", "partitionPath": "p",
            "dataFilePath": "/lake/t/p/f_0-1-0_1.parquet",
            "deltaFilePaths": ["/lake/t/p/.f_1.log.1_0-1-0"],
            "metrics": None, "bootstrapFilePath": None,
        }],
        "extraMetadata": None,
        "version": 1,
    }])  # fmt: skip
    (op,) = CompactionPlan.from_avro(raw.getvalue()).operations
    assert (op.base_file, op.log_files) == ("f_0-1-0_1.parquet", (".f_1.log.1_0-1-0",))
    assert op.relative(op.base_file) == "p/f_0-1-0_1.parquet"


def test_plan_lives_in_the_requested_compaction_file(tmp_path):
    plan = CompactionPlan([])
    for layout in (LAYOUT_V1, LAYOUT_V2):
        storage = load_file_io(str(tmp_path / str(layout.version)))
        requested = Instant("20240101000000000", Action.COMPACTION, State.REQUESTED)
        storage.write_bytes(layout.path(requested), plan.to_avro())
        assert read_plan(storage, layout, "20240101000000000").operations == []


def _timeline(*entries) -> Timeline:
    return Timeline([Instant(t, a, s) for t, a, s in entries])


def test_delta_commits_are_counted_since_the_latest_compaction():
    done = State.COMPLETED
    assert delta_commits_since_compaction(_timeline()) == 0
    timeline = _timeline(
        ("001", Action.DELTA_COMMIT, done),
        ("002", Action.DELTA_COMMIT, done),
        ("003", Action.COMMIT, done),  # a completed compaction
        ("004", Action.DELTA_COMMIT, done),
        ("005", Action.DELTA_COMMIT, State.INFLIGHT),  # not completed: not counted
    )
    assert delta_commits_since_compaction(timeline) == 1
    pending = _timeline(
        ("001", Action.DELTA_COMMIT, done),
        ("002", Action.COMPACTION, State.REQUESTED),  # a pending plan also resets the count
        ("003", Action.DELTA_COMMIT, done),
    )
    assert delta_commits_since_compaction(pending) == 1
    assert delta_commits_since_compaction(_timeline(("001", Action.DELTA_COMMIT, done))) == 1

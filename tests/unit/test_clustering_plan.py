"""The clustering plan's Avro encoding (ours and Apache Hudi 1.2's), its path checks, and
clustering's row orders."""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from hoodie import WriteConfig
from hoodie.clustering_plan import (
    SORT_COLUMNS_PARAM,
    ClusteringGroup,
    ClusteringPlan,
    SliceInfo,
    is_clustering,
    pending_clustering_file_groups,
)
from hoodie.exceptions import InvalidConfigError, UnsafePathError
from hoodie.storage import load_file_io
from hoodie.table_services.clustering import sorted_rows, zorder_indices
from hoodie.timeline import LAYOUT_V1, LAYOUT_V2, Action, Instant, State, Timeline

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "clustering"
HUDI_TABLE = "/tmp/pytest-of-root/pytest-120/test_we_read_apache_hudis_clus0/theirs"
BASE = "p/f1-0_0-1-0_20240101000000000.parquet"
LOG = "p/.f1-0_20240101000000000.log.1_0-2-0"
PLAN = ClusteringPlan(
    [
        ClusteringGroup(
            (SliceInfo("p", "f1-0", BASE, (LOG,)),
             SliceInfo("p", "f2-0", "p/f2-0_0-1-0_20240101000000000.parquet")),
            2,
            {"TOTAL_IO_MB": 1.5},
        ),
        ClusteringGroup((SliceInfo("", "f3-0", "f3-0_0-1-0_20240101000000000.parquet"),)),
    ],
    strategy_params={SORT_COLUMNS_PARAM: "name,id"},
)  # fmt: skip


@pytest.mark.parametrize("layout", [1, 2])
def test_round_trip(tmp_path, layout):
    storage = load_file_io(str(tmp_path))
    data = PLAN.to_avro(storage, layout)
    reader = fastavro.reader(io.BytesIO(data))
    schema = reader.writer_schema
    assert isinstance(schema, dict)
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata"
    (record,) = list(reader)
    plan_fields = set(record["clusteringPlan"])
    # 0.15's field set on version 6 tables, 1.2's on version 8 ones
    assert ("missingSchedulePartitions" in plan_fields) is (layout == 2)
    assert record["operationType"] == "CLUSTER"
    assert record["clusteringPlan"]["inputGroups"][0]["slices"][0]["dataFilePath"] == (
        storage.uri(BASE)
    )
    decoded = ClusteringPlan.from_avro(data, storage, "plan")
    assert decoded == PLAN
    assert decoded.sort_columns == ("name", "id")
    assert decoded.groups[0].metrics == {"TOTAL_IO_MB": 1.5}


def test_apache_hudis_plan():
    data = (FIXTURE / "hudi-1.2.0-v8.clustering.requested").read_bytes()
    plan = ClusteringPlan.from_avro(data, load_file_io(HUDI_TABLE), "plan")
    assert plan is not None
    (group,) = plan.groups
    assert group.num_output_file_groups == 1
    assert [s.partition_path for s in group.slices] == ["p", "p", "p"]
    assert all(s.base_file.startswith(f"p/{s.file_id}_") for s in group.slices)
    assert all(s.log_files == () for s in group.slices)
    assert plan.sort_columns == ("name",)
    assert plan.preserve_hoodie_metadata
    assert set(group.metrics) >= {"TOTAL_IO_MB", "TOTAL_LOG_FILES"}
    # read at another table's path, its paths lie outside: refused
    with pytest.raises(UnsafePathError, match="outside the table"):
        ClusteringPlan.from_avro(data, load_file_io("/elsewhere/t"), "plan")


def _with_slice(tmp_path, **changes) -> bytes:
    storage = load_file_io(str(tmp_path))
    record = next(iter(fastavro.reader(io.BytesIO(PLAN.to_avro(storage, 2)))))
    record["clusteringPlan"]["inputGroups"][0]["slices"][0].update(changes)
    out = io.BytesIO()
    fastavro.writer(out, fastavro.reader(io.BytesIO(PLAN.to_avro(storage, 2))).writer_schema,
                    [record])  # fmt: skip
    return out.getvalue()


@pytest.mark.parametrize("changes, message", [
    ({"dataFilePath": "/etc/passwd"}, "outside the table"),
    ({"dataFilePath": "../x/f1-0_0-1-0_20240101000000000.parquet"}, "outside the table|a '.'"),
    ({"dataFilePath": ".hoodie/hoodie.properties"}, "hoodie"),
    ({"dataFilePath": "q/f1-0_0-1-0_20240101000000000.parquet"}, "does not belong"),
    ({"dataFilePath": "p/f9-0_0-1-0_20240101000000000.parquet"}, "does not belong"),
    ({"deltaFilePaths": ["p/.f9-0_20240101000000000.log.1_0-2-0"]}, "does not belong"),
    ({"fileId": "../f1-0"}, "no file id"),
])  # fmt: skip
def test_hostile_paths_are_refused(tmp_path, changes, message):
    data = _with_slice(tmp_path, **changes)
    with pytest.raises(UnsafePathError, match=message):
        ClusteringPlan.from_avro(data, load_file_io(str(tmp_path)), "plan")


def test_which_replace_commits_are_clusterings(tmp_path):
    storage = load_file_io(str(tmp_path))
    for layout in (LAYOUT_V1, LAYOUT_V2):
        # layout 1: a pending replace commit is a clustering by its requested file only
        overwrite = Instant("20240101000000001", Action.REPLACE_COMMIT, State.REQUESTED)
        cluster = Instant("20240101000000002", requested_action(layout), State.REQUESTED)
        storage.write_atomic(layout.path(overwrite), b"")
        storage.write_atomic(layout.path(cluster), PLAN.to_avro(storage, layout.version))
        assert not is_clustering(storage, layout, overwrite)
        assert is_clustering(storage, layout, cluster)
        groups = pending_clustering_file_groups(storage, Timeline([overwrite, cluster], layout))
        assert groups == {(s.partition_path, s.file_id): cluster.timestamp
                          for g in PLAN.groups for s in g.slices}  # fmt: skip


def requested_action(layout) -> Action:
    return Action.CLUSTERING if layout.version >= 2 else Action.REPLACE_COMMIT


def test_zorder_interleaves_bits():
    rows = pa.table({"x": [3, 0, 1, 0, 2, 1], "y": [3, 0, 0, 1, 2, 1]})
    order = zorder_indices(rows, ("x", "y"))
    pairs = [(rows["x"][i].as_py(), rows["y"][i].as_py()) for i in order]
    # the Z curve (x's bit first): (0,0) (0,1) (1,0) (1,1), then the next quadrant
    assert pairs == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 2), (3, 3)]


def test_linear_sorts_nulls_first_and_breaks_ties_by_key():
    rows = pa.table({"_hoodie_record_key": ["b", "a", "c", "d"], "name": ["x", "x", None, "a"]})
    by_name = sorted_rows(rows, ("name",), "LINEAR")["_hoodie_record_key"].to_pylist()
    assert by_name == ["c", "d", "a", "b"]
    assert sorted_rows(rows, (), "LINEAR")["_hoodie_record_key"].to_pylist() == ["a", "b", "c", "d"]


@pytest.mark.parametrize("option, value", [
    ("hoodie.layout.optimize.strategy", "HILBERT"),
    ("hoodie.clustering.plan.strategy.class", "x.Y"),
    ("hoodie.clustering.execution.strategy.class", "x.Y"),
    ("hoodie.clustering.plan.partition.filter.mode", "RECENT_DAYS"),
    ("hoodie.layout.optimize.curve.build.method", "SAMPLE"),
])  # fmt: skip
def test_other_strategies_are_refused_by_name(option, value):
    with pytest.raises(InvalidConfigError, match=f"'{option}'={value} is not supported"):
        WriteConfig.build("t", record_key="id", options={option: value})
    layout = WriteConfig.build("t", record_key="id",
                               options={"hoodie.layout.optimize.strategy": "zorder"})  # fmt: skip
    assert layout.layout_optimize_strategy == "ZORDER"


def test_inline_and_schedule_only_exclude_each_other():
    both = {"hoodie.clustering.inline": "true", "hoodie.clustering.schedule.inline": "true"}
    with pytest.raises(InvalidConfigError, match="both true"):
        WriteConfig.build("t", record_key="id", options=both)

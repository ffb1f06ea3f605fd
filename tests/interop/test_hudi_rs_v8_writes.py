"""Tables we write at table version 8 (`hoodie.write.table.version: 8`), laid out as Apache Hudi
1.0 lays them out and read by hudi-rs exactly as by us.

One history per table type: upserts into two partitions, a delete, more upserts (merge-on-read:
an inline compaction after three delta commits, then a delta commit on top of it), cleaning and
archival to the LSM timeline; then a rollback of the latest commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from rs_compare import assert_history_agrees, assert_same_rows, read_ours, read_theirs, rows_of

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as P
from hoodie.exceptions import InvalidConfigError
from hoodie.metadata import AVRO_MAGIC, CommitMetadata
from hoodie.naming import parse_log_file_name
from hoodie.read.datasource import register
from hoodie.read.planner import readable_range
from hoodie.schema import META_COLUMNS
from hoodie.timeline import LAYOUT_V2, Action

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

SCHEMA = "id int, part string, ts int, name string"
QUERY_TYPE = "hoodie.datasource.query.type"
OPTIONS = {
    "hoodie.write.table.version": "8",
    "hoodie.compact.inline.max.delta.commits": "3",
    "hoodie.cleaner.commits.retained": "2",
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "4",
}


def _batch(spark, ids, ts: int, tag: str):
    return spark.createDataFrame([(i, f"p{i % 2}", ts, f"{tag}{i}") for i in ids], SCHEMA)


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def written(request, spark, tmp_path_factory):
    register(spark)
    path = str(tmp_path_factory.mktemp(request.param.lower()) / "orders")
    config = WriteConfig.build(
        "orders", record_key="id", partition_path="part", precombine_field="ts",
        table_type=request.param, options=OPTIONS,
    )  # fmt: skip
    table = HoodieTable.for_write(path, config)
    table.upsert(_batch(spark, range(10), 1, "a"), config)
    table.upsert(_batch(spark, range(5, 15), 2, "b"), config)
    table.delete(_batch(spark, [1, 6], 3, "x"), config)
    for step, ids in enumerate([range(12, 18), range(0, 4), range(16, 22), range(8, 11)]):
        table.upsert(_batch(spark, ids, 4 + step, f"c{step}"), config)
    return SimpleNamespace(path=path, table=table, config=config, spark=spark,
                           mor=request.param == "MERGE_ON_READ")  # fmt: skip


def _ours(written, **options) -> pa.Table:
    return read_ours(written.spark, written.path, **options)


def _theirs(written, options=None) -> pa.Table | None:
    return read_theirs(hudi.HudiTable(written.path), options)


def _same(ours, theirs) -> list[dict]:
    return assert_same_rows("v8 table", "_hoodie_record_key", ours, theirs)


def test_the_table_is_version_8_as_hudi_1_0_writes_it(written):
    props = P.loads((Path(written.path) / ".hoodie" / "hoodie.properties").read_text())
    assert props[P.TABLE_VERSION] == "8" and props[P.TIMELINE_LAYOUT_VERSION] == "2"
    assert props[P.INITIAL_VERSION] == "8"
    assert (props[P.TIMELINE_PATH], props[P.TIMELINE_HISTORY_PATH]) == ("timeline", "history")
    assert props[P.RECORD_MERGE_MODE] == "EVENT_TIME_ORDERING"
    assert props[P.KEY_GENERATOR_TYPE] == "SIMPLE"
    # Every instant is in .hoodie/timeline/; nothing of the timeline is left in .hoodie/.
    top = [p.name for p in (Path(written.path) / ".hoodie").iterdir() if p.is_file()]
    assert top == ["hoodie.properties"]


def test_completed_instants_carry_their_completion_time(written):
    timeline = written.table.timeline()
    completed = timeline.completed.instants
    assert completed and all(i.completion_time is not None for i in completed)
    assert all(i.completion_time > i.timestamp for i in completed)
    # One writer: instants complete in the order they were requested.
    assert sorted(completed, key=lambda i: i.completion_time) == list(completed)
    folder = Path(written.path) / LAYOUT_V2.folder
    for instant in timeline.completed.write_timeline:
        content = (folder / LAYOUT_V2.file_name(instant)).read_bytes()
        assert content.startswith(AVRO_MAGIC)
        assert CommitMetadata.parse(content).schema


def test_merge_on_read_log_files_belong_to_their_delta_commit(written):
    if not written.mor:
        pytest.skip("merge-on-read")
    timeline = written.table.timeline()
    deltas = [i for i in timeline.completed.write_timeline if i.action is Action.DELTA_COMMIT]
    logs = 0
    for instant in deltas:
        for stat in written.table.commit_metadata(instant).write_stats():
            name = parse_log_file_name(Path(stat.path).name)
            if name is None:
                continue  # an insert into a new base file
            logs += 1
            assert (name.instant, name.version) == (instant.timestamp, 1)
            assert stat.prev_commit == instant.timestamp and stat.base_file == ""
            assert stat.log_files == [Path(stat.path).name]
    assert logs
    compactions = [i for i in timeline.completed.write_timeline if i.action is Action.COMMIT]
    assert compactions, "three delta commits trigger an inline compaction"


def test_hudi_rs_reads_the_snapshot_and_read_optimized_rows(written):
    snapshot = _same(_ours(written), _theirs(written))
    # 1 and 6 deleted, then 1 written again.
    assert {r["_hoodie_record_key"] for r in snapshot} == {str(i) for i in range(22) if i != 6}
    read_optimized = hudi.HudiReadOptions().with_hudi_option(
        "hoodie.read.use.read_optimized.mode", "true"
    )
    _same(_ours(written, **{QUERY_TYPE: "read_optimized"}), _theirs(written, read_optimized))


def test_hudi_rs_agrees_on_time_travel_and_incremental_reads(written):
    writes = written.table.timeline().completed.write_timeline.instants
    first_readable, _ = readable_range(written.table.meta_client)
    writes = [i for i in writes if i.timestamp >= first_readable]  # older ones were cleaned
    assert_history_agrees(written.spark, written.path, writes)


def test_archival_moved_old_instants_to_the_lsm_timeline(written):
    archived = written.table.meta_client.archived_instants()
    assert archived, "keep.max.commits=4 archives"
    active = set(written.table.timeline().timestamps())
    assert not active & {a.timestamp for a in archived}
    assert all(a.completion_time and a.completion_time > a.timestamp for a in archived)
    history = Path(written.path) / ".hoodie" / "timeline" / "history"
    version = int((history / "_version_").read_text())
    listed = json.loads((history / f"manifest_{version}").read_text())["files"]
    assert {f["fileName"] for f in listed} <= {p.name for p in history.glob("*.parquet")}
    assert not (Path(written.path) / ".hoodie" / "archived").exists() or not any(
        (Path(written.path) / ".hoodie" / "archived").iterdir()
    )


def test_rolling_back_the_latest_commit_deletes_its_files(written, tmp_path):
    """Table version 8 rolls back by deleting what the instant wrote (log files too: each
    belongs to one delta commit), never by appending command blocks."""
    before = rows_of(_ours(written), list(META_COLUMNS), "_hoodie_record_key")
    latest = written.table.timeline().completed.write_timeline.instants[-1]
    written.table.upsert(_batch(written.spark, [3, 30], 99, "z"), written.config)
    written.table.services.rollback()
    after = _ours(written)
    assert rows_of(after, list(META_COLUMNS), "_hoodie_record_key") == before
    _same(after, _theirs(written))
    timeline = written.table.timeline()
    assert timeline.completed.write_timeline.instants[-1] == latest
    rollbacks = [i for i in timeline.completed if i.action is Action.ROLLBACK]
    assert rollbacks and rollbacks[-1].completion_time is not None
    for path in Path(written.path).rglob(".*.log.*"):
        blocks = parse_log_file_name(path.name)
        assert blocks is not None and blocks.version == 1, path.name


def test_a_table_keeps_its_version(spark, tmp_path):
    """An existing table is written at its own version: asking another is an error naming the
    option, before anything is written; leaving the option out writes the table's version."""
    v6 = WriteConfig.build(
        "t", record_key="id", partition_path="part", precombine_field="ts",
        options={"hoodie.write.table.version": "6"},
    )  # fmt: skip
    table = HoodieTable.for_write(str(tmp_path / "t"), v6)
    table.upsert(_batch(spark, range(3), 1, "a"), v6)
    before = sorted(p.name for p in (tmp_path / "t").rglob("*"))
    v8 = WriteConfig.build(
        "t", record_key="id", partition_path="part", precombine_field="ts",
        options={"hoodie.write.table.version": "8"},
    )  # fmt: skip
    with pytest.raises(InvalidConfigError, match="table version 6.*hoodie.write.table.version=8"):
        table.upsert(_batch(spark, range(3), 2, "b"), v8)
    with pytest.raises(InvalidConfigError, match="upgrade it .*hoodie_upgrade"):
        table.upsert(_batch(spark, range(3), 2, "b"), v8)
    assert sorted(p.name for p in (tmp_path / "t").rglob("*")) == before
    table8 = HoodieTable.for_write(str(tmp_path / "t8"), v8)
    table8.upsert(_batch(spark, range(3), 1, "a"), v8)
    unset = WriteConfig.build("t", record_key="id", partition_path="part", precombine_field="ts")
    table8.upsert(_batch(spark, range(2, 5), 2, "b"), unset)
    assert table8.properties.table_version == 8
    assert len(table8.timeline().completed.write_timeline) == 2

"""Upgrading a table version 6 table to version 8 (`HoodieTable.upgrade`, the `hoodie_upgrade`
operation): the table reads the same at every instant, in our reader and in hudi-rs, its
timeline and archive move to Hudi 1.x's layout, and it takes version 8 writes afterwards.

One history per table type, written at version 6: upserts into two partitions, a delete, more
upserts (merge-on-read: an inline compaction, then delta commits left in log files), cleaning,
archival into `.hoodie/archived/`, a savepoint. Crashes during the upgrade are
tests/faults/test_upgrade_crashes.py.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from rs_compare import assert_history_agrees, assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as P
from hoodie.archived_timeline import ARCHIVE_FOLDER, history_instants
from hoodie.exceptions import TimelineError
from hoodie.metadata import AVRO_MAGIC, CommitMetadata
from hoodie.naming import parse_log_file_name
from hoodie.read.datasource import register
from hoodie.read.planner import readable_range
from hoodie.timeline import LAYOUT_V2, Action

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

SCHEMA = "id int, part string, ts int, name string"
KEY = "_hoodie_record_key"
OPTIONS = {
    "hoodie.write.table.version": "6",
    "hoodie.compact.inline.max.delta.commits": "3",
    "hoodie.cleaner.commits.retained": "3",
    "hoodie.keep.min.commits": "4",
    "hoodie.keep.max.commits": "5",
}


def _batch(spark, ids, ts: int, tag: str):
    return spark.createDataFrame([(i, f"p{i % 2}", ts, f"{tag}{i}") for i in ids], SCHEMA)


def _config(table_type: str, version: str) -> WriteConfig:
    return WriteConfig.build(
        "orders", record_key="id", partition_path="part", precombine_field="ts",
        table_type=table_type, options={**OPTIONS, "hoodie.write.table.version": version},
    )  # fmt: skip


def _reads(spark, path: str, instants: list[str], mor: bool) -> dict:
    """Everything a reader can ask of the table, keyed by the question."""
    out = {"snapshot": _rows(read_ours(spark, path))}
    if mor:
        options = {"hoodie.datasource.query.type": "read_optimized"}
        out["read_optimized"] = _rows(read_ours(spark, path, **options))
    for instant in instants:
        out[f"as of {instant}"] = _rows(read_ours(spark, path, **{"as.of.instant": instant}))
    return out


def _rows(table: pa.Table) -> list[tuple]:
    return sorted(zip(*(table[c].to_pylist() for c in ("id", "part", "ts", "name"))))


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def upgraded(request, spark, tmp_path_factory):
    register(spark)
    mor = request.param == "MERGE_ON_READ"
    path = str(tmp_path_factory.mktemp(request.param.lower()) / "orders")
    config = _config(request.param, "6")
    table = HoodieTable.for_write(path, config)
    table.upsert(_batch(spark, range(10), 1, "a"), config)
    table.upsert(_batch(spark, range(5, 15), 2, "b"), config)
    table.delete(_batch(spark, [1, 6], 3, "x"), config)
    for step, ids in enumerate([range(12, 18), range(0, 4), range(16, 22), range(8, 11)]):
        table.upsert(_batch(spark, ids, 4 + step, f"c{step}"), config)
    table.services.savepoint()
    table.upsert(_batch(spark, [2, 3, 20], 9, "d"), config)
    assert table.properties.table_version == 6
    archived = {a.timestamp for a in table.meta_client.archived_instants()}
    assert archived, "the history reaches .hoodie/archived/"
    before_timeline = table.timeline()
    first_readable, _ = readable_range(table.meta_client)
    writes = [
        t for t in before_timeline.completed.write_timeline.timestamps() if t >= first_readable
    ]
    if mor:
        latest = [g.latest_slice for g in table.file_system_view().file_groups()]
        assert any(s is not None and s.log_files for s in latest), "log files to compact"
    before = _reads(spark, path, writes, mor)
    theirs_before = read_theirs(hudi.HudiTable(path))
    result = table.services.upgrade(spark, config)
    return SimpleNamespace(
        path=path, table=table, spark=spark, mor=mor, result=result, before=before,
        writes=writes, archived=archived, before_timeline=before_timeline,
        theirs_before=theirs_before, table_type=request.param,
    )  # fmt: skip


def test_the_table_is_version_8_with_its_history(upgraded):
    props = P.loads((Path(upgraded.path) / ".hoodie" / "hoodie.properties").read_text())
    assert props[P.TABLE_VERSION] == "8" and props[P.TIMELINE_LAYOUT_VERSION] == "2"
    assert props[P.INITIAL_VERSION] == "6"
    assert (props[P.TIMELINE_PATH], props[P.TIMELINE_HISTORY_PATH]) == ("timeline", "history")
    assert props[P.RECORD_MERGE_MODE] == "EVENT_TIME_ORDERING"
    assert upgraded.table.properties.table_version == 8
    # Nothing of layout 1 is left: no instant file in .hoodie/, no archive, no backup.
    meta = Path(upgraded.path) / ".hoodie"
    assert [p.name for p in meta.iterdir() if p.is_file()] == ["hoodie.properties"]
    assert not (Path(upgraded.path) / ARCHIVE_FOLDER).exists()
    result = upgraded.result
    assert (result.from_version, result.to_version) == (6, 8)
    assert result.archived_instants == len(upgraded.archived) and result.leftovers_removed


def test_every_instant_moved_with_a_completion_time_in_order(upgraded):
    timeline = upgraded.table.timeline()
    moved = {(i.timestamp, i.action) for i in upgraded.before_timeline.completed}
    now = {(i.timestamp, i.action) for i in timeline.completed}
    assert moved <= now
    completed = timeline.completed.instants
    assert all(i.completion_time is not None and i.completion_time >= i.timestamp
               for i in completed)  # fmt: skip
    # Each completes before the next instant starts: the order version 6 readers saw. (A
    # savepoint has the time of the commit it pins.)
    for earlier, later in zip(completed, completed[1:]):
        assert earlier.completion_time < later.timestamp or earlier.timestamp == later.timestamp
    folder = Path(upgraded.path) / LAYOUT_V2.folder
    for instant in timeline.completed.write_timeline:
        content = (folder / LAYOUT_V2.file_name(instant)).read_bytes()
        assert content.startswith(AVRO_MAGIC)
        assert CommitMetadata.parse(content).schema
    # The archived instants are in the LSM timeline, with their own time as completion.
    history = {a.timestamp: a for a in history_instants(upgraded.table.storage)}
    assert {t for t in upgraded.archived if t in history} == {
        t for t in upgraded.archived if t not in {i.timestamp for i in completed}
    }
    assert all(history[t].completion_time == t for t in history)
    # The timeline operation's rows show them.
    rows = {(r["instant"], r["action"]): r for r in upgraded.table.history()}
    for instant in completed:
        assert rows[(instant.timestamp, instant.action.value)]["completed"] == (
            instant.completion_time
        )
    assert {r["completed"] for r in rows.values() if r["state"] == "COMPLETED (archived)"} <= {
        *history
    }


def test_merge_on_read_logs_were_compacted_first(upgraded):
    if not upgraded.mor:
        pytest.skip("merge-on-read")
    timeline = upgraded.table.timeline()
    last = timeline.completed.write_timeline.instants[-1]
    assert last.action is Action.COMMIT and last.timestamp > upgraded.writes[-1]
    assert upgraded.table.commit_metadata(last).operation_type == "COMPACT"
    for group in upgraded.table.file_system_view().file_groups():
        assert group.latest_slice is None or not group.latest_slice.log_files


def test_it_reads_as_before_at_every_instant(upgraded):
    after = _reads(upgraded.spark, upgraded.path, upgraded.writes, upgraded.mor)
    if upgraded.mor:  # the compaction made every row's latest version a base file's
        assert after.pop("read_optimized") == upgraded.before["snapshot"]
        upgraded.before.pop("read_optimized")
    assert after == upgraded.before


def test_hudi_rs_reads_it_as_we_do(upgraded):
    table = hudi.HudiTable(upgraded.path)
    ours = read_ours(upgraded.spark, upgraded.path)
    assert_same_rows("upgraded", KEY, ours, read_theirs(table))
    # As hudi-rs read the version 6 table (the compaction moved rows to other files).
    same = [c for c in upgraded.theirs_before.column_names if c != "_hoodie_file_name"]
    assert_same_rows("before", KEY, ours, upgraded.theirs_before.select(same))
    # Time travel to every write that moved (and the upgrade's compaction), incremental by
    # completion time between them.
    writes = [i for i in upgraded.table.timeline().completed.write_timeline
              if i.timestamp >= upgraded.writes[0]]  # fmt: skip
    assert [i.timestamp for i in writes][: len(upgraded.writes)] == upgraded.writes
    assert_history_agrees(upgraded.spark, upgraded.path, writes, KEY)


def test_it_takes_version_8_writes_and_rollbacks_afterwards(upgraded):
    spark, path = upgraded.spark, upgraded.path
    config = _config(upgraded.table_type, "8")
    before = _rows(read_ours(spark, path))
    result = upgraded.table.upsert(_batch(spark, [0, 4, 30], 20, "e"), config)
    instant = result.instant
    names = [Path(s.path).name for s in upgraded.table.commit_metadata(
        upgraded.table.timeline().completed.write_timeline.instants[-1]).write_stats()]  # fmt: skip
    if upgraded.mor:
        logs = [parse_log_file_name(n) for n in names if parse_log_file_name(n)]
        assert logs and all((n.instant, n.version) == (instant, 1) for n in logs)
    ours = read_ours(spark, path)
    assert_same_rows("after a write", KEY, ours, read_theirs(hudi.HudiTable(path)))
    assert {r[0] for r in _rows(ours)} == {r[0] for r in before} | {30}
    # The version 6 table's config (no table version asked) writes it at version 8 too.
    upgraded.table.upsert(_batch(spark, [5], 21, "f"), _config(upgraded.table_type, "8"))
    with pytest.raises(Exception, match="hoodie.write.table.version"):
        upgraded.table.upsert(_batch(spark, [5], 22, "g"), _config(upgraded.table_type, "6"))
    upgraded.table.services.rollback()
    upgraded.table.services.rollback()
    assert _rows(read_ours(spark, path)) == before
    assert_same_rows("rolled back", KEY, read_ours(spark, path), read_theirs(hudi.HudiTable(path)))


def test_upgrading_again_changes_nothing(upgraded):
    files = sorted(str(p) for p in Path(upgraded.path).rglob("*"))
    result = upgraded.table.services.upgrade(upgraded.spark)
    assert (result.from_version, result.to_version, result.timeline_files) == (8, 8, 0)
    assert result.leftovers_removed == 0
    assert sorted(str(p) for p in Path(upgraded.path).rglob("*")) == files


def test_a_pending_write_of_a_live_writer_stops_the_upgrade(spark, tmp_path):
    """A write whose writer is still running (here: a pending instant with a live heartbeat
    under optimistic concurrency) is neither rolled back nor carried over: the upgrade refuses,
    naming it, and the table stays version 6."""
    from hoodie.timeline import Instant, State
    from hoodie.transaction.heartbeat import Heartbeat

    occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
    config = WriteConfig.build(
        "orders", record_key="id", partition_path="part", precombine_field="ts",
        options={**OPTIONS, **occ},
    )  # fmt: skip
    table = HoodieTable.for_write(str(tmp_path / "t"), config)
    table.upsert(_batch(spark, range(3), 1, "a"), config)
    pending = "29990101000000000"
    beat = Heartbeat(table.storage, pending, 60).start()
    try:
        table.meta_client.save_instant(Instant(pending, Action.COMMIT, State.REQUESTED))
        with pytest.raises(TimelineError, match=f"{pending} \\(commit\\) is pending"):
            table.services.upgrade(spark, config)
    finally:
        beat.stop()
    assert HoodieTable.open(table.base_uri).properties.table_version == 6
    assert not (tmp_path / "t" / LAYOUT_V2.folder).exists() or not any(
        (tmp_path / "t" / LAYOUT_V2.folder).iterdir()
    )


@pytest.mark.parametrize("shift_days", [3650, -3650])
def test_completion_times_stay_between_the_instants_whatever_the_file_times(
    spark, tmp_path, shift_days
):
    """A table copied without its files' times (all later than every instant), or written by
    a clock in another zone (earlier than the instants): completion times stay at or after
    each instant and before the next, the order version 6 readers saw."""
    import os

    path = tmp_path / "t"
    config = _config("MERGE_ON_READ", "6")
    table = HoodieTable.for_write(str(path), config)
    for ts in range(4):
        table.upsert(_batch(spark, range(ts, ts + 3), ts, "a"), config)
    writes = table.timeline().completed.write_timeline.timestamps()
    first_readable, _ = readable_range(table.meta_client)
    before = _reads(spark, str(path), [t for t in writes if t >= first_readable], mor=True)
    moved = 0
    for file in (path / ".hoodie").iterdir():
        if file.is_file() and file.name != "hoodie.properties":
            stamp = file.stat().st_mtime + shift_days * 86400
            os.utime(file, (stamp, stamp))
            moved += 1
    assert moved
    table.services.upgrade(spark)
    completed = table.timeline().completed.instants
    for instant, following in zip(completed, [*completed[1:], None]):
        assert instant.completion_time >= instant.timestamp
        if following is not None and shift_days > 0:
            assert instant.completion_time < following.timestamp
        if shift_days < 0 and instant.timestamp in writes:
            assert instant.completion_time == instant.timestamp
    after = _reads(spark, str(path), [t for t in writes if t >= first_readable], mor=True)
    after.pop("read_optimized"), before.pop("read_optimized")
    assert after == before
    assert_same_rows("shifted", KEY, read_ours(spark, str(path)),
                     read_theirs(hudi.HudiTable(str(path))))  # fmt: skip

"""Archival keeps the active timeline bounded; archived commits' files stay readable."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from _spark_helpers import id_dt_ts_config

from hoodie import HoodieTable
from hoodie.exceptions import TimelineError
from hoodie.read.datasource import register
from hoodie.timeline import WRITE_ACTIONS

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"


@pytest.mark.layout_v6
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_old_instants_are_archived_and_their_files_stay_visible(spark, tmp_path, table_type):
    register(spark)
    path = str(tmp_path / "t")
    # Merge-on-read keeps the delta commits the compaction trigger counts (here: 2).
    cfg = id_dt_ts_config("archived", table_type,
                          {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                           "hoodie.cleaner.commits.retained": "1",
                           "hoodie.compact.inline.max.delta.commits": "2"})  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    # Each write touches its own partition, so the first partitions' files are only ever
    # named by commits that end up archived.
    instants = []
    for n in range(6):
        df = spark.createDataFrame([(n, f"n{n}", f"2024-01-0{n + 1}", n)], SCHEMA)
        instants.append(table.upsert(df, cfg).instant)
    active = [i.timestamp for i in table.timeline().completed if i.action in WRITE_ACTIONS]
    assert len(active) <= 3 and active[-1] == instants[-1]
    archived = {
        a.timestamp for a in table.meta_client.archived_instants() if a.state == "COMPLETED"
    }
    assert set(instants) - set(active) <= archived and archived
    assert os.listdir(os.path.join(path, ".hoodie", "archived"))
    # Archiving a compaction takes its `.compaction.*` files too: nothing looks pending.
    assert not list(table.timeline().pending)
    # The timeline operation's rows list archived and active instants, oldest first.
    history = table.history()
    listed = [row["instant"] for row in history if row["action"] in ("commit", "deltacommit")]
    assert set(instants) <= set(listed)
    assert {row["state"] for row in history if row["instant"] == instants[0]} == {
        "COMPLETED (archived)"
    }
    expected = {n: f"n{n}" for n in range(6)}
    got = {r.id: r.name for r in spark.read.format("hoodie").load(path).collect()}
    assert got == expected
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    assert dict(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist())) == expected
    # Time travel to an archived instant names the readable range.
    with pytest.raises(Exception, match="readable range"):
        spark.read.format("hoodie").option("as.of.instant", instants[0]).load(path).collect()


@pytest.mark.layout_v6
@pytest.mark.parametrize(
    "table_type", ["MERGE_ON_READ", pytest.param("COPY_ON_WRITE", marks=pytest.mark.full)]
)
def test_archiving_beyond_a_savepoint_leaves_a_hole_readers_handle(spark, tmp_path, table_type):
    """hoodie.archive.beyond.savepoint=true: archival skips the savepointed commit and archives
    the commits after it. The commits in that hole still count as committed (the timeline
    starts at its first commit that is not savepointed), time travel reaches the savepoint
    but not the archived instants, incremental reads from before the hole see every change,
    and restore, which could not undo archived commits, refuses."""
    register(spark)
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("holes", table_type,
                          {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                           "hoodie.cleaner.commits.retained": "1", "hoodie.compact.inline": "false",
                           "hoodie.archive.beyond.savepoint": "true"})  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    instants = []
    for n in range(7):
        # Each write has its own partition; writes 3 and 5 also update id 0 (a log file of
        # the savepointed file group on merge-on-read).
        data = [(n, f"n{n}", f"2024-01-0{n + 1}", n)]
        if n in (3, 5):
            data.append((0, f"zero@{n}", "2024-01-01", n))
        instants.append(table.upsert(spark.createDataFrame(data, SCHEMA), cfg).instant)
        if n == 1:
            table.services.savepoint()
    saved = instants[1]
    active = [i.timestamp for i in table.timeline().completed if i.action in WRITE_ACTIONS]
    archived = {
        a.timestamp for a in table.meta_client.archived_instants() if a.state == "COMPLETED"
    }
    assert saved in active and instants[2] in archived and instants[0] in archived
    assert active[0] == saved and active[1] > instants[2]  # the hole

    def read(**options):
        reader = spark.read.format("hoodie")
        for key, value in options.items():
            reader = reader.option(key, value)
        return {r.id: r.name for r in reader.load(path).collect()}

    expected = {n: f"n{n}" for n in range(1, 7)} | {0: "zero@5"}
    assert read() == expected
    # (hudi-rs 0.x takes its first active commit as the timeline's start and misses the rows
    # of commits in the hole: keep the option off where hudi-rs reads the table.)
    # Time travel: the savepoint (and any time before the next archived commit) is readable...
    assert read(**{"as.of.instant": saved}) == {0: "n0", 1: "n1"}
    # ... an archived instant in the hole is not, and the error lists the savepoint.
    with pytest.raises(Exception, match=f"savepoints also readable: {saved}"):
        read(**{"as.of.instant": instants[3]})
    # Incremental from the savepoint: commits 2..6 are partly archived, all are seen.
    changes = read(**{
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": saved,
    })  # fmt: skip
    assert changes == {n: f"n{n}" for n in range(2, 7)} | {0: "zero@5"}
    with pytest.raises(TimelineError, match="archived beyond it"):
        table.services.restore(saved)
    assert read() == expected


def test_rolling_back_the_last_active_commit_is_refused(spark, tmp_path):
    """Once the earlier commits are archived, rolling back the only active one would leave
    readers no commit (our reader and hudi-rs read the active timeline): refused, and the
    table reads as before."""
    register(spark)
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("alone", options={"hoodie.keep.min.commits": "1",
                                            "hoodie.keep.max.commits": "2"})  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    for n in range(3):
        table.upsert(spark.createDataFrame([(n, f"n{n}", "2024-01-01", n)], SCHEMA), cfg)
    (only,) = [i for i in table.timeline().completed if i.action in WRITE_ACTIONS]
    with pytest.raises(TimelineError, match=f"commit {only.timestamp} is the only completed"):
        table.services.rollback(config=cfg)
    assert sorted(r.id for r in spark.read.format("hoodie").load(path).collect()) == [0, 1, 2]


@pytest.mark.layout_v6
def test_archived_commits_carry_their_commit_metadata(spark, tmp_path):
    """A v6 archive entry of a completed commit holds the commit's metadata
    (`hoodieCommitMetadata`), as Apache Hudi's archiver writes it: its archived timeline reads
    the instant's details from there (`CALL show_archived_commits` failed without them)."""
    from hoodie.logformat import BlockType, read_log_file
    from hoodie.storage import load_file_io

    register(spark)
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("archived", "COPY_ON_WRITE",
                          {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                           "hoodie.cleaner.commits.retained": "1"})  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    written = {}
    for n in range(5):
        df = spark.createDataFrame([(n, f"n{n}", f"2024-01-0{n + 1}", n)], SCHEMA)
        written[table.upsert(df, cfg).instant] = f"2024-01-0{n + 1}"
    storage = load_file_io(path)
    entries = [
        entry
        for name in os.listdir(os.path.join(path, ".hoodie", "archived"))
        for block in read_log_file(storage, f".hoodie/archived/{name}")
        if block.block_type is BlockType.AVRO_DATA
        for entry in block.records().to_pylist()
    ]
    commits = [e for e in entries if (e["actionType"], e["actionState"]) == ("commit", "COMPLETED")]
    assert commits
    for entry in commits:
        metadata = entry["hoodieCommitMetadata"]
        assert metadata is not None, entry["commitTime"]
        stats = dict(metadata["partitionToWriteStats"])
        assert list(stats) == [written[entry["commitTime"]]]
        assert [s["numInserts"] for s in stats[written[entry["commitTime"]]]] == [1]
        assert metadata["operationType"] in ("UPSERT", "BULK_INSERT")  # into an empty table
    others = [e for e in entries if e not in commits]
    assert others and all(e["hoodieCommitMetadata"] is None for e in others)

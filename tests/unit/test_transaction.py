"""The table lock, writer heartbeats and the failed-writes policy (no Spark)."""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from hoodie import WriteConfig, timeline
from hoodie.avro_metadata import InstantInfo, RollbackPlan, RollbackRequest
from hoodie.clustering_plan import ClusteringGroup, ClusteringPlan, SliceInfo, requested_instant
from hoodie.compaction_plan import CompactionOperation, CompactionPlan
from hoodie.exceptions import (
    ConcurrentWriteConflict,
    LockLostError,
    LockTimeoutError,
    TimelineError,
    UnsafePathError,
    WriteRolledBackError,
)
from hoodie.fs_view import listed_log_blocks
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata import CommitMetadata, WriteStat
from hoodie.properties import TableProperties
from hoodie.storage import load_file_io
from hoodie.timeline import Action, Instant, State
from hoodie.transaction.conflicts import check_conflicts
from hoodie.transaction.failed_writes import FailedWritesPolicy
from hoodie.transaction.heartbeat import Heartbeat, heartbeat_path, is_expired
from hoodie.transaction.key_conflicts import TABLE_SCOPE, check_key_conflicts
from hoodie.transaction.lock import LOCK_FILE, FileSystemLock
from hoodie.transaction.rollback import Rollback
from hoodie.transaction.transaction import Transaction


def test_lock_is_exclusive_and_names_its_holder(tmp_path):
    storage = load_file_io(str(tmp_path))
    first = FileSystemLock(storage, holder="first")
    second = FileSystemLock(storage, holder="second", wait_seconds=0.2)
    first.acquire()
    assert json.loads((tmp_path / LOCK_FILE).read_text())["holder"] == "first"
    with pytest.raises(LockTimeoutError, match="held by first"):
        second.acquire()
    second.release()  # not the holder: nothing happens
    assert (tmp_path / LOCK_FILE).exists()
    first.release()
    assert not (tmp_path / LOCK_FILE).exists()
    with second:
        assert json.loads((tmp_path / LOCK_FILE).read_text())["holder"] == "second"


def test_a_dead_holders_lock_expires(tmp_path):
    storage = load_file_io(str(tmp_path))
    dead = FileSystemLock(storage, holder="dead", lease_seconds=0.1)
    dead.acquire()  # never released
    dead._stop_renewing()  # (the holder died: its renewal thread with it)
    time.sleep(0.2)
    survivor = FileSystemLock(storage, holder="alive", wait_seconds=2)
    survivor.acquire()
    assert json.loads((tmp_path / LOCK_FILE).read_text())["holder"] == "alive"
    assert [p.name for p in (tmp_path / ".hoodie").iterdir()] == ["lock"]  # no leftovers


def test_a_live_holder_keeps_its_lock_beyond_the_lease(tmp_path):
    """A commit may run longer than the lease (the record index job of a large write): the
    holder's renewals keep the lock, and the lease counts from the last renewal."""
    storage = load_file_io(str(tmp_path))
    holder = FileSystemLock(storage, holder="long", lease_seconds=0.3)
    holder.acquire()
    time.sleep(1.0)  # more than three leases
    other = FileSystemLock(storage, holder="other", wait_seconds=0.3)
    with pytest.raises(LockTimeoutError):
        other.acquire()
    holder.check()  # still held
    holder._stop_renewing()  # the holder stalls: its lease runs out one lease later
    time.sleep(0.4)
    with pytest.raises(LockLostError):
        holder.check()
    other.acquire()
    assert json.loads((tmp_path / LOCK_FILE).read_text())["holder"] == "other"
    other.release()


def test_lock_gives_mutual_exclusion_between_threads(tmp_path):
    storage = load_file_io(str(tmp_path))
    inside, overlaps = [], []

    def work(n):
        lock = FileSystemLock(storage, holder=f"t{n}", poll_seconds=0.001)
        for _ in range(20):
            with lock:
                inside.append(n)
                if len(inside) > 1:
                    overlaps.append(list(inside))
                inside.remove(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == []


def test_heartbeat_keeps_an_instant_alive_until_stopped(tmp_path):
    storage = load_file_io(str(tmp_path))
    beat = Heartbeat(storage, "20240101000000000", interval_seconds=0.05).start()
    time.sleep(0.2)
    assert not is_expired(storage, "20240101000000000", interval_seconds=0.05, misses=2)
    beat.stop()
    assert not (tmp_path / heartbeat_path("20240101000000000")).exists()
    assert is_expired(storage, "20240101000000000", interval_seconds=0.05, misses=2)


def test_a_stale_heartbeat_counts_as_failed(tmp_path):
    storage = load_file_io(str(tmp_path))
    storage.write_atomic(heartbeat_path("1"), str(time.time() - 10).encode())
    assert is_expired(storage, "1", interval_seconds=1, misses=2)
    assert not is_expired(storage, "1", interval_seconds=5, misses=2)


def _table(tmp_path) -> HoodieTableMetaClient:
    return HoodieTableMetaClient.create(
        str(tmp_path / "t"),
        TableProperties(name="t", table_type="COPY_ON_WRITE", record_key_fields=("id",)),
    )


def _policy(table, mode: str) -> FailedWritesPolicy:
    config = WriteConfig.build("t", "id", options={"hoodie.write.concurrency.mode": mode})
    return FailedWritesPolicy.of(table.storage, config)


def test_optimistic_concurrency_is_the_default(tmp_path, monkeypatch):
    """Two runs of one model at once are ordinary in dbt: by default commits take the table
    lock and conflicts are detected, for writes and for table services run without a write
    config (hoodie_rollback, hoodie_restore); hoodie.properties does not change for it."""
    assert WriteConfig.build("t", "id").concurrency_mode == "optimistic_concurrency_control"
    table = _table(tmp_path)
    properties = (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_bytes()
    policy = FailedWritesPolicy.of(table.storage, None)
    assert isinstance(policy.lock, FileSystemLock) and policy.optimistic
    held_at_commit = []
    save = table.save_instant

    def saving(instant, content=b""):
        if instant.state is State.COMPLETED:
            held_at_commit.append((tmp_path / "t" / LOCK_FILE).exists())
        return save(instant, content)

    monkeypatch.setattr(table, "save_instant", saving)
    transaction = Transaction.start(table, policy, Action.COMMIT)
    transaction.commit(CommitMetadata(operation_type="UPSERT"))
    transaction.end()
    assert held_at_commit == [True]
    assert not (tmp_path / "t" / LOCK_FILE).exists()  # given up after the commit
    assert (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_bytes() == properties


def test_every_mode_keeps_heartbeats_and_fails_only_writes_without_a_live_one(tmp_path):
    """A single writer keeps a heartbeat too: a second single-writer run (a model run twice at
    once) must not take the first's running write for a crashed one."""
    table = _table(tmp_path)
    for mode in ("single_writer", "optimistic_concurrency_control"):
        policy = _policy(table, mode)
        assert policy.optimistic is (mode != "single_writer")
        instant, beat = policy.start_instant(table, Action.COMMIT)
        assert (tmp_path / "t" / heartbeat_path(instant.timestamp)).exists()
        assert not policy.has_failed(instant.timestamp)
        assert [i.timestamp for i in policy.in_progress(table.timeline())] == [instant.timestamp]
        beat.stop()
        assert policy.has_failed(instant.timestamp)  # its writer is gone
        assert policy.in_progress(table.timeline()) == []
        table.delete_pending_instant(instant)
    # A write with no heartbeat at all (a crashed writer's, or Apache Hudi's EAGER) has failed.
    table.save_instant(Instant("20240101000000000", Action.COMMIT, State.REQUESTED))
    assert _policy(table, "single_writer").has_failed("20240101000000000")


def test_an_apache_hudi_heartbeat_is_read_by_its_modification_time(tmp_path):
    """Apache Hudi writes its heartbeat files empty and reads their modification time: a live
    Hudi writer's heartbeat must not read as failed (it did: an empty file read as time 0)."""
    storage = load_file_io(str(tmp_path))
    storage.write_atomic(heartbeat_path("1"), b"")
    assert not is_expired(storage, "1", interval_seconds=60, misses=2)
    old = time.time() - 600
    os.utime(tmp_path / heartbeat_path("1"), (old, old))
    assert is_expired(storage, "1", interval_seconds=60, misses=2)


def test_concurrent_policy_beats_before_the_instant_exists(tmp_path, monkeypatch):
    table = _table(tmp_path)
    lazy = _policy(table, "optimistic_concurrency_control")
    assert isinstance(lazy.lock, FileSystemLock)
    beating_when_created = []
    save = table.save_instant

    def saving(instant, content=b""):
        beating_when_created.append(not lazy.has_failed(instant.timestamp))
        return save(instant, content)

    monkeypatch.setattr(table, "save_instant", saving)
    instant, beat = lazy.start_instant(table, Action.DELTA_COMMIT)
    try:
        assert beating_when_created == [True]
        assert [i.timestamp for i in lazy.in_progress(table.timeline())] == [instant.timestamp]
        with pytest.raises(TimelineError, match=f"a restore of table 't'.*{instant.timestamp}"):
            lazy.refuse_in_progress(table.timeline(), "t", "a restore")
    finally:
        beat.stop()
    assert lazy.has_failed(instant.timestamp)  # its writer is gone


def test_an_instant_time_whose_heartbeat_another_writer_holds_is_not_taken(tmp_path):
    table = _table(tmp_path)
    lazy = _policy(table, "optimistic_concurrency_control")
    other = Heartbeat(table.storage, "x")
    assert other.claim()
    assert not Heartbeat(table.storage, "x").claim()  # the file stays the other writer's
    other.stop()
    assert Heartbeat(table.storage, "x").claim()
    first, beat_1 = lazy.start_instant(table, Action.COMMIT)
    second, beat_2 = lazy.start_instant(table, Action.COMMIT)
    assert first.timestamp < second.timestamp
    beat_1.stop()
    beat_2.stop()


def test_taking_over_a_failed_instant_holds_the_table_lock(tmp_path):
    table = _table(tmp_path)
    lazy = _policy(table, "optimistic_concurrency_control")
    with lazy.exclusive():
        assert (tmp_path / "t" / LOCK_FILE).exists()
        beat = lazy.take_over("20240101000000000")
    assert not (tmp_path / "t" / LOCK_FILE).exists()
    assert not lazy.has_failed("20240101000000000")
    beat.stop()
    single = _policy(table, "single_writer")
    with single.exclusive():
        assert not (tmp_path / "t" / LOCK_FILE).exists()
    beat = single.take_over("20240101000000000")
    assert not single.has_failed("20240101000000000")
    beat.stop()


def test_conflicts_with_compactions_planned_after_the_write_started_only(tmp_path):
    """A write that started while a compaction plan was pending wrote its log files on top of
    the plan's slices: the plan completing is no conflict. A plan made after the write started,
    or a write completed since, on the same file group is."""
    table = HoodieTableMetaClient.create(
        str(tmp_path / "t"),
        TableProperties(name="t", table_type="MERGE_ON_READ", record_key_fields=("id",)),
    )
    group = ("p", "f1")
    plan = CompactionPlan([CompactionOperation("p", "f1", "001", "f1_0-0-0_001.parquet", ())])

    def commit(timestamp: str, action: Action) -> None:
        metadata = CommitMetadata(operation_type="UPSERT")
        metadata.add(WriteStat("f1", "p", f"p/{timestamp}"))
        table.save_instant(Instant(timestamp, action, State.COMPLETED), metadata.to_json().encode())

    table.save_instant(Instant("002", Action.COMPACTION, State.REQUESTED), plan.to_avro())
    started = table.timeline()  # the write "009" starts: plan 002 is pending
    commit("002", Action.COMPACTION)
    check_conflicts(table, "009", started, {group})  # no error
    table.save_instant(Instant("003", Action.COMPACTION, State.REQUESTED), plan.to_avro())
    with pytest.raises(ConcurrentWriteConflict, match=r"write 009 .* conflicts with 003 \("):
        check_conflicts(table, "009", started, {group})
    check_conflicts(table, "009", started, {("p", "other")})
    commit("004", Action.DELTA_COMMIT)
    with pytest.raises(ConcurrentWriteConflict, match=r"003 \(compaction\), 004 \(deltacommit\)"):
        check_conflicts(table, "009", started, {group})


@pytest.mark.parametrize("version", [6, 8])
def test_a_pending_clustering_of_the_written_group_conflicts(tmp_path, version):
    """A clustering planned while a write ran will replace the groups the write changed:
    the write loses (on layout 1 the plan is a pending replace commit, told apart from an
    insert overwrite's by its requested file)."""
    table = HoodieTableMetaClient.create(
        str(tmp_path / "t"),
        TableProperties(
            name="t", table_type="COPY_ON_WRITE", record_key_fields=("id",), table_version=version
        ),  # fmt: skip
    )
    plan = ClusteringPlan([ClusteringGroup((SliceInfo("p", "f1", "p/f1_0-0-0_001.parquet"),))])
    started = table.timeline()
    overwrite = Instant("002", Action.REPLACE_COMMIT, State.REQUESTED)
    table.save_instant(overwrite)  # an insert overwrite's, pending: empty
    check_conflicts(table, "009", started, {("p", "f1")})
    table.save_instant(requested_instant(table.layout, "003"),
                       plan.to_avro(table.storage, table.layout.version))  # fmt: skip
    check_conflicts(table, "009", started, {("p", "other")})
    with pytest.raises(ConcurrentWriteConflict, match=r"conflicts with 003 \("):
        check_conflicts(table, "009", started, {("p", "f1")})


def test_a_listed_log_file_of_a_rolled_back_write_reads_as_empty(tmp_path):
    """A reader (or tagger) listed the log file of a running write, which then failed and was
    rolled back before the task opened it: the file's blocks never counted, so it reads as no
    blocks. Any other missing log file is still an error."""
    storage = load_file_io(str(tmp_path))
    log = "p/.f1_001.log.2_0-1-0"
    plan = RollbackPlan(
        InstantInfo("005", "deltacommit"),
        [RollbackRequest("p", "", "", files_to_be_deleted=[storage.uri(log)])],
    )
    load_file_io(str(tmp_path)).write_bytes(".hoodie/006.rollback.requested", plan.to_avro())
    assert listed_log_blocks(storage, log, frozenset({"001"})) == []
    with pytest.raises(FileNotFoundError):  # the reader counts 005: its data is gone
        listed_log_blocks(storage, log, frozenset({"001", "005"}))
    with pytest.raises(FileNotFoundError):  # no rollback planned to delete this one
        listed_log_blocks(storage, "p/.f2_001.log.1_0-1-0", frozenset({"001"}))


def test_a_rollback_does_not_take_an_instant_time_another_writer_holds(tmp_path, monkeypatch):
    """With concurrent writers a write's instant time is claimed by its heartbeat before the
    instant exists. A rollback starting in the same millisecond takes the next one: the two
    instants' files differ by action, so nothing else would stop both from having the time."""
    table = _table(tmp_path)
    lazy = _policy(table, "optimistic_concurrency_control")
    failed = Instant("20240101000000000", Action.COMMIT, State.REQUESTED)
    table.save_instant(failed)
    start = datetime.now(timezone.utc) + timedelta(hours=1)
    taken = start.strftime(timeline.INSTANT_FORMAT) + f"{start.microsecond // 1000:03d}"
    ticks = itertools.count(1)

    class Clock(datetime):  # stands at `taken` until it is issued, then runs on
        @classmethod
        def now(cls, tz=None):
            if timeline._last_issued < taken:
                return start
            return start + timedelta(milliseconds=next(ticks))

    monkeypatch.setattr(timeline, "datetime", Clock)
    other = Heartbeat(table.storage, taken)  # a writer starting its instant at `taken`
    assert other.claim()
    try:
        Rollback(table).rollback(failed, lazy)
    finally:
        other.stop()
    rollbacks = [i.timestamp for i in table.timeline() if i.action is Action.ROLLBACK]
    assert len(rollbacks) == 1 and rollbacks[0] > taken
    assert not table.storage.exists(heartbeat_path(rollbacks[0]))  # its heartbeat stopped


@pytest.mark.parametrize("mode", ["single_writer", "optimistic_concurrency_control"])
def test_a_write_rolled_back_by_another_writer_never_completes(tmp_path, mode):
    """A writer that stalled past its heartbeat's expiry finds its instant rolled back by the
    next writer: its commit must fail, in every mode, and complete nothing (before, a single
    writer's commit went through, naming files the rollback had deleted)."""
    table = _table(tmp_path)
    policy = _policy(table, mode)
    stalled = Transaction.start(table, policy, Action.COMMIT)
    stalled.inflight()
    stalled.heartbeat.stop()  # it stalled: its heartbeat expired
    assert Rollback(table).rollback_failed_writes(policy) == [stalled.instant_time]
    metadata = CommitMetadata(operation_type="UPSERT")
    metadata.add(WriteStat("f1", "p", "p/f1_0-1-0_x.parquet"))
    with pytest.raises(WriteRolledBackError, match=f"{stalled.instant_time} .*rolled back"):
        stalled.commit(metadata)
    timeline = table.timeline()
    assert not [i for i in timeline if i.timestamp == stalled.instant_time]
    # Caught midway (the rollback planned, not yet done): refused too.
    second = Transaction.start(table, policy, Action.COMMIT)
    second.inflight()
    plan = RollbackPlan(InstantInfo(second.instant_time, "commit"), [])
    table.save_instant(Instant("29990101000000000", Action.ROLLBACK, State.REQUESTED),
                       plan.to_avro())  # fmt: skip
    with pytest.raises(WriteRolledBackError):
        second.commit(metadata)
    assert not [i for i in table.timeline().completed if i.timestamp == second.instant_time]
    second.end()


def _occ(table) -> FailedWritesPolicy:
    return _policy(table, "optimistic_concurrency_control")


def test_a_transaction_block_that_raises_undoes_its_instant_and_stops_its_heartbeat(tmp_path):
    """`with Transaction.start(...)`: an error in the block undoes the instant (nothing was
    written: its pending files just leave the timeline), goes on to the caller, and the
    heartbeat stops, so no other writer waits on it."""
    table = _table(tmp_path)
    with pytest.raises(ValueError, match="the action failed"):
        with Transaction.start(table, _occ(table), Action.COMMIT) as txn:
            txn.inflight()
            assert table.storage.exists(heartbeat_path(txn.instant_time))
            raise ValueError("the action failed")
    assert not [i for i in table.timeline() if i.timestamp == txn.instant_time]
    assert not table.storage.exists(heartbeat_path(txn.instant_time))
    assert txn.heartbeat is None


def test_a_transaction_block_that_commits_keeps_its_instant(tmp_path):
    table = _table(tmp_path)
    metadata = CommitMetadata(operation_type="UPSERT")
    metadata.add(WriteStat("f1", "p", "p/f1_0-1-0_x.parquet"))
    with Transaction.start(table, _occ(table), Action.COMMIT) as txn:
        txn.inflight()
        txn.commit(metadata)
    done = [i for i in table.timeline() if i.timestamp == txn.instant_time]
    assert [i.state for i in done] == [State.COMPLETED]
    assert not table.storage.exists(heartbeat_path(txn.instant_time))


def test_an_error_after_the_commit_leaves_the_completed_instant(tmp_path):
    """Only an instant not yet completed is undone: a block that raises after its commit
    (a caller's own step) keeps what it committed."""
    table = _table(tmp_path)
    with pytest.raises(RuntimeError, match="after"):
        with Transaction.start(table, _occ(table), Action.COMMIT) as txn:
            txn.inflight()
            txn.commit(CommitMetadata(operation_type="UPSERT"))
            raise RuntimeError("after the commit")
    assert [i.state for i in table.timeline() if i.timestamp == txn.instant_time] == [
        State.COMPLETED
    ]


def test_a_kept_pending_block_leaves_a_failed_instant_for_a_later_run(tmp_path):
    """`kept_pending` is for actions whose plan a later run finishes (a clean, a restore):
    an error leaves the instant as it was; only the heartbeat stops."""
    table = _table(tmp_path)
    txn = Transaction.start(table, _occ(table), Action.CLEAN)
    with pytest.raises(ValueError, match="the action failed"), txn.kept_pending():
        txn.inflight()
        raise ValueError("the action failed")
    pending = [i for i in table.timeline().pending if i.timestamp == txn.instant_time]
    assert [i.state for i in pending] == [State.INFLIGHT]
    assert not table.storage.exists(heartbeat_path(txn.instant_time))


CRAFTED = [
    "../outside.parquet",
    "/abs/f.parquet",
    ".hoodie/hoodie.properties",
    "p/f\n.parquet",
    "p/",
]


@pytest.mark.parametrize("crafted", CRAFTED)
def test_the_same_key_check_refuses_a_concurrent_commit_naming_no_data_file(tmp_path, crafted):
    """The same-key check reads the files another writer's commit metadata names: a crafted
    name is refused before anything is read (not only kept inside the base path)."""
    meta = _table(tmp_path)
    mine, theirs = CommitMetadata(operation_type="UPSERT"), CommitMetadata(operation_type="UPSERT")
    mine.add(WriteStat("f1", "p", "p/f1_0-1-0_001.parquet", num_writes=1))
    theirs.add(WriteStat("f2", "p", crafted, num_writes=1))
    other = Instant("002", Action.COMMIT, State.COMPLETED)
    with pytest.raises(UnsafePathError, match="commit 002 names the data file"):
        check_key_conflicts(meta, "001", mine, [(other, theirs)], TABLE_SCOPE)

"""With concurrent writers, no action rolls back another writer's write while it runs.

Writer B's upsert is held (on a thread of this process) after its log files are written and
before it completes, its heartbeat beating, as a slow concurrent writer would be. Meanwhile
every action that rolls back failed writes runs: on-demand and inline compaction, clean,
rollback and restore. Each must leave B's write pending, and B must then complete with its
rows. A write whose heartbeat stopped, on the other hand, is rolled back, and its writer
cannot complete it afterwards.
"""

from __future__ import annotations

import threading

import pytest
from _spark_helpers import id_dt_ts_config

from hoodie import HoodieTable
from hoodie.client import write_client as client
from hoodie.exceptions import CommitError, TimelineError
from hoodie.read.datasource import register
from hoodie.timeline import WRITE_ACTIONS, Action
from hoodie.transaction.heartbeat import heartbeat_path

pytestmark = pytest.mark.spark

A, B = "2024-01-01", "2024-01-02"
SCHEMA = "id int, name string, dt string, ts bigint"
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.compact.inline.max.delta.commits": "1",
}


class HeldWrite:
    """An upsert on a thread, held at a crash point until `finish()`."""

    def __init__(self, monkeypatch, spark, table, config, rows, at="write.files_written"):
        self.reached, self.release = threading.Event(), threading.Event()
        self.result = self.error = None
        real = client.crash_point

        def point(name):
            if name == at and threading.current_thread() is self.thread:
                self.reached.set()
                self.release.wait(120)
            real(name)

        monkeypatch.setattr(client, "crash_point", point)
        df = spark.createDataFrame(rows, SCHEMA)
        self.thread = threading.Thread(target=self._run, args=(table, config, df))
        self.thread.start()
        assert self.reached.wait(300), f"the held write never reached {at}: {self.error}"
        pending = [i for i in table.timeline().pending if i.action in WRITE_ACTIONS]
        assert len(pending) == 1
        self.instant = pending[0].timestamp

    def _run(self, table, config, df):
        try:
            self.result = table.upsert(df, config)
        except Exception as error:  # noqa: BLE001 - handed to the test
            self.error = error

    def finish(self):
        self.release.set()
        self.thread.join(300)
        return self.result, self.error


def _state(table, spark) -> dict:
    return {r.id: r.name for r in table.read(spark).collect()}


def _pending_writes(table) -> list[str]:
    return [i.timestamp for i in table.timeline().pending if i.action in WRITE_ACTIONS]


def test_no_action_rolls_back_a_live_write_and_a_dead_one_is(spark, tmp_path, monkeypatch):
    register(spark)
    cfg = id_dt_ts_config("live", "MERGE_ON_READ", OCC)
    writer_b = id_dt_ts_config("live", "MERGE_ON_READ", {**OCC, "hoodie.compact.inline": "false"})
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    first = table.upsert(spark.createDataFrame([(1, "a", A, 1), (2, "b", B, 1)], SCHEMA), cfg)
    table.services.savepoint(first.instant)

    held = HeldWrite(monkeypatch, spark, table, writer_b, [(1, "a-B", A, 2)])
    assert (tmp_path / "t" / heartbeat_path(held.instant)).exists()

    with pytest.raises(CommitError, match=f"while write.*{held.instant}.*pending"):
        table.services.compact(spark, cfg)
    table.services.clean(cfg)
    with pytest.raises(TimelineError, match=f"rollback .*{held.instant} \\(deltacommit\\) is in"):
        table.services.rollback(config=cfg)
    with pytest.raises(TimelineError, match=f"restore .*{held.instant} \\(deltacommit\\) is in"):
        table.services.restore(first.instant, cfg)
    # Another writer's delta commit, whose inline compaction cannot be scheduled meanwhile.
    other = table.upsert(spark.createDataFrame([(3, "c", B, 1)], SCHEMA), cfg)
    assert other.compactions == []
    assert _pending_writes(table) == [held.instant]
    assert not [i for i in table.timeline() if i.action is Action.ROLLBACK]

    result, error = held.finish()
    assert error is None and result.instant == held.instant
    expected = {1: "a-B", 2: "b", 3: "c"}
    assert _state(table, spark) == expected
    assert len(table.services.compact(spark, cfg)) == 1
    assert _state(table, spark) == expected

    # A writer that stopped beating (a stalled or dead process) has failed: the next action
    # rolls its write back, and the writer, should it wake up, cannot complete it.
    stalled = HeldWrite(monkeypatch, spark, table, writer_b, [(2, "b-stalled", B, 5)])
    (tmp_path / "t" / heartbeat_path(stalled.instant)).write_text("0")
    table.services.clean(cfg)
    assert _pending_writes(table) == []
    rollbacks = [i for i in table.timeline().completed if i.action is Action.ROLLBACK]
    assert len(rollbacks) == 1
    result, error = stalled.finish()
    assert result is None and isinstance(error, CommitError), error
    assert "was rolled back by another writer" in str(error)
    assert _state(table, spark) == expected
    assert _pending_writes(table) == []

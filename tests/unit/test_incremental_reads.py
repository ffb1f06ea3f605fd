"""hoodie_incremental's bookkeeping in the adapter (dbt/adapters/hoodie/incremental_reads.py):
which checkpoints a model's write commits, and that a read of one dbt invocation is never
committed by another's write."""

from __future__ import annotations

import json

import pytest
from dbt_common.invocation import reset_invocation_id

from dbt.adapters.hoodie.incremental_reads import (
    PendingCheckpoint,
    PendingCheckpoints,
    checkpoint_arguments,
)
from hoodie.integration import CHECKPOINTS_KEY, CheckpointConflictError, SourceCheckpoint

OLD, NEW, OTHER = (SourceCheckpoint(t, t, 6) for t in ("20260101", "20260102", "20260103"))


def test_a_write_carries_every_checkpoint_and_advances_the_ones_it_read():
    pending = {"/up": PendingCheckpoint(OLD, NEW)}
    entry, precommit = checkpoint_arguments(pending, {"/up": OLD, "/other": OTHER}, True)
    stored = json.loads(entry[CHECKPOINTS_KEY])
    assert {k: v["position"] for k, v in stored.items()} == {
        "/up": "20260102",
        "/other": "20260103",
    }
    assert precommit is not None
    # a full refresh starts over from what it read
    entry, precommit = checkpoint_arguments(pending, {"/other": OTHER}, incremental=False)
    assert list(json.loads(entry[CHECKPOINTS_KEY])) == ["/up"] and precommit is None
    # nothing read, nothing stored: no entry
    assert checkpoint_arguments({}, {}, True) == ({}, None)


def test_the_commit_check_refuses_a_moved_checkpoint(monkeypatch):
    import hoodie.transaction.checkpoints as checkpoints

    class Table:  # what the check reads is the table's newest write's checkpoints (patched)
        name = "down"

    _, precommit = checkpoint_arguments({"/up": PendingCheckpoint(OLD, NEW)}, {"/up": OLD}, True)
    assert precommit is not None
    monkeypatch.setattr(checkpoints, "checkpoints_of", lambda meta_client: {"/up": OLD})
    precommit(Table())  # unchanged since the read: fine
    monkeypatch.setattr(checkpoints, "checkpoints_of", lambda meta_client: {"/up": OTHER})
    with pytest.raises(CheckpointConflictError, match="another write consumed /up"):
        precommit(Table())


def test_reads_of_another_invocation_are_never_committed():
    pending = PendingCheckpoints()
    pending.register("model.p.down", "/up", PendingCheckpoint(OLD, NEW))
    assert pending.take("model.p.down") == {"/up": PendingCheckpoint(OLD, NEW)}
    assert pending.take("model.p.down") == {}  # taken once
    pending.register("model.p.down", "/up", PendingCheckpoint(OLD, NEW))
    reset_invocation_id()  # the run failed before its write; dbt runs again in this process
    assert pending.take("model.p.down") == {}


def test_a_lost_checkpoint_is_decided_once_per_invocation():
    pending, asked = PendingCheckpoints(), []

    def decide():
        asked.append(1)
        return len(asked) == 1  # lost the first time only: later answers must not count

    assert pending.lost("model.p.down", decide) is True
    assert pending.lost("model.p.down", decide) is True  # is_incremental, the write, the read
    assert len(asked) == 1
    reset_invocation_id()  # the next dbt run decides again
    assert pending.lost("model.p.down", decide) is False


def test_checkpoints_record_how_they_were_read():
    from hoodie.transaction.checkpoints import decode, encode

    cdc = SourceCheckpoint("20260102", "20260102", 8, "cdc")
    assert decode(encode({"/up": cdc, "/old": OLD}), "t") == {"/up": cdc, "/old": OLD}
    # checkpoints written before the format was recorded read as latest_state
    legacy = '{"/up": {"position": "1", "instant": "1", "table_version": 6}}'
    assert decode(legacy, "t")["/up"].format == "latest_state"
    with pytest.raises(ValueError, match="wrong kind"):
        decode('{"/up": {"position": "1", "instant": "1", "table_version": 6, "format": "x"}}',
               "t")  # fmt: skip


class _Upstream:
    """What lost_because asks of an upstream table."""

    def __init__(self, now, completed, unreadable=None):
        self.now, self._completed, self.unreadable = now, completed, unreadable

    def incremental_position(self, read_as):
        return self.now

    def completed(self, instant):
        return instant in self._completed

    def changes_unreadable(self, begin):
        return self.unreadable


def test_a_checkpoint_is_lost_when_the_upstream_no_longer_has_what_it_read():
    from dbt.adapters.hoodie.incremental_reads import lost_because

    assert lost_because(_Upstream(NEW, {"20260101", "20260102"}), OLD) is None
    # rolled back or restored past it, or rebuilt under the same path (a new timeline that
    # never had it, archived or not): the model holds rows the upstream does not
    assert "no longer has" in lost_because(_Upstream(NEW, {"20260102"}), OLD)
    assert "no longer has" in lost_because(_Upstream(OLD, {"20260101"}), NEW)
    assert "no longer has" in lost_because(_Upstream(None, set()), OLD)
    # a cdc read whose history cleaning took
    cdc = SourceCheckpoint("20260101", "20260101", 8, "cdc")
    now = SourceCheckpoint("20260102", "20260102", 8, "cdc")
    gone = _Upstream(now, {"20260101", "20260102"}, unreadable="cleaned")
    assert lost_because(gone, cdc) == "cleaned"
    assert lost_because(gone, now) is None  # nothing to read since

"""`hoodie_incremental`: a lake model reading another lake table's changes exactly once.

The macro renders, at the model's compile, a view of the upstream's changes since the
checkpoint the model's own table holds for it (`hoodie.incremental.checkpoints` in its newest
write commit), up to the upstream's position now; with no checkpoint (first run, full
refresh) the upstream's snapshot at that position. The new position waits here as the
model's pending checkpoint, and the model's write commits it with the data, in one instant:

- a run that fails anywhere before its commit leaves the old checkpoint, and the next run
  reads the same changes again (and any newer ones): nothing skipped;
- a run that committed moved the checkpoint with its data: nothing read twice;
- two runs of one model at once both read the same checkpoint, and the second to commit
  finds it moved and is undone (`CheckpointConflictError`; checked under the table lock with
  optimistic concurrency).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from dbt_common.invocation import get_invocation_id

from hoodie import HoodieTable
from hoodie.integration import (
    CHECKPOINTS_KEY,
    SourceCheckpoint,
    encode_checkpoints,
    expect_checkpoints,
)

from .errors import CheckpointLostError

FORMATS = ("latest_state", "cdc")
# on_checkpoint_lost: what a model does when its checkpoint of an upstream is lost.
ON_CHECKPOINT_LOST = ("error", "full_refresh")


@dataclass(frozen=True)
class PendingCheckpoint:
    """One upstream read by a model's run: the checkpoint the model's table held then
    (None: none, or a full refresh) and the position the read went up to."""

    read: SourceCheckpoint | None
    new: SourceCheckpoint


class PendingCheckpoints:
    """The checkpoints models read in this dbt invocation and have not written yet, by node.

    Entries of another invocation (a run that failed between its read and its write, in a
    process that runs dbt again) are never written: a model commits only what its own run
    read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_node: dict[tuple[str, str], dict[str, PendingCheckpoint]] = {}
        self._lost: dict[tuple[str, str], bool] = {}

    def lost(self, node_id: str, decide: Callable[[], bool]) -> bool:
        """Whether the node's checkpoints are lost, decided once per invocation (`decide`)."""
        key = (get_invocation_id(), node_id)
        with self._lock:
            for stale in [k for k in self._lost if k[0] != key[0]]:
                del self._lost[stale]
            if key in self._lost:
                return self._lost[key]
        answer = decide()
        with self._lock:
            return self._lost.setdefault(key, answer)

    def register(self, node_id: str, source: str, pending: PendingCheckpoint) -> None:
        with self._lock:
            self._by_node.setdefault((get_invocation_id(), node_id), {})[source] = pending

    def take(self, node_id: str) -> dict[str, PendingCheckpoint]:
        with self._lock:
            invocation = get_invocation_id()
            for stale in [k for k in self._by_node if k[0] != invocation]:
                del self._by_node[stale]
            return self._by_node.pop((invocation, node_id), {})


def checkpoint_arguments(
    pending: dict[str, PendingCheckpoint],
    stored: dict[str, SourceCheckpoint],
    incremental: bool,
) -> tuple[dict[str, str], Callable | None]:
    """The write's extraMetadata entry and its commit check: every checkpoint the table holds
    carried forward (an incremental write; a full refresh starts over), the ones this run
    read advanced, each of those expected unchanged at commit."""
    kept = dict(stored) if incremental else {}
    kept.update({source: p.new for source, p in pending.items()})
    if not kept:
        return {}, None
    precommit = None
    if pending and incremental:
        precommit = expect_checkpoints({source: p.read for source, p in pending.items()})
    return {CHECKPOINTS_KEY: encode_checkpoints(kept)}, precommit


def lost_because(upstream: HoodieTable, read: SourceCheckpoint) -> str | None:
    """Why a model cannot go on from checkpoint `read` of `upstream`, or None if it can:

    - a restore or rollback took the consumed write away, or the table was rebuilt under
      the same path (dropped, or recreated by a full refresh that changed its identity): the
      model holds rows the upstream does not, and only a full refresh makes them agree;
    - (`cdc`) cleaning or archival removed history the changes since it need.
    """
    now = upstream.incremental_position(read.format)
    if now is None or read.position > now.position or not upstream.completed(read.instant):
        at = f"it is at {now.instant} now" if now is not None else "it has no write now"
        return (
            f"it read up to instant {read.instant}, which the upstream no longer has "
            f"(restored, rolled back or rebuilt; {at})"
        )
    if read.format == "cdc" and read.position != now.position:
        return upstream.changes_unreadable(read.position)
    return None


def consumed_gone(where: str, relation: object, upstream: HoodieTable,
                  read: SourceCheckpoint) -> None:  # fmt: skip
    """Refuse to go on from a checkpoint the upstream no longer has (`lost_because`)."""
    reason = lost_because(upstream, read)
    if reason is not None:
        raise CheckpointLostError(
            f"{where}: {reason.replace('the upstream', str(relation), 1)}. Rebuild the model "
            "with --full-refresh so that it holds what its upstream holds, or set "
            "on_checkpoint_lost='full_refresh' to have it rebuilt when this happens"
        )

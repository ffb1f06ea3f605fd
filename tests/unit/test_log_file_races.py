"""Two merge-on-read writers appending to one file group at once pick the same log file name.

One of them loses the race for the name (`create_if_absent`), and the loser's marker names the
winner's file. The winner may itself fail elsewhere and be rolled back, deleting its file while
the loser looks at it. These tests play each interleaving out step by step.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie.avro_metadata import RollbackMetadata, RollbackPlan
from hoodie.exceptions import ConcurrentWriteConflict
from hoodie.index.placement import FileGroupTarget
from hoodie.logformat import DeleteRecord, delete_block, read_log_file
from hoodie.markers import IOType, WriteMarkers
from hoodie.merge import MergeMode
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.properties import TableProperties
from hoodie.schema import PARTITION_PATH, RECORD_KEY
from hoodie.timeline import Action, Instant, State
from hoodie.transaction.rollback import Rollback
from hoodie.write.append_handle import AppendHandle

LOG = "p/.f1_001.log.2_0-0-0"  # the name both writers pick: version 2 of slice 001
T2, T3, T4, T5, T9 = (f"2026112701000000{n}" for n in (2, 3, 4, 5, 9))  # delta commits


def _table(tmp_path) -> HoodieTableMetaClient:
    return HoodieTableMetaClient.create(
        str(tmp_path / "t"),
        TableProperties(name="t", table_type="MERGE_ON_READ", record_key_fields=("id",)),
    )


def _handle(table: HoodieTableMetaClient, instant: str) -> AppendHandle:
    return AppendHandle(
        storage=table.storage,
        instant=instant,
        targets={},
        data_schema=pa.schema([("id", pa.string()), ("ts", pa.int64())]),
        table_name="t",
        record_key_fields=("id",),
        merge_mode=MergeMode.event_time("ts"),
        compression="snappy",
        markers=WriteMarkers(table.storage, instant),
    )


def _target() -> FileGroupTarget:
    return FileGroupTarget("p", "f1", "p/f1_0-0-0_001.parquet", "001", log_version=2,
                           log_base_instant="001", log_files=(".f1_001.log.1_0-0-0",))  # fmt: skip


def _records(*keys: str) -> pa.Table:
    return pa.table({RECORD_KEY: list(keys), PARTITION_PATH: ["p"] * len(keys),
                     "id": list(keys), "ts": [1] * len(keys)})  # fmt: skip


def _write_log_of(table: HoodieTableMetaClient, instant: str, relative: str = LOG) -> None:
    """Another writer's whole log file: one delete block of `instant`."""
    table.storage.write_bytes(relative, delete_block([DeleteRecord("k", "p", 0)], instant))


def _instants_in(table: HoodieTableMetaClient, relative: str = LOG) -> set[str | None]:
    return {b.instant_time for b in read_log_file(table.storage, relative)}


def test_losing_the_race_for_a_log_file_name_is_a_conflict_naming_the_winner(tmp_path):
    table = _table(tmp_path)
    _write_log_of(table, T2)
    with pytest.raises(ConcurrentWriteConflict, match=rf"^write {T3} .* with {T2} \(deltacommit\)"):
        _handle(table, T3).append(_target(), _records("a"))
    assert _instants_in(table) == {T2}  # the winner's file is untouched


def test_a_name_freed_by_the_winners_rollback_is_taken(tmp_path, monkeypatch):
    """The winner of the name failed and was rolled back between the loser's create and its
    look at the file: the file is gone, the name free, and the write goes on under it."""
    table = _table(tmp_path)
    storage = table.storage
    create = storage.create_if_absent
    lost: list[str] = []

    def create_losing_once(relative: str, data: bytes) -> bool:
        if relative == LOG and not lost:
            lost.append(relative)  # the winner's file existed, and is deleted right after
            return False
        return create(relative, data)

    monkeypatch.setattr(storage, "create_if_absent", create_losing_once)
    stat = _handle(table, T3).append(_target(), _records("a", "b"))
    assert lost == [LOG] and stat.path == LOG and stat.num_writes == 2
    assert _instants_in(table) == {T3}


def _inflight(table: HoodieTableMetaClient, instant: str) -> Instant:
    pending = Instant(instant, Action.DELTA_COMMIT, State.INFLIGHT)
    table.save_instant(pending.with_state(State.REQUESTED))
    return table.save_instant(pending)


def _rollback_of(table: HoodieTableMetaClient, instant: str) -> RollbackMetadata:
    return Rollback(table).rollback(_inflight(table, instant))


def _plan_then_crash(table: HoodieTableMetaClient) -> tuple[Rollback, RollbackPlan]:
    """A rollback of T3, which wrote LOG, planned; its run deleted LOG, then crashed."""
    WriteMarkers(table.storage, T3).create(LOG, IOType.APPEND)
    _write_log_of(table, T3)
    rollback = Rollback(table)
    plan = rollback.plan(_inflight(table, T3))
    table.storage.delete(LOG)
    return rollback, plan


def test_rolling_back_the_loser_leaves_the_winners_log_file_alone(tmp_path):
    """The loser's marker names the winner's file (it was announced before the create); the
    loser's rollback neither deletes it nor retracts the winner's blocks."""
    table = _table(tmp_path)
    _write_log_of(table, T2)
    WriteMarkers(table.storage, T3).create(LOG, IOType.APPEND)
    own = "p/.f2_001.log.1_0-0-0"
    WriteMarkers(table.storage, T3).create(own, IOType.APPEND)
    _write_log_of(table, T3, own)
    metadata = _rollback_of(table, T3)
    assert _instants_in(table) == {T2}
    assert not table.storage.exists(own)
    undone = metadata.partition_metadata["p"]
    assert [table.storage.relative(u) for u in undone.success_delete_files] == [own]
    assert not undone.rollback_log_files  # no command block for the winner's slice
    assert [f.name for f in table.storage.list_files("p")] == [".f1_001.log.2_0-0-0"]


def test_a_rollback_run_again_keeps_a_log_file_another_write_took_the_name_of(tmp_path):
    """A rollback deleted its write's log file and crashed before completing; meanwhile
    another write created a log file under the freed name. Running the plan again (as the next
    writer does) deletes nothing of the other write."""
    table = _table(tmp_path)
    rollback, plan = _plan_then_crash(table)
    _write_log_of(table, T4)  # another write takes the name
    rollback.undo(plan, T5, 0.0)
    assert _instants_in(table) == {T4}


def test_a_rollback_of_a_log_file_shared_with_other_instants_retracts_its_blocks(tmp_path):
    """A log file Hudi appended several delta commits to: only a command block undoes this
    one's blocks, and it goes into a new log file version not yet taken."""
    table = _table(tmp_path)
    blocks = [delete_block([DeleteRecord("k", "p", 0)], i) for i in (T2, T3)]
    table.storage.write_bytes(LOG, b"".join(blocks))
    _write_log_of(table, T9, "p/.f1_001.log.3_0-0-0")  # a version another writer took
    WriteMarkers(table.storage, T3).create(LOG, IOType.APPEND)
    metadata = _rollback_of(table, T3)
    assert _instants_in(table) == {T2, T3}  # the shared file stays
    written = list(metadata.partition_metadata["p"].rollback_log_files)
    assert [table.storage.relative(u) for u in written] == ["p/.f1_001.log.4_0-0-0"]
    assert _instants_in(table, "p/.f1_001.log.3_0-0-0") == {T9}


def test_a_rollback_run_again_deletes_no_log_file_that_is_already_gone(tmp_path, monkeypatch):
    """The first run deleted the file; the rerun does not delete it "again": a write could
    create a file under the freed name between the rerun's look and its delete."""
    table = _table(tmp_path)
    rollback, plan = _plan_then_crash(table)
    deleted: list[str] = []
    monkeypatch.setattr(table.storage, "delete", deleted.append)
    metadata = rollback.undo(plan, T5, 0.0)
    assert deleted == []
    assert metadata.partition_metadata["p"].success_delete_files == [table.storage.uri(LOG)]

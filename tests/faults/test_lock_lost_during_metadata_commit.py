"""A writer whose table lock expires while it writes the metadata table's delta commit.

A writer's metadata table (MDT) delta commit goes from requested to completed under the table
lock, so a pending one is a crashed writer's, and the next writer under the lock removes it
(`MetadataTableWriter.roll_back_pending`). That holds only while the lock is held: once its
lease runs out (a stalled process), another writer may take the lock and remove the delta
commit the first one is still writing. The first writer must then not complete it, nor its
data instant: its files would be in no metadata table listing, and every reader listing
through the metadata table would miss its rows. It fails with LockLostError instead, and its
write is undone.

Here writer A stops just after writing its MDT log file (in process, at the crash point
`metadata_table.log_written`); its lease is made to have run out (its lock file's expiry put
in the past: no waiting), and writer B writes meanwhile, breaking the expired lock. Then A goes
on.
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest
from crash_support import hudi_rs, snapshot
from listing_compare import assert_metadata_table_whole, assert_reads_list_alike
from tests_support import SCHEMA

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import LockLostError
from hoodie.read.datasource import register
from hoodie.timeline import WRITE_ACTIONS
from hoodie.transaction import metadata_writer
from hoodie.transaction.lock import LOCK_FILE

pytestmark = pytest.mark.slow

POINT = "metadata_table.log_written"


def _config(version: int) -> WriteConfig:
    options = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
               "hoodie.write.table.version": str(version), "hoodie.metadata.enable": "true",
               "hoodie.compact.inline": "false"}  # fmt: skip
    return WriteConfig.build("lost", record_key="id", partition_path="dt", precombine_field="ts",
                             table_type="MERGE_ON_READ", options=options)  # fmt: skip


def _rows(first: int, dt: str, ts: int) -> list[tuple]:
    return [(k, f"n{k}", dt, ts, False) for k in range(first, first + 3)]


@pytest.mark.parametrize(
    "version", [8, pytest.param(6, marks=pytest.mark.writers)], ids=lambda v: f"v{v}"
)
def test_a_writer_whose_lock_expired_during_its_metadata_commit_does_not_complete(
    spark, tmp_path, version
):
    register(spark)
    path = str(tmp_path / "table")
    cfg = _config(version)
    table = HoodieTable.for_write(path, cfg)
    seed, a_rows, b_rows = _rows(1, "2024-01-01", 1), _rows(10, "2024-01-02", 2), \
        _rows(20, "2024-01-03", 3)  # fmt: skip
    table.upsert(spark.createDataFrame(seed, SCHEMA), cfg)

    original = metadata_writer.crash_point
    b_started, b_wrote = [], []

    def stall_then_other_writer(name: str) -> None:
        original(name)
        if name != POINT or b_started:
            return
        b_started.append(name)
        lock = Path(path) / LOCK_FILE
        record = json.loads(lock.read_text())
        record["expires_at"] = 0  # A's lease has run out (a stalled process)
        lock.write_text(json.dumps(record))
        b_wrote.append(table.upsert(spark.createDataFrame(b_rows, SCHEMA), cfg).instant)

    with mock.patch.object(metadata_writer, "crash_point", stall_then_other_writer):
        with pytest.raises(LockLostError):
            table.upsert(spark.createDataFrame(a_rows, SCHEMA), cfg)
    assert b_wrote, f"writer A never reached {POINT}"

    expected = {k: (n, ts) for k, n, _dt, ts, _d in [*seed, *b_rows]}
    assert snapshot(spark, path) == expected
    assert snapshot(spark, path, **{"hoodie.metadata.enable": "false"}) == expected
    assert hudi_rs(path) == expected
    meta = HoodieTable.open(path).meta_client
    assert not [i for i in meta.timeline().pending if i.action in WRITE_ACTIONS]
    assert_metadata_table_whole(meta, "after A")
    assert_reads_list_alike(meta, "after A")


def test_a_conflicting_write_is_rolled_back_under_the_table_lock(spark, tmp_path):
    """A write that fails its conflict check is undone at once, by a rollback whose metadata
    table delta commit (and its removal of pending ones) is a write to the metadata table like
    any other: under the table lock, which no other writer can take meanwhile."""
    from hoodie.client import write_client
    from hoodie.exceptions import ConcurrentWriteConflict, LockTimeoutError
    from hoodie.storage import load_file_io
    from hoodie.transaction.lock import FileSystemLock

    register(spark)
    path = str(tmp_path / "table")
    cfg = _config(8)
    table = HoodieTable.for_write(path, cfg)
    seed = _rows(1, "2024-01-01", 1)
    table.upsert(spark.createDataFrame(seed, SCHEMA), cfg)
    a_rows, b_rows = _rows(1, "2024-01-01", 2), _rows(2, "2024-01-01", 3)  # one file group

    original_write, original_mdt = write_client.crash_point, metadata_writer.crash_point
    b_wrote, a_rollback_locked = [], []

    def other_writer_first(name: str) -> None:  # B commits to A's file group before A does
        original_write(name)
        if name == "write.finalized" and not b_wrote:
            b_wrote.append("started")
            b_wrote.append(table.upsert(spark.createDataFrame(b_rows, SCHEMA), cfg).instant)

    def try_the_lock(name: str) -> None:  # while A's rollback writes the metadata table
        original_mdt(name)
        if name == POINT and len(b_wrote) == 2 and not a_rollback_locked:
            other = FileSystemLock(load_file_io(path), holder="other", wait_seconds=0)
            try:
                other.acquire()
            except LockTimeoutError:
                a_rollback_locked.append(True)
            else:
                other.release()
                a_rollback_locked.append(False)

    with mock.patch.object(write_client, "crash_point", other_writer_first), \
            mock.patch.object(metadata_writer, "crash_point", try_the_lock):  # fmt: skip
        with pytest.raises(ConcurrentWriteConflict):
            table.upsert(spark.createDataFrame(a_rows, SCHEMA), cfg)
    assert a_rollback_locked == [True], "A's rollback wrote the metadata table without the lock"

    expected = {k: (n, ts) for k, n, _dt, ts, _d in [*seed, *b_rows]}
    assert snapshot(spark, path) == expected
    assert hudi_rs(path) == expected
    meta = HoodieTable.open(path).meta_client
    assert not [i for i in meta.timeline().pending if i.action in WRITE_ACTIONS]
    assert_metadata_table_whole(meta, "after A's rollback")


@pytest.mark.full  # 21 s; make test keeps the metadata commit's case above
def test_a_writer_whose_lock_expired_during_its_metadata_compaction_does_not_complete_it(
    spark, tmp_path
):
    """The same for the metadata table's compaction after a write: writer A stops after writing
    its base file, its lease runs out, writer B's write removes A's pending compaction (and its
    base file) as a crashed one. A must not complete it: a completed compaction whose base file
    is gone would leave readers of the metadata table no `files` slice at all."""
    from hoodie.table_services import metadata_services
    from hoodie.timeline import Action
    from hoodie.transaction.metadata_writer import MetadataTableWriter

    register(spark)
    path = str(tmp_path / "table")
    cfg = WriteConfig.build("lost", record_key="id", partition_path="dt", precombine_field="ts",
                            table_type="COPY_ON_WRITE", options={
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.table.version": "8", "hoodie.metadata.enable": "true",
        "hoodie.metadata.compact.max.delta.commits": "3",
    })  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame(_rows(1, "2024-01-01", 1), SCHEMA), cfg)  # 2 deltas
    original = metadata_services.crash_point
    b_started, b_wrote = [], []

    def stall_then_other_writer(name: str) -> None:
        original(name)
        if name != "metadata_table.compaction_written" or b_started:
            return
        b_started.append(name)
        lock = Path(path) / LOCK_FILE
        record = json.loads(lock.read_text())
        record["expires_at"] = 0
        lock.write_text(json.dumps(record))
        b_wrote.append(table.upsert(spark.createDataFrame(_rows(20, "2024-01-03", 3), SCHEMA),
                                    cfg).instant)  # fmt: skip

    with mock.patch.object(metadata_services, "crash_point", stall_then_other_writer):
        table.upsert(spark.createDataFrame(_rows(10, "2024-01-02", 2), SCHEMA), cfg)
    assert b_wrote, "writer A never compacted the metadata table"
    meta = HoodieTable.open(path).meta_client
    writer = MetadataTableWriter.open_existing(meta)
    assert writer is not None
    for instant in writer.mdt.timeline().completed:
        if instant.action is Action.COMMIT:  # every completed compaction's base files exist
            for stat in writer.mdt.commit_metadata(instant).write_stats():
                assert writer.mdt.storage.exists(stat.path), (str(instant), stat.path)
    assert_metadata_table_whole(meta, "after A")
    assert_reads_list_alike(meta, "after A")
    expected = {k: (n, ts) for k, n, _dt, ts, _d in
                [*_rows(1, "2024-01-01", 1), *_rows(10, "2024-01-02", 2),
                 *_rows(20, "2024-01-03", 3)]}  # fmt: skip
    assert snapshot(spark, path) == expected == hudi_rs(path)

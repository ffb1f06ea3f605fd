"""The storage-based table lock (`hoodie.write.lock.provider=storage`), on object stores and on
local disk.

Each test runs against each store: S3 (the local server) and Azure (Azurite) decide the
lock's conditional writes themselves; a local disk does them under an advisory lock of the
machine.
"""

from __future__ import annotations

import threading
import time

import pytest

from hoodie import WriteConfig
from hoodie.exceptions import InvalidConfigError, LockLostError, LockTimeoutError
from hoodie.storage import FileIO, load_file_io
from hoodie.transaction.lock import FileSystemLock, table_lock
from hoodie.transaction.storage_lock import STORAGE_LOCK_FILE, LockRecord, StorageLock


@pytest.fixture(params=["s3", "azure", "local"])
def storage(request, tmp_path, bucket_on):
    if request.param == "local":
        return load_file_io(str(tmp_path / "table"))
    bucket = bucket_on(request.param)
    return load_file_io(bucket.uri("table"), bucket.storage_options)


def _record(storage: FileIO) -> LockRecord:
    current = storage.read_versioned(STORAGE_LOCK_FILE)
    assert current is not None
    record = LockRecord.parse(current[0])
    assert record is not None
    return record


def test_replace_if_is_compare_and_swap(storage):
    assert storage.read_versioned("f") is None
    first = storage.replace_if("f", b"one", None)
    assert first is not None
    assert storage.replace_if("f", b"other", None) is None  # exists already
    second = storage.replace_if("f", b"two", first)
    assert second is not None and second != first
    assert storage.replace_if("f", b"stale", first) is None  # not that version any more
    assert storage.read_versioned("f") == (b"two", second)
    assert storage.replace_if("missing", b"x", second) is None


def test_the_lock_is_exclusive_and_released_for_the_next(storage):
    first = StorageLock(storage, owner="first")
    second = StorageLock(storage, owner="second", wait_seconds=0.3)
    first.acquire()
    assert _record(storage).owner == "first" and not _record(storage).expired
    with pytest.raises(LockTimeoutError, match="held by first"):
        second.acquire()
    first.check()
    first.release()
    assert _record(storage).expired  # released, in Hudi's way: marked, not deleted
    with pytest.raises(LockLostError, match="not held"):
        first.check()
    with second:
        assert _record(storage).owner == "second"
        second.check()


def test_a_dead_holders_lock_expires_and_is_taken_over(storage):
    dead = StorageLock(storage, validity_seconds=0.5, renew_seconds=0.4, owner="dead")
    dead.acquire()
    dead._stop_renewing()  # the process dies: nobody renews, nobody releases
    survivor = StorageLock(storage, owner="alive", wait_seconds=5, poll_seconds=0.05)
    started = time.monotonic()
    survivor.acquire()
    assert 0.2 < time.monotonic() - started < 4
    assert _record(storage).owner == "alive"
    # The dead holder, were it only paused, would find its lock gone before committing.
    with pytest.raises(LockLostError):
        dead.check()
    dead.release()  # taken over: releasing must not free the new holder's lock
    assert _record(storage).owner == "alive" and not _record(storage).expired
    survivor.release()


def test_a_renewed_lock_outlives_its_validity(storage):
    holder = StorageLock(storage, validity_seconds=0.6, renew_seconds=0.15, owner="long")
    waiter = StorageLock(storage, owner="waiter", wait_seconds=1.5, poll_seconds=0.05)
    with holder:
        with pytest.raises(LockTimeoutError):
            waiter.acquire()  # 1.5 s: more than twice the validity, and still held
        holder.check()
        assert _record(storage).valid_until_ms > time.time() * 1000
    with waiter:
        assert _record(storage).owner == "waiter"


def test_a_holder_that_cannot_renew_stops_before_committing(storage):
    holder = StorageLock(storage, validity_seconds=2.0, renew_seconds=0.5, owner="slow")
    holder.acquire()
    holder._stop_renewing()  # renewals stop (an unreachable store, a long pause)
    holder.check()  # 2 s of validity left: safe
    time.sleep(1.6)
    with pytest.raises(LockLostError, match="could not be renewed"):
        holder.check()
    holder.release()


def test_the_lock_gives_mutual_exclusion_between_threads(storage):
    inside, overlaps, entries = [], [], []

    def work(n):
        lock = StorageLock(storage, owner=f"t{n}", poll_seconds=0.01, wait_seconds=60)
        for _ in range(8):
            with lock:
                inside.append(n)
                if len(inside) > 1:
                    overlaps.append(list(inside))
                entries.append(n)
                time.sleep(0.002)
                inside.remove(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == [] and len(entries) == 32


def test_the_write_config_picks_the_lock(bucket, tmp_path):
    shared = load_file_io(bucket.uri("table"), bucket.storage_options)
    local = load_file_io(str(tmp_path / "table"))
    occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
    default = WriteConfig.build("t", record_key="id", options=occ)
    assert isinstance(table_lock(shared, default), StorageLock)
    assert isinstance(table_lock(local, default), FileSystemLock)
    hudi_name = "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"
    chosen = WriteConfig.build("t", record_key="id", options={
        **occ, "hoodie.write.lock.provider": hudi_name,
        "hoodie.write.lock.storage.validity.timeout.secs": "120",
        "hoodie.write.lock.storage.renew.interval.secs": "10",
    })  # fmt: skip
    lock = table_lock(local, chosen)
    assert isinstance(lock, StorageLock)
    assert (lock.validity_seconds, lock.renew_seconds) == (120, 10)
    # pyarrow's in-memory file system stands for one without conditional writes (HDFS).
    without = load_file_io("mock:///bucket/table")
    assert isinstance(table_lock(without, default), FileSystemLock)
    with pytest.raises(InvalidConfigError, match="hoodie.write.lock.provider=filesystem"):
        table_lock(without, chosen)
    with pytest.raises(InvalidConfigError, match="hoodie.write.lock.provider"):
        WriteConfig.build("t", record_key="id", options={"hoodie.write.lock.provider": "zk"})
    with pytest.raises(InvalidConfigError, match="renew.interval.secs"):
        WriteConfig.build("t", record_key="id", options={
            "hoodie.write.lock.storage.validity.timeout.secs": "30",
            "hoodie.write.lock.storage.renew.interval.secs": "30",
        })  # fmt: skip

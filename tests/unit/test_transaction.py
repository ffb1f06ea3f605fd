"""The table lock and writer heartbeats (no Spark)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from hoodie.exceptions import LockTimeoutError
from hoodie.storage import Storage
from hoodie.transaction.heartbeat import Heartbeat, heartbeat_path, is_expired
from hoodie.transaction.lock import LOCK_FILE, FileSystemLock


def test_lock_is_exclusive_and_names_its_holder(tmp_path):
    storage = Storage(str(tmp_path))
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
    storage = Storage(str(tmp_path))
    FileSystemLock(storage, holder="dead", lease_seconds=0.1).acquire()  # never released
    time.sleep(0.2)
    survivor = FileSystemLock(storage, holder="alive", wait_seconds=2)
    survivor.acquire()
    assert json.loads((tmp_path / LOCK_FILE).read_text())["holder"] == "alive"
    assert [p.name for p in (tmp_path / ".hoodie").iterdir()] == ["lock"]  # no leftovers


def test_lock_gives_mutual_exclusion_between_threads(tmp_path):
    storage = Storage(str(tmp_path))
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
    storage = Storage(str(tmp_path))
    beat = Heartbeat(storage, "20240101000000000", interval_seconds=0.05).start()
    time.sleep(0.2)
    assert not is_expired(storage, "20240101000000000", interval_seconds=0.05, misses=2)
    beat.stop()
    assert not (tmp_path / heartbeat_path("20240101000000000")).exists()
    assert is_expired(storage, "20240101000000000", interval_seconds=0.05, misses=2)


def test_a_stale_heartbeat_counts_as_failed(tmp_path):
    storage = Storage(str(tmp_path))
    storage.write_atomic(heartbeat_path("1"), str(time.time() - 10).encode())
    assert is_expired(storage, "1", interval_seconds=1, misses=2)
    assert not is_expired(storage, "1", interval_seconds=5, misses=2)

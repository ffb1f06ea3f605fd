"""The storage-based table lock: one small object that writers hand over by conditional writes.

The file-system lock breaks an expired lock with a move, which an object store does as a
copy and a delete, so two writers can both believe they broke it; and it assumes one clock
near the files. This lock follows Apache Hudi 1.1's storage-based lock provider (RFC-91):
the lock is `.hoodie/.locks/table_lock.json`, holding its owner, the time it is valid until
and whether it was released, and every change is a write that only succeeds if the object is
still the version this writer last read (`FileIO.replace_if`: S3's `If-Match` /
`If-None-Match`). Of two writers acting on one state, exactly one wins.

- acquire: create the object, or replace one that was released or has expired;
- while held, a thread renews it (every renew interval, pushing its end a validity timeout
  ahead), so a long rollback under the lock keeps it, and a writer that dies stops renewing:
  its lock expires after the validity timeout, with no one to break it;
- release: mark it released (a replace, so that a holder whose lock was taken over cannot
  release the new holder's);
- `check()`, just before anything is committed under the lock: a holder that could not renew
  in time may have lost it, and must not commit.

Expiry compares the holder's clock with the reader's, so clocks must agree to well within the
validity timeout (minutes by default), as they do on hosts that run NTP.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from ..exceptions import LockLostError, LockTimeoutError
from ..options.write import default_seconds
from ..storage import FileIO
from ..timeline import METAFOLDER

log = logging.getLogger(__name__)

STORAGE_LOCK_FILE = posixpath.join(METAFOLDER, ".locks", "table_lock.json")


class Renewal:
    """A daemon thread that renews a held lock: `renew()` every `interval` seconds until it
    returns False (the lock was lost) or `stop()` is called. Both table locks use it
    (`StorageLock` here, `lock.FileSystemLock`); each says what renewing is."""

    def __init__(self, name: str, interval: float, renew: Callable[[], bool]) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval, renew), daemon=True,
                                        name=name)  # fmt: skip
        self._thread.start()

    def _run(self, interval: float, renew: Callable[[], bool]) -> None:
        while not self._stop.wait(interval):
            if not renew():
                return

    def stop(self) -> None:
        """Stop renewing; returns once no renewal is under way (unless called by one)."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class LockRecord:
    """What the lock object holds, in Hudi's field names."""

    owner: str
    valid_until_ms: int
    expired: bool = False  # released by its owner

    @classmethod
    def parse(cls, data: bytes) -> LockRecord | None:
        """None for bytes that are no lock record (taken as free: only whole objects are ever
        written, so this is not a holder caught mid-write)."""
        try:
            raw = json.loads(data)
            return cls(str(raw["owner"]), int(raw["validUntil"]), bool(raw.get("expired")))
        except (ValueError, KeyError, TypeError):
            return None

    def to_bytes(self) -> bytes:
        record = {"expired": self.expired, "validUntil": self.valid_until_ms, "owner": self.owner}
        return json.dumps(record).encode()

    def is_free(self, now_ms: int) -> bool:
        return self.expired or self.valid_until_ms <= now_ms


@dataclass
class StorageLock:
    storage: FileIO
    validity_seconds: float = default_seconds("lock_validity_seconds")
    renew_seconds: float = default_seconds("lock_renew_seconds")
    wait_seconds: float = default_seconds("lock_wait_ms")
    poll_seconds: float = 0.1
    owner: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:"
                                                f"{uuid.uuid4().hex[:8]}")  # fmt: skip
    _version: str | None = field(default=None, init=False, repr=False)
    _valid_until_ms: int = field(default=0, init=False, repr=False)
    _lost: str | None = field(default=None, init=False, repr=False)
    _mutex: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _renewal: Renewal | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 < self.renew_seconds < self.validity_seconds:
            raise ValueError(
                f"the lock's renew interval ({self.renew_seconds}s) must be shorter than its "
                f"validity ({self.validity_seconds}s)"
            )

    @property
    def uri(self) -> str:
        return self.storage.uri(STORAGE_LOCK_FILE)

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_seconds
        while True:
            current = self.storage.read_versioned(STORAGE_LOCK_FILE)
            record = LockRecord.parse(current[0]) if current is not None else None
            if current is None or record is None or record.is_free(_now_ms()):
                if self._take(current[1] if current is not None else None):
                    return
                continue  # another writer changed it first: look again
            if time.monotonic() >= deadline:
                left = max(0.0, (record.valid_until_ms - _now_ms()) / 1000)
                raise LockTimeoutError(
                    f"table lock {self.uri} is held by {record.owner}; waited "
                    f"{self.wait_seconds:.0f}s (hoodie.write.lock.wait_time_ms). If that writer "
                    f"is gone, its lock expires by itself in {left:.0f}s "
                    "(hoodie.write.lock.storage.validity.timeout.secs)"
                )
            time.sleep(self.poll_seconds * random.uniform(0.5, 1.5))

    def release(self) -> None:
        self._stop_renewing()
        with self._mutex:
            version, self._version = self._version, None
            if version is None or self._lost:
                return
            released = LockRecord(self.owner, _now_ms(), expired=True)
            if self.storage.replace_if(STORAGE_LOCK_FILE, released.to_bytes(), version) is None:
                log.warning("table lock %s was taken over before %s released it", self.uri,
                            self.owner)  # fmt: skip

    def check(self) -> None:
        """Raise LockLostError unless this writer surely holds the lock for a while yet:
        its last renewal succeeded and leaves at least one renew interval to go."""
        with self._mutex:
            if self._version is None:
                raise LockLostError(f"table lock {self.uri} is not held by {self.owner}")
            reason = self._lost
            left_ms = self._valid_until_ms - _now_ms()
            if reason is None and left_ms < self.renew_seconds * 1000:
                reason = f"it could not be renewed and ends in {max(left_ms, 0) / 1000:.1f}s"
        if reason is not None:
            raise LockLostError(
                f"table lock {self.uri} is no longer safely held by {self.owner}: {reason}. "
                "Nothing was committed under it; run the write again (if renewals fail, check "
                "that the store is reachable, or raise "
                "hoodie.write.lock.storage.validity.timeout.secs)"
            )

    def __enter__(self) -> StorageLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _take(self, version: str | None) -> bool:
        record = LockRecord(self.owner, _now_ms() + int(self.validity_seconds * 1000))
        written = self.storage.replace_if(STORAGE_LOCK_FILE, record.to_bytes(), version)
        if written is None:
            return False
        with self._mutex:
            self._version, self._valid_until_ms, self._lost = written, record.valid_until_ms, None
        self._renewal = Renewal(f"hoodie-lock-renewal-{self.owner}", self.renew_seconds,
                                self._renew)  # fmt: skip
        return True

    def _renew(self) -> bool:
        """Push the lock's end a validity ahead; False once it is released or lost."""
        with self._mutex:
            if self._version is None or self._lost:
                return False
            record = LockRecord(self.owner, _now_ms() + int(self.validity_seconds * 1000))
            try:
                written = self.storage.replace_if(STORAGE_LOCK_FILE, record.to_bytes(),
                                                  self._version)  # fmt: skip
            except Exception as error:  # the store is unreachable: try again next time
                log.warning("could not renew table lock %s: %s", self.uri, error)
                return True
            if written is None:
                self._lost = "another writer took it over after it expired"
                return False
            self._version, self._valid_until_ms = written, record.valid_until_ms
            return True

    def _stop_renewing(self) -> None:
        if self._renewal is not None:
            self._renewal.stop()
        self._renewal = None

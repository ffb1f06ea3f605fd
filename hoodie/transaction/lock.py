"""The table lock that optimistic concurrency control takes around conflict check and commit.

`LockProvider` is the interface: anything with `acquire()`, `release()` and `check()` (a
ZooKeeper or DynamoDB lock, say) can guard commits. Two need no service, and
`hoodie.write.lock.provider` picks one (by default, the storage-based lock where the store has
conditional writes and is shared by machines, S3; the file-system lock elsewhere):
- `FileSystemLock`: the file `.hoodie/lock`, created exclusively, holding who holds it and
  until when. A holder that died does not block forever: once its lease expires the next
  writer breaks the lock (a move, atomic on local disks and HDFS only). While held, a thread
  pushes the lease's end forward every third of it, so a commit that runs long under the lock
  (the record index job of a 10M-row write takes minutes) keeps it; a holder that stalls or
  dies stops renewing, and its lock expires one lease after its last renewal.
- `StorageLock` (storage_lock.py): Hudi 1.1's storage-based lock, renewed while held and
  handed over by conditional writes; for object stores and writers on several machines.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..config import FILESYSTEM_LOCK, STORAGE_LOCK, WriteConfig
from ..exceptions import InvalidConfigError, LockLostError, LockTimeoutError
from ..options.write import default_seconds
from ..storage import FileIO
from ..timeline import METAFOLDER
from .storage_lock import Renewal, StorageLock

log = logging.getLogger(__name__)

LOCK_FILE = posixpath.join(METAFOLDER, "lock")


class LockProvider(Protocol):
    def acquire(self) -> None:
        """Block until this writer holds the lock; raise LockTimeoutError after the wait."""

    def release(self) -> None:
        """Give the lock up (only if this writer holds it)."""

    def check(self) -> None:
        """Raise LockLostError unless this writer still holds the lock: called just before
        something is committed under it."""


@dataclass
class FileSystemLock:
    storage: FileIO
    lease_seconds: float = default_seconds("lock_expire_minutes")
    wait_seconds: float = default_seconds("lock_wait_ms")
    poll_seconds: float = 0.05
    holder: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:"
                                                f"{uuid.uuid4().hex[:8]}")  # fmt: skip

    _mutex: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _renewal: Renewal | None = field(default=None, init=False, repr=False)
    _held_until: float | None = field(default=None, init=False, repr=False)
    _lost: str | None = field(default=None, init=False, repr=False)

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_seconds
        while True:
            expires_at = time.time() + self.lease_seconds
            record = {"holder": self.holder, "expires_at": expires_at}
            if self.storage.create_if_absent(LOCK_FILE, json.dumps(record).encode()):
                self._start_renewing(expires_at)
                return
            current = self._current()
            if current is not None and self._expired(current):
                self._break(current)
                continue
            if time.monotonic() >= deadline:
                who = current.get("holder") if current else "(unknown)"
                raise LockTimeoutError(
                    f"table lock {self.storage.uri(LOCK_FILE)} is held by {who}; waited "
                    f"{self.wait_seconds:.0f}s (hoodie.write.lock.wait_time_ms). If that writer "
                    "is gone, the lock expires by itself "
                    f"{self.lease_seconds:.0f}s after it was taken"
                )
            time.sleep(self.poll_seconds)

    def release(self) -> None:
        self._stop_renewing()
        current = self._current()
        if current is not None and current.get("holder") == self.holder:
            self.storage.delete(LOCK_FILE)

    def check(self) -> None:
        current = self._current()
        lost = self._lost
        if not current or current.get("holder") != self.holder or self._expired(current):
            lost = lost or "its lease (hoodie.write.lock.filesystem.expire) ran out"
        if lost is not None:
            raise LockLostError(
                f"table lock {self.storage.uri(LOCK_FILE)} is no longer held by {self.holder}: "
                f"{lost}, and another writer may have taken it. Nothing was committed under "
                "it; run the write again"
            )

    def __enter__(self) -> FileSystemLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _start_renewing(self, held_until: float) -> None:
        self._stop_renewing()
        with self._mutex:
            self._held_until, self._lost = held_until, None
        self._renewal = Renewal(f"hoodie-lock-renewal-{self.holder}", self.lease_seconds / 3,
                                self._renew)  # fmt: skip

    def _renew(self) -> bool:
        """Push the lock's end a lease ahead (every third of the lease), while this writer
        still holds it; False once it is released or lost. A lease that ran out before its
        renewal (the process stalled) is not renewed: another writer may have broken it
        meanwhile, so the lock counts as lost."""
        with self._mutex:
            if self._held_until is None or self._lost is not None:
                return False
            current = self._current()
            now = time.time()
            if not current or current.get("holder") != self.holder:
                self._lost = "another writer took it over"
                return False
            if self._held_until < now or self._expired(current):
                self._lost = "its lease (hoodie.write.lock.filesystem.expire) ran out"
                return False
            expires_at = now + self.lease_seconds
            record = {"holder": self.holder, "expires_at": expires_at}
            try:
                self.storage.write_atomic(LOCK_FILE, json.dumps(record).encode())
            except OSError as error:  # try again next time; the lease still runs
                log.warning("could not renew table lock %s: %s",
                            self.storage.uri(LOCK_FILE), error)  # fmt: skip
                return True
            self._held_until = expires_at
            return True

    def _stop_renewing(self) -> None:
        if self._renewal is not None:
            self._renewal.stop()
        self._renewal = None
        with self._mutex:
            self._held_until = None

    def _current(self) -> dict[str, Any] | None:
        """The lock's record; {} while its holder is still writing it; None when free."""
        try:
            return json.loads(self.storage.read_bytes(LOCK_FILE) or b"{}")
        except FileNotFoundError:
            return None
        except ValueError:
            return {}

    def _expired(self, record: dict[str, Any]) -> bool:
        if "expires_at" in record:
            return record["expires_at"] < time.time()
        # Created but not yet written: held, unless its writer died right then.
        try:
            modified = self.storage.mtime(LOCK_FILE)
        except FileNotFoundError:
            return False
        return modified is not None and modified.timestamp() + self.lease_seconds < time.time()

    def _break(self, expired: dict[str, Any]) -> None:
        """Take an expired lock away: move it aside, and put it back if it was not the one
        seen expired (another writer broke and re-took it in between)."""
        aside = f"{LOCK_FILE}.expired-{uuid.uuid4().hex[:8]}"
        try:
            self.storage.move(LOCK_FILE, aside)
        except (FileNotFoundError, OSError):
            return
        try:
            taken = json.loads(self.storage.read_bytes(aside) or b"{}")
        except ValueError:
            taken = {}
        if taken != expired:
            self.storage.create_if_absent(LOCK_FILE, json.dumps(taken).encode())
        self.storage.delete(aside)


def table_lock(
    storage: FileIO, config: WriteConfig, provider: LockProvider | None = None
) -> LockProvider:
    """The lock all concurrent writers of a table take: `provider` when the caller has one,
    else the one `hoodie.write.lock.provider` names (by default, by the table's storage)."""
    if provider is not None:
        return provider
    kind = config.lock_provider
    if kind is None:
        shared_store = storage.is_object_store and storage.has_conditional_writes
        kind = STORAGE_LOCK if shared_store else FILESYSTEM_LOCK
    wait_seconds = config.lock_wait_ms / 1000
    if kind == FILESYSTEM_LOCK:
        return FileSystemLock(storage, config.lock_expire_minutes * 60, wait_seconds)
    if not storage.has_conditional_writes:
        raise InvalidConfigError(
            f"table '{config.table_name}': hoodie.write.lock.provider={STORAGE_LOCK} needs "
            f"conditional writes, which {storage.scheme}:// paths do not have here (object "
            f"stores and local paths do); use hoodie.write.lock.provider={FILESYSTEM_LOCK}"
        )
    return StorageLock(storage, config.lock_validity_seconds, config.lock_renew_seconds,
                       wait_seconds)  # fmt: skip

"""The table lock that optimistic concurrency control takes around conflict check and commit.

`LockProvider` is the interface: anything with `acquire()` and `release()` (a ZooKeeper or
DynamoDB lock, say) can guard commits. `FileSystemLock` is the one that needs no service: the
lock is the file `.hoodie/lock`, created exclusively (`O_EXCL` locally; on object stores, as
atomic as the store's conditional create allows), holding who holds it and until when. A holder
that died does not block forever: once its lease expires the next writer breaks the lock.
Commits hold it for well under a second, so the lease only has to outlive one commit.
"""

from __future__ import annotations

import json
import os
import posixpath
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..config import WriteConfig
from ..exceptions import LockTimeoutError
from ..storage import Storage
from ..timeline import METAFOLDER

LOCK_FILE = posixpath.join(METAFOLDER, "lock")


class LockProvider(Protocol):
    def acquire(self) -> None:
        """Block until this writer holds the lock; raise LockTimeoutError after the wait."""

    def release(self) -> None:
        """Give the lock up (only if this writer holds it)."""


@dataclass
class FileSystemLock:
    storage: Storage
    lease_seconds: float = 60.0
    wait_seconds: float = 60.0
    poll_seconds: float = 0.05
    holder: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:"
                                                f"{uuid.uuid4().hex[:8]}")  # fmt: skip

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_seconds
        while True:
            record = {"holder": self.holder, "expires_at": time.time() + self.lease_seconds}
            if self.storage.create_if_absent(LOCK_FILE, json.dumps(record).encode()):
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
        current = self._current()
        if current is not None and current.get("holder") == self.holder:
            self.storage.delete(LOCK_FILE)

    def __enter__(self) -> FileSystemLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

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
    storage: Storage, config: WriteConfig, provider: LockProvider | None = None
) -> LockProvider:
    """The lock all concurrent writers of a table take: `provider` when the caller has one,
    else the file-system lock with the write config's lease and wait."""
    if provider is not None:
        return provider
    return FileSystemLock(
        storage,
        lease_seconds=config.lock_expire_minutes * 60,
        wait_seconds=config.lock_wait_ms / 1000,
    )

"""Heartbeats: how concurrent writers tell a failed write from one still running.

With one writer, any pending write at start-up has failed and is rolled back (Hudi's EAGER
policy). With several, another writer's pending instant may be in progress; each writer
therefore touches `.hoodie/.heartbeat/<instant>` every `hoodie.client.heartbeat.interval_in_ms`
while it writes, and a pending instant is failed only once its heartbeat is older than
`interval x (hoodie.client.heartbeat.tolerable.misses + 1)`, or missing.
"""

from __future__ import annotations

import posixpath
import threading
import time

from ..storage import Storage
from ..timeline import METAFOLDER

HEARTBEAT_FOLDER = posixpath.join(METAFOLDER, ".heartbeat")


def heartbeat_path(instant: str) -> str:
    return posixpath.join(HEARTBEAT_FOLDER, instant)


class Heartbeat:
    def __init__(self, storage: Storage, instant: str, interval_seconds: float = 60.0):
        self.storage = storage
        self.instant = instant
        self.interval = interval_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{instant}",
                                        daemon=True)  # fmt: skip

    def start(self) -> Heartbeat:
        """Beat from now on, taking over the instant's heartbeat file if there is one."""
        self._touch()
        self._thread.start()
        return self

    def claim(self) -> bool:
        """Beat from now on if no one else beats for this instant: the first beat creates the
        file exclusively. False (and no beating) when it exists: another writer picked the
        same instant time, and its heartbeat must not be overwritten or deleted."""
        if not self.storage.create_if_absent(heartbeat_path(self.instant), _now()):
            return False
        self._thread.start()
        return True

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.storage.delete(heartbeat_path(self.instant))

    def _touch(self) -> None:
        self.storage.write_atomic(heartbeat_path(self.instant), _now())

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            self._touch()


def _now() -> bytes:
    return str(time.time()).encode()


def is_expired(storage: Storage, instant: str, interval_seconds: float, misses: int) -> bool:
    try:
        beat = float(storage.read_bytes(heartbeat_path(instant)) or b"0")
    except (FileNotFoundError, ValueError):
        return True
    return time.time() - beat > interval_seconds * (misses + 1)

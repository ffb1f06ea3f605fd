"""Heartbeats: how writers tell a failed write from one still running.

Every writer (in either concurrency mode) touches `.hoodie/.heartbeat/<instant>` every
`hoodie.client.heartbeat.interval_in_ms` while it works on the instant, and a pending instant
has failed only once its heartbeat is older than `interval x (hoodie.client.heartbeat.
tolerable.misses + 1)`, or missing: a second writer never takes a running write for a crashed
one (Hudi's LAZY failed-writes policy).

The file is Apache Hudi's: Hudi writes it empty and reads its modification time. Ours holds
the time of the beat as well (the tests age a heartbeat by rewriting it, and some stores give
modification times in whole seconds); an empty one, as Hudi writes it, is read by its time.
"""

from __future__ import annotations

import posixpath
import threading
import time

from ..options.write import default_seconds
from ..storage import FileIO
from ..timeline import METAFOLDER

HEARTBEAT_FOLDER = posixpath.join(METAFOLDER, ".heartbeat")


def heartbeat_path(instant: str) -> str:
    return posixpath.join(HEARTBEAT_FOLDER, instant)


class Heartbeat:
    def __init__(
        self,
        storage: FileIO,
        instant: str,
        interval_seconds: float = default_seconds("heartbeat_interval_ms"),
    ):
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


def is_expired(storage: FileIO, instant: str, interval_seconds: float, misses: int) -> bool:
    beat = last_beat(storage, instant)
    return beat is None or time.time() - beat > interval_seconds * (misses + 1)


def last_beat(storage: FileIO, instant: str) -> float | None:
    """When the instant's heartbeat last beat (seconds since the epoch), or None: no
    heartbeat. Our beats hold their time; Apache Hudi's are empty files, known by their
    modification time."""
    path = heartbeat_path(instant)
    try:
        content = storage.read_bytes(path).strip()
        if content:
            return float(content)
        modified = storage.mtime(path)
    except FileNotFoundError:
        return None
    except ValueError:  # not a time: a heartbeat of some other writer, by its file's time
        try:
            modified = storage.mtime(path)
        except FileNotFoundError:
            return None
    return modified.timestamp() if modified is not None else None

"""How a step is measured: wall time, peak memory of the process tree, what landed on disk.

Every system is measured by the same code, around the same call, in a worker process of its
own (see worker.py), so a Spark JVM left by one system never counts toward another's memory.

- wall seconds: `time.perf_counter()` around the system's call, nothing else;
- peak memory: the sum of the RSS of the worker and all its descendants (for Spark: the JVM
  and its Python workers), sampled by a thread every SAMPLE_SECONDS. A sum of RSS counts
  pages shared between processes more than once, so it is an upper bound, the same for all.
  The worker's own RSS is kept apart: for a Spark system it is the Python driver, where
  anything a write collected (keys, records) would show;
- files and bytes written: the table folder is listed before and after the step; a file that
  is new, or whose size changed, was written. Data files (parquet, Hudi log files) are also
  counted apart from metadata (timeline, Delta log, Iceberg manifests);
- bytes read: what the process tree's read calls returned during the step (Linux `rchar`,
  page-cache hits included), from the same samples as the memory: table and input files,
  and for Spark also shuffle files and the pipes between the JVM and its Python workers. A
  process that starts and ends between two samples is missed (Spark reuses its Python
  workers, so few are). Spark's own input metrics cannot stand in: our core's files are read
  by pyarrow in Python workers, which Spark does not count.
"""

from __future__ import annotations

import os
import platform
import threading
import time
from pathlib import Path

import psutil

SAMPLE_SECONDS = 0.05


class PeakRss:
    """The largest RSS sum of this process and its descendants seen while running, and the
    bytes their read calls returned meanwhile (`bytes_read`)."""

    def __init__(self, interval: float = SAMPLE_SECONDS):
        self.interval = interval
        self.peak = 0
        self.own_peak = 0  # this process alone: for Spark systems, the Python driver
        # pid -> (read chars at its first sample, at its last); a process first seen after
        # the start counts from 0, as it read everything during the step
        self._reads: dict[int, tuple[int, int]] = {}
        self._started = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="peak-rss", daemon=True)
        self._root = psutil.Process(os.getpid())

    def sample(self) -> int:
        total = 0
        try:
            procs = [self._root, *self._root.children(recursive=True)]
        except psutil.Error:
            procs = [self._root]
        for proc in procs:
            try:
                rss = proc.memory_info().rss
                total += rss
                if proc.pid == self._root.pid:  # the same sample as the sum: never above it
                    self.own_peak = max(self.own_peak, rss)
                chars = proc.io_counters().read_chars
            except (psutil.Error, AttributeError):  # exited just now; no rchar off Linux
                continue
            first, _ = self._reads.get(proc.pid, (chars if not self._started else 0, 0))
            self._reads[proc.pid] = (first, chars)
        self._started = True
        self.peak = max(self.peak, total)
        return total

    @property
    def bytes_read(self) -> int:
        return sum(last - first for first, last in self._reads.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRss:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def listing(folder: Path) -> dict[str, int]:
    """Every file under `folder` (relative path -> size); empty when it does not exist yet."""
    out: dict[str, int] = {}
    if not folder.exists():
        return out
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            try:
                out[os.path.relpath(path, folder)] = os.path.getsize(path)
            except OSError:  # removed while we listed (cleaning)
                pass
    return out


def is_data_file(relpath: str) -> bool:
    """Parquet data files and Hudi log files; not timelines, Delta logs or Iceberg metadata."""
    name = os.path.basename(relpath)
    if relpath.startswith((".hoodie", "_delta_log", "metadata")):
        return False
    if ".log." in name and not name.endswith(".crc"):  # Hudi: .<fileId>_<instant>.log.<n>_<token>
        return True
    return name.endswith(".parquet") and not name.startswith((".", "_"))


def written(before: dict[str, int], after: dict[str, int]) -> dict:
    """Files that are new or changed size between two listings, and their bytes."""
    new = [p for p, size in after.items() if before.get(p) != size]
    data = [p for p in new if is_data_file(p)]
    return {
        "files_written": len(new),
        "bytes_written": sum(after[p] for p in new),
        "data_files_written": len(data),
        "data_bytes_written": sum(after[p] for p in data),
        "files_removed": sum(1 for p in before if p not in after),
    }


def table_size(folder: Path) -> dict:
    files = listing(folder)
    data = {p: s for p, s in files.items() if is_data_file(p)}
    return {
        "files": len(files),
        "bytes": sum(files.values()),
        "data_files": len(data),
        "data_bytes": sum(data.values()),
    }


def measure(folder: Path, fn) -> tuple[object, dict, dict[str, int]]:
    """Run `fn()` once and return its result, the measurements and the listing before it."""
    before = listing(folder)
    with PeakRss() as memory:
        started = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - started
    after = listing(folder)
    measured = {
        "seconds": round(seconds, 3),
        "peak_rss_bytes": memory.peak,
        "driver_peak_rss_bytes": memory.own_peak,
        "bytes_read": memory.bytes_read,
    }
    measured.update(written(before, after))
    return result, measured, before


def machine() -> dict:
    """Cores, memory and load of this machine, for the report."""
    memory = psutil.virtual_memory().total
    return {
        "cores": os.cpu_count(),
        "memory_bytes": memory,
        "memory_gib": round(memory / 2**30, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }

"""Crash points for fault-injection tests: the process dies here when a test asks it to.

Each point is a named place in a write, a compaction or a rollback where a real crash could
happen (a killed driver, a lost machine). A test starts a writer in a child process with
`HOODIE_CRASH_AT=<point>`; reaching that point kills the driver with SIGKILL, with no chance
to clean up, which is exactly the situation recovery must handle. Points inside Spark tasks
kill the driver (its pid travels in `HOODIE_CRASH_PID`) and then their own worker.

With `HOODIE_CRASH_SNAPSHOTS=<folder>` (and the table's local path in `HOODIE_CRASH_TABLE`)
a process copies the table to `<folder>/<point>/table` the first time it reaches each point
(each point named in `HOODIE_CRASH_SNAPSHOT_POINTS`, comma-separated, when that is set), and
goes on: the copy is what a SIGKILL at that point would leave on disk, so one run of an
action gives a test the crash state of every point it passes (a process per point costs a JVM
start each). Points that stage a torn write before dying (`armed`) need a real crash.

With `HOODIE_PAUSE_AT=<point>` and `HOODIE_PAUSE_DIR=<folder>` a process stops at that point
instead: it creates `<folder>/reached` and waits until `<folder>/go` exists, so that a test can
run another writer exactly while this one is in the middle of its action (its heartbeat keeps
beating meanwhile, as a slow writer's would).

Unset, a point costs three dictionary lookups.
"""

from __future__ import annotations

import os
import shutil
import signal
import time

CRASH_AT = "HOODIE_CRASH_AT"
CRASH_PID = "HOODIE_CRASH_PID"
SNAPSHOT_TO = "HOODIE_CRASH_SNAPSHOTS"
SNAPSHOT_OF = "HOODIE_CRASH_TABLE"
SNAPSHOT_POINTS = "HOODIE_CRASH_SNAPSHOT_POINTS"
PAUSE_AT = "HOODIE_PAUSE_AT"
PAUSE_DIR = "HOODIE_PAUSE_DIR"


def armed(name: str) -> bool:
    """Is a test about to crash the process at `name`? (To stage a torn write first.)"""
    return os.environ.get(CRASH_AT) == name


def crash_point(name: str) -> None:
    if os.environ.get(PAUSE_AT) == name:
        _pause(os.environ[PAUSE_DIR])
    folder = os.environ.get(SNAPSHOT_TO)
    if folder:
        only = os.environ.get(SNAPSHOT_POINTS)
        if not only or name in only.split(","):
            _snapshot(name, folder)
        return
    if not armed(name):
        return
    driver = int(os.environ.get(CRASH_PID) or os.getpid())
    os.kill(driver, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)  # a Spark worker: die with the driver


def _pause(folder: str) -> None:
    """Say this point is reached, then wait for the test's go (at most ten minutes)."""
    open(os.path.join(folder, "reached"), "w").close()
    deadline = time.monotonic() + 600
    while not os.path.exists(os.path.join(folder, "go")) and time.monotonic() < deadline:
        time.sleep(0.05)


def _snapshot(name: str, folder: str) -> None:
    """Copy the table as it is at point `name`, unless a process reached the point before."""
    target = os.path.join(folder, name)
    try:
        os.mkdir(target)  # the claim: tasks of one job may reach a point one after another
    except FileExistsError:
        return
    copy = os.path.join(target, "table")
    for attempt in range(3):  # a heartbeat's or lock's file may be replaced while copied
        try:
            shutil.copytree(os.environ[SNAPSHOT_OF], copy, symlinks=True)
            return
        except (shutil.Error, FileNotFoundError):
            shutil.rmtree(copy, ignore_errors=True)
            if attempt == 2:
                raise

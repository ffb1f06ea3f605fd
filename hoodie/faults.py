"""Crash points for fault-injection tests: the process dies here when a test asks it to.

Each point is a named place in a write, a compaction or a rollback where a real crash could
happen (a killed driver, a lost machine). A test starts a writer in a child process with
`HOODIE_CRASH_AT=<point>`; reaching that point kills the driver with SIGKILL, with no chance
to clean up, which is exactly the situation recovery must handle. Points inside Spark tasks
kill the driver (its pid travels in `HOODIE_CRASH_PID`) and then their own worker.

Unset, a point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

CRASH_AT = "HOODIE_CRASH_AT"
CRASH_PID = "HOODIE_CRASH_PID"


def armed(name: str) -> bool:
    """Is a test about to crash the process at `name`? (To stage a torn write first.)"""
    return os.environ.get(CRASH_AT) == name


def crash_point(name: str) -> None:
    if not armed(name):
        return
    driver = int(os.environ.get(CRASH_PID) or os.getpid())
    os.kill(driver, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)  # a Spark worker: die with the driver

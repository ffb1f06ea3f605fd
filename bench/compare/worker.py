"""The process a system runs in: takes steps from the runner, measures and answers each.

Why a process per system: peak memory is read from this process tree, so a JVM started for
one system must not be counted for the next; a system that exceeds the time cap can be killed
without losing the run; and no state (caches, warmed-up JIT, open files) carries from one
system to another. The runner talks to it over a multiprocessing pipe: it sends
`(command, args)` and gets `("ok", payload)` or `("error", traceback)` back; `args["system"]`
names the system. With `--shared-spark` (for smoke runs) one worker hosts the Spark systems one
after another in one JVM and one SparkSession (and the Apache Hudi systems in one child
process per Apache Hudi version).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from . import metrics
from .systems import make
from .workload import CHECK_COLUMNS, checksum


def serve(conn, options: dict) -> None:
    """Run until the runner sends None (or closes the pipe)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers: ours
    systems = {}
    try:
        while True:
            try:
                message = conn.recv()
            except EOFError:
                return
            if message is None:
                return
            command, args = message
            try:
                name = args["system"]
                if command == "open":
                    started = time.perf_counter()
                    system = make(name, Path(args["root"]), options)
                    system.open()
                    systems[name] = system
                    payload = {
                        "seconds": round(time.perf_counter() - started, 3),
                        "versions": system.versions(),
                        "description": system.description,
                        "read_optimized": system.has_read_optimized,
                        "compacts": system.compacts,
                    }
                elif command == "close":
                    systems.pop(name).close()
                    payload = {}
                else:
                    payload = handle(systems[name], command, args)
                conn.send(("ok", payload))
            except BaseException:  # reported to the runner, which decides
                conn.send(("error", traceback.format_exc()))
    finally:
        for system in systems.values():
            try:
                system.close()
            except Exception:  # noqa: BLE001 - closing is best effort at exit
                pass
        if "compare.systems.apache_hudi" in sys.modules:  # its children --shared-spark kept
            sys.modules["compare.systems.apache_hudi"].close_shared()
        if "pyspark" in sys.modules:  # a session --shared-spark kept open
            from pyspark.sql import SparkSession

            session = SparkSession.getActiveSession()
            if session is not None:
                session.stop()


def handle(system, command: str, args: dict) -> dict:
    table = system.table_dir
    if command in ("create", "upsert", "delete", "compact"):
        write = getattr(system, command)
        call = write if command == "compact" else lambda: write(args["files"])
        measured, before = measured_call(system, args["step"], call)
        started = time.perf_counter()
        measured["details"] = system.details(args["step"], before)
        measured["details_seconds"] = round(time.perf_counter() - started, 3)
        return measured
    if command == "scan":
        out = best_of(system, "scan", system.scan, args.get("repeats", 2))
        out["reference"] = {
            name: best_of(system, name, fn, args.get("repeats", 2))
            for name, fn in system.reference_scans().items()
        }
        return out
    repeats = args.get("repeats", 2)
    if command == "scan_ro":
        return best_of(system, "scan_ro", system.scan_read_optimized, repeats)
    if command == "point_read":
        key = int(args["key"])
        out = best_of(system, "point_read", lambda: system.point_read(key), repeats)
        out["result"] = checksum(system.point_read_rows(key, CHECK_COLUMNS))
        return out
    if command == "filter":
        column, above = args["column"], float(args["above"])
        out = best_of(system, "filter", lambda: system.filter_rows(column, above), repeats)
        out["result"] = checksum(system.filter_result(column, above, CHECK_COLUMNS))
        return out
    if command == "scan_partition":
        date = args["date"]
        out = best_of(
            system, "scan_partition", lambda: system.scan_partition(date), args.get("repeats", 2)
        )
        out["rows"] = system.count_partition(date)
        return out
    if command == "check":
        started = time.perf_counter()
        result = checksum(system.read_check(CHECK_COLUMNS))
        result["seconds"] = round(time.perf_counter() - started, 3)
        result["table_size"] = metrics.table_size(table)
        return result
    raise ValueError(f"unknown command {command!r}")


def measured_call(system, label: str, fn) -> tuple[dict, dict[str, int]]:
    """`metrics.measure` of `fn`, with what the system's engine ran for it (a job group of
    its own, `label`); and the table's listing from before."""
    group = f"{system.name}-{label}"
    system.step_started(group)
    _, measured, before = metrics.measure(system.table_dir, fn)
    measured.update(system.step_counts(group))
    return measured, before


def best_of(system, label: str, fn, repeats: int) -> dict:
    """The fastest of `repeats` runs, with that run's bytes read and Spark counts: the first
    run also pays one-off costs (Spark's Python workers starting, the page cache), which say
    little about the format."""
    runs = []
    peak = 0
    best: dict = {}
    for n in range(max(1, repeats)):
        measured, _ = measured_call(system, f"{label}-{n}", fn)
        runs.append(measured["seconds"])
        peak = max(peak, measured["peak_rss_bytes"])
        if not best or measured["seconds"] < best["seconds"]:
            best = measured
    counts = {k: v for k, v in best.items() if k == "bytes_read" or k.startswith("spark_")}
    return {"seconds": min(runs), "runs": runs, "peak_rss_bytes": peak, **counts}

"""Benchmark: what telling a write's steps (`hoodie.progress`) costs the write.

A copy-on-write table of `--rows` (1,000,000) rows in `--partitions` (10) partitions is bulk
inserted, then upserted `--repeats` (3) times in each of two ways, taking turns: with no
listener and the `hoodie.progress` logger off (as a Python API user who configured no
logging), and with the logger on at DEBUG (every event formatted into a log handler) plus two
listeners (one keeping the events, one formatting each message, as the dbt adapter's does).
Each upsert writes every key again (all updates, a new ordering value). Reported: each
upsert's seconds and the medians per way, the events a write emits, and what one `emit`
costs with no listener and with those listeners (timeit, microseconds), times the events of a
write: the overhead itself, which the wall times' noise on a shared machine hides.

    .venv/bin/python bench/progress_overhead.py                       # ~5 minutes on 2 cores
    .venv/bin/python bench/progress_overhead.py --rows 100000 --repeats 1     # a smoke run
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
import timeit

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from hoodie import HoodieTable, WriteConfig, progress


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "ERROR")
        .getOrCreate()
    )
    root = tempfile.mkdtemp(prefix="progress-bench-")
    config = WriteConfig.build("orders", "id", "day", "ts")

    def batch(ts: int):
        return spark.range(args.rows).select(
            F.format_string("k%09d", "id").alias("id"),
            (F.col("id") % args.partitions).cast("string").alias("day"),
            F.lit(ts).alias("ts"),
            (F.col("id") * 7 % 1000).cast("double").alias("amount"),
        )

    table = HoodieTable.for_write(os.path.join(root, "orders"), config)
    table.upsert(batch(0))

    kept: list[progress.ProgressEvent] = []
    sink = io.StringIO()
    handler = logging.StreamHandler(sink)
    progress_log = logging.getLogger("hoodie.progress")

    def formatting(event: progress.ProgressEvent) -> None:
        sink.write(f"orders: {event.message()}\n")

    timings: dict[str, list[float]] = {"none": [], "listeners": []}
    for repeat in range(args.repeats):
        for way in ("none", "listeners"):
            kept.clear()
            listening = way == "listeners"
            progress_log.setLevel(logging.DEBUG if listening else logging.WARNING)
            if listening:
                progress_log.addHandler(handler)
            started = time.monotonic()
            if listening:
                with progress.listening(kept.append), progress.listening(formatting):
                    table.upsert(batch(repeat * 2 + (2 if listening else 1)))
            else:
                table.upsert(batch(repeat * 2 + 1))
            timings[way].append(time.monotonic() - started)
            progress_log.removeHandler(handler)
            print(f"upsert {repeat + 1} {way:9s} {timings[way][-1]:6.1f} s", flush=True)
    events = len(kept)

    # One emit, timed: the cost each step of a write pays.
    event = progress.Written("orders", "20261207000000000", 40, 0, 40, args.rows, 0, args.rows,
                             0, 180_000_000, 61.0)  # fmt: skip
    progress_log.setLevel(logging.WARNING)
    bare = min(timeit.repeat(lambda: progress.emit(event), number=10_000, repeat=5)) / 10_000
    progress_log.setLevel(logging.DEBUG)
    progress_log.addHandler(handler)
    with progress.listening(kept.append), progress.listening(formatting):
        heard = min(timeit.repeat(lambda: progress.emit(event), number=10_000, repeat=5)) / 10_000
    progress_log.removeHandler(handler)

    print()
    print(f"rows {args.rows:,}, partitions {args.partitions}, repeats {args.repeats}")
    for way, seconds in timings.items():
        print(f"median upsert, {way:9s}: {statistics.median(seconds):6.1f} s  {seconds}")
    print(f"events per upsert: {events}")
    print(f"emit, no listener, logger off: {bare * 1e6:.2f} us; x{events} = "
          f"{bare * events * 1e3:.3f} ms per write")  # fmt: skip
    print(f"emit, logger at DEBUG + 2 listeners: {heard * 1e6:.2f} us; x{events} = "
          f"{heard * events * 1e3:.3f} ms per write")  # fmt: skip
    spark.stop()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

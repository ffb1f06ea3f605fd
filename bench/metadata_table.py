"""Benchmark: what keeping the metadata table costs a write, and what listing through it saves.

Three writer settings, each on a table of its own: no metadata table
(`hoodie.metadata.enable=false`), its `files` partition only (`true`, the version 8 default),
and `files` with the `column_stats` and `bloom_filters` indexes
(`hoodie.metadata.index.column.stats.enable` / `.bloom.filter.enable=true`).

Small writes (`--parts small`): a `--rows` (100,000) copy-on-write table of version 8 in
`--partitions` (200) partitions, then `--writes` (20) small upserts (`--batch` rows, 100, keys
`--rows / --batch` apart: at the defaults all in one partition, one file rewritten): one
metadata delta commit per write, its own compaction, clean and archival after. Reported: the
median and total seconds of the upserts (each includes its inline services), each upsert's,
and the time to plan a snapshot read (`plan_read`: the listing and the file-system view)
through the metadata table against listing storage, best of `--repeats`.

A large write (`--parts large`): compare.py's FACT workload (`compare/workload.py`: 22 columns,
`--large-partitions` (30) days) of `--large-rows` (1,000,000) rows bulk inserted, then its first
upsert batch (10%: half updates, half inserts) into it, `--large-repeats` (3) times per setting
(and with each index alone), each on a new table, its rows counted after. Reported: the
medians of each write's seconds; of the Spark job of its write tasks (`WriteExecutor
.write_routed`, `.bulk_insert`: with the indexes, each task records its files' column ranges
and bloom filters and hands them to the driver with their write stats); of the driver's
metadata table commit (`update_metadata_table`: the `files` and index records and the delta
commit) and, of that, the index records made (`IndexRecordMaker.written`) and the delta
commit's log files written (`MetadataTableWriter.commit`); and of the metadata table's
services after the write. `--profile FILE`: cProfile of the last upsert with both indexes.

Building the indexes and many files' bloom filters (`--parts build`): a version 8
copy-on-write table of `--build-rows` (300,000) rows bulk inserted into `--build-files` (300)
partitions (a base file each) with the `files` partition only, then a one-row upsert that
turns `column_stats` and `bloom_filters` on, which builds both from every latest slice's
files. Reported: the seconds of building them (`MetadataTableWriter._sync_indexes`), the
upsert's, and the driver's peak Python memory during the upsert (tracemalloc: the records,
the bloom filters read) and its peak resident memory above the start (sampled). Then the
same rows bulk inserted into a new table with both indexes on: the bytes of write stats the
tasks' results bring to the driver (`collect`), the seconds of the write and of its metadata
table commit, and the driver's peak memory likewise.

    .venv/bin/python bench/metadata_table.py                   # ~5 minutes on 2 quiet cores
    .venv/bin/python bench/metadata_table.py --parts small --writes 10     # ~1.5 minutes
    .venv/bin/python bench/metadata_table.py --rows 20000 --writes 5 --partitions 20 \\
        --large-rows 20000 --large-repeats 1                   # smoke
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
INDEXES = {
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
}
# setting -> the writers' options beside the table version
SETTINGS = {
    "no metadata table": {"hoodie.metadata.enable": "false"},
    "files": {"hoodie.metadata.enable": "true"},
    "files + column_stats + bloom_filters": {"hoodie.metadata.enable": "true", **INDEXES},
}
# The large write also with each index alone, to tell their costs apart.
LARGE_SETTINGS = {
    **SETTINGS,
    "files + column_stats": {"hoodie.metadata.enable": "true",
                             "hoodie.metadata.index.column.stats.enable": "true"},
    "files + bloom_filters": {"hoodie.metadata.enable": "true",
                              "hoodie.metadata.index.bloom.filter.enable": "true"},
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="small,large", help="small, large or both")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--large-rows", type=int, default=1_000_000)
    parser.add_argument("--large-partitions", type=int, default=30)
    parser.add_argument("--large-repeats", type=int, default=3)
    parser.add_argument("--build-rows", type=int, default=300_000)
    parser.add_argument("--build-files", type=int, default=300)
    parser.add_argument(
        "--driver-reads",
        type=int,
        default=None,
        help="files whose index records the driver makes (metadata_indexes.DRIVER_READS)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--profile", default=None, help="cProfile the large upsert with the indexes into this file"
    )
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",")}
    spark = bench_session()
    results = {}
    root = tempfile.mkdtemp(prefix="bench-mdt-")
    try:
        if "small" in parts:
            results["small writes"] = small_writes(spark, args, root)
        if "large" in parts:
            results["large write"] = large_write(spark, args, root)
        if "build" in parts:
            results["build"] = build_indexes(spark, args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"args": vars(args), "results": results}, indent=2))


def small_writes(spark, args, root: str) -> dict:
    from hoodie import HoodieTable, WriteConfig
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.read.options import ReadOptions
    from hoodie.read.planner import plan_read

    schema = "id long, dt string, ts long, v string"

    def rows(start: int, count: int, ts: int) -> list[tuple]:
        return [(i, f"p{i % args.partitions:04d}", ts, f"v{i}-{ts}")
                for i in range(start, start + count)]  # fmt: skip

    out = {}
    for setting, options in SETTINGS.items():
        path = os.path.join(root, f"small-{len(out)}")
        config = WriteConfig.build("bench", "id", "dt", "ts", options={
            "hoodie.write.table.version": "8", **options,
        })  # fmt: skip
        table = HoodieTable.for_write(path, config)
        table.bulk_insert(spark.createDataFrame(rows(0, args.rows, 0), schema), config)
        seconds = []
        step = max(args.rows // args.batch, 1)
        for write in range(1, args.writes + 1):
            batch = [(i * step + write) % args.rows for i in range(args.batch)]
            frame = spark.createDataFrame(
                [(k, f"p{k % args.partitions:04d}", write, f"u{write}") for k in batch],
                schema,
            )
            started = time.perf_counter()
            table.upsert(frame, config)
            seconds.append(time.perf_counter() - started)
        meta = HoodieTableMetaClient.open(path)
        plans = {}
        for listing in ("true", "false"):
            best = float("inf")
            for _ in range(args.repeats):
                started = time.perf_counter()
                plan_read(meta, ReadOptions.parse({"hoodie.metadata.enable": listing}))
                best = min(best, time.perf_counter() - started)
            plans["metadata table" if listing == "true" else "storage"] = round(best, 3)
        out[setting] = {
            "upsert median s": round(statistics.median(seconds), 3),
            "upserts total s": round(sum(seconds), 2),
            "upserts s": [round(x, 2) for x in seconds],
            "plan_read best s": plans["storage"] if setting == "no metadata table" else plans,
        }
    return out


# What the large write is timed by: (name, module, owner, attribute). The write job is the
# Spark job of the write tasks (the upsert's tagging included), which record each file's
# column ranges and bloom filter for the indexes.
TIMED = [
    ("write job", "hoodie.write.executor", "WriteExecutor", "write_routed"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "bulk_insert"),
    ("metadata table commit", "hoodie.transaction.transaction", None, "update_metadata_table"),
    ("index records", "hoodie.transaction.metadata_indexes", "IndexRecordMaker", "written"),
    ("delta commit written", "hoodie.transaction.metadata_writer", "MetadataTableWriter",
     "commit"),
    ("metadata table services", "hoodie.client.table_service_runner", "TableServiceRunner",
     "metadata_table_services"),
]  # fmt: skip


def bench_session():
    """The benchmarks' session (also bench/record_index.py's): local[2], 4 shuffle partitions,
    4 GB of driver memory, UTC, no UI."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextlib.contextmanager
def timers(timed=TIMED):
    """Seconds spent in each of `timed` ((name, module, owner, attribute); this benchmark's
    `TIMED` by default) during the block."""
    import importlib

    seconds = {name: 0.0 for name, *_ in timed}
    patched = []
    for name, module, owner, attribute in timed:
        target = importlib.import_module(module)
        if owner is not None:
            target = getattr(target, owner)
        original = target.__dict__[attribute]

        def timed(*args, _fn=original, _name=name, **kwargs):
            started = time.perf_counter()
            try:
                return _fn(*args, **kwargs)
            finally:
                seconds[_name] += time.perf_counter() - started

        setattr(target, attribute, functools.wraps(original)(timed))
        patched.append((target, attribute, original))
    try:
        yield seconds
    finally:
        for target, attribute, original in patched:
            setattr(target, attribute, original)


def large_write(spark, args, root: str) -> dict:
    sys.path.insert(0, str(HERE))
    from compare.workload import KEY, PARTITION_COLUMN, PRECOMBINE, generate

    from hoodie import HoodieTable, WriteConfig

    data = Path(root) / "data"
    workload = generate(args.large_rows, 1, args.seed, data, args.large_partitions)
    load, upsert = workload.steps[0], workload.steps[1]
    runs: dict[str, list[dict]] = {setting: [] for setting in LARGE_SETTINGS}
    for repeat in range(args.large_repeats):
        for number, (setting, options) in enumerate(LARGE_SETTINGS.items()):
            path = os.path.join(root, f"large-{repeat}-{number}")
            config = WriteConfig.build("bench_fact", KEY, PARTITION_COLUMN, PRECOMBINE, options={
                "hoodie.write.table.version": "8", **options,
            })  # fmt: skip
            table = HoodieTable.for_write(path, config)
            run = {}
            for step, write in ((load, table.bulk_insert), (upsert, table.upsert)):
                frame = spark.read.parquet(*step.files)
                profiler = None
                if (args.profile and step is upsert and repeat == args.large_repeats - 1
                        and setting == list(SETTINGS)[-1]):  # fmt: skip
                    import cProfile

                    profiler = cProfile.Profile()
                with timers() as seconds:
                    started = time.perf_counter()
                    if profiler is not None:
                        profiler.enable()
                    result = write(frame, config)
                    if profiler is not None:
                        profiler.disable()
                        profiler.dump_stats(args.profile)
                    total = time.perf_counter() - started
                run[step.name] = {"write s": total, **seconds,
                                  "files": result.files_written}  # fmt: skip
            count = HoodieTable.open(path).read(spark).count()  # not timed
            want = load.rows + upsert.inserts
            assert count == want, f"{setting}: {count} rows after the upsert, not {want}"
            runs[setting].append(run)
            print(f"  {setting}, run {repeat + 1}: " + "; ".join(
                f"{name} {r['write s']:.1f}s (metadata table commit "
                f"{r['metadata table commit']:.2f}s)" for name, r in run.items()
            ), file=sys.stderr, flush=True)  # fmt: skip
            shutil.rmtree(path, ignore_errors=True)
    out = {"rows": args.large_rows, "partitions": args.large_partitions,
           "load rows": load.rows, "upsert rows": upsert.rows}  # fmt: skip
    for setting, done in runs.items():
        out[setting] = {
            step: {key: round(statistics.median(r[step][key] for r in done), 3)
                   for key in done[0][step]}
            for step in (load.name, upsert.name)
        }  # fmt: skip
    return out


@contextlib.contextmanager
def driver_memory():
    """The driver's peak memory during the block: Python allocations (tracemalloc) and
    resident memory above the start (sampled every 10 ms), in MB."""
    import threading
    import tracemalloc

    import psutil

    process = psutil.Process()
    start = process.memory_info().rss
    peak = {"rss": start}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            peak["rss"] = max(peak["rss"], process.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    out: dict[str, float] = {}
    tracemalloc.start()
    sampler.start()
    try:
        yield out
    finally:
        done.set()
        sampler.join()
        _, traced = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["driver peak python MB"] = round(traced / 1e6, 1)
        out["driver peak RSS above start MB"] = round((peak["rss"] - start) / 1e6, 1)


def build_indexes(spark, args, root: str) -> dict:
    """Building column_stats + bloom_filters on a table of `--build-files` base files, and a
    write of as many files with both indexes on (see the module docstring)."""
    from hoodie import HoodieTable, WriteConfig
    from hoodie.transaction import metadata_indexes
    from hoodie.write import executor

    if args.driver_reads is not None:
        metadata_indexes.DRIVER_READS = args.driver_reads
    schema = "id long, dt string, ts long, v string"
    files = args.build_files
    frame = spark.createDataFrame(
        [(i, f"p{i % files:04d}", 0, f"v{i}") for i in range(args.build_rows)], schema
    ).cache()
    frame.count()

    def config(**options: str) -> WriteConfig:
        return WriteConfig.build("bench_build", "id", "dt", "ts", options={
            "hoodie.write.table.version": "8", "hoodie.metadata.enable": "true", **options,
        })  # fmt: skip

    out: dict = {"rows": args.build_rows, "base files": files,
                 "driver reads at most": metadata_indexes.DRIVER_READS}  # fmt: skip
    path = os.path.join(root, "build")
    plain = config()
    HoodieTable.for_write(path, plain).bulk_insert(frame, plain)
    indexed = config(**INDEXES)
    one = spark.createDataFrame([(0, "p0000", 1, "u")], schema)
    timed = [("build", "hoodie.transaction.metadata_writer", "MetadataTableWriter",
              "_sync_indexes")]  # fmt: skip
    with timers(timed) as seconds, driver_memory() as memory:
        started = time.perf_counter()
        HoodieTable.for_write(path, indexed).upsert(one, indexed)
        total = time.perf_counter() - started
    out["building"] = {"upsert s": round(total, 2), "build s": round(seconds["build"], 2),
                       **memory}  # fmt: skip

    collected = {"bytes": 0, "stats": 0}
    original = executor._stats

    def counted(rows):
        collected["bytes"] += sum(len(r["stat"]) for r in rows)
        collected["stats"] += len(rows)
        return original(rows)

    executor._stats = counted
    try:
        path = os.path.join(root, "write")
        commit = [("commit", "hoodie.transaction.transaction", None, "update_metadata_table")]
        with timers(commit) as seconds, driver_memory() as memory:
            started = time.perf_counter()
            HoodieTable.for_write(path, indexed).bulk_insert(frame, indexed)
            total = time.perf_counter() - started
    finally:
        executor._stats = original
    out["write with both indexes"] = {
        "write s": round(total, 2), "metadata table commit s": round(seconds["commit"], 2),
        "write stats": collected["stats"],
        "write stats MB collected": round(collected["bytes"] / 1e6, 2), **memory,
    }  # fmt: skip
    frame.unpersist()
    return out


if __name__ == "__main__":
    main()

"""Benchmark: a merge-on-read upsert against the same upsert on copy-on-write.

The workload of the product issue: on a `--rows` (1,000,000), `--partitions` (10) table, one
upsert that updates `--update-fraction` (1%) of the rows, spread over every partition. Report
bytes and seconds for MOR and COW. Targets: MOR writes at least 10x fewer bytes and is at least
3x faster; a snapshot read after 5 delta commits takes at most 1.5x the read-optimized read.

Steps:
1. two tables, one COPY_ON_WRITE and one MERGE_ON_READ (`hoodie.compact.inline=false`, so
   no compaction runs inside a timed write), each built by one upsert of the same rows into
   an empty table (upsert_cow.py's columns and values; timed and reported, not a target);
2. warm-up (`--no-warmup` skips it): a throwaway 2,000-row table of each type gets a load and an
   update, so the first timed upsert does not pay one-off costs such as the first index
   key scan of the session;
3. the measured batch: the first `updates` ids of upsert_cow.py's permutation, at version 1
   (ts + 1 and changed values), one DataFrame and ONE `table.upsert`, timed with
   `time.perf_counter` around that call, first on the COW table, then on the MOR table.
   Bytes and files come from the commit's write stats (`result.bytes_written`). Around each
   call the script also times the write client's three Spark stages (input, index tagging,
   file-group write; or, merge-on-read with the BUCKET index, its one job) and the CPU used
   by this process tree and by everyone else;
4. `--delta-commits` - 1 (4) more update batches on the MOR table, each the next `updates`
   ids of the permutation (so no id is updated twice, and every batch touches every
   partition) at version batch + 1: the file groups then hold 5 log files each;
5. reads of the MOR table, each the best of `--repeats` after one warm-up, every column read
   (noop sink, as in read_snapshot.py): snapshot (base files merged with the logs) and
   read-optimized (base files only);
6. verify (not timed) and write the numbers as JSON. Exit 1 when a check fails.

    .venv/bin/python bench/upsert_mor.py                 # 1,000,000 rows (~10 min)
    .venv/bin/python bench/upsert_mor.py --rows 20000 --out /tmp/upsert_mor_smoke.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from read_snapshot import (  # noqa: E402
    CpuWindow,
    batch_rows,
    loadavg,
    measure,
    noop,
    wait_for_quiet,
)
from upsert_cow import (  # noqa: E402
    BASE_TS,
    build_spark,
    initial_rows,
    memory_total_bytes,
    repo_commit,
    write_json,
)

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "upsert_mor.json"
TARGET_BYTES_RATIO = 10.0  # cow_bytes / mor_bytes, at least
TARGET_SPEED_RATIO = 3.0  # cow_seconds / mor_seconds, at least
TARGET_READ_RATIO = 1.5  # snapshot / read_optimized, at most
QUERY_TYPE = "hoodie.datasource.query.type"
WARMUP_ROWS = 2000
# The write client's steps that run Spark jobs (wrapped with timers while the script runs; the
# first action of each triggers the lazy work before it).
STAGES = {
    "BatchPreparer.summarize": "input: generate the batch, fill the input cache",
    "SimpleIndex.tag_and_place": "tagging (SIMPLE index): key scan + join, fill the tagged cache",
    "BucketIndex.tag_and_place": "tagging (BUCKET index): bucket hash + lookup of (partition, "
    "bucket)",
    "WriteExecutor.write_file_groups": "write: shuffle to file groups, merge/append handles",
    "WriteExecutor.write_buckets": "BUCKET index, merge-on-read: input, tagging and write in "
    "one Spark job",
    "SimpleIndex.plan_routing": "SIMPLE index: routing units from the listing (and footers)",
    "WriteExecutor.write_routed": "SIMPLE index: input, tagging and write in one Spark job",
}


def _stage_owners() -> dict:
    """The classes whose methods the stage timers wrap, by name."""
    from hoodie.client.table_service_runner import TableServiceRunner
    from hoodie.index.bucket import BucketIndex
    from hoodie.index.simple import SimpleIndex
    from hoodie.write.executor import WriteExecutor
    from hoodie.write.prepare import BatchPreparer

    owners = (BatchPreparer, SimpleIndex, BucketIndex, WriteExecutor, TableServiceRunner)
    return {cls.__name__: cls for cls in owners}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the tables")
    parser.add_argument("--partitions", type=int, default=10, help="table partitions (p00, ...)")
    parser.add_argument(
        "--update-fraction",
        type=float,
        default=0.01,
        help="share of the rows each update batch updates",
    )
    parser.add_argument(
        "--delta-commits",
        type=int,
        default=5,
        help="update batches on the MOR table before the reads (the measured one included)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per read")
    parser.add_argument("--no-warmup", action="store_true", help="skip the warm-up tables")
    parser.add_argument(
        "--load-threshold",
        type=float,
        default=1.5,
        help="before the measured batch, wait for a 1-minute load average below this ...",
    )
    parser.add_argument(
        "--max-wait-seconds",
        type=float,
        default=0,
        help="... for at most this long (default 0: do not wait, only record the load)",
    )
    parser.add_argument("--poll-seconds", type=float, default=30.0)
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="JSON results file")
    parser.add_argument(
        "--workdir",
        default=None,
        help="where the tables go (default: a temporary folder, removed after)",
    )
    parser.add_argument(
        "--index",
        choices=["SIMPLE", "BUCKET"],
        default="SIMPLE",
        help="hoodie.index.type of both tables",
    )
    parser.add_argument(
        "--buckets",
        type=int,
        default=1,
        help="BUCKET index: buckets per partition (1 = the SIMPLE run's one file per partition)",
    )
    parser.add_argument("--master", default="local[2]", help="Spark master")
    parser.add_argument("--keep", action="store_true", help="keep the tables after the run")
    args = parser.parse_args(argv)
    if args.rows <= 0 or args.partitions <= 0 or args.repeats <= 0 or args.delta_commits <= 0:
        parser.error("--rows, --partitions, --repeats and --delta-commits must be positive")
    if not 0 < args.update_fraction <= 1:
        parser.error("--update-fraction must be in (0, 1]")
    if args.update_fraction * args.delta_commits > 1:
        parser.error("--update-fraction x --delta-commits must not exceed 1 (ids are distinct)")
    return args


# -- timing the write client's stages ------------------------------------------------------------
@contextlib.contextmanager
def stage_timer(stages=STAGES):
    """Seconds spent in each of `stages` ("Class.method" of the write's floors) during the
    block. bench/compare/ times more steps (compaction, cleaning) with this same timer.
    """
    owners = _stage_owners()
    seconds = {name: 0.0 for name in stages}
    targets = {name: owners[name.split(".")[0]] for name in stages}
    originals = {name: targets[name].__dict__[name.split(".")[1]] for name in stages}

    def timed(name, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                seconds[name] += time.perf_counter() - t0

        return wrapper

    for name, fn in originals.items():
        setattr(targets[name], name.split(".")[1], timed(name, fn))
    try:
        yield seconds
    finally:
        for name, fn in originals.items():
            setattr(targets[name], name.split(".")[1], fn)


def timed_upsert(table, df, cfg, label: str) -> dict:
    """ONE upsert, perf_counter around the call; returns the result and what was measured."""
    load_before = loadavg()
    window = CpuWindow()
    with stage_timer() as stages:
        t0 = time.perf_counter()
        result = table.upsert(df, cfg)
        seconds = time.perf_counter() - t0
    cpu = window.stop()
    stages = {name: round(s, 3) for name, s in stages.items()}
    stages["driver_and_rest"] = round(seconds - sum(stages.values()), 3)
    print(
        f"  {label}: {result.summary()}; {seconds:.2f}s, {result.bytes_written:,} bytes "
        f"(input {stages['BatchPreparer.summarize']:.1f}s, tagging "
        f"{stages['SimpleIndex.tag_and_place'] + stages['BucketIndex.tag_and_place']:.1f}s, "
        f"write {stages['WriteExecutor.write_file_groups']:.1f}s, one-job bucket write "
        f"{stages['WriteExecutor.write_buckets']:.1f}s"
        + (f"; others' CPU {cpu['others_cpu_seconds']:.1f}s" if cpu else "")
        + ")",
        flush=True,
    )
    paths = [s.path or "" for s in result.metadata.write_stats()]
    return {
        "result": result,
        "summary": {
            "instant": result.instant,
            "seconds": round(seconds, 3),
            "bytes_written": result.bytes_written,
            "files_written": result.files_written,
            "log_files_written": sum(".log." in p for p in paths),
            "base_files_written": sum(p.endswith(".parquet") for p in paths),
            "updates": result.num_updates,
            "inserts": result.num_inserts,
            "compactions": len(result.compactions),
            "stages_seconds": stages,
            "load_average_before": load_before,
            "load_average_after": loadavg(),
            "cpu": cpu,
        },
    }


# -- checks --------------------------------------------------------------------------------------
def table_stats(spark, path: Path, query_type: str = "snapshot") -> dict:
    """Rows, distinct ids, updated rows and the sum of versions, in one pass over every row."""
    from pyspark.sql import functions as F

    df = spark.read.format("hoodie").option(QUERY_TYPE, query_type).load(str(path))
    version = F.col("ts") - F.lit(BASE_TS) - F.col("id")
    row = df.agg(
        F.count(F.lit(1)).alias("rows"),
        F.countDistinct("id").alias("distinct_ids"),
        F.sum((version != 0).cast("long")).alias("updated"),
        F.sum(version).alias("version_sum"),
    ).first()
    return {k: int(row[k] or 0) for k in ("rows", "distinct_ids", "updated", "version_sum")}


def expect(problems: list, label: str, stats: dict, rows: int, updated: int, version_sum: int):
    wanted = {"rows": rows, "distinct_ids": rows, "updated": updated, "version_sum": version_sum}
    for key, value in wanted.items():
        if stats[key] != value:
            problems.append(f"{label}: {key} is {stats[key]}, expected {value}")


def warm_up(spark, workdir: Path, partitions: int, index: str, buckets: int) -> float:
    """A load and an update of a tiny table of each type (one-off costs of the session)."""
    from hoodie import HoodieTable
    from hoodie.properties import COPY_ON_WRITE, MERGE_ON_READ

    t0 = time.perf_counter()
    for table_type in (COPY_ON_WRITE, MERGE_ON_READ):
        cfg = write_config(table_type, index, buckets)
        path = workdir / f"warmup_{table_type.lower()}"
        table = HoodieTable.for_write(str(path), cfg)
        table.upsert(initial_rows(spark, WARMUP_ROWS, partitions), cfg)
        table.upsert(batch_rows(spark, WARMUP_ROWS, partitions, 0, WARMUP_ROWS // 100, 0), cfg)
        table_stats(spark, path)
        shutil.rmtree(path, ignore_errors=True)
    return time.perf_counter() - t0


def write_config(table_type: str, index: str = "SIMPLE", buckets: int = 1):
    from hoodie import WriteConfig
    from hoodie.properties import MERGE_ON_READ

    options = {"hoodie.compact.inline": "false"} if table_type == MERGE_ON_READ else {}
    options["hoodie.index.type"] = index
    if index == "BUCKET":
        options["hoodie.bucket.index.num.buckets"] = str(buckets)
    return WriteConfig.build(
        "bench",
        record_key="id",
        partition_path="part",
        precombine_field="ts",
        table_type=table_type,
        options=options,
    )


def ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 3) if denominator else None


# -- run -----------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict:
    import pyspark

    from hoodie import HoodieTable
    from hoodie.properties import COPY_ON_WRITE, MERGE_ON_READ
    from hoodie.read.datasource import register

    rows, partitions = args.rows, args.partitions
    updates = int(round(rows * args.update_fraction))
    deltas = args.delta_commits

    owned = args.workdir is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="hoodie-bench-")).resolve()
    paths = {t: workdir / f"upsert_mor_{t.lower()}" for t in (COPY_ON_WRITE, MERGE_ON_READ)}
    for path in paths.values():
        if path.exists():
            shutil.rmtree(path)  # a previous run's table: start from an empty one
    print(f"tables under {workdir}", flush=True)

    load_before = loadavg()
    started = time.perf_counter()
    spark = build_spark(args.master, "hoodie-bench-upsert-mor")
    register(spark)
    print(f"spark {spark.version}, load average {load_before}", flush=True)
    try:
        cfgs = {t: write_config(t, args.index, args.buckets) for t in paths}
        tables = {t: HoodieTable.for_write(str(p), cfgs[t]) for t, p in paths.items()}

        # 1. the initial loads
        initial = {}
        for t in paths:
            print(f"initial load ({t}): {rows:,} rows into {partitions} partitions ...",
                  flush=True)  # fmt: skip
            measured = timed_upsert(
                tables[t], initial_rows(spark, rows, partitions), cfgs[t], "initial load"
            )
            initial[t] = measured["summary"]

        # 2. warm-up
        warmup_seconds = None
        if not args.no_warmup:
            warmup_seconds = warm_up(spark, workdir, partitions, args.index, args.buckets)
            print(f"warm-up tables: {warmup_seconds:.1f}s", flush=True)

        # 3. the measured batch, once per table
        wait = wait_for_quiet(args.load_threshold, args.poll_seconds, args.max_wait_seconds)
        print(f"measured batch: {updates:,} updates ({args.update_fraction:.1%}) ...", flush=True)
        measured = {}
        results = {}
        for t in (COPY_ON_WRITE, MERGE_ON_READ):
            batch = batch_rows(spark, rows, partitions, 0, updates, 0)  # lazy, not timed
            out = timed_upsert(tables[t], batch, cfgs[t], t)
            measured[t], results[t] = out["summary"], out["result"]

        problems: list[str] = []
        checks = {}
        for t in paths:
            checks[f"{t}_after_measured_batch"] = stats = table_stats(spark, paths[t])
            expect(problems, f"{t} after the measured batch", stats, rows, updates, updates)
            summary = measured[t]
            if (summary["updates"], summary["inserts"]) != (updates, 0):
                problems.append(
                    f"{t} measured batch reports {summary['updates']} updates / "
                    f"{summary['inserts']} inserts, expected {updates} / 0"
                )
        mor, cow = measured[MERGE_ON_READ], measured[COPY_ON_WRITE]
        if mor["base_files_written"] or mor["compactions"]:
            problems.append("the MOR batch wrote base files or compacted: it was not a delta")
        if cow["log_files_written"]:
            problems.append("the COW batch wrote log files")

        # 4. more delta commits on the MOR table
        more = []
        for batch_index in range(1, deltas):
            df = batch_rows(spark, rows, partitions, batch_index, updates, 0)
            out = timed_upsert(
                tables[MERGE_ON_READ], df, cfgs[MERGE_ON_READ], f"delta {batch_index + 1}/{deltas}"
            )
            more.append(out["summary"])
            if out["summary"]["base_files_written"] or out["summary"]["compactions"]:
                problems.append(f"delta commit {batch_index + 1} wrote base files or compacted")
        view = tables[MERGE_ON_READ].file_system_view()
        slices = [g.latest_slice for g in view.file_groups() if g.latest_slice is not None]
        log_counts = sorted({len(s.log_files) for s in slices})
        log_bytes = sum(lf.size for s in slices for lf in s.log_files)
        base_bytes = sum(s.base_file.size for s in slices if s.base_file is not None)
        print(
            f"MOR table: {len(slices)} file groups, log files per group {log_counts}, "
            f"{base_bytes:,} base bytes + {log_bytes:,} log bytes",
            flush=True,
        )

        # 5. reads of the MOR table
        print(f"reads of the MOR table (best of {args.repeats} after one warm-up):", flush=True)

        mor_path = str(paths[MERGE_ON_READ])

        def reader(query_type: str):
            return spark.read.format("hoodie").option(QUERY_TYPE, query_type).load(mor_path)

        reads = {
            "snapshot": measure("snapshot", lambda: noop(reader("snapshot")), args.repeats),
            "read_optimized": measure(
                "read_optimized", lambda: noop(reader("read_optimized")), args.repeats
            ),
        }

        # 6. verification of the final MOR table
        total_updated = deltas * updates
        version_sum = updates * deltas * (deltas + 1) // 2
        checks["mor_snapshot_final"] = stats = table_stats(spark, paths[MERGE_ON_READ])
        expect(problems, "MOR snapshot after the deltas", stats, rows, total_updated, version_sum)
        checks["mor_read_optimized_final"] = stats = table_stats(
            spark, paths[MERGE_ON_READ], "read_optimized"
        )
        # The base files are the initial load's: read-optimized sees no update at all.
        expect(problems, "MOR read-optimized after the deltas", stats, rows, 0, 0)
        checks["mor_log_files_per_file_group"] = log_counts
        if log_counts != [deltas]:
            problems.append(f"MOR file groups hold {log_counts} log files, expected {deltas}")
        print("verify: " + ("OK" if not problems else "FAILED: " + "; ".join(problems)),
              flush=True)  # fmt: skip

        bytes_ratio = ratio(cow["bytes_written"], mor["bytes_written"])
        speed_ratio = ratio(cow["seconds"], mor["seconds"])
        read_ratio = ratio(
            reads["snapshot"]["best_seconds"], reads["read_optimized"]["best_seconds"]
        )
        targets = {
            "cow_bytes_over_mor_bytes": bytes_ratio,
            "cow_bytes_over_mor_bytes_target": TARGET_BYTES_RATIO,
            "cow_bytes_over_mor_bytes_met": bytes_ratio is not None
            and bytes_ratio >= TARGET_BYTES_RATIO,
            "cow_seconds_over_mor_seconds": speed_ratio,
            "cow_seconds_over_mor_seconds_target": TARGET_SPEED_RATIO,
            "cow_seconds_over_mor_seconds_met": speed_ratio is not None
            and speed_ratio >= TARGET_SPEED_RATIO,
            "snapshot_over_read_optimized": read_ratio,
            "snapshot_over_read_optimized_target": TARGET_READ_RATIO,
            "snapshot_over_read_optimized_met": read_ratio is not None
            and read_ratio <= TARGET_READ_RATIO,
        }
        mem = memory_total_bytes()
        return {
            "benchmark": "upsert_mor",
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "rows": rows,
            "partitions": partitions,
            "updates_per_batch": updates,
            "update_fraction": args.update_fraction,
            "index": args.index,
            "buckets_per_partition": args.buckets if args.index == "BUCKET" else None,
            "delta_commits": deltas,
            "ratios": targets,
            "measured_batch": {"cow": cow, "mor": mor},
            "initial_load": {"cow": initial[COPY_ON_WRITE], "mor": initial[MERGE_ON_READ]},
            "mor_more_delta_commits": more,
            "mor_table_before_reads": {
                "file_groups": len(slices),
                "log_files_per_file_group": log_counts,
                "base_bytes": base_bytes,
                "log_bytes": log_bytes,
            },
            "reads": reads,
            "warmup_seconds": round(warmup_seconds, 3) if warmup_seconds is not None else None,
            "wait_for_quiet": wait,
            "verified": not problems,
            "problems": problems,
            "checks": checks,
            "total_seconds": round(time.perf_counter() - started, 1),
            "machine": {
                "cores": os.cpu_count(),
                "memory_bytes": mem,
                "memory_gib": round(mem / 2**30, 1) if mem else None,
                "platform": platform.platform(),
                "python": platform.python_version(),
                # 1/5/15-minute load averages (as `uptime` shows): above `cores` means other
                # work competed; the `cpu` entries say how much, per measurement
                "load_average_before": load_before,
                "load_average_after": loadavg(),
            },
            "spark_master": args.master,
            "pyspark_version": pyspark.__version__,
            "commit": repo_commit(),
        }
    finally:
        spark.stop()
        if owned and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            print(f"tables kept under {workdir}", flush=True)


def print_summary(results: dict) -> None:
    r = results["ratios"]
    cow, mor = results["measured_batch"]["cow"], results["measured_batch"]["mor"]
    reads = results["reads"]

    def mark(met: bool) -> str:
        return "met" if met else "MISSED"

    print(f"\n{results['rows']:,} rows, {results['updates_per_batch']:,} updated per batch:")
    print(f"  COW: {cow['seconds']:8.2f}s  {cow['bytes_written']:>13,} bytes  "
          f"{cow['files_written']} files")  # fmt: skip
    print(f"  MOR: {mor['seconds']:8.2f}s  {mor['bytes_written']:>13,} bytes  "
          f"{mor['files_written']} files")  # fmt: skip
    print(
        f"  bytes COW/MOR {r['cow_bytes_over_mor_bytes']}x (target >= {TARGET_BYTES_RATIO:g}x: "
        f"{mark(r['cow_bytes_over_mor_bytes_met'])}); seconds COW/MOR "
        f"{r['cow_seconds_over_mor_seconds']}x (target >= {TARGET_SPEED_RATIO:g}x: "
        f"{mark(r['cow_seconds_over_mor_seconds_met'])})"
    )
    print(
        f"  reads after {results['delta_commits']} delta commits: snapshot "
        f"{reads['snapshot']['best_seconds']:.2f}s, read-optimized "
        f"{reads['read_optimized']['best_seconds']:.2f}s, ratio "
        f"{r['snapshot_over_read_optimized']} (target <= {TARGET_READ_RATIO:g}: "
        f"{mark(r['snapshot_over_read_optimized_met'])})"
    )
    print("  verified: " + ("yes" if results["verified"] else "NO"))


def main(argv=None) -> int:
    args = parse_args(argv)
    results = run(args)
    out = Path(args.out)
    write_json(out, results)
    print(json.dumps(results, indent=2))
    print_summary(results)
    print(f"results written to {out}")
    return 0 if results["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

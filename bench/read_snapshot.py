"""Benchmark: snapshot reads of a copy-on-write Hudi table through the `hoodie` data source.

Steps:
1. build a table of `--rows` rows over `--partitions` partitions with one upsert into an empty
   table, then `--batches` upserts, each updating `--update-fraction` of the initial ids (spread
   evenly over every partition, distinct ids across batches) and inserting `--insert-fraction`
   new ids (the build is timed and reported, not measured);
2. wait until the machine is quiet (1-minute load average below `--load-threshold`, polled
   every `--poll-seconds`, at most `--max-wait-seconds`);
3. measure, each best of `--repeats` after one warm-up run, a noop write (every column read)
   of:
   - `hoodie_full`: `spark.read.format("hoodie").load(path)`;
   - `parquet_full`: `spark.read.parquet(*latest_base_files)`, exactly the files the snapshot
     is made of (the physical bound: Spark's native vectorized reader in the JVM);
   - `hoodie_one_partition`: one partition (`part = 'p03'`) with partition pruning
     (`spark.sql.python.filterPushdown.enabled=true`, option `hoodie.read.filter.pushdown`);
   - `hoodie_one_partition_no_pruning`: the same query with the pruning option off;
   and, to see where the time goes (`--no-breakdown` skips them):
   - `parquet_one_partition`: `spark.read.parquet` of that partition's latest base files only;
   - `hoodie_no_matching_partition`: a pruned query of a partition that does not exist (no
     split to read: the fixed cost of a query through the hoodie source);
   - `pyarrow_read_table`: pyarrow alone, `pq.read_table` of every latest base file in this
     process (no Spark);
   - `slice_reader_in_driver`: the data source's own `HoodieReader.read` of every split in
     this process (what the Spark tasks run, minus Spark);
   - `mapinarrow_read_only`: the same `read_slice` calls inside Spark's Python workers
     (`mapInArrow`, one task per task of the source, with its file slices) sending no rows back;
   - `mapinarrow_full`: the same, sending every row to the JVM as Arrow batches;
4. verify (row counts, updated rows and versions, no duplicate keys) and write JSON.

All data is a function of the id (see upsert_cow.py), so every run builds the same table.

    .venv/bin/python bench/read_snapshot.py    # 1,000,000 rows: ~6 min + waiting for quiet
    .venv/bin/python bench/read_snapshot.py --rows 20000 --max-wait-seconds 0 \
        --out /tmp/read_smoke.json             # quick smoke run (~2 min)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from upsert_cow import (  # noqa: E402
    BASE_TS,
    build_spark,
    memory_total_bytes,
    repo_commit,
    rows_for,
    update_stride,
    write_json,
)

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "read_snapshot.json"
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
PUSHDOWN_OPTION = "hoodie.read.filter.pushdown"
TARGET_FULL_RATIO = 1.3  # hoodie_full / parquet_full
TARGET_PARTITION_RATIO = 0.2  # hoodie_one_partition / hoodie_full


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the initial load")
    parser.add_argument("--partitions", type=int, default=10, help="table partitions (p00, ...)")
    parser.add_argument("--batches", type=int, default=5, help="upserts after the initial load")
    parser.add_argument(
        "--update-fraction",
        type=float,
        default=0.02,
        help="share of the initial ids each upsert updates",
    )
    parser.add_argument(
        "--insert-fraction",
        type=float,
        default=0.01,
        help="new rows per upsert, as a share of --rows",
    )
    parser.add_argument(
        "--query-partition", type=int, default=3, help="partition of the one-partition query"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per measurement")
    parser.add_argument(
        "--no-breakdown",
        action="store_true",
        help="skip the pyarrow / mapInArrow measurements that explain the numbers",
    )
    parser.add_argument(
        "--load-threshold",
        type=float,
        default=1.5,
        help="measure once the 1-minute load average is below this",
    )
    parser.add_argument("--poll-seconds", type=float, default=30.0)
    parser.add_argument(
        "--max-wait-seconds",
        type=float,
        default=25 * 60,
        help="give up waiting for a quiet machine after this long (then measure anyway)",
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="JSON results file")
    parser.add_argument(
        "--workdir",
        default=None,
        help="where the table goes (default: a temporary folder, removed after)",
    )
    parser.add_argument("--master", default="local[2]", help="Spark master")
    parser.add_argument("--keep", action="store_true", help="keep the table after the run")
    args = parser.parse_args(argv)
    if args.rows <= 0 or args.partitions <= 0 or args.repeats <= 0 or args.batches < 0:
        parser.error("--rows, --partitions and --repeats must be positive, --batches >= 0")
    if not 0 <= args.query_partition < args.partitions:
        parser.error("--query-partition must be one of the table's partitions")
    for name in ("update_fraction", "insert_fraction"):
        if not 0 <= getattr(args, name) <= 1:
            parser.error(f"--{name.replace('_', '-')} must be between 0 and 1")
    if args.update_fraction * args.batches > 1:
        parser.error("--update-fraction x --batches must not exceed 1 (ids are distinct)")
    return args


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def partition_name(index: int, partitions: int) -> str:
    width = max(2, len(str(partitions - 1)))
    return "p" + str(index).rjust(width, "0")


def ids_in_partition(total: int, index: int, partitions: int) -> int:
    """Ids 0 .. total-1 are all in the table; part = id % partitions."""
    return (total - index + partitions - 1) // partitions if total > index else 0


# -- data ----------------------------------------------------------------------------------------
def batch_rows(spark, rows, partitions, batch, updates, inserts):
    """Upsert `batch` (0-based): `updates` distinct initial ids at version batch + 1 (the k-th
    update of the whole run is id (k * stride) mod rows, a permutation, so batches never update
    the same id and every batch hits every partition), plus `inserts` new ids at version 0."""
    from pyspark.sql import functions as F

    stride = update_stride(rows)
    first = batch * updates
    updated_ids = spark.range(first, first + updates).select(
        F.pmod(F.col("id") * F.lit(stride), F.lit(rows)).alias("id")
    )
    updated = rows_for(updated_ids, partitions, version=batch + 1)
    start = rows + batch * inserts
    inserted = rows_for(spark.range(start, start + inserts), partitions, version=0)
    return updated.unionByName(inserted)


def build_table(spark, path: Path, args, updates: int, inserts: int) -> dict:
    from hoodie import HoodieTable, WriteConfig

    cfg = WriteConfig.build("bench", record_key="id", partition_path="part", precombine_field="ts")
    table = HoodieTable.for_write(str(path), cfg)
    steps = []
    print(f"initial load: {args.rows:,} rows into {args.partitions} partitions ...", flush=True)
    t0 = time.perf_counter()
    result = table.upsert(rows_for(spark.range(0, args.rows), args.partitions, 0), cfg)
    seconds = time.perf_counter() - t0
    print(f"  {result.summary()}; {seconds:.1f}s", flush=True)
    steps.append(_step("initial", result, seconds))
    for batch in range(args.batches):
        df = batch_rows(spark, args.rows, args.partitions, batch, updates, inserts)
        t0 = time.perf_counter()
        result = table.upsert(df, cfg)
        seconds = time.perf_counter() - t0
        print(f"  upsert {batch + 1}/{args.batches}: {result.summary()}; {seconds:.1f}s",
              flush=True)  # fmt: skip
        steps.append(_step(f"upsert_{batch + 1}", result, seconds))
    return {"steps": steps, "seconds": round(sum(s["seconds"] for s in steps), 3)}


def _step(name, result, seconds) -> dict:
    return {
        "step": name,
        "instant": result.instant,
        "inserts": result.num_inserts,
        "updates": result.num_updates,
        "files_written": result.files_written,
        "bytes_written": result.bytes_written,
        "seconds": round(seconds, 3),
    }


# -- waiting for a quiet machine -----------------------------------------------------------------
def wait_for_quiet(threshold: float, poll: float, max_wait: float) -> dict:
    started = time.monotonic()
    samples = []
    while True:
        load = loadavg()
        waited = time.monotonic() - started
        samples.append({"after_seconds": round(waited), "load_average": load})
        if load[0] < threshold:
            print(f"load average {load} below {threshold}: measuring", flush=True)
            return {"reached": True, "waited_seconds": round(waited, 1), "samples": samples}
        if waited + poll > max_wait:
            print(
                f"load average still {load} after {waited:.0f}s: measuring anyway "
                "(numbers are pessimistic)",
                flush=True,
            )
            return {"reached": False, "waited_seconds": round(waited, 1), "samples": samples}
        print(f"load average {load} >= {threshold}; waited {waited:.0f}s, polling ...",
              flush=True)  # fmt: skip
        time.sleep(poll)


# -- CPU accounting: this benchmark's processes versus everything else ---------------------------
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def machine_cpu_ticks() -> tuple[int, int]:
    """(busy, steal) jiffies of all CPUs since boot, from /proc/stat (Linux only)."""
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + irq + softirq, steal


def own_cpu_ticks() -> int:
    """CPU jiffies of this process and all its descendants (Spark's JVM, Python workers),
    including reaped children (cutime/cstime), so workers that exited still count."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                text = handle.read()
        except OSError:
            continue
        rest = text[text.rindex(")") + 2 :].split()  # fields after "pid (comm)"
        parents[int(entry)] = int(rest[1])
        ticks[int(entry)] = sum(int(x) for x in rest[11:15])  # utime stime cutime cstime
    mine, frontier = {os.getpid()}, [os.getpid()]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in mine:
                mine.add(child)
                frontier.append(child)
    return sum(ticks.get(pid, 0) for pid in mine)


class CpuWindow:
    """CPU seconds used between start and stop: by this benchmark, by others, stolen."""

    def __init__(self):
        self.available = os.path.exists("/proc/stat")
        if self.available:
            self.busy, self.steal = machine_cpu_ticks()
            self.own = own_cpu_ticks()
            self.t0 = time.perf_counter()

    def stop(self) -> dict | None:
        if not self.available:
            return None
        busy, steal = machine_cpu_ticks()
        own = own_cpu_ticks() - self.own
        return {
            "wall_seconds": round(time.perf_counter() - self.t0, 2),
            "own_cpu_seconds": round(own / CLOCK_TICKS, 2),
            # busy time of the machine not spent by this process tree (clamped at 0: the
            # two counters are read at slightly different moments)
            "others_cpu_seconds": round(max(0, busy - self.busy - own) / CLOCK_TICKS, 2),
            "steal_seconds": round((steal - self.steal) / CLOCK_TICKS, 2),
        }


# -- measuring -----------------------------------------------------------------------------------
def measure(name: str, fn, repeats: int) -> dict:
    """One warm-up run, then `repeats` timed runs; `fn` does the whole query (plan + run)."""
    load_before = loadavg()
    window = CpuWindow()
    t0 = time.perf_counter()
    fn()
    warmup = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    best = min(runs)
    cpu = window.stop()
    others = f", others' CPU {cpu['others_cpu_seconds']:.1f}s" if cpu else ""
    print(
        f"  {name:34s} best {best:7.2f}s  runs {', '.join(f'{r:.2f}' for r in runs)}"
        f"  (warm-up {warmup:.2f}s, load {load_before[0]}{others})",
        flush=True,
    )
    return {
        "best_seconds": round(best, 3),
        "runs_seconds": [round(r, 3) for r in runs],
        "warmup_seconds": round(warmup, 3),
        "load_average_before": load_before,
        "load_average_after": loadavg(),
        # over the warm-up and the timed runs together
        "cpu": cpu,
    }


def noop(df) -> None:
    df.write.format("noop").mode("overwrite").save()


def run(args: argparse.Namespace) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyspark
    from pyspark.sql import functions as F

    from hoodie import HoodieTable
    from hoodie.read import datasource
    from hoodie.read.options import ReadOptions
    from hoodie.read.slice_reader import read_slice

    rows, partitions = args.rows, args.partitions
    updates = int(round(rows * args.update_fraction))
    inserts = int(round(rows * args.insert_fraction))
    total = rows + args.batches * inserts
    part = partition_name(args.query_partition, partitions)
    part_rows = ids_in_partition(total, args.query_partition, partitions)

    owned = args.workdir is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="hoodie-bench-")).resolve()
    path = workdir / "read_snapshot_table"
    if path.exists():
        shutil.rmtree(path)
    print(f"table: {path}", flush=True)

    load_start = loadavg()
    spark = build_spark(args.master, "hoodie-bench-read-snapshot")
    print(f"spark {spark.version}, load average {load_start}", flush=True)
    try:
        # 1. the table
        build = build_table(spark, path, args, updates, inserts)
        datasource.register(spark)
        table = HoodieTable.open(str(path))
        storage = table.storage
        t0 = time.perf_counter()
        base_files = table.file_system_view().latest_base_files()
        listing_seconds = time.perf_counter() - t0
        uris = [storage.uri(f.relative_path) for f in base_files]
        base_bytes = sum(f.size for f in base_files)
        print(
            f"table built in {build['seconds']:.1f}s: {len(base_files)} latest base files, "
            f"{base_bytes:,} bytes (listed in {listing_seconds * 1000:.0f} ms)",
            flush=True,
        )

        # 2. a quiet machine
        wait = wait_for_quiet(args.load_threshold, args.poll_seconds, args.max_wait_seconds)
        load_measure_start = loadavg()
        measure_window = CpuWindow()

        # 3. the measurements
        def hoodie_df(pushdown: bool | None = None):
            reader = spark.read.format("hoodie")
            if pushdown is not None:
                reader = reader.option(PUSHDOWN_OPTION, "true" if pushdown else "false")
            return reader.load(str(path))

        def one_partition(pushdown: bool):
            return hoodie_df(pushdown).filter(F.col("part") == F.lit(part))

        results = {}
        print(f"measuring (best of {args.repeats} after one warm-up):", flush=True)
        spark.conf.set(PUSHDOWN_CONF, "false")
        results["hoodie_full"] = measure("hoodie_full", lambda: noop(hoodie_df()), args.repeats)
        results["parquet_full"] = measure(
            "parquet_full", lambda: noop(spark.read.parquet(*uris)), args.repeats
        )
        spark.conf.set(PUSHDOWN_CONF, "true")
        results["hoodie_one_partition"] = measure(
            "hoodie_one_partition", lambda: noop(one_partition(True)), args.repeats
        )
        results["hoodie_one_partition_no_pruning"] = measure(
            "hoodie_one_partition_no_pruning", lambda: noop(one_partition(False)), args.repeats
        )
        spark.conf.set(PUSHDOWN_CONF, "false")

        breakdown = {}
        if not args.no_breakdown:
            print("breakdown:", flush=True)
            local_paths = [storage.full_path(f.relative_path) for f in base_files]

            def pyarrow_read_table():
                for p in local_paths:
                    pq.read_table(p, filesystem=storage.fs)

            part_uris = [
                storage.uri(f.relative_path) for f in base_files if f.partition_path == part
            ]
            breakdown["parquet_one_partition"] = measure(
                "parquet_one_partition",
                lambda: noop(spark.read.parquet(*part_uris)),
                args.repeats,
            )
            # A partition that does not exist, pruned away: the plan has no split, so this is
            # the fixed cost of one query through the hoodie source (two planning calls in
            # Python processes on the driver, one Spark job with one empty task).
            spark.conf.set(PUSHDOWN_CONF, "true")
            breakdown["hoodie_no_matching_partition"] = measure(
                "hoodie_no_matching_partition",
                lambda: noop(hoodie_df(True).filter(F.col("part") == F.lit("no-such-part"))),
                args.repeats,
            )
            spark.conf.set(PUSHDOWN_CONF, "false")
            breakdown["pyarrow_read_table"] = measure(
                "pyarrow_read_table", pyarrow_read_table, args.repeats
            )

            schema = hoodie_df().schema
            reader = datasource.HoodieReader(str(path), schema, ReadOptions.parse({}))
            splits = reader.partitions()

            def slice_reader_in_driver():
                for split in splits:
                    for _ in reader.read(split):
                        pass

            breakdown["slice_reader_in_driver"] = measure(
                "slice_reader_in_driver", slice_reader_in_driver, args.repeats
            )

            # The same per-task work in Spark's Python workers, through mapInArrow instead of
            # the Python data source API: one task per task of the source (its packed slices).
            spec_splits = [
                (
                    dataclasses.replace(
                        reader.spec,
                        valid_instants=s.valid_instants,
                        merge_logs=s.merge_logs,
                        commit_time_range=s.commit_time_range,
                    ),
                    s.splits,
                )
                for s in splits
            ]
            empty = pa.RecordBatch.from_pylist([], schema=reader.spec.schema)

            def read_splits(send: bool):
                def fn(batches):
                    for batch in batches:
                        for i in batch.column(0).to_pylist():
                            spec, packed = spec_splits[i]
                            for split in packed:
                                for out in read_slice(spec, split):
                                    if send:
                                        yield out
                    if not send:
                        yield empty

                return fn

            def mapinarrow(send: bool):
                ids = spark.range(0, len(spec_splits), numPartitions=len(spec_splits))
                return ids.mapInArrow(read_splits(send), schema)

            breakdown["mapinarrow_read_only"] = measure(
                "mapinarrow_read_only", lambda: noop(mapinarrow(False)), args.repeats
            )
            breakdown["mapinarrow_full"] = measure(
                "mapinarrow_full", lambda: noop(mapinarrow(True)), args.repeats
            )
        load_measure_end = loadavg()
        measure_cpu = measure_window.stop()
        if measure_cpu:
            print(f"measurement phase CPU: {measure_cpu}", flush=True)

        # 4. verification (not timed)
        print("verifying ...", flush=True)
        hoodie = hoodie_df()
        parquet = spark.read.parquet(*uris)
        version = F.col("ts") - F.lit(BASE_TS) - F.col("id")
        agg = hoodie.agg(
            F.count(F.lit(1)).alias("n"),
            F.countDistinct("id").alias("distinct_ids"),
            F.sum((version != 0).cast("long")).alias("updated"),
            F.sum(version).alias("version_sum"),
        ).first()
        parquet_count = parquet.count()
        spark.conf.set(PUSHDOWN_CONF, "true")
        part_count = one_partition(True).count()
        part_count_no_pruning = one_partition(False).count()
        part_bad = one_partition(True).filter(F.col("part") != F.lit(part)).count()
        tasks = {  # input partitions = Spark tasks of each scan
            "hoodie_full": hoodie.rdd.getNumPartitions(),
            "parquet_full": parquet.rdd.getNumPartitions(),
            "hoodie_one_partition": one_partition(True).rdd.getNumPartitions(),
            "hoodie_one_partition_no_pruning": one_partition(False).rdd.getNumPartitions(),
        }
        spark.conf.set(PUSHDOWN_CONF, "false")
        if not args.no_breakdown:
            mapinarrow_count = mapinarrow(True).count()
        expected_updated = args.batches * updates
        expected_version_sum = updates * args.batches * (args.batches + 1) // 2
        checks = {
            "expected_total": total,
            "hoodie_count": agg["n"],
            "parquet_count": parquet_count,
            "hoodie_distinct_ids": agg["distinct_ids"],
            "rows_with_updated_ts": agg["updated"],
            "expected_rows_with_updated_ts": expected_updated,
            "version_sum": agg["version_sum"],
            "expected_version_sum": expected_version_sum,
            "query_partition": part,
            "partition_count_pruned": part_count,
            "partition_count_no_pruning": part_count_no_pruning,
            "expected_partition_count": part_rows,
            "rows_outside_partition": part_bad,
            "hoodie_columns": hoodie.columns,
            "parquet_columns": parquet.columns,
        }
        problems = []
        if agg["n"] != total:
            problems.append(f"hoodie snapshot has {agg['n']} rows, expected {total}")
        if parquet_count != agg["n"]:
            problems.append(f"latest base files hold {parquet_count} rows, hoodie {agg['n']}")
        if agg["distinct_ids"] != total:
            problems.append(f"{agg['distinct_ids']} distinct ids, expected {total}")
        if agg["updated"] != expected_updated:
            problems.append(f"{agg['updated']} updated rows, expected {expected_updated}")
        if agg["version_sum"] != expected_version_sum:
            problems.append(f"version sum {agg['version_sum']}, expected {expected_version_sum}")
        for label, n in (("pruned", part_count), ("unpruned", part_count_no_pruning)):
            if n != part_rows:
                problems.append(f"{label} query of {part} has {n} rows, expected {part_rows}")
        if part_bad:
            problems.append(f"{part_bad} rows of other partitions in the {part} query")
        if sorted(hoodie.columns) != sorted(parquet.columns):
            problems.append("hoodie and parquet columns differ")
        if not args.no_breakdown:
            checks["mapinarrow_count"] = mapinarrow_count
            if mapinarrow_count != total:
                problems.append(f"mapInArrow read {mapinarrow_count} rows, expected {total}")
        print("verify: " + ("OK" if not problems else "FAILED: " + "; ".join(problems)),
              flush=True)  # fmt: skip

        best = {k: v["best_seconds"] for k, v in {**results, **breakdown}.items()}
        full_ratio = best["hoodie_full"] / best["parquet_full"]
        part_ratio = best["hoodie_one_partition"] / best["hoodie_full"]
        ratios = {
            "hoodie_full_over_parquet_full": round(full_ratio, 3),
            "hoodie_full_over_parquet_full_target": TARGET_FULL_RATIO,
            "hoodie_full_over_parquet_full_met": full_ratio <= TARGET_FULL_RATIO,
            "hoodie_one_partition_over_hoodie_full": round(part_ratio, 3),
            "hoodie_one_partition_over_hoodie_full_target": TARGET_PARTITION_RATIO,
            "hoodie_one_partition_over_hoodie_full_met": part_ratio <= TARGET_PARTITION_RATIO,
            "hoodie_one_partition_no_pruning_over_hoodie_full": round(
                best["hoodie_one_partition_no_pruning"] / best["hoodie_full"], 3
            ),
        }
        print(
            f"hoodie_full / parquet_full = {full_ratio:.2f} (target <= {TARGET_FULL_RATIO}); "
            f"hoodie_one_partition / hoodie_full = {part_ratio:.3f} "
            f"(target <= {TARGET_PARTITION_RATIO})",
            flush=True,
        )

        mem = memory_total_bytes()
        return {
            "benchmark": "read_snapshot",
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "rows_initial": rows,
            "partitions": partitions,
            "batches": args.batches,
            "updates_per_batch": updates,
            "inserts_per_batch": inserts,
            "total_rows": total,
            "query_partition": part,
            "query_partition_rows": part_rows,
            "latest_base_files": len(base_files),
            "latest_base_files_bytes": base_bytes,
            "file_listing_seconds": round(listing_seconds, 4),
            "scan_tasks": tasks,
            "build": build,
            "repeats": args.repeats,
            "best_seconds": best,
            "ratios": ratios,
            "measurements": results,
            "breakdown": breakdown,
            "verified": not problems,
            "problems": problems,
            "checks": checks,
            "load_wait": {
                "threshold": args.load_threshold,
                "poll_seconds": args.poll_seconds,
                "max_wait_seconds": args.max_wait_seconds,
                **wait,
            },
            "machine": {
                "cores": os.cpu_count(),
                "memory_bytes": mem,
                "memory_gib": round(mem / 2**30, 1) if mem else None,
                "platform": platform.platform(),
                "python": platform.python_version(),
                # 1/5/15-minute load averages: above `cores` means other work competed
                "load_average_start": load_start,
                "load_average_measure_start": load_measure_start,
                "load_average_measure_end": load_measure_end,
                "load_average_end": loadavg(),
                # the whole measurement phase: CPU seconds of this benchmark's processes,
                # of every other process, and stolen by the hypervisor
                "measurement_cpu": measure_cpu,
            },
            "spark_master": args.master,
            "pyspark_version": pyspark.__version__,
            "pyarrow_version": pa.__version__,
            "commit": repo_commit(),
        }
    finally:
        spark.stop()
        if owned and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            print(f"table kept at {path}", flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    results = run(args)
    out = Path(args.out)
    write_json(out, results)
    print(f"results written to {out}")
    return 0 if results["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

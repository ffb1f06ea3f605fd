"""The run: generate the workload once, take every system through it, check, report.

Systems run one after another, never side by side: the machine has few cores and each
system's numbers must be its own. Each runs in a fresh worker process (worker.py); the runner
sends it the steps in order (the writes; the snapshot, read-optimized and one-partition scans,
the point read and the filter; for merge-on-read the compaction; the final check), waiting at
most `--time-cap` seconds for each. A system that exceeds the cap is stopped (its worker and
the worker's children, e.g. a Spark JVM, are killed), recorded as "did not finish" at that
step, and skipped from then on: the run goes on. A system that raises is recorded as failed,
and so is one whose final table, point read or filter differs from the expected state;
either makes the run exit non-zero.
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psutil

from . import metrics, report, worker
from .systems import SYSTEMS
from .workload import PARTITIONS, SPREADS, Workload, generate

BENCH_DIR = Path(__file__).resolve().parents[1]
DEFAULT_OUT = BENCH_DIR / "results"
OPEN_CAP_SECONDS = 300  # starting a system (a Spark JVM) is not measured, but is capped too
OK, DNF, FAILED = "ok", "did not finish", "failed"


class StepTimeout(Exception):
    pass


class StepError(Exception):
    pass


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/compare.py",
        description="FACT upsert workload: our Hudi core against plain Spark, delta-rs and "
        "pyiceberg on the same data (see bench/README.md).",
    )
    parser.add_argument(
        "--rows",
        default="1000000",
        help="rows of the initial table; several sizes comma-separated (e.g. "
        "1000000,3000000,10000000) run one after another, each with its own report, and a "
        "summary of the ratios across sizes (<name>_sizes.md/.png)",
    )
    parser.add_argument("--batches", type=int, default=5, help="upsert batches of rows/10 each")
    parser.add_argument(
        "--partitions", type=int, default=PARTITIONS, help="date partitions (default 30)"
    )
    parser.add_argument(
        "--spread",
        choices=SPREADS,
        default="zipf",
        help="the upsert batches over the partitions: zipf (toward recent days, the default) "
        "or even (every partition alike, copy-on-write's worst case)",
    )
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"comma-separated, in run order (default: all: {','.join(SYSTEMS)})",
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the json/md/png")
    parser.add_argument(
        "--name", default=None, help="file name stem (default: compare_<rows>, e.g. compare_1M)"
    )
    parser.add_argument("--seed", type=int, default=20261122, help="workload random seed")
    parser.add_argument(
        "--time-cap",
        type=float,
        default=None,
        help="seconds any one step may take before its system is stopped and marked "
        "'did not finish' (default: 180 per million rows, at least 120)",
    )
    parser.add_argument("--scan-repeats", type=int, default=2, help="runs per read, best kept")
    parser.add_argument(
        "--workdir", default=None, help="input data and tables (default: a temporary folder)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder afterwards")
    parser.add_argument("--master", default="local[2]", help="Spark master for Spark systems")
    parser.add_argument(
        "--shuffle-partitions",
        type=int,
        default=8,
        help="spark.sql.shuffle.partitions (default 8, as in bench/upsert_cow.py)",
    )
    parser.add_argument(
        "--shared-spark",
        action="store_true",
        help="run the Spark systems in one worker process, one JVM and one SparkSession (saves "
        "JVM starts and warm-up in smoke runs; their memory and first-step numbers are then not "
        "their own)",
    )
    parser.add_argument(
        "--summarize",
        default=None,
        metavar="JSON,JSON,...",
        help="run nothing: write the summary across sizes (<name>_sizes.md/.png/.json) from "
        "these result files of earlier runs, e.g. after re-running one size",
    )
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in args.systems if s not in SYSTEMS]
    if unknown or not args.systems:
        parser.error(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
    try:
        args.sizes = [int(float(n)) for n in args.rows.split(",") if n.strip()]
    except ValueError:
        parser.error(f"--rows takes row counts separated by commas, got {args.rows!r}")
    if (
        args.partitions < 1
        or not args.sizes
        or min(args.sizes) < 10 * args.partitions
        or args.batches < 0
    ):
        parser.error("need --partitions >= 1, --rows >= 10 x --partitions, --batches >= 0")
    args.rows = args.sizes[0]
    args.time_cap_option = args.time_cap
    return args


def for_size(args, rows: int) -> argparse.Namespace:
    """The options of one size of the run."""
    sized = argparse.Namespace(**vars(args))
    sized.rows = rows
    sized.time_cap = args.time_cap_option or max(120.0, 180.0 * rows / 1_000_000)
    return sized


def size_label(rows: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if rows >= size:
            return f"{rows / size:g}{unit}"
    return str(rows)


def kill_tree(pid: int) -> None:
    """Kill a worker we started and everything it started (a Spark JVM, Python workers)."""
    try:
        root = psutil.Process(pid)
        procs = [*root.children(recursive=True), root]
    except psutil.Error:
        return
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=30)


class Worker:
    """A worker process and the pipe to it."""

    def __init__(self, options: dict):
        context = multiprocessing.get_context("spawn")  # no forked JVM or threads
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=worker.serve, args=(child, options), name="bench-worker"
        )
        self.process.start()
        child.close()
        self.alive = True

    def call(self, command: str, args: dict, cap: float) -> dict:
        self.conn.send((command, args))
        if not self.conn.poll(cap):
            raise StepTimeout(f"{command} took longer than {cap:g}s")
        try:
            status, payload = self.conn.recv()
        except EOFError:
            raise StepError(f"the worker died during {command}") from None
        if status != "ok":
            raise StepError(payload)
        return payload

    def stop(self, kill: bool = False) -> None:
        if not self.alive:
            return
        self.alive = False
        if not kill:
            try:
                self.conn.send(None)
            except OSError:
                kill = True
            else:
                self.process.join(120)
                kill = self.process.is_alive()
        if kill:
            kill_tree(self.process.pid)
            self.process.join(30)
        self.conn.close()


def run_system(name: str, workload: Workload, root: Path, args, proc: Worker) -> dict:
    """Take one system through every step in `proc`; never raises for the system's own
    problems. A worker that had to be killed is left stopped (`proc.alive` is False)."""
    record: dict = {"system": name, "status": OK, "steps": {}}
    root.mkdir(parents=True, exist_ok=True)
    print(f"\n== {name} ==", flush=True)
    current = "open"
    kill = False
    this = {"system": name}
    try:
        opened = proc.call("open", {**this, "root": str(root)}, OPEN_CAP_SECONDS)
        record.update(
            description=opened["description"],
            versions=opened["versions"],
            open_seconds=opened["seconds"],
            read_optimized=opened["read_optimized"],
            compacts=opened["compacts"],
        )
        for step in workload.steps:
            current = step.name
            measured = proc.call(
                step.kind, {**this, "files": step.files, "step": step.name}, args.time_cap
            )
            measured["rows"] = step.rows
            measured["rows_per_second"] = round(step.rows / max(measured["seconds"], 1e-9), 1)
            record["steps"][step.name] = measured
            print_step(name, step.name, measured)
        repeats = {**this, "repeats": args.scan_repeats}
        current = "scan"
        record["scan"] = proc.call("scan", repeats, args.time_cap)
        print(f"  full scan: {record['scan']['seconds']:.2f}s", flush=True)
        if opened["read_optimized"]:
            current = "scan_ro"
            record["scan_ro"] = proc.call("scan_ro", repeats, args.time_cap)
            print(f"  read-optimized scan: {record['scan_ro']['seconds']:.2f}s", flush=True)
        current = "scan_partition"
        record["scan_partition"] = proc.call(
            "scan_partition", {**repeats, "date": workload.query_date}, args.time_cap
        )
        part = record["scan_partition"]
        print(
            f"  one partition ({workload.query_date}): {part['seconds']:.2f}s, "
            f"{part['rows']:,} rows",
            flush=True,
        )
        current = "point_read"
        record["point_read"] = proc.call(
            "point_read", {**repeats, "key": workload.point_key}, args.time_cap
        )
        current = "filter"
        where = {"column": workload.filter_column, "above": workload.filter_above}
        record["filter"] = proc.call("filter", {**repeats, **where}, args.time_cap)
        print(
            f"  point read (id = {workload.point_key}): {record['point_read']['seconds']:.2f}s; "
            f"filter ({workload.filter_column} > {workload.filter_above}): "
            f"{record['filter']['seconds']:.2f}s, {record['filter']['result']['rows']:,} rows",
            flush=True,
        )
        if opened["compacts"]:  # after the reads, which see the uncompacted log files
            current = "compaction"
            measured = proc.call("compact", {**this, "step": "compaction"}, args.time_cap)
            record["compaction"] = measured
            print(f"  compaction: {measured['seconds']:.2f}s", flush=True)
        current = "check"
        record["check"] = proc.call("check", this, args.time_cap)
        current = "close"
        proc.call("close", this, OPEN_CAP_SECONDS)
    except StepTimeout as exc:
        record.update(status=DNF, stopped_at=current, error=str(exc))
        kill = True
    except StepError as exc:
        record.update(status=FAILED, stopped_at=current, error=str(exc))
        kill = True  # its state is unknown: no other system may use that worker
    if kill:
        proc.stop(kill=True)
    if record["status"] != OK:
        print(f"  {record['status'].upper()} at {current}: {record['error']}", flush=True)
    return record


def run_systems(workload: Workload, workdir: Path, args) -> list[dict]:
    """Every system in a fresh worker, or the Spark ones in one shared worker (--shared-spark)."""
    options = {
        "master": args.master,
        "shuffle_partitions": args.shuffle_partitions,
        "shared_spark": args.shared_spark,
    }
    records = []
    shared = None
    for name in args.systems:
        # What the run wrote so far (the generated input: ~1 GB at 10M rows; the last system's
        # table) goes to disk now, not during the next system's first step.
        os.sync()
        if args.shared_spark and SYSTEMS[name][2]:
            if shared is None or not shared.alive:
                shared = Worker(options)
            records.append(run_system(name, workload, workdir / name, args, shared))
            continue
        proc = Worker(options)
        try:
            records.append(run_system(name, workload, workdir / name, args, proc))
        finally:
            proc.stop()
    if shared is not None:
        shared.stop()
    return records


def print_step(system: str, step: str, m: dict) -> None:
    print(
        f"  {step:<9} {m['seconds']:8.2f}s {m['rows_per_second']:>11,.0f} rows/s "
        f"{m['bytes_written']:>13,} B in {m['files_written']:>4} files "
        f"({m['data_files_written']} data), peak RSS {m['peak_rss_bytes'] / 2**20:,.0f} MiB",
        flush=True,
    )


def verify(record: dict, workload: Workload) -> list[str]:
    """Problems with a finished system's final table, compared with the generated oracle."""
    if record["status"] != OK:
        return [] if record["status"] == DNF else [f"{record['system']}: {record['status']}"]
    name, check = record["system"], record["check"]
    problems = []
    if check["rows"] != workload.expected_rows:
        problems.append(f"{name}: {check['rows']} rows, expected {workload.expected_rows}")
    if check["distinct_ids"] != check["rows"]:
        problems.append(f"{name}: {check['rows'] - check['distinct_ids']} duplicate keys")
    if check["checksum"] != workload.expected_checksum:
        problems.append(
            f"{name}: checksum {check['checksum']}, expected {workload.expected_checksum}"
        )
    rows = record["scan_partition"]["rows"]
    if rows != workload.expected_query_rows:
        problems.append(
            f"{name}: partition {workload.query_date} has {rows} rows, "
            f"expected {workload.expected_query_rows}"
        )
    reads = (
        ("point read", "point_read", workload.expected_point),
        ("filter", "filter", workload.expected_filter),
    )
    for title, key, expected in reads:
        got = record[key]["result"]
        if (got["rows"], got["checksum"]) != (expected["rows"], expected["checksum"]):
            problems.append(
                f"{name}: {title} returned {got['rows']} rows, checksum {got['checksum']}; "
                f"expected {expected['rows']}, {expected['checksum']}"
            )
    return problems


def run(args) -> tuple[dict, list[str]]:
    started = time.perf_counter()
    machine_before = metrics.machine()
    owned = args.workdir is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="hoodie-compare-")).resolve()
    print(f"work folder: {workdir}", flush=True)
    try:
        for name in [*args.systems, "data"]:  # a previous run's tables: start from nothing
            shutil.rmtree(workdir / name, ignore_errors=True)
        print(f"generating {args.rows:,} rows + {args.batches} batches ...", flush=True)
        workload = generate(args.rows, args.batches, args.seed, workdir / "data", args.partitions,
                            args.spread)  # fmt: skip
        print(
            f"  {workload.generate_seconds:.1f}s; expected final table: "
            f"{workload.expected_rows:,} rows, checksum {workload.expected_checksum}; "
            f"point read: 1 row, filter: {workload.expected_filter['rows']:,} rows",
            flush=True,
        )
        records = run_systems(workload, workdir, args)
    finally:
        if owned and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            print(f"work folder kept: {workdir}", flush=True)

    problems = [p for r in records for p in verify(r, workload)]
    for record in records:
        record["correct"] = record["status"] == OK and not verify(record, workload)
    machine = metrics.machine()
    machine["load_average_before"] = machine_before["load_average"]
    machine["load_average_after"] = machine.pop("load_average")
    workload_info = workload.to_dict()
    for step in workload_info["steps"]:
        step["files"] = len(step["files"])
    results = {
        "benchmark": "compare",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": repo_commit(),
        "rows": args.rows,
        "batches": args.batches,
        "systems": args.systems,
        "time_cap_seconds": args.time_cap,
        "scan_repeats": args.scan_repeats,
        "shared_spark": args.shared_spark,
        "spark": {"master": args.master, "shuffle_partitions": args.shuffle_partitions},
        "machine": machine,
        "workload": workload_info,
        "results": {r["system"]: r for r in records},
        "verified": not problems,
        "problems": problems,
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    return results, problems


def repo_commit() -> str | None:
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    from upsert_cow import repo_commit as commit

    return commit()


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.summarize:
        import json

        runs = [json.loads(Path(f).read_text()) for f in args.summarize.split(",") if f.strip()]
        runs.sort(key=lambda results: results["rows"])
        stem = f"{args.name or 'compare'}_sizes"
        for path in report.write_sizes(runs, Path(args.out), stem):
            print(f"written: {path}")
        return 0
    failed = False
    summaries = []
    for rows in args.sizes:
        sized = for_size(args, rows)
        results, problems = run(sized)
        stem = args.name or "compare"
        if len(args.sizes) > 1 or not args.name:
            stem = f"{stem}_{size_label(rows)}"
        paths = report.write_all(results, Path(args.out), stem)
        print("\n" + report.markdown(results))
        for path in paths:
            print(f"written: {path}")
        summaries.append(results)
        if problems:
            print("FAILED: " + "; ".join(problems), file=sys.stderr)
            failed = True
            continue
        dnf = [r["system"] for r in results["results"].values() if r["status"] == DNF]
        print(
            "verified: every finished system holds the expected table"
            + (f" ({', '.join(dnf)} did not finish)" if dnf else "")
        )
    if len(summaries) > 1:
        stem = f"{args.name or 'compare'}_sizes"
        for path in report.write_sizes(summaries, Path(args.out), stem):
            print(f"written: {path}")
    return 1 if failed else 0

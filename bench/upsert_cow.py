"""Benchmark: one copy-on-write upsert batch (updates + inserts) into a Hudi table.

Steps:
1. build a table of `--rows` rows over `--partitions` partitions with one upsert into an empty
   table (the "initial load", timed and reported too);
2. the measured batch: `--update-fraction` of the existing ids get a new version (ts + 1 and
   changed values, spread evenly over every partition) and `--insert-fraction` new ids are
   added, all in ONE DataFrame and ONE `table.upsert`; `time.perf_counter` is taken around that
   call only. The input is generated lazily from `spark.range`, as a real write would compute it;
3. verify the snapshot (row count, number of updated rows) and write the numbers as JSON.

All data is a function of the id, so every run writes the same rows.

    .venv/bin/python bench/upsert_cow.py                 # 1,000,000 rows (a few minutes)
    .venv/bin/python bench/upsert_cow.py --rows 20000    # quick smoke run
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "upsert_cow.json"

BASE_TS = 1_700_000_000_000  # ts of an id's first version is BASE_TS + id; an update adds 1
BASE_DATE = dt.date(2024, 1, 1)
CATEGORIES = ["books", "garden", "music", "sports", "toys", "tools", "food"]
# Multiplier of the permutation k -> (k * STRIDE) mod rows that picks the ids to update: a
# bijection of [0, rows) whenever gcd(STRIDE, rows) == 1, so the first `updates` values are
# distinct existing ids spread over the whole id range (and so over every partition).
STRIDE = 1_000_003


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the initial table")
    parser.add_argument("--partitions", type=int, default=10, help="table partitions (p00, ...)")
    parser.add_argument(
        "--update-fraction",
        type=float,
        default=0.1,
        help="share of existing rows the measured batch updates",
    )
    parser.add_argument(
        "--insert-fraction",
        type=float,
        default=0.1,
        help="new rows in the measured batch, as a share of --rows",
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
    if args.rows <= 0 or args.partitions <= 0:
        parser.error("--rows and --partitions must be positive")
    for name in ("update_fraction", "insert_fraction"):
        if not 0 <= getattr(args, name) <= 1:
            parser.error(f"--{name.replace('_', '-')} must be between 0 and 1")
    return args


# -- environment ---------------------------------------------------------------------------------
def memory_total_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024  # the file says kB
    except OSError:
        pass
    return None


def repo_commit() -> str | None:
    """The checked-out commit, read from .git without running git (best effort)."""
    git = HERE.parent / ".git"
    try:
        if git.is_file():  # a worktree's: "gitdir: <its folder in the main repository>"
            git = (git.parent / git.read_text().split(":", 1)[1].strip()).resolve()
        common = git
        if (git / "commondir").exists():  # a worktree's refs are the main repository's
            common = (git / (git / "commondir").read_text().strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[len("ref: ") :]
        for folder in (git, common):
            if (folder / ref).exists():
                return (folder / ref).read_text().strip()
        packed = common / "packed-refs"
        if packed.exists():
            for line in packed.read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split()[0]
    except OSError:
        pass
    return None


# The benchmarks' session settings (besides the master). bench/compare.py gives Apache Hudi's
# Spark (another venv, Spark 3.5) exactly these too.
SESSION_CONFIG = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "4g",
    "spark.sql.shuffle.partitions": "8",
    "spark.log.level": "WARN",
    "spark.ui.showConsoleProgress": "false",
}


def build_spark(master: str, app_name: str = "hoodie-bench-upsert-cow"):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in SESSION_CONFIG.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


# -- data ----------------------------------------------------------------------------------------
def rows_for(ids, partitions: int, version: int):
    """The table's columns for a DataFrame of `id`s; `version` 1 is an update of version 0."""
    from pyspark.sql import functions as F

    id_ = F.col("id")
    width = max(2, len(str(partitions - 1)))
    categories = F.array(*[F.lit(c) for c in CATEGORIES])
    return ids.select(
        id_.alias("id"),
        F.concat(
            F.lit("p"), F.lpad(F.pmod(id_, F.lit(partitions)).cast("string"), width, "0")
        ).alias("part"),
        (F.lit(BASE_TS) + id_ + F.lit(version)).alias("ts"),
        F.concat(F.lit("customer-"), id_.cast("string")).alias("name"),
        F.element_at(
            categories, (F.pmod(id_ * 7 + version, F.lit(len(CATEGORIES))) + 1).cast("int")
        ).alias("category"),
        (F.pmod(id_ * 37 + version * 11, F.lit(100_000)) / F.lit(100.0)).alias("amount"),
        (F.pmod(id_, F.lit(1000)) + F.lit(version * 1000)).cast("int").alias("quantity"),
        F.date_add(F.lit(BASE_DATE), F.pmod(id_, F.lit(365)).cast("int") + F.lit(version)).alias(
            "event_date"
        ),
        ((F.pmod(id_, F.lit(3)) == 0) != F.lit(version == 1)).alias("is_active"),
        (F.pmod(id_ * 13 + version * 7, F.lit(10_000_000)) / F.lit(100))
        .cast("decimal(12,2)")
        .alias("price"),
        F.sqrt(id_.cast("double") + F.lit(version)).alias("score"),
        F.concat(
            F.lit(f"v{version} note for "),
            id_.cast("string"),
            F.lit(" / "),
            F.sha1(id_.cast("string")).substr(1, 12),
        ).alias("note"),
    )


def update_stride(rows: int) -> int:
    stride = STRIDE
    while math.gcd(stride, rows) != 1:
        stride += 2
    return stride


def initial_rows(spark, rows: int, partitions: int):
    return rows_for(spark.range(0, rows), partitions, version=0)


def batch_rows(spark, rows: int, partitions: int, updates: int, inserts: int):
    """ONE DataFrame: `updates` existing ids at version 1, plus `inserts` new ids."""
    from pyspark.sql import functions as F

    stride = update_stride(rows)
    updated_ids = spark.range(0, updates).select(
        F.pmod(F.col("id") * F.lit(stride), F.lit(rows)).alias("id")
    )
    updated = rows_for(updated_ids, partitions, version=1)
    inserted = rows_for(spark.range(rows, rows + inserts), partitions, version=0)
    return updated.unionByName(inserted)


# -- run -----------------------------------------------------------------------------------------
def write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    os.replace(tmp, path)


def run(args: argparse.Namespace) -> dict:
    import pyspark
    from pyspark.sql import functions as F

    from hoodie import HoodieTable, WriteConfig

    rows, partitions = args.rows, args.partitions
    updates = int(round(rows * args.update_fraction))
    inserts = int(round(rows * args.insert_fraction))

    owned = args.workdir is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="hoodie-bench-")).resolve()
    path = workdir / "upsert_cow_table"
    if path.exists():
        shutil.rmtree(path)  # a previous run's table: start from an empty one
    print(f"table: {path}", flush=True)

    load_before = os.getloadavg()
    session_started = time.perf_counter()
    spark = build_spark(args.master)
    print(
        f"spark {spark.version} session up in {time.perf_counter() - session_started:.1f}s",
        flush=True,
    )
    try:
        cfg = WriteConfig.build(
            "bench", record_key="id", partition_path="part", precombine_field="ts"
        )
        table = HoodieTable.for_write(str(path), cfg)

        # 1. initial load: one upsert into the empty table
        print(f"initial load: {rows:,} rows into {partitions} partitions ...", flush=True)
        load = initial_rows(spark, rows, partitions)  # lazy: building the plan is not timed
        t0 = time.perf_counter()
        initial = table.upsert(load, cfg)
        initial_seconds = time.perf_counter() - t0
        print(
            f"  {initial.summary()}; {initial_seconds:.2f}s ({rows / initial_seconds:,.0f} rows/s)",
            flush=True,
        )

        # 2. the measured batch: updates + inserts as one DataFrame, one upsert
        batch = batch_rows(spark, rows, partitions, updates, inserts)
        print(f"upsert batch: {updates:,} updates + {inserts:,} inserts ...", flush=True)
        t0 = time.perf_counter()
        result = table.upsert(batch, cfg)
        upsert_seconds = time.perf_counter() - t0
        upserted = updates + inserts
        print(
            f"  {result.summary()}; {upsert_seconds:.2f}s "
            f"({upserted / upsert_seconds:,.0f} rows/s)",
            flush=True,
        )

        # 3. verification (not timed as part of the upsert)
        t0 = time.perf_counter()
        snapshot = table.read(spark)
        count = snapshot.count()
        new_ts = snapshot.filter(F.col("ts") == F.lit(BASE_TS) + F.col("id") + F.lit(1)).count()
        verify_seconds = time.perf_counter() - t0
        expected = rows + inserts
        checks = {
            "snapshot_count": count,
            "expected_count": expected,
            "rows_with_new_ts": new_ts,
            "expected_rows_with_new_ts": updates,
            "result_num_updates": result.num_updates,
            "result_num_inserts": result.num_inserts,
        }
        problems = []
        if count != expected:
            problems.append(f"snapshot has {count} rows, expected {expected}")
        if new_ts != updates:
            problems.append(f"{new_ts} rows carry the updated ts, expected {updates}")
        if (result.num_updates, result.num_inserts) != (updates, inserts):
            problems.append(
                f"commit reports {result.num_updates} updates / "
                f"{result.num_inserts} inserts, expected {updates} / {inserts}"
            )
        if initial.num_inserts != rows:
            problems.append(f"initial load inserted {initial.num_inserts}, expected {rows}")
        print(
            f"verify: {count:,} rows, {new_ts:,} updated ({verify_seconds:.1f}s): "
            + ("OK" if not problems else "FAILED"),
            flush=True,
        )

        mem = memory_total_bytes()
        load_after = os.getloadavg()
        return {
            "benchmark": "upsert_cow",
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "rows": rows,
            "partitions": partitions,
            "updates": updates,
            "inserts": inserts,
            "upserted_rows": upserted,
            "initial_load_seconds": round(initial_seconds, 3),
            "initial_load_rows_per_second": round(rows / initial_seconds, 1),
            "initial_load_files_written": initial.files_written,
            "initial_load_bytes_written": initial.bytes_written,
            "upsert_seconds": round(upsert_seconds, 3),
            "rows_per_second": round(upserted / upsert_seconds, 1),
            "files_written": result.files_written,
            "bytes_written": result.bytes_written,
            "upsert_instant": result.instant,
            "verify_seconds": round(verify_seconds, 3),
            "verified": not problems,
            "problems": problems,
            "checks": checks,
            "machine": {
                "cores": os.cpu_count(),
                "memory_bytes": mem,
                "memory_gib": round(mem / 2**30, 1) if mem else None,
                "platform": platform.platform(),
                "python": platform.python_version(),
                # 1/5/15-minute load averages: above `cores` means other work competed
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in load_after],
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
            print(f"table kept at {path}", flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    results = run(args)
    out = Path(args.out)
    write_json(out, results)
    print(json.dumps(results, indent=2))
    print(f"results written to {out}")
    return 0 if results["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

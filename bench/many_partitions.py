"""Benchmark: a table of many partitions (50,000 by default), its first load and a small upsert.

For each partition count of `--partitions` (50000,30), table type of `--types` (cow,mor) and
table version of `--versions` (6,8; version 8 keeps the metadata table, whose `files`
partition then holds one record per partition):
1. the first load: `--rows` (1,000,000) rows, `id % partitions` choosing a row's partition
   (`p00000`...), written by one `HoodieTable.upsert` into the empty table as `cow_upsert`'s
   and `mor_upsert`'s first run writes it (`HoodieTable.write` with the default operation,
   upsert, which into an empty table is a bulk insert);
2. the upsert: `--updates` (1,000) existing rows get a new version and `--inserts` (1,000) new
   keys come, all in the first `--touched` (1%) of the partitions (at least one), in one
   `HoodieTable.upsert`. The same rows in number go into every table, so the 30-partition
   table's upsert (all in one partition) is the same upsert as the 50,000-partition table's
   (over 500 partitions: 2 updates of each one's 20 rows, and 2 inserts);
3. checked after (not timed): the snapshot's row count and updated rows.
And, once per partition count, plain Spark's partitioned parquet write of the same rows
(`df.write.partitionBy("part").parquet`), the target's yardstick for the load.

`--profile DIR` writes a cProfile of each timed step of ours (`<type>_v<version>_<P>_<step>
.prof`) and the top of each into the results; each step's seconds are split by `TIMED` (the
write job, the metadata table's commit, the services after the commit...). Results go to
`--out` (bench/results/many_partitions.json) and a table beside it (.md), with the command,
the date, the commit and `uptime` before and after: the machine is shared, so read the load
average with the numbers.

    .venv/bin/python bench/many_partitions.py                     # everything: long
    .venv/bin/python bench/many_partitions.py --types cow --versions 8 --partitions 50000,30
    .venv/bin/python bench/many_partitions.py --rows 20000 --partitions 2000,30   # smoke
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import importlib
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from upsert_cow import BASE_TS, build_spark, memory_total_bytes, rows_for  # noqa: E402

DEFAULT_OUT = HERE / "results" / "many_partitions.json"
# What each step's seconds are split by: (name, module, owner, attribute); nested ones count
# inside their callers too.
TIMED = [
    ("plan", "hoodie.write.operations.base", "WriteOperation", "plan"),
    ("batch summary job", "hoodie.write.prepare", "BatchPreparer", "summarize"),
    ("latest schema", "hoodie.meta_client", "HoodieTableMetaClient", "schema"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "bulk_insert"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "write_routed"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "write_file_groups"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "write_buckets"),
    ("partition metadata", "hoodie.write.executor", "WriteExecutor", "write_partition_metadata"),
    ("finalize (markers)", "hoodie.write.executor", "WriteExecutor", "finalize"),
    ("commit", "hoodie.transaction.transaction", "Transaction", "commit"),
    ("metadata table commit", "hoodie.transaction.transaction", None, "update_metadata_table"),
    ("services after commit", "hoodie.client.table_service_runner", "TableServiceRunner",
     "after_commit"),
]  # fmt: skip


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", default="50000,30", help="partition counts, in order")
    parser.add_argument("--types", default="cow,mor", help="cow, mor or both")
    parser.add_argument("--versions", default="6,8", help="table versions: 6, 8 or both")
    parser.add_argument("--updates", type=int, default=None, help="rows updated (rows / 1000)")
    parser.add_argument("--inserts", type=int, default=None, help="rows inserted (rows / 1000)")
    parser.add_argument("--touched", type=float, default=0.01, help="share of partitions touched")
    parser.add_argument("--no-spark", action="store_true", help="skip plain Spark's load")
    parser.add_argument("--profile", default=None, help="folder for cProfile files")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--workdir", default=None, help="where tables go (default: a temp dir)")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    args.partition_counts = [int(p) for p in args.partitions.split(",")]
    args.type_list = [t.strip() for t in args.types.split(",")]
    args.version_list = [int(v) for v in args.versions.split(",")]
    args.updates = args.rows // 1000 if args.updates is None else args.updates
    args.inserts = args.rows // 1000 if args.inserts is None else args.inserts
    if any(p <= 0 or p > args.rows for p in args.partition_counts):
        parser.error("partition counts must be between 1 and --rows")
    return args


# -- data ----------------------------------------------------------------------------------------
def touched_partitions(partitions: int, share: float) -> int:
    return max(1, round(partitions * share))


def load_rows(spark, rows: int, partitions: int):
    return rows_for(spark.range(0, rows), partitions, version=0)


def upsert_rows(spark, rows: int, partitions: int, touched: int, updates: int, inserts: int):
    """`updates` existing ids and `inserts` new ones, spread evenly over partitions
    0..touched-1 (an id's partition is id % partitions): update k is row (k // touched) x
    stride of partition k % touched, insert k a new id of partition k % touched."""
    from pyspark.sql import functions as F

    per_partition = rows // partitions  # (the first rows % partitions ones have one more)
    updates_per_partition = -(-updates // touched)
    if updates_per_partition > per_partition:
        raise ValueError(f"{updates} updates do not fit in {touched} partitions' rows")
    stride = per_partition // updates_per_partition
    k = F.col("id")
    updated_ids = spark.range(0, updates).select(
        (F.pmod(k, F.lit(touched)) + F.lit(partitions) * F.floor(k / touched) * F.lit(stride))
        .alias("id")
    )  # fmt: skip
    first_new = -(-rows // partitions) * partitions  # the first id past the table's of p00..
    inserted_ids = spark.range(0, inserts).select(
        (F.lit(first_new) + F.pmod(k, F.lit(touched)) + F.lit(partitions) * F.floor(k / touched))
        .alias("id")
    )  # fmt: skip
    return rows_for(updated_ids, partitions, version=1).unionByName(
        rows_for(inserted_ids, partitions, version=0)
    )


# -- measuring -----------------------------------------------------------------------------------
@contextlib.contextmanager
def timers():
    """Seconds spent in each of `TIMED` during the block."""
    seconds = {name: 0.0 for name, *_ in TIMED}
    patched = []
    for name, module, owner, attribute in TIMED:
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
        for target, attribute, original in reversed(patched):
            setattr(target, attribute, original)


def timed_step(name: str, run, profile_dir: str | None) -> tuple[float, dict, object, list]:
    """Run `run()`: its seconds, the `TIMED` split, its result, the profile's top lines."""
    import cProfile

    profiler = cProfile.Profile() if profile_dir else None
    with timers() as seconds:
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        try:
            result = run()
        finally:
            if profiler is not None:
                profiler.disable()
        total = time.perf_counter() - started
    top: list[str] = []
    if profiler is not None:
        assert profile_dir is not None
        path = os.path.join(profile_dir, f"{name}.prof")
        profiler.dump_stats(path)
        out = io.StringIO()
        pstats.Stats(path, stream=out).sort_stats("tottime").print_stats(12)
        top = [line for line in out.getvalue().splitlines() if line.strip()][-13:]
    split = {k: round(v, 2) for k, v in seconds.items() if v}
    return total, split, result, top


def repo_commit() -> str | None:
    """The checked-out commit (a worktree's too), and whether files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "../hoodie"],
            cwd=HERE,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + (" (hoodie/ modified)" if dirty else "")


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- run -----------------------------------------------------------------------------------------
def spark_load(spark, args, partitions: int, root: Path) -> dict:
    frame = load_rows(spark, args.rows, partitions)
    path = root / f"spark_{partitions}"
    started = time.perf_counter()
    frame.write.partitionBy("part").parquet(str(path))
    seconds = time.perf_counter() - started
    files = sum(1 for _ in path.rglob("*.parquet"))
    remove(path)
    return {"seconds": round(seconds, 2), "files": files}


def remove(path: Path) -> None:
    """A table's folder gone (by threads: 100,000 files one by one take minutes here)."""
    from hoodie.storage import load_file_io

    load_file_io(str(path)).delete_dir()


def hoodie_run(spark, args, partitions: int, kind: str, version: int, root: Path) -> dict:
    from pyspark.sql import functions as F

    from hoodie import HoodieTable, WriteConfig

    name = f"{kind}_v{version}_{partitions}"
    path = root / name
    config = WriteConfig.build("bench_partitions", "id", "part", "ts", options={
        "hoodie.table.type": "MERGE_ON_READ" if kind == "mor" else "COPY_ON_WRITE",
        "hoodie.write.table.version": str(version),
    })  # fmt: skip
    table = HoodieTable.for_write(str(path), config)
    touched = touched_partitions(partitions, args.touched)
    out: dict = {"table": name, "touched partitions": touched}
    load = load_rows(spark, args.rows, partitions)
    seconds, split, result, top = timed_step(f"{name}_load", lambda: table.upsert(load, config),
                                             args.profile)  # fmt: skip
    out["load"] = {"seconds": round(seconds, 2), "split": split, "files": result.files_written,
                   "operation": result.operation}  # fmt: skip
    if top:
        out["load"]["profile top"] = top
    print(f"  {name} load: {seconds:.1f}s {split}", file=sys.stderr, flush=True)
    batch = upsert_rows(spark, args.rows, partitions, touched, args.updates, args.inserts)
    seconds, split, result, top = timed_step(f"{name}_upsert",
                                             lambda: table.upsert(batch, config),
                                             args.profile)  # fmt: skip
    out["upsert"] = {"seconds": round(seconds, 2), "split": split, "files": result.files_written,
                     "updates": result.num_updates, "inserts": result.num_inserts}  # fmt: skip
    if top:
        out["upsert"]["profile top"] = top
    print(f"  {name} upsert: {seconds:.1f}s {split}", file=sys.stderr, flush=True)
    snapshot = HoodieTable.open(str(path)).read(spark)
    count = snapshot.count()
    updated = snapshot.filter(F.col("ts") == F.lit(BASE_TS) + F.col("id") + F.lit(1)).count()
    problems = []
    if count != args.rows + args.inserts:
        problems.append(f"{count} rows, not {args.rows + args.inserts}")
    if updated != args.updates or result.num_updates != args.updates:
        problems.append(f"{updated} rows updated ({result.num_updates} by the commit), "
                        f"not {args.updates}")  # fmt: skip
    if problems:
        raise SystemExit(f"{name}: " + "; ".join(problems))
    remove(path)
    return out


def markdown(payload: dict) -> str:
    lines = [
        "# Many partitions",
        "",
        f"`{payload['command']}`",
        "",
        f"{payload['date']}, commit {payload['commit']}, {payload['rows']:,} rows, "
        f"{payload['updates']:,} updates + {payload['inserts']:,} inserts in the upsert.",
        "",
        f"- before: `{payload['uptime before']}`",
        f"- after: `{payload['uptime after']}`",
        "",
        "| partitions | table | first load s | / plain Spark | upsert s | files (load, upsert) |",
        "| ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for partitions, run in payload["runs"].items():
        spark = run.get("plain spark load")
        if spark:
            lines.append(f"| {partitions} | plain Spark parquet | {spark['seconds']} | 1.00 | | "
                         f"{spark['files']} |")  # fmt: skip
        for table in run["tables"]:
            ratio = f"{table['load']['seconds'] / spark['seconds']:.2f}" if spark else ""
            lines.append(
                f"| {partitions} | {table['table']} | {table['load']['seconds']} | {ratio} | "
                f"{table['upsert']['seconds']} | {table['load']['files']}, "
                f"{table['upsert']['files']} |"
            )
    counts = list(payload["runs"])
    if len(counts) == 2:
        many, few = (payload["runs"][c]["tables"] for c in counts)
        lines += ["", f"Upsert into {counts[0]} partitions / into {counts[1]}:", ""]
        for a, b in zip(many, few, strict=True):
            ratio = a["upsert"]["seconds"] / b["upsert"]["seconds"]
            lines.append(f"- {a['table']}: {ratio:.2f}x")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = parse_args(argv)
    owned = args.workdir is None
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-partitions-")).resolve()
    root.mkdir(parents=True, exist_ok=True)
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    payload: dict = {
        "benchmark": "many_partitions",
        "command": " ".join([".venv/bin/python", "bench/many_partitions.py", *sys.argv[1:]]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": repo_commit(),
        "rows": args.rows,
        "updates": args.updates,
        "inserts": args.inserts,
        "uptime before": uptime(),
        "cores": os.cpu_count(),
        "memory_bytes": memory_total_bytes(),
        "runs": {},
    }
    spark = build_spark(args.master, "hoodie-bench-many-partitions")
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for partitions in args.partition_counts:
            run: dict = {"tables": []}
            if not args.no_spark:
                run["plain spark load"] = spark_load(spark, args, partitions, root)
                print(f"  plain Spark {partitions}: {run['plain spark load']}", file=sys.stderr,
                      flush=True)  # fmt: skip
            for kind in args.type_list:
                for version in args.version_list:
                    run["tables"].append(hoodie_run(spark, args, partitions, kind, version, root))
            payload["runs"][str(partitions)] = run
    finally:
        spark.stop()
        if owned:
            shutil.rmtree(root, ignore_errors=True)
    payload["uptime after"] = uptime()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(payload))
    print(markdown(payload))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where does an upsert's time go? Phase timings for the same workload as upsert_cow.py.

Wraps (at run time, without touching hoodie/) the steps of `WriteClient._write` with timers and
swaps in a write handle that records, per Spark task, how long each step of a file group's
merge takes. The Spark jobs are lazy, so a driver phase's time includes the Spark work its
first action triggers: that is noted next to each phase.

    .venv/bin/python bench/profile_upsert.py --rows 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import upsert_cow as bench  # noqa: E402

from hoodie.write import client as client_mod  # noqa: E402
from hoodie.write.merge_handle import CopyOnWriteHandle  # noqa: E402

PHASES = {
    "_writer_schema": "driver: schema check, reads the timeline",
    "_check_keys_and_partitions": "Spark: 1st action, generates + caches the input (prepared)",
    "file_system_view": "driver: list files of the table",
    "_profile": "Spark: index lookup (key scan + join), caches tagged",
    "_average_record_size": "driver: reads commit metadata",
    "plan_inserts": "driver: bin-packing",
    "_start_instant": "driver: rollback check, new requested instant",
    "_complete": "driver: complete the instant",
    "_write_partition_metadata": "driver",
    "_write_file_groups": "Spark: shuffle to file groups + applyInArrow merge/write",
    "_finalize": "driver: list partitions, delete strays",
    "__init__": "driver: WriteClient construction",
    "_prepare": "driver: builds the key columns (lazy)",
    "tag_location": "driver: builds the index join (lazy)",
    "DataFrame.persist": "driver: marks prepared/tagged for caching",
    "DataFrame.unpersist": "driver: drops the caches at the end",
    "DataFrame.filter": "driver: builds filters (lazy)",
}
_timings: dict[str, float] = defaultdict(float)


def _timed(name, fn):
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _timings[name] += time.perf_counter() - t0

    return wrapper


class TimedHandle(CopyOnWriteHandle):
    """The same handle; appends per-step seconds of each file group to a JSONL file."""

    def __call__(self, key, incoming):
        import json as _json
        import os as _os
        import posixpath as _pp
        import time as _time

        steps = {}
        t = _time.perf_counter()
        target = self.targets[key[0].as_py() if hasattr(key[0], "as_py") else key[0]]
        rows_in = incoming.num_rows
        incoming = self._deduplicate(incoming)
        steps["deduplicate"] = _time.perf_counter() - t
        t = _time.perf_counter()
        stored = self._read_previous(target)
        steps["read_previous"] = _time.perf_counter() - t
        t = _time.perf_counter()
        output, stat = self._merge(target, incoming, stored)
        steps["merge"] = _time.perf_counter() - t
        t = _time.perf_counter()
        self._write(target, output, stat)
        steps["write_parquet"] = _time.perf_counter() - t
        record = {
            "pid": _os.getpid(),
            "file_id": target.file_id,
            "incoming": rows_in,
            "stored": 0 if stored is None else stored.num_rows,
            "written": output.num_rows,
            "end": _time.time(),
            **steps,
        }
        log = _pp.join(_pp.dirname(self.storage.base_path), "task_timings.jsonl")
        with open(log, "a") as handle:
            handle.write(_json.dumps(record) + "\n")
        import pyarrow as _pa

        return _pa.table({"stat": [_json.dumps(__import__("dataclasses").asdict(stat))]})


def install() -> None:
    wc = client_mod.WriteClient
    for name in (
        "_writer_schema",
        "_check_keys_and_partitions",
        "_profile",
        "_average_record_size",
        "_start_instant",
        "_complete",
        "_write_partition_metadata",
        "_write_file_groups",
        "_finalize",
        "__init__",
        "_prepare",
    ):
        setattr(wc, name, _timed(name, getattr(wc, name)))
    client_mod.plan_inserts = _timed("plan_inserts", client_mod.plan_inserts)
    original_view = client_mod.HoodieTable.file_system_view
    client_mod.HoodieTable.file_system_view = _timed("file_system_view", original_view)
    client_mod.CopyOnWriteHandle = TimedHandle
    client_mod.tag_location = _timed("tag_location", client_mod.tag_location)
    try:
        from pyspark.sql.classic.dataframe import DataFrame
    except ImportError:  # pragma: no cover - pyspark 3
        from pyspark.sql import DataFrame
    DataFrame.persist = _timed("DataFrame.persist", DataFrame.persist)
    DataFrame.unpersist = _timed("DataFrame.unpersist", DataFrame.unpersist)
    DataFrame.filter = _timed("DataFrame.filter", DataFrame.filter)


def report(label: str, total: float, task_log: Path) -> dict:
    phases = dict(_timings)
    _timings.clear()
    accounted = sum(phases.values())
    print(f"\n{label}: {total:.2f}s")
    for name, seconds in sorted(phases.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<28}{seconds:8.2f}s  {100 * seconds / total:5.1f}%  {PHASES.get(name, '')}")
    print(f"  {'(rest of _write)':<28}{total - accounted:8.2f}s")
    tasks = []
    if task_log.exists():
        tasks = [json.loads(line) for line in task_log.read_text().splitlines()]
        task_log.unlink()
    if tasks:
        sums = defaultdict(float)
        for t in tasks:
            for step in ("deduplicate", "read_previous", "merge", "write_parquet"):
                sums[step] += t[step]
        in_handle = sum(sums.values())
        print(
            f"  file-group tasks: {len(tasks)} in {len({t['pid'] for t in tasks})} worker(s); "
            f"handle time summed over tasks {in_handle:.2f}s (2 run at a time)"
        )
        for step, seconds in sums.items():
            print(f"    {step:<16}{seconds:8.2f}s")
    return {"total": total, "phases": phases, "tasks": tasks}


def baselines(spark, table, rows, partitions, updates, inserts) -> dict:
    """Costs of pieces of the upsert on their own, to compare with the phases above."""
    from pyspark.sql import functions as F

    from hoodie.fs_view import CommittedInstants
    from hoodie.index.simple import KeySource, existing_keys
    from hoodie.schema import PARTITION_PATH, RECORD_KEY

    def clock(label, action):
        t0 = time.perf_counter()
        action()
        seconds = time.perf_counter() - t0
        print(f"  {label:<62}{seconds:8.2f}s")
        return seconds

    base_files = table.file_system_view().latest_base_files()
    paths = [table.storage.uri(f.relative_path) for f in base_files]
    print("\nbaselines (not part of any upsert):")
    return {
        "generate_initial_input_noop": clock(
            f"generate the {rows:,}-row initial input (noop sink)",
            lambda: (
                bench.initial_rows(spark, rows, partitions)
                .write.format("noop")
                .mode("overwrite")
                .save()
            ),
        ),
        "generate_batch_input_noop": clock(
            f"generate the {updates + inserts:,}-row batch input (noop sink)",
            lambda: (
                bench.batch_rows(spark, rows, partitions, updates, inserts)
                .write.format("noop")
                .mode("overwrite")
                .save()
            ),
        ),
        "index_key_scan_python": clock(
            f"index key scan, hoodie's Python mapInArrow reader ({len(base_files)} files)",
            lambda: (
                existing_keys(
                    spark,
                    table.storage,
                    [KeySource(f.partition_path, f.file_id, f.relative_path) for f in base_files],
                    CommittedInstants.of(table.timeline()),
                    8,
                )
                .write.format("noop")
                .mode("overwrite")
                .save()
            ),
        ),
        "index_key_scan_spark_parquet": clock(
            "same keys via spark.read.parquet + _metadata.file_name",
            lambda: (
                spark.read.parquet(*paths)
                .select(RECORD_KEY, PARTITION_PATH, F.col("_metadata.file_name"))
                .write.format("noop")
                .mode("overwrite")
                .save()
            ),
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--update-fraction", type=float, default=0.1)
    parser.add_argument("--insert-fraction", type=float, default=0.1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", default=None, help="optional JSON with the raw timings")
    args = parser.parse_args()

    from hoodie import HoodieTable, WriteConfig

    install()
    rows, partitions = args.rows, args.partitions
    updates = int(round(rows * args.update_fraction))
    inserts = int(round(rows * args.insert_fraction))
    workdir = Path(tempfile.mkdtemp(prefix="hoodie-profile-"))
    path = workdir / "table"
    task_log = workdir / "task_timings.jsonl"
    spark = bench.build_spark(args.master)
    out = {
        "rows": rows,
        "partitions": partitions,
        "updates": updates,
        "inserts": inserts,
        "load_average_before": os.getloadavg(),
    }
    try:
        cfg = WriteConfig.build(
            "bench", record_key="id", partition_path="part", precombine_field="ts"
        )
        table = HoodieTable.for_write(str(path), cfg)
        load = bench.initial_rows(spark, rows, partitions)
        t0 = time.perf_counter()
        table.upsert(load, cfg)
        out["initial_load"] = report("initial load", time.perf_counter() - t0, task_log)
        out["baselines"] = baselines(spark, table, rows, partitions, updates, inserts)
        batch = bench.batch_rows(spark, rows, partitions, updates, inserts)
        t0 = time.perf_counter()
        table.upsert(batch, cfg)
        out["upsert"] = report("upsert batch", time.perf_counter() - t0, task_log)
    finally:
        spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    out["load_average_after"] = os.getloadavg()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

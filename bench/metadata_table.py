"""Benchmark: what keeping the metadata table costs a write, and what listing through it saves.

A `--rows` (100,000) copy-on-write table of version 8 in `--partitions` (200) partitions, then
`--writes` (20) small upserts (`--batch` rows, 100, spread over every partition), once with
the writers' `hoodie.metadata.enable=true` (the version 8 default: one metadata delta commit
per write, its own compaction, clean and archival after) and once with `false`. Reported: the
median and total seconds of the upserts (each includes its inline services), and the time to
plan a snapshot read (`plan_read`: the listing and the file-system view) through the metadata
table against listing storage, best of `--repeats`.

    .venv/bin/python bench/metadata_table.py                   # ~3 minutes
    .venv/bin/python bench/metadata_table.py --rows 20000 --writes 5 --partitions 20   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from hoodie import HoodieTable, WriteConfig
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.read.options import ReadOptions
    from hoodie.read.planner import plan_read

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    schema = "id long, dt string, ts long, v string"

    def rows(start: int, count: int, ts: int) -> list[tuple]:
        return [(i, f"p{i % args.partitions:04d}", ts, f"v{i}-{ts}")
                for i in range(start, start + count)]  # fmt: skip

    results = {}
    root = tempfile.mkdtemp(prefix="bench-mdt-")
    try:
        for enabled in ("true", "false"):
            path = os.path.join(root, f"mdt-{enabled}")
            config = WriteConfig.build("bench", "id", "dt", "ts", options={
                "hoodie.write.table.version": "8", "hoodie.metadata.enable": enabled,
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
            results[f"hoodie.metadata.enable={enabled}"] = {
                "upsert median s": round(statistics.median(seconds), 3),
                "upserts total s": round(sum(seconds), 2),
                "plan_read best s": plans if enabled == "true" else plans["storage"],
            }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"args": vars(args), "results": results}, indent=2))


if __name__ == "__main__":
    main()

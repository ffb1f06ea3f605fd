"""Benchmark: the BLOOM index's lookup against SIMPLE's key scan, in files read and seconds.

A `--rows` (1,000,000) non-partitioned copy-on-write table grown by `--loads` (10) writes of
new random keys (uuid-like: every file group's key range spans nearly the whole key space, so
ranges prune nothing and only bloom filters can), each load its own file groups
(`hoodie.parquet.small.file.limit=0`). Then the lookup of a 1% upsert's keys (`--fraction`),
two shapes:

- `spread`: keys drawn from the whole table (every file group holds some);
- `recent`: keys of the last load only (late updates of recent data).

For each shape, the stored-key lookup of each index over the table's latest slices, as its
tagging job runs it: SIMPLE's `existing_keys` (the key column of every slice, filtered in the
tasks to the batch's keys), BLOOM's `locate_keys_by_bloom` (what a batch whose keys the driver
holds takes: one job, each task checking a footer's range and filter, then reading the key
column of the files left) and `locate_by_bloom` (`BLOOM (join)`: larger batches; ranges in a
job, keys paired with files by a broadcast join, then filters and key columns by file).
Files are counted through `TracingFileIO` (footers: `parquet_file`;
key columns: SIMPLE's `parquet_file` reads, BLOOM's `read_parquet` of the key column); seconds
are the best of `--repeats`. Both must find the same keys.

    .venv/bin/python bench/bloom_lookup.py                  # 1,000,000 rows (~5 min)
    .venv/bin/python bench/bloom_lookup.py --rows 50000     # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter

import pyarrow as pa


def _keys(rng: random.Random, n: int) -> list[str]:
    return [f"{rng.getrandbits(128):032x}" for _ in range(n)]


def _reads(trace: str, since: int) -> tuple[int, Counter[str]]:
    with open(trace) as handle:
        lines = handle.read().splitlines()
    calls = Counter(line.split("\t", 1)[0] for line in lines[since:])
    return len(lines), calls


def _files(trace: str, since: int, op: str) -> int:
    with open(trace) as handle:
        lines = handle.read().splitlines()[since:]
    # (a call's keyword arguments follow its name: "read_parquet,columns=[...]")
    return len(
        {line.split("\t", 1)[1] for line in lines if line.split("\t", 1)[0].split(",")[0] == op}
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=None, help="write the numbers as JSON here")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    from hoodie import HoodieTable, WriteConfig
    from hoodie.fs_view import FileSystemView
    from hoodie.index.bloom import locate_by_bloom, locate_keys_by_bloom
    from hoodie.index.keys import KeySource
    from hoodie.index.simple import existing_keys
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.storage import TracingFileIO, load_file_io

    root = tempfile.mkdtemp(prefix="hoodie-bloom-bench-")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "3g")
        .config("spark.log.level", "ERROR")
        .getOrCreate()
    )
    path = os.path.join(root, "t")
    options = {
        "hoodie.index.type": "BLOOM",  # each load: new keys, ruled out by the filters
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.datasource.write.operation": "insert",
        "hoodie.datasource.insert.dup.policy": "drop",
    }
    cfg = WriteConfig.build("bench", record_key="id", precombine_field="ts", options=options)
    table = HoodieTable.for_write(path, cfg)
    rng = random.Random(args.seed)
    per_load = args.rows // args.loads
    loads: list[list[str]] = []
    started = time.perf_counter()
    for _ in range(args.loads):
        keys = _keys(rng, per_load)
        loads.append(keys)
        batch = pa.table({"id": keys, "ts": [1] * len(keys), "v": ["x" * 40] * len(keys)})
        table.write(spark.createDataFrame(batch.to_pandas()), cfg)
    load_seconds = time.perf_counter() - started

    trace = os.path.join(root, "trace")
    open(trace, "w").close()
    storage = TracingFileIO(load_file_io(path), trace)
    meta_client = HoodieTableMetaClient.load(load_file_io(path))
    view = FileSystemView(meta_client.storage, meta_client.timeline())
    slices = [g.latest_slice for g in view.file_groups() if g.latest_slice is not None]
    sources = [KeySource.of(s, with_logs=False) for s in slices]
    wanted_n = int(args.rows * args.fraction)
    everything = [k for load in loads for k in load]
    shapes = {
        "spread": rng.sample(everything, wanted_n),
        "recent": rng.sample(loads[-1], min(wanted_n, len(loads[-1]))),
    }
    report: dict[str, object] = {
        "rows": args.rows,
        "file_groups": len(sources),
        "load_seconds": round(load_seconds, 1),
        "lookup_keys": wanted_n,
    }
    for shape, keys in shapes.items():
        wanted = pa.array(keys, pa.string())
        frame = spark.createDataFrame([(k, "") for k in keys], "_hoodie_record_key string, "
                                      "_hoodie_partition_path string")  # fmt: skip
        frame = frame.cache()
        frame.count()
        results = {}
        batch_keys = pa.table({"_hoodie_record_key": wanted,
                               "_hoodie_partition_path": [""] * len(keys)})  # fmt: skip
        for index in ("SIMPLE", "BLOOM", "BLOOM (join)"):
            best, found, files = float("inf"), -1, {}
            for _ in range(args.repeats):
                since, _ = _reads(trace, 0)
                t0 = time.perf_counter()
                if index == "SIMPLE":
                    located = existing_keys(spark, storage, sources, view.committed, 200, wanted)
                elif index == "BLOOM":
                    located = locate_keys_by_bloom(
                        spark, batch_keys, storage, sources, view.committed, 200,
                        global_lookup=False,
                    )  # fmt: skip
                else:
                    located = locate_by_bloom(spark, frame, storage, sources, view.committed,
                                              200, global_lookup=False)  # fmt: skip
                found = located.count()
                best = min(best, time.perf_counter() - t0)
                key_op = "parquet_file" if index == "SIMPLE" else "read_parquet"
                files = {
                    "footers_read": 0
                    if index == "SIMPLE"
                    else _files(trace, since, "parquet_file"),
                    "key_columns_read": _files(trace, since, key_op),
                }
            results[index] = {"seconds": round(best, 2), "found": found, **files}
        assert all(r["found"] == len(keys) for r in results.values()), results
        report[shape] = results
        frame.unpersist()
    print(json.dumps(report, indent=2))
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=2)
    spark.stop()
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

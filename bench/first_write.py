"""Benchmark: what a process's first lake write waits for, with and without the Python
workers started during the session's start-up (`environment._warm_workers`).

Each run is a fresh child process, as each `dbt run` is: it builds the adapter's session
(`environment.spark_session`: Spark, the Hive metastore, the data source; with the warm-up,
the Python workers beside them), then bulk inserts `--rows` (10) rows into a new table twice
(two tables). The two ways take turns, `--repeats` (3) runs each. Reported per run: the
start-up's seconds, the first and second writes' seconds and the start-up plus first write
(what a one-model `dbt run` waits before its model is done); then the medians per way.

    .venv/bin/python bench/first_write.py                  # ~4 minutes on 2 cores
    .venv/bin/python bench/first_write.py --repeats 1      # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

KEYS = ("startup", "first", "second")


def child(rows: int, warm: bool) -> None:
    from dbt.adapters.hoodie import environment
    from dbt.adapters.hoodie.credentials import HoodieCredentials

    if not warm:
        environment._warm_workers = lambda *args: None  # the session as it was before
    from hoodie import HoodieTable, WriteConfig

    root = tempfile.mkdtemp(prefix="first-write-")
    creds = HoodieCredentials(
        schema="bench", master="local[2]", warehouse_dir=f"{root}/lake",
        metastore_dir=f"{root}/metastore", live_progress=False,
        spark_conf={"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"},
    )  # fmt: skip
    started = time.monotonic()
    spark = environment.spark_session(creds)
    times = {"startup": time.monotonic() - started}
    config = WriteConfig.build("t", record_key="id")
    for name in ("first", "second"):
        batch = spark.sql(f"select id, concat('n', id) as name from range({rows})")
        began = time.monotonic()
        HoodieTable.for_write(f"{root}/{name}", config).bulk_insert(batch)
        times[name] = time.monotonic() - began
    print("RESULT " + json.dumps(times), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", choices=("warm", "cold"))
    args = parser.parse_args()
    if args.child:
        child(args.rows, args.child == "warm")
        return
    results: dict[str, list[dict[str, float]]] = {"cold": [], "warm": []}
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)", flush=True)
    for repeat in range(args.repeats):
        for way in ("cold", "warm"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", way, "--rows", str(args.rows)],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            times = json.loads(out.split("RESULT ", 1)[1])
            results[way].append(times)
            print(f"{way} {repeat + 1}: start-up {times['startup']:.1f} s, first write "
                  f"{times['first']:.1f} s, second {times['second']:.1f} s; start-up + first "
                  f"{times['startup'] + times['first']:.1f} s", flush=True)  # fmt: skip
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    for way, runs in results.items():
        medians = {k: statistics.median(r[k] for r in runs) for k in KEYS}
        total = statistics.median(r["startup"] + r["first"] for r in runs)
        print(f"median {way}: start-up {medians['startup']:.1f} s, first write "
              f"{medians['first']:.1f} s, second {medians['second']:.1f} s; start-up + first "
              f"{total:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()

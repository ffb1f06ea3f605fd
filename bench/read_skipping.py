"""Benchmark: data skipping on reads (`hoodie.enable.data.skipping`).

Builds a copy-on-write table of `--rows` rows in `--partitions` partitions with one bulk insert
(keys are zero-padded, so a bulk insert's key order is the ids' order; `ts` grows with the id,
like event times; `amount` does not), files rolling over at `--max-file-size`. Then measures,
each the best of `--repeats` after one warm-up, `HoodieTable.read(filters=...)` collected, with
skipping on and off:
- `point_by_key`: `id = <one key>`;
- `one_percent_ts`: `ts` in a range holding 1% of the rows (a column clustered with the key);
- `one_percent_amount`: `amount` in a range holding about 1% (not clustered: every file holds
  some, so no file can be skipped; the cost of looking);
- `full_scan`: no filter (a noop write of every row).
For each: rows, the files Spark scanned (`DataFrame.inputFiles`), seconds. It also times the
footer reads data skipping does on the driver (threads) against an empty Spark job of the same
number of tasks, the floor of reading them in Spark tasks instead.

    .venv/bin/python bench/read_skipping.py                 # 1,000,000 rows (~3 min)
    .venv/bin/python bench/read_skipping.py --rows 20000    # smoke run
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from upsert_cow import BASE_TS, build_spark, repo_commit, write_json  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "read_skipping.json"
OFF = {"hoodie.enable.data.skipping": "false"}


def best(repeats: int, run) -> tuple[float, object]:
    run()  # warm-up
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--max-file-size", type=int, default=1024 * 1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    from pyspark.sql import functions as F

    from hoodie import HoodieTable, WriteConfig
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.read.data_skipping import read_footers

    spark = build_spark(args.master, "hoodie-bench-read-skipping")
    work = Path(tempfile.mkdtemp(prefix="read-skipping-"))
    path = str(work / "t")
    try:
        width = len(str(args.rows))
        ids = spark.range(0, args.rows, 1, 4)
        data = ids.select(
            F.lpad(F.col("id").cast("string"), width, "0").alias("key"),
            F.concat(F.lit("p"), F.pmod(F.col("id"), F.lit(args.partitions)).cast("string")).alias(
                "part"
            ),
            (F.lit(BASE_TS) + F.col("id") * 1000).alias("ts"),
            (F.pmod(F.col("id") * 7919, F.lit(100_000)) / F.lit(100.0)).alias("amount"),
            F.concat(F.lit("customer-"), F.col("id").cast("string")).alias("name"),
        )
        cfg = WriteConfig.build(
            "skipping", record_key="key", partition_path="part", precombine_field="ts",
            options={
                "hoodie.parquet.max.file.size": str(args.max_file_size),
                "hoodie.parquet.small.file.limit": "0",
            },
        )  # fmt: skip
        table = HoodieTable.for_write(path, cfg)
        start = time.perf_counter()
        table.bulk_insert(data, cfg)
        build_seconds = time.perf_counter() - start
        base_files = [
            f"{f.partition_path}/{f.name}" for f in table.file_system_view().latest_base_files()
        ]

        point = [("key", "=", str(args.rows // 2 + 7).zfill(width))]
        low = BASE_TS + (args.rows // 2) * 1000
        one_percent_ts = [("ts", ">=", low), ("ts", "<", low + args.rows // 100 * 1000)]
        one_percent_amount = [("amount", ">=", 500.0), ("amount", "<", 510.0)]
        cases = {
            "point_by_key": point,
            "one_percent_ts": one_percent_ts,
            "one_percent_amount": one_percent_amount,
        }
        results: dict[str, dict] = {}
        for name, filters in cases.items():
            for skipping in (True, False):
                options = None if skipping else OFF

                def run(filters=filters, options=options):
                    df = table.read(spark, options, filters=filters)
                    return len(df.collect()), len(df.inputFiles())

                seconds, (count, files) = best(args.repeats, run)
                label = f"{name}{'' if skipping else '_no_skipping'}"
                results[label] = {"rows": count, "files_scanned": files, "seconds": seconds}
                print(f"{label:34s} rows {count:>9,}  files {files:>4}  {seconds:7.3f} s")

        def full():
            df = table.read(spark)
            df.write.format("noop").mode("overwrite").save()
            return args.rows, len(df.inputFiles())

        seconds, (count, files) = best(args.repeats, full)
        results["full_scan"] = {"rows": count, "files_scanned": files, "seconds": seconds}
        print(f"{'full_scan':34s} rows {count:>9,}  files {files:>4}  {seconds:7.3f} s")

        storage = HoodieTableMetaClient.open(path).storage
        footer_seconds, _ = best(args.repeats, lambda: read_footers(storage, base_files))
        slots = min(16, len(base_files))

        def empty_job():
            spark.range(0, slots, 1, slots).mapInArrow(lambda it: it, "id long").collect()

        job_seconds, _ = best(args.repeats, empty_job)
        print(
            f"footers of {len(base_files)} files on the driver: {footer_seconds:.3f} s; "
            f"an empty Spark job of {slots} tasks: {job_seconds:.3f} s"
        )
        payload = {
            "rows": args.rows,
            "partitions": args.partitions,
            "max_file_size": args.max_file_size,
            "base_files": len(base_files),
            "build_seconds": build_seconds,
            "results": results,
            "footers_on_driver_seconds": footer_seconds,
            "empty_spark_job_seconds": job_seconds,
            "commit": repo_commit(),
        }
        write_json(args.out, payload)
        print(json.dumps({"out": str(args.out)}))
        return payload
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

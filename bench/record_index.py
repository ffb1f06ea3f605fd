"""Benchmark: what keeping the metadata table's record index costs a write.

Small writes (`--parts small`): a `--rows` (100,000) copy-on-write table of version 8 in
`--partitions` (20) partitions, then `--writes` (10) upserts of `--batch` (100) rows, half
updates and half inserts: with the metadata table's `files` partition only, with the record
index too (`hoodie.metadata.record.index.enable=true`; so few keys are written from the driver),
and with the record index written by its Spark job even so (the driver path turned off), which
is what the driver path saves. Reported: the median and total seconds of the upserts.

A large write (`--parts large`): compare.py's FACT workload (`compare/workload.py`: 22 columns,
`--large-partitions` (30) days) of `--large-rows` (1,000,000) rows bulk inserted, then its first
upsert batch (10%: half updates, half inserts), `--large-repeats` (3) times per setting (files;
files + record index), each on a new table; then (`--parts build`) the record index turned on
for the loaded table by the upsert. Reported: the medians of each write's seconds; of its
write job (`WriteExecutor.write_routed`, `.bulk_insert`: with the record index each task hands
over its files' inserted keys, in key files beyond a few hundred); of the driver's metadata
table commit (`update_metadata_table`) and, of that, the record index's Spark job
(`write_with_spark`: key files read, keys grouped by file group, one log file written a group,
or the partition's base files when it is built); and of the metadata table's services after.
The record index is checked whole after each upsert (every key once, where the table holds it).

    .venv/bin/python bench/record_index.py                     # ~6 minutes on 2 quiet cores
    .venv/bin/python bench/record_index.py --rows 20000 --writes 3 --large-rows 20000 \\
        --large-repeats 1                                      # smoke
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from metadata_table import bench_session, timers  # noqa: E402

RECORD_INDEX = {"hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "true"}
SMALL_SETTINGS = {
    "files": {"hoodie.metadata.enable": "true"},
    "files + record_index (driver)": RECORD_INDEX,
    "files + record_index (Spark job)": RECORD_INDEX,
}
LARGE_SETTINGS = {"files": {"hoodie.metadata.enable": "true"}, "files + record_index": RECORD_INDEX}
# What a write is timed by: (name, module, owner, attribute).
TIMED = [
    ("write job", "hoodie.write.executor", "WriteExecutor", "write_routed"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "bulk_insert"),
    ("metadata table commit", "hoodie.transaction.transaction", None, "update_metadata_table"),
    ("record index job", "hoodie.transaction.metadata_writer", None, "write_with_spark"),
    ("metadata table services", "hoodie.client.table_service_runner", "TableServiceRunner",
     "metadata_table_services"),
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="small,large,build")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--writes", type=int, default=10)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--large-rows", type=int, default=1_000_000)
    parser.add_argument("--large-partitions", type=int, default=30)
    parser.add_argument("--large-repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",")}
    spark = bench_session()
    results = {}
    root = tempfile.mkdtemp(prefix="bench-ri-")
    try:
        if "small" in parts:
            results["small writes"] = small_writes(spark, args, root)
        if parts & {"large", "build"}:
            results["large write"] = large_write(spark, args, root, parts)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"args": vars(args), "results": results}, indent=2))


def small_writes(spark, args, root: str) -> dict:
    from hoodie import HoodieTable, WriteConfig
    from hoodie.transaction import record_index

    schema = "id long, dt string, ts long, v string"

    def rows(keys, ts: int) -> list[tuple]:
        return [(k, f"p{k % args.partitions:04d}", ts, f"v{k}-{ts}") for k in keys]

    out = {}
    for setting, options in SMALL_SETTINGS.items():
        path = os.path.join(root, f"small-{len(out)}")
        config = WriteConfig.build("bench", "id", "dt", "ts", options={
            "hoodie.write.table.version": "8", **options,
        })  # fmt: skip
        table = HoodieTable.for_write(path, config)
        table.bulk_insert(spark.createDataFrame(rows(range(args.rows), 0), schema), config)
        keys = record_index.DRIVER_KEYS
        if setting.endswith("(Spark job)"):
            record_index.DRIVER_KEYS = -1
        seconds = []
        try:
            step = max(args.rows // args.batch, 1)
            for write in range(1, args.writes + 1):
                updates = [(i * step + write) % args.rows for i in range(args.batch // 2)]
                inserts = range(args.rows + write * args.batch, args.rows + write * args.batch
                                + args.batch - len(updates))  # fmt: skip
                frame = spark.createDataFrame(rows([*updates, *inserts], write), schema)
                started = time.perf_counter()
                table.upsert(frame, config)
                seconds.append(time.perf_counter() - started)
        finally:
            record_index.DRIVER_KEYS = keys
        out[setting] = {
            "upsert median s": round(statistics.median(seconds), 3),
            "upserts total s": round(sum(seconds), 2),
            "upserts s": [round(x, 2) for x in seconds],
        }
    return out


def check_record_index(spark, path: str) -> int:
    """Every key of the table once in the record index, where the table holds it: their count."""
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.naming import parse_base_file_name
    from hoodie.table_metadata import TableMetadata

    metadata = TableMetadata.open(HoodieTableMetaClient.open(path))
    stored = {k: (r.partition, r.file_id)
              for k, r in metadata.read_partition("record_index").items()}  # fmt: skip
    read = (spark.read.format("hoodie").load(path)
            .select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")
            .toArrow())  # fmt: skip
    table = {}
    for key, partition, name in zip(*(read.column(i).to_pylist() for i in range(3)), strict=True):
        parsed = parse_base_file_name(name)
        table[key] = (partition, parsed.file_id if parsed else name)
    assert stored == table, f"{path}: the record index is not the table's"
    return len(stored)


def large_write(spark, args, root: str, parts: set[str]) -> dict:
    from compare.workload import KEY, PARTITION_COLUMN, PRECOMBINE, generate

    from hoodie import HoodieTable, WriteConfig

    data = Path(root) / "data"
    workload = generate(args.large_rows, 1, args.seed, data, args.large_partitions)
    load, upsert = workload.steps[0], workload.steps[1]
    settings = dict(LARGE_SETTINGS) if "large" in parts else {}
    if "build" in parts:
        settings["record_index built by the upsert"] = LARGE_SETTINGS["files"]
    runs: dict[str, list[dict]] = {setting: [] for setting in settings}
    for repeat in range(args.large_repeats):
        for number, (setting, options) in enumerate(settings.items()):
            path = os.path.join(root, f"large-{repeat}-{number}")

            def config(given):
                return WriteConfig.build("bench_fact", KEY, PARTITION_COLUMN, PRECOMBINE,
                                         options={"hoodie.write.table.version": "8", **given})

            table = HoodieTable.for_write(path, config(options))
            run = {}
            for step, write in ((load, table.bulk_insert), (upsert, table.upsert)):
                given = options
                if step is upsert and setting.endswith("built by the upsert"):
                    given = RECORD_INDEX
                frame = spark.read.parquet(*step.files)
                with timers(TIMED) as seconds:
                    started = time.perf_counter()
                    result = write(frame, config(given))
                    total = time.perf_counter() - started
                run[step.name] = {"write s": total, **seconds,
                                  "files": result.files_written}  # fmt: skip
            want = load.rows + upsert.inserts
            if setting != "files":
                assert check_record_index(spark, path) == want, setting  # not timed
            runs[setting].append(run)
            print(f"  {setting}, run {repeat + 1}: " + "; ".join(
                f"{name} {r['write s']:.1f}s (metadata table commit "
                f"{r['metadata table commit']:.2f}s, record index job "
                f"{r['record index job']:.2f}s)" for name, r in run.items()
            ), file=sys.stderr, flush=True)  # fmt: skip
            shutil.rmtree(path, ignore_errors=True)
    out = {"rows": args.large_rows, "partitions": args.large_partitions,
           "load rows": load.rows, "upsert rows": upsert.rows}  # fmt: skip
    for setting, done in runs.items():
        out[setting] = {
            step: {key: round(statistics.median(r[step][key] for r in done), 3)
                   for key in done[0][step]}
            for step in (load.name, upsert.name)
        }  # fmt: skip
    return out


if __name__ == "__main__":
    main()

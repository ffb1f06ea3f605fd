"""Benchmark: record index lookups in Spark tasks, reading the HFiles by ranges against reading
them whole, in bytes read and seconds.

A table of ours gets a record index of `--keys` (1,000,000) random keys in `--file-groups`
(10: what Apache Hudi sizes a 1M-record index at, its minimum) file groups, written with the
project's HFile writer in Apache Hudi 1.2's layout with its 1 MiB blocks
(`tests/record_index_tables.add_record_index`: one base HFile per file group, no logs). Then
`locate_in_record_index` looks up `--fraction` (1%) of the keys, drawn at random, and all of
them, and `--few` (10) keys, each as a Spark job counting what it finds, the best of
`--repeats` runs:

- `ranged`: what the code does: each file group's task opens its base HFile by ranged reads
  (the trailer and load-on-open section, then the blocks its keys fall in, or the file whole
  once those make up half of it);
- `whole`: the tasks read each base HFile whole first (the previous reader:
  `storage.read_bytes`), then look up the same way.

Bytes are counted by the tasks' `FileIO` (appended to a trace file, as `TracingFileIO` does),
for the `.hfile` base files: what `read_range` returned (ranged), or each file's size once per
task that opened it (whole). Local disk, page cache warm after the first run: the seconds are
CPU (decompressing and decoding blocks, Avro records), the bytes what an object store would
be asked for.

    .venv/bin/python bench/record_index_lookup.py                 # 1M keys (~3 minutes)
    .venv/bin/python bench/record_index_lookup.py --keys 20000    # a smoke run
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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hoodie.storage import LocalFileIO  # noqa: E402


class CountingIO(LocalFileIO):
    """A local `FileIO` that appends `<bytes>\\t<path>` for every `.hfile` byte it reads to a
    trace file (from the driver and from Spark tasks: it pickles with the trace's path). With
    `whole`, a ranged read first reads the whole file, once per process and run, and serves
    ranges from it (the tasks' previous reader, `read_bytes`)."""

    _files: dict[tuple[str, str], bytes] = {}

    def __init__(self, base_uri: str, trace: str, whole: bool):
        super().__init__(base_uri)
        self.trace, self.whole = trace, whole

    def __reduce__(self) -> tuple[Callable[..., CountingIO], tuple[Any, ...]]:
        return (CountingIO, (self.base_uri, self.trace, self.whole))

    def subfolder(self, relative: str) -> CountingIO:
        return CountingIO(os.path.join(self.base_uri, self.inside(relative)), self.trace,
                          self.whole)  # fmt: skip

    def _count(self, relative: str, size: int) -> None:
        if relative.endswith(".hfile"):
            with open(self.trace, "a") as handle:
                handle.write(f"{size}\t{relative}\n")

    def read_range(self, relative: str, start: int, length: int) -> bytes:
        if not self.whole:
            data = super().read_range(relative, start, length)
            self._count(relative, len(data))
            return data
        key = (self.trace, self.full_path(relative))
        if key not in CountingIO._files:
            CountingIO._files.clear()  # one file at a time, as a task reads them
            CountingIO._files[key] = super().read_bytes(relative)
            self._count(relative, len(CountingIO._files[key]))
        return CountingIO._files[key][start : start + length]


def _bytes(trace: str) -> int:
    with open(trace) as handle:
        return sum(int(line.split("\t", 1)[0]) for line in handle if line.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--file-groups", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--few", type=int, default=10, help="keys of the smallest lookup")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--out", default=None, help="write the numbers as JSON here")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession
    from record_index_tables import add_record_index

    from hoodie import HoodieTable, WriteConfig
    from hoodie.index.record_index import RecordIndexLookup, locate_in_record_index
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.table_metadata import TableMetadata

    root = tempfile.mkdtemp(prefix="hoodie-record-index-bench-")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "3g")
        .config("spark.log.level", "ERROR")
        .getOrCreate()
    )
    path = os.path.join(root, "t")
    options = {"hoodie.write.table.version": "8", "hoodie.metadata.enable": "true"}
    cfg = WriteConfig.build("bench", record_key="id", partition_path="dt", options=options)
    HoodieTable.for_write(path, cfg).upsert(
        spark.createDataFrame([(1, "a")], "id int, dt string"), cfg
    )
    rng = random.Random(args.seed)
    groups = [(f"p={i}", f"{rng.getrandbits(128):032x}"[:8] + f"-0000-4000-8000-{i:012d}-0")
              for i in range(50)]  # fmt: skip
    keys = sorted({f"{rng.getrandbits(64):016x}-{i}" for i in range(args.keys)})
    placed: Mapping[str, tuple[str, str]] = {k: groups[rng.randrange(len(groups))] for k in keys}
    started = time.perf_counter()
    add_record_index(path, placed, args.file_groups)
    build_seconds = time.perf_counter() - started
    index_files = list(Path(path, ".hoodie/metadata/record_index").glob("*.hfile"))
    report: dict[str, object] = {
        "keys": len(keys),
        "file_groups": args.file_groups,
        "hfile_bytes": sum(f.stat().st_size for f in index_files),
        "build_seconds": round(build_seconds, 1),
    }
    shapes = {
        f"{args.few} keys": rng.sample(keys, args.few),
        f"{args.fraction:.0%}": rng.sample(keys, int(len(keys) * args.fraction)),
        "100%": keys,
    }
    for shape, wanted in shapes.items():
        frame = spark.createDataFrame([(k,) for k in wanted], "k string").cache()
        frame.count()
        results = {}
        for mode in ("ranged", "whole"):
            best, read = float("inf"), 0
            for repeat in range(args.repeats):
                trace = os.path.join(root, f"trace-{shape}-{mode}-{repeat}")
                open(trace, "w").close()
                storage = CountingIO(path, trace, mode == "whole")
                metadata = TableMetadata.open(HoodieTableMetaClient.load(storage))
                assert metadata is not None
                lookup = RecordIndexLookup.of(metadata)
                assert lookup is not None
                t0 = time.perf_counter()
                located = locate_in_record_index(frame, lookup, "k")
                found = located.count()
                best = min(best, time.perf_counter() - t0)
                read = _bytes(trace)
                assert found == len(wanted), (shape, mode, found)
            results[mode] = {"seconds": round(best, 2), "hfile_bytes_read": read}
        report[shape] = {"lookup_keys": len(wanted), **results}
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

"""Benchmark: issue 41's "Done when" for indexes at scale: what a 1% upsert's tagging reads with
SIMPLE, BLOOM and RECORD_INDEX, and how few file slices a point read and a 1% filter scan.

The table: compare.py's FACT rows (`compare/workload.make_rows`: 22 columns, `event_date` the
partition over `--partitions` (30) days), `--rows` (10,000,000) of them bulk inserted into a
copy-on-write table of version 8 with the metadata table's `column_stats`, `bloom_filters` and
`record_index` partitions on, base files rolling over at `--max-file-size` (8 MiB: several
files a day, so pruning inside a partition can show; Hudi's 120 MiB would make one file a day).
Unlike the FACT load, the rows go in in id order and `ts` (the precombine field, epoch
milliseconds) grows with the id, as event times grow with event ids. Two key shapes
(`--keys`):

- `time`: the record key is the id, assigned in time order as event ids are: a day's keys are
  one range, and the bulk insert, which sorts each partition by key, cuts it into files of
  consecutive key ranges, so footer key ranges (and column stats of `id`) prune;
- `random`: the id is scrambled (splitmix64 of the sequence number), as uuids are: a day's keys
  span the whole key space. (The bulk insert still sorts each partition by key, so its files
  hold disjoint ranges of it; a point read by key is pruned by bloom filters, and `ts` is no
  longer clustered with the files inside a day.)

For each key shape, a 1% upsert (`--fraction`), half updates and half new keys (new keys in the
3 newest days, skewed to the newest as compare.py's FACT batches put them), of two shapes
(`--shapes`):

- `recent`: late updates to recent data: the updates' days drawn from the 3 newest with the same
  skew (59%, 26%, 16%), the keys uniformly within the day;
- `spread`: updates drawn uniformly over the whole table (every file gets some).

Each with `hoodie.index.type` SIMPLE, BLOOM and RECORD_INDEX, each on its own copy of the loaded
table, written through a `TracingFileIO` (as bench/bloom_lookup.py counts files) that follows
the metadata table's folder too and records the bytes of ranged and whole reads. Reported per
index: the data files the tagging read, by kind: parquet footers (`parquet_file` while tagging
or planning routing units), key columns (`read_parquet` of the key column; SIMPLE tags inside
its write tasks, whose `keys.stored_keys` opens the file and reads its key column by batches:
the write job's `parquet_file` calls), whole data files (`read_parquet` of every column: the
merges of the files rewritten), the metadata table's bytes read while tagging, by partition
(the record index's HFiles and log files); files rewritten and written new; seconds of the
tagging (SIMPLE: of planning its routing units, its tagging runs inside the write job) and of
the whole upsert. The three indexes must leave the same table (row count and a sum of a
64-bit hash of every data column, computed in Spark).

Then reads of the table RECORD_INDEX upserted with the first shape, through
`HoodieTable.read(spark, filters=...)` as bench/read_skipping.py reads, with data skipping on
and off (`hoodie.enable.data.skipping`): a point read by key, 1% of `ts` (clustered with the
key, from the middle of the table, which the recent updates did not touch), 1% of
`customer_id` (not clustered: no file can be skipped), and a full scan; each timed as a noop
write of every column of the rows read (best of `--repeats` after a warm-up), with its rows
and the files Spark scanned (`DataFrame.inputFiles`).

    .venv/bin/python bench/indexes_at_scale.py                       # 10M rows (~30 min)
    .venv/bin/python bench/indexes_at_scale.py --rows 100000 --repeats 1   # smoke (~3 min)

Output: bench/results/indexes_at_scale_<size>.json (`--out`) and markdown tables on stdout;
the load average at the start and the end is recorded with the results.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare.workload import (  # noqa: E402
    BASE_TS,
    KEY,
    PARTITION_COLUMN,
    PRECOMBINE,
    RECENT_INSERT_PARTITIONS,
    ROWS_PER_INPUT_FILE,
    SCHEMA,
    _mix,
    make_rows,
    zipf_weights,
)
from metadata_table import INDEXES, bench_session, timers  # noqa: E402
from read_skipping import OFF, best  # noqa: E402
from record_index import RECORD_INDEX  # noqa: E402
from upsert_cow import repo_commit, write_json  # noqa: E402

from hoodie.storage import TracingFileIO  # noqa: E402

KEY_COLUMN = "_hoodie_record_key"
KEY_READ = f"read_parquet,columns=['{KEY_COLUMN}']"
INDEX_TYPES = ("SIMPLE", "BLOOM", "RECORD_INDEX")
# Phases of an upsert, marked in the trace files around these driver calls (the calls' Spark
# jobs finish inside them): (phase, module, owner, attribute).
PHASES = [
    ("tagging", "hoodie.write.operations.base", "WriteOperation", "tag_and_place"),
    ("routing plan", "hoodie.index.simple", "SimpleIndex", "plan_routing"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "write_file_groups"),
    ("write job", "hoodie.write.executor", "WriteExecutor", "write_routed"),
]
TIMED = [(phase, *where) for phase, *where in PHASES]


class MeteredFileIO(TracingFileIO):
    """`TracingFileIO` that also traces the subfolders it hands out (the metadata table's
    storage is `storage.subfolder(".hoodie/metadata")`) into a trace file of their own, and
    records the bytes of each ranged or whole read (`read_range\\t<path>\\t<bytes>`)."""

    def __init__(self, inner, trace: str):
        super().__init__(inner, trace)

    def __reduce__(self):
        return (MeteredFileIO, (self._inner, self._trace))

    def subfolder(self, relative: str) -> MeteredFileIO:
        name = relative.strip("/").replace("/", "_")
        return MeteredFileIO(self._inner.subfolder(relative), f"{self._trace}.{name}")

    def _record(self, op: str, relative: str, size: int) -> None:
        with open(self._trace, "a") as handle:
            handle.write(f"{op}\t{relative}\t{size}\n")

    def read_range(self, relative: str, start: int, length: int) -> bytes:
        data = self._inner.read_range(relative, start, length)
        self._record("read_range", relative, len(data))
        return data

    def read_bytes(self, relative: str) -> bytes:
        data = self._inner.read_bytes(relative)
        self._record("read_bytes", relative, len(data))
        return data


def _mark(traces: list[str], line: str) -> None:
    for trace in traces:
        with open(trace, "a") as handle:
            handle.write(line + "\n")


@contextlib.contextmanager
def phases(traces: list[str], targets=PHASES):
    """Marker lines `#begin <phase>` / `#end <phase>` in each of `traces` around every call of
    `targets` on the driver, so the lines Spark tasks append in between are that phase's."""
    with contextlib.ExitStack() as stack:
        for name, module, owner, attribute in targets:
            target = getattr(importlib.import_module(module), owner)
            original = target.__dict__[attribute]

            def marked(*args, _fn=original, _name=name, **kwargs):
                _mark(traces, f"#begin {_name}")
                try:
                    return _fn(*args, **kwargs)
                finally:
                    _mark(traces, f"#end {_name}")

            stack.enter_context(mock.patch.object(target, attribute, marked))
        yield


def _phased(trace: str) -> list[tuple[str, str, str, int]]:
    """(phase, operation, path, bytes) of each traced call; phase "" outside every marked
    call, else the outermost."""
    out, stack = [], []
    if not os.path.exists(trace):
        return out
    with open(trace) as handle:
        for line in handle.read().splitlines():
            if line.startswith("#begin "):
                stack.append(line[len("#begin ") :])
            elif line.startswith("#end "):
                stack.pop()
            elif line:
                op, path, *size = line.split("\t")
                out.append((stack[0] if stack else "", op, path, int(size[0]) if size else 0))
    return out


def data_reads(trace: str, index: str) -> dict[str, Any]:
    """The data files an upsert read, by kind (distinct files), from its trace."""
    calls = [c for c in _phased(trace) if c[2].endswith(".parquet") and not c[2].startswith(".")]
    tagging = ("tagging", "routing plan")

    def files(keep) -> set[str]:
        return {path for phase, op, path, _ in calls if keep(phase, op)}

    footers = files(lambda phase, op: phase in tagging and op == "parquet_file")
    keys = files(lambda phase, op: op == KEY_READ)
    if index == "SIMPLE":  # its write tasks tag: keys.stored_keys opens each file's key column
        keys |= files(lambda phase, op: phase == "write job" and op == "parquet_file")
    whole = files(lambda phase, op: op == "read_parquet")
    raw = Counter(f"{phase or 'other'}: {op}" for phase, op, _, _ in calls)
    return {
        "footers_read": len(footers),
        "key_columns_read": len(keys),
        "whole_files_read": len(whole),
        "whole_files_read_while_tagging": len(
            files(lambda phase, op: phase in tagging and op == "read_parquet")
        ),
        "calls": dict(sorted(raw.items())),
    }


def metadata_reads(trace: str) -> dict[str, Any]:
    """Bytes of the metadata table read while tagging and in the whole upsert, by partition."""
    tagging: Counter[str] = Counter()
    total: Counter[str] = Counter()
    tagging_files: dict[str, set[str]] = defaultdict(set)
    for phase, op, path, size in _phased(trace):
        if op not in ("read_range", "read_bytes"):
            continue
        partition = path.split("/", 1)[0] if "/" in path else path
        total[partition] += size
        if phase == "tagging":
            tagging[partition] += size
            tagging_files[partition].add(path)
    return {
        "tagging_bytes": dict(tagging),
        "tagging_files": {k: len(v) for k, v in tagging_files.items()},
        "upsert_bytes": dict(total),
    }


# -- data ------------------------------------------------------------------------------------
def scrambled(seq):
    """Random-looking positive int64 ids, one per sequence number (splitmix64: a bijection of
    64-bit numbers, halved to stay positive; collisions among 10M are a 1e-5 chance, and the
    row count check would catch one)."""
    import numpy as np

    return (_mix(seq) >> np.uint64(1)).astype(np.int64)


def fact_rows(seq, parts, step: int, rng, keys: str):
    """FACT rows of sequence numbers `seq` (in days `parts`); the id is `seq` (time keys) or
    scrambled; `ts` of the load grows with the sequence number (milliseconds)."""
    import pyarrow as pa

    rows = make_rows(seq, parts, step, rng)
    if keys == "random":
        rows = rows.set_column(0, KEY, pa.array(scrambled(seq)))
    if step == 0:
        rows = rows.set_column(2, PRECOMBINE, pa.array(BASE_TS + seq))
    return rows


def write_load(folder: Path, rows: int, partitions: int, keys: str, seed: int) -> list[str]:
    """The load's input files, in id order, ROWS_PER_INPUT_FILE rows a file."""
    import numpy as np
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for start in range(0, rows, ROWS_PER_INPUT_FILE):
        seq = np.arange(start, min(rows, start + ROWS_PER_INPUT_FILE), dtype=np.int64)
        path = folder / f"part-{len(files):04d}.parquet"
        pq.write_table(fact_rows(seq, (seq * partitions) // rows, 0, rng, keys), path)
        files.append(str(path))
    return files


def write_upsert(
    folder: Path, rows: int, partitions: int, keys: str, shape: str, fraction: float, seed: int
) -> dict[str, Any]:
    """A 1% upsert batch: half updates (of `shape`), half new keys in the newest days."""
    import numpy as np
    import pyarrow.parquet as pq

    rng = np.random.default_rng([seed, ["recent", "spread"].index(shape)])
    total = int(rows * fraction)
    n_updates = total // 2
    recent_count = min(RECENT_INSERT_PARTITIONS, partitions)
    recent = np.arange(partitions - recent_count, partitions)
    weights = zipf_weights(recent_count)
    per_day = -(-rows // partitions)  # the load's days: seq * partitions // rows
    if shape == "recent":
        wanted = rng.multinomial(n_updates, weights)
        chosen = []
        for day, take in zip(recent, wanted, strict=True):
            lo, hi = -(-day * rows // partitions), -(-(day + 1) * rows // partitions)
            chosen.append(rng.choice(np.arange(lo, hi), min(int(take), hi - lo), replace=False))
        upd = np.concatenate(chosen).astype(np.int64)
    else:
        upd = rng.choice(rows, n_updates, replace=False).astype(np.int64)
    ins = np.arange(rows, rows + total - len(upd), dtype=np.int64)
    seq = np.concatenate([upd, ins])
    parts = np.concatenate([(upd * partitions) // rows, rng.choice(recent, len(ins), p=weights)])
    order = rng.permutation(len(seq))
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(fact_rows(seq[order], parts[order], 1, rng, keys), folder / "batch.parquet")
    return {
        "rows": len(seq),
        "updates": len(upd),
        "inserts": len(ins),
        "days_updated": len(np.unique((upd * partitions) // rows)),
        "rows_per_day": per_day,
        "files": [str(folder / "batch.parquet")],
    }


# -- the table -------------------------------------------------------------------------------
def write_config(max_file_size: int, index: str | None = None):
    from hoodie import WriteConfig

    options = {
        "hoodie.write.table.version": "8",
        **RECORD_INDEX,
        **INDEXES,
        "hoodie.parquet.max.file.size": str(max_file_size),
        # Hudi's defaults' ratio (100 of 120 MiB): files below it take inserts
        "hoodie.parquet.small.file.limit": str(max_file_size * 5 // 6),
    }
    if index is not None:
        options["hoodie.index.type"] = index
    return WriteConfig.build("bench_indexes", KEY, PARTITION_COLUMN, PRECOMBINE, options=options)


def traced_table(path: str, trace: str):
    """The table at `path`, every storage call (the metadata table's too) traced."""
    from hoodie import HoodieTable
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.storage import load_file_io

    properties = HoodieTableMetaClient.open(path).properties
    return HoodieTable(HoodieTableMetaClient(MeteredFileIO(load_file_io(path), trace), properties))


def table_checksum(spark, path: str) -> dict[str, Any]:
    """Rows, distinct keys and the sum of a 64-bit hash of every data column (no meta column:
    instants and file names differ between copies), in Spark."""
    from pyspark.sql import functions as F

    from hoodie import HoodieTable

    frame = HoodieTable.open(path).read(spark)
    columns = [F.col(f.name) for f in SCHEMA]
    row = frame.agg(
        F.count(F.lit(1)).alias("rows"),
        F.count_distinct(F.col(KEY)).alias("keys"),
        F.sum(F.xxhash64(*columns).cast("decimal(38,0)")).alias("hash"),
    ).collect()[0]
    return {"rows": row["rows"], "distinct_keys": row["keys"], "hash_sum": str(row["hash"])}


def base_files(path: str) -> dict[str, int]:
    """Latest base files per partition."""
    from hoodie import HoodieTable

    per: Counter[str] = Counter()
    for f in HoodieTable.open(path).file_system_view().latest_base_files():
        per[f.partition_path] += 1
    return dict(per)


def run_upsert(spark, base: str, work: Path, label: str, index: str, batch, args) -> dict:
    """One upsert of `batch` with `index` on a fresh copy of the table at `base`."""
    path = str(work / f"t-{label}-{index}")
    shutil.rmtree(path, ignore_errors=True)
    started = time.perf_counter()
    shutil.copytree(base, path)
    copy_seconds = time.perf_counter() - started
    trace = str(work / f"trace-{label}-{index}")
    metadata_trace = f"{trace}..hoodie_metadata"  # (MeteredFileIO.subfolder's)
    for t in (trace, metadata_trace):
        if os.path.exists(t):
            os.remove(t)
    files = base_files(path)  # before the upsert
    table = traced_table(path, trace)
    frame = spark.read.parquet(*batch["files"])
    with timers(TIMED) as seconds, phases([trace, metadata_trace]):
        started = time.perf_counter()
        result = table.upsert(frame, write_config(args.max_file_size, index))
        total = time.perf_counter() - started
    stats = result.metadata.write_stats()
    rewritten = [s for s in stats if s.prev_commit not in (None, "", "null")]
    out = {
        "upsert_seconds": round(total, 2),
        "tagging_seconds": round(seconds["tagging"] + seconds["routing plan"], 2),
        "write_job_seconds": round(seconds["write job"], 2),
        "tags_in_write_tasks": seconds["routing plan"] > 0 and seconds["tagging"] == 0,
        "copy_seconds": round(copy_seconds, 1),
        "updates": result.num_updates,
        "inserts": result.num_inserts,
        "files_rewritten": len(rewritten),
        "files_new": len(stats) - len(rewritten),
        "partitions_written": len(result.partitions),
        "base_files_in_them": sum(files.get(p, 0) for p in result.partitions),
        **data_reads(trace, index),
        "metadata_table": metadata_reads(metadata_trace),
    }
    out["checksum"] = table_checksum(spark, path)
    return {"path": path, **out}


def run_reads(spark, path: str, rows: int, keys: str, args) -> dict[str, dict]:
    import numpy as np

    from hoodie import HoodieTable

    table = HoodieTable.open(path)
    seq = rows // 2 + 7
    key = int(scrambled(np.array([seq]))[0]) if keys == "random" else seq
    low = BASE_TS + rows // 2
    cases = {
        "point read by key": [(KEY, "=", key)],
        "1% of ts (clustered)": [("ts", ">=", low), ("ts", "<", low + rows // 100)],
        "1% of customer_id (not clustered)": [("customer_id", "<", 50_000)],
        "full scan": None,
    }
    out: dict[str, dict] = {}
    for name, filters in cases.items():
        for skipping in (True, False) if filters else (True,):
            options = None if skipping else OFF

            def read(filters=filters, options=options):
                df = table.read(spark, options, filters=filters)
                df.write.format("noop").mode("overwrite").save()
                return df

            seconds, df = best(args.repeats, read)
            count = df.count() if filters else rows  # (not timed)
            files = len(df.inputFiles())
            label = name if skipping else f"{name}, no skipping"
            out[label] = {"rows": count, "files_scanned": files, "seconds": round(seconds, 3)}
            print(f"  {label:45s} rows {count:>10,}  files {files:>5}  {seconds:7.3f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
    return out


def _size(rows: int) -> str:
    for unit, scale in (("M", 1_000_000), ("K", 1_000)):
        if rows >= scale and rows % scale == 0:
            return f"{rows // scale}{unit}"
    return str(rows)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def markdown(report: dict) -> str:
    lines = []
    for keys, variant in report["variants"].items():
        lines.append(f"\n{keys} keys: {variant['base_files']} base files in "
                     f"{variant['partitions']} partitions, bulk insert "
                     f"{variant['bulk_insert_seconds']} s\n")  # fmt: skip
        lines.append("| upsert | index | files in its partitions | footers | key columns | "
                     "whole files (merge) | record index read while tagging | rewritten + new "
                     "| tagging s | upsert s | same table |")  # fmt: skip
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for shape, runs in variant["upserts"].items():
            for index, r in runs["indexes"].items():
                ri = r["metadata_table"]["tagging_bytes"].get("record_index", 0)
                ri_files = r["metadata_table"]["tagging_files"].get("record_index", 0)
                tagging = f"{r['tagging_seconds']}"
                if r["tags_in_write_tasks"]:
                    tagging += " (routing; tags in the write job)"
                lines.append(
                    f"| {shape} ({runs['batch']['updates']:,} upd in "
                    f"{runs['batch']['days_updated']} days) | {index} | "
                    f"{r['base_files_in_them']} | {r['footers_read']} | "
                    f"{r['key_columns_read']} | {r['whole_files_read']} | "
                    f"{f'{_mb(ri)} of {ri_files} files' if ri else '-'} | "
                    f"{r['files_rewritten']} + {r['files_new']} | "
                    f"{tagging} | {r['upsert_seconds']} | {r['same_table']} |"
                )
        if variant.get("reads"):
            lines.append("\n| read | rows | files scanned | seconds | without skipping |")
            lines.append("|---|---:|---:|---:|---|")
            reads = variant["reads"]
            for label, r in reads.items():
                if label.endswith("no skipping"):
                    continue
                off = reads.get(f"{label}, no skipping")
                other = f"{off['files_scanned']} files, {off['seconds']} s" if off else ""
                lines.append(f"| {label} | {r['rows']:,} | {r['files_scanned']} | "
                             f"{r['seconds']} | {other} |")  # fmt: skip
    return "\n".join(lines)


def _listed(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def run_variant(spark, work: Path, keys: str, args) -> dict[str, Any]:
    """Load, the upserts of every shape with every index, and the reads, for one key shape."""
    from hoodie import HoodieTable

    print(f"{keys} keys: generating {args.rows:,} rows", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    load = write_load(work / f"data-{keys}" / "load", args.rows, args.partitions, keys,
                      args.seed)  # fmt: skip
    generate_seconds = time.perf_counter() - t0
    base = str(work / f"base-{keys}")
    config = write_config(args.max_file_size)
    table = HoodieTable.for_write(base, config)
    t0 = time.perf_counter()
    table.bulk_insert(spark.read.parquet(*load), config)
    load_seconds = time.perf_counter() - t0
    files = base_files(base)
    print(f"  bulk insert {load_seconds:.1f} s: {sum(files.values())} base files",
          file=sys.stderr, flush=True)  # fmt: skip
    variant: dict[str, Any] = {
        "generate_seconds": round(generate_seconds, 1),
        "bulk_insert_seconds": round(load_seconds, 1),
        "partitions": len(files),
        "base_files": sum(files.values()),
        "base_files_per_partition": sorted(set(files.values())),
        "table_bytes": sum(p.stat().st_size for p in Path(base).rglob("*.parquet")),
        "upserts": {},
    }
    read_path = None
    for shape in _listed(args.shapes):
        folder = work / f"data-{keys}" / f"upsert-{shape}"
        batch = write_upsert(folder, args.rows, args.partitions, keys, shape, args.fraction,
                             args.seed)  # fmt: skip
        runs: dict[str, dict] = {}
        for index in _listed(args.indexes):
            run = run_upsert(spark, base, work, f"{keys}-{shape}", index, batch, args)
            path = run.pop("path")
            runs[index] = run
            print(f"  {shape} {index}: upsert {run['upsert_seconds']} s, tagging "
                  f"{run['tagging_seconds']} s, footers {run['footers_read']}, key "
                  f"columns {run['key_columns_read']}, whole {run['whole_files_read']},"
                  f" rewritten {run['files_rewritten']}, {run['checksum']}",
                  file=sys.stderr, flush=True)  # fmt: skip
            if index == "RECORD_INDEX" and read_path is None and keys in _listed(args.reads):
                read_path = path
            else:
                shutil.rmtree(path, ignore_errors=True)
        sums = {json.dumps(r["checksum"], sort_keys=True) for r in runs.values()}
        want = args.rows + batch["inserts"]
        for r in runs.values():
            r["same_table"] = len(sums) == 1 and r["checksum"]["rows"] == want
            r["checksum"]["expected_rows"] = want
        variant["upserts"][shape] = {
            "batch": {k: v for k, v in batch.items() if k != "files"},
            "indexes": runs,
        }
    if read_path is not None:
        print(f"  reads of {read_path}", file=sys.stderr, flush=True)
        variant["reads_table"] = "the table after the first shape's RECORD_INDEX upsert"
        variant["reads_table_base_files"] = sum(base_files(read_path).values())
        variant["reads"] = run_reads(spark, read_path, args.rows, keys, args)
        shutil.rmtree(read_path, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)
    return variant


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=30)
    parser.add_argument("--max-file-size", type=int, default=8 * 1024 * 1024)
    parser.add_argument("--keys", default="time,random", help="time, random or both")
    parser.add_argument("--shapes", default="recent,spread", help="recent, spread or both")
    parser.add_argument("--indexes", default=",".join(INDEX_TYPES))
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--reads", default="time", help="key shapes whose tables are read")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--workdir", default=None, help="default: a temporary folder, removed")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or HERE / "results" / f"indexes_at_scale_{_size(args.rows)}.json"
    load_start = os.getloadavg()
    started = time.perf_counter()
    spark = bench_session()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-indexes-"))
    report: dict[str, Any] = {
        "benchmark": "indexes_at_scale",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": repo_commit(),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": {
            "cpus": os.cpu_count(),
            "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30),
            "platform": platform.platform(),
        },
        "load_average_start": [round(x, 2) for x in load_start],
        "variants": {},
    }
    try:
        for keys in _listed(args.keys):
            report["variants"][keys] = run_variant(spark, work, keys, args)
            report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
            report["total_seconds"] = round(time.perf_counter() - started, 1)
            write_json(out, report)  # after each variant: a cut-short run keeps what it did
    finally:
        spark.stop()
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(markdown(report))
    print(json.dumps({"out": str(out), "total_seconds": report["total_seconds"],
                      "load_average": [report["load_average_start"],
                                       report["load_average_end"]]}))  # fmt: skip
    return report


if __name__ == "__main__":
    main()

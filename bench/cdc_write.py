"""Benchmark: what CDC logging costs a copy-on-write rewrite of one file group (risk R5 of
docs/design/incremental-pipelines.md), in seconds, without Spark: the merge handle's task
(`CopyOnWriteHandle.write`: read the base file, merge, write the new one) with CDC off and
with each supplemental logging mode.

A file group of `--rows` (1,000,000) rows (a bigint key, partition, ordering field, a string
and a double), then an upsert batch updating `--updates` (10%) of its keys and inserting as
many new ones; the best of `--repeats` (3) per setting, each on a fresh copy of the group.

    .venv/bin/python bench/cdc_write.py
    .venv/bin/python bench/cdc_write.py --rows 100000 --repeats 1     # a smoke run
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from hoodie.index.placement import FileGroupTarget
from hoodie.markers import WriteMarkers
from hoodie.merge import MergeMode
from hoodie.naming import new_file_id
from hoodie.options.table import CdcSupplementalLoggingMode as Mode
from hoodie.schema import RECORD_KEY
from hoodie.storage import load_file_io
from hoodie.write.cdc_writer import CdcLogging
from hoodie.write.merge_handle import CopyOnWriteHandle

DATA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("ts", pa.int64()),
                  ("name", pa.string()), ("amount", pa.float64())])  # fmt: skip


def _batch(ids: np.ndarray, ts: int) -> pa.Table:
    n = len(ids)
    amounts = np.random.default_rng(ts).random(n)
    table = pa.table({
        "id": pa.array(ids), "dt": pa.array(["a"] * n), "ts": pa.array(np.full(n, ts)),
        "name": pa.array([f"n{i}" for i in ids]), "amount": pa.array(amounts),
    }, schema=DATA)  # fmt: skip
    return table.append_column(RECORD_KEY, pa.array(ids.astype(str)))


def _handle(root: Path, instant: str, cdc: CdcLogging | None) -> CopyOnWriteHandle:
    storage = load_file_io(str(root))
    return CopyOnWriteHandle(
        storage=storage, instant=instant, targets={}, data_schema=DATA,
        record_key_fields=("id",), merge_mode=MergeMode.event_time("ts"),
        compression="snappy", markers=WriteMarkers(storage, instant), cdc=cdc,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--updates", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    n, m = args.rows, int(args.rows * args.updates)
    with tempfile.TemporaryDirectory() as scratch:
        seed = Path(scratch) / "seed"
        file_id = new_file_id()
        stat = _handle(seed, "20260101000000000", None).write(
            FileGroupTarget("a", file_id, None, None), _batch(np.arange(n), 1)
        )
        assert stat is not None and stat.path is not None
        upsert = _batch(np.concatenate([rng.choice(n, m, replace=False), np.arange(n, n + m)]), 2)
        target = FileGroupTarget("a", file_id, stat.path, "20260101000000000")
        print(f"file group of {n:,} rows; upsert of {m:,} updates and {m:,} inserts")
        for mode in (None, *Mode):
            best, size = float("inf"), 0
            for attempt in range(args.repeats):
                root = Path(scratch) / f"run-{mode}-{attempt}"
                shutil.copytree(seed, root)
                cdc = CdcLogging(mode, "bench") if mode is not None else None
                handle = _handle(root, "20260101000000001", cdc)
                started = time.perf_counter()
                written = handle.write(target, upsert)
                best = min(best, time.perf_counter() - started)
                assert written is not None
                size = sum((written.cdc_stats or {}).values())
                shutil.rmtree(root)
            name = mode.value if mode is not None else "CDC off"
            print(f"  {name:<18} {best:6.2f} s   .cdc file {size / 1e6:6.1f} MB")


if __name__ == "__main__":
    main()

"""Benchmark: merging a file slice's versions under each merge mode (`hoodie.merge.merge_slice`,
what a merge-on-read read and compaction run per slice), in seconds.

`--rows` (1,000,000) versions of `--keys` (200,000) keys in random order, a bigint ordering
field and two data columns half null; the best of `--repeats` (3) per mode. The whole-row
modes take one sort; the column-wise payloads fold the versions by rank (a key's first
versions, then all second versions, ...), one `coalesce` per column each.

    .venv/bin/python bench/merge_modes.py
    .venv/bin/python bench/merge_modes.py --rows 100000 --keys 20000     # a smoke run
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from hoodie.merge import INSTANT, SEQUENCE, MergeMode, Payload, merge_slice


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    n = args.rows
    halves = rng.random((2, n)) < 0.5
    versions = pa.table({
        "id": pa.array(rng.integers(0, args.keys, n).astype(str)),
        "ts": pa.array(rng.integers(0, 100, n)),
        "a": pa.array(rng.random(n), mask=halves[0]),
        "b": pa.array(rng.integers(0, 9, n), mask=halves[1]),
        SEQUENCE: pa.array(np.arange(n)),
        INSTANT: pa.array(["t"] * n),
    })  # fmt: skip
    none = pa.table({"id": pa.array([], pa.string()), SEQUENCE: pa.array([], pa.int64())})
    modes = (
        MergeMode.event_time("ts"),
        MergeMode.commit_time("ts"),
        MergeMode.of_payload(Payload.OVERWRITE_NON_DEFAULTS, "ts"),
        MergeMode.of_payload(Payload.PARTIAL_UPDATE, "ts"),
    )
    print(f"{n:,} versions of {args.keys:,} keys")
    for mode in modes:
        best = float("inf")
        for _ in range(args.repeats):
            started = time.perf_counter()
            merged = merge_slice(versions, "id", none, mode)
            best = min(best, time.perf_counter() - started)
        print(f"| {mode.name} | {best:.2f} s | {merged.num_rows:,} rows |")


if __name__ == "__main__":
    main()

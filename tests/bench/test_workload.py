"""The comparison's workload generator (bench/compare/workload.py): how its upsert batches
spread over the partitions. Tiny and quick: part of `make test`, unlike the smoke runs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from compare import workload as wl  # noqa: E402


def _partitions_of(data: Path, step: str) -> np.ndarray:
    days = ds.dataset(data / step, format="parquet").to_table(columns=["event_date"])
    return np.unique(days.column(0).to_numpy(), return_counts=True)[1]


def test_the_even_spread_gives_every_partition_alike(tmp_path):
    """`spread="even"`: each batch's rows (updates and inserts) spread uniformly over every
    partition; the default skews them toward the newest days."""
    even = wl.generate(10_000, 2, 7, tmp_path / "even", partitions=10, spread="even")
    counts = _partitions_of(tmp_path / "even", "upsert_1")
    assert len(counts) == 10 and counts.min() > 0.8 * counts.mean()
    assert even.to_dict()["spread"] == "even"
    inserted = sum(s.inserts for s in even.steps[1:3])
    assert even.expected_rows == 10_000 + inserted - 100  # less the 1% deleted
    wl.generate(10_000, 2, 7, tmp_path / "zipf", partitions=10)
    skewed = _partitions_of(tmp_path / "zipf", "upsert_1")
    assert skewed.max() > 3 * skewed.min()
    with pytest.raises(ValueError, match="spread"):
        wl.generate(3_000, 1, 7, tmp_path / "bad", partitions=3, spread="uniform")

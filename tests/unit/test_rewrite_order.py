"""A copy-on-write rewrite's row order (`replaced_in_place`): the stored rows in their order,
updated in place or removed, then the new keys. The grown bloom filter depends on it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodie.schema import RECORD_KEY
from hoodie.write.merge_handle import replaced_in_place


def _replaced(stored: pa.Table, keys: list[str]) -> pa.Array:
    return pc.is_in(stored.column(RECORD_KEY), value_set=pa.array(keys, pa.string()))


def test_updates_stay_in_place_deletes_go_and_new_keys_follow():
    stored = pa.table({RECORD_KEY: ["a", "b", "c", "d"], "v": [1, 2, 3, 4]})
    fresh = pa.table({RECORD_KEY: ["c", "e", "a"], "v": [30, 50, 10]})  # sorted or not
    out = replaced_in_place(stored, fresh, _replaced(stored, ["a", "c", "d"]))  # d deleted
    assert out.to_pydict() == {RECORD_KEY: ["a", "b", "c", "e"], "v": [10, 2, 30, 50]}


def test_a_key_stored_twice_gets_its_new_version_once():
    stored = pa.table({RECORD_KEY: ["a", "b", "a"], "v": [1, 2, 3]})
    fresh = pa.table({RECORD_KEY: ["a"], "v": [9]})
    out = replaced_in_place(stored, fresh, _replaced(stored, ["a"]))
    assert out.to_pydict() == {RECORD_KEY: ["a", "b"], "v": [9, 2]}


@pytest.mark.parametrize("seed", range(5))
def test_random_batches_give_the_model_order(seed):
    """Against a plain Python model of the same rule, over random stored rows and batches."""
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in rng.permutation(400)[:200]]
    stored = pa.table({RECORD_KEY: keys, "v": list(range(200))})
    updated = set(rng.choice(keys, 60, replace=False).tolist())
    deleted = set(rng.choice(sorted(set(keys) - updated), 20, replace=False).tolist())
    new = [f"n{i}" for i in range(int(rng.integers(0, 30)))]
    batch = sorted(updated) + new
    fresh = pa.table({RECORD_KEY: batch, "v": [1000 + i for i in range(len(batch))]})
    out = replaced_in_place(stored, fresh, _replaced(stored, sorted(updated | deleted)))
    version = dict(zip(batch, range(1000, 1000 + len(batch)), strict=True))
    model = [(k, version.get(k, v)) for k, v in zip(keys, range(200), strict=True)
             if k not in deleted] + [(k, version[k]) for k in new]  # fmt: skip
    assert list(zip(out[RECORD_KEY].to_pylist(), out["v"].to_pylist(), strict=True)) == model

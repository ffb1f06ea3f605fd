"""The merge rule shared by writers and readers: which version of a key wins."""

from __future__ import annotations

import pyarrow as pa

from hoodie.merge import ORDERING, SEQUENCE, drop_deleted, latest_per_key


def _winners(table: pa.Table) -> dict:
    return dict(zip(table["k"].to_pylist(), table["v"].to_pylist()))


def test_larger_ordering_value_wins_and_null_loses():
    t = pa.table({"k": ["a", "a", "a", "b", "b"], "ts": [2, 5, 3, None, 1],
                  "v": ["a2", "a5", "a3", "bnull", "b1"]})  # fmt: skip
    assert _winners(latest_per_key(t, "k", "ts")) == {"a": "a5", "b": "b1"}


def test_ties_and_no_ordering_go_to_the_later_row():
    t = pa.table({"k": ["a", "a", "b", "b"], "ts": [1, 1, 0, 0], "v": ["x", "y", "p", "q"]})
    assert _winners(latest_per_key(t, "k", "ts")) == {"a": "y", "b": "q"}
    assert _winners(latest_per_key(t, "k", None)) == {"a": "y", "b": "q"}


def test_sequence_column_orders_arrivals():
    t = pa.table({"k": ["a", "a"], "v": ["late", "early"], SEQUENCE: [7, 3]})
    assert _winners(latest_per_key(t, "k", None, sequence=SEQUENCE)) == {"a": "late"}


def test_deletes_cancel_earlier_versions_only():
    rows = pa.table({"k": ["a", "a", "b", "c"], "v": ["a0", "a9", "b1", "c1"],
                     SEQUENCE: pa.array([0, 9, 1, 2], pa.int64())})  # fmt: skip
    deletes = pa.table({"k": ["a", "b"], SEQUENCE: pa.array([5, 6], pa.int64())})
    alive = drop_deleted(rows, "k", deletes)
    # a's version after the delete (a re-insert) survives; b is gone; c was never deleted.
    assert sorted(alive["v"].to_pylist()) == ["a9", "c1"]


def test_nested_columns_survive_deletes():
    rows = pa.table({"k": ["a", "b"], "s": [{"x": [1]}, {"x": [2]}],
                     SEQUENCE: pa.array([0, 1], pa.int64())})  # fmt: skip
    alive = drop_deleted(rows, "k", pa.table({"k": ["a"], SEQUENCE: pa.array([5], pa.int64())}))
    assert alive["s"].to_pylist() == [{"x": [2]}]


def test_a_delete_with_an_older_ordering_value_spares_newer_versions():
    rows = pa.table({"k": ["a", "b", "c"], "v": ["a1", "b9", "c5"], "ts": [1, 9, 5],
                     SEQUENCE: pa.array([0, 1, 2], pa.int64())})  # fmt: skip
    deletes = pa.table(
        {
            "k": ["a", "b", "c"],
            SEQUENCE: pa.array([3, 4, 5], pa.int64()),
            # a: newer delete; b: older than the stored ts=9; c: no ordering (Hudi's default 0)
            ORDERING: pa.array([2, 3, None], pa.int64()),
        }
    )
    alive = drop_deleted(rows, "k", deletes, ordering_field="ts")
    assert alive["v"].to_pylist() == ["b9"]
    # Without an ordering field every delete is unconditional.
    assert drop_deleted(rows, "k", deletes).num_rows == 0


def test_the_last_delete_of_a_key_decides():
    rows = pa.table({"k": ["a"], "v": ["a1"], "ts": [5], SEQUENCE: pa.array([0], pa.int64())})
    deletes = pa.table({"k": ["a", "a"], SEQUENCE: pa.array([2, 1], pa.int64()),
                        ORDERING: pa.array([9, 1], pa.int64())})  # fmt: skip
    assert drop_deleted(rows, "k", deletes, ordering_field="ts").num_rows == 0


def test_record_keys_of_stored_rows_match_the_key_generators_format():
    from hoodie.keygen import record_keys_of

    rows = pa.table({"id": [1, 2, None], "kind": ["x", "", "z"]})
    assert record_keys_of(rows, ("id",)).to_pylist() == ["1", "2", None]
    assert record_keys_of(rows, ("id", "kind")).to_pylist() == [
        "id:1,kind:x", "id:2,kind:__empty__", "id:__null__,kind:z",
    ]  # fmt: skip

"""The merge rule shared by writers and readers: which version of a key wins."""

from __future__ import annotations

import pyarrow as pa

from hoodie.merge import INSTANT, ORDERING, SEQUENCE, MergeMode, latest_per_key, merge_slice

BY_TS = MergeMode.event_time("ts")
BY_ARRIVAL = MergeMode.commit_time()


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
    alive = merge_slice(rows, "k", deletes, BY_ARRIVAL)
    # a's version after the delete (a re-insert) survives; b is gone; c was never deleted.
    assert sorted(alive["v"].to_pylist()) == ["a9", "c1"]


def test_nested_columns_survive_deletes():
    rows = pa.table({"k": ["a", "b"], "s": [{"x": [1]}, {"x": [2]}],
                     SEQUENCE: pa.array([0, 1], pa.int64())})  # fmt: skip
    alive = merge_slice(
        rows, "k", pa.table({"k": ["a"], SEQUENCE: pa.array([5], pa.int64())}), BY_ARRIVAL
    )
    assert alive["s"].to_pylist() == [{"x": [2]}]


def _versions(keys, values, ts, instants):
    return pa.table({"k": keys, "v": values, "ts": pa.array(ts, pa.int64()),
                     SEQUENCE: pa.array(range(len(keys)), pa.int64()),
                     INSTANT: instants})  # fmt: skip


def _deletes(keys, ordering, instants):
    return pa.table({"k": keys, SEQUENCE: pa.array(range(100, 100 + len(keys)), pa.int64()),
                     INSTANT: instants, ORDERING: pa.array(ordering, pa.int64())})  # fmt: skip


def test_a_delete_with_an_older_ordering_value_spares_newer_versions():
    rows = _versions(["a", "b", "c"], ["a1", "b9", "c5"], [1, 9, 5], ["t1", "t1", "t1"])
    # a: newer delete; b: older than the stored ts=9; c: no ordering (Hudi's default)
    deletes = _deletes(["a", "b", "c"], [2, 3, None], ["t2", "t2", "t2"])
    assert merge_slice(rows, "k", deletes, BY_TS)["v"].to_pylist() == ["b9"]
    # Without an ordering field every delete is unconditional.
    assert merge_slice(rows, "k", deletes.drop_columns([ORDERING]), BY_TS).num_rows == 0


def test_a_delete_keeps_its_ordering_against_later_versions():
    """Hudi's log merge: a version written after a delete, with a smaller ordering value,
    stays deleted; with a larger one it comes back; a tie goes to the later instant."""
    rows = _versions(["a", "b", "c"], ["a0", "b30", "c20"], [0, 30, 20], ["t3", "t3", "t3"])
    deletes = _deletes(["a", "b", "c"], [20, 20, 20], ["t2", "t2", "t2"])
    assert merge_slice(rows, "k", deletes, BY_TS)["v"].to_pylist() == ["b30", "c20"]
    later = _deletes(["c"], [20], ["t4"])
    assert merge_slice(rows, "k", later, BY_TS)["v"].to_pylist() == ["a0", "b30"]


def _arrivals(keys, values, ts, sequences, instants):
    return pa.table({"k": keys, "v": values, "ts": pa.array(ts, pa.int64()),
                     SEQUENCE: pa.array(sequences, pa.int64()), INSTANT: instants})  # fmt: skip


def _deletes_at(keys, ordering, sequences, instants):
    return pa.table({"k": keys, SEQUENCE: pa.array(sequences, pa.int64()), INSTANT: instants,
                     ORDERING: pa.array(ordering, pa.int64())})  # fmt: skip


def test_a_delete_without_ordering_removes_what_arrived_before_it():
    """Null (Hudi's default Integer 0, the delete operation's): the delete orders by arrival, as
    Apache Hudi's commit-time-ordering delete does, whatever the ordering values before it; a
    version that arrives after it is an insert (what copy-on-write gives); a long 0 is a real
    ordering value."""
    rows = _arrivals(["a", "b", "a"], ["a30", "b5", "a10"], [30, 5, 10], [0, 1, 3],
                     ["t1", "t1", "t3"])  # fmt: skip
    deletes = _deletes_at(["a", "b"], [None, None], [2, 2], ["t2", "t2"])
    # a's ts=30 version arrived before the delete, the ts=10 one after it: a is the latter
    assert _winners(merge_slice(rows, "k", deletes, BY_TS)) == {"a": "a10"}
    before = _deletes_at(["b"], [None], [-1], ["t0"])
    assert _winners(merge_slice(rows, "k", before, BY_TS)) == {"a": "a30", "b": "b5"}
    zero = _deletes_at(["b"], [0], [2], ["t2"])
    assert _winners(merge_slice(rows, "k", zero, BY_TS)) == {"a": "a30", "b": "b5"}


def test_a_stale_delete_after_the_delete_operation_does_not_bring_the_key_back():
    """Found by Apache Hudi 1.2 (`make soak-hudi SEQUENCES=40 SEED=2`): the delete operation,
    then a `_hoodie_is_deleted` row with a smaller ordering value than the stored row. The key
    stays deleted (the ordered delete used to carry the key's deletes as one, its value losing
    to the stored row's and the unordered delete forgotten)."""
    rows = _arrivals(["a"], ["a5"], [5], [0], ["t1"])
    deletes = _deletes_at(["a", "a"], [None, 2], [1, 2], ["t2", "t3"])
    assert merge_slice(rows, "k", deletes, BY_TS).num_rows == 0
    # an ordered delete before the delete operation is gone with what it deleted
    again = _arrivals(["a", "a"], ["a5", "a1"], [5, 1], [0, 3], ["t1", "t4"])
    ordered_first = _deletes_at(["a", "a"], [9, None], [1, 2], ["t2", "t3"])
    assert _winners(merge_slice(again, "k", ordered_first, BY_TS)) == {"a": "a1"}


def test_the_largest_delete_ordering_of_a_key_decides():
    rows = _versions(["a"], ["a1"], [5], ["t1"])
    deletes = _deletes(["a", "a"], [9, 1], ["t2", "t3"])
    assert merge_slice(rows, "k", deletes, BY_TS).num_rows == 0


def test_record_keys_of_stored_rows_match_the_key_generators_format():
    from hoodie.keygen import record_keys_of

    rows = pa.table({"id": [1, 2, None], "kind": ["x", "", "z"]})
    assert record_keys_of(rows, ("id",)).to_pylist() == ["1", "2", None]
    assert record_keys_of(rows, ("id", "kind")).to_pylist() == [
        "id:1,kind:x", "id:2,kind:__empty__", "id:__null__,kind:z",
    ]  # fmt: skip

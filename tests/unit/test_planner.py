"""Insert planning: small files first, then evenly sized new file groups."""

from __future__ import annotations

import math
import re

import pytest

from hoodie.fs_view import BaseFile
from hoodie.index.placement import WorkloadProfile, plan_inserts

MAX = 1000
LIMIT = 600
RECORD = 10  # so a new file holds MAX // RECORD = 100 records


def _base(partition: str, file_id: str, size: int) -> BaseFile:
    return BaseFile(partition, file_id, "20240101000000000", f"{file_id}_0-1-2_x.parquet", size)


def _plan(inserts: dict[str, int], small: dict[str, list[BaseFile]] | None = None, **kw):
    profile = WorkloadProfile()
    for partition, count in inserts.items():
        profile.add(partition, None, count)
    args = {"max_file_size": MAX, "small_file_limit": LIMIT, "average_record_size": RECORD}
    args.update(kw)
    return plan_inserts(profile, small or {}, **args)


def _check_slices(buckets):
    """Each partition's buckets tile [0, 1) in order, and their shares match their records."""
    by_partition: dict[str, list] = {}
    for bucket in buckets:
        by_partition.setdefault(bucket.partition_path, []).append(bucket)
    for group in by_partition.values():
        total = sum(b.records for b in group)
        assert group[0].lower == 0.0
        assert group[-1].upper == 1.0
        for prev, nxt in zip(group, group[1:]):
            assert prev.upper == nxt.lower
        for b in group:
            assert b.lower < b.upper
            assert b.upper - b.lower == pytest.approx(b.records / total)


def test_small_files_filled_first_smallest_first():
    small = {"p": [_base("p", "big", 500), _base("p", "tiny", 100)]}
    buckets = _plan({"p": 50}, small)
    # 'tiny' (100 bytes) takes up to (1000 - 100) / 10 = 90 records: all 50.
    assert [(b.file_id, b.records) for b in buckets] == [("tiny", 50)]
    assert buckets[0].base_file == small["p"][1]
    _check_slices(buckets)


def test_small_files_filled_up_to_max_then_new_groups():
    small = {"p": [_base("p", "a", 100), _base("p", "b", 500)]}
    buckets = _plan({"p": 400}, small)
    # a: (1000-100)//10 = 90, b: (1000-500)//10 = 50, then 260 left -> ceil(260/100) = 3 new
    # groups, evenly 87/87/86.
    assert [(b.file_id, b.records) for b in buckets[:2]] == [("a", 90), ("b", 50)]
    new = buckets[2:]
    assert len(new) == 3
    assert [b.records for b in new] == [87, 87, 86]
    assert all(b.base_file is None for b in new)
    assert len({b.file_id for b in new}) == 3
    for b in new:
        assert re.fullmatch(r"[0-9a-f-]{36}-0", b.file_id)
    assert sum(b.records for b in buckets) == 400
    # No file grows past the max size.
    for b in buckets:
        start = b.base_file.size if b.base_file else 0
        assert start + b.records * RECORD <= MAX
    _check_slices(buckets)


def test_small_files_at_or_over_limit_not_used():
    small = {"p": [_base("p", "at", LIMIT), _base("p", "over", LIMIT + 1), _base("p", "full", MAX)]}
    buckets = _plan({"p": 10}, small)
    assert len(buckets) == 1
    assert buckets[0].base_file is None
    assert buckets[0].file_id not in {"at", "over", "full"}
    assert buckets[0].records == 10


def test_just_under_limit_is_used():
    buckets = _plan({"p": 10}, {"p": [_base("p", "under", LIMIT - 1)]})
    assert [(b.file_id, b.records) for b in buckets] == [("under", 10)]


def test_small_file_limit_zero_disables_filling():
    buckets = _plan({"p": 10}, {"p": [_base("p", "empty", 0)]}, small_file_limit=0)
    assert [b.base_file for b in buckets] == [None]


@pytest.mark.parametrize("count", [1, 99, 100, 101, 250, 1000, 1001, 12345])
def test_new_file_groups_even_spread(count):
    buckets = _plan({"p": count})
    assert len(buckets) == math.ceil(count / 100)
    sizes = [b.records for b in buckets]
    assert sum(sizes) == count
    assert max(sizes) - min(sizes) <= 1
    assert max(sizes) <= 100
    assert sizes == sorted(sizes, reverse=True)
    _check_slices(buckets)


def test_per_file_uses_average_record_size():
    buckets = _plan({"p": 100}, average_record_size=100)  # 10 records per new file
    assert [b.records for b in buckets] == [10] * 10
    _check_slices(buckets)


def test_record_larger_than_max_file_still_one_per_file():
    buckets = _plan({"p": 3}, average_record_size=MAX * 10)
    assert [b.records for b in buckets] == [1, 1, 1]


def test_zero_average_record_size_does_not_divide_by_zero():
    buckets = _plan({"p": 5}, average_record_size=0)
    assert sum(b.records for b in buckets) == 5


def test_partitions_without_inserts_get_no_buckets():
    profile = WorkloadProfile()
    profile.add("only_updates", "fid-0", 7)
    profile.add("a", None, 5)
    profile.add("a", None, 5)  # inserts add up
    profile.add("zero", None, 0)
    assert profile.partitions == ["a", "only_updates", "zero"]
    assert profile.inserts == {"a": 10, "zero": 0}
    assert profile.updates == {"only_updates": {"fid-0": 7}}
    small = {"only_updates": [_base("only_updates", "fid-0", 10)], "zero": [_base("zero", "z", 1)]}
    buckets = plan_inserts(
        profile, small, max_file_size=MAX, small_file_limit=LIMIT, average_record_size=RECORD
    )
    assert {b.partition_path for b in buckets} == {"a"}
    assert sum(b.records for b in buckets) == 10


def test_multiple_partitions_independent():
    small = {"p1": [_base("p1", "s1", 590)], "p2": [_base("p2", "s2", 100)]}
    buckets = _plan({"p2": 30, "p1": 60}, small)
    # Sorted by partition; p1's small file has room for (1000-590)//10 = 41, p2's for 90.
    assert [(b.partition_path, b.file_id, b.records) for b in buckets][:2] == [
        ("p1", "s1", 41),
        ("p1", buckets[1].file_id, 19),
    ]
    assert buckets[1].base_file is None
    assert [(b.partition_path, b.file_id, b.records) for b in buckets[2:]] == [("p2", "s2", 30)]
    # Small files of another partition are never used.
    assert all(
        b.base_file is None or b.base_file.partition_path == b.partition_path for b in buckets
    )
    _check_slices(buckets)


def test_slices_cover_unit_interval_with_many_buckets():
    small = {"p": [_base("p", f"s{i}", 100 + i) for i in range(7)]}
    buckets = _plan({"p": 3333}, small)
    assert buckets[-1].upper == 1.0
    assert sum(b.records for b in buckets) == 3333
    _check_slices(buckets)

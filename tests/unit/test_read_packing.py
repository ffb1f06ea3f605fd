"""Packing file slices into Spark tasks (`hoodie.read.packing`)."""

from __future__ import annotations

from hoodie.read.packing import MAX_PARTITION_BYTES, OPEN_COST_BYTES, pack_splits
from hoodie.read.planner import FileSplit

MB = 1024 * 1024


def _splits(*sizes: int, logs: bool = False) -> list[FileSplit]:
    return [
        FileSplit("p", f"f{i}", f"p/f{i}.parquet", (f"p/.f{i}.log.1_0-1-0",) if logs else (), s)
        for i, s in enumerate(sizes)
    ]


def _ids(tasks: list[list[FileSplit]]) -> list[list[str]]:
    return [[split.file_id for split in task] for task in tasks]


def test_small_slices_share_a_task_per_core():
    # Ten 7 MB slices on 2 cores: Spark's budget is (10 * (7 + 4 MB)) / 2 = 55 MB, five each.
    tasks = pack_splits(_splits(*[7 * MB] * 10), parallelism=2)
    assert [len(task) for task in tasks] == [5, 5]
    assert sorted(f for task in _ids(tasks) for f in task) == sorted(f"f{i}" for i in range(10))


def test_every_slice_is_read_once_largest_first():
    sizes = [3 * MB, 40 * MB, 1 * MB, 25 * MB, 9 * MB, 2 * MB]
    tasks = pack_splits(_splits(*sizes, logs=True), parallelism=3)
    read = [f for task in _ids(tasks) for f in task]
    assert sorted(read) == sorted(f"f{i}" for i in range(len(sizes)))
    assert read[0] == "f1"  # the 40 MB slice opens the first task
    budget = (sum(sizes) + len(sizes) * OPEN_COST_BYTES) // 3
    for task in tasks:
        # A task passes the budget only by its last slice's open cost, or by one big slice.
        assert len(task) == 1 or sum(s.size for s in task) <= budget


def test_large_slices_get_a_task_each_and_the_budget_is_capped():
    tasks = pack_splits(_splits(*[100 * MB] * 8), parallelism=1)
    # One core would take the whole table in one task; the cap keeps tasks at 128 MB.
    assert [len(task) for task in tasks] == [1] * 8
    tasks = pack_splits(_splits(*[300 * MB, 10 * MB]), parallelism=1)
    assert _ids(tasks) == [["f0"], ["f1"]]
    assert MAX_PARTITION_BYTES == 128 * MB


def test_the_open_cost_keeps_tiny_slices_from_piling_up():
    # 1,000 tiny slices: each counts 4 MB, so a 128 MB task holds 32 of them.
    tasks = pack_splits(_splits(*[1024] * 1000), parallelism=2)
    assert max(len(task) for task in tasks) == 32
    assert sum(len(task) for task in tasks) == 1000


def test_a_byte_cap_below_every_slice_reads_one_slice_per_task():
    tasks = pack_splits(_splits(*[MB] * 5), parallelism=2, max_bytes=1)
    assert [len(task) for task in tasks] == [1] * 5


def test_no_slices_no_tasks():
    assert pack_splits([], parallelism=4) == []

"""Packing file slices into Spark tasks, the way Spark packs the files of its own scans.

Every task of a Python data source pays a round trip to a Python worker before it reads a
byte, so reading a table of many small file slices one slice per task spends much of its time
on tasks, not on data. Spark's file scans (and so Apache Hudi's Spark reads, which are file
scans over Hudi's file index) pack small files into one task up to a byte budget: the budget
is the table's bytes spread over the cluster's cores, at most `spark.sql.files.maxPartitionBytes`
(128 MiB), and every file also counts an "open cost" (`spark.sql.files.openCostInBytes`,
4 MiB), so that many tiny files do not pile into one task. A file slice is packed whole: its
base file and log files are merged by one task.
"""

from __future__ import annotations

import os
from typing import cast

from ..options import read
from .planner import FileSplit

# hoodie.read.max.partition.bytes's default: Spark's spark.sql.files.maxPartitionBytes.
MAX_PARTITION_BYTES = cast(int, read.MAX_PARTITION_BYTES.default)
OPEN_COST_BYTES = 4 * 1024 * 1024


def default_parallelism() -> int:
    """The cores this process may use. Planning runs on the driver: in local mode its cores
    are the executors'; a cluster usually has more, which only makes tasks bigger than they
    need be, up to the byte cap (`hoodie.read.parallelism` says how many there are)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def pack_splits(
    splits: list[FileSplit],
    parallelism: int,
    max_bytes: int = MAX_PARTITION_BYTES,
    open_cost: int = OPEN_COST_BYTES,
) -> list[list[FileSplit]]:
    """File slices grouped into tasks: largest first, each task filled until the next slice
    would pass the budget (Spark's `FilePartition.getFilePartitions`)."""
    if not splits:
        return []
    total = sum(split.size + open_cost for split in splits)
    budget = min(max_bytes, max(open_cost, total // max(parallelism, 1)))
    tasks: list[list[FileSplit]] = []
    current: list[FileSplit] = []
    filled = 0
    for split in sorted(splits, key=lambda s: s.size, reverse=True):
        if current and filled + split.size > budget:
            tasks.append(current)
            current, filled = [], 0
        current.append(split)
        filled += split.size + open_cost
    tasks.append(current)
    return tasks

"""Routing units: how a SIMPLE-index upsert tags and writes in one Spark job.

Hudi's SIMPLE index tags a batch with a join before the write, which costs a job to find the
touched partitions, a job to read and join the stored keys, and a cache of the batch between
them and the write. Here the tagging happens inside the write tasks instead: the batch is
shuffled once to *routing units*, and each task reads the keys of its unit's file slices,
tags its records, places its inserts and writes its file groups' new versions.

A unit is a set of file groups of one partition whose key ranges overlap (every key the unit
could hold routes to it, so tagging inside the task is complete). The ranges come from the
base files' footers (`hoodie_min_record_key` / `hoodie_max_record_key`, which our writers and
Hudi's bloom index keep there), read only where a partition is worth splitting: one holding
more than one file group and more data than one full file. Everywhere else the partition is
one unit, and planning costs a listing and no job. Unit `i` of a partition takes the keys
from its lowest key up to the next unit's; inserts follow the same ranges, so the file groups
a unit creates stay inside its range and units stay disjoint as the table grows.

A key range is trusted only where it is complete and ordered as Spark orders keys: not for a
slice without a base file or whose logs may hold inserts (merge-on-read), nor for bounds
outside ASCII (Java, which wrote Hudi's footers, orders strings by UTF-16 units, Spark by
UTF-8 bytes; the two agree on everything between two ASCII bounds).

When a unit of overlapping file groups holds more than two full files (keys spread over all
file groups, e.g. random keys written by Hudi, or by many upserts into one range), one task
would rewrite them in turn: then `plan_routing` returns None and the write tags in a job of its
own, which spreads the file groups' rewrites over the tasks, as before routing units existed.
"""

from __future__ import annotations

import pickle
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..fs_view import BaseFile, FileSlice, FileSystemView
from ..schema import MAX_KEY_FOOTER, MIN_KEY_FOOTER, PARTITION_PATH, RECORD_KEY
from ..storage import FileIO
from .keys import KeySource

UNIT = "__hoodie_unit"  # the routing unit of a record within its partition
_RANGES_SCHEMA = "path string, min_key string, max_key string"
_FOOTER_TASKS = 16  # footers are a few kilobytes: a handful of tasks read them all


@dataclass(frozen=True)
class KeyRange:
    min_key: str
    max_key: str


@dataclass
class RoutingUnit:
    """File slices tagged and written by one task (picklable: the tasks get the plan)."""

    slices: list[FileSlice] = field(default_factory=list)
    sources: list[KeySource] = field(default_factory=list)  # what tagging reads, per slice
    ranges: dict[str, KeyRange] = field(default_factory=dict)  # file id -> range, where known
    lower: str | None = None  # the unit's first routed key (None: from the lowest key)

    @property
    def size(self) -> int:
        return sum(_slice_size(s) for s in self.slices)


@dataclass
class RoutingPlan:
    """Each partition's routing units (a partition absent here has no file group yet)."""

    units: dict[str, list[RoutingUnit]]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled for the write tasks, which each get the plan of every partition while
        their records are in a few: each partition's units pickled apart, and unpickled in a
        task when it first asks for them. (Whole, the plan of a table of 50,000 partitions
        was 16 MB of small objects that each task took seconds to unpickle.)"""
        packed = {partition: pickle.dumps(units, protocol=pickle.HIGHEST_PROTOCOL)
                  for partition, units in self.units.items()}  # fmt: skip
        return (_PackedRoutingPlan, (packed,))

    @property
    def unit_count(self) -> int:
        return sum(len(units) for units in self.units.values())

    @property
    def file_group_count(self) -> int:
        return sum(len(u.slices) for units in self.units.values() for u in units)

    def unit(self, partition: str, index: int) -> RoutingUnit:
        units = self.units.get(partition)
        return units[index] if units else RoutingUnit()

    def route(self, records: DataFrame) -> DataFrame:
        """`records` with a UNIT column: the unit whose key range holds each record's key."""
        bounds = [
            (partition, unit.lower, units[i + 1].lower if i + 1 < len(units) else None, i)
            for partition, units in self.units.items()
            if len(units) > 1
            for i, unit in enumerate(units)
        ]
        if not bounds:
            return records.withColumn(UNIT, F.lit(0))
        ranges = records.sparkSession.createDataFrame(
            bounds, "__route_partition string, __route_lower string, __route_upper string, "
            "__route_unit int",
        )  # fmt: skip
        key, lower, upper = F.col(RECORD_KEY), F.col("__route_lower"), F.col("__route_upper")
        routed = records.join(
            F.broadcast(ranges),
            on=(F.col(PARTITION_PATH) == F.col("__route_partition"))
            & (lower.isNull() | (key >= lower))
            & (upper.isNull() | (key < upper)),
            how="left",
        )
        unit = F.coalesce(F.col("__route_unit"), F.lit(0)).alias(UNIT)
        return routed.select(*[F.col(c) for c in records.columns], unit)


class _PackedRoutingPlan(RoutingPlan):
    """A `RoutingPlan` as a write task gets it: each partition's units unpickled on first
    use (`unit`), as the tasks ask for them."""

    def __init__(self, packed: dict[str, bytes]):
        super().__init__({})
        self._packed = packed

    def __reduce__(self) -> tuple[Any, ...]:
        return (_PackedRoutingPlan, (self._packed,))

    def unit(self, partition: str, index: int) -> RoutingUnit:
        if partition not in self.units and partition in self._packed:
            self.units[partition] = pickle.loads(self._packed[partition])
        return super().unit(partition, index)


def plan_routing(
    spark: SparkSession,
    view: FileSystemView,
    partitions: list[str] | None = None,
    *,
    merge_on_read: bool,
    logged_inserts: set[tuple[str, str]],
    max_unit_size: int,
) -> RoutingPlan | None:
    """Units of every partition of `view`'s latest slices (of `partitions`, where given: a
    batch whose partitions are known); None when some unit of several file groups would hold
    more than `max_unit_size` bytes (tag in a job of its own then). Partitions holding more
    than `max_unit_size` in several file groups are split by key range."""
    by_partition: dict[str, list[FileSlice]] = defaultdict(list)
    for group in view.file_groups(partitions):
        if group.latest_slice is not None:
            by_partition[group.partition_path].append(group.latest_slice)

    def complete(s: FileSlice) -> bool:  # does the base file hold every key of the slice?
        return s.base_file is not None and not (
            merge_on_read and (s.partition_path, s.file_id) in logged_inserts
        )

    def sources(slices: list[FileSlice]) -> list[KeySource]:
        return [
            KeySource.of(s, with_logs=merge_on_read and not complete(s), view=view) for s in slices
        ]

    splittable = {
        p: slices
        for p, slices in by_partition.items()
        if len(slices) > 1 and sum(map(_slice_size, slices)) > max_unit_size
        and all(complete(s) for s in slices)
    }  # fmt: skip
    ranges = read_key_ranges(
        spark, view.storage,
        [s.base_file for slices in splittable.values() for s in slices if s.base_file],
    )  # fmt: skip
    units: dict[str, list[RoutingUnit]] = {}
    for partition, slices in by_partition.items():
        known = {
            s.file_id: ranges[s.base_file.relative_path]
            for s in slices
            if s.base_file is not None and s.base_file.relative_path in ranges
        }
        if partition in splittable and len(known) == len(slices):
            units[partition] = _split(slices, known, sources)
        else:
            units[partition] = [RoutingUnit(slices, sources(slices))]
        if any(len(u.slices) > 1 and u.size > max_unit_size for u in units[partition]):
            return None
    return RoutingPlan(units)


def _split(
    slices: list[FileSlice],
    ranges: dict[str, KeyRange],
    sources: Callable[[list[FileSlice]], list[KeySource]],
) -> list[RoutingUnit]:
    """Units of overlapping key ranges, in key order."""
    ordered = sorted(slices, key=lambda s: ranges[s.file_id].min_key)
    groups: list[list[FileSlice]] = []
    highest = ""
    for s in ordered:
        r = ranges[s.file_id]
        if groups and r.min_key <= highest:
            groups[-1].append(s)
            highest = max(highest, r.max_key)
        else:
            groups.append([s])
            highest = r.max_key
    units = []
    for i, members in enumerate(groups):
        lower = None if i == 0 else ranges[members[0].file_id].min_key
        units.append(
            RoutingUnit(
                members,
                sources(members),
                {s.file_id: ranges[s.file_id] for s in members},
                lower,
            )
        )
    return units


def read_key_ranges(
    spark: SparkSession, storage: FileIO, base_files: list[BaseFile]
) -> dict[str, KeyRange]:
    """Key ranges from the footers of `base_files` (relative path -> range), read by Spark
    tasks; files without trustworthy bounds are left out."""
    return read_footer_ranges(spark, storage, [f.relative_path for f in base_files])


def read_footer_ranges(
    spark: SparkSession, storage: FileIO, paths: list[str]
) -> dict[str, KeyRange]:
    """`read_key_ranges` by the base files' relative paths."""
    if not paths:
        return {}
    slots = min(len(paths), _FOOTER_TASKS)
    reader = _FooterReader(storage, paths)
    indexes = spark.range(0, len(paths), 1, slots).select(F.col("id").cast("int"))
    rows = indexes.mapInArrow(reader, _RANGES_SCHEMA).toArrow().to_pylist()
    return {r["path"]: KeyRange(r["min_key"], r["max_key"]) for r in rows}


@dataclass
class _FooterReader:
    storage: FileIO
    paths: list[str]

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        found: list[tuple[str, str, str]] = []
        for batch in batches:
            for index in batch.column(0).to_pylist():
                path = self.paths[index]
                metadata = self.storage.parquet_file(path).metadata.metadata or {}
                low, high = metadata.get(MIN_KEY_FOOTER), metadata.get(MAX_KEY_FOOTER)
                if low is None or high is None or not (low.isascii() and high.isascii()):
                    continue
                found.append((path, low.decode(), high.decode()))
        yield pa.RecordBatch.from_pylist(
            [{"path": p, "min_key": lo, "max_key": hi} for p, lo, hi in found],
            schema=pa.schema([(n, pa.string()) for n in ("path", "min_key", "max_key")]),
        )


def _slice_size(file_slice: FileSlice) -> int:
    base = file_slice.base_file.size if file_slice.base_file else 0
    return base + sum(lf.size for lf in file_slice.log_files)

"""The systems under comparison, behind one interface (`System`).

Each system turns the workload's parquet input files into a table it owns under
`root / "table"`, and answers the same reads. The worker (worker.py) measures every call the
same way; a system only does its own work and reports, when it can, what it did (row counts,
compactions, ...) in `details` after a write.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pyarrow as pa

# name -> (module, class, runs on Spark), in the order systems run and appear in reports
SYSTEMS = {
    "cow_upsert": ("hoodie_core", "CowUpsert", True),
    "mor_upsert": ("hoodie_core", "MorUpsert", True),
    "cow_upsert_bucket": ("hoodie_core", "CowUpsertBucket", True),
    "mor_upsert_bucket": ("hoodie_core", "MorUpsertBucket", True),
    "spark_parquet": ("spark_parquet", "SparkParquet", True),
    "deltalake": ("delta", "DeltaLake", False),
    "pyiceberg": ("iceberg", "PyIceberg", False),
}


class System:
    """A table format (or none) on one engine. Subclasses implement every method."""

    name = "system"
    description = ""
    uses_spark = False

    def __init__(self, root: Path, options: dict):
        self.root = root
        self.table_dir = root / "table"
        self.options = options

    # lifecycle: not measured
    def open(self) -> None:
        """Start what the system needs (a Spark session, a catalog)."""

    def close(self) -> None:
        """Release it."""

    def versions(self) -> dict:
        return {}

    # writes: each one measured by the worker
    def create(self, files: list[str]) -> None:
        raise NotImplementedError

    def upsert(self, files: list[str]) -> None:
        raise NotImplementedError

    def delete(self, files: list[str]) -> None:
        """Delete the rows whose keys (`id`, `event_date`) are in `files`."""
        raise NotImplementedError

    def details(self, step: str, before: dict[str, int]) -> dict:
        """After a write, not measured: what the system reports about it. `before` is the
        table folder's listing from before the write (relative path -> size)."""
        return {}

    # engine counters around each measured call (Spark: jobs, stages, tasks)
    def step_started(self, label: str) -> None:
        """A measured call labelled `label` starts."""

    def step_counts(self, label: str) -> dict:
        """What the engine ran for the call labelled `label`; empty for engines without jobs."""
        return {}

    # reads: measured; every column is read
    def scan(self) -> None:
        raise NotImplementedError

    def reference_scans(self) -> dict:
        """Extra full scans to measure beside `scan` (name -> callable), e.g. plain parquet
        over the very files the system's snapshot reads; prepared outside the timing."""
        return {}

    def scan_partition(self, date: str) -> None:
        raise NotImplementedError

    # checks: not measured
    def count_partition(self, date: str) -> int:
        raise NotImplementedError

    def read_check(self, columns: list[str]) -> pa.Table:
        """The whole table's `columns`, to compare with the expected state."""
        raise NotImplementedError


def make(name: str, root: Path, options: dict) -> System:
    if name not in SYSTEMS:
        raise KeyError(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}")
    module, cls, _ = SYSTEMS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)(root, options)


def read_inputs(files: list[str]) -> pa.Table:
    """The input files as one Arrow table (for the systems that are not on Spark)."""
    import pyarrow.dataset as ds

    return ds.dataset(files, format="parquet").to_table()

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
    # Apache Hudi itself (compare/systems/apache_hudi.py): 1.2 at table version 8 and 0.15 with
    # their defaults; 1.2 with our core's settings, and with its default table version 9
    "apache_hudi_cow": ("apache_hudi", "ApacheHudiCow", True),
    "apache_hudi_mor": ("apache_hudi", "ApacheHudiMorDefault", True),
    "apache_hudi_cow_ours": ("apache_hudi", "ApacheHudiCowOurs", True),
    "apache_hudi_mor_ours": ("apache_hudi", "ApacheHudiMorOurs", True),
    "apache_hudi_cow_v9": ("apache_hudi", "ApacheHudiCowV9", True),
    "apache_hudi_mor_v9": ("apache_hudi", "ApacheHudiMorV9", True),
    "apache_hudi_015_cow": ("apache_hudi", "ApacheHudi015Cow", True),
    "apache_hudi_015_mor": ("apache_hudi", "ApacheHudi015Mor", True),
}
APACHE_HUDI = [name for name, (module, _, _) in SYSTEMS.items() if module == "apache_hudi"]


class System:
    """A table format (or none) on one engine. Subclasses implement every method."""

    name = "system"
    description = ""
    uses_spark = False
    has_read_optimized = False  # a read-optimized query of its own (merge-on-read tables)
    compacts = False  # a compaction of its own (merge-on-read tables)

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

    def scan_read_optimized(self) -> None:
        """Merge-on-read: the read-optimized query (the base files alone), every column."""
        raise NotImplementedError

    def point_read(self, key: int) -> None:
        """The row of key `id = key`, every column (as a lookup by key queries it)."""
        raise NotImplementedError

    def filter_rows(self, column: str, above: float) -> None:
        """The rows with `column > above` (1% of them), every column."""
        raise NotImplementedError

    # table services: measured as writes
    def compact(self) -> None:
        """Merge-on-read: compact every file slice with log files."""
        raise NotImplementedError

    # checks: not measured
    def count_partition(self, date: str) -> int:
        raise NotImplementedError

    def point_read_rows(self, key: int, columns: list[str]) -> pa.Table:
        """`point_read`'s rows, `columns` of them."""
        raise NotImplementedError

    def filter_result(self, column: str, above: float, columns: list[str]) -> pa.Table:
        """`filter_rows`' rows, `columns` of them."""
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


def hudi_table_version(table_dir: Path) -> str | None:
    """`hoodie.table.version` of the Hudi table at `table_dir` (None before its first commit)."""
    properties = table_dir / ".hoodie" / "hoodie.properties"
    if not properties.exists():
        return None
    for line in properties.read_text().splitlines():
        if line.startswith("hoodie.table.version="):
            return line.split("=", 1)[1].strip()
    return None

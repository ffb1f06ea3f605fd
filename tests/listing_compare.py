"""Read plans through a table's metadata table against plans by listing storage.

`assert_reads_list_alike(meta)`: for a snapshot, a read-optimized read, a time-travel read at
every completed write and an incremental read from before every write, the plan through the
metadata table (the readers' default, `hoodie.metadata.enable`) is the plan by listing
storage: the same file slices, files, sizes and recorded blocks. Plans need no Spark.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from hoodie.exceptions import HoodieError
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.read.options import ReadOptions
from hoodie.read.planner import ReadPlan, plan_read
from hoodie.table_metadata import MetadataListing

OFF = {"hoodie.metadata.enable": "false"}
QUERY_TYPE = "hoodie.datasource.query.type"
BEGIN = "hoodie.datasource.read.begin.instanttime"


def plan(meta: HoodieTableMetaClient, **options: str) -> ReadPlan:
    return plan_read(meta, ReadOptions.parse(options))


def settled(plan: ReadPlan) -> ReadPlan:
    """The plan less the log files no completed write recorded blocks in (and sizes, which
    count them). One known difference: in table version 6 a write that failed after its
    metadata table commit leaves a log file named by its slice's (committed) base instant,
    holding only its blocks and, once rolled back, the rollback's command block; storage
    lists it, the metadata table (as our writer keeps it) does not. Its blocks count for
    nothing either way."""
    return replace(
        plan,
        splits=[
            replace(
                split,
                log_files=tuple(f for f, w in zip(split.log_files, split.log_writes) if w),
                log_writes=tuple(w for w in split.log_writes if w),
                size=0,
            )
            for split in plan.splits
        ],
    )


def assert_same_plans(meta: HoodieTableMetaClient, **options: str) -> ReadPlan | None:
    """The plan through the metadata table is the plan by listing storage (or both fail
    alike: a time-travel read to a file version a clean deleted is refused either way)."""
    try:
        listed = plan(meta, **options, **OFF)
    except HoodieError as error:
        with pytest.raises(type(error)) as through_error:
            plan(meta, **options)
        assert str(through_error.value) == str(error), options
        return None
    through = plan(meta, **options)
    if through != listed and settled(through) != settled(listed):
        only_through = [s for s in through.splits if s not in listed.splits]
        only_listed = [s for s in listed.splits if s not in through.splits]
        raise AssertionError(f"{options}: through the metadata table {only_through}, by "
                             f"listing {only_listed}")  # fmt: skip
    return through


def assert_reads_list_alike(meta: HoodieTableMetaClient, step: str = "") -> None:
    timeline = meta.timeline()
    assert isinstance(meta.file_listing(timeline, True), MetadataListing), step
    assert_same_plans(meta)
    assert_same_plans(meta, **{QUERY_TYPE: "read_optimized"})
    writes = timeline.completed.write_timeline.timestamps()
    for instant in writes:
        assert_same_plans(meta, **{"as.of.instant": instant})
    for begin in ["0", *writes[:-1]]:
        assert_same_plans(meta, **{QUERY_TYPE: "incremental", BEGIN: begin})

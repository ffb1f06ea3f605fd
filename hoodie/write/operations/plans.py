"""The ways a write plans its files, shared by the operations (`base.py`).

- `UntaggedPlan`: nothing to look up (a table's first write, an overwrite): the batch goes
  into new file groups in one job (`write/bulk_insert.py`);
- `InTaskPlan`: the index's write tasks tag their own records (the BUCKET index's buckets,
  the SIMPLE index's routing units): tagging and writing are one job, the driver only plans;
- `PlacedPlan`: the index tags and places the batch in a job of its own (`tag_and_place`),
  then each file group's new version is written; the `.inflight` file lists them;
- `LookedUpBulkPlan`: as placed, for the dup policy's verdict, then the kept records go into
  new file groups as a bulk insert writes them.
Each plan writes with the executor of the instant (`write`): the write stats, and the
partitions the commit reports.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from ...clustering_plan import pending_clustering_file_groups
from ...faults import crash_point
from ...fs_view import CommittedInstants, FileSlice, FileSystemView
from ...index.base import (
    LOCATION,
    HoodieIndex,
    InTaskTagging,
    Placement,
    TaggingContext,
)
from ...index.bucket import BucketIndex
from ...index.placement import FileGroupTarget, WorkloadProfile
from ...index.routing import RoutingPlan
from ...meta_client import HoodieTableMetaClient
from ...metadata import WriteStat
from ...progress import StepStarted, Tagged, TaggingStarted, WritingStarted, emit
from ...schema import PARTITION_PATH, RECORD_KEY
from ...timeline import Timeline
from ..executor import WriteExecutor
from ..prepare import BatchPreparer


@dataclass
class WritePlan(ABC):
    """What a write will do, decided before its instant goes inflight."""

    # What an overwrite replaces: every file group of its snapshot, by partition.
    replaced: dict[str, list[str]] = field(default_factory=dict, kw_only=True)

    @property
    def listed_targets(self) -> dict[str, FileGroupTarget]:
        """The file groups the `.inflight` file names (none where the tasks choose them)."""
        return {}

    @abstractmethod
    def write(self, executor: WriteExecutor) -> tuple[list[WriteStat], list[str]]:
        """Write the files: their write stats, and the partitions the commit reports."""

    @abstractmethod
    def writing(self, table: str, instant: str) -> WritingStarted:
        """The progress event of the write's job starting: what the driver knows of it."""


@dataclass
class UntaggedPlan(WritePlan):
    """Into new file groups, untagged, in one job: a bulk insert."""

    prepared: DataFrame

    def writing(self, table: str, instant: str) -> WritingStarted:
        return WritingStarted(table, instant, None, None, "into new file groups (bulk insert)")

    def write(self, executor: WriteExecutor) -> tuple[list[WriteStat], list[str]]:
        stats = executor.bulk_insert(self.prepared)
        return stats, _partitions_of(stats)


@dataclass
class InTaskPlan(WritePlan):
    """Tagged and written in one job by the index's write tasks (`InTaskTagging`)."""

    prepared: DataFrame
    tagging: InTaskTagging
    timeline: Timeline  # the snapshot the write started from
    committed: CommittedInstants
    pending_compactions: dict[tuple[str, str], str]

    def writing(self, table: str, instant: str) -> WritingStarted:
        how = f"with tagging in the write tasks ({self.tagging.describe()})"
        return WritingStarted(table, instant, None, None, how)

    def write(self, executor: WriteExecutor) -> tuple[list[WriteStat], list[str]]:
        stats = self.tagging.write(_BoundWriter(executor, self))
        partitions = _partitions_of(stats)
        # (tasks create a new partition's file; one that went missing comes back here)
        executor.write_partition_metadata(partitions)
        return stats, partitions


@dataclass
class _BoundWriter:
    """The `InTaskWriter` of one write: the executor's one-job writes over its batch."""

    executor: WriteExecutor
    plan: InTaskPlan

    def write_buckets(self, index: BucketIndex) -> list[WriteStat]:
        plan = self.plan
        return self.executor.write_buckets(plan.prepared, index, plan.timeline,
                                           plan.pending_compactions)  # fmt: skip

    def write_routed(self, routing: RoutingPlan, average_record_size: int) -> list[WriteStat]:
        plan = self.plan
        clustered = pending_clustering_file_groups(self.executor.meta_client.storage,
                                                   plan.timeline)  # fmt: skip
        return self.executor.write_routed(plan.prepared, routing, plan.committed,
                                          plan.pending_compactions,
                                          average_record_size, frozenset(clustered))  # fmt: skip


@dataclass
class PlacedPlan(WritePlan):
    """Tagged and placed by the index beforehand; each target's new version written."""

    placement: Placement
    partitions: list[str]  # the batch's partitions

    @property
    def listed_targets(self) -> dict[str, FileGroupTarget]:
        return self.placement.targets

    def writing(self, table: str, instant: str) -> WritingStarted:
        return WritingStarted(table, instant, len(self.placement.targets),
                              _records(self.placement))  # fmt: skip

    def write(self, executor: WriteExecutor) -> tuple[list[WriteStat], list[str]]:
        placement = self.placement
        executor.write_partition_metadata(placement.profile.partitions)
        crash_point("write.partition_metadata")
        stats = executor.write_file_groups(
            placement.tagged, placement.insert_buckets, placement.targets
        )
        return stats, self.partitions


@dataclass
class LookedUpBulkPlan(WritePlan):
    """Looked up by the index (for the dup policy), then written as a bulk insert."""

    placement: Placement

    def writing(self, table: str, instant: str) -> WritingStarted:
        return WritingStarted(table, instant, None, _records(self.placement),
                              "into new file groups (bulk insert)")  # fmt: skip

    def write(self, executor: WriteExecutor) -> tuple[list[WriteStat], list[str]]:
        stats = executor.bulk_insert(self.placement.tagged.drop(LOCATION))
        return stats, _partitions_of(stats)


def with_checked_keys(prepared: DataFrame, preparer: BatchPreparer) -> DataFrame:
    """The batch of a one-job write, failing its job where a key or partition path is bad
    (no summary job checks them before)."""
    return prepared.withColumns({
        RECORD_KEY: preparer.key_or_error(),
        PARTITION_PATH: preparer.partition_path_or_error(prepared.schema),
    })  # fmt: skip


def all_file_groups(view: FileSystemView) -> dict[str, list[str]]:
    """What an overwrite replaces: every file group of the snapshot it started from, by
    partition."""
    replaced: dict[str, list[str]] = {}
    for group in view.file_groups():
        replaced.setdefault(group.partition_path, []).append(group.file_id)
    return replaced


@dataclass(frozen=True)
class Tagging:
    """How an operation asks its index to tag and place: Hudi's delete (keys the table
    lacks have nothing to do), an insert's policy for keys the table holds (None: update
    them), an overwrite (every record an insert into new file groups)."""

    delete_operation: bool = False
    on_existing: str | None = None
    overwrite: bool = False


def tag_and_place(
    meta_client: HoodieTableMetaClient,
    index: HoodieIndex,
    preparer: BatchPreparer,
    prepared: DataFrame,
    timeline: Timeline,
    pending: dict[tuple[str, str], str],
    tagging: Tagging,
) -> tuple[Placement, dict[str, list[str]], list[str]]:
    """Summarize the batch (null keys stop it here), then let the index tag and place it:
    the placement, what an overwrite replaces, and the partitions the write touches (the
    batch's, and those a global index found its keys in). An overwrite replaces every file
    group, so its records are all inserts; a global index tags against every partition."""
    emit(StepStarted(meta_client.name, "summarizing the batch (records per partition)"))
    summary = preparer.summarize(prepared)
    partitions = sorted({r[PARTITION_PATH] for r in summary})
    # listed as readers list it: through the metadata table the write keeps, if it keeps one
    # (the write client decided `hoodie.metadata.enable` for the table: never None here)
    keeps = preparer.config.metadata_table is True
    view = meta_client.file_system_view(timeline=timeline, metadata=keeps)
    replaced: dict[str, list[str]] = {}
    slices: list[FileSlice] = []
    if tagging.overwrite:
        replaced = all_file_groups(view)
    elif index.is_global():
        # A key may be stored in any partition: every partition's slices, checked as a read
        # checks them.
        groups = view.file_groups()
        view.check_slices(groups)
        slices = [g.latest_slice for g in groups if g.latest_slice is not None]
    else:
        existing = view.listing.existing(partitions)
        groups = view.file_groups(existing)
        # As a read does: tagging against a slice whose committed files are gone or cut
        # short would insert duplicates in silence (the batch's partitions' own slices).
        view.check_slices(groups, set(existing).__contains__)
        slices = [g.latest_slice for g in groups if g.latest_slice is not None]
    context = TaggingContext(
        meta_client=meta_client,
        config=preparer.config,
        timeline=timeline,
        view=view,
        slices=slices,
        partitions=partitions,
        summary=summary,
        pending_compactions=pending,
        delete_operation=tagging.delete_operation,
        on_existing=tagging.on_existing,
        pending_clusterings=frozenset(pending_clustering_file_groups(meta_client.storage,
                                                                     timeline)),
    )  # fmt: skip
    emit(TaggingStarted(meta_client.name, index.name, context.incoming_rows, len(partitions),
                        len(slices)))  # fmt: skip
    started = time.monotonic()
    placement = index.tag_and_place(prepared, context)
    profile = placement.profile
    located, new = _located(profile), sum(profile.inserts.values())
    groups_found = sum(len(groups) for groups in profile.updates.values())
    emit(Tagged(meta_client.name, index.name, located + new, located, new, groups_found,
                len(slices), time.monotonic() - started))  # fmt: skip
    if placement.cached:
        prepared.unpersist()  # the tagged batch is the cache from here on
    # (A global index may send a record to the partition that stores its key: the commit
    # reports that partition too.)
    return placement, replaced, sorted({*partitions, *placement.profile.partitions})


def _located(profile: WorkloadProfile) -> int:
    """The records of a workload profile whose key a file group holds."""
    return sum(n for groups in profile.updates.values() for n in groups.values())


def _records(placement: Placement) -> int:
    """The records the index placed (its workload profile's count)."""
    return _located(placement.profile) + sum(placement.profile.inserts.values())


def _partitions_of(stats: list[WriteStat]) -> list[str]:
    return sorted({s.partition_path for s in stats})

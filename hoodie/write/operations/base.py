"""A write operation: what one Hudi operation does with a batch, over one `Transaction`.

Each operation is a small class (pyiceberg's `_FastAppendFiles`, `_OverwriteFiles` and
`_DeleteFiles` are the model): it names the operation as commits record it, refuses what it
cannot do, prepares the batch and plans the write (`plan`: which `WritePlan` of `plans.py`,
from what the index can do). The write client (`client/write_client.py`) runs the steps every
operation shares in order: start the transaction, plan, go inflight, write, complete.
A new operation is a new module with a subclass here; what differs by index is asked of the
index (`index/base.py`), never decided by its class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import pyarrow as pa
from pyspark.sql import DataFrame

from ...compaction_plan import pending_compaction_file_groups
from ...config import WriteConfig
from ...fs_view import FileSystemView
from ...index.base import HoodieIndex, Placement
from ...meta_client import HoodieTableMetaClient
from ...metadata import CommitMetadata, WriteStat
from ...progress import StepStarted, emit
from ...schema import PARTITION_PATH, to_avro_schema
from ...timeline import WRITE_ACTIONS, Action, Timeline
from ...transaction.failed_writes import FailedWritesPolicy
from ...transaction.transaction import Transaction
from ..prepare import BatchPreparer
from .plans import (
    InTaskPlan,
    PlacedPlan,
    Tagging,
    UntaggedPlan,
    WritePlan,
    all_file_groups,
    tag_and_place,
    with_checked_keys,
)

# Partitions from which on a write whose tasks tag their records plans only the batch's
# partitions, which a job over the cached batch finds first (`in_tasks_or_placed`).
MANY_PARTITIONS = 10_000


@dataclass(frozen=True)
class WriteContext:
    """What every operation of one write works with: the table, the write's config, its
    index and batch preparer, and the writer schema checked against the table's."""

    meta_client: HoodieTableMetaClient
    config: WriteConfig
    index: HoodieIndex
    preparer: BatchPreparer
    schema: pa.Schema
    policy: FailedWritesPolicy
    # The caller's own entries of the commit's extraMetadata (a dbt batch's window, a
    # checkpoint), written in the same instant as the data.
    extra_metadata: Mapping[str, str] = field(default_factory=dict)

    def first_write(self) -> bool:
        """Has the table no completed write yet (nothing for a batch to update)?"""
        completed = self.meta_client.timeline().completed
        return not any(i.action in WRITE_ACTIONS for i in completed)


@dataclass(frozen=True)
class Snapshot:
    """The table as the write's transaction started from it."""

    timeline: Timeline
    view: FileSystemView
    pending_compactions: dict[tuple[str, str], str]  # (partition, file id) -> compaction


class WriteOperation(ABC):
    """One operation over one transaction; `plan` says how it writes."""

    name: ClassVar[str]  # as commits record it (`operationType`)
    replaces: ClassVar[bool] = False  # a replace commit of every current file group
    # Into a table with no records, does the batch go untagged into new file groups (a bulk
    # insert, so recorded), where the index allows?
    bulk_insert_first_write: ClassVar[bool] = False

    def __init__(self, context: WriteContext):
        self.context = context
        self._cached: list[DataFrame] = []

    @classmethod
    def check(cls, context: WriteContext) -> None:
        """Refuse the operation before anything is read (the default: nothing to refuse)."""
        return None

    def action(self) -> Action:
        """The action of the operation's instant on the timeline."""
        if self.replaces:
            return Action.REPLACE_COMMIT
        return Action.DELTA_COMMIT if self.context.meta_client.merge_on_read else Action.COMMIT

    def prepare(self, batch: DataFrame) -> DataFrame:
        """The batch with keys, partition paths and the index's columns; an index that
        cannot place records in this table as it was written refuses it here (an overwrite
        keeps nothing of the table)."""
        context = self.context
        prepared = context.preparer.prepare(batch, context.schema, self.name)
        if not self.replaces:
            context.index.check_table(context.meta_client, context.meta_client.timeline())
        return prepared

    def plan(self, prepared: DataFrame, transaction: Transaction) -> WritePlan:
        """How the batch is written, decided before the instant goes inflight, against the
        snapshot the transaction started from."""
        meta_client, timeline = self.context.meta_client, transaction.started_from
        pending = pending_compaction_file_groups(meta_client.storage, timeline)
        view = meta_client.file_system_view(
            timeline=timeline, metadata=self.context.policy.metadata_table
        )
        return self._plan(prepared, Snapshot(timeline, view, pending))

    @abstractmethod
    def _plan(self, prepared: DataFrame, snapshot: Snapshot) -> WritePlan:
        """The operation's own choice among the plans of `plans.py`."""

    # -- the plans, for `_plan` ----------------------------------------------------------------
    def untagged(self, prepared: DataFrame, snapshot: Snapshot) -> UntaggedPlan:
        """Into new file groups in one job (an overwrite's replace every current one)."""
        checked = with_checked_keys(prepared, self.context.preparer)
        replaced = all_file_groups(snapshot.view) if self.replaces else {}
        return UntaggedPlan(checked, replaced=replaced)

    def in_tasks_or_placed(
        self, prepared: DataFrame, snapshot: Snapshot, tagging: Tagging
    ) -> WritePlan:
        """In the index's write tasks where it can tag there, otherwise placed beforehand.

        The tasks are planned over every partition's file groups, as the driver does not know
        the batch's partitions, unless the table has MANY_PARTITIONS or more: then the batch
        is cached and a job finds its partitions first (as `tag_and_place` does), and only
        theirs are listed, checked and planned. (A 1% upsert into a table of 50,000
        partitions spent most of its time on the others.)"""
        context, view = self.context, snapshot.view
        index = context.index
        if index.tags_in_write_tasks():
            partitions = None
            if view.listing.partition_count() >= MANY_PARTITIONS:
                prepared = self.persist(prepared)  # read by the summary and the write
                emit(StepStarted(context.meta_client.name,
                                 "finding the batch's partitions"))  # fmt: skip
                summary = context.preparer.summarize(prepared)
                partitions = sorted({r[PARTITION_PATH] for r in summary})
            # As a read does: tagging or merging against a slice whose committed files are
            # gone or cut short would insert duplicates or drop rows in silence. (Routing
            # lists the file groups of every partition it plans; a tagging job checks its
            # partitions' own.)
            wanted = None if partitions is None else set(partitions).__contains__
            view.check_slices(view.file_groups(partitions), wanted)
            spark = prepared.sparkSession
            emit(StepStarted(context.meta_client.name,
                             f"planning the write tasks ({index.name} index)"))  # fmt: skip
            in_tasks = index.in_task_tagging(spark, context.meta_client, context.config, view,
                                             partitions)  # fmt: skip
            if in_tasks is not None:
                return InTaskPlan(with_checked_keys(prepared, context.preparer), in_tasks,
                                  snapshot.timeline, view.committed,
                                  snapshot.pending_compactions)  # fmt: skip
        return self.placed(prepared, snapshot, tagging)

    def placed(self, prepared: DataFrame, snapshot: Snapshot, tagging: Tagging) -> PlacedPlan:
        """Tagged and placed by the index in a job of its own. Tagging and writing both read
        the batch: cached, so that model SQL that is not deterministic is computed once, and
        the key and index columns only once."""
        placement, replaced, partitions = self.tag_and_place(self.persist(prepared), snapshot,
                                                             tagging)  # fmt: skip
        return PlacedPlan(placement, partitions, replaced=replaced)

    def tag_and_place(
        self, prepared: DataFrame, snapshot: Snapshot, tagging: Tagging
    ) -> tuple[Placement, dict[str, list[str]], list[str]]:
        """`plans.tag_and_place`, its cache of the tagged batch dropped at `release`."""
        context = self.context
        placement, replaced, partitions = tag_and_place(
            context.meta_client, context.index, context.preparer, prepared, snapshot.timeline,
            snapshot.pending_compactions, tagging,
        )  # fmt: skip
        if placement.cached:
            self.keep_until_release(placement.tagged)
        return placement, replaced, partitions

    def planned_metadata(self, plan: WritePlan) -> CommitMetadata:
        """The `.inflight` file's content: the file groups the write is about to touch
        (unknown before a one-job write: its tasks choose them)."""
        planned = CommitMetadata(operation_type=self.name,
                                 partition_to_replace_file_ids=self._replaced(plan))  # fmt: skip
        for target in plan.listed_targets.values():
            planned.add(WriteStat(target.file_id, target.partition_path, None,
                                  prev_commit=target.previous_instant or "null"))  # fmt: skip
        return planned

    def commit_metadata(self, plan: WritePlan, stats: list[WriteStat]) -> CommitMetadata:
        """The completed instant's content: the written files, the schema and the index."""
        context = self.context
        metadata = CommitMetadata(
            operation_type=self.name,
            extra_metadata={
                **context.extra_metadata,
                "schema": to_avro_schema(context.schema, context.meta_client.name),
                **context.index.commit_metadata(),
            },
            partition_to_replace_file_ids=self._replaced(plan),
        )
        for stat in stats:
            metadata.add(stat)
        return metadata

    def persist(self, frame: DataFrame) -> DataFrame:
        """`frame` cached until `release` (a batch read by tagging and writing both)."""
        self._cached.append(frame)
        return frame.persist()

    def keep_until_release(self, frame: DataFrame) -> None:
        """Unpersist `frame` (cached elsewhere, e.g. by the index) at `release` too."""
        self._cached.append(frame)

    def release(self) -> None:
        """Drop the caches the write made, however it ended."""
        for frame in self._cached:
            frame.unpersist()
        self._cached.clear()

    def _replaced(self, plan: WritePlan) -> dict[str, list[str]] | None:
        return plan.replaced if self.replaces else None

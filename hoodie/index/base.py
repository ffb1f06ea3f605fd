"""The index interface: where a batch's records live now, and where their new versions go.

Hudi's `HoodieIndex` with its partitioner: an index tags each record with the file group that
holds its key (or none: an insert), and places every record: updates to their file group's
next version, inserts into small or new file groups. SIMPLE (`simple.py`) joins the batch
with stored keys; BLOOM (`bloom.py`) reads stored keys only where footer key ranges and bloom
filters allow; BUCKET (`bucket.py`) computes the file group from a hash of the key;
GLOBAL_SIMPLE and GLOBAL_BLOOM (`global_index.py`) look keys up in every partition. The coming
record-level index implements the same two steps.

An index may also tag inside the write tasks themselves (`tags_in_write_tasks`): then an
upsert or delete needs no tagging job, and each task finds its records' file slice as it
writes; the index plans that job (`in_task_tagging`) and has the write floor's executor run
it (`InTaskWriter`). What else differs by index is asked here too, never by the index's
class: whether inserts can be checked against stored keys (`check_insert`), and whether a batch
with nothing to look up may go untagged into new file groups (`bulk_inserts`), and whether
a key is unique across partitions (`is_global`: `global_index.py`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pyspark.sql import Column, DataFrame, Row, SparkSession

from ..config import WriteConfig
from ..fs_view import FileSlice, FileSystemView
from ..meta_client import HoodieTableMetaClient
from ..metadata import WriteStat
from ..schema import PARTITION_PATH
from ..timeline import Timeline
from .placement import FileGroupTarget, InsertBucket, WorkloadProfile, next_version

if TYPE_CHECKING:  # (the implementations import this module)
    from .bucket import BucketIndex
    from .routing import RoutingPlan

# Recorded in each commit's extra metadata: which index placed the records (and, for the
# BUCKET index, into how many buckets per partition).
INDEX_TYPE_KEY = "hoodie.index.type"
LOCATION = "__hoodie_location"  # file id of the file group holding the key, or null


@dataclass
class TaggingContext:
    """What a write knows when its index tags the batch."""

    meta_client: HoodieTableMetaClient
    config: WriteConfig
    timeline: Timeline  # the timeline the write started from
    view: FileSystemView
    # Latest slices of the table's partitions the batch touches (a global index: of every
    # partition).
    slices: list[FileSlice]
    partitions: list[str]  # the batch's partitions
    summary: list[Row]  # the batch per `summary_keys`: rows (and the index's aggregates)
    pending_compactions: dict[tuple[str, str], str]  # (partition, file id) -> compaction
    delete_operation: bool  # Hudi's delete: keys the table lacks have nothing to do
    # An insert's policy for keys the table holds (hoodie.datasource.insert.dup.policy: fail
    # or drop); None: an upsert, which updates them.
    on_existing: str | None = None
    # (partition, file id) of the groups a pending clustering rewrites: inserts keep out
    pending_clusterings: frozenset[tuple[str, str]] = frozenset()

    @property
    def incoming_rows(self) -> int:
        return sum(row["rows"] for row in self.summary)


@dataclass
class Placement:
    """The batch tagged (LOCATION per record) and where every file group's version goes."""

    tagged: DataFrame
    profile: WorkloadProfile
    insert_buckets: list[InsertBucket]  # inserts spread by key hash (empty: inserts tagged)
    targets: dict[str, FileGroupTarget]  # file id -> where its new version goes
    cached: bool = False  # `tagged` is a cache of its own: the write unpersists it


class HoodieIndex(ABC):
    name: str  # as `hoodie.index.type` names it

    def columns(self) -> dict[str, Column]:
        """Columns the index adds to the prepared batch (computed once, before tagging)."""
        return {}

    def summary_keys(self) -> list[str]:
        """What the batch's summary (its one driver-side job before tagging) groups by,
        besides the partition path."""
        return []

    def summary_aggregates(self) -> list[Column]:
        """Aggregates of the summary besides `rows` (the count), which every index gets."""
        return []

    def commit_metadata(self) -> dict[str, str]:
        """What a commit records about the index (Hudi's extra metadata keys)."""
        return {INDEX_TYPE_KEY: self.name}

    def check_table(self, meta_client: HoodieTableMetaClient, timeline: Timeline) -> None:
        """Refuse a config that cannot place records in this table as it was written."""
        return None

    def check_insert(self, table_name: str, operation: str) -> None:
        """Refuse an insert or bulk insert if this index cannot tell which keys the table
        holds (the dup policy needs that verdict before anything is written)."""
        return None

    def is_global(self) -> bool:
        """Whether a key is unique across the table (Hudi's `isGlobal`): tagging then looks a
        key up in every partition, by the key alone, and the batch keeps one record per key
        whatever its partition values (`write/prepare.py`)."""
        return False

    def bulk_inserts(self) -> bool:
        """Whether a batch with nothing to look up (a first write, an overwrite) may go
        untagged into new file groups of any file id, as Hudi's bulk insert does."""
        return True

    def tags_in_write_tasks(self) -> bool:
        """Whether an upsert's or delete's write tasks may tag their own records (no tagging
        job before writing); the write then asks `in_task_tagging` for the plan."""
        return False

    def in_task_tagging(
        self,
        spark: SparkSession,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig,
        view: FileSystemView,
        partitions: list[str] | None = None,
    ) -> InTaskTagging | None:
        """The plan of an upsert or delete whose write tasks tag their own records, or None:
        tag in a job of its own (`tag_and_place`). `partitions`: the batch's, where the write
        found them (a table of many partitions); None: it may write to any."""
        return None

    @abstractmethod
    def tag_and_place(self, batch: DataFrame, context: TaggingContext) -> Placement:
        """Tag every record of `batch` with its file group and decide the targets."""


class InTaskWriter(Protocol):
    """The write floor's side of a write whose tasks tag their own records: one Spark job,
    bound to the write's batch, instant and snapshot, per kind of in-task tagging."""

    def write_buckets(self, index: BucketIndex) -> list[WriteStat]:
        """Each task writes one bucket's file group (the BUCKET index)."""

    def write_routed(self, routing: RoutingPlan, average_record_size: int) -> list[WriteStat]:
        """Each task tags and writes one routing unit (the SIMPLE index)."""


class InTaskTagging(ABC):
    """An index's plan for write tasks that tag their own records: the driver only plans, and
    the index says which job of the `InTaskWriter` runs it (the index floor cannot reach the
    write tasks, which sit a floor above)."""

    @abstractmethod
    def write(self, writer: InTaskWriter) -> list[WriteStat]:
        """Run the tagging and writing job; the write stats of every file group written."""

    @abstractmethod
    def describe(self) -> str:
        """How the tasks find their records' file groups, for progress reports."""


def next_versions(
    profile: WorkloadProfile,
    slices: list[FileSlice],
    pending_compactions: dict[tuple[str, str], str],
    merge_on_read: bool,
    skip: dict[str, FileGroupTarget] | None = None,
) -> dict[str, FileGroupTarget]:
    """The next version of every existing file group the profile updates (not in `skip`)."""
    by_group = {(s.partition_path, s.file_id): s for s in slices}
    targets: dict[str, FileGroupTarget] = {}
    for partition, groups in profile.updates.items():
        for file_id in groups:
            if skip and file_id in skip:
                continue
            file_slice = by_group.get((partition, file_id))
            if file_slice is not None:
                pending = pending_compactions.get((partition, file_id))
                targets[file_id] = next_version(file_slice, pending, merge_on_read)
    return targets


def profile_of(tagged: DataFrame) -> WorkloadProfile:
    """Records per partition and file group (None: inserts) of a tagged batch (one job)."""
    profile = WorkloadProfile()
    for row in tagged.groupBy(PARTITION_PATH, LOCATION).count().collect():
        profile.add(row[PARTITION_PATH], row[LOCATION], row["count"])
    return profile

"""Conflict detection for optimistic concurrency control (Hudi's default resolution strategy).

Writers work without a lock and take it only to commit. Under the lock, a writer looks at what
completed since it started: if any of those instants wrote to, replaced or planned a compaction
of a file group this write also wrote, or a clustering pending now planned to rewrite one, the
later writer loses. (A compaction whose plan was
already there when the write started does not conflict: the write's log files went to the
slices the compaction starts.) Its new versions were computed
from file slices that are no longer the latest, so committing would silently drop the other
writer's changes. Writers on disjoint file groups pass this check, which hands the writes
completed since to the second one (`key_conflicts.py`): two writers that inserted the same
new record key, each into a new file group of its own, would leave the key twice, so the
later one fails there too. (Apache Hudi's default strategy stops at file groups.)
"""

from __future__ import annotations

from ..clustering_plan import is_clustering
from ..clustering_plan import read_plan as read_clustering_plan
from ..compaction_plan import read_plan
from ..exceptions import ConcurrentWriteConflict
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata
from ..naming import bucket_of_file_id
from ..timeline import WRITE_ACTIONS, Action, Instant, Timeline

FileGroups = set[tuple[str, str]]


def file_groups_of(metadata: CommitMetadata) -> FileGroups:
    groups = {(s.partition_path, s.file_id) for s in metadata.write_stats() if s.file_id}
    for partition, ids in (metadata.partition_to_replace_file_ids or {}).items():
        groups.update((partition, file_id) for file_id in ids)
    return groups


def _same_bucket(touched: FileGroups, written: FileGroups) -> FileGroups:
    """Groups of `written` whose (partition, bucket) `touched` gave another file group.

    Two writers that each create the file group of the same new bucket (BUCKET index) would
    leave a partition with two groups for one bucket, which the index refuses from then on.
    """
    taken = {(p, b): f for p, f in touched if (b := bucket_of_file_id(f)) is not None}
    return {
        (p, f)
        for p, f in written
        if (b := bucket_of_file_id(f)) is not None and taken.get((p, b), f) != f
    }


def check_conflicts(
    meta_client: HoodieTableMetaClient,
    instant: str,
    seen_at_start: Timeline,
    written: FileGroups,
) -> list[tuple[Instant, CommitMetadata]]:
    """Raise ConcurrentWriteConflict if an instant that appeared after `seen_at_start` was
    loaded touched any file group in `written`; else the writes that completed since (with
    their commit metadata), for the same-key check (`key_conflicts.py`)."""
    known = {i.timestamp for i in seen_at_start.completed}
    known_plans = {i.timestamp for i in seen_at_start if i.action is Action.COMPACTION}
    clashes: dict[str, FileGroups] = {}
    concurrent: list[tuple[Instant, CommitMetadata]] = []
    for other in meta_client.timeline():
        if other.timestamp == instant:
            continue
        touched: FileGroups = set()
        if other.timestamp in known or other.timestamp in known_plans:
            # A compaction planned before this write started is no conflict when it completes:
            # the write's log files already start the slices the compaction's base files begin.
            continue
        if other.is_completed and other.action in WRITE_ACTIONS:
            metadata = meta_client.commit_metadata(other)
            touched = file_groups_of(metadata)
            concurrent.append((other, metadata))
        elif other.action is Action.COMPACTION:
            touched = read_plan(
                meta_client.storage, meta_client.layout, other.timestamp
            ).file_groups()
        elif is_clustering(meta_client.storage, meta_client.layout, other):
            # a pending clustering will replace the groups it planned: a write into one would
            # be lost when it completes (Apache Hudi's file-group overlap with its plan)
            touched = read_clustering_plan(
                meta_client.storage, meta_client.layout, other.timestamp
            ).file_groups()
        overlap = (touched & written) | _same_bucket(touched, written)
        if overlap:
            clashes[f"{other.timestamp} ({other.action.value})"] = overlap
    if clashes:
        groups = sorted({fid for overlap in clashes.values() for _, fid in overlap})
        raise ConcurrentWriteConflict(
            f"write {instant} to table '{meta_client.name}' conflicts with "
            f"{', '.join(sorted(clashes))}, which changed the same file group(s) "
            f"{', '.join(groups[:5])}{' ...' if len(groups) > 5 else ''} after this write "
            "started; it was rolled back. Run it again: it will build on the new versions"
        )
    return concurrent

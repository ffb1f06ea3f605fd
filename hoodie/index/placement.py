"""Placement: where each file group's new version goes, and where a batch's inserts go.

Updates have no choice: they go to the file group that holds their key (a new base file
version, or under merge-on-read a new log file of its slice). Inserts are packed into each
partition's small file groups (base file under `hoodie.parquet.small.file.limit`) up to
`hoodie.parquet.max.file.size`, and the rest are spread evenly over as few new file groups as
fit. Sizes come from the average record size of the last commit, as Hudi estimates them.
Each insert bucket gets a slice of [0, 1); a record's key hash picks the slice, so the
assignment is deterministic and needs no shuffle of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..exceptions import HoodieError
from ..fs_view import BaseFile, FileSlice
from ..naming import new_file_id


@dataclass(frozen=True)
class FileGroupTarget:
    """Where one task writes: a new base file version, or (merge-on-read) a new log file."""

    partition_path: str
    file_id: str
    previous_base_file: str | None  # relative path of the latest base file
    previous_instant: str | None  # base instant of the slice the write builds on
    # Merge-on-read appends: the log file's version and base instant, and the slice's log
    # files so far (names; the write stat lists them all, as Hudi's delta write stat does).
    log_version: int | None = None
    log_base_instant: str | None = None
    log_files: tuple[str, ...] = ()
    # The slice appended to has log files already (of any writer's instant): a delete in them
    # may order after an update appended now, which then loses at merge time.
    slice_has_logs: bool = False
    # Every log file of the slice (names, any writer's instant): on table version 8 with CDC
    # on, a delta write stat lists them with the slice's base file, as Apache Hudi's append
    # handle does for its CDC query (the slice a log file's changes are read against).
    slice_log_files: tuple[str, ...] = ()

    @property
    def appends_log(self) -> bool:
        return self.log_version is not None


@dataclass(frozen=True)
class InsertBucket:
    partition_path: str
    file_id: str
    records: int
    lower: float  # share of the partition's inserts, as a [lower, upper) slice of [0, 1)
    upper: float
    base_file: BaseFile | None  # set when the bucket fills an existing small file group


@dataclass
class WorkloadProfile:
    """What the batch does per partition: updates per file group, and a count of inserts."""

    updates: dict[str, dict[str, int]] = field(default_factory=dict)  # partition -> fid -> n
    inserts: dict[str, int] = field(default_factory=dict)

    def add(self, partition: str, file_id: str | None, count: int) -> None:
        if file_id is None:
            self.inserts[partition] = self.inserts.get(partition, 0) + count
        else:
            self.updates.setdefault(partition, {})[file_id] = count

    @property
    def partitions(self) -> list[str]:
        return sorted(set(self.updates) | set(self.inserts))


def plan_inserts(
    profile: WorkloadProfile,
    small_files: dict[str, list[BaseFile]],
    *,
    max_file_size: int,
    small_file_limit: int,
    average_record_size: int,
) -> list[InsertBucket]:
    average_record_size = max(1, average_record_size)
    per_new_file = max(1, max_file_size // average_record_size)
    buckets: list[InsertBucket] = []
    for partition in sorted(profile.inserts):
        total = profile.inserts[partition]
        if total <= 0:
            continue
        remaining = total
        sized: list[tuple[str, int, BaseFile | None]] = []
        candidates = sorted(
            (f for f in small_files.get(partition, []) if f.size < small_file_limit),
            key=lambda f: f.size,
        )
        for small in candidates:
            if remaining <= 0:
                break
            capacity = (max_file_size - small.size) // average_record_size
            take = min(capacity, remaining)
            if take > 0:
                sized.append((small.file_id, take, small))
                remaining -= take
        if remaining > 0:
            count = math.ceil(remaining / per_new_file)
            share, extra = divmod(remaining, count)
            for i in range(count):
                sized.append((new_file_id(), share + (1 if i < extra else 0), None))
        lower = 0.0
        for i, (file_id, records, base_file) in enumerate(sized):
            upper = 1.0 if i == len(sized) - 1 else lower + records / total
            buckets.append(InsertBucket(partition, file_id, records, lower, upper, base_file))
            lower = upper
    return buckets


def next_version(
    file_slice: FileSlice, pending_compaction: str | None, merge_on_read: bool
) -> FileGroupTarget:
    """Where an existing file group's changes go: a new base file version (copy-on-write) or
    a new log file of its current slice (merge-on-read).

    While a compaction of the group is pending, the current slice is the one that compaction
    will start: the log names the compaction's instant as its base (Hudi's rule), so that the
    compaction, which reads only the logs in its plan, cannot lose these changes.
    """
    if not merge_on_read:
        base = file_slice.base_file
        if base is None:
            raise HoodieError(
                f"copy-on-write file group {file_slice.file_id} in partition "
                f"'{file_slice.partition_path}' has a slice without a base file"
            )
        return FileGroupTarget(
            file_slice.partition_path, file_slice.file_id, base.relative_path, base.instant
        )
    if pending_compaction is not None:
        base_instant, base = pending_compaction, None
    else:
        base_instant, base = file_slice.base_instant, file_slice.base_file
    logs = [lf for lf in file_slice.log_files if lf.instant == base_instant]
    return FileGroupTarget(
        file_slice.partition_path,
        file_slice.file_id,
        base.relative_path if base else None,
        base_instant,
        log_version=max((lf.version for lf in logs), default=0) + 1,
        log_base_instant=base_instant,
        log_files=tuple(lf.name for lf in logs),
        slice_has_logs=bool(file_slice.log_files),
        # (a pending compaction starts a new slice: none of these logs is in it)
        slice_log_files=()
        if pending_compaction is not None
        else tuple(lf.name for lf in file_slice.log_files),
    )

"""Writes under the BUCKET index, as one Spark job.

With a bucket index a record's file group follows from its key alone, so Hudi's tagging for it
is a map, not a join. A write then needs nothing from the batch before it writes: each
(partition, bucket) of the batch goes to that bucket's current file slice, as a new log file
(merge-on-read) or a new base file version (copy-on-write), or, for a bucket the partition
does not have yet, to a new base file. The whole write is therefore one Spark job grouped by
(partition, bucket), whose tasks find their bucket's file group in a listing of their
partition (where Hudi's bucket index loads it too). There is no input cache and no profile
job: a small upsert costs one Spark job. A task's work follows the records it receives (and,
on copy-on-write, the size of its bucket's base file), so Spark's adaptive execution sizes the
tasks by the shuffled bytes (or `hoodie.upsert.shuffle.parallelism` fixes their number).

A task refuses, before writing, a partition laid out by another index or bucket count (the job
fails and the writer rolls back what other tasks wrote), and rows without a record key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..exceptions import NullRecordKeyError
from ..fs_view import FileSlice, FileSystemView
from ..index.bucket import BUCKET, BucketIndex
from ..index.placement import FileGroupTarget, next_version
from ..naming import new_bucket_file_id
from ..schema import RECORD_KEY
from ..storage import FileIO
from ..timeline import Timeline
from .append_handle import AppendHandle
from .merge_handle import (
    CopyOnWriteHandle,
    deleted_mask,
    group_key,
    stat_table,
    write_partition_metadata,
)


@dataclass
class BucketWriter:
    """The `applyInArrow` function of the job: called once per (partition, bucket) group.

    Picklable; each task gets its own copy, so the listing cache is per task.
    """

    storage: FileIO
    timeline: Timeline  # the timeline the write started from
    pending_compactions: dict[tuple[str, str], str]
    index: BucketIndex
    table_name: str
    record_key_fields: tuple[str, ...]
    merge_on_read: bool
    append: AppendHandle  # existing buckets, merge-on-read: a log file of the current slice
    rewrite: CopyOnWriteHandle  # new buckets, and existing ones on copy-on-write: a base file
    _slices: dict[str, dict[int, FileSlice]] = field(default_factory=dict, repr=False)
    _view: FileSystemView | None = field(default=None, repr=False)

    def __call__(self, key: tuple[Any, ...], records: pa.Table) -> pa.Table:
        partition, bucket = group_key(key[0]), group_key(key[1])
        records = records.drop_columns([BUCKET])
        self._refuse_null_keys(partition, records)
        file_slice = self._bucket_slices(partition).get(bucket)
        if file_slice is not None:
            pending = self.pending_compactions.get((partition, file_slice.file_id))
            target = next_version(file_slice, pending, self.merge_on_read)
            handle = self.append if target.appends_log else self.rewrite
            written = handle.write(target, records)
            return stat_table([written] if written is not None else [])
        # A new bucket: the batch's latest versions go to a base file, except deletes, which
        # have nothing to delete there. (Combined first: a delete may be the latest version
        # of a key that another row would insert.)
        records = self.rewrite.combine(records)
        if pc.all(deleted_mask(records)).as_py() is not False:
            return stat_table([])
        # A new partition gets its metadata file from the first task writing there, as
        # Hudi's write handles create it.
        write_partition_metadata(self.storage, partition, self.append.instant)
        target = FileGroupTarget(partition, new_bucket_file_id(bucket), None, None)
        stat = self.rewrite.write(target, records)
        assert stat is not None  # not all deletes (above): the new file group has rows
        return stat_table([stat])

    def _bucket_slices(self, partition: str) -> dict[int, FileSlice]:
        """bucket -> current file slice of the partition's bucket file groups (checked)."""
        if partition not in self._slices:
            # One view per task: it reads the replace commits once for all its partitions.
            if self._view is None:
                self._view = FileSystemView(self.storage, self.timeline)
            groups = self._view.file_groups([partition])
            slices = [g.latest_slice for g in groups if g.latest_slice is not None]
            by_id = {s.file_id: s for s in slices}
            buckets = self.index.file_groups(slices, self.table_name)
            self._slices[partition] = {b: by_id[fid] for (_, b), fid in buckets.items()}
        return self._slices[partition]

    def _refuse_null_keys(self, partition: str, records: pa.Table) -> None:
        nulls = records.column(RECORD_KEY).null_count
        if nulls:
            raise NullRecordKeyError(
                f"table '{self.table_name}': {nulls} row(s) in partition '{partition}' have a "
                f"null or empty record key (column(s): {', '.join(self.record_key_fields)}); "
                "nothing was written. Filter or fill them in the model"
            )

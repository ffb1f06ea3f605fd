"""A SIMPLE-index upsert's write task: tag, place and write one routing unit.

The batch reaches the tasks shuffled by routing unit (`index/routing.py`): every key a unit's
file groups may hold comes to its task, so the task can tag on its own. It reads the stored
keys of the unit's slices (the key column only; a base file whose footer range holds none of
the task's keys is not opened), gives each record the file group holding its key, places the
inserts as the driver-side placement does (small file groups first, up to
`hoodie.parquet.max.file.size`, then new file groups), and writes each touched file group's
new version with the handle its table type needs: a rewritten base file (copy-on-write, and
a small merge-on-read group taking inserts) or a log file (merge-on-read updates).

Inserts are split among their file groups in key order, so each new file group covers a
narrow key range inside its unit's, which later upserts can route to without reading it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from ..faults import crash_point
from ..fs_view import BaseFile, CommittedInstants
from ..index.base import next_versions
from ..index.keys import stored_keys
from ..index.placement import FileGroupTarget, WorkloadProfile, plan_inserts
from ..index.routing import UNIT, RoutingPlan, RoutingUnit
from ..metadata import WriteStat
from ..schema import RECORD_KEY
from ..storage import FileIO
from .append_handle import AppendHandle
from .merge_handle import (
    CopyOnWriteHandle,
    group_key,
    stat_table,
    with_string_keys,
    write_partition_metadata,
)

if TYPE_CHECKING:  # (files are opened through FileIO)
    import pyarrow.parquet as pq  # noqa: TID251


@dataclass
class RoutedWriter:
    """The `applyInArrow` function of the job: called once per (partition, unit).

    Picklable; the tasks get the plan, which lists every unit's slices.
    """

    storage: FileIO
    plan: RoutingPlan
    committed: CommittedInstants  # what counts as stored (log blocks of completed writes)
    pending_compactions: dict[tuple[str, str], str]
    merge_on_read: bool
    delete_operation: bool  # Hudi's delete: keys the table lacks have nothing to do
    max_file_size: int
    small_file_limit: int
    average_record_size: int
    rewrite: CopyOnWriteHandle
    append: AppendHandle
    # (partition, file id) of the groups a pending clustering rewrites: inserts keep out
    pending_clusterings: frozenset[tuple[str, str]] = frozenset()

    def __call__(self, key: tuple[Any, ...], records: pa.Table) -> pa.Table:
        partition, index = group_key(key[0]), group_key(key[1])
        unit = self.plan.unit(partition, index)
        # The batch's latest version of each key first: a key's rows must not be split
        # between two new file groups.
        records = self.rewrite.combine(with_string_keys(records.drop_columns([UNIT])))
        footers: dict[str, pq.FileMetaData] = {}  # of the base files tagging opened
        location = self._tag(unit, records.column(RECORD_KEY).combine_chunks(), footers)
        if self.delete_operation:
            known = pc.is_valid(location)
            records, location = records.filter(known), location.filter(known)
        if records.num_rows == 0:
            return stat_table([])
        return stat_table(self._write(partition, unit, records, location, footers))

    def _tag(
        self, unit: RoutingUnit, keys: pa.Array, footers: dict[str, pq.FileMetaData]
    ) -> pa.Array:
        """Per record: the file id of the unit's file group holding its key, or null; the
        footers of the base files read into `footers`."""
        location = pa.nulls(len(keys), pa.string())
        if not unit.sources or len(keys) == 0:
            return location
        bounds = pc.min_max(keys)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        for source in unit.sources:
            known = unit.ranges.get(source.file_id)
            if known is not None and (known.max_key < low or known.min_key > high):
                continue
            for chunk in stored_keys(self.storage, source, self.committed, footers):
                held = pc.is_in(keys, value_set=chunk.cast(pa.string()))
                location = pc.if_else(held, pa.scalar(source.file_id, pa.string()), location)
        return location

    def _write(
        self,
        partition: str,
        unit: RoutingUnit,
        records: pa.Table,
        location: pa.Array,
        footers: dict[str, pq.FileMetaData],
    ) -> list[WriteStat]:
        located = pc.is_valid(location)
        updates, update_ids = records.filter(located), location.filter(located)
        inserts = records.filter(pc.invert(located))
        inserts = inserts.take(pc.sort_indices(inserts.column(RECORD_KEY)))
        profile = WorkloadProfile()
        counts = pc.value_counts(update_ids)
        for file_id, n in zip(counts.field("values").to_pylist(),
                              counts.field("counts").to_pylist()):  # fmt: skip
            profile.add(partition, file_id, n)
        if inserts.num_rows:
            profile.add(partition, None, inserts.num_rows)
        buckets = plan_inserts(
            profile,
            {partition: self._small_base_files(partition, unit)},
            max_file_size=self.max_file_size,
            small_file_limit=self.small_file_limit,
            average_record_size=self.average_record_size,
        )
        targets: dict[str, FileGroupTarget] = {}
        parts: dict[str, list[pa.Table]] = {}
        offset = 0
        for bucket in buckets:
            base = bucket.base_file
            targets[bucket.file_id] = FileGroupTarget(
                partition,
                bucket.file_id,
                base.relative_path if base else None,
                base.instant if base else None,
            )
            parts[bucket.file_id] = [inserts.slice(offset, bucket.records)]
            offset += bucket.records
        # A small file group taking inserts is rewritten, its updates included.
        targets.update(next_versions(profile, unit.slices, self.pending_compactions,
                                     self.merge_on_read, targets))  # fmt: skip
        for file_id in profile.updates.get(partition, {}):
            mine = pc.equal(update_ids, pa.scalar(file_id, pa.string()))
            parts.setdefault(file_id, []).append(updates.filter(mine))
        if not unit.slices:
            # A new partition gets its metadata file from its first writing task, as Hudi's
            # write handles create it.
            write_partition_metadata(self.storage, partition, self.rewrite.instant)
            crash_point("task.partition_metadata")
        stats = []
        for file_id, target in targets.items():
            rows = pa.concat_tables(parts[file_id])
            stat: WriteStat | None
            if target.appends_log:
                stat = self.append.write(target, rows)
            else:  # the previous base file's footer as tagging parsed it
                footer = footers.get(target.previous_base_file or "")
                stat = self.rewrite.write(target, rows, footer)
            if stat is not None:  # a new file group of deletes only is not created
                stats.append(stat)
        return stats

    def _small_base_files(self, partition: str, unit: RoutingUnit) -> list[BaseFile]:
        """Base files inserts may fill. Under merge-on-read only slices without log files and
        outside pending compactions count (Hudi's rule when the index cannot see log files):
        such a group is rewritten with its inserts and updates as a new base file."""
        return [
            s.base_file
            for s in unit.slices
            if s.base_file is not None
            and not (
                self.merge_on_read
                and (s.log_files or (partition, s.file_id) in self.pending_compactions)
            )
            and (partition, s.file_id) not in self.pending_clusterings
        ]

"""The merge-on-read append handle: one Spark task writes one file group's changes as a log file.

Hudi's `HoodieAppendHandle`. Instead of rewriting the file group, the batch's updates go into a
parquet data block and its deletes into a delete block, in a new log file of the file group's
current slice: `.<fileId>_<baseInstant>.log.<version>_<writeToken>`. Nothing stored is read,
which is why merge-on-read writes are cheap; readers and compaction merge the versions later
with the same rule (`hoodie.merge`), so an update whose precombine value loses to the stored
one is still written here and loses at merge time.

Every delta commit writes a new log file version rather than appending to the last one: local
and object-store file systems cannot append, and Hudi makes the same choice on them.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..column_stats import FileIndexing
from ..exceptions import ConcurrentWriteConflict, HoodieError
from ..faults import armed, crash_point
from ..fs_view import CommittedInstants, FileSystemView
from ..index.keys import KeySource, live_versions
from ..index.placement import FileGroupTarget
from ..logformat import (
    DeleteRecord,
    add_meta_fields,
    delete_block,
    log_file_instants,
    parquet_data_block,
)
from ..markers import IOType, WriteMarkers
from ..merge import MergeMode
from ..metadata import WriteStat
from ..naming import log_file_name
from ..schema import (
    PARTITION_PATH,
    RECORD_KEY,
    data_schema,
    to_avro_schema,
    with_meta_columns,
)
from ..storage import FileIO
from ..timeline import Timeline
from ..transaction.record_index import hand_over_keys
from .merge_handle import (
    deduplicate,
    deleted_mask,
    group_key,
    parquet_codec,
    stamp_records,
    stat_table,
    task_token,
    with_stored_columns,
    with_string_keys,
)

# How often a log file name is tried again when the write that held it was rolled back.
_CREATE_ATTEMPTS = 5


@dataclass
class AppendHandle:
    """Picklable, like `CopyOnWriteHandle`; called once per file group with its records."""

    storage: FileIO
    instant: str
    targets: dict[str, FileGroupTarget]
    data_schema: pa.Schema
    table_name: str
    record_key_fields: tuple[str, ...]
    merge_mode: MergeMode  # the table's (`hoodie.merge`): the batch's precombine, and deletes
    compression: str
    markers: WriteMarkers
    # Hudi's delete operation: deletes win whatever the stored ordering value (written with
    # ordering value 0, which Hudi's log reader treats as "no ordering").
    unconditional_deletes: bool = False
    # Table version 8 and later: a log file belongs to the delta commit that wrote it, named
    # by its instant (version 1), and its slice follows from the commit's completion time.
    logs_per_instant: bool = False
    indexing: FileIndexing = FileIndexing()  # what the metadata table's indexes get
    # The record index gets the location of every live key a log file writes: a key a log of
    # the slice deleted may come back as an update, which tagging that reads the slice's keys
    # without its deletes (SIMPLE, BLOOM; BUCKET tags nothing) cannot tell from one in place.
    # False where tagging looks through deletes (global indexes): updates write nothing.
    locates_updates: bool = True
    # The table logs changes (`hoodie.table.cdc.enabled`): on table version 8 the stat names
    # the slice appended to (its base instant, base file and log files), as Apache Hudi 1.x's
    # append handle does for its CDC query; version 6 stats always do.
    cdc: bool = False
    # A partial update (`WriteConfig.replaced_columns`): the columns a matched key's row takes
    # from the slice it is appended to (merged as a snapshot read merges it, as of
    # `timeline`), so that the data block holds whole rows (table version 6 has no partial
    # blocks).
    kept_columns: tuple[str, ...] = ()
    timeline: Timeline | None = None
    # Table version 8: a partial update's rows of matched keys go to a partial update block
    # (`IS_PARTIAL`), as Apache Hudi 1.x writes them; version 6 has none (whole rows)
    partial_blocks: bool = False
    _view: FileSystemView | None = field(default=None, repr=False)

    def __call__(self, key: tuple[Any, ...], incoming: pa.Table) -> pa.Table:
        return stat_table([self.write(self.targets[group_key(key[0])], incoming)])

    def write(self, target: FileGroupTarget, incoming: pa.Table) -> WriteStat:
        """Append the file group's records (deduplicated by key) as a new log file."""
        incoming = deduplicate(
            with_string_keys(incoming),
            self.merge_mode.without_ordering() if self.unconditional_deletes else self.merge_mode,
            self.record_key_fields,
            allow_duplicate_keys=self.unconditional_deletes,
        )
        return self.append(target, incoming)

    def append(self, target: FileGroupTarget, incoming: pa.Table) -> WriteStat:
        if target.log_base_instant is None or target.log_version is None:
            raise HoodieError(
                f"file group {target.file_id} in partition '{target.partition_path}' was "
                "given a base file version to write, not a log file to append"
            )
        earlier: tuple[str, ...] = ()
        if self.logs_per_instant:
            version, named_by = 1, self.instant
        else:
            version, named_by = target.log_version, target.log_base_instant
            earlier = target.log_files
        name = log_file_name(target.file_id, named_by, version, task_token())
        relative = posixpath.join(target.partition_path, name) if target.partition_path else name
        deleted = deleted_mask(incoming)
        updates = incoming.filter(pc.invert(deleted))
        deletes = incoming.filter(deleted)
        schema = data_schema(self.data_schema)
        avro = add_meta_fields(to_avro_schema(schema, self.table_name))
        blocks = []
        stored = None
        matched = None
        if updates.num_rows and self.kept_columns:
            updates, matched = self._with_stored_columns(target, updates, schema)
        if updates.num_rows:
            updates = updates.take(pc.sort_indices(updates, [(RECORD_KEY, "ascending")]))
            # Hudi names the file group, not a file, in a log record's _hoodie_file_name.
            rows = stored = stamp_records(
                updates, schema, self.instant, target.partition_path, target.file_id
            )
            blocks.extend(self._data_blocks(rows, schema, avro, matched))
        if deletes.num_rows:
            blocks.extend(self._delete_blocks(deletes, avro))
        self.markers.create(relative, IOType.APPEND)
        crash_point("task.log_file.marked")
        if target.partition_path:
            self.storage.makedirs(target.partition_path)
        data = b"".join(blocks)
        if blocks and armed("task.log_file.torn"):
            # A torn write: half a block on disk when the machine goes down.
            self.storage.write_bytes(relative, data[: len(data) // 2])
            crash_point("task.log_file.torn")
        self._create(relative, data, target.file_id)
        crash_point("task.log_file.written")
        size = self.storage.size(relative)
        slice_named = not self.logs_per_instant or self.cdc
        if self.logs_per_instant and self.cdc:
            earlier = target.slice_log_files
        stat = WriteStat(
            file_id=target.file_id,
            partition_path=target.partition_path,
            path=relative,
            # Hudi 1.x records the delta commit itself, and no base file, for a log file
            # (unless the table logs changes: then the slice, as version 6 does).
            prev_commit=target.previous_instant or "null" if slice_named else self.instant,
            num_writes=updates.num_rows,
            num_update_writes=updates.num_rows,
            num_deletes=deletes.num_rows,
            total_write_bytes=size,
            file_size_in_bytes=size,
            total_log_blocks=len(blocks),
            base_file=posixpath.basename(target.previous_base_file or "") if slice_named else "",
            log_files=[*earlier, name],
            log_version=version,
            log_offset=0,
            column_ranges=self.indexing.log_file(stored, with_meta_columns(schema)),
        )
        if self.indexing.record_index:
            located = updates.column(RECORD_KEY) if self.locates_updates else ()
            hand_over_keys(self.storage, self.instant, stat, located, deletes.column(RECORD_KEY))
            stat.held_to_slice = self._held_to_slice(target, updates, deletes)
        return stat

    def _with_stored_columns(
        self, target: FileGroupTarget, updates: pa.Table, schema: pa.Schema
    ) -> tuple[pa.Table, pa.Array | None]:
        """`updates` with the kept columns of a partial update from the stored versions of
        their keys in the file group's current slice (its base file and logs, those of a
        pending compaction's slice too); a key the slice no longer holds is inserted whole.
        Also the keys that matched a stored version (None: none did)."""
        assert self.timeline is not None  # set with kept_columns (`WriteExecutor._handles`)
        if self._view is None:
            self._view = FileSystemView(self.storage, self.timeline)
        groups = self._view.file_groups([target.partition_path])
        group = next((g for g in groups if g.file_id == target.file_id), None)
        if group is None or group.latest_slice is None:
            return updates, None
        source = KeySource.of(group.latest_slice, with_logs=True, view=self._view)
        keys = updates.column(RECORD_KEY).combine_chunks()
        stored = live_versions(self.storage, source, CommittedInstants.of(self.timeline), keys,
                               self.merge_mode, columns=self.kept_columns)  # fmt: skip
        matched = pc.is_in(keys, value_set=stored.column(RECORD_KEY))
        filled = with_stored_columns(updates, stored, matched, self.kept_columns, schema)
        return filled, stored.column(RECORD_KEY).combine_chunks()

    def _data_blocks(
        self, rows: pa.Table, schema: pa.Schema, avro: str, matched: pa.Array | None
    ) -> list[bytes]:
        """The data blocks of the log: one of whole rows; with `partial_blocks` (table version
        8) the rows of keys a partial update matched (`matched`: their keys) go to a partial
        update block of the meta columns and the replaced columns, as Apache Hudi 1.x writes
        MERGE INTO's (the kept columns are its readers' to take from the version before)."""
        codec = parquet_codec(self.compression)
        if not self.partial_blocks or matched is None or len(matched) == 0:
            return [parquet_data_block(rows, self.instant, avro, compression=codec)]
        hit = pc.is_in(rows.column(RECORD_KEY), value_set=matched)
        blocks = []
        whole = rows.filter(pc.invert(hit))
        if whole.num_rows:
            blocks.append(parquet_data_block(whole, self.instant, avro, compression=codec))
        changed = pa.schema([f for f in schema if f.name not in self.kept_columns])
        partial = rows.filter(hit).select(with_meta_columns(changed).names)
        partial_avro = add_meta_fields(to_avro_schema(changed, self.table_name))
        blocks.append(parquet_data_block(partial, self.instant, partial_avro,
                                         compression=codec, partial=True))  # fmt: skip
        return blocks

    def _held_to_slice(self, target: FileGroupTarget, updates: pa.Table, deletes: pa.Table) -> bool:
        """Must the commit decide this log's record index changes by merging the slice? A
        delete with an ordering value (`_delete_blocks`' ordered ones) removes its key only
        where it orders after the stored version, and an update it locates may lose to a
        delete with a larger one in the slice's logs; this task reads neither."""
        ordering = self.merge_mode.delete_ordering
        if self.unconditional_deletes or ordering is None:
            return False
        if self.locates_updates and updates.num_rows and target.slice_has_logs:
            return True
        return bool(deletes.num_rows) and bool(
            pc.any(pc.is_valid(deletes.column(ordering))).as_py()
        )

    def _create(self, relative: str, data: bytes, file_id: str) -> None:
        """Create the log file, which another writer appending to the same file group at the
        same moment may have named the same: one of the two writes must lose, and this one
        has written nothing yet. Unless that write has been rolled back since (its log file is
        gone again): then the name is free, and this write takes it."""
        writer = None
        for _attempt in range(_CREATE_ATTEMPTS):
            if self.storage.create_if_absent(relative, data):
                return
            writer = self._writer_of(relative)
            if writer is not None:
                break
        raise ConcurrentWriteConflict(
            f"write {self.instant} to table '{self.table_name}' conflicts with "
            f"{writer or 'writes'}, which {'is' if writer else 'are'} appending to the same "
            f"file group {file_id} (log file {relative} exists); it was rolled back. Run it "
            "again: it will build on the new versions"
        )

    def _writer_of(self, relative: str) -> str | None:
        """The instant whose blocks a log file holds (created whole: never half written), or
        None when the file is gone: its write was rolled back."""
        instants = log_file_instants(self.storage, relative)
        if instants is None:
            return None
        named = sorted(i for i in instants if i is not None)
        return " ".join(f"{i} (deltacommit)" for i in named) or "a write"

    def _delete_blocks(self, deletes: pa.Table, avro_schema: str) -> list[bytes]:
        keys = deletes.column(RECORD_KEY).to_pylist()
        partitions = deletes.column(PARTITION_PATH).to_pylist()
        # Deletes order by arrival unless the table merges by event time (`hoodie.merge`).
        field = self.merge_mode.delete_ordering
        if self.unconditional_deletes or field is None:
            ordering = [0] * len(keys)
            return [delete_block(
                [DeleteRecord(k, p, o) for k, p, o in zip(keys, partitions, ordering)],
                self.instant,
                avro_schema,
            )]  # fmt: skip
        # Soft deletes (`_hoodie_is_deleted`) keep their ordering value: a stored version with
        # a larger one survives them, as in copy-on-write.
        ordering = deletes.column(field).to_pylist()
        records = list(zip(keys, partitions, ordering))
        ordered = [DeleteRecord(k, p, o) for k, p, o in records if o is not None]
        blocks = []
        unordered = [DeleteRecord(k, p, 0) for k, p, o in records if o is None]
        if unordered:
            # Deletes without an ordering value (a global index's delete of a moved record's
            # old copy, a null one): Hudi's Integer 0, as Apache Hudi writes them (its reader
            # fails on a null one), in a block of their own (hudi-rs refuses a block mixing it
            # with the field's own type).
            blocks.append(delete_block(unordered, self.instant, avro_schema))
        if ordered:
            blocks.append(delete_block(ordered, self.instant, avro_schema,
                                       ordering_field=field))  # fmt: skip
        return blocks

"""What an action on the data table changes in its metadata table's `files` partition.

Apache Hudi keeps the metadata table (MDT) in step with the data table by turning each action's
own metadata into MDT records (`HoodieTableMetadataUtil.convertMetadataTo*Records`), never by
listing storage: a commit's write stats name the files it wrote and their sizes, a clean's
metadata the files it deleted, a rollback's the files it deleted and the log files it appended
a rollback block to. These are pure functions from that metadata (and, to initialize or resync
the MDT, from a listing) to `FilesRecord`s, one per MDT key (docs/design/metadata-table.md,
sections 2.2 and 4.1); writing them is the MDT writer's job.

Records of one action are returned sorted by key, one record per key (Apache Hudi combines the
records of a key in a batch before writing; an HFile holds a key once).

Rollback and restore: Apache Hudi 0.14+ rolls the failed instant's MDT delta commit back in the
MDT itself and lists only the log files the rollback appended to. Here the rollback's record
also carries tombstones for the files the rollback deleted (as Apache Hudi up to 0.13 wrote
them, `processRollbackMetadata` with the deleted files): the listing a reader merges is right
whether or not the rolled-back instant's MDT delta commit is still there (hudi-rs merges every
completed MDT delta commit; Apache Hudi's readers count a rolled-back instant's delta commit
as valid once the rollback completes), and a deleted file's name is never reused.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from .avro_metadata import CleanMetadata, RestoreMetadata, RollbackMetadata
from .exceptions import HoodieError
from .metadata import CommitMetadata
from .metadata_records import (
    ALL_PARTITIONS_KEY,
    FileEntry,
    FilesRecord,
    partition_identifier,
)

DELETE_PARTITION = "DELETE_PARTITION"  # WriteOperationType whose replaced partitions go away


class _FilesChange:
    """The files an action added (name -> size, the largest size seen wins: a file only grows)
    and deleted, per MDT partition key, and the partitions it added and deleted."""

    def __init__(self) -> None:
        self.added: dict[str, dict[str, int]] = {}
        self.deleted: dict[str, list[str]] = {}
        self.partitions_added: list[str] = []
        self.partitions_deleted: list[str] = []

    def add(self, partition: str, name: str, size: int) -> None:
        files = self.added.setdefault(partition, {})
        files[name] = max(size, files.get(name, size))

    def delete(self, partition: str, name: str) -> None:
        names = self.deleted.setdefault(partition, [])
        if name not in names:
            names.append(name)

    def touch(self, partition: str) -> None:
        self.added.setdefault(partition, {})

    def records(self, action: str) -> list[FilesRecord]:
        records: dict[str, FilesRecord] = {}
        if self.partitions_added or self.partitions_deleted:
            entries = {name: FileEntry(0) for name in self.partitions_added}
            entries.update({name: FileEntry(0, True) for name in self.partitions_deleted})
            records[ALL_PARTITIONS_KEY] = FilesRecord(ALL_PARTITIONS_KEY, True, entries)
        for partition in [*self.added, *(p for p in self.deleted if p not in self.added)]:
            if partition == ALL_PARTITIONS_KEY:
                raise HoodieError(
                    f"{action}: a data partition named {ALL_PARTITIONS_KEY!r} cannot be listed "
                    "in the metadata table (the name is its partition list's key)"
                )
            entries = {n: FileEntry(s) for n, s in self.added.get(partition, {}).items()}
            for name in self.deleted.get(partition, []):
                if name in entries:
                    raise HoodieError(
                        f"{action}: file {name!r} of partition {partition!r} is both written "
                        "and deleted"
                    )
                entries[name] = FileEntry(0, True)
            records[partition] = FilesRecord(partition, False, entries)
        return [records[key] for key in sorted(records)]


def _file_name(path: str) -> str:
    return posixpath.basename(path.rstrip("/"))


def commit_files_records(metadata: CommitMetadata, action: str = "commit") -> list[FilesRecord]:
    """The `files` records of a commit, delta commit, replace commit or compaction
    (`convertMetadataToFilesPartitionRecords(HoodieCommitMetadata)`): `__all_partitions__`
    naming every partition the action wrote to (and, for a delete_partition, the replaced
    partitions as deleted), and per partition the files written with their sizes. Replaced
    file groups stay listed: the clean that deletes their files removes them."""
    change = _FilesChange()
    for partition, stats in metadata.partition_to_write_stats.items():
        key = partition_identifier(partition)
        change.partitions_added.append(key)
        change.touch(key)
        for stat in stats:
            if stat.path is None:  # an empty partition's stat names no file
                continue
            change.add(key, _file_name(stat.path), stat.file_size_in_bytes)
            # and its `.cdc` files, by name, as Apache Hudi 1.x lists them
            for path, size in (stat.cdc_stats or {}).items():
                change.add(key, _file_name(path), size)
    if metadata.operation_type == DELETE_PARTITION and metadata.partition_to_replace_file_ids:
        change.partitions_deleted = [
            partition_identifier(p) for p in metadata.partition_to_replace_file_ids
        ]
    return change.records(action)


def clean_files_records(metadata: CleanMetadata) -> list[FilesRecord]:
    """The `files` records of a clean (`convertMetadataToFilesPartitionRecords(HoodieClean
    Metadata)`): per partition cleaned, a tombstone for each file it deleted, and the
    partitions it deleted as deleted in `__all_partitions__`."""
    change = _FilesChange()
    for partition, meta in metadata.partition_metadata.items():
        key = partition_identifier(partition)
        change.touch(key)
        for path in meta.delete_path_patterns:
            change.delete(key, _file_name(path))
        if meta.is_partition_deleted:
            change.partitions_deleted.append(partition)
    return change.records(f"clean {metadata.start_clean_time}")


def _rollback_change(change: _FilesChange, metadata: RollbackMetadata) -> None:
    for meta in metadata.partition_metadata.values():
        key = partition_identifier(meta.partition_path)
        for path in meta.success_delete_files:
            change.delete(key, _file_name(path))
        if meta.rollback_log_files:
            # The failed commit's log files stay (a rollback block renders their blocks void),
            # with the size the rollback saw or left, whichever is larger.
            for path, size in [
                *meta.rollback_log_files.items(),
                *meta.log_files_from_failed_commit.items(),
            ]:
                change.add(key, _file_name(path), size)


def rollback_files_records(metadata: RollbackMetadata) -> list[FilesRecord]:
    """The `files` records of a rollback: tombstones for the files it deleted, and the log
    files it appended a rollback command block to with their sizes after it (see the module's
    docstring for why the tombstones are written)."""
    change = _FilesChange()
    _rollback_change(change, metadata)
    return change.records(f"rollback {metadata.start_rollback_time}")


def restore_files_records(metadata: RestoreMetadata) -> list[FilesRecord]:
    """The `files` records of a restore: those of its rollbacks, as one change (a file a later
    rollback of the restore deletes after an earlier one appended to it is deleted)."""
    change = _FilesChange()
    for instant in metadata.instants_to_rollback:
        for rollback in metadata.hoodie_restore_metadata.get(instant, []):
            _rollback_change(change, rollback)
    for key, names in change.deleted.items():
        for name in names:
            change.added.get(key, {}).pop(name, None)
    return change.records(f"restore {metadata.start_restore_time}")


def listing_files_records(listing: Mapping[str, Mapping[str, int]]) -> list[FilesRecord]:
    """The `files` partition of a table whose partitions hold these files (data partition path
    -> file name -> size), as the MDT's initialization writes it into its base file:
    `__all_partitions__` with every partition, and one record per partition (an empty one too:
    Apache Hudi's `DirectoryInfo` lists a partition with no files)."""
    change = _FilesChange()
    for partition, files in listing.items():
        key = partition_identifier(partition)
        change.partitions_added.append(key)
        change.touch(key)
        for name, size in files.items():
            change.add(key, name, size)
    if not change.partitions_added:  # an empty table still has its (empty) partition list
        return [FilesRecord(ALL_PARTITIONS_KEY, True, {})]
    return change.records("metadata table initialization")

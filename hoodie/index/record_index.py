"""The record index: where each record key lives, by the metadata table's `record_index`
partition, looked up in Spark tasks; and `RECORD_INDEX`, the global index that tags by it.

The `record_index` partition of the metadata table (docs/design/metadata-table.md, 1.5 and 2.2)
holds one entry per live key: its data partition and file group, in `N` file groups chosen by
Java's `String.hashCode` of the key modulo `N` (`file_group_index`). A lookup of a DataFrame
of keys (`locate_in_record_index`) never brings the keys to the driver:

1. the driver lists the partition once (`TableMetadata.slice_reads`): each file group's
   latest slice as of the metadata table's latest completed instant, its log files with the
   bytes completed commits recorded, and the instants whose blocks count (valid instants, as
   `TableMetadata` reads them); that plain data (`RecordIndexLookup`) goes to the tasks;
2. a `mapInArrow` pass gives each key its file group (`file_group_indexes`: the hash
   vectorized over the keys' UTF-16 code units);
3. `groupBy(file group).applyInArrow`: one call per file group the keys touch, with all of
   that group's keys, which reads the group's slice for them: the base HFile by ranges, only
   the blocks the sorted keys fall in (`HFileReader.open`), the log blocks merged over it as
   `TableMetadata` merges them (`read_slice`); it returns (key, partition, file id) of the
   keys the index holds. Spark runs one or several groups per task.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..config import GLOBAL_SIMPLE_INDEX, RECORD_INDEX_TYPE, WriteConfig
from ..meta_client import HoodieTableMetaClient
from ..metadata_records import RecordIndexRecord, file_group_indexes
from ..schema import PARTITION_PATH, RECORD_KEY
from ..table_metadata import (
    RECORD_INDEX,
    DamagedMetadataTableError,
    SliceRead,
    TableMetadata,
    data_partition,
    read_slice,
)
from .base import LOCATION, Placement, TaggingContext
from .global_index import STORED_PARTITION, GlobalIndex, SimpleKeyLookup

log = logging.getLogger(__name__)

FILE_GROUP = "__hoodie_record_index_group"  # the key's file group in the record index
LOCATED_SCHEMA = f"{RECORD_KEY} string, {PARTITION_PATH} string, {LOCATION} string"
_GROUPED_SCHEMA = f"{FILE_GROUP} int, {RECORD_KEY} string"
_STORED_SCHEMA = f"{RECORD_KEY} string, {STORED_PARTITION} string, {LOCATION} string"
_LOCATED = pa.schema(
    [(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()), (LOCATION, pa.string())]
)


@dataclass(frozen=True)
class RecordIndexLookup:
    """What the tasks of a record index lookup need, computed once on the driver: each file
    group's slice (`SliceRead`, by file group index) and how many there are. `live`, where
    given, is every file group the lookup may name (file id -> data partition): an entry
    pointing elsewhere (a file group no longer in the table, or in another partition) is
    not a place the key can be found, so it is left out, as a reader of the table would not
    find the key there."""

    reads: dict[int, SliceRead]
    live: dict[str, str] | None = None

    @classmethod
    def of(
        cls, metadata: TableMetadata, live: dict[str, str] | None = None
    ) -> RecordIndexLookup | None:
        """The lookup of `metadata`'s record index; None where the data table does not list
        a usable `record_index` partition (`hoodie.table.metadata.partitions`) or it has no
        file group."""
        if RECORD_INDEX not in metadata.partitions():
            return None
        reads = metadata.slice_reads(RECORD_INDEX)
        return cls(reads, live) if reads else None

    @property
    def file_groups(self) -> int:
        return len(self.reads)

    @property
    def uri(self) -> str:
        """The record index partition's (for errors)."""
        return next(iter(self.reads.values())).storage.uri(RECORD_INDEX)

    def assign(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Task of the first pass: (file group, key) of each non-null key."""
        for batch in batches:
            keys = batch.column(0)
            if keys.null_count:
                keys = keys.drop_null()
            if len(keys) == 0:
                continue
            groups = file_group_indexes(keys, self.file_groups)
            yield pa.RecordBatch.from_arrays(
                [pa.array(groups, pa.int32()), keys.cast(pa.string())], [FILE_GROUP, RECORD_KEY]
            )

    def lookup(self, key: tuple[Any, ...], table: pa.Table) -> pa.Table:
        """Task of the second pass: one file group's keys (`key` holds the group's index)
        looked up in its slice; (key, partition, file id) of those the index holds."""
        group = int(key[0])
        read = self.reads.get(group)
        if read is None:
            raise DamagedMetadataTableError(
                f"{self.uri}: record index file group {group} is not among the "
                f"{self.file_groups} the lookup was planned with",
                self.uri,
            )
        wanted = sorted(set(table.column(RECORD_KEY).to_pylist()))
        keys, partitions, file_ids = [], [], []
        for found, record in read_slice(read, wanted).items():
            if not isinstance(record, RecordIndexRecord):
                path = read.storage.uri(RECORD_INDEX)
                raise DamagedMetadataTableError(
                    f"{path} holds a {type(record).__name__} under key {found!r}: not a "
                    "record index entry. The metadata table is damaged: rebuild it (turn "
                    "hoodie.metadata.enable off and on with Apache Hudi)",
                    path,
                )
            partition = data_partition(record.partition)
            if self.live is not None and self.live.get(record.file_id) != partition:
                continue
            keys.append(found)
            partitions.append(partition)
            file_ids.append(record.file_id)
        return pa.Table.from_arrays(
            [pa.array(keys, pa.string()), pa.array(partitions, pa.string()),
             pa.array(file_ids, pa.string())],
            schema=_LOCATED,
        )  # fmt: skip


def locate_in_record_index(
    keys: DataFrame, lookup: RecordIndexLookup, key_column: str = RECORD_KEY
) -> DataFrame:
    """(RECORD_KEY, PARTITION_PATH, LOCATION) of each distinct key of `keys[key_column]` the
    record index holds: its data partition ('' for a non-partitioned table) and file id.
    Keys it does not hold (never written, deleted) are left out, and so are nulls. Lazy: the
    lookup runs with the action on the result (see the module's docstring for its jobs)."""
    column = F.col(key_column).cast("string").alias(RECORD_KEY)
    grouped = keys.select(column).mapInArrow(lookup.assign, _GROUPED_SCHEMA)

    # (a function of its own: PySpark counts a grouped function's parameters, and a bound
    # method's include `self`)
    def look_up(key: tuple[Any, ...], table: pa.Table) -> pa.Table:
        return lookup.lookup(key, table)

    return grouped.groupBy(FILE_GROUP).applyInArrow(look_up, LOCATED_SCHEMA)


@dataclass(frozen=True)
class RecordIndexKeyLookup:
    """RECORD_INDEX's `KeyLookup`: the batch's keys looked up in the record index
    (`locate_in_record_index`), each key's one stored place; None where nothing is stored."""

    lookup: RecordIndexLookup | None

    def locate(self, batch: DataFrame, context: TaggingContext) -> DataFrame:
        if self.lookup is None:
            return batch.sparkSession.createDataFrame([], _STORED_SCHEMA)
        located = locate_in_record_index(batch.select(RECORD_KEY), self.lookup)
        return located.withColumnRenamed(PARTITION_PATH, STORED_PARTITION)


class RecordIndex(GlobalIndex):
    """RECORD_INDEX: a global index whose lookup is the metadata table's record index
    (Apache Hudi's `SparkMetadataTableRecordIndex`; 1.2's `SparkMetadataTableGlobalRecordLevel
    Index`, also named GLOBAL_RECORD_LEVEL_INDEX). A record whose partition value changed
    moves or stays by `hoodie.record.index.update.partition.path` (false by default, as in
    Apache Hudi). Entries pointing at a file group the write does not see (no longer in the
    table, or in another partition) are left out (`RecordIndexLookup.live`).

    Where the table's metadata table has no usable record index (`record_index` not listed
    as completed in `hoodie.table.metadata.partitions`, or no metadata table at all), the
    write is tagged as GLOBAL_SIMPLE tags it, as Apache Hudi 0.15 and 1.2 do ("Record index
    not initialized so falling back to GLOBAL_SIMPLE for tagging records"): the first write
    asking for the index (its commit builds it: `hoodie.index.type=RECORD_INDEX` turns
    `hoodie.metadata.record.index.enable` on, `config.py`), or one while the index cannot be
    built (an older write of another writer is pending). Unlike Apache Hudi's fallback, whose
    write config takes every index option at its default, so that a record whose partition
    value changed moves whatever the options say (seen with both releases:
    docs/design/metadata-table.md, 7 step 8), ours keeps
    `hoodie.record.index.update.partition.path`: a write's result does not depend on whether
    the index was built yet."""

    def __init__(self, config: WriteConfig):
        super().__init__(RECORD_INDEX_TYPE, RecordIndexKeyLookup(None),
                         config.record_index_update_partition_path)  # fmt: skip

    @classmethod
    def of(cls, config: WriteConfig) -> RecordIndex:
        return cls(config)

    def tag_and_place(self, batch: DataFrame, context: TaggingContext) -> Placement:
        if not context.slices:  # nothing stored: every record an insert, nothing to look up
            return super().tag_and_place(batch, context)
        # the metadata table's partitions as `hoodie.properties` lists them now: another
        # writer may have built or dropped the record index since this client loaded it
        fresh = HoodieTableMetaClient.load(context.meta_client.storage)
        metadata = TableMetadata.open(fresh, context.timeline)
        live = {s.file_id: s.partition_path for s in context.slices}
        lookup = RecordIndexLookup.of(metadata, live) if metadata is not None else None
        if lookup is None:
            log.warning(
                "table '%s': hoodie.index.type=%s, but its metadata table has no record index "
                "(%s is not listed in hoodie.table.metadata.partitions, yet): the write is "
                "tagged as %s tags it, as Apache Hudi's fallback does, and the record index is "
                "built when the metadata table can build it",
                context.meta_client.name, self.name, RECORD_INDEX, GLOBAL_SIMPLE_INDEX,
            )  # fmt: skip
            fallback = GlobalIndex(GLOBAL_SIMPLE_INDEX, SimpleKeyLookup(),
                                   self.update_partition_path)  # fmt: skip
            return fallback.tag_and_place(batch, context)
        index = GlobalIndex(self.name, RecordIndexKeyLookup(lookup), self.update_partition_path)
        return index.tag_and_place(batch, context)


__all__ = [
    "FILE_GROUP",
    "LOCATED_SCHEMA",
    "RecordIndex",
    "RecordIndexKeyLookup",
    "RecordIndexLookup",
    "locate_in_record_index",
]

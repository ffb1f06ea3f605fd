"""The records an action writes to the metadata table's `column_stats` and `bloom_filters`
partitions, as Apache Hudi's `HoodieTableMetadataUtil.convertMetadataToColumnStatsRecords` and
`convertMetadataToBloomFilterRecords` make them (docs/design/metadata-table.md, section 2.2).

- A file an action writes gets one `column_stats` record per indexed column (base files: from
  its parquet footer; log files: from the rows of its data blocks, sizes 0; a log file of
  deletes only: counts 0, no bounds), and a base file one `bloom_filters` record: its footer's
  filter as stored there, its type and the instant that wrote it.
- A file an action deletes (a clean, a rollback, a restore) gets deletes of those keys (a
  delete block in the metadata table's log, as Apache Hudi 1.x writes them; Apache Hudi 0.15
  writes tombstone records instead, and keys them by a wrong file name).
- Building a partition (`IndexRecordMaker.files`) indexes the latest file slice of every file
  group, as of the latest completed instant.

A write task hands each file's column ranges and bloom filter to the driver with its write
stat (`WriteStat.column_ranges`, `.bloom_filter`: `file_indexing` says what it records); a
file whose stat does not carry them (a partition being built, or built by another writer while
this one wrote) is read here instead: its footer, or its log blocks.

Which columns: `column_stats.IndexedColumns` (the table version's default list, or the one
configured).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from .. import properties as props
from ..bloom_filter import BLOOM_FILTER_FOOTER
from ..column_stats import (
    SIMPLE_FILTER_TYPE,
    ColumnRange,
    FileIndexing,
    IndexedColumns,
    filter_type_of,
    ranges_from_parquet,
    ranges_from_table,
)
from ..config import BLOOM_FILTERS, COLUMN_STATS, RECORD_INDEX, MetadataIndexes
from ..exceptions import CorruptDataFileError
from ..logformat import BlockType, read_log_file
from ..meta_client import HoodieTableMetaClient
from ..metadata import WriteStat
from ..metadata_records import (
    BloomFilterRecord,
    FilesRecord,
    MetadataRecord,
    bloom_filter_key,
    column_stats_key,
    partition_identifier,
)
from ..naming import BASE_FILE_EXTENSION, parse_base_file_name, parse_log_file_name
from ..storage import FileIO


@dataclass(frozen=True)
class IndexRecords:
    """An action's records and deleted keys per metadata table partition."""

    records: dict[str, list[MetadataRecord]]
    deletes: dict[str, list[str]]


class IndexRecordMaker:
    """Makes the `column_stats` / `bloom_filters` records of files of the data table at
    `storage` (only for the partitions in `partitions`)."""

    def __init__(
        self,
        storage: FileIO,
        partitions: Iterable[str],
        columns: IndexedColumns,
        table_schema: pa.Schema | None,
    ) -> None:
        """`table_schema`: the table's latest schema with its meta columns (None: no commit
        holds one), whose indexed columns a log file of deletes alone gets records of and a
        deleted file's deletes name."""
        self.storage = storage
        self.partitions = frozenset(p for p in partitions if p in (COLUMN_STATS, BLOOM_FILTERS))
        self.columns = columns
        if table_schema is not None:
            self.table_columns = columns.of(table_schema)
        else:
            self.table_columns = columns.fixed or ()

    def with_schema(self, table_schema: pa.Schema) -> IndexRecordMaker:
        """This maker with the table schema of the commit at hand."""
        return IndexRecordMaker(self.storage, self.partitions, self.columns, table_schema)

    def written(self, stats: Sequence[WriteStat]) -> IndexRecords:
        """The records of the files a commit, delta commit, replace commit or compaction
        wrote (its write stats)."""
        out = IndexRecords({p: [] for p in self.partitions}, {})
        for stat in stats:
            if not stat.path:
                continue
            self._add_file(out, stat.partition_path, stat.path, stat)
        return out

    def files(self, files: Iterable[tuple[str, str]]) -> IndexRecords:
        """The records of existing files ((data partition path, path relative to the base
        path)), read from storage: a partition's initialization."""
        out = IndexRecords({p: [] for p in self.partitions}, {})
        for partition, path in files:
            self._add_file(out, partition, path, None)
        return out

    def removed(self, files_records: Sequence[FilesRecord]) -> IndexRecords:
        """The keys to delete for the files an action's `files` records mark deleted (a clean,
        a rollback, a restore): every indexed column of the table's schema for each (a
        deleted file's own schema is not known any more; a key the index lacks is ignored, as
        Apache Hudi ignores spurious deletes), and a base file's filter."""
        out = IndexRecords({}, {p: [] for p in self.partitions})
        for record in files_records:
            if record.is_partition_list:
                continue
            for name, entry in record.files.items():
                if not entry.is_deleted:
                    continue
                if COLUMN_STATS in self.partitions:
                    out.deletes[COLUMN_STATS].extend(
                        column_stats_key(record.key, name, column)
                        for column in self.table_columns
                    )
                if BLOOM_FILTERS in self.partitions and name.endswith(BASE_FILE_EXTENSION):
                    out.deletes[BLOOM_FILTERS].append(bloom_filter_key(record.key, name))
        return out

    # -- one file --------------------------------------------------------------------------------
    def _add_file(
        self, out: IndexRecords, partition: str, path: str, stat: WriteStat | None
    ) -> None:
        name = posixpath.basename(path)
        key_partition = partition_identifier(partition)
        base = parse_base_file_name(name) is not None
        if not base and parse_log_file_name(name) is None:
            return
        if COLUMN_STATS in self.partitions:
            if stat is not None and stat.column_ranges is not None:
                ranges = [ColumnRange.from_json(r) for r in stat.column_ranges]
            elif base:
                ranges = self._base_file_ranges(path)
            else:
                ranges = self._log_file_ranges(path)
            out.records[COLUMN_STATS].extend(r.record(partition, name) for r in ranges)
        if BLOOM_FILTERS in self.partitions and base:
            parsed = parse_base_file_name(name)
            assert parsed is not None
            if stat is not None and stat.bloom_filter is not None:
                stored: bytes | None = stat.bloom_filter.encode("ascii")
                filter_type = stat.bloom_filter_type or SIMPLE_FILTER_TYPE
            else:
                stored, filter_type = self._footer_filter(path)
            if stored is not None:
                out.records[BLOOM_FILTERS].append(BloomFilterRecord(
                    bloom_filter_key(key_partition, name), filter_type, parsed.instant, stored,
                ))  # fmt: skip

    def _base_file_ranges(self, path: str) -> list[ColumnRange]:
        with self.storage.parquet_file(path) as parquet:
            columns = self.columns.of(parquet.schema_arrow)
            return ranges_from_parquet(parquet.metadata, columns)

    def _log_file_ranges(self, path: str) -> list[ColumnRange]:
        tables = []
        for block in read_log_file(self.storage, path):
            if block.block_type is BlockType.CORRUPT:
                raise CorruptDataFileError(
                    f"{self.storage.uri(path)}: a damaged log block at byte {block.offset}; "
                    "its column statistics cannot be read"
                )
            if block.is_data_block:
                tables.append(block.records())
        if not tables:
            return [ColumnRange(c, None, None, 0, 0) for c in self.table_columns]
        rows = pa.concat_tables(tables, promote_options="default")
        return ranges_from_table(rows, self.columns.of(rows.schema))

    def _footer_filter(self, path: str) -> tuple[bytes | None, str]:
        with self.storage.parquet_file(path) as parquet:
            footer = parquet.metadata.metadata or {}
        return footer.get(BLOOM_FILTER_FOOTER), filter_type_of(footer)


def file_indexing(
    meta_client: HoodieTableMetaClient, keeps_metadata_table: bool, indexes: MetadataIndexes
) -> FileIndexing:
    """What an action's write tasks record of the files they write (`FileIndexing`), for the
    index partitions its commit keeps: those `indexes` keeps of the table's (nothing without
    the metadata table). A partition another writer builds or drops meanwhile is still
    right: the commit reads the files whose stats lack what it needs."""
    if not keeps_metadata_table:
        return FileIndexing()
    properties = meta_client.properties
    kept = indexes.kept(props.metadata_partitions(properties.extra))
    columns = None
    if COLUMN_STATS in kept:
        columns = IndexedColumns(properties.table_version, indexes.column_list,
                                 indexes.max_columns)  # fmt: skip
    return FileIndexing(columns, BLOOM_FILTERS in kept, RECORD_INDEX in kept)

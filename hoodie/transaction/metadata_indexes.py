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

A write task hands each file's column ranges to the driver with its write stat
(`WriteStat.column_ranges`: `file_indexing` says what it records); a file whose stat does not
carry them (a partition being built, or built by another writer while this one wrote) is read
instead: its footer, or its log blocks. A base file's bloom filter is always read from its
footer: handed over, ~431 KB a file, a write of 1,000 files brought ~430 MB to the driver.

Where the files to read are few (`DRIVER_READS`), the driver makes the records; else one Spark
job does (`write_index_files`, on `metadata_jobs.grouped_write` as the record index's): a task
reads a few dozen files and returns their records encoded, by metadata table partition and
file group, and one task per file group writes that group's file (a delta commit's log file,
or a partition's initial base HFile) at the name the driver planned and the inflight names.
The bytes are the driver path's (tests/interop/test_metadata_index_jobs.py); the driver's
memory no longer grows with the files (docs/performance, `metadata_table.py --parts build`).

Which columns: `column_stats.IndexedColumns` (the table version's default list, or the one
configured).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .. import properties as props
from ..bloom_filter import BLOOM_FILTER_FOOTER
from ..column_stats import (
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
    encode_metadata_record,
    file_group_index,
    partition_identifier,
)
from ..naming import BASE_FILE_EXTENSION, parse_base_file_name, parse_log_file_name
from ..schema import constant_column
from ..storage import FileIO
from .metadata_files import deflate_of, log_content, metadata_base_file
from .metadata_jobs import group_key, grouped_write, put_task_file, result
from .record_index import active_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# A commit or build whose files call for at most this many reads (footers, log files) makes
# their records on the driver; more, in one Spark job, which keeps the driver's memory flat:
# building both indexes on 300 base files held 214 MB of Python objects on the driver (~0.7 MB
# a file: its filter, its record, its encoding), 3 MB with the job. The job is not faster on
# 2 cores (7.3 s against 3.6 s for those 300 files, under load; a second job for the second
# partition, and Spark's tasks and shuffle), so the driver keeps what stays below ~45 MB
# (docs/performance/indexes.md, metadata_table.py `--parts build`).
DRIVER_READS = 64
# ... a task of the job reads this many files (a footer each mostly: ~10 ms); 8 a task made
# the 300 files' build 14.4 s, 64 7.3 s (each task costs Spark ~0.2 s on 2 loaded cores)
_FILES_PER_TASK = 64
_SOURCE_TASKS = 256
# the job's rows: a record of one metadata table partition's file group, encoded
MDT_PARTITION, FILE_GROUP, KEY, VALUE = "mdt_partition", "file_group", "key", "value"
_ROWS_SCHEMA = pa.schema([
    pa.field(MDT_PARTITION, pa.string()), pa.field(FILE_GROUP, pa.int32()),
    pa.field(KEY, pa.string()), pa.field(VALUE, pa.binary()),
])  # fmt: skip
_ROWS_DDL = f"{MDT_PARTITION} string, {FILE_GROUP} int, {KEY} string, {VALUE} binary"


@dataclass(frozen=True)
class IndexedFile:
    """A data file whose index records are made ((data partition path, path relative to the
    base path)), with the column ranges its write task recorded (None: read from the file)."""

    partition: str
    path: str
    ranges: tuple[dict[str, Any], ...] | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> IndexedFile:
        data = json.loads(text)
        ranges = data["ranges"]
        return cls(data["partition"], data["path"], None if ranges is None else tuple(ranges))


@dataclass(frozen=True)
class IndexJob:
    """The `column_stats` / `bloom_filters` records of many files, made in Spark tasks
    (`write_index_files`): `maker` makes them, of `sources`, in `spark`."""

    maker: IndexRecordMaker
    sources: tuple[IndexedFile, ...]
    spark: SparkSession

    @property
    def partitions(self) -> frozenset[str]:
        return self.maker.partitions


@dataclass(frozen=True)
class IndexRecords:
    """An action's records and deleted keys per metadata table partition; or (`job`) the
    records of its partitions are made by a Spark job once the delta commit names its files."""

    records: dict[str, list[MetadataRecord]]
    deletes: dict[str, list[str]]
    job: IndexJob | None = None


class IndexRecordMaker:
    """Makes the `column_stats` / `bloom_filters` records of files of the data table at
    `storage` (only for the partitions in `partitions`). Picklable: Spark tasks make them
    with it too (`IndexReader`)."""

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

    def only(self, partition: str) -> IndexRecordMaker:
        """This maker for one of its partitions."""
        maker = IndexRecordMaker(self.storage, (partition,), self.columns, None)
        maker.table_columns = self.table_columns
        return maker

    def written(
        self, stats: Sequence[WriteStat], spark: SparkSession | None = None
    ) -> IndexRecords:
        """The records of the files a commit, delta commit, replace commit or compaction
        wrote (its write stats): made here, or by a Spark job (`spark`, or the active
        session) where the files to read are many (`DRIVER_READS`)."""
        files = [IndexedFile(s.partition_path, s.path,
                             None if s.column_ranges is None else tuple(s.column_ranges))
                 for s in stats if s.path]  # fmt: skip
        return self.planned(files, spark)

    def files(
        self, files: Iterable[tuple[str, str]], spark: SparkSession | None = None
    ) -> IndexRecords:
        """The records of existing files ((data partition path, path relative to the base
        path)), read from storage: a partition's initialization."""
        return self.planned([IndexedFile(p, path) for p, path in files], spark)

    def planned(
        self, files: Sequence[IndexedFile], spark: SparkSession | None = None
    ) -> IndexRecords:
        """The records of `files`, made here when they call for few reads (or there is no
        Spark session), else left to a job (`IndexRecords.job`)."""
        if self.reads(files) > DRIVER_READS:
            session = active_session(spark)
            if session is not None:
                return IndexRecords({}, {}, IndexJob(self, tuple(files), session))
        out = IndexRecords({p: [] for p in self.partitions}, {})
        for file in files:
            for partition, records in self.file_records(file).items():
                out.records[partition].extend(records)
        return out

    def reads(self, files: Iterable[IndexedFile]) -> int:
        """How many of `files` are read to make their records: base files for their bloom
        filters, files without recorded ranges for their column statistics."""
        count = 0
        for file in files:
            name = posixpath.basename(file.path)
            if parse_base_file_name(name) is not None:
                count += BLOOM_FILTERS in self.partitions or (
                    COLUMN_STATS in self.partitions and file.ranges is None
                )
            elif parse_log_file_name(name) is not None:
                count += COLUMN_STATS in self.partitions and file.ranges is None
        return count

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
                        column_stats_key(record.key, name, column) for column in self.table_columns
                    )
                if BLOOM_FILTERS in self.partitions and name.endswith(BASE_FILE_EXTENSION):
                    out.deletes[BLOOM_FILTERS].append(bloom_filter_key(record.key, name))
        return out

    # -- one file --------------------------------------------------------------------------------
    def file_records(self, file: IndexedFile) -> dict[str, list[MetadataRecord]]:
        """One file's records per partition: its column ranges (as its task recorded them, or
        read), and a base file's footer filter."""
        out: dict[str, list[MetadataRecord]] = {}
        name = posixpath.basename(file.path)
        parsed = parse_base_file_name(name)
        if parsed is None and parse_log_file_name(name) is None:
            return out
        if COLUMN_STATS in self.partitions:
            if file.ranges is not None:
                ranges = [ColumnRange.from_json(r) for r in file.ranges]
            elif parsed is not None:
                ranges = self._base_file_ranges(file.path)
            else:
                ranges = self._log_file_ranges(file.path)
            out[COLUMN_STATS] = [r.record(file.partition, name) for r in ranges]
        if BLOOM_FILTERS in self.partitions and parsed is not None:
            stored, filter_type = self._footer_filter(file.path)
            if stored is not None:
                key = bloom_filter_key(partition_identifier(file.partition), name)
                out[BLOOM_FILTERS] = [BloomFilterRecord(key, filter_type, parsed.instant, stored)]
        return out

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


# -- the Spark job ---------------------------------------------------------------------------------
@dataclass
class IndexReader:
    """`mapInArrow`: files (`IndexedFile` JSON) in, their records out, encoded, by metadata
    table partition and file group (`counts`: each partition's file groups). Picklable."""

    maker: IndexRecordMaker
    version: int
    counts: dict[str, int]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for text in batch.column(0).to_pylist():
                made = self.maker.file_records(IndexedFile.from_json(text))
                for partition, records in made.items():
                    if not records:
                        continue
                    keys = [r.key for r in records]
                    groups = [file_group_index(k, self.counts[partition]) for k in keys]
                    yield pa.RecordBatch.from_arrays([
                        constant_column(partition, len(keys)), pa.array(groups, pa.int32()),
                        pa.array(keys, pa.string()),
                        pa.array([encode_metadata_record(r, self.version) for r in records],
                                 pa.binary()),
                    ], schema=_ROWS_SCHEMA)  # fmt: skip


@dataclass
class IndexGroupWriter:
    """`applyInArrow`, one metadata table file group's records in (`IndexReader`'s rows): its
    file written at the path the driver planned (`paths`: partition -> file group index ->
    path), a delta commit's log file or (`base_file`) a partition's initial base HFile, the
    bytes the driver path writes for the same records; a line of JSON out. Picklable."""

    storage: FileIO  # the metadata table's
    version: int
    instant: str
    paths: dict[str, dict[int, str]]
    base_file: bool = False

    def __call__(self, key: tuple[Any, ...], rows: pa.Table) -> pa.Table:
        partition, group = str(group_key(key[0])), int(group_key(key[1]))
        entries = sorted(zip((k.encode("utf-8") for k in rows.column(KEY).to_pylist()),
                             rows.column(VALUE).to_pylist(), strict=True))  # fmt: skip
        if self.base_file:
            content = metadata_base_file(entries, self.version, deflate_of(partition))
        else:
            content = log_content(partition, entries, (), self.instant, self.version)
        path = self.paths[partition][group]
        put_task_file(self.storage, path, content, "task.metadata_index_file.written")
        return result(partition=partition, group=group, path=path, size=len(content),
                      writes=len(entries))  # fmt: skip


def write_index_files(
    job: IndexJob, storage: FileIO, version: int, instant: str,
    paths: dict[str, dict[int, str]], base_file: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """Run `job`: each file's records made in a task (a few files a task), each touched file
    group of `paths`' partitions (every file group of each, by index) written by one task to
    the metadata table at `storage`. What each task wrote: partition, group, path, size,
    writes."""
    counts = {p: len(groups) for p, groups in paths.items()}
    tasks = min(-(-len(job.sources) // _FILES_PER_TASK), _SOURCE_TASKS)
    writer = IndexGroupWriter(storage, version, instant, paths, base_file)
    return grouped_write(job.spark, [f.to_json() for f in job.sources],
                         IndexReader(job.maker, version, counts), _ROWS_DDL,
                         [MDT_PARTITION, FILE_GROUP], writer, tasks,
                         sum(counts.values()))  # fmt: skip


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
    return FileIndexing(columns, RECORD_INDEX in kept)

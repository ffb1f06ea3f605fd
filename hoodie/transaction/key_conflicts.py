"""The second conflict check of optimistic concurrency: the same new record key written twice.

Two writers that insert one new key at once both find it absent when they tag, and each puts
it in a file group of its own (a new partition, or one without a small file group to fill):
their file groups are disjoint, so `conflicts.check_conflicts` lets both commit, and the
table then holds the key twice. (Apache Hudi's default conflict strategy has the same hole.)
So, at commit and under the lock, after the file-group check: for each write that completed
since this one started, the keys this write wrote are held against the keys that write wrote,
in the same partition (an index whose keys are unique per partition) or anywhere (a global
index); one in both refuses the commit as the file-group check does.

A write's keys are those of the data records carrying its instant in the files it wrote: in a
new or rewritten base file the rows whose `_hoodie_commit_time` is the instant (a
copy-on-write rewrite holds the whole file group, its other rows keep their earlier commit
times), in a log file the data blocks of the instant. Deletes write no data record: a key one
writer deletes and the other inserts is no duplicate. Compactions and clusterings only move
records, and deletes only remove them: their instants are not read. The BUCKET index needs no
such check: a key always hashes to the same bucket, so the same file group, which the
file-group check already refuses.

The common case pays nothing: without a write completed in the window nothing is read. Else
the keys are read in Spark tasks (one file a task), grouped by (partition, key), or on the
driver when the files are few and small (or there is no Spark session).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.compute as pc

from ..exceptions import ConcurrentWriteConflict
from ..fs_view import damaged_data_file
from ..logformat import BlockType, read_log_file
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata
from ..naming import parse_log_file_name
from ..partition_paths import check_data_file
from ..schema import COMMIT_TIME, RECORD_KEY
from ..storage import FileIO
from ..timeline import Instant
from .record_index import active_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Where a record key must be unique: within its partition (SIMPLE, BLOOM) or across the table
# (the global indexes).
KeyScope = Literal["partition", "table"]
PARTITION_SCOPE: KeyScope = "partition"
TABLE_SCOPE: KeyScope = "table"

# Operations whose instants write no new key: they move records (keeping their commit times)
# or remove them.
_NO_NEW_KEYS = frozenset({"COMPACT", "LOG_COMPACT", "CLUSTER", "DELETE", "DELETE_PARTITION"})
# Read on the driver up to this many files of this many bytes in all; else in Spark tasks.
DRIVER_FILES = 8
DRIVER_BYTES = 32 * 1024 * 1024
_SHOWN = 5  # keys named in the error
_BATCH_ROWS = 65536
_ROWS_DDL = "instant string, scope string, key string"


@dataclass(frozen=True)
class WrittenFile:
    """A data file an instant wrote records to (relative path), in `partition`."""

    instant: str
    partition: str
    path: str
    size: int = 0


def written_files(table: str, instant: str, metadata: CommitMetadata) -> list[WrittenFile]:
    """The files of `metadata`'s write stats that hold data records the instant wrote (each
    name checked as a data file's: another writer's commit metadata is read here)."""
    if metadata.operation_type.upper() in _NO_NEW_KEYS:
        return []
    source = f"commit {instant}"
    return [
        WrittenFile(
            instant, s.partition_path, check_data_file(table, source, s.path), s.file_size_in_bytes
        )
        for s in metadata.write_stats()
        if s.path and s.num_writes > 0
    ]


def written_keys(storage: FileIO, file: WrittenFile) -> Iterator[pa.Array]:
    """The record keys of the data records `file.instant` wrote in `file` (in chunks)."""
    relative = file.path
    if parse_log_file_name(posixpath.basename(relative)) is not None:
        with damaged_data_file(storage, relative, "a log file"):
            blocks = list(read_log_file(storage, relative))
        for block in blocks:
            if block.instant_time != file.instant:
                continue  # (blocks of earlier instants appended to)
            if block.block_type in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
                with damaged_data_file(storage, relative, f"a log block of {file.instant}"):
                    yield block.records(columns=[RECORD_KEY]).column(0).combine_chunks()
        return
    with damaged_data_file(storage, relative, "a parquet base file"):
        parquet = storage.parquet_file(relative)
        for batch in parquet.iter_batches(columns=[RECORD_KEY, COMMIT_TIME],
                                          batch_size=_BATCH_ROWS):  # fmt: skip
            mine = pc.equal(batch.column(1).cast(pa.string()), file.instant)
            yield batch.column(0).filter(pc.fill_null(mine, False))


def _rows(storage: FileIO, file: WrittenFile, scope: KeyScope) -> Iterator[pa.RecordBatch]:
    where = file.partition if scope == PARTITION_SCOPE else ""
    for keys in written_keys(storage, file):
        n = len(keys)
        if n:
            yield pa.RecordBatch.from_arrays(
                [pa.array([file.instant] * n, pa.string()), pa.array([where] * n, pa.string()),
                 keys.cast(pa.string())],
                names=["instant", "scope", "key"],
            )  # fmt: skip


@dataclass
class _Reader:
    """`mapInArrow`: indexes of files in, their (instant, scope, key) rows out. Picklable."""

    storage: FileIO
    files: list[WrittenFile]
    scope: KeyScope

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield from _rows(self.storage, self.files[index], self.scope)


def _clashes_on_driver(
    storage: FileIO, instant: str, files: Sequence[WrittenFile], scope: KeyScope
) -> list[tuple[str, str, str]]:
    """(other instant, partition or "", key) of keys both `instant` and another wrote."""
    batches = [b for f in files for b in _rows(storage, f, scope)]
    if not batches:
        return []
    rows = pa.Table.from_batches(batches)
    is_mine = pc.equal(rows.column("instant"), instant)
    mine = rows.filter(is_mine).select(["scope", "key"])
    others = rows.filter(pc.invert(is_mine))
    both = others.join(mine.group_by(["scope", "key"]).aggregate([]), ["scope", "key"],
                       join_type="inner")  # fmt: skip
    return sorted(zip(*(both.column(c).to_pylist() for c in ("instant", "scope", "key"))))


def _clashes_with_spark(
    spark: SparkSession,
    storage: FileIO,
    instant: str,
    files: list[WrittenFile],
    scope: KeyScope,
) -> list[tuple[str, str, str]]:
    from pyspark.sql import functions as F

    reader = _Reader(storage, files, scope)
    # pyspark types get() as Optional even when given a default
    tasks = int(spark.conf.get("spark.sql.shuffle.partitions", "200"))  # type: ignore[arg-type]
    slots = max(1, min(len(files), tasks))  # a range is split as it is made: no shuffle
    indexes = spark.range(0, len(files), 1, slots).select(F.col("id").cast("int"))
    rows = indexes.mapInArrow(reader, _ROWS_DDL)
    grouped = rows.groupBy("scope", "key").agg(F.collect_set("instant").alias("instants"))
    both = grouped.filter(F.array_contains("instants", instant) & (F.size("instants") > 1))
    out: list[tuple[str, str, str]] = []
    for row in both.limit(_SHOWN * 10).collect():
        out.extend((other, row.scope, row.key) for other in row.instants if other != instant)
    return sorted(out)


def check_key_conflicts(
    meta_client: HoodieTableMetaClient,
    instant: str,
    written: CommitMetadata,
    concurrent: Sequence[tuple[Instant, CommitMetadata]],
    scope: KeyScope,
    spark: SparkSession | None = None,
) -> None:
    """Raise ConcurrentWriteConflict if a record key `written` (the commit metadata of
    `instant`) wrote is also one a `concurrent` write (completed since `instant` started)
    wrote, in the same partition (`scope` "partition") or anywhere ("table")."""
    table = f"'{meta_client.name}'"
    mine = written_files(table, instant, written)
    if not mine or not concurrent:
        return
    partitions = {f.partition for f in mine}
    others = [
        f
        for other, metadata in concurrent
        for f in written_files(table, other.timestamp, metadata)
        if scope == TABLE_SCOPE or f.partition in partitions
    ]
    if not others:
        return
    if scope == PARTITION_SCOPE:  # only partitions both wrote
        shared = {f.partition for f in others}
        mine = [f for f in mine if f.partition in shared]
    files = mine + others
    session = active_session(spark)
    storage = meta_client.storage
    small = len(files) <= DRIVER_FILES and sum(f.size for f in files) <= DRIVER_BYTES
    if session is None or small:
        clashes = _clashes_on_driver(storage, instant, files, scope)
    else:
        clashes = _clashes_with_spark(session, storage, instant, files, scope)
    if not clashes:
        return
    actions = {i.timestamp: i.action.value for i, _ in concurrent}
    named = sorted({f"{other} ({actions.get(other, 'commit')})" for other, _, _ in clashes})
    keys = sorted({key for _, _, key in clashes})
    where = (
        f" in partition(s) {', '.join(sorted({p or '(none)' for _, p, _ in clashes})[:_SHOWN])}"
        if scope == PARTITION_SCOPE
        else " (the index keeps a key unique across the table)"
    )
    raise ConcurrentWriteConflict(
        f"write {instant} to table '{meta_client.name}' conflicts with {', '.join(named)}, "
        f"which wrote the same new record key(s) {', '.join(keys[:_SHOWN])}"
        f"{' ...' if len(keys) > _SHOWN else ''}{where} after this write started: both "
        "would hold them, a duplicate. It was rolled back. Run it again: it will find the "
        "keys the other write stored"
    )

"""The metadata table's `record_index` partition: where each record key of the data table lives
(docs/design/metadata-table.md 1.5, 2.2, 4.1 and step 8 of section 7).

One record per data record is too many to pass through the driver, so the keys an action
changes never gather there for a large action:
- **write tasks** (the write handles, `hand_over_keys`) hand each written file's keys to the
  commit with its write stat: those the file group gained (inserts, a global index's moves in,
  and on merge-on-read the live keys of a log file where tagging cannot tell an update from
  the re-insert of a key a log deleted) and those it lost (deletes, moves out). A few keys
  ride in the stat; more go to a small parquet file under the instant's temp folder
  (`.hoodie/.temp/<instant>/.record_index_keys/`, removed with the markers) that the stat
  names. Updates in place hand over nothing, as Apache Hudi writes nothing for them.
- **at commit** (`RecordIndexChanges`): a small action's keys are made records on the driver
  and go into the delta commit with the other partitions' (`MetadataTableWriter.commit`); a
  large one's go through one Spark job (`write_log_files`): its tasks read the key files,
  the keys are grouped by record index file group (Java's `String.hashCode`, vectorized) and
  one task per touched file group writes that group's log file (an HFile data block of
  location records, a delete block of removed keys), named by the driver beforehand so that
  the delta commit's inflight names them (a crash leaves no file the MDT reads: a pending
  delta commit's files are removed by the next one). A key located and removed by one
  action (a move) keeps its location.
- **building** the partition (`build_base_files`): the live keys of every latest file slice
  (a base file's key column, merged with its log files on merge-on-read), read in Spark
  tasks, one base HFile per file group written by the task of that group.
- **replace commits, rollbacks and restores** (`replaced_sources`, `rollback_sources`):
  sources of keys read in tasks too: the replaced file groups' keys are removed; a rollback
  locates the keys of every file group it touched again, as restored, and removes those only
  the rolled-back files held (read before the rollback deletes them).

Every record a task makes is the one the driver path makes (`located_entries`): the location
record of Apache Hudi's `HoodieMetadataPayload.createRecordIndexUpdate` (the file id split as
its encoding 0 where it is `<uuid>-<n>`, the instant as epoch milliseconds in the table's
timeline zone), encoded once per file and instant (a record's value does not hold its key).
Without a Spark session (table services run from plain Python) everything runs on the driver.
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from ..config import RECORD_INDEX
from ..exceptions import malformed
from ..faults import crash_point
from ..fs_view import (
    BlockSpan,
    CommittedInstants,
    FileSlice,
    damaged_data_file,
    live_log_blocks,
)
from ..logformat import BlockType, read_log_file
from ..markers import MARKER_FOLDER
from ..merge import INSTANT, ORDERING, SEQUENCE, MergeMode, merge_slice
from ..metadata import WriteStat
from ..metadata_records import (
    RecordIndexRecord,
    encode_metadata_record,
    file_group_indexes,
)
from ..naming import parse_log_file_name
from ..schema import COMMIT_TIME, RECORD_KEY, constant_column, row_numbers
from ..storage import FileIO
from .metadata_files import log_content, metadata_base_file
from .metadata_jobs import group_key, grouped_write, put_task_file, result

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

KEYS_FOLDER = ".record_index_keys"
# A written file's keys ride in its write stat up to this many; more go to a key file.
INLINE_KEYS = 256
# An action whose record index changes are at most this many keys writes them from the
# driver; more, from Spark tasks. The job costs ~1.5 s on 2 cores whatever its size (a 100-row
# upsert: 2.6 s with it, 1.1 s without, as without the record index); the driver makes and
# writes 100,000 keys' log files in ~0.6 s (bench/record_index.py).
DRIVER_KEYS = 100_000
# ... and data files (a rollback's, a replace commit's replaced slices) up to this many bytes
# have their keys read on the driver.
DRIVER_BYTES = 64 * 1024 * 1024
# The size of one record index entry Apache Hudi sizes the partition by (its
# `HoodieBackedTableMetadataWriter.estimateFileGroupCount`: 48).
RECORD_INDEX_ENTRY_SIZE = 48
KEY, DELETED = "key", "deleted"
_KEY_FILE_SCHEMA = pa.schema([pa.field(KEY, pa.string()), pa.field(DELETED, pa.bool_())])
_BATCH_ROWS = 65536
_SOURCE_TASKS = 256  # at most this many tasks read an action's sources
_GROUP_TASKS = 256  # ... and write its file groups' files

# The rows sources turn into, for the Spark job (and the driver path).
GROUP, PARTITION, FILE_ID, INSTANT_TIME = "group", "partition", "file_id", "instant"
LOCATED_SCHEMA = pa.schema([
    pa.field(GROUP, pa.int32()), pa.field(KEY, pa.string()), pa.field(PARTITION, pa.string()),
    pa.field(FILE_ID, pa.string()), pa.field(INSTANT_TIME, pa.string()),
    pa.field(DELETED, pa.bool_()),
])  # fmt: skip
_LOCATED_DDL = (f"{GROUP} int, {KEY} string, {PARTITION} string, {FILE_ID} string, "
                f"{INSTANT_TIME} string, {DELETED} boolean")  # fmt: skip


# -- write tasks ---------------------------------------------------------------------------------
def keys_file_path(instant: str, data_file: str) -> str:
    """Where a write task puts the record index keys of the data file `data_file` (relative
    path) it wrote in `instant`: under the instant's temp folder, removed with its markers."""
    return posixpath.join(MARKER_FOLDER, instant, KEYS_FOLDER, data_file + ".parquet")


def _strings(keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> pa.Array:
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if not isinstance(keys, pa.Array):
        keys = pa.array(list(keys), pa.string())
    return keys.cast(pa.string())


def hand_over_keys(
    storage: FileIO,
    instant: str,
    stat: WriteStat,
    located: pa.Array | pa.ChunkedArray | Sequence[str],
    removed: pa.Array | pa.ChunkedArray | Sequence[str] = (),
) -> None:
    """Give the commit the record index changes of the file `stat` names: the keys its file
    group gained (`located`: they now live there) and lost (`removed`). A few ride in the
    stat, more go to a key file under the instant's temp folder that the stat names."""
    located, removed = _strings(located), _strings(removed)
    count = len(located) + len(removed)
    stat.index_keys = count
    if count == 0:
        return
    if count <= INLINE_KEYS:
        stat.located_keys = located.to_pylist()
        stat.removed_keys = removed.to_pylist()
        return
    assert stat.path is not None
    path = keys_file_path(instant, stat.path)
    table = pa.table({
        KEY: pa.concat_arrays([located, removed]),
        DELETED: pa.concat_arrays([constant_column(False, len(located), pa.bool_()),
                                   constant_column(True, len(removed), pa.bool_())]),
    }, schema=_KEY_FILE_SCHEMA)  # fmt: skip
    storage.write_parquet(path, table, "zstd", dictionary=False)
    crash_point("task.record_index_keys.written")
    stat.keys_file = path


# -- sources of keys ------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeySource:
    """Where some of an action's record index changes come from, as a Spark task reads them
    (JSON on the way): a write task's keys (`keys`, `removed` inline or a `keys_file`), or a
    file slice (`base_file`, `log_files` with their recorded `spans`) whose live keys are
    located (`removes`: removed) in `partition`'s file group `file_id` at `instant`, or the
    keys of some data files (`files`, see `file_keys`; `of_instant`: only its log blocks).
    With `written` (a file the action at `instant` wrote in that file group) the slice is the
    one it builds on, and the written file's changes (handed over, or else read from it) are
    held to the merged result instead (`written_rows`)."""

    partition: str
    file_id: str
    instant: str
    keys: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    keys_file: str | None = None
    base_file: str | None = None
    log_files: tuple[str, ...] = ()
    spans: tuple[tuple[BlockSpan, ...], ...] = ()
    removes: bool = False
    files: tuple[str, ...] = ()
    of_instant: str | None = None
    written: str | None = None

    @property
    def is_slice(self) -> bool:
        return self.base_file is not None or bool(self.log_files)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> KeySource:
        data = json.loads(text)
        data["keys"] = tuple(data["keys"])
        data["removed"] = tuple(data["removed"])
        data["log_files"] = tuple(data["log_files"])
        data["spans"] = tuple(tuple(tuple(s) for s in spans) for spans in data["spans"])
        data["files"] = tuple(data["files"])
        return cls(**data)

    @classmethod
    def of_slice(
        cls, file_slice: FileSlice, instant: str, spans: tuple[tuple[BlockSpan, ...], ...],
        removes: bool = False,
    ) -> KeySource:  # fmt: skip
        """The live keys of a file slice, located in its file group at `instant` (or removed)."""
        base = file_slice.base_file.relative_path if file_slice.base_file else None
        logs = tuple(lf.relative_path for lf in file_slice.log_files)
        return cls(file_slice.partition_path, file_slice.file_id, instant, base_file=base,
                   log_files=logs, spans=spans, removes=removes)  # fmt: skip

    def on_slice(
        self, file_slice: FileSlice | None, spans: tuple[tuple[BlockSpan, ...], ...]
    ) -> KeySource:
        """This source of a written file, held to `file_slice` (the committed slice it builds
        on; None: a new file group), whose log files' recorded blocks are `spans`."""
        if file_slice is None:
            return self
        base = file_slice.base_file.relative_path if file_slice.base_file else None
        logs = tuple(lf.relative_path for lf in file_slice.log_files)
        return replace(self, base_file=base, log_files=logs, spans=spans)


@dataclass(frozen=True)
class SliceReading:
    """What reading a file slice's live keys needs besides its files: the instants whose log
    blocks count, and the table's ordering field (a delete with an ordering value removes a
    key only where it orders after the stored version)."""

    committed: CommittedInstants
    merge_mode: MergeMode | None = None  # None: deletes order by arrival


def source_rows(
    storage: FileIO, source: KeySource, reading: SliceReading | None, count: int
) -> Iterator[pa.Table]:
    """The rows (`LOCATED_SCHEMA`) of one source: its keys with the record index file group
    each goes to (of `count`), where they now live, and whether they are removed."""
    if source.written is not None:
        assert reading is not None
        yield from written_rows(storage, source, reading, count)
        return
    located, removed = handed_over(storage, source)
    if len(located) or len(removed):
        yield _rows(source, located, False, count)
        yield _rows(source, removed, True, count)
    if source.is_slice:
        assert reading is not None
        yield _rows(source, slice_live_keys(storage, source, reading), source.removes, count)
    for relative in source.files:
        for keys, deleted in file_keys(storage, relative, source.of_instant, source.removes):
            yield _rows(source, keys, deleted, count)


def handed_over(storage: FileIO, source: KeySource) -> tuple[pa.Array, pa.Array]:
    """The keys a write task handed over with a source: (located, removed)."""
    located = [pa.array(source.keys, pa.string())]
    removed = [pa.array(source.removed, pa.string())]
    if source.keys_file is not None:
        with damaged_data_file(storage, source.keys_file, "a record index key file"):
            stored = storage.read_parquet(source.keys_file)
        keys, deleted = _strings(stored.column(KEY)), stored.column(DELETED).combine_chunks()
        located.append(keys.filter(pc.invert(deleted)))
        removed.append(keys.filter(deleted))
    return pa.concat_arrays(located), pa.concat_arrays(removed)


def written_rows(
    storage: FileIO, source: KeySource, reading: SliceReading, count: int
) -> Iterator[pa.Table]:
    """The rows of a file an action wrote (`source.written`), held to the slice it builds on
    (`source`'s files): its changes as handed over, or else read from the file (a record index
    another writer built while this action wrote: its tasks recorded none).

    A log file is merged after the slice's logs (its blocks at `source.instant` counted, as
    once the action completes), as a snapshot read merges them (`slice_live_keys`): only the
    keys it removes that the merge drops are removed (a delete whose ordering value is smaller
    than the stored version's loses: the record stays, and so does its entry), and only those
    it locates that the merge keeps are located (an update losing to an earlier delete).
    A base file is the file group's whole new version: its keys are located, and the keys the
    slice held that it does not are removed (a copy-on-write rewrite's deletes and moves out).
    """
    assert source.written is not None
    if source.keys or source.removed or source.keys_file is not None:
        located, removed = handed_over(storage, source)
    else:
        chunks = list(file_keys(storage, source.written, source.instant, removes=False))
        located = _concat([_strings(k) for k, deleted in chunks if not deleted])
        removed = _concat([_strings(k) for k, deleted in chunks if deleted])
    if _is_log(source.written):
        live = slice_live_keys(storage, source, reading)
        located = located.filter(pc.is_in(located, value_set=live))
        removed = removed.filter(pc.invert(pc.is_in(removed, value_set=live)))
    elif source.is_slice:
        held = _strings(slice_live_keys(storage, source, reading))
        gone = held.filter(pc.invert(pc.is_in(held, value_set=located)))
        removed = pa.concat_arrays([removed, gone])
    yield _rows(source, located, False, count)
    yield _rows(source, removed, True, count)


def _concat(chunks: list[pa.Array]) -> pa.Array:
    return pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())


def _is_log(relative: str) -> bool:
    return parse_log_file_name(posixpath.basename(relative)) is not None


@dataclass(frozen=True)
class _Counting:
    """The instants whose log blocks count: the committed ones and `also` (the action being
    committed, whose written file is merged after its slice)."""

    committed: CommittedInstants
    also: str

    def __contains__(self, instant: object) -> bool:
        return instant == self.also or instant in self.committed


def _rows(source: KeySource, keys: pa.Array, deleted: bool, count: int) -> pa.Table:
    keys = _strings(keys)
    n = len(keys)
    return pa.Table.from_arrays([
        pa.array(file_group_indexes(keys, count), pa.int32()), keys,
        constant_column(source.partition, n), constant_column(source.file_id, n),
        constant_column(source.instant, n), constant_column(deleted, n, pa.bool_()),
    ], schema=LOCATED_SCHEMA)  # fmt: skip


def file_keys(
    storage: FileIO, relative: str, of_instant: str | None, removes: bool
) -> Iterator[tuple[pa.Array, bool]]:
    """The record keys a data file holds, and whether each chunk is removed: a base file's key
    column and the data blocks of a log file (only `of_instant`'s, when given), removed when
    `removes` (the files a rollback undoes), else located there, with the log's deletes removed
    (the files of a write whose tasks handed over no keys). A file gone holds none."""
    if not storage.exists(relative):
        return
    if _is_log(relative):
        with damaged_data_file(storage, relative, "a log file"):
            blocks = list(read_log_file(storage, relative))
        for block in blocks:
            if of_instant is not None and block.instant_time != of_instant:
                continue
            if block.block_type in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
                with damaged_data_file(storage, relative, "a log block"):
                    keys = block.records(columns=[RECORD_KEY]).column(0).combine_chunks()
                yield keys, removes
            elif block.block_type is BlockType.DELETE and not removes:
                with damaged_data_file(storage, relative, "a log block"):
                    named = [r.record_key for r in block.deleted_records()]
                yield pa.array(named, pa.string()), True
        return
    with damaged_data_file(storage, relative, "a parquet base file"):
        parquet = storage.parquet_file(relative)
        for batch in parquet.iter_batches(columns=[RECORD_KEY], batch_size=_BATCH_ROWS):
            yield batch.column(0), removes


def slice_live_keys(storage: FileIO, source: KeySource, reading: SliceReading) -> pa.Array:
    """The keys a file slice holds after merging its base file with its log files' committed
    blocks, as a snapshot read merges them (`merge.merge_slice`): a key a log deleted is gone
    unless a later version brought it back (or, with an ordering field, the delete orders
    before the stored version). A log file the source's action wrote (`written`) is merged
    last, its blocks of that action counted."""
    mode = reading.merge_mode or MergeMode.commit_time()
    ordering = mode.delete_ordering
    if ordering is None:
        mode = mode.without_ordering()
    logs = list(zip(source.log_files, source.spans or ((),) * len(source.log_files),
                    strict=True))  # fmt: skip
    counts: Container[str] = reading.committed
    if source.written is not None and _is_log(source.written):
        # a layout 1 view lists the file in its slice already (its name is the slice's)
        logs = [(log, spans) for log, spans in logs if log != source.written]
        logs.append((source.written, ()))
        counts = _Counting(reading.committed, source.instant)
    columns = [RECORD_KEY, COMMIT_TIME] + ([ordering] if ordering else [])
    versions: list[pa.Table] = []
    deletes: list[pa.Table] = []
    sequence = 0

    def add(rows: pa.Table, instant: str) -> None:
        nonlocal sequence
        n = rows.num_rows
        written = constant_column(instant, n)
        if COMMIT_TIME in rows.column_names:
            written = pc.coalesce(rows.column(COMMIT_TIME).cast(pa.string()), written)
        table = pa.table({RECORD_KEY: rows.column(RECORD_KEY).cast(pa.string()),
                          SEQUENCE: row_numbers(sequence, n), INSTANT: written})  # fmt: skip
        if ordering:
            values = rows.column(ordering) if ordering in rows.column_names else pa.nulls(n)
            if versions and ordering in versions[0].column_names:
                values = values.cast(versions[0].schema.field(ordering).type)
            table = table.append_column(ordering, values)
        versions.append(table)
        sequence += n

    if source.base_file is not None:
        with damaged_data_file(storage, source.base_file, "a parquet base file"):
            parquet = storage.parquet_file(source.base_file)
            present = [c for c in columns if c in parquet.schema_arrow.names]
            base = parquet.read(columns=present)
        if not logs:
            return base.column(RECORD_KEY).combine_chunks().cast(pa.string())
        add(base, "")
    for relative, block in live_log_blocks(storage, logs, reading.committed, counts):
        instant = block.instant_time or ""
        what = f"a log block of instant {instant}"
        if block.block_type in (BlockType.PARQUET_DATA, BlockType.AVRO_DATA):
            with damaged_data_file(storage, relative, what):
                rows = block.records()
            add(rows.select([c for c in columns if c in rows.column_names]), instant)
        elif block.block_type is BlockType.DELETE:
            with damaged_data_file(storage, relative, what):
                named = block.deleted_records()
            n = len(named)
            deletes.append(pa.table({
                RECORD_KEY: pa.array([r.record_key for r in named], pa.string()),
                SEQUENCE: row_numbers(sequence, n), INSTANT: constant_column(instant, n),
                ORDERING: pa.array([None if r.natural_order else r.ordering_value
                                    for r in named]),
            }))  # fmt: skip
            sequence += n
    if not versions:
        return pa.array([], pa.string())
    rows = pa.concat_tables(versions, promote_options="permissive")
    removed = (pa.concat_tables(deletes, promote_options="permissive") if deletes
               else pa.table({RECORD_KEY: pa.array([], pa.string())}))  # fmt: skip
    merged = merge_slice(rows, RECORD_KEY, removed, mode)
    return merged.column(RECORD_KEY).combine_chunks()


# -- records --------------------------------------------------------------------------------------
@dataclass
class EntryMaker:
    """Location records as HFile entries: one Avro value per (partition, file id, instant),
    shared by every key placed there (the record's key lives in the HFile key)."""

    version: int
    timezone: str
    _values: dict[tuple[str, str, str], bytes] = field(default_factory=dict)

    def value(self, partition: str, file_id: str, instant: str) -> bytes:
        cached = self._values.get((partition, file_id, instant))
        if cached is None:
            record = RecordIndexRecord.placing("", partition, file_id, instant, self.timezone)
            cached = encode_metadata_record(record, self.version)
            self._values[(partition, file_id, instant)] = cached
        return cached

    def changes(self, rows: pa.Table) -> tuple[list[tuple[bytes, bytes]], list[str]]:
        """One file group's rows (`LOCATED_SCHEMA`): its sorted entries, and the keys removed
        that no row locates (a key moved by the action keeps its new location)."""
        deleted = rows.column(DELETED).combine_chunks()
        located = rows.filter(pc.invert(deleted))
        gone = set(rows.filter(deleted).column(KEY).to_pylist())
        by_key: dict[str, bytes] = {}
        for key, partition, file_id, instant in zip(
            located.column(KEY).to_pylist(), located.column(PARTITION).to_pylist(),
            located.column(FILE_ID).to_pylist(), located.column(INSTANT_TIME).to_pylist(),
            strict=True,
        ):  # fmt: skip
            by_key[key] = self.value(partition, file_id, instant)
        gone.difference_update(by_key)
        entries = sorted((key.encode("utf-8"), value) for key, value in by_key.items())
        return entries, sorted(gone)


def located_entries(
    rows: pa.Table, version: int, timezone: str
) -> dict[int, tuple[list[tuple[bytes, bytes]], list[str]]]:
    """The driver path: rows of every source, by record index file group: (entries, removed)."""
    maker = EntryMaker(version, timezone)
    out = {}
    groups = rows.column(GROUP).combine_chunks()
    for group in sorted(set(groups.to_pylist())):
        out[group] = maker.changes(rows.filter(pc.equal(groups, group)))
    return out


# -- the Spark jobs ------------------------------------------------------------------------------
@dataclass
class SourceReader:
    """`mapInArrow`: sources (JSON) in, their rows out. Picklable."""

    storage: FileIO
    reading: SliceReading | None
    count: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for text in batch.column(0).to_pylist():
                source = KeySource.from_json(text)
                for table in source_rows(self.storage, source, self.reading, self.count):
                    if table.num_rows:
                        yield from table.to_batches(max_chunksize=_BATCH_ROWS)


@dataclass
class GroupWriter:
    """`applyInArrow`, one record index file group's rows in: its file written, its write
    stat out (JSON). A delta commit's log file at the name the driver planned (`names`), or
    (`base_file`) the base HFile of the partition's initialization. Picklable."""

    storage: FileIO  # the metadata table's
    version: int
    timezone: str
    instant: str
    names: dict[int, str]  # group index -> the file's path in the metadata table
    base_file: bool = False

    def __call__(self, key: tuple[Any, ...], rows: pa.Table) -> pa.Table:
        group = group_key(key[0])
        entries, removed = EntryMaker(self.version, self.timezone).changes(rows)
        path = self.names[int(group)]
        if self.base_file:
            content = metadata_base_file(entries, self.version)
        else:
            content = log_content(RECORD_INDEX, entries, removed, self.instant, self.version)
        if not content:
            return result()
        put_task_file(self.storage, path, content, "task.record_index_file.written")
        return result(group=int(group), path=path, size=len(content), writes=len(entries),
                      deletes=len(removed))  # fmt: skip


@dataclass(frozen=True)
class WrittenGroup:
    """A file a record index job wrote: its file group index, path, size and counts."""

    group: int
    path: str
    size: int
    writes: int
    deletes: int


def write_with_spark(
    spark: SparkSession,
    data_storage: FileIO,
    sources: Sequence[KeySource],
    reading: SliceReading | None,
    writer: GroupWriter,
    count: int,
) -> list[WrittenGroup]:
    """One Spark job: the sources read in tasks, their rows grouped by record index file group,
    each touched group's file written by one task (`writer`)."""
    # a slice or key file a task; a task a file group (the groups it touches, at most), so
    # they are written in parallel
    out = grouped_write(
        spark, [s.to_json() for s in sources], SourceReader(data_storage, reading, count),
        _LOCATED_DDL, [GROUP], writer, _SOURCE_TASKS,
        min(count, len(writer.names), _GROUP_TASKS),
    )  # fmt: skip
    return [WrittenGroup(**r) for r in out]


def read_on_driver(
    data_storage: FileIO, sources: Iterable[KeySource], reading: SliceReading | None, count: int
) -> pa.Table:
    """Every source's rows, read here (small actions, or no Spark session)."""
    tables = [t for s in sources for t in source_rows(data_storage, s, reading, count)]
    return pa.concat_tables(tables) if tables else LOCATED_SCHEMA.empty_table()


def active_session(spark: SparkSession | None) -> SparkSession | None:
    """`spark`, or the session active in this thread, or None (then the driver does it all)."""
    if spark is not None:
        return spark
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return None
    return SparkSession.getActiveSession()


def on_driver(keys: int, size: int = 0) -> bool:
    """Are `keys`, and the keys of data files of `size` bytes, few enough to make their
    records on the driver, without a Spark job?"""
    return keys <= DRIVER_KEYS and size <= DRIVER_BYTES


# -- what an action changes ------------------------------------------------------------------------
@dataclass
class RecordIndexChanges:
    """An action's record index changes, as sources of keys; `count` of them known up front
    (keys the write tasks handed over), more where slices are to be read."""

    sources: list[KeySource] = field(default_factory=list)
    count: int = 0  # keys handed over
    size: int = 0  # bytes of data files and key files to read

    def add(self, source: KeySource, count: int = 0, size: int = 0) -> None:
        self.sources.append(source)
        self.count += count
        self.size += size

    @property
    def small(self) -> bool:
        """Few enough to make on the driver."""
        return on_driver(self.count, self.size)

    @classmethod
    def of_stats(cls, instant: str, stats: Iterable[WriteStat]) -> RecordIndexChanges:
        """What the write tasks handed over with the stats of the files they wrote."""
        changes = cls()
        for stat in stats:
            if not stat.index_keys:
                continue
            changes.add(KeySource(
                stat.partition_path, stat.file_id, instant,
                keys=tuple(stat.located_keys or ()), removed=tuple(stat.removed_keys or ()),
                keys_file=stat.keys_file,
                # held to the slice it builds on (`written_rows`), which the commit adds
                written=stat.path if stat.held_to_slice else None,
            ), stat.index_keys)  # fmt: skip
        return changes


def unrecorded(stats: Iterable[WriteStat]) -> list[WriteStat]:
    """Stats of written files whose tasks recorded no record index keys (a record index built
    by another writer while this action wrote): their keys are read from the files, and held
    to the slices they build on (`written_rows`)."""
    return [s for s in stats if s.path and s.index_keys is None]


def stats_of(written: Sequence[WrittenGroup], file_ids: Mapping[int, str]) -> list[WriteStat]:
    """The write stats of the files a job wrote, in the metadata table's partition."""
    out = []
    for done in sorted(written, key=lambda w: w.group):
        stat = WriteStat(
            file_id=file_ids[done.group], partition_path=RECORD_INDEX, path=done.path,
            num_writes=done.writes, num_inserts=done.writes, total_write_bytes=done.size,
            file_size_in_bytes=done.size,
        )  # fmt: skip
        stat.num_deletes = done.deletes
        out.append(stat)
    return out


# -- rollbacks and restores ----------------------------------------------------------------------
# A rollback's (or restore's) record of what it undoes for the record index, kept under its own
# instant's temp folder until it completes: per instant undone, the keys of the files it
# deletes or retracts (read before they go: a run resumed after a crash finds them there) and
# the file groups they belong to, whose restored slices are located again afterwards.
_GROUPS_FILE = "groups.json"


def undo_folder(undoing: str, target: str) -> str:
    """Where a rollback or restore at `undoing` keeps what it captured of instant `target`."""
    return posixpath.join(MARKER_FOLDER, undoing, KEYS_FOLDER, target)


def capture_undone(
    storage: FileIO,
    undoing: str,
    target: str,
    files: Sequence[str],
    groups: Iterable[tuple[str, str]],
    spark: SparkSession | None = None,
) -> None:
    """Before a rollback or restore at `undoing` deletes (or retracts) `files` of instant
    `target`: their keys, and the file groups (partition, file id) it touches, kept in its
    temp folder. Files gone already (a resumed run) keep what the first run kept."""
    folder = undo_folder(undoing, target)
    listed = sorted({(p, f) for p, f in groups})
    storage.write_atomic(posixpath.join(folder, _GROUPS_FILE), json.dumps(listed).encode())
    present = [f for f in files if storage.exists(f)]
    if not present:
        return
    size = sum(storage.size(f) for f in present)
    session = None if on_driver(0, size) else active_session(spark)
    capture = KeyCapture(storage, folder, target)
    if session is None:
        for relative in present:
            capture.capture(relative)
        return
    frame = spark_frame(session, [(f,) for f in present], "file string")
    frame.repartition(min(len(present), _SOURCE_TASKS)).mapInArrow(capture, "file string").collect()
    crash_point("rollback.record_index_keys_captured")


def spark_frame(spark: SparkSession, rows: list[tuple[str]], ddl: str) -> Any:
    return spark.createDataFrame(rows, ddl)


@dataclass
class KeyCapture:
    """Writes the keys of rolled-back data files to key files (`mapInArrow`, or called on the
    driver). Picklable."""

    storage: FileIO
    folder: str
    target: str

    def capture(self, relative: str) -> None:
        chunks = [k.cast(pa.string()) for k, _ in file_keys(self.storage, relative, self.target,
                                                            removes=True)]  # fmt: skip
        keys = pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())
        table = pa.table({KEY: keys, DELETED: constant_column(True, len(keys), pa.bool_())},
                         schema=_KEY_FILE_SCHEMA)  # fmt: skip
        self.storage.write_parquet(posixpath.join(self.folder, relative + ".parquet"), table,
                                   "zstd", dictionary=False)  # fmt: skip

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for relative in batch.column(0).to_pylist():
                self.capture(relative)
                yield pa.RecordBatch.from_pydict({"file": [relative]})


def undone_changes(
    storage: FileIO, undoing: str, instant: str, view: Any
) -> RecordIndexChanges | None:
    """A rollback's or restore's record index changes, once its files are undone: the keys
    it captured removed, and every live key of the latest slices of the file groups it
    touched located again (`view`: the data table's file-system view after the undo); None
    where it captured nothing (no instant it undid had counted in the record index)."""
    root = posixpath.join(MARKER_FOLDER, undoing, KEYS_FOLDER)
    captured = storage.list_files(root, recursive=True)
    if not captured:
        return None
    changes = RecordIndexChanges()
    groups: set[tuple[str, str]] = set()
    for info in captured:
        if info.name == _GROUPS_FILE:
            with malformed(storage.uri(info.relative_path), "the file groups a rollback undid"):
                pairs = json.loads(storage.read_bytes(info.relative_path))
                groups.update((str(p), str(f)) for p, f in pairs)
        elif info.name.endswith(".parquet"):
            changes.add(KeySource("", "", instant, keys_file=info.relative_path), size=info.size)
    partitions = sorted({p for p, _ in groups})
    for group in view.file_groups(partitions):
        latest = group.latest_slice
        if latest is None or (group.partition_path, group.file_id) not in groups:
            continue
        logs = tuple(lf.relative_path for lf in latest.log_files)
        changes.add(
            KeySource.of_slice(latest, latest.base_instant, view.block_spans(logs)),
            size=slice_size(latest),
        )
    return changes


def slice_size(file_slice: FileSlice) -> int:
    """The bytes of a file slice's files."""
    base = file_slice.base_file.size if file_slice.base_file is not None else 0
    return base + sum(lf.size for lf in file_slice.log_files)


def forget_undone(storage: FileIO, undoing: str) -> None:
    """A completed rollback's or restore's captured keys go."""
    storage.delete_dir(posixpath.join(MARKER_FOLDER, undoing))

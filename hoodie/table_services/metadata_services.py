"""The metadata table's own services: compaction, clean and archival (docs/design/metadata-table.md,
section 1.4), as Apache Hudi's `HoodieBackedTableMetadataWriter.performTableServices` runs them.

Every action on the data table adds one delta commit, so one log file, to the metadata table
(MDT); without these services a reader would merge ever more log blocks, and the MDT's
timeline would grow without bound. After a write, under the table lock when there is one:
- **clean** (Hudi's MDT cleaner: KEEP_LATEST_COMMITS, `min(hoodie.cleaner.commits.retained,
  20)` commits), once three MDT instants completed since its latest compaction (a reader that
  opened the slices the compaction replaced still finds them);
- **compaction**, once due by `hoodie.metadata.compact.trigger.strategy` (`_due`; by default
  `hoodie.metadata.compact.max.delta.commits` delta commits completed since the latest one,
  else `hoodie.metadata.compact.max.delta.seconds` elapsed, both, or either), and only when
  no data instant at or before the MDT's latest delta commit is pending: a base file at time
  T must hold every action up to T, and a pending data instant's delta commit may still
  come, or belong to a write that failed. Every file slice with log files becomes a new HFile
  base file of its merged records;
- **archival** of the MDT's timeline (`hoodie.keep.min/max.commits`), never of an instant the
  data table's active timeline still holds (readers decide which MDT blocks count by it), nor
  of the latest compaction and the delta commits since.
The data table's own archival, in turn, stops at the MDT's latest compaction
(`archival.py`): an MDT log block counts only while its data instant is on the active timeline.

Instant times (design 1.4): version 6 names the compaction and the clean after the MDT's latest
delta commit (`<t>001`, `<t>002`), so that no later delta commit is older than them; version 8
gives them times of their own, and readers order file slices by completion time.

A compaction or clean a crash left pending is removed before the MDT's next delta commit
(`MetadataTableWriter.roll_back_pending`): nothing reads a pending compaction's base files.
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, cast

import pyarrow as pa

from .. import properties as props
from ..compaction_plan import CompactionOperation, CompactionPlan
from ..config import RECORD_INDEX, WriteConfig, option_default
from ..faults import crash_point
from ..fs_view import FileSlice
from ..hfile import HFileReader
from ..logformat import BlockType
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata, WriteStat
from ..metadata_records import encode_metadata_record, metadata_record_schema
from ..options.write import CompactionTriggerStrategy
from ..table_metadata import HFILE_EXTENSION, TableMetadata
from ..timeline import Action, Instant, State, Timeline, instant_to_datetime, new_instant_time
from ..transaction import record_index
from ..transaction.failed_writes import FailedWritesPolicy
from ..transaction.metadata_files import deflate_of, metadata_base_file
from ..transaction.metadata_writer import (
    FILES_PARTITION,
    MAINTAINED,
    WRITE_TOKEN,
    MetadataTableWriter,
)
from ..transaction.record_index import active_session, slice_size
from .archival import archive
from .clean import KEEP_LATEST_COMMITS, CleanConfig, Cleaner

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

COMPACTION_SUFFIX = "001"  # version 6: Apache Hudi's `OperationSuffix.COMPACTION`
CLEAN_SUFFIX = "002"  # and `OperationSuffix.CLEAN`
MAX_COMMITS_RETAINED = 20  # `DEFAULT_METADATA_CLEANER_COMMITS_RETAINED`
INSTANTS_BEFORE_CLEAN = 3  # MDT instants after a compaction before its replaced slices go


@dataclass(frozen=True)
class MetadataServicesConfig:
    """What the MDT's services follow: its own compaction trigger, the rest the data table's."""

    compaction_delta_commits: int = 10  # hoodie.metadata.compact.max.delta.commits
    commits_retained: int = 10  # min(hoodie.cleaner.commits.retained, 20)
    keep_min_commits: int = 20  # hoodie.keep.min.commits
    keep_max_commits: int = 30  # hoodie.keep.max.commits
    # hoodie.metadata.compact.max.delta.seconds and hoodie.metadata.compact.trigger.strategy
    compaction_delta_seconds: int = cast(int, option_default("metadata_compaction_delta_seconds"))
    compaction_trigger: str = cast(str, option_default("metadata_compaction_trigger"))

    @classmethod
    def of(cls, config: WriteConfig) -> MetadataServicesConfig:
        return cls(
            config.metadata_compaction_delta_commits,
            min(config.cleaner_commits_retained, MAX_COMMITS_RETAINED),
            config.keep_min_commits,
            config.keep_max_commits,
            config.metadata_compaction_delta_seconds,
            config.metadata_compaction_trigger,
        )


@dataclass
class MetadataServicesResult:
    """What one run did: the instants of its clean and compaction (None: not run), and how
    many MDT instants it archived."""

    clean: str | None = None
    compaction: str | None = None
    archived: int = 0


def run_metadata_table_services(
    data: HoodieTableMetaClient,
    config: MetadataServicesConfig,
    check_lock: Callable[[], None] = lambda: None,
    spark: SparkSession | None = None,
) -> MetadataServicesResult:
    """Clean, compact and archive the metadata table of `data`, where it has one we keep
    (`files` completed). Call it under the table lock, with the data instant complete;
    `check_lock` raises if that lock was lost meanwhile (its lease ran out, and another writer
    may have removed this compaction as a crashed one): it is called just before the
    compaction completes. A large `record_index` is compacted in Spark tasks (`spark`, or the
    active session), a file group a task."""
    result = MetadataServicesResult()
    data.properties = HoodieTableMetaClient.load(data.storage).properties
    partitions = props.metadata_partitions(data.properties.extra)
    if FILES_PARTITION not in partitions or not set(partitions) <= set(MAINTAINED):
        return result
    writer = MetadataTableWriter.open_existing(data)
    if writer is None:
        return result
    writer.roll_back_pending()
    result.clean = _clean(writer, config)
    data_timeline = data.timeline()
    result.compaction = _compact(writer, data_timeline, config, check_lock=check_lock,
                                 spark=spark)  # fmt: skip
    archived = archive(
        writer.mdt, config.keep_min_commits, config.keep_max_commits,
        max_delta_commits=config.compaction_delta_commits, keep_metadata_table=True,
        retain_from=min((i.timestamp for i in data.timeline()), default=None),
    )  # fmt: skip
    result.archived = len(archived)
    return result


def compact_metadata_table(data: HoodieTableMetaClient) -> str | None:
    """Compact every latest slice of the metadata table now, with log files or not (after an
    upgrade to version 8: no version 6 log file is left in its latest slices, and they start
    with base files of a version 8 instant, as after Apache Hudi's upgrade; hudi-rs reads a
    version 8 metadata table as of its latest instant, which a version 6 suffixed instant,
    `<t>001`, is not to it). The compaction's instant, or None where nothing was compacted.
    Under the table lock."""
    data.properties = HoodieTableMetaClient.load(data.storage).properties  # afresh
    writer = MetadataTableWriter.open_existing(data)
    if writer is None:
        return None
    writer.roll_back_pending()
    forced = MetadataServicesConfig(compaction_delta_commits=0)
    return _compact(writer, data.timeline(), forced, every_slice=True)


def latest_compaction(timeline: Timeline) -> Instant | None:
    """The MDT's latest completed compaction (a compaction completes as a commit)."""
    compactions = [i for i in timeline.completed if i.action is Action.COMMIT]
    return compactions[-1] if compactions else None


def _latest_delta_commit(timeline: Timeline) -> str | None:
    deltas = [i.timestamp for i in timeline.completed if i.action is Action.DELTA_COMMIT]
    return deltas[-1] if deltas else None


def _first_delta_commit(timeline: Timeline) -> str:
    deltas = [i.timestamp for i in timeline.completed if i.action is Action.DELTA_COMMIT]
    return deltas[0] if deltas else ""


_TIME_ONLY = CompactionTriggerStrategy.TIME_ELAPSED.value
_BOTH = CompactionTriggerStrategy.NUM_AND_TIME.value
_EITHER = CompactionTriggerStrategy.NUM_OR_TIME.value


def _due(config: MetadataServicesConfig, delta_commits: int, start: str, latest: str) -> bool:
    """Is the MDT due for compaction, as Apache Hudi 1.2's `needCompact` decides by its trigger
    strategy: `delta_commits` completed since its latest compaction against
    `hoodie.metadata.compact.max.delta.commits`, and the seconds from `start` (that compaction,
    or the first delta commit when none) to `latest`, its latest delta commit (the action just
    written), against `hoodie.metadata.compact.max.delta.seconds`. Apache Hudi measures to the
    compaction's own instant time, which on version 6 is `latest` (`<latest>001`) and on
    version 8 a new one: the latest delta commit stands for it on both, so that the trigger
    depends on the timeline alone. NUM_COMMITS_AFTER_LAST_REQUEST is NUM_COMMITS for us (see
    `CompactionTriggerStrategy`)."""
    by_count = delta_commits >= config.compaction_delta_commits
    if config.compaction_trigger not in (_TIME_ONLY, _BOTH, _EITHER):
        return by_count
    by_time = _seconds(latest) - _seconds(start) >= config.compaction_delta_seconds
    if config.compaction_trigger == _TIME_ONLY:
        return by_time
    return by_count and by_time if config.compaction_trigger == _BOTH else by_count or by_time


def _seconds(instant_time: str) -> int:
    """An instant time in whole seconds (Apache Hudi's `parsedToSeconds`; a version 6 MDT
    suffix, `<t>001`, is ignored). An initialization instant of a table that had no commit
    (`00000000000000...`) is no date: 0, as Apache Hudi reads its `INIT_INSTANT_TS`, so a
    time trigger counts from long ago and fires."""
    try:
        return int(instant_to_datetime(instant_time).timestamp())
    except ValueError:
        return 0


def _clean(writer: MetadataTableWriter, config: MetadataServicesConfig) -> str | None:
    mdt = writer.mdt
    timeline = mdt.timeline()
    latest = _latest_delta_commit(timeline)
    compaction = latest_compaction(timeline)
    if latest is None or compaction is None:
        return None  # no slice was replaced yet
    since = [i for i in timeline.completed if i.timestamp > compaction.timestamp]
    if len(since) < INSTANTS_BEFORE_CLEAN:
        return None
    instant_time = latest + CLEAN_SUFFIX if writer.version < 8 else None
    if instant_time is not None and any(i.timestamp == instant_time for i in timeline):
        return None  # cleaned after this delta commit already
    cleaner = Cleaner(mdt, CleanConfig(KEEP_LATEST_COMMITS, config.commits_retained),
                      FailedWritesPolicy(mdt.storage))  # fmt: skip
    cleaned = cleaner.run(instant_time)
    return cleaned.start_clean_time if cleaned is not None else None


def _compact(
    writer: MetadataTableWriter,
    data_timeline: Timeline,
    config: MetadataServicesConfig,
    every_slice: bool = False,
    check_lock: Callable[[], None] = lambda: None,
    spark: SparkSession | None = None,
) -> str | None:
    mdt = writer.mdt
    timeline = mdt.timeline()
    latest = _latest_delta_commit(timeline)
    if latest is None:
        return None
    compacted = latest_compaction(timeline)
    after = compacted.timestamp if compacted is not None else ""
    since = [i for i in timeline.completed
             if i.action is Action.DELTA_COMMIT and i.timestamp > after]  # fmt: skip
    if not _due(config, len(since), after or _first_delta_commit(timeline), latest):
        return None
    blocking = [i.timestamp for i in data_timeline.pending if i.timestamp <= latest]
    if blocking:
        log.info(
            "table '%s': the metadata table is not compacted now: data instant(s) %s at or "
            "before its latest delta commit %s are pending",
            writer.data.name, ", ".join(blocking), latest,
        )  # fmt: skip
        return None
    if writer.version < 8:
        instant_time = latest + COMPACTION_SUFFIX
        if any(i.timestamp == instant_time for i in timeline):
            return None
    else:
        instant_time = new_instant_time(after=timeline.last_timestamp())
    metadata = TableMetadata.open(writer.data, data_timeline)
    if metadata is None:
        return None
    slices = [
        s for partition in metadata.partitions() for s in metadata.file_slices(partition)
        if s.log_files or every_slice
    ]  # fmt: skip
    if not slices:
        return None
    plan = CompactionPlan([
        CompactionOperation(
            s.partition_path, s.file_id, s.base_instant,
            s.base_file.name if s.base_file else None,
            tuple(f.name for f in s.log_files),
        )
        for s in slices
    ])  # fmt: skip
    requested = Instant(instant_time, Action.COMPACTION, State.REQUESTED)
    mdt.save_instant(requested, plan.to_avro())
    crash_point("metadata_table.compaction_requested")
    mdt.save_instant(requested.with_state(State.INFLIGHT))
    commit = CommitMetadata(
        operation_type="COMPACT",
        compacted=True,
        extra_metadata={"schema": metadata_record_schema(writer.version)},
    )
    in_tasks = [s for s in slices if s.partition_path == RECORD_INDEX]
    session = None
    # (an eighth of what the driver reads for a commit: merging and writing a file group of
    # 100,000 keys takes it ~0.6 s)
    if in_tasks and sum(slice_size(s) for s in in_tasks) > record_index.DRIVER_BYTES // 8:
        session = active_session(spark)
    compactor = SliceCompactor(metadata, writer.version, instant_time)
    for file_slice in slices:
        if session is None or file_slice.partition_path != RECORD_INDEX:
            commit.add(compactor.compact(file_slice))
    if session is not None:
        for stat in compactor.in_tasks(session, in_tasks):
            commit.add(stat)
    crash_point("metadata_table.compaction_written")
    check_lock()
    mdt.save_instant(requested.with_state(State.COMPLETED), mdt.commit_content(commit))
    log.info("table '%s': metadata table compacted at %s (%d file slice(s))",
             writer.data.name, instant_time, len(slices))  # fmt: skip
    return instant_time


@dataclass(frozen=True)
class SliceCompactor:
    """One MDT compaction's work on a file slice: its records merged (as a reader merges them)
    into a base HFile at the compaction's instant, and the write stat of it; on the driver, or
    (`in_tasks`) one Spark task a slice, which a record index of millions of keys needs: one
    Python process would hold and encode them all. Picklable (the metadata table reader
    travels with it)."""

    metadata: TableMetadata
    version: int
    instant_time: str

    def compact(self, file_slice: FileSlice) -> WriteStat:
        entries = None
        if file_slice.partition_path == RECORD_INDEX:
            entries = self._raw_entries(file_slice)
        if entries is None:
            records = self.metadata.read_file_slice(file_slice)
            entries = sorted(
                (key.encode("utf-8"), encode_metadata_record(record, self.version))
                for key, record in records.items()
            )
        base = metadata_base_file(entries, self.version, deflate_of(file_slice.partition_path))
        name = f"{file_slice.file_id}_{WRITE_TOKEN}_{self.instant_time}{HFILE_EXTENSION}"
        relative = posixpath.join(file_slice.partition_path, name)
        self.metadata.storage.write_atomic(relative, base)
        return WriteStat(
            file_id=file_slice.file_id, partition_path=file_slice.partition_path,
            path=relative, prev_commit=file_slice.base_instant, num_writes=len(entries),
            total_write_bytes=len(base), file_size_in_bytes=len(base),
            total_log_files_compacted=len(file_slice.log_files),
            total_log_size_compacted=sum(f.size for f in file_slice.log_files),
        )  # fmt: skip

    def _raw_entries(self, file_slice: FileSlice) -> list[tuple[bytes, bytes]] | None:
        """A `record_index` slice merged without decoding a record: a newer entry of a key
        replaces the older (the record index's merge rule), a delete removes it, and the
        values go on as stored, which is what decoding and encoding them again gives (Avro's
        encoding of a datum is one) as long as every block holds the table version's schema;
        None where one does not (the decoding merge then)."""
        schema = metadata_record_schema(self.version).encode("utf-8")
        logs: dict[bytes, bytes | None] = {}
        for _, block in self.metadata.log_blocks(file_slice):
            if block.block_type is BlockType.DELETE:
                for gone in block.deleted_records():
                    logs[gone.record_key.encode("utf-8")] = None
                continue
            if block.block_type is not BlockType.HFILE_DATA:
                return None
            reader = block.hfile()
            if (block.schema or "").encode("utf-8") != schema or reader.file_info.get(
                b"schema"
            ) != schema:
                return None
            logs.update(reader)
        merged: dict[bytes, bytes] = {}
        base = file_slice.base_file
        if base is not None:
            where = self.metadata.storage.uri(base.relative_path)
            reader = HFileReader(self.metadata.storage.read_bytes(base.relative_path), where)
            if reader.file_info.get(b"schema") != schema:
                return None
            merged.update(reader)
        for key, value in logs.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return sorted(merged.items())

    def in_tasks(self, spark: SparkSession, slices: list[FileSlice]) -> list[WriteStat]:
        frame = spark.createDataFrame([(i,) for i in range(len(slices))], "slice int")
        task = _SliceTask(self, slices)
        rows = frame.repartition(len(slices)).mapInArrow(task, "stat string").collect()
        return [WriteStat(**json.loads(r["stat"])) for r in rows]


@dataclass(frozen=True)
class _SliceTask:
    """`mapInArrow`: slice numbers in, the stats of their new base files out."""

    compactor: SliceCompactor
    slices: list[FileSlice]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for number in batch.column(0).to_pylist():
                stat = self.compactor.compact(self.slices[number])
                yield pa.RecordBatch.from_pydict({"stat": [json.dumps(asdict(stat))]})

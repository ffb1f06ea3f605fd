"""Read planning: from a query (type, instants, partition filters) to the file slices to read.

Runs on the driver and opens no data file: it reads the timeline, commit metadata and
listings only. Each split is one file slice, the unit a Spark task reads (and, for
merge-on-read, merges).
- snapshot / time travel: the latest file slice of every file group as of the instant;
- read-optimized: the same, base files only;
- incremental: the file groups the instants in (begin, end] wrote, as of `end`, keeping only
  rows whose `_hoodie_commit_time` falls in the range. On a layout 2 timeline (Hudi 1.x) the
  range is one of completion times, as Apache Hudi 1.x and hudi-rs read it: the instants that
  completed in (begin, end], read as of the last write completed by `end`, keeping the rows
  those instants wrote (rows carry the requested time). Time travel (`as.of.instant`) stays
  by requested time in both layouts, as hudi-rs reads it.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..avro_metadata import CleanMetadata
from ..exceptions import DamagedFileError, InvalidConfigError, MissingDataFileError, TimelineError
from ..fs_view import BlockSpan, CommittedInstants, FileSystemView, timeline_start
from ..meta_client import HoodieTableMetaClient
from ..table_metadata import MetadataListing, TableMetadata
from ..timeline import WRITE_ACTIONS, Action, Instant, Timeline
from .options import BEGIN_INSTANT, INCREMENTAL, READ_OPTIMIZED, SNAPSHOT, ReadOptions

_WRITE_ACTION_NAMES = frozenset(a.value for a in WRITE_ACTIONS)
LOG_COMPACT = "LOG_COMPACT"  # the operation type of a log compaction's commit metadata


@dataclass(frozen=True)
class FileSplit:
    """One file slice to read: its base file and the log files after it (relative paths)."""

    partition_path: str
    file_id: str
    base_file: str | None
    log_files: tuple[str, ...] = ()
    size: int = 0  # bytes of the base and log files, for packing splits into tasks
    # Per log file: the completed writes' blocks in it (instant, first byte, end byte), which
    # the slice reader holds the file to (`hoodie.fs_view.checked_log_blocks`).
    log_writes: tuple[tuple[BlockSpan, ...], ...] = ()


@dataclass
class ReadPlan:
    splits: list[FileSplit]
    as_of: str | None  # the instant the snapshot is taken at (None: the table is empty)
    commit_time_range: tuple[str, str] | None = None  # incremental: (begin excl., end incl.)
    commit_times: frozenset[str] | None = None  # layout 2 incremental: see SliceReadSpec
    partitions_pruned: int = 0
    merge_logs: bool = False
    instants: list[str] = field(default_factory=list)
    # The instants whose files and log blocks the read counts: those of the timeline the
    # splits were listed against, never a later one (see `FileSystemView`).
    committed: CommittedInstants | None = None
    # A snapshot read as of the table's latest completed write (no time travel, not
    # incremental, not read-optimized): the state the record index describes.
    latest: bool = False
    # The metadata table the splits were listed through (None: listed from storage), whose
    # column_stats and bloom_filters data skipping reads; not part of the plan's text.
    metadata: TableMetadata | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> str:
        """The plan as text: how `HoodieTable.read` hands the `hoodie` data source the slices
        it planned (option `hoodie.read.planned`), so that both halves of a read, Spark's
        parquet scan and the data source, read one snapshot and the driver plans once."""
        return json.dumps(
            {
                "splits": [asdict(split) for split in self.splits],
                "as_of": self.as_of,
                "commit_time_range": self.commit_time_range,
                "commit_times": sorted(self.commit_times)
                if self.commit_times is not None
                else None,
                "partitions_pruned": self.partitions_pruned,
                "merge_logs": self.merge_logs,
                "instants": self.instants,
                "committed": self.committed.to_dict() if self.committed is not None else None,
                "latest": self.latest,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> ReadPlan:
        data = json.loads(text)
        splits = [
            FileSplit(
                **{
                    **split,
                    "log_files": tuple(split["log_files"]),
                    "log_writes": tuple(
                        tuple((i, int(s), int(e)) for i, s, e in spans)
                        for spans in split.get("log_writes") or ()
                    ),
                }
            )
            for split in data["splits"]
        ]
        times, committed, span = data["commit_times"], data["committed"], data["commit_time_range"]
        return cls(
            splits,
            data["as_of"],
            commit_time_range=(span[0], span[1]) if span is not None else None,
            commit_times=frozenset(times) if times is not None else None,
            partitions_pruned=data["partitions_pruned"],
            merge_logs=data["merge_logs"],
            instants=data["instants"],
            committed=CommittedInstants.from_dict(committed) if committed is not None else None,
            latest=bool(data.get("latest", False)),
        )


def readable_range(
    meta_client: HoodieTableMetaClient, timeline: Timeline | None = None
) -> tuple[str, str] | None:
    """The earliest and latest instants a read can be taken at, or None for an empty table.

    The earliest is the first completed write still on the active timeline, or, once cleaning
    deleted older file versions, the earliest commit the latest clean retained.
    """
    timeline = timeline if timeline is not None else meta_client.timeline()
    instants = timeline.completed.write_timeline.instants
    if not instants:
        return None
    first = instants[0].timestamp
    retained = meta_client.earliest_commit_to_retain()
    if retained is not None and retained > first:
        first = min(retained, instants[-1].timestamp)
    return first, instants[-1].timestamp


def _time_travel_instant(
    meta_client: HoodieTableMetaClient, wanted: str, bounds: tuple[str, str]
) -> str:
    """The latest completed write at or before `wanted`, if its snapshot can still be read and
    is the table's state at `wanted`.

    Before the readable range only savepointed commits qualify: cleaning keeps their files.
    A savepointed commit that archiving beyond the savepoint kept on the timeline is followed
    by archived commits, and then its snapshot is not the table at later instants.
    """
    timeline = meta_client.timeline()
    savepoints = timeline.completed.savepoint_times()
    earlier = [i.timestamp for i in timeline.completed.write_timeline if i.timestamp <= wanted]
    chosen = earlier[-1] if earlier else None
    start = timeline_start(timeline)
    if chosen is not None and chosen < bounds[0] and chosen not in savepoints:
        chosen = None  # cleaned
    if chosen is not None and start is not None and chosen < start and chosen < wanted:
        archived = [
            a.timestamp
            for a in meta_client.archived_instants()
            if chosen < a.timestamp <= wanted and a.state == "COMPLETED"
        ]
        if archived:
            chosen = None
    if chosen is None:
        also = f"; savepoints also readable: {', '.join(savepoints)}" if savepoints else ""
        raise TimelineError(
            f"as.of.instant {wanted} is before the earliest readable instant of table "
            f"'{meta_client.name}' (older file versions were cleaned or their commits archived); "
            f"readable range: {bounds[0]} .. {bounds[1]}{also}"
        )
    return chosen


def plan_read(
    meta_client: HoodieTableMetaClient,
    options: ReadOptions,
    partition_filter: Callable[[str], bool] | None = None,
) -> ReadPlan:
    timeline = meta_client.timeline()
    if options.query_type == INCREMENTAL:
        bounds = readable_range(meta_client, timeline)
        return _plan_incremental(meta_client, options, bounds, partition_filter)
    as_of = None
    if options.as_of_instant is not None:
        # Only time travel needs the readable range's start (the latest clean's retention); a
        # snapshot read does not read clean metadata at all.
        bounds = readable_range(meta_client, timeline)
        if bounds is None:
            raise TimelineError(
                f"as.of.instant {options.as_of_instant}: table '{meta_client.name}' has no "
                "completed commits to travel to"
            )
        as_of = _time_travel_instant(meta_client, options.as_of_instant, bounds)
    else:
        as_of = timeline.completed.write_timeline.last_timestamp()
    if as_of is None:
        return ReadPlan([], None)
    view = _view(meta_client, timeline, as_of, options)
    try:
        splits, pruned = _latest_slices(view, options, partition_filter)
    except MissingDataFileError as error:
        if options.as_of_instant is not None:
            _refuse_cleaned(meta_client, timeline, options.as_of_instant, error)
        raise
    return ReadPlan(
        splits,
        as_of,
        partitions_pruned=pruned,
        merge_logs=options.query_type != READ_OPTIMIZED,
        committed=view.committed,
        latest=options.as_of_instant is None and options.query_type == SNAPSHOT,
        metadata=_metadata_of(view),
    )


def _refuse_cleaned(
    meta_client: HoodieTableMetaClient, timeline: Timeline, wanted: str, error: DamagedFileError
) -> None:
    """A time-travel read whose snapshot needs a file a completed clean deleted: a
    `TimelineError` saying so, not a damaged table. A KEEP_LATEST_FILE_VERSIONS clean keeps
    file versions, not snapshots, so it records no readable range to refuse the instant by."""
    if not error.path:
        return
    relative = meta_client.storage.relative(error.path)
    partition, _, name = relative.rpartition("/")
    for instant in timeline.completed:
        if instant.action is not Action.CLEAN:
            continue
        clean = meta_client.parse_instant(instant, CleanMetadata.from_avro, "clean metadata")
        cleaned = clean.partition_metadata.get(partition)
        if cleaned is not None and name in map(posixpath.basename, cleaned.success_delete_files):
            raise TimelineError(
                f"as.of.instant {wanted}: the snapshot of table '{meta_client.name}' at that "
                f"instant needs {relative}, which clean {instant.timestamp} deleted (policy "
                f"{cleaned.policy}); it can no longer be read. Read a later instant, or "
                "savepoint the instants you will travel to (cleaning keeps their files)"
            ) from error


def _view(
    meta_client: HoodieTableMetaClient, timeline: Timeline, as_of: str | None, options: ReadOptions
) -> FileSystemView:
    """The view a read plans from: its files listed through the table's metadata table with
    `hoodie.metadata.enable` (the default) where the table has a usable one, else from
    storage (`HoodieTableMetaClient.file_listing`); `_hoodie.metadata.ignore.spurious.deletes`
    false makes a spurious delete there an error."""
    return meta_client.file_system_view(
        as_of, timeline=timeline, metadata=options.metadata_enable,
        ignore_spurious_deletes=options.ignore_spurious_deletes,
    )  # fmt: skip


def _metadata_of(view: FileSystemView) -> TableMetadata | None:
    """The metadata table a view lists through, if it does."""
    listing = view.listing
    return listing.metadata if isinstance(listing, MetadataListing) else None


def _latest_slices(
    view: FileSystemView,
    options: ReadOptions,
    partition_filter: Callable[[str], bool] | None,
    only: set[tuple[str, str]] | None = None,
) -> tuple[list[FileSplit], int]:
    partitions = view.partitions()
    kept = [p for p in partitions if partition_filter is None or partition_filter(p)]
    splits: list[FileSplit] = []
    groups = [
        g for g in view.file_groups(kept) if only is None or (g.partition_path, g.file_id) in only
    ]
    view.check_slices(groups, partition_filter, only)
    for group in groups:
        latest = group.latest_slice
        if latest is None:
            continue
        base = latest.base_file.relative_path if latest.base_file else None
        logs: tuple[str, ...] = ()
        writes: tuple[tuple[BlockSpan, ...], ...] = ()
        if options.query_type != READ_OPTIMIZED:
            logs = tuple(lf.relative_path for lf in latest.log_files)
            writes = view.block_spans(logs)
        if base is None and options.query_type == READ_OPTIMIZED:
            continue  # a slice with only log files has no read-optimized rows yet
        size = latest.base_file.size if latest.base_file else 0
        if logs:
            size += sum(lf.size for lf in latest.log_files)
        splits.append(FileSplit(group.partition_path, group.file_id, base, logs, size, writes))
    return splits, len(partitions) - len(kept)


def _written_file_groups(
    meta_client: HoodieTableMetaClient, instants: list[Instant]
) -> set[tuple[str, str]]:
    """The (partition, file id) pairs the write stats of these instants name."""
    return {
        (stat.partition_path, stat.file_id)
        for instant in instants
        for stat in meta_client.commit_metadata(instant).write_stats()
    }


def _plan_incremental(
    meta_client: HoodieTableMetaClient,
    options: ReadOptions,
    bounds: tuple[str, str] | None,
    partition_filter: Callable[[str], bool] | None,
) -> ReadPlan:
    if not meta_client.properties.populate_meta_fields:
        raise InvalidConfigError(
            f"table '{meta_client.name}' was written without meta fields "
            "(hoodie.populate.meta.fields=false), so rows carry no commit time: incremental "
            "reads need them"
        )
    begin = options.begin_instant
    if begin is None:
        raise InvalidConfigError(
            f"an incremental read of table '{meta_client.name}' needs '{BEGIN_INSTANT}'"
        )
    if bounds is None:
        return ReadPlan([], None, (begin, begin))
    end = options.end_instant or bounds[1]
    if end < bounds[0]:
        raise TimelineError(
            f"hoodie.datasource.read.end.instanttime {end} is before the earliest readable "
            f"instant of table '{meta_client.name}' (older file versions were cleaned); readable "
            f"range: {bounds[0]} .. {bounds[1]}"
        )
    timeline = meta_client.timeline()
    if timeline.layout.version >= 2:
        return _plan_incremental_by_completion(
            meta_client, options, begin, bounds[0], partition_filter
        )
    in_range = [
        i for i in timeline.completed.write_timeline if begin < i.timestamp <= end
    ]  # fmt: skip
    touched: set[tuple[str, str]] | None = None
    start = timeline_start(timeline)  # None only if the writes went since `bounds` was read
    if start is not None and begin >= start:
        if not in_range:
            return ReadPlan([], end, (begin, end))
        touched = _written_file_groups(meta_client, in_range)
    # Otherwise commits after `begin` may be archived (their metadata is gone from the active
    # timeline): every file group is read as of `end` and the commit-time filter keeps the
    # range, as Hudi's fallback to a full table scan does.
    view = _view(meta_client, timeline, end, options)
    splits, pruned = _latest_slices(view, options, partition_filter, only=touched)
    return ReadPlan(
        splits,
        end,
        commit_time_range=(begin, end),
        partitions_pruned=pruned,
        merge_logs=True,
        instants=[i.timestamp for i in in_range],
        committed=view.committed,
        metadata=_metadata_of(view),
    )


def _plan_incremental_by_completion(
    meta_client: HoodieTableMetaClient,
    options: ReadOptions,
    begin: str,
    first_readable: str,
    partition_filter: Callable[[str], bool] | None,
) -> ReadPlan:
    """An incremental read of a layout 2 timeline: by completion time (see the docstring)."""
    timeline = meta_client.timeline()
    writes = timeline.completed.write_timeline.instants
    completion = timeline.completion_times()

    def completed_at(instant_time: str) -> str:
        return completion.get(instant_time, instant_time)  # legacy: its own time

    times = [i.timestamp for i in writes]
    start = timeline_start(timeline)
    if start is None or begin < completed_at(start):
        # The range reaches before the active timeline: the archived writes in it count too
        # (their rows are still in the files of later slices; the LSM timeline knows when
        # they completed).
        for archived in meta_client.archived_instants():
            if archived.action in _WRITE_ACTION_NAMES and archived.timestamp not in completion:
                completion[archived.timestamp] = archived.completion_time or archived.timestamp
                times.append(archived.timestamp)
    end = options.end_instant or max(completed_at(t) for t in times)
    active = {i.timestamp: i for i in writes}
    in_window = [t for t in times if begin < completed_at(t) <= end]
    # The active writes' commit metadata, read once. A completed log compaction (it shows as a
    # delta commit) rewrites a file group's log blocks into one, the rows stamped with its own
    # instant, but changes no row: its range has nothing to give (as Apache Hudi 1.x reads
    # it). The others' write stats name the file groups the range touched (below).
    metadata = {t: meta_client.commit_metadata(active[t]) for t in in_window if t in active}
    in_range = sorted(
        t for t in in_window if t not in metadata or metadata[t].operation_type != LOG_COMPACT
    )
    done = [t for t in times if completed_at(t) <= end]
    if not in_range or not done:
        return ReadPlan([], None, (begin, end), commit_times=frozenset())
    as_of = max(done)
    if as_of < first_readable:
        raise TimelineError(
            f"hoodie.datasource.read.end.instanttime {end} is before the completion of the "
            f"earliest readable instant of table '{meta_client.name}' ({first_readable}, "
            f"completed {completed_at(first_readable)}; older file versions were cleaned)"
        )
    touched: set[tuple[str, str]] | None = None
    if start is not None and begin >= completed_at(start):
        # (every write in range is active here: the range starts on the active timeline)
        touched = {
            (stat.partition_path, stat.file_id)
            for t in in_range
            for stat in metadata[t].write_stats()
        }
    view = _view(meta_client, timeline, as_of, options)
    splits, pruned = _latest_slices(view, options, partition_filter, only=touched)
    return ReadPlan(
        splits,
        as_of,
        commit_time_range=(begin, end),
        commit_times=frozenset(in_range),
        partitions_pruned=pruned,
        merge_logs=True,
        instants=in_range,
        committed=view.committed,
        metadata=_metadata_of(view),
    )

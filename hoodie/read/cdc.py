"""CDC reads: every change the writes in a range of instants made, as Apache Hudi's CDC query
returns them (`hoodie.datasource.query.incremental.format=cdc`).

The driver plans (`plan_cdc`, Apache Hudi's `HoodieCDCExtractor`): from the commit metadata of
the completed writes whose requested time is in (begin, end] and whose operation changes data
(compaction, log compaction and clustering change none), one `CdcSplit` per write stat, its
case inferred as Apache Hudi infers it (`HoodieCDCInferenceCase`):

* `AS_IS`: the stat lists `.cdc` files (`cdcStats`). `DATA_BEFORE_AFTER` reads them alone;
  `DATA_BEFORE` takes the after image of inserts and updates from the new base file, by key;
  `OP_KEY_ONLY` also the before image of updates and deletes from the previous one (the
  stat's `prevCommit`).
* `BASE_FILE_INSERT`: a base file with inserts only: every row is an insert.
* `BASE_FILE_DELETE`: a delete that left the group no row: every row of the previous base
  file is a delete.
* `LOG_FILE`: a merge-on-read log append: the group's slice merged with the blocks that
  completed before the write, then with the write's blocks too (`hoodie.merge`'s rule, the
  table's merge mode): keys that appeared are inserts, vanished ones deletes, changed ones
  updates; a record that lost to the stored one by ordering value changed nothing.
* `REPLACE_COMMIT`: each file group an `insert_overwrite` / `delete_partition` replaced: the
  rows of its last slice are deletes (the new groups are `BASE_FILE_INSERT`).

Spark tasks read the files (`read_cdc_split`); the rows are four strings `op`, `ts_ms` (the
write's requested instant time, as Apache Hudi gives it), `before` and `after`: the images as
compact JSON of the table's data columns (no meta columns), SQL NULL where there is none, in
every case (decision D1 of docs/design/incremental-pipelines.md: Apache Hudi's own encoding
differs by case and version).

The range is by requested time on both timeline layouts, as Apache Hudi's extractor filters
it (`instantRange.isInRange(instant.requestedTime())`), unlike the `latest_state` incremental
read of a layout 2 timeline (by completion time).
"""

from __future__ import annotations

import base64
import json
import posixpath
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from typing import Any

import pyarrow as pa

from ..cdc import AFTER, BEFORE, OP, RECORD_KEY, TS_MS, CdcOperation, read_cdc_block
from ..exceptions import (
    CorruptDataFileError,
    InvalidConfigError,
    MissingDataFileError,
    TimelineError,
    UnsupportedTableError,
)
from ..fs_view import CommittedInstants, FileGroup, FileSystemView, damaged_data_file
from ..keygen import record_keys_of
from ..logformat import BlockType, read_log_file
from ..merge import merge_mode_of
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata, WriteStat
from ..naming import parse_base_file_name
from ..options.table import CdcSupplementalLoggingMode
from ..partition_paths import check_data_file
from ..schema import COMMIT_TIME, META_COLUMNS, normalize_schema, with_meta_columns
from ..schema import RECORD_KEY as KEY_COLUMN
from ..timeline import Instant
from .options import BEGIN_INSTANT, INCREMENTAL_FORMAT, ReadOptions
from .planner import FileSplit
from .slice_reader import SliceReadSpec, merged_slice

CDC_COLUMNS = (OP, TS_MS, BEFORE, AFTER)
CDC_SCHEMA = pa.schema([pa.field(name, pa.string()) for name in CDC_COLUMNS])

# `WriteOperationType.yieldChanges`: the operations whose commits change rows.
CHANGING_OPERATIONS = frozenset(
    {
        "INSERT", "INSERT_PREPPED", "UPSERT", "UPSERT_PREPPED", "BULK_INSERT",
        "BULK_INSERT_PREPPED", "DELETE", "DELETE_PREPPED", "INSERT_OVERWRITE",
        "INSERT_OVERWRITE_TABLE", "DELETE_PARTITION", "BOOTSTRAP",
    }
)  # fmt: skip
_DELETES = frozenset({"DELETE", "DELETE_PREPPED"})


class CdcCase(Enum):
    """`HoodieCDCInferenceCase`: where a split's changes come from."""

    AS_IS = "AS_IS"
    BASE_FILE_INSERT = "BASE_FILE_INSERT"
    BASE_FILE_DELETE = "BASE_FILE_DELETE"
    LOG_FILE = "LOG_FILE"
    REPLACE_COMMIT = "REPLACE_COMMIT"


@dataclass(frozen=True)
class CdcSplit:
    """The changes one write made to one file group (`HoodieCDCFileSplit`), as a task reads
    them. Paths are relative to the table."""

    instant: str  # the write's requested time: the rows' ts_ms
    case: CdcCase
    partition_path: str
    file_id: str
    cdc_files: tuple[str, ...] = ()  # AS_IS
    # AS_IS (DATA_BEFORE, OP_KEY_ONLY) and BASE_FILE_INSERT: the base file the write made;
    # LOG_FILE: the log file it appended.
    current: str | None = None
    # The file group before the write: the previous base file (AS_IS with OP_KEY_ONLY,
    # BASE_FILE_DELETE) or slice (LOG_FILE, REPLACE_COMMIT).
    previous: FileSplit | None = None


@dataclass(frozen=True)
class WrittenBefore:
    """The instants whose log blocks a file group held just before `instant` completed (and,
    with `including`, just after): a `Container` for `merged_slice`. Completion order is
    Hudi's on both layouts (a layout 1 instant completes at its own time here)."""

    committed: CommittedInstants
    completion: Mapping[str, str]
    instant: str
    including: bool = False

    def __contains__(self, other: object) -> bool:
        if not isinstance(other, str):
            return False
        if other == self.instant:
            return self.including
        if other not in self.committed:
            return False
        cutoff = self.completion.get(self.instant, self.instant)
        return self.completion.get(other, other) < cutoff


@dataclass
class CdcPlan:
    splits: list[CdcSplit]
    committed: CommittedInstants | None = None
    completion: dict[str, str] = field(default_factory=dict)
    instants: list[str] = field(default_factory=list)


def cdc_files_of(stat: WriteStat) -> tuple[str, ...]:
    """The `.cdc` files a write stat lists (`cdcStats`: relative path -> size), sorted."""
    stats = getattr(stat, "cdc_stats", None)
    if stats is None:
        stats = stat.extra.get("cdcStats")
    return tuple(sorted(stats)) if isinstance(stats, Mapping) else ()


def infer_case(stat: WriteStat, operation: str) -> CdcCase:
    """`HoodieCDCExtractor.parseWriteStat`'s choice for one write stat of a write with
    `operation` (its commit metadata's operationType)."""
    if cdc_files_of(stat):
        return CdcCase.AS_IS
    name = posixpath.basename(stat.path or "")
    if parse_base_file_name(name) is None:
        return CdcCase.LOG_FILE
    if operation.upper() in _DELETES and stat.num_writes == 0 and stat.num_deletes != 0:
        return CdcCase.BASE_FILE_DELETE
    if stat.num_update_writes == 0 and stat.num_writes == stat.num_inserts:
        return CdcCase.BASE_FILE_INSERT
    raise UnsupportedTableError(
        f"the write stat of file group {stat.partition_path}/{stat.file_id} ({stat.path}) "
        "rewrote rows of a base file and lists no .cdc file (cdcStats): the write did not log "
        "its changes, so a CDC read cannot tell them (Apache Hudi: 'There should be a cdc log "
        "file.')"
    )


def check_cdc_table(meta_client: HoodieTableMetaClient) -> None:
    """Refuse a CDC read of a table whose writes log no changes (Apache Hudi fails on its
    first rewritten base file; we name the key up front)."""
    if not meta_client.properties.cdc_enabled:
        raise InvalidConfigError(
            f"table '{meta_client.name}' at {meta_client.base_uri} was not created with "
            f"hoodie.table.cdc.enabled=true: its writes logged no changes, so "
            f"{INCREMENTAL_FORMAT}=cdc cannot read them. Read it with "
            f"{INCREMENTAL_FORMAT}=latest_state (the latest version of each changed record)"
        )


def plan_cdc(meta_client: HoodieTableMetaClient, options: ReadOptions) -> CdcPlan:
    """The splits of a CDC read of (begin, end] (see the module docstring); refused on a table
    without `hoodie.table.cdc.enabled` and when archival or cleaning removed what the range
    needs."""
    check_cdc_table(meta_client)
    props = meta_client.properties
    begin = options.begin_instant
    if begin is None:
        raise InvalidConfigError(
            f"a CDC read of table '{meta_client.name}' needs '{BEGIN_INSTANT}'"
        )
    end = options.end_instant
    timeline = meta_client.timeline()
    writes = timeline.completed.write_timeline.instants
    _check_range(meta_client, writes, begin, end)
    in_range = [i for i in writes if begin < i.timestamp and (end is None or i.timestamp <= end)]
    changes: list[tuple[Instant, CommitMetadata]] = []
    for instant in in_range:
        metadata = meta_client.commit_metadata(instant)
        if metadata.operation_type.upper() in CHANGING_OPERATIONS:
            changes.append((instant, metadata))
    committed = CommittedInstants.of(timeline)
    completion = timeline.completion_times()
    if not changes:
        return CdcPlan([], committed, completion)
    touched = sorted(
        {s.partition_path for _, m in changes for s in m.write_stats()}
        | {p for _, m in changes for p in (m.partition_to_replace_file_ids or {})}
    )
    view = FileSystemView(
        meta_client.storage, timeline, base_file_extension=meta_client.base_file_extension,
        listing=meta_client.file_listing(
            timeline, options.metadata_enable, options.ignore_spurious_deletes
        ),
        keep_replaced=True,
    )  # fmt: skip
    groups = {(g.partition_path, g.file_id): g for g in view.file_groups(touched)}
    mode = CdcSupplementalLoggingMode(props.cdc_supplemental_logging_mode)
    splits: list[CdcSplit] = []
    for instant, metadata in changes:
        for stat in metadata.write_stats():
            case = infer_case(stat, metadata.operation_type)
            splits.append(_split(view, groups, instant.timestamp, stat, case, mode))
        for partition, file_ids in (metadata.partition_to_replace_file_ids or {}).items():
            for file_id in file_ids:
                replaced = _slice_before(view, groups, partition, file_id, instant.timestamp)
                if replaced is not None:
                    splits.append(
                        CdcSplit(instant.timestamp, CdcCase.REPLACE_COMMIT, partition, file_id,
                                 previous=replaced)
                    )  # fmt: skip
    # Apache Hudi's order: by file group, then by instant
    splits.sort(key=lambda s: (s.partition_path, s.file_id, s.instant))
    return CdcPlan(splits, committed, completion, [i.timestamp for i, _ in changes])


def _check_range(
    meta_client: HoodieTableMetaClient, writes: Sequence[Instant], begin: str, end: str | None
) -> None:
    reason = unreadable_range(meta_client, writes, begin, end)
    if reason is not None:
        raise TimelineError(reason)


def unreadable_range(
    meta_client: HoodieTableMetaClient, writes: Sequence[Instant], begin: str, end: str | None
) -> str | None:
    """Why a CDC read of (begin, end] cannot be done, or None: archival took its commits off
    the active timeline (their metadata says what changed), or cleaning may have deleted the
    previous file versions it needs. `writes`: the completed write instants."""
    shown = f"({begin}, {end or 'latest'}]"
    first = writes[0].timestamp if writes else None
    if first is None or begin < first:
        archived = [
            a.timestamp
            for a in meta_client.archived_instants()
            if a.timestamp > begin and a.state == "COMPLETED"
        ]
        if archived:
            return (
                f"a CDC read of {shown} of table '{meta_client.name}' needs the commits after "
                f"{begin}, but those up to {max(archived)} were archived: the active timeline "
                f"starts at {first}. Read from {first} or later"
            )
    retained = meta_client.earliest_commit_to_retain()
    if retained is not None and begin < retained:
        return (
            f"a CDC read of {shown} of table '{meta_client.name}' needs the file versions "
            f"before the writes after {begin}, but cleaning may have deleted those older than "
            f"{retained} (the earliest commit it retained). Read from {retained} or later"
        )
    return None


def _split(
    view: FileSystemView,
    groups: Mapping[tuple[str, str], FileGroup],
    instant: str,
    stat: WriteStat,
    case: CdcCase,
    mode: CdcSupplementalLoggingMode,
) -> CdcSplit:
    partition, file_id = stat.partition_path, stat.file_id
    split = CdcSplit(instant, case, partition, file_id)
    if case is CdcCase.AS_IS:
        # paths from commit metadata: held to what a data file of the table can be, naming
        # the commit, as every other reader of write stats does
        where = f"at {view.storage.uri()}"
        cdc_files = tuple(check_data_file(where, f"commit {instant}", path)
                          for path in cdc_files_of(stat))  # fmt: skip
        split = replace(split, cdc_files=cdc_files)
        if mode is CdcSupplementalLoggingMode.DATA_BEFORE_AFTER:
            return split
        split = replace(split, current=stat.path)
        if mode is CdcSupplementalLoggingMode.OP_KEY_ONLY:
            split = replace(split, previous=_previous_base(groups, stat, instant))
        return split
    if case is CdcCase.BASE_FILE_INSERT:
        return replace(split, current=stat.path)
    if case is CdcCase.BASE_FILE_DELETE:
        return replace(split, previous=_previous_base(groups, stat, instant))
    # LOG_FILE: the slice the log file joined, read without (then with) this write's blocks
    group = groups.get((partition, file_id))
    for file_slice in group.slices if group is not None else ():
        logs = tuple(lf.relative_path for lf in file_slice.log_files)
        if stat.path in logs:
            base = file_slice.base_file.relative_path if file_slice.base_file else None
            previous = FileSplit(partition, file_id, base, logs, 0, view.block_spans(logs))
            return replace(split, current=stat.path, previous=previous)
    raise MissingDataFileError(
        f"{view.storage.uri(stat.path or '')} is missing: the completed write {instant} "
        f"appended it to file group {partition}/{file_id}, and a CDC read of that write needs "
        "it",
        view.storage.uri(stat.path or ""),
    )


def _previous_base(
    groups: Mapping[tuple[str, str], FileGroup], stat: WriteStat, instant: str
) -> FileSplit:
    """The base file a write replaced (its stat's `prevCommit`)."""
    group = groups.get((stat.partition_path, stat.file_id))
    for file_slice in group.slices if group is not None else ():
        if file_slice.base_instant == stat.prev_commit and file_slice.base_file is not None:
            base = file_slice.base_file.relative_path
            return FileSplit(stat.partition_path, stat.file_id, base)
    raise TimelineError(
        f"a CDC read of write {instant} needs the base file of file group "
        f"{stat.partition_path}/{stat.file_id} that commit {stat.prev_commit} wrote (the "
        "version that write changed), and it is gone: cleaning deleted it, or the table is "
        "damaged. Read a range starting later"
    )


def _slice_before(
    view: FileSystemView,
    groups: Mapping[tuple[str, str], FileGroup],
    partition: str,
    file_id: str,
    instant: str,
) -> FileSplit | None:
    """The last slice of a file group a replace commit at `instant` took out."""
    group = groups.get((partition, file_id))
    slices = [s for s in group.slices if s.base_instant < instant] if group is not None else []
    if not slices:
        return None
    last = slices[-1]
    logs = tuple(lf.relative_path for lf in last.log_files)
    base = last.base_file.relative_path if last.base_file else None
    return FileSplit(partition, file_id, base, logs, 0, view.block_spans(logs))


# ---- in the Spark tasks ----------------------------------------------------------------------


def cdc_read_spec(meta_client: HoodieTableMetaClient) -> CdcReadSpec:
    """The spec of a CDC read of the table's latest schema (plans add their instants)."""
    props = meta_client.properties
    data = normalize_schema(meta_client.schema() or pa.schema([]))
    snapshot = with_meta_columns(data)
    merge_mode = merge_mode_of(props)
    slices = SliceReadSpec(
        storage=meta_client.storage,
        schema=snapshot,
        record_key_fields=props.record_key_fields,
        merge_mode=merge_mode
        if merge_mode.ordering_field in snapshot.names
        else merge_mode.without_ordering(),
        valid_instants=frozenset(),
    )
    columns = tuple(n for n in data.names if n not in META_COLUMNS)
    mode_name = props.cdc_supplemental_logging_mode
    return CdcReadSpec(slices, columns, CdcSupplementalLoggingMode(mode_name))


@dataclass(frozen=True)
class CdcReadSpec:
    """What every task of a CDC read needs besides its splits."""

    slices: SliceReadSpec  # the table's snapshot schema, key fields and merge mode
    data_columns: tuple[str, ...]  # the image columns, in the table's order
    mode: CdcSupplementalLoggingMode
    committed: CommittedInstants | None = None
    completion: Mapping[str, str] = field(default_factory=dict)


def read_cdc_split(spec: CdcReadSpec, split: CdcSplit) -> pa.RecordBatch:
    """The change rows of one split: `op`, `ts_ms`, `before`, `after` (strings)."""
    rows = list(_changes(spec, split))
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    return pa.RecordBatch.from_arrays(
        [pa.array(list(c), pa.string()) for c in columns], schema=CDC_SCHEMA
    )


Change = tuple[str, str, str | None, str | None]


def _changes(spec: CdcReadSpec, split: CdcSplit) -> Iterator[Change]:
    ts = split.instant
    if split.case is CdcCase.AS_IS:
        yield from _as_is(spec, split)
    elif split.case is CdcCase.BASE_FILE_INSERT:
        assert split.current is not None
        for image in _images(spec, _base_rows(spec, split.current)):
            yield (CdcOperation.INSERT.value, ts, None, image)
    elif split.case is CdcCase.BASE_FILE_DELETE:
        assert split.previous is not None and split.previous.base_file is not None
        for image in _images(spec, _base_rows(spec, split.previous.base_file)):
            yield (CdcOperation.DELETE.value, ts, image, None)
    elif split.case is CdcCase.REPLACE_COMMIT:
        assert split.previous is not None
        for image in _images(spec, _slice_rows(spec, split, including=False)):
            yield (CdcOperation.DELETE.value, ts, image, None)
    else:
        yield from _log_file(spec, split)


def _as_is(spec: CdcReadSpec, split: CdcSplit) -> Iterator[Change]:
    records: list[dict[str, Any]] = []
    for relative in split.cdc_files:
        records.extend(_cdc_records(spec, relative))
    if spec.mode is CdcSupplementalLoggingMode.DATA_BEFORE_AFTER:
        for r in records:
            yield (r[OP], r.get(TS_MS) or split.instant,
                   _image_json(spec, r.get(BEFORE)), _image_json(spec, r.get(AFTER)))  # fmt: skip
        return
    assert split.current is not None
    after = _by_key(spec, _base_rows(spec, split.current))
    before: dict[str, str | None] = {}
    if spec.mode is CdcSupplementalLoggingMode.OP_KEY_ONLY:
        assert split.previous is not None and split.previous.base_file is not None
        before = _by_key(spec, _base_rows(spec, split.previous.base_file))
    for r in records:
        op, key = r[OP], str(r.get(RECORD_KEY))
        if spec.mode is CdcSupplementalLoggingMode.DATA_BEFORE:
            old = _image_json(spec, r.get(BEFORE))
        else:
            old = before.get(key) if op != CdcOperation.INSERT.value else None
        new = after.get(key) if op != CdcOperation.DELETE.value else None
        yield (op, split.instant, old, new)


def _log_file(spec: CdcReadSpec, split: CdcSplit) -> Iterator[Change]:
    """The group's slice without, then with, the write's log blocks, compared by key."""
    old = _slice_rows(spec, split, including=False)
    new = _slice_rows(spec, split, including=True)
    old_rows = _keyed_rows(spec, old)
    new_rows = _keyed_rows(spec, new)
    ts = split.instant
    for key, row in new_rows.items():
        was = old_rows.get(key)
        if was is None:
            yield (CdcOperation.INSERT.value, ts, None, _json(spec, row))
        elif was != row:
            yield (CdcOperation.UPDATE.value, ts, _json(spec, was), _json(spec, row))
    for key, was in old_rows.items():
        if key not in new_rows:
            yield (CdcOperation.DELETE.value, ts, _json(spec, was), None)


def _slice_rows(spec: CdcReadSpec, split: CdcSplit, including: bool) -> pa.Table:
    assert split.previous is not None and spec.committed is not None
    valid = WrittenBefore(spec.committed, spec.completion, split.instant, including)
    merged, _ = merged_slice(replace(spec.slices, valid_instants=valid), split.previous)
    return merged


def _cdc_records(spec: CdcReadSpec, relative: str) -> list[dict[str, Any]]:
    storage = spec.slices.storage
    with damaged_data_file(storage, relative, "a CDC log file"):
        blocks = list(read_log_file(storage, relative))
    records: list[dict[str, Any]] = []
    for block in blocks:
        if block.block_type is BlockType.CORRUPT:
            path = storage.uri(relative)
            raise CorruptDataFileError(
                f"{path} (a CDC log file of the table at {storage.uri()}) holds a damaged "
                "block. Restore it from a backup",
                path,
            )
        if block.block_type is not BlockType.CDC_DATA:
            continue
        with damaged_data_file(storage, relative, "a CDC log block"):
            records.extend(read_cdc_block(block).to_pylist())
    return records


def _base_rows(spec: CdcReadSpec, relative: str) -> pa.Table:
    storage = spec.slices.storage
    with damaged_data_file(storage, relative, "a parquet base file"):
        return storage.read_parquet(relative)


def _keys(spec: CdcReadSpec, table: pa.Table) -> list[str]:
    if KEY_COLUMN in table.column_names:
        return [str(k) for k in table.column(KEY_COLUMN).to_pylist()]
    return [str(k) for k in record_keys_of(table, spec.slices.record_key_fields).to_pylist()]


def _data_rows(spec: CdcReadSpec, table: pa.Table) -> list[dict[str, Any]]:
    """Rows as dicts of the data columns (absent columns null)."""
    rows = table.to_pylist()
    return [{c: row.get(c) for c in spec.data_columns} for row in rows]


def _images(spec: CdcReadSpec, table: pa.Table) -> list[str]:
    return [_json(spec, row) for row in _data_rows(spec, table)]


def _by_key(spec: CdcReadSpec, table: pa.Table) -> dict[str, str | None]:
    return dict(zip(_keys(spec, table), _images(spec, table), strict=True))


def _keyed_rows(spec: CdcReadSpec, table: pa.Table) -> dict[str, dict[str, Any]]:
    """Key -> the row's data columns and commit time (a write that won with equal data is
    still a change, as Apache Hudi compares the merged row with the stored one)."""
    rows = table.to_pylist()
    wanted = (*spec.data_columns, COMMIT_TIME)
    return dict(zip(_keys(spec, table), ({c: r.get(c) for c in wanted} for r in rows), strict=True))


def _image_json(spec: CdcReadSpec, image: Mapping[str, Any] | None) -> str | None:
    if image is None:
        return None
    return _json(spec, image)


def _json(spec: CdcReadSpec, row: Mapping[str, Any]) -> str:
    """An image: compact JSON of the data columns, in the table's column order."""
    return _encode({c: row.get(c) for c in spec.data_columns})


def _encode(value: Any) -> str:
    """Compact JSON of a value as Spark's `to_json` writes it, so that `from_json` with the
    table's schema reads it back: dates and times as ISO text, binary as base64, decimals as
    exact numbers (not through a float), maps (pairs from Arrow) as objects."""
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_encode(str(k))}:{_encode(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return _encode(dict(value))
        return "[" + ",".join(_encode(v) for v in value) + "]"
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date | time):
        return json.dumps(value.isoformat())
    if isinstance(value, bytes | bytearray):
        return json.dumps(base64.b64encode(bytes(value)).decode("ascii"))
    return json.dumps(value, ensure_ascii=False)

"""How two versions of one metadata record combine (`HoodieMetadataPayload.preCombine` and
`combineAndGetUpdateValue`), for a reader merging a file slice of the metadata table.

A reader merges in two stages, as Apache Hudi does: the log blocks among themselves in instant
order, then the result over the base file. A key listed in a delete block removes the record
whatever its type; `None` stands for that removal on either side, so that it survives the
first stage and removes the base file's record in the second (and a record written after the
delete stands again). The rules per kind (docs/design/metadata-table.md, 2.3):

- files: the union of the two maps; a name on both sides is dropped when the newer side
  deletes it, else it keeps the larger size (sizes only grow). A tombstone for a name the
  older side lacks is kept: it may cancel an entry of the base file in the second stage.
  Readers drop the tombstones left at the end (`FilesRecord.live_files`).
- bloom filters, record index: the newer record wins (a tombstone too).
- column stats (and partition stats): when either side is a tombstone, or the newer is a tight
  bound (1.x: stats computed over the whole file or partition), the newer wins; else the
  smaller min, the larger max, and the counts and sizes summed
  (`HoodieTableMetadataUtil.mergeColumnStatsRecords`).
- secondary index (1.x): the newer wins, and an entry marked deleted removes the key.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..exceptions import CorruptDataFileError
from .records import (
    BloomFilterRecord,
    ColumnStatsRecord,
    FileEntry,
    FilesRecord,
    MetadataRecord,
    RecordIndexRecord,
    SecondaryIndexRecord,
    StatKind,
    StatValue,
)


def merge_metadata_records(
    older: MetadataRecord | None, newer: MetadataRecord | None
) -> MetadataRecord | None:
    """The record a key holds after `newer` is applied over `older`; None for no record (a
    delete block's key, on either side, or a deleted secondary index entry). None is a
    removal, not an absence: a key one side lacks is not merged at all."""
    if newer is None:
        return None
    if isinstance(newer, SecondaryIndexRecord) and newer.is_deleted:
        return None
    if older is None:
        return newer
    if older.key != newer.key or older.record_type != newer.record_type:
        raise CorruptDataFileError(
            f"metadata records of key {older.key!r} (type {older.record_type}) and "
            f"{newer.key!r} (type {newer.record_type}) cannot merge: one file group of the "
            "metadata table holds two kinds of record for one key, so it is damaged; rebuild "
            "the metadata table (turn hoodie.metadata.enable off and on with Apache Hudi)"
        )
    if isinstance(newer, FilesRecord):
        assert isinstance(older, FilesRecord)
        return _merge_files(older, newer)
    if isinstance(newer, ColumnStatsRecord):
        assert isinstance(older, ColumnStatsRecord)
        return _merge_column_stats(older, newer)
    # bloom filters, record index and secondary index entries: the newer one stands
    assert isinstance(newer, (BloomFilterRecord, RecordIndexRecord, SecondaryIndexRecord))
    return newer


def _merge_files(older: FilesRecord, newer: FilesRecord) -> FilesRecord:
    merged = dict(older.files)
    for name, entry in newer.files.items():
        before = merged.get(name)
        if before is None:
            merged[name] = entry  # a tombstone of a name we lack is kept for the next stage
        elif entry.is_deleted:
            del merged[name]
        else:
            merged[name] = FileEntry(max(before.size, entry.size), False)
    return FilesRecord(newer.key, newer.is_partition_list, merged, newer.meta)


def _merge_column_stats(older: ColumnStatsRecord, newer: ColumnStatsRecord) -> ColumnStatsRecord:
    if older.column_name != newer.column_name:
        raise CorruptDataFileError(
            f"column stats record {newer.key!r} is of column {newer.column_name!r}, but an "
            f"earlier one of that key is of column {older.column_name!r}: the metadata table "
            "is damaged"
        )
    if older.is_deleted or newer.is_deleted or newer.is_tight_bound:
        return newer
    return dataclasses.replace(
        newer,
        min_value=_extreme(older.min_value, newer.min_value, smaller=True, key=newer.key),
        max_value=_extreme(older.max_value, newer.max_value, smaller=False, key=newer.key),
        value_count=_sum(older.value_count, newer.value_count),
        null_count=_sum(older.null_count, newer.null_count),
        total_size=_sum(older.total_size, newer.total_size),
        total_uncompressed_size=_sum(older.total_uncompressed_size, newer.total_uncompressed_size),
    )


def _sum(older: int | None, newer: int | None) -> int | None:
    if older is None and newer is None:
        return None
    return (older or 0) + (newer or 0)


def _java_order(stat: StatValue) -> Any:
    """What orders a statistic as Java's `compareTo` orders its unwrapped value: strings by
    UTF-16 code units, bytes as signed bytes (`ByteBuffer`), floats with -0.0 below 0.0 and
    NaN above all (`Double.compare`); dates and timestamps by their stored numbers."""
    value = stat.value
    if stat.kind is StatKind.STRING:
        return value.encode("utf-16-be", "surrogatepass")
    if stat.kind is StatKind.BYTES:
        return bytes((b + 128) & 0xFF for b in value)  # signed order as unsigned
    if stat.kind in (StatKind.FLOAT, StatKind.DOUBLE):
        value = float(value)
        return (math.isnan(value), 0.0 if math.isnan(value) else value, math.copysign(1, value))
    return value


_NUMBERS = (StatKind.INT, StatKind.LONG, StatKind.FLOAT, StatKind.DOUBLE)
_DAYS = (StatKind.DATE, StatKind.LOCAL_DATE)


def _promoted(stat: StatValue, kind: StatKind) -> StatValue:
    """A stat of a column since widened (int to long or double, date wrappers), as `kind`."""
    if stat.kind is kind:
        return stat
    if kind in (StatKind.FLOAT, StatKind.DOUBLE):
        return StatValue(kind, float(stat.value))
    return StatValue(kind, stat.value)


def _comparable(older: StatKind, newer: StatKind) -> bool:
    if older is newer:
        return True
    if newer in _NUMBERS and older in _NUMBERS:  # widening only: never a float into an int
        return _NUMBERS.index(older) < _NUMBERS.index(newer)
    return older in _DAYS and newer in _DAYS


def _extreme(
    older: StatValue | None, newer: StatValue | None, *, smaller: bool, key: str
) -> StatValue | None:
    """The smaller (or larger) of two stats, either of which may be absent (all nulls). A
    column widened since the older one (int to long, ...) compares by value and keeps the
    newer's wrapper, as Apache Hudi 1.2 promotes them."""
    if older is None or newer is None:
        return newer if older is None else older
    if not _comparable(older.kind, newer.kind):
        raise CorruptDataFileError(
            f"column stats record {key!r} holds a {newer.kind.value} where an earlier one of "
            f"that key holds a {older.kind.value}: the metadata table is damaged"
        )
    if newer.kind is StatKind.ARRAY:  # no order between arrays: the newer stands
        return newer
    older = _promoted(older, newer.kind)
    a, b = _java_order(older), _java_order(newer)
    if smaller:
        return newer if b < a else older
    return newer if b > a else older

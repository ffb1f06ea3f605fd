"""Apache Hudi's rules for merging a metadata record's versions (docs/design/metadata-table.md
2.3, `HoodieMetadataPayload.preCombine`), table-driven: (older, newer, expected) per kind, a
delete block's removal as None, and the two-stage merge of a file slice (log blocks among
themselves, then over the base file) that the kept tombstones exist for."""

from __future__ import annotations

from functools import reduce

import pytest

from hoodie.exceptions import CorruptDataFileError
from hoodie.metadata_records import (
    BloomFilterRecord,
    ColumnStatsRecord,
    FileEntry,
    FilesRecord,
    MetadataRecord,
    PartitionStatsRecord,
    RecordIndexRecord,
    SecondaryIndexRecord,
    StatKind,
    StatValue,
    merge_metadata_records,
)


def files(entries: dict[str, tuple[int, bool]], key: str = "p") -> FilesRecord:
    return FilesRecord(key, False, {n: FileEntry(s, d) for n, (s, d) in entries.items()})


def long(value: int) -> StatValue:
    return StatValue(StatKind.LONG, value)


def stats(
    low: int | None,
    high: int | None,
    counts: tuple[int, int, int, int] = (1, 0, 10, 20),
    deleted: bool = False,
) -> ColumnStatsRecord:
    return ColumnStatsRecord(
        "k", "f.parquet", "c",
        None if low is None else long(low), None if high is None else long(high),
        *counts, is_deleted=deleted,
    )  # fmt: skip


def bloom(stamp: str, deleted: bool = False) -> BloomFilterRecord:
    return BloomFilterRecord("k", "DYNAMIC_V0", stamp, stamp.encode(), deleted)


def location(file_id: str) -> RecordIndexRecord:
    return RecordIndexRecord("k", "p", file_id, 1)


A, B = "a.parquet", "b.parquet"
CASES: list[tuple[str, MetadataRecord | None, MetadataRecord | None, MetadataRecord | None]] = [
    # files
    ("files: union", files({A: (5, False)}), files({B: (7, False)}),
     files({A: (5, False), B: (7, False)})),
    ("files: the larger size", files({A: (9, False)}), files({A: (5, False)}),
     files({A: (9, False)})),
    ("files: a grown file", files({A: (5, False)}), files({A: (9, False)}),
     files({A: (9, False)})),
    ("files: newer deletes", files({A: (5, False), B: (1, False)}), files({A: (0, True)}),
     files({B: (1, False)})),
    ("files: a tombstone of a name the older lacks is kept", files({B: (1, False)}),
     files({A: (0, True)}), files({B: (1, False), A: (0, True)})),
    ("files: a tombstone over a tombstone drops both (Apache Hudi's HashMap.merge)",
     files({A: (0, True), B: (1, False)}), files({A: (0, True)}), files({B: (1, False)})),
    ("files: a file written again after its tombstone", files({A: (0, True)}),
     files({A: (4, False)}), files({A: (4, False)})),
    ("partition list", FilesRecord("__all_partitions__", True, {"a": FileEntry(0)}),
     FilesRecord("__all_partitions__", True, {"a": FileEntry(0, True), "b": FileEntry(0)}),
     FilesRecord("__all_partitions__", True, {"b": FileEntry(0)})),
    # column stats
    ("stats: min, max and sums", stats(3, 8, (2, 1, 10, 20)), stats(1, 5, (3, 0, 7, 9)),
     stats(1, 8, (5, 1, 17, 29))),
    ("stats: all-null side keeps the other's range", stats(None, None, (0, 2, 1, 1)),
     stats(4, 6), stats(4, 6, (1, 2, 11, 21))),
    ("stats: newer tombstone wins", stats(1, 2), stats(None, None, deleted=True),
     stats(None, None, deleted=True)),
    ("stats: older tombstone: newer wins", stats(None, None, deleted=True), stats(7, 9),
     stats(7, 9)),
    # bloom filters, record index, secondary index: the newer stands
    ("bloom: newer wins", bloom("1"), bloom("2"), bloom("2")),
    ("bloom: tombstone replaces", bloom("1"), bloom("2", True), bloom("2", True)),
    ("record index: newer wins", location("x-0"), location("y-0"), location("y-0")),
    ("secondary: newer", SecondaryIndexRecord("k"), SecondaryIndexRecord("k"),
     SecondaryIndexRecord("k")),
    ("secondary: deleted entry removes", SecondaryIndexRecord("k"),
     SecondaryIndexRecord("k", True), None),
    # delete blocks (None) of any kind
    ("delete block removes files", files({A: (5, False)}), None, None),
    ("delete block removes a location", location("x-0"), None, None),
    ("written again after a delete", None, location("y-0"), location("y-0")),
    ("nothing before", None, bloom("1"), bloom("1")),
]  # fmt: skip


@pytest.mark.parametrize(
    "older, newer, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_merge(
    older: MetadataRecord | None, newer: MetadataRecord | None, expected: MetadataRecord | None
) -> None:
    assert merge_metadata_records(older, newer) == expected


def test_min_max_keep_the_wrapper_and_compare_by_value() -> None:
    older = ColumnStatsRecord("k", "f", "c", StatValue(StatKind.STRING, "b"),
                              StatValue(StatKind.STRING, "b"), 1, 0, 1, 1)  # fmt: skip
    newer = ColumnStatsRecord("k", "f", "c", StatValue(StatKind.STRING, "a"),
                              StatValue(StatKind.STRING, "ab"), 1, 0, 1, 1)  # fmt: skip
    merged = merge_metadata_records(older, newer)
    assert isinstance(merged, ColumnStatsRecord)
    assert merged.min_value == StatValue(StatKind.STRING, "a")
    assert merged.max_value == StatValue(StatKind.STRING, "b")
    dates = [StatValue(StatKind.DATE, d) for d in (-3, 2)]
    merged = merge_metadata_records(
        ColumnStatsRecord("k", "f", "c", dates[1], dates[1], 1, 0, 1, 1),
        ColumnStatsRecord("k", "f", "c", dates[0], dates[0], 1, 0, 1, 1),
    )
    assert isinstance(merged, ColumnStatsRecord)
    assert (merged.min_value, merged.max_value) == (dates[0], dates[1])


def ranged(kind: StatKind, low: object, high: object) -> ColumnStatsRecord:
    return ColumnStatsRecord("k", "f", "c", StatValue(kind, low), StatValue(kind, high), 1, 0, 1, 1)


@pytest.mark.parametrize(
    "kind, a, b, low, high",
    [
        # Java's String.compareTo: UTF-16 code units, so U+FFFF sorts above U+10000
        (StatKind.STRING, "\uffff", "\U00010000", "\U00010000", "\uffff"),
        (StatKind.STRING, "ab", "b", "ab", "b"),
        # ByteBuffer.compareTo: signed bytes, so 0xff (-1) sorts below 0x01
        (StatKind.BYTES, b"\xff", b"\x01", b"\xff", b"\x01"),
        # Double.compare: -0.0 below 0.0, NaN above everything
        (StatKind.DOUBLE, 0.0, -0.0, -0.0, 0.0),
        (StatKind.DOUBLE, float("inf"), float("nan"), float("inf"), float("nan")),
        # dates far outside Python's date range still order
        (StatKind.DATE, 2**31 - 1, -(2**31), -(2**31), 2**31 - 1),
        (StatKind.TIMESTAMP_MICROS, 2**62, -(2**62), -(2**62), 2**62),
    ],
)
def test_min_and_max_order_as_java(
    kind: StatKind, a: object, b: object, low: object, high: object
) -> None:
    merged = merge_metadata_records(ranged(kind, a, a), ranged(kind, b, b))
    assert isinstance(merged, ColumnStatsRecord)
    assert merged.min_value is not None and merged.max_value is not None
    assert repr(merged.min_value.value) == repr(low)
    assert repr(merged.max_value.value) == repr(high)


def test_a_tight_bound_replaces_what_it_merges_with() -> None:
    """1.x: stats computed over the whole partition stand for it (Apache Hudi 1.2)."""
    older = PartitionStatsRecord("k", "a", "c", long(1), long(9), 4, 0, 8, 8, False, True)
    newer = PartitionStatsRecord("k", "a", "c", long(3), long(5), 2, 0, 4, 4, False, True)
    assert merge_metadata_records(older, newer) == newer
    loose = PartitionStatsRecord("k", "a", "c", long(3), long(5), 2, 0, 4, 4, False, False)
    merged = merge_metadata_records(older, loose)
    assert isinstance(merged, PartitionStatsRecord) and merged.min_value == long(1)


def test_a_widened_column_compares_by_value_in_its_new_wrapper() -> None:
    def of(low: StatValue, high: StatValue) -> ColumnStatsRecord:
        return ColumnStatsRecord("k", "f", "c", low, high, 1, 0, 1, 1)

    ints = of(StatValue(StatKind.INT, -5), StatValue(StatKind.INT, 7))
    longs = of(StatValue(StatKind.LONG, 2), StatValue(StatKind.LONG, 3))
    merged = merge_metadata_records(ints, longs)
    assert isinstance(merged, ColumnStatsRecord)
    assert (merged.min_value, merged.max_value) == (
        StatValue(StatKind.LONG, -5),
        StatValue(StatKind.LONG, 7),
    )
    doubles = of(StatValue(StatKind.DOUBLE, 2.5), StatValue(StatKind.DOUBLE, 2.5))
    merged = merge_metadata_records(longs, doubles)
    assert isinstance(merged, ColumnStatsRecord)
    assert (merged.min_value, merged.max_value) == (
        StatValue(StatKind.DOUBLE, 2.0),
        StatValue(StatKind.DOUBLE, 3.0),
    )
    with pytest.raises(CorruptDataFileError, match="damaged"):
        merge_metadata_records(doubles, longs)  # a narrowing is no evolution


def test_partition_stats_merge_as_column_stats() -> None:
    older = PartitionStatsRecord("k", "a", "c", long(5), long(6), 1, 0, 1, 1, False, True)
    newer = PartitionStatsRecord("k", "a", "c", long(2), long(3), 1, 0, 1, 1)
    assert merge_metadata_records(older, newer) == PartitionStatsRecord(
        "k", "a", "c", long(2), long(6), 2, 0, 2, 2
    )


@pytest.mark.parametrize(
    "older, newer",
    [
        (files({}), bloom("1")),  # one key, two kinds
        (files({}, key="p"), files({}, key="q")),  # two keys
        (stats(1, 2), ColumnStatsRecord("k", "f.parquet", "d", None, None, 1, 0, 1, 1)),
        (
            stats(1, 2),
            ColumnStatsRecord(
                "k", "f.parquet", "c", StatValue(StatKind.STRING, "x"), None, 1, 0, 1, 1
            ),
        ),  # fmt: skip
    ],
)
def test_records_that_cannot_merge_are_damage(older: MetadataRecord, newer: MetadataRecord) -> None:
    with pytest.raises(CorruptDataFileError, match="damaged"):
        merge_metadata_records(older, newer)


def merge_slice(
    base: MetadataRecord | None, logs: list[MetadataRecord | None]
) -> MetadataRecord | None:
    """A reader's two stages: the log blocks in instant order, then over the base file."""
    merged_logs = reduce(merge_metadata_records, logs[1:], logs[0])
    return merge_metadata_records(base, merged_logs)


def test_a_log_tombstone_cancels_a_base_file_entry_through_the_two_stages() -> None:
    """The clean's tombstone of a base file's entry sits in a later log block than an
    unrelated append: merged among the logs first, it must survive to drop the entry."""
    base = files({A: (5, False), B: (6, False)})
    logs: list[MetadataRecord | None] = [files({"c.log": (3, False)}), files({A: (0, True)})]
    merged = merge_slice(base, logs)
    assert isinstance(merged, FilesRecord)
    assert merged.live_files() == {B: 6, "c.log": 3}


def test_a_delete_block_in_the_logs_removes_the_base_files_record() -> None:
    assert merge_slice(location("x-0"), [None]) is None
    assert merge_slice(location("x-0"), [None, location("y-0")]) == location("y-0")

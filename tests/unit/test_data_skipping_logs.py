"""Data skipping of file slices with log files (`hoodie.read.data_skipping`): by the statistics of
all their files combined per column (`data_skipping.combine`: sound under partial updates, where
a merged row takes one column from the base file and another from a log), only where the
metadata table's `column_stats` holds every log file's (log files are never read for it); and
record key filters by the record index, on snapshot reads as of the table's latest instant only.
The log files named here do not exist: reading one would fail the test."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.fs_view import CommittedInstants
from hoodie.metadata_records import ColumnStatsRecord, StatKind, StatValue
from hoodie.read.data_skipping import (
    RECORD_INDEX_MAX_KEYS,
    ColumnStats,
    combine,
    skip_slices,
    slice_may_match,
)
from hoodie.read.planner import FileSplit
from hoodie.read.predicates import AllOf, Among, AnyOf, Compare, KeyIn, NullCheck
from hoodie.schema import RECORD_KEY
from hoodie.storage import load_file_io
from hoodie.table_metadata import COLUMN_STATS, RECORD_INDEX, RecordLocation
from hoodie.timeline import Action, Instant, State, Timeline

TABLE = pa.schema([(RECORD_KEY, pa.string()), ("a", pa.int64()), ("b", pa.int64())])


def stats(low, high, rows=10, nulls=0) -> ColumnStats:
    return ColumnStats(rows, nulls, low, high, bounded=low is not None)


def record(low, high, rows=10, nulls=0, kind=StatKind.LONG) -> ColumnStatsRecord:
    def wrap(value):
        return None if value is None else StatValue(kind, value)

    return ColumnStatsRecord("k", "f", "c", wrap(low), wrap(high), rows, nulls, 1, 1)


def test_combined_statistics_bound_every_file():
    combined = combine([stats(1, 5), stats(3, 9, rows=4, nulls=1)])
    assert combined == ColumnStats(14, 1, 1, 9, True)
    # an all-null file and a log of deletes only (no rows) bound nothing, count their nulls
    assert combine([stats(1, 5), ColumnStats(3, 3), ColumnStats(0, 0)]) == ColumnStats(
        13, 3, 1, 5, True
    )
    assert combine([ColumnStats(3, 3), ColumnStats(0, 0)]).all_null
    # a file of unknown statistics: the slice's are unknown
    assert combine([stats(1, 5), None]) is None
    # a file with values but no bounds: counts only; unknown nulls stay unknown
    assert combine([stats(1, 5), ColumnStats(4, 0)]) == ColumnStats(14, 0)
    assert combine([stats(1, 5), ColumnStats(4, None, 0, 1, True)]) == ColumnStats(
        14, None, 0, 5, True
    )


def test_partial_updates_are_judged_on_the_slice_not_file_by_file():
    """The base file has a in 1..5 and b in 10..20, the log a = 100 and b = 1: a merged row may
    be a = 100 (from the log) and b = 15 (from the base file), which neither file matches."""
    combined = {"a": combine([stats(1, 5), stats(100, 100)]),
                "b": combine([stats(10, 20), stats(1, 1)])}  # fmt: skip
    both = AllOf((Compare("a", "=", 100), Compare("b", "=", 15)))
    assert slice_may_match(both, combined, TABLE, keys_by_stats=True)
    assert slice_may_match(Compare("a", "=", 50), combined, TABLE, True)  # (within 1..100)
    assert not slice_may_match(Compare("a", ">", 100), combined, TABLE, True)
    assert not slice_may_match(Compare("b", ">", 20), combined, TABLE, True)
    assert slice_may_match(AnyOf((Compare("a", "=", 500), Compare("b", "=", 2))), combined,
                           TABLE, True)  # fmt: skip
    assert not slice_may_match(AnyOf((Compare("a", "=", 500), Compare("b", "=", 0))),
                               combined, TABLE, True)  # fmt: skip
    assert not slice_may_match(NullCheck("a", True), combined, TABLE, True)
    assert slice_may_match(Compare("gone", "=", 1), combined, TABLE, True)
    assert slice_may_match(Compare("a", "=", 500), {}, TABLE, True)  # no statistics: kept


def test_record_keys_by_the_combined_key_column():
    keys = {RECORD_KEY: combine([stats("k10", "k19"), stats("k30", "k31")])}
    assert not slice_may_match(KeyIn(("k05", "k40")), keys, TABLE, keys_by_stats=True)
    assert slice_may_match(KeyIn(("k05", "k25")), keys, TABLE, True)  # (within k10..k31)
    # a table without meta columns: its key column bounds no key
    assert slice_may_match(KeyIn(("k40",)), keys, TABLE, keys_by_stats=False)
    # a null key somewhere: not a key column to trust
    nulls = {RECORD_KEY: combine([stats("k10", "k19"), stats("k30", "k31", nulls=1)])}
    assert slice_may_match(KeyIn(("k40",)), nulls, TABLE, True)
    assert slice_may_match(Among(RECORD_KEY, ("k25",)), {}, TABLE, True)


class Properties:
    populate_meta_fields = True


class Data:
    properties = Properties()


class FakeMetadata:
    """A metadata table of these column stats records ((partition, file name, column) ->
    record) and record index entries, on these timelines."""

    def __init__(self, stats, partitions=(COLUMN_STATS,), index=None, mdt_instants=(),
                 data_instants=()):  # fmt: skip
        self.stats, self.completed, self.index = stats, list(partitions), index or {}
        self.data = Data()
        self.timeline = Timeline(
            [Instant(t, Action.DELTA_COMMIT, State.COMPLETED) for t in mdt_instants]
        )
        self.data_timeline = Timeline(list(data_instants))
        self.valid_instants = frozenset(mdt_instants)
        self.index_lookups = 0

    def partitions(self):
        return self.completed

    def column_stats_of(self, files, columns):
        wanted = {(p, n, c) for p, names in files.items() for n in names for c in columns}
        return {k: v for k, v in self.stats.items() if k in wanted}

    def bloom_filters_of(self, files):
        return {}

    def read_record_index(self, keys):
        self.index_lookups += 1
        return {k: self.index[k] for k in keys if k in self.index}


def _stats_of(files: dict[str, tuple], column="a") -> dict:
    return {("p", name, column): record(*bounds) for name, bounds in files.items()}


def test_slices_with_logs_are_skipped_by_their_files_combined_statistics(tmp_path):
    storage = load_file_io(str(tmp_path))
    table = pa.schema([("a", pa.int64())])
    (tmp_path / "p").mkdir()
    pq.write_table(pa.table({"a": pa.array([40, 45], pa.int64())}), tmp_path / "p/g4.parquet")
    held = _stats_of({
        "g1.parquet": (1, 5), ".g1.log.1": (6, 9), ".g1.log.2": (None, None, 0),  # deletes only
        "g2.parquet": (1, 5), ".g2.log.1": (50, 60),
        ".g3.log.1": (1, 3),  # a slice of log files only
        ".g4.log.1": (1, 2),  # its base file's statistics: from its footer
        "g5.parquet": (1, 5), ".g5.log.1": (1, 5),  # .g5.log.2 has none: unchecked
    })  # fmt: skip
    splits = [
        FileSplit("p", "g1", "p/g1.parquet", ("p/.g1.log.1", "p/.g1.log.2")),
        FileSplit("p", "g2", "p/g2.parquet", ("p/.g2.log.1",)),
        FileSplit("p", "g3", None, ("p/.g3.log.1",)),
        FileSplit("p", "g4", "p/g4.parquet", ("p/.g4.log.1",)),
        FileSplit("p", "g5", "p/g5.parquet", ("p/.g5.log.1", "p/.g5.log.2")),
    ]
    metadata = FakeMetadata(held)
    kept, report = skip_slices(storage, splits, True, Compare("a", "=", 55), table,
                               metadata=metadata)  # fmt: skip
    assert [s.file_id for s in kept] == ["g2", "g5"]
    assert (report.by_combined, report.combined, report.with_logs) == (3, 4, 1)
    assert (report.by_metadata, report.by_footers, report.footers_read) == (2, 1, 1)
    assert report.skipped_files == ["g1.parquet", ".g3.log.1", "g4.parquet"]
    text = report.describe("t")
    assert "3 slices with logs skipped by combined statistics" in text
    assert "1 kept unchecked as their log files are merged" in text
    # 42: in g4's footer range, and within g2's combined bounds
    kept, _ = skip_slices(storage, splits, True, Compare("a", "=", 42), table, metadata=metadata)
    assert [s.file_id for s in kept] == ["g2", "g4", "g5"]  # g2: 1..60 combined
    kept, _ = skip_slices(storage, splits, True, Compare("a", "=", 48), table, metadata=metadata)
    assert [s.file_id for s in kept] == ["g2", "g5"]
    kept, _ = skip_slices(storage, splits, True, Compare("a", ">", 60), table, metadata=metadata)
    assert [s.file_id for s in kept] == ["g5"]
    # no metadata table, or no column_stats partition: unchecked, as without statistics
    for none in (None, FakeMetadata(held, partitions=())):
        kept, report = skip_slices(storage, splits, True, Compare("a", "=", 55), table,
                                   metadata=none)  # fmt: skip
        assert kept == splits and report.with_logs == 5 and report.by_combined == 0


def test_a_key_filter_on_slices_with_logs_needs_every_logs_key_statistics(tmp_path):
    storage = load_file_io(str(tmp_path))
    keys = {
        ("p", name, RECORD_KEY): record(low, high, kind=StatKind.STRING)
        for name, (low, high) in {
            "g1.parquet": ("k10", "k19"), ".g1.log.1": ("k12", "k14"),
            "g2.parquet": ("k20", "k29"),  # .g2.log.1 has none
        }.items()
    }  # fmt: skip
    splits = [FileSplit("p", "g1", "p/g1.parquet", ("p/.g1.log.1",)),
              FileSplit("p", "g2", "p/g2.parquet", ("p/.g2.log.1",))]  # fmt: skip
    metadata = FakeMetadata(keys)
    kept, report = skip_slices(storage, splits, True, KeyIn(("k25",)), TABLE, metadata=metadata)
    assert [s.file_id for s in kept] == ["g2"] and report.by_combined == 1
    kept, _ = skip_slices(storage, splits, True, KeyIn(("k13",)), TABLE, metadata=metadata)
    assert [s.file_id for s in kept] == ["g1", "g2"]
    metadata.data.properties = type("P", (), {"populate_meta_fields": False})()
    kept, report = skip_slices(storage, splits, True, KeyIn(("k25",)), TABLE, metadata=metadata)
    assert kept == splits and report.by_combined == 0


PLANNED = CommittedInstants(frozenset({"100", "200"}), "100", as_of="200")


def _indexed(**kw) -> FakeMetadata:
    where = {"k1": RecordLocation("p", "g1", None), "k3": RecordLocation("q", "g3", None)}
    return FakeMetadata({}, (RECORD_INDEX,), where, **kw)


def test_record_keys_keep_only_the_file_groups_the_record_index_puts_them_in(tmp_path):
    storage = load_file_io(str(tmp_path))  # no file exists: nothing is read but the index
    splits = [FileSplit("p", "g1", "p/g1.parquet", ("p/.g1.log.1",)),
              FileSplit("p", "g2", "p/g2.parquet"),
              FileSplit("q", "g3", None, ("q/.g3.log.1",))]  # fmt: skip
    metadata = _indexed(mdt_instants=("100", "200"))
    kept, report = skip_slices(storage, splits, True, KeyIn(("k1", "k9")), TABLE,
                               metadata=metadata, snapshot=PLANNED)  # fmt: skip
    assert kept == splits[:1] and report.by_record_index == 2 and metadata.index_lookups == 1
    assert "2 by the record index" in report.describe("t")
    either = AnyOf((KeyIn(("k3",)), AllOf((KeyIn(("k1",)), Compare("a", "=", 1)))))
    kept, _ = skip_slices(storage, splits, True, either, TABLE, metadata=metadata,
                          snapshot=PLANNED)  # fmt: skip
    assert kept == [splits[0], splits[2]]
    kept, report = skip_slices(storage, splits, True, KeyIn(("k9",)), TABLE, metadata=metadata,
                               snapshot=PLANNED)  # fmt: skip
    assert kept == [] and report.by_record_index == 3


@pytest.mark.parametrize(
    "case", ["time travel or incremental", "read-optimized", "too many keys", "index newer"]
)
def test_the_record_index_is_not_used_where_it_may_not_describe_the_read(tmp_path, case):
    """Not used (the statistics decide: here, none, so every slice is kept unread)."""
    storage = load_file_io(str(tmp_path))
    splits = [FileSplit("p", "g2", None, ("p/.g2.log.1",))]
    metadata = _indexed(mdt_instants=("100", "200"))
    snapshot, merge, keys = PLANNED, True, ("k1",)
    if case == "time travel or incremental":
        snapshot = None
    elif case == "read-optimized":
        merge = False
    elif case == "too many keys":
        keys = tuple(f"k{i}" for i in range(RECORD_INDEX_MAX_KEYS + 1))
    else:  # a write completed after the plan was listed: its MDT commit counts
        metadata = _indexed(mdt_instants=("100", "200", "300"))
    kept, report = skip_slices(storage, splits, merge, KeyIn(keys), TABLE, metadata=metadata,
                               snapshot=snapshot)  # fmt: skip
    assert kept == splits and report.by_record_index == 0 and metadata.index_lookups == 0


def test_cleans_and_earlier_rollbacks_leave_the_record_index_usable(tmp_path):
    storage = load_file_io(str(tmp_path))
    splits = [FileSplit("p", "g2", None, ("p/.g2.log.1",))]
    data = [Instant("150", Action.ROLLBACK, State.COMPLETED),
            Instant("250", Action.CLEAN, State.COMPLETED)]  # fmt: skip
    metadata = _indexed(mdt_instants=("00000000000000010", "100", "150", "200", "250"),
                        data_instants=data)  # fmt: skip
    kept, report = skip_slices(storage, splits, True, KeyIn(("k1",)), TABLE, metadata=metadata,
                               snapshot=PLANNED)  # fmt: skip
    assert kept == [] and report.by_record_index == 1
    # a rollback after the plan's last write (its target may be a write the plan read)
    later = [Instant("300", Action.ROLLBACK, State.COMPLETED)]
    metadata = _indexed(mdt_instants=("100", "200", "300"), data_instants=later)
    kept, _ = skip_slices(storage, splits, True, KeyIn(("k1",)), TABLE, metadata=metadata,
                          snapshot=PLANNED)  # fmt: skip
    assert kept == splits

"""Tables Apache Hudi 1.x wrote (table versions 8 and 9, timeline layout 2), read by us and by
hudi-rs, row for row.

The zips under `tests/fixtures/hudi-rs/` are the version 8 and 9 tables of hudi-rs's test corpus
(see its README), each with the Spark SQL that made it. Each is read by the `hoodie` Spark data
source and by hudi-rs (the `hudi` package) in every query type:

- snapshot and read-optimized;
- time travel (`as.of.instant`) at every completed write, a moment after the first and one
  after the last: by requested time, as hudi-rs reads it;
- incremental for consecutive completion times (layout 2 orders by completion: the instants
  that completed in (begin, end]); hudi-rs agrees, and both are checked against the definition
  (rows those instants wrote, as of the last write completed by `end`, read by hudi-rs's time
  travel).

Tables with Lance base files (Hudi 1.2) are refused with an error naming the format.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from rs_compare import (
    assert_same_rows,
    assert_table_read_agrees,
    read_ours,
    read_theirs,
    rows_of,
)
from sample_tables import unzip

from hoodie import HoodieTable, WriteConfig
from hoodie.archived_timeline import HistoryEntry, append_to_history
from hoodie.exceptions import UnsupportedTableError
from hoodie.read.datasource import register
from hoodie.schema import META_COLUMNS
from hoodie.storage import load_file_io

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "hudi-rs"
ALL_ZIPS = sorted(ROOT.rglob("*.zip"))
LANCE = [z for z in ALL_ZIPS if "lance" in z.stem]
ZIPS = [z for z in ALL_ZIPS if z not in LANCE]
META = list(META_COLUMNS)
QUERY_TYPE = "hoodie.datasource.query.type"
AS_OF = "as.of.instant"
BEGIN = "hoodie.datasource.read.begin.instanttime"
END = "hoodie.datasource.read.end.instanttime"
RS_READ_OPTIMIZED = "hoodie.read.use.read_optimized.mode"


def _fixture_id(zip_path: Path) -> str:
    return str(zip_path.relative_to(ROOT).with_suffix(""))


def test_the_fixtures_are_versions_8_and_9():
    versions = {_fixture_id(z).rsplit("/", 1)[-1][:2] for z in ALL_ZIPS}
    assert versions == {"v8", "v9"}
    assert len(ZIPS) == 17 and len(LANCE) == 1


@pytest.fixture(scope="module", params=ZIPS, ids=_fixture_id)
def fx(request, spark, tmp_path_factory):
    return _load(request.param, spark, tmp_path_factory.mktemp(request.param.stem))


def _load(zip_path: Path, spark, tmp: Path) -> SimpleNamespace:
    """One unzipped fixture table, with what both readers need to know about it."""
    path = str(unzip(zip_path, tmp))
    register(spark)
    ours = HoodieTable.open(path)
    theirs = hudi.HudiTable(path)
    timeline = theirs.get_timeline()
    completed = (
        timeline.get_completed_commits()
        + timeline.get_completed_deltacommits()
        + timeline.get_completed_replacecommits()
    )
    props = ours.properties
    return SimpleNamespace(
        name=_fixture_id(zip_path),
        path=path,
        spark=spark,
        table=ours,
        hudi=theirs,
        instants=sorted(i.timestamp for i in completed),
        meta_fields=props.populate_meta_fields,
        key="_hoodie_record_key" if props.populate_meta_fields else props.record_key_fields[0],
    )


def _ours(fx, **options) -> pa.Table:
    return read_ours(fx.spark, fx.path, **options)


def _theirs(fx, options=None) -> pa.Table | None:
    return read_theirs(fx.hudi, options)


def _same(fx, ours: pa.Table, theirs: pa.Table | None) -> list[dict]:
    return assert_same_rows(fx.name, fx.key, ours, theirs)


def _completions(fx) -> dict[str, str]:
    """Requested -> completion time of every completed write, from our timeline."""
    writes = fx.table.meta_client.timeline().completed.write_timeline
    return {i.timestamp: i.completion_time for i in writes}


def test_the_timeline_is_layout_2_with_completion_times(fx):
    props = fx.table.properties
    assert props.table_version in (8, 9) and props.timeline_layout_version == 2
    completions = _completions(fx)
    assert sorted(completions) == fx.instants
    assert all(done is not None and done > t for t, done in completions.items())


def test_snapshot_matches_hudi_rs(fx):
    ours = _ours(fx)
    theirs = _theirs(fx)
    if fx.instants:
        assert ours.column_names == META + fx.hudi.get_schema().names
    else:
        assert theirs is None and ours.num_rows == 0
    _same(fx, ours, theirs)


# The rows the .sql leaves: the version 8 sample tables run the statements of their version 6
# twins (INSERT 1-3; INSERT 1 with isActive=false, and 4).
SQL_LATEST = {
    "sample_table/cow/v8_nonpartitioned": {1: False, 2: False, 3: True, 4: True},
    "sample_table/cow/v8_simplekeygen_nonhivestyle": {1: False, 2: False, 3: True, 4: True},
    "sample_table/cow/v8_complexkeygen_hivestyle": {1: False, 2: False, 3: True, 4: True},
    "sample_table/cow/v8_simplekeygen_hivestyle_no_metafields": {
        1: False,
        2: False,
        3: True,
        4: True,
    },
}


@pytest.mark.parametrize("name", sorted(SQL_LATEST))
def test_snapshot_holds_what_the_sql_wrote(name, spark, tmp_path):
    fx = _load(ROOT / f"{name}.zip", spark, tmp_path)
    ours = _ours(fx)
    got = dict(zip(ours.column("id").to_pylist(), ours.column("isActive").to_pylist()))
    assert got == SQL_LATEST[name]


def test_the_trips_table_merges_its_logs_after_compaction(spark, tmp_path):
    """8 inserts; UPDATE rider-A; DELETE rider-F; UPDATE then DELETE rider-J; (compaction);
    UPDATE rider-G: the last update is a log file that completed after the compaction was
    requested, so it belongs to the slice of the compaction's base file."""
    fx = _load(ROOT / "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", spark, tmp_path)
    ours = _ours(fx)
    fares = dict(zip(ours.column("rider").to_pylist(), ours.column("fare").to_pylist()))
    assert sorted(fares) == ["rider-A", "rider-C", "rider-D", "rider-E", "rider-G", "rider-I"]
    assert fares["rider-A"] == 0 and fares["rider-G"] == 0
    slices = [s for s in fx.table.file_system_view().file_groups() if s.latest_slice.log_files]
    assert len(slices) == 1
    latest = slices[0].latest_slice
    assert latest.base_file is not None and latest.base_instant < latest.log_files[0].instant


def test_read_optimized_matches_hudi_rs(fx):
    ours = _ours(fx, **{QUERY_TYPE: "read_optimized"})
    theirs = _theirs(fx, hudi.HudiReadOptions().with_hudi_option(RS_READ_OPTIMIZED, "true"))
    _same(fx, ours, theirs)


def test_time_travel_matches_hudi_rs_at_every_instant(fx):
    if not fx.instants:
        pytest.skip("no commits to travel to")
    first = fx.instants[0]
    after_first = str(int(first) + 1)
    for point in [*fx.instants, after_first, "99991231235959999"]:
        ours = _ours(fx, **{AS_OF: point})
        theirs = _theirs(fx, hudi.HudiReadOptions().with_as_of_timestamp(point))
        rows = _same(fx, ours, theirs)
        if fx.meta_fields and point in fx.instants:
            assert all(r["_hoodie_commit_time"] <= point for r in rows), point


def _incremental(fx, begin: str, end: str) -> tuple[pa.Table, pa.Table | None]:
    ours = _ours(fx, **{QUERY_TYPE: "incremental", BEGIN: begin, END: end})
    options = (
        hudi.HudiReadOptions()
        .with_query_type(hudi.HudiQueryType.Incremental)
        .with_start_timestamp(begin)
        .with_end_timestamp(end)
    )
    return ours, _theirs(fx, options)


def test_incremental_by_completion_time_matches_hudi_rs(fx):
    if not fx.meta_fields or not fx.instants:
        pytest.skip("incremental reads need meta fields and commits")
    completions = _completions(fx)
    ends = sorted(completions.values())
    for begin, end in zip(["0", *ends], ends):
        ours, theirs = _incremental(fx, begin, end)
        rows = _same(fx, ours, theirs)
        # The definition: rows the instants completed in (begin, end] wrote, in the table as
        # of the last write completed by `end` (hudi-rs's time travel is by requested time).
        wrote = {t for t, done in completions.items() if begin < done <= end}
        as_of = max(t for t, done in completions.items() if done <= end)
        snapshot = _theirs(fx, hudi.HudiReadOptions().with_as_of_timestamp(as_of))
        columns = list(rows[0]) if rows else META
        stored = rows_of(snapshot, columns, fx.key)
        expected = [r for r in stored if r["_hoodie_commit_time"] in wrote]
        assert rows == expected, (begin, end)


def test_a_requested_time_is_not_a_completion_time(spark, tmp_path):
    """Beginning at a write's requested time still returns that write (it completed later);
    beginning at its completion time does not."""
    fx = _load(ROOT / "sample_table/cow/v8_nonpartitioned.zip", spark, tmp_path)
    first, second = fx.instants
    done_first = _completions(fx)[first]
    from_requested, _ = _incremental(fx, first, "99991231235959999")
    from_completed, _ = _incremental(fx, done_first, "99991231235959999")
    assert set(from_requested.column("_hoodie_commit_time").to_pylist()) == {first, second}
    assert set(from_completed.column("_hoodie_commit_time").to_pylist()) == {second}


@pytest.mark.parametrize("zip_path", LANCE, ids=_fixture_id)
def test_lance_base_files_are_refused_with_the_format_named(zip_path, tmp_path):
    path = str(unzip(zip_path, tmp_path))
    with pytest.raises(UnsupportedTableError, match="LANCE .*hoodie.table.base.file.format"):
        HoodieTable.open(path)


def test_writing_a_version_9_table_is_refused_before_any_file_changes(spark, tmp_path):
    """We write versions 6 and 8; a version 9 table (Hudi 1.1) is only read."""
    zip_path = ROOT / "sample_table" / "cow" / "v9_txns_simple_nometa.zip"
    path = unzip(zip_path, tmp_path)
    before = sorted((p.relative_to(path), p.stat().st_size) for p in path.rglob("*"))
    table = HoodieTable.open(str(path))
    config = WriteConfig.build(table.name, record_key="txn_id")
    batch = spark.createDataFrame([("t-9", "x")], "txn_id string, name string")
    with pytest.raises(UnsupportedTableError, match="version 9 .*writes table versions 6 and 8"):
        table.upsert(batch, config)
    assert sorted((p.relative_to(path), p.stat().st_size) for p in path.rglob("*")) == before


def _archive_to_history(path: Path, instant: str) -> None:
    """Move a completed commit off the active timeline into the LSM timeline, as Hudi 1.x's
    archival does (the history file written by our archival's writer; its format is checked
    against hand-laid files in tests/unit/test_archived_timeline)."""
    timeline = path / ".hoodie" / "timeline"
    (completed,) = timeline.glob(f"{instant}_*.commit")
    done = completed.name.split("_")[1].split(".")[0]
    entry = HistoryEntry(instant, done, "commit", completed.read_bytes(), None)
    append_to_history(load_file_io(str(path)), [entry])
    for state in timeline.glob(f"{instant}*"):
        state.unlink()


def test_instants_archived_to_the_lsm_timeline_keep_their_files(spark, tmp_path):
    """Archival moves an instant's timeline files only: the base files it wrote that no later
    commit replaced stay in every snapshot, and the history lists it with its completion time."""
    fx = _load(ROOT / "sample_table/cow/v8_simplekeygen_nonhivestyle.zip", spark, tmp_path)
    before = _ours(fx)
    first = fx.instants[0]
    _archive_to_history(Path(fx.path), first)
    table = HoodieTable.open(fx.path)
    assert [i.timestamp for i in table.timeline().completed.write_timeline] == fx.instants[1:]
    (archived,) = table.meta_client.archived_instants()
    assert (archived.timestamp, archived.action) == (first, "commit")
    assert archived.completion_time > first
    assert any(row["state"] == "COMPLETED (archived)" for row in table.history())
    after = _ours(fx)
    assert rows_of(after, after.column_names, fx.key) == rows_of(
        before, before.column_names, fx.key
    )
    assert set(after.column("_hoodie_commit_time").to_pylist()) == set(fx.instants)
    # hudi-rs (which does not read the LSM timeline) keeps those files too.
    theirs = read_theirs(hudi.HudiTable(fx.path))
    _same(fx, after, theirs)


# -- HoodieTable.read: the same rows by Spark's parquet reader --------------------------------
def test_table_read_matches_the_data_source(fx):
    """Apache Hudi's base files, scanned by Spark's own parquet reader where nothing is merged
    (the data source merging the other slices), read as our data source reads them (types,
    nulls, columns a file lacks): the snapshot, and for merge-on-read the read-optimized query
    (copy-on-write's is its snapshot)."""
    for query in ["snapshot", "read_optimized"] if fx.hudi.is_mor else ["snapshot"]:
        assert_table_read_agrees(fx.spark, fx.path, fx.key, **{QUERY_TYPE: query})

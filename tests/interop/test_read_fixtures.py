"""Our read path against hudi-rs, row for row, on every table in the hudi-rs sample fixtures.

Every zip under shared/fixtures/hudi-rs-sample-tables (tables Apache Hudi 0.x wrote, with
the .sql that made each one beside it) is unzipped once per module and read by the `hoodie`
Spark data source and by hudi-rs (the `hudi` package) in every query type:

- snapshot (the default);
- read-optimized (`hoodie.datasource.query.type=read_optimized`; hudi-rs:
  `hoodie.read.use.read_optimized.mode=true`), also checked against the base files' own
  content read with pyarrow;
- time travel (`as.of.instant`) at every completed commit / delta commit, plus a moment between
  two instants and one after the last;
- incremental (`hoodie.datasource.read.begin.instanttime` exclusive, `...end.instanttime`
  inclusive) for consecutive instant pairs, from "0" to the first instant included. hudi-rs
  0.5 reads incrementally too (`HudiQueryType.Incremental`, start exclusive, end inclusive);
  its answer is itself checked against the time-travel snapshots (rows of snapshot(end) whose
  `_hoodie_commit_time` is in (begin, end]), Apache Hudi's definition;
- errors: an instant before the first commit, a malformed instant, an unknown option.

Beyond the zips as they are, a few copies are altered the way Apache Hudi itself leaves
tables: commits archived off the active timeline, and a compaction scheduled but not yet
completed. Then partition pruning: a filter on the partition column reads only that
partition's file slices (one Spark input partition each) and the right rows.

How rows are compared: both sides become pyarrow tables (ours through `DataFrame.toArrow()`),
restricted to the columns hudi-rs returns (all user columns, plus the five meta columns when
the table populates them), turned into Python values and sorted by record key
(`tests/rs_compare.py` says how values are normalised).

Observed hudi-rs behaviours, recorded by the assertions below:
- it agrees with the .sql on every fixture (nothing here had to overrule it);
- for a table written without meta fields it returns no `_hoodie_*` columns, and its
  incremental read returns whole file slices the range's commits wrote (there is no commit
  time to filter rows by); we refuse such an incremental read with an error instead, as
  Apache Hudi's Spark `IncrementalRelation` does;
- an as-of instant before the first commit reads zero rows, where we raise a TimelineError
  that names the readable range;
- merged merge-on-read rows carry the log record's `_hoodie_file_name` (the bare file id),
  exactly as ours do;
- it keeps the files and log blocks of archived commits (as we now do);
- it ignores log files written while a compaction is pending (their base instant is the
  compaction's), so its snapshot misses their updates: there we assert the rows the .sql
  implies instead (test_logs_written_during_a_pending_compaction_join_the_previous_slice).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rs_compare import (
    assert_same_rows,
    assert_table_read_agrees,
    read_ours,
    read_theirs,
    rows_of,
)
from sample_tables import ROOT, unzip

from hoodie import HoodieTable, WriteConfig
from hoodie.read.datasource import register
from hoodie.schema import META_COLUMNS

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

ZIPS = sorted(ROOT.rglob("*.zip"))
META = list(META_COLUMNS)
QUERY_TYPE = "hoodie.datasource.query.type"
AS_OF = "as.of.instant"
BEGIN = "hoodie.datasource.read.begin.instanttime"
END = "hoodie.datasource.read.end.instanttime"
RS_READ_OPTIMIZED = "hoodie.read.use.read_optimized.mode"
# A moment before any fixture's first commit.
BEFORE_ALL = "20000101000000000"


def _fixture_id(zip_path: Path) -> str:
    return str(zip_path.relative_to(ROOT).with_suffix(""))


def test_every_fixture_zip_is_covered():
    """The brief's list: a zip added to the fixtures later must not go unread."""
    assert [_fixture_id(z) for z in ZIPS] == [
        "quickstart_trips_table/mor/avro/v6_trips_8i1u",
        "sample_table/cow/v6_empty",
        "sample_table/cow/v6_nonpartitioned",
        "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields",
        "sample_table/cow/v6_simplekeygen_nonhivestyle",
        "sample_table/mor/parquet/v6_empty",
        "sample_table/mor/parquet/v6_nonpartitioned",
        "sample_table/mor/parquet/v6_nonpartitioned_rollback",
        "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle",
    ]


def _unzip(zip_path: Path, target: Path) -> str:
    return str(unzip(zip_path, target))


@pytest.fixture(scope="module", params=ZIPS, ids=_fixture_id)
def fx(request, spark, tmp_path_factory):
    """One unzipped fixture table, with what both readers need to know about it."""
    zip_path: Path = request.param
    path = _unzip(zip_path, tmp_path_factory.mktemp(zip_path.stem))
    register(spark)
    ours = HoodieTable.open(path)
    theirs = hudi.HudiTable(path)
    timeline = theirs.get_timeline()
    instants = sorted(
        i.timestamp
        for i in timeline.get_completed_commits() + timeline.get_completed_deltacommits()
    )
    props = ours.properties
    return SimpleNamespace(
        name=_fixture_id(zip_path),
        path=path,
        spark=spark,
        table=ours,
        hudi=theirs,
        mor=theirs.is_mor,
        instants=instants,
        meta_fields=props.populate_meta_fields,
        # Rows sort by record key: the meta column, or the key field without meta fields.
        key="_hoodie_record_key" if props.populate_meta_fields else props.record_key_fields[0],
        cache={},
    )


# -- reading and normalising ----------------------------------------------------------------------
def _ours(fx, **options) -> pa.Table:
    return read_ours(fx.spark, fx.path, **options)


def _snapshot(fx) -> pa.Table:
    if "snapshot" not in fx.cache:
        fx.cache["snapshot"] = _ours(fx)
    return fx.cache["snapshot"]


def _theirs(fx, options=None) -> pa.Table | None:
    return read_theirs(fx.hudi, options)


def _rows(table: pa.Table | None, columns: list[str], key: str) -> list[dict]:
    return rows_of(table, columns, key)


def _compare(fx, ours: pa.Table, theirs: pa.Table | None) -> list[dict]:
    return assert_same_rows(fx.name, fx.key, ours, theirs)


def _rs_options():
    return hudi.HudiReadOptions()


# -- 1. snapshot ----------------------------------------------------------------------------------
def test_snapshot_matches_hudi_rs(fx):
    ours = _snapshot(fx)
    theirs = _theirs(fx)
    if fx.instants:
        user = fx.hudi.get_schema().names
        assert ours.column_names == META + user
        expected_columns = (META if fx.meta_fields else []) + user
        assert theirs.column_names == expected_columns
    else:
        assert theirs is None and ours.num_rows == 0
        assert ours.column_names[:5] == META
    _compare(fx, ours, theirs)


# What each .sql leaves in the table: record key -> a column its statements change. hudi-rs
# agrees with all of these (asserted through test_snapshot_matches_hudi_rs).
SQL_LATEST = {
    "sample_table/cow/v6_empty": ("isActive", {}),
    "sample_table/mor/parquet/v6_empty": ("isActive", {}),
    # INSERT 1-3; INSERT (upsert) 1 with isActive=false, and 4.
    "sample_table/cow/v6_nonpartitioned": (
        "isActive",
        {1: False, 2: False, 3: True, 4: True},
    ),
    "sample_table/cow/v6_simplekeygen_nonhivestyle": (
        "isActive",
        {1: False, 2: False, 3: True, 4: True},
    ),
    "sample_table/mor/parquet/v6_nonpartitioned": (
        "isActive",
        {1: False, 2: False, 3: True, 4: True},
    ),
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle": (
        "isActive",
        {1: False, 2: False, 3: True, 4: True},
    ),
    # One INSERT of 1-4 (1 already with isActive=false).
    "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields": (
        "isActive",
        {1: False, 2: False, 3: True, 4: True},
    ),
    # INSERT 1-3; INSERT 1 (false) and 4, rolled back; INSERT 2 with isActive=true.
    "sample_table/mor/parquet/v6_nonpartitioned_rollback": (
        "isActive",
        {1: True, 2: True, 3: True},
    ),
}


def test_snapshot_holds_what_the_sql_wrote(fx):
    ours = _snapshot(fx)
    if fx.name.startswith("quickstart_trips_table"):
        fares = dict(zip(ours.column("rider").to_pylist(), ours.column("fare").to_pylist()))
        # 8 inserts, then UPDATE ... SET fare = 25.0 WHERE rider = 'rider-D'.
        assert fares == {
            "rider-A": 19.10,
            "rider-C": 27.70,
            "rider-D": 25.0,
            "rider-E": 93.50,
            "rider-F": 34.15,
            "rider-G": 43.40,
            "rider-I": 41.06,
            "rider-J": 17.85,
        }
        return
    column, expected = SQL_LATEST[fx.name]
    got = dict(zip(ours.column("id").to_pylist(), ours.column(column).to_pylist()))
    assert got == expected


# -- 2. read-optimized ----------------------------------------------------------------------------
def test_read_optimized_matches_hudi_rs(fx):
    ours = _ours(fx, **{QUERY_TYPE: "read_optimized"})
    theirs = _theirs(fx, _rs_options().with_hudi_option(RS_READ_OPTIMIZED, "true"))
    rows = _compare(fx, ours, theirs)
    if not fx.mor:
        # Copy-on-write has no log files: read-optimized is the snapshot.
        assert rows == _rows(_snapshot(fx), list(rows[0]) if rows else META, fx.key)


def test_read_optimized_is_the_latest_base_files_content(fx):
    """A second oracle: the latest base files read directly with pyarrow."""
    ours = _ours(fx, **{QUERY_TYPE: "read_optimized"})
    slices = fx.hudi.get_file_slices(_rs_options().with_hudi_option(RS_READ_OPTIMIZED, "true"))
    files = [s.base_file_relative_path() for s in slices if s.base_file_name]
    if not files:
        assert ours.num_rows == 0
        return
    base = pa.concat_tables(
        [pq.read_table(f"{fx.path}/{f}") for f in files], promote_options="permissive"
    )
    columns = [c for c in base.column_names if c in ours.column_names]
    assert set(ours.column_names) - set(columns) <= set(META)
    assert _rows(ours, columns, fx.key) == _rows(base, columns, fx.key)


# -- 3. time travel -------------------------------------------------------------------------------
def _later(instant: str, millis: int) -> str:
    moment = datetime.datetime.strptime(instant, "%Y%m%d%H%M%S%f")
    moment += datetime.timedelta(milliseconds=millis)
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def test_time_travel_matches_hudi_rs_at_every_instant(fx):
    if not fx.instants:
        pytest.skip("no commits to travel to (the error is checked in test_errors_*)")
    ours_instants = [i.timestamp for i in fx.table.timeline().completed.write_timeline]
    assert ours_instants == fx.instants
    # Every instant, a moment just after the first (between two instants when there are
    # several: it must read as of the first) and one long after the last.
    points = [*fx.instants, _later(fx.instants[0], 1), "99991231235959999"]
    for point in points:
        ours = _ours(fx, **{AS_OF: point})
        theirs = _theirs(fx, _rs_options().with_as_of_timestamp(point))
        rows = _compare(fx, ours, theirs)
        if fx.meta_fields and point in fx.instants:
            # Nothing written after the instant is visible.
            assert all(r["_hoodie_commit_time"] <= point for r in rows), point
            assert any(r["_hoodie_commit_time"] == point for r in rows), point
    latest = _ours(fx, **{AS_OF: fx.instants[-1]})
    assert _rows(latest, latest.column_names, fx.key) == _rows(
        _snapshot(fx), latest.column_names, fx.key
    )


# -- 4. incremental -------------------------------------------------------------------------------
def _incremental(begin: str, end: str | None) -> dict[str, str]:
    options = {QUERY_TYPE: "incremental", BEGIN: begin}
    if end is not None:
        options[END] = end
    return options


def test_incremental_matches_hudi_rs_for_consecutive_instants(fx):
    if not fx.meta_fields:
        # hudi-rs reads every row here: without `_hoodie_commit_time` it cannot tell which
        # rows a commit wrote. We refuse, naming the reason, as Apache Hudi does.
        with pytest.raises(Exception) as error:
            _ours(fx, **_incremental("0", fx.instants[-1]))
        text = str(error.value)
        assert "without meta fields" in text and "hoodie.populate.meta.fields=false" in text
        options = (
            _rs_options()
            .with_query_type(hudi.HudiQueryType.Incremental)
            .with_start_timestamp("0")
            .with_end_timestamp(fx.instants[-1])
        )
        theirs = _theirs(fx, options)
        assert theirs.num_rows == _snapshot(fx).num_rows
        assert "_hoodie_commit_time" not in theirs.column_names
        return
    if not fx.instants:
        assert _ours(fx, **_incremental("0", None)).num_rows == 0
        return
    bounds = ["0", *fx.instants]
    for begin, end in zip(bounds, bounds[1:]):
        ours = _ours(fx, **_incremental(begin, end))
        options = (
            _rs_options()
            .with_query_type(hudi.HudiQueryType.Incremental)
            .with_start_timestamp(begin)
            .with_end_timestamp(end)
        )
        theirs = _theirs(fx, options)
        rows = _compare(fx, ours, theirs)
        # The definition: rows of snapshot(end) whose commit time is in (begin, end].
        as_of_end = _theirs(fx, _rs_options().with_as_of_timestamp(end))
        columns = list(rows[0]) if rows else META
        expected = [
            r for r in _rows(as_of_end, columns, fx.key) if begin < r["_hoodie_commit_time"] <= end
        ]
        assert rows == expected, (begin, end)
        assert rows, f"({begin}, {end}] wrote rows, so reads some"
    # No end: up to the latest instant.
    ours = _ours(fx, **_incremental(fx.instants[0], None))
    last = _ours(fx, **_incremental(fx.instants[0], fx.instants[-1]))
    assert _rows(ours, META, fx.key) == _rows(last, META, fx.key)


# -- 5. errors ------------------------------------------------------------------------------------
def test_errors_as_of_before_the_first_commit(fx):
    with pytest.raises(Exception) as error:
        _ours(fx, **{AS_OF: BEFORE_ALL})
    text = str(error.value)
    assert "TimelineError" in text and BEFORE_ALL in text
    if fx.instants:
        assert "readable range" in text
        assert f"{fx.instants[0]} .. {fx.instants[-1]}" in text
    else:
        assert "no completed commits" in text


def test_errors_malformed_instant_and_unknown_option(spark, tmp_path):
    """Option errors do not depend on the table (and each costs a failed Spark planning, so
    they run on one fixture only)."""
    register(spark)
    fx = SimpleNamespace(
        spark=spark, path=_unzip(ROOT / "sample_table/cow/v6_nonpartitioned.zip", tmp_path)
    )
    for bad in ("2024-13-45", "20241345000000000", "yesterday"):
        with pytest.raises(Exception) as error:
            _ours(fx, **{AS_OF: bad})
        text = str(error.value)
        assert f"'{AS_OF}'='{bad}' is not an instant" in text, text
    with pytest.raises(Exception) as error:
        _ours(fx, **_incremental("20240418x", None))
    assert f"'{BEGIN}'='20240418x' is not an instant" in str(error.value)
    with pytest.raises(Exception) as error:
        _ours(fx, **{"as.of.instnat": "20240418172804498"})
    text = str(error.value)
    assert "unknown read option(s) 'as.of.instnat'" in text and AS_OF in text


# -- what else Apache Hudi leaves in a table: archived commits, a pending compaction ------------
def _archive(path: str, *instants: str) -> None:
    """Move instants' timeline files to .hoodie/archived, as Hudi's archival does (it writes
    them into an archive log there; readers of the active timeline see them gone)."""
    meta = Path(path, ".hoodie")
    for instant in instants:
        moved = list(meta.glob(f"{instant}.*"))
        assert moved, instant
        for file in moved:
            file.rename(meta / "archived" / file.name)


def _all_rows(table: pa.Table | None, key: str = "_hoodie_record_key") -> list[dict]:
    return _rows(table, table.column_names if table is not None else [], key)


def test_files_of_archived_commits_stay_visible(spark, tmp_path):
    """Hudi archives all but the last commits (hoodie.keep.max.commits): the first commit of
    this table wrote partition 20's only file, which must stay in the snapshot."""
    register(spark)
    path = _unzip(ROOT / "sample_table/cow/v6_simplekeygen_nonhivestyle.zip", tmp_path)
    before = pa.Table.from_batches(hudi.HudiTable(path).read())
    _archive(path, "20240418172802262")
    ours = spark.read.format("hoodie").load(path).toArrow()
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    expected = _all_rows(before)
    assert _rows(ours, before.column_names, "_hoodie_record_key") == expected
    assert _all_rows(theirs) == expected  # hudi-rs agrees
    assert {r["id"]: r["_hoodie_partition_path"] for r in expected}[2] == "20"


def test_log_blocks_of_archived_delta_commits_still_merge(spark, tmp_path):
    """Both delta commits archived, a later one active: the base file and the log block (the
    update of id 1) come from archived instants and still make the snapshot."""
    register(spark)
    path = _unzip(ROOT / "sample_table/mor/parquet/v6_nonpartitioned.zip", tmp_path)
    before = pa.Table.from_batches(hudi.HudiTable(path).read())
    first, second, later = "20250117083125837", "20250117083136333", "20250117083200000"
    meta = Path(path, ".hoodie")
    # A later completed delta commit (the second's metadata without its write stats, which
    # name the second's files: only its name matters here).
    metadata = json.loads((meta / f"{second}.deltacommit").read_text())
    metadata["partitionToWriteStats"] = {}
    (meta / f"{later}.deltacommit").write_text(json.dumps(metadata))
    _archive(path, first, second)
    ours = spark.read.format("hoodie").load(path).toArrow()
    expected = _all_rows(before)
    assert _rows(ours, before.column_names, "_hoodie_record_key") == expected
    assert {r["id"]: r["isActive"] for r in expected}[1] is False  # the log block's update
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    assert _all_rows(theirs) == expected  # hudi-rs agrees


def test_logs_written_during_a_pending_compaction_join_the_previous_slice(spark, tmp_path):
    """A compaction scheduled between the two delta commits: the second one's log file names
    the compaction's instant as its base instant, though no base file exists for it until the
    compaction completes. Hudi merges such a slice with the one before it.

    hudi-rs 0.5 gets this wrong: it ignores the log file (id 1 keeps the first insert's
    isActive=true), so the expected rows are the table's own before the crafted change, which
    the .sql (INSERT 1-3; INSERT 1 with isActive=false, and 4) and hudi-rs agree on.
    """
    register(spark)
    path = _unzip(ROOT / "sample_table/mor/parquet/v6_nonpartitioned.zip", tmp_path)
    before = pa.Table.from_batches(hudi.HudiTable(path).read())
    first, compaction = "20250117083125837", "20250117083130000"
    log = Path(path, ".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43")
    log.rename(log.with_name(log.name.replace(first, compaction)))
    # ... as the delta commit that wrote it records it
    for commit in Path(path, ".hoodie").glob("*.deltacommit"):
        commit.write_text(commit.read_text().replace(log.name, log.name.replace(first, compaction)))
    Path(path, ".hoodie", f"{compaction}.compaction.requested").write_bytes(b"")

    def read(**options) -> list[dict]:
        table = spark.read.format("hoodie").options(**options).load(path).toArrow()
        return _rows(table, before.column_names, "_hoodie_record_key")

    expected = _all_rows(before)
    assert {r["id"]: r["isActive"] for r in expected} == {1: False, 2: False, 3: True, 4: True}
    assert read() == expected
    # Read-optimized: the base files (the slice before the compaction), nothing lost.
    base_only = _all_rows(
        pa.Table.from_batches(
            hudi.HudiTable(path).read(_rs_options().with_hudi_option(RS_READ_OPTIMIZED, "true"))
        )
    )
    assert [r["id"] for r in base_only] == [1, 2, 3, 4]
    assert read(**{QUERY_TYPE: "read_optimized"}) == base_only
    # hudi-rs's snapshot differs only in id 1, which it reads from the base file.
    theirs = _all_rows(pa.Table.from_batches(hudi.HudiTable(path).read()))
    assert theirs == base_only != expected


# -- partition pruning ----------------------------------------------------------------------------
@pytest.fixture
def pushdown(spark):
    key = "spark.sql.python.filterPushdown.enabled"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "true")
    yield
    if before is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, before)


def _slices_in(path: str, partition: str) -> int:
    return sum(1 for s in hudi.HudiTable(path).get_file_slices() if s.partition_path == partition)


def _assert_prunes(spark, path: str, column: str, value, partition: str):
    """The filtered read opens only the partition's file slices: with one slice per task (the
    byte cap below every slice turns packing off) its task count is their number."""
    reader = (
        spark.read.format("hoodie")
        .option("hoodie.read.filter.pushdown", "true")
        .option("hoodie.read.max.partition.bytes", "1")
    )
    everything = reader.load(path)
    filtered = everything.filter(everything[column] == value)
    total = sum(1 for _ in hudi.HudiTable(path).get_file_slices())
    wanted = _slices_in(path, partition)
    assert 0 < wanted < total
    assert everything.rdd.getNumPartitions() == total
    assert filtered.rdd.getNumPartitions() == wanted
    expected = pa.Table.from_batches(
        hudi.HudiTable(path).read(_rs_options().with_filters([(column, "=", str(value))]))
    )
    columns = [c for c in expected.column_names if c != "_hoodie_commit_seqno"] + [
        "_hoodie_commit_seqno"
    ]
    got = _rows(filtered.toArrow(), columns, "_hoodie_record_key")
    assert got == _rows(expected, columns, "_hoodie_record_key")
    assert got and {r[column] for r in got} == {value}
    return got


@pytest.mark.usefixtures("pushdown")
def test_partition_pruning_on_a_merge_on_read_fixture(spark, tmp_path):
    """Partition 10 holds a base file and a log file: pruning must keep the merge."""
    zip_path = ROOT / "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip"
    path = _unzip(zip_path, tmp_path)
    register(spark)
    rows = _assert_prunes(spark, path, "byteField", 10, "10")
    assert {(r["id"], r["isActive"]) for r in rows} == {(1, False), (3, True)}


@pytest.mark.usefixtures("pushdown")
def test_partition_pruning_on_a_table_with_several_file_groups_per_partition(spark, tmp_path):
    register(spark)
    path = str(tmp_path / "pruned")
    # A couple of records per base file (each stores in some 20-40 bytes), so partition A
    # gets several file groups.
    cfg = WriteConfig.build(
        "pruned",
        record_key="id",
        partition_path="dt",
        options={
            "hoodie.parquet.max.file.size": "60",
            "hoodie.parquet.small.file.limit": "0",
        },
    )
    table = HoodieTable.for_write(path, cfg)
    rows = [(i, f"n{i}", "A" if i <= 10 else "B") for i in range(1, 14)]
    table.upsert(spark.createDataFrame(rows, "id int, name string, dt string"), cfg)
    assert _slices_in(path, "A") >= 3
    got = _assert_prunes(spark, path, "dt", "A", "A")
    assert sorted(r["id"] for r in got) == list(range(1, 11))


# -- HoodieTable.read: the same rows by Spark's parquet reader --------------------------------
def test_table_read_matches_the_data_source(fx):
    """Apache Hudi's base files, scanned by Spark's own parquet reader where nothing is merged
    (the data source merging the other slices), read as our data source reads them (types,
    nulls, columns a file lacks): the snapshot, and for merge-on-read the read-optimized query
    (copy-on-write's is its snapshot)."""
    for query in ["snapshot", "read_optimized"] if fx.mor else ["snapshot"]:
        assert_table_read_agrees(fx.spark, fx.path, fx.key, **{QUERY_TYPE: query})

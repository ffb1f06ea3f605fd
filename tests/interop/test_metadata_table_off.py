"""A table with Apache Hudi's metadata table stays right for every reader after our actions.

Apache Hudi 1.x writes a metadata table (`.hoodie/metadata`, listed in
`hoodie.table.metadata.partitions`) and its readers, hudi-rs among them, list files through it.
We do not maintain it yet, so every action of ours that changes a table turns it off first, as
Apache Hudi does with `hoodie.metadata.enable=false`: the property cleared, then the folder
deleted (`hoodie/transaction/metadata_table.py`). After each action our reader and hudi-rs read
the same rows.

Tables:
- version 8: hudi-rs's trips table (merge-on-read; Apache Hudi 1.0 wrote it with a metadata
  table holding files, column stats, partition stats, the record index and a secondary index);
- version 6: no hudi-rs sample table has a metadata table, so hudi-rs's version 6 trips table
  gets one as Apache Hudi 0.x lays it out (the property, and `.hoodie/metadata` with its own
  `hoodie.properties` and `files` partition); hudi-rs reads metadata tables of version 8 and
  later only, Apache Hudi 0.x reads this one.

Where an action needs a history of our own first (a rollback, a restore, a clean), the metadata
table is put back (copied from the fixture, property and folder) before it: a stale metadata
table, as an Apache Hudi writer with it on would leave, which hudi-rs reads wrong until our
action turns it off.
"""

from __future__ import annotations

import copy
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rs_compare import assert_same_rows, read_ours, read_theirs, rows_of
from sample_tables import ROOT as SHARED_ROOT
from sample_tables import unzip

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.exceptions import InvalidConfigError
from hoodie.faults import CRASH_AT, SNAPSHOT_OF, SNAPSHOT_TO
from hoodie.read.datasource import register
from hoodie.read.options import ReadOptions
from hoodie.table_services.archival import archive
from hoodie.transaction.metadata_table import turn_off_metadata_table

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hudi-rs"
V8_TRIPS = FIXTURES / "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
V6_COW = SHARED_ROOT / "sample_table/cow/v6_simplekeygen_nonhivestyle.zip"
V6_TRIPS = SHARED_ROOT / "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip"
PROPERTIES = ".hoodie/hoodie.properties"
FOLDER = ".hoodie/metadata"
LISTED = (props.METADATA_PARTITIONS, props.METADATA_PARTITIONS_INFLIGHT)
COLUMNS = ["ts", "uuid", "rider", "driver", "fare", "city"]
# Inline services off: each test runs the one action it is about; the writers'
# `hoodie.metadata.enable=false` (unset, they keep a version 8 table's metadata table, and a
# version 6 table's: tests/interop/test_metadata_table_files.py).
QUIET = {
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
    "hoodie.compact.inline": "false",
    "hoodie.metadata.enable": "false",
}
RIDER_A = "334e26e9-8355-45cc-97c6-c31daf0df330"
LATER = 2_000_000_000_000  # ts of our updates: after the fixtures' (2023)
RIDER_C = "e96c4396-3fad-413a-a942-4cb36106d721"


def _stored(path: str) -> dict[str, str]:
    return props.loads(Path(path, PROPERTIES).read_text())


def _set_properties(path: str, updates: dict[str, str]) -> None:
    """Change `hoodie.properties` as another writer would (the checksum guards only the name)."""
    stored = _stored(path)
    stored.update(updates)
    Path(path, PROPERTIES).write_text(props.dumps(stored))


def _add_v6_metadata_table(path: str) -> None:
    """What Apache Hudi 0.x leaves with its metadata table on: the property listing `files`,
    and `.hoodie/metadata`, a merge-on-read table of its own with a `files` partition."""
    name = _stored(path)[props.TABLE_NAME]
    root = Path(path, FOLDER)
    (root / ".hoodie").mkdir(parents=True)
    metadata_props = {
        props.TABLE_NAME: f"{name}_metadata",
        props.TABLE_TYPE: props.MERGE_ON_READ,
        props.TABLE_VERSION: "6",
        props.TIMELINE_LAYOUT_VERSION: "1",
        props.BASE_FILE_FORMAT: "HFILE",
        props.RECORD_KEY_FIELDS: "key",
        props.POPULATE_META_FIELDS: "false",
    }
    (root / ".hoodie" / "hoodie.properties").write_text(props.dumps(metadata_props))
    (root / "files").mkdir()
    (root / "files" / ".hoodie_partition_metadata").write_text(
        "#partition metadata\ncommitTime=00000000000000\npartitionDepth=1\n"
    )
    (root / "files" / "files-0000_0-1-1_00000000000000.hfile").write_bytes(b"HFILE")
    _set_properties(path, {props.METADATA_PARTITIONS: "files",
                           props.METADATA_PARTITIONS_INFLIGHT: ""})  # fmt: skip


class TableCopy:
    """A copy of a trips table with a metadata table, and how to write it and check it."""

    def __init__(self, spark, zip_path: Path, tmp: Path):
        self.spark = spark
        self.path = str(unzip(zip_path, tmp))
        self.version6 = zip_path.name.startswith("v6")
        if self.version6:
            _add_v6_metadata_table(self.path)
        # What Apache Hudi left, to put back before an action that follows our own.
        self.stored = _stored(self.path)
        self.listed = {k: self.stored.get(k, "") for k in LISTED}
        self.saved = tmp / "metadata-table"
        shutil.copytree(Path(self.path, FOLDER), self.saved)
        self.table = HoodieTable.open(self.path)
        self.config = WriteConfig.build(
            self.table.name, "uuid", "city", "ts", table_type=props.MERGE_ON_READ,
            hive_style_partitioning=True, options=QUIET,
        )  # fmt: skip

    def at(self, path: str) -> TableCopy:
        """This table's copy at `path` (a crash's snapshot)."""
        other = copy.copy(self)
        other.path, other.table = path, HoodieTable.open(path)
        return other

    def put_back_metadata_table(self) -> None:
        shutil.rmtree(Path(self.path, FOLDER), ignore_errors=True)
        shutil.copytree(self.saved, Path(self.path, FOLDER))
        _set_properties(self.path, self.listed)

    def batch(self, rows: list[tuple]):
        return self.spark.createDataFrame(
            rows, "ts long, uuid string, rider string, driver string, fare double, city string"
        )

    def upsert(self, fare: float, n: int) -> None:
        """rider-A's fare updated (ordered after every stored version), and rider-<n> inserted
        in a new partition."""
        ts = LATER + n
        rows = [(ts, RIDER_A, "rider-A", "driver-K", fare, "san_francisco"),
                (ts, f"new-{n}", f"rider-{n}", "driver-Z", fare, f"lisbon_{n}")]  # fmt: skip
        self.table.upsert(self.batch(rows), self.config)

    def assert_turned_off(self, others_kept: bool = True) -> None:
        """The partitions cleared, every other key of Apache Hudi's kept; the folder gone."""
        stored = _stored(self.path)
        assert all(not stored.get(k) for k in LISTED), stored
        others = {k: v for k, v in self.stored.items() if k not in LISTED}
        if others_kept:
            assert {k: v for k, v in stored.items() if k not in LISTED} == others
        assert not Path(self.path, FOLDER).exists()
        assert not Path(self.path, ".hoodie/hoodie.properties.backup").exists()

    def rows(self) -> list[dict]:
        """Our rows, asserted equal to hudi-rs's. Version 6: the metadata table here is a
        layout only (its HFile is not one), which hudi-rs never reads (version 8 and later
        only); ours lists storage as hudi-rs does (through the metadata table, its default,
        the read fails on that HFile as damaged)."""
        options = {"hoodie.metadata.enable": "false"} if self.version6 else {}
        ours = read_ours(self.spark, self.path, **options)
        theirs = read_theirs(hudi.HudiTable(self.path))
        return assert_same_rows(self.path, "_hoodie_record_key", ours, theirs)

    def fares(self) -> dict[str, float]:
        return {r["rider"]: r["fare"] for r in self.rows()}


@pytest.fixture(params=[V8_TRIPS, V6_TRIPS], ids=["v8", "v6"])
def trips(request, spark, tmp_path) -> TableCopy:
    register(spark)
    return TableCopy(spark, request.param, tmp_path)


def test_an_upsert_turns_the_metadata_table_off_and_both_readers_see_it(trips, caplog):
    before = trips.fares()
    with caplog.at_level(logging.INFO, logger="hoodie.transaction.metadata_table"):
        trips.upsert(55.5, 1)
    trips.assert_turned_off()
    after = trips.fares()
    assert after == {**before, "rider-A": 55.5, "rider-1": 55.5}
    said = [r.getMessage() for r in caplog.records if "metadata" in r.getMessage()]
    assert len(said) == 1 and trips.table.name in said[0] and "deltacommit" in said[0], said
    assert "hoodie.metadata.enable=false" in said[0]


def test_a_delete_turns_it_off(trips):
    before = trips.fares()
    rows = [(2, RIDER_C, "rider-C", "driver-M", 0.0, "san_francisco")]
    trips.table.delete(trips.batch(rows), trips.config)
    trips.assert_turned_off()
    assert trips.fares() == {k: v for k, v in before.items() if k != "rider-C"}


def test_compaction_clean_rollback_and_restore_each_turn_it_off(trips):
    """One history, the metadata table put back (stale, as an Apache Hudi writer with it on
    would leave it) before each action."""
    savepointed = trips.fares()
    trips.table.services.savepoint()
    trips.assert_turned_off()
    trips.upsert(1.0, 10)
    trips.upsert(2.0, 11)
    latest = trips.fares()

    trips.put_back_metadata_table()
    trips.table.services.rollback(config=trips.config)
    trips.assert_turned_off()
    rolled_back = trips.fares()
    assert rolled_back == {k: v for k, v in latest.items() if k != "rider-11"} | {"rider-A": 1.0}

    trips.put_back_metadata_table()
    assert trips.table.services.compact(trips.spark, trips.config)
    trips.assert_turned_off()
    assert trips.fares() == rolled_back

    trips.put_back_metadata_table()
    cleaning = WriteConfig.build(
        trips.table.name, "uuid", "city", "ts", table_type=props.MERGE_ON_READ,
        hive_style_partitioning=True,
        options={**QUIET, "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                 "hoodie.cleaner.fileversions.retained": "1"},
    )  # fmt: skip
    assert trips.table.services.clean(cleaning) is not None
    trips.assert_turned_off()
    assert trips.fares() == rolled_back

    trips.put_back_metadata_table()
    trips.table.services.restore(trips.table.savepoints()[0], trips.config)
    trips.assert_turned_off()
    assert trips.fares() == savepointed


def test_our_reader_lists_through_the_metadata_table_the_property_announces(trips, tmp_path):
    """The property without the folder: a read through the metadata table (the readers'
    default) fails naming the missing file and `hoodie.metadata.enable=false`, which lists
    storage; the folder without the property: our reader lists storage (hudi-rs, given the
    property, would look for the folder)."""
    expected = trips.rows()  # both readers, the metadata table intact
    shutil.rmtree(Path(trips.path, FOLDER))
    with pytest.raises(Exception, match="is missing.*hoodie.metadata.enable=false"):
        read_ours(trips.spark, trips.path)
    ours = read_ours(trips.spark, trips.path, **{"hoodie.metadata.enable": "false"})
    assert rows_of(ours, list(expected[0]), "_hoodie_record_key") == expected
    trips.put_back_metadata_table()
    _set_properties(trips.path, {k: "" for k in LISTED})
    ours = read_ours(trips.spark, trips.path)
    assert rows_of(ours, list(expected[0]), "_hoodie_record_key") == expected
    assert trips.rows() == expected


def test_hoodie_metadata_enable_is_true_for_readers_and_false_for_writers():
    """(Writers honour theirs: tests/interop/test_metadata_table_files.py; readers':
    tests/unit/test_metadata_listing.py.)"""
    off = WriteConfig.build("t", "id", options={"hoodie.metadata.enable": "false"})
    assert not off.metadata_table
    assert not WriteConfig.build("t", "id").metadata_table
    assert ReadOptions.parse({}).metadata_enable
    assert not ReadOptions.parse({"hoodie.metadata.enable": "False"}).metadata_enable
    with pytest.raises(InvalidConfigError, match=r"'hoodie\.metadata\.enable'"):
        ReadOptions.parse({"hoodie.metadata.enable": "maybe"})


def test_a_crash_between_the_property_and_the_folder_reads_right_and_the_next_action_ends_it(
    spark, tmp_path, caplog
):
    """A savepoint (no Spark job: a quick child process) copies the table at every crash point
    it passes: the `hoodie.properties` rewrite's two and ours between property and folder. Each
    copy is read right by both readers; the next action on the last one deletes the folder."""
    register(spark)
    trips = TableCopy(spark, V8_TRIPS, tmp_path / "table")
    expected = trips.rows()
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    env = {**os.environ, SNAPSHOT_TO: str(snapshots), SNAPSHOT_OF: trips.path}
    env.pop(CRASH_AT, None)
    code = f"from hoodie import HoodieTable; HoodieTable.open({trips.path!r}).services.savepoint()"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    points = ["properties.backed_up", "properties.written", "metadata_table.property_cleared"]
    assert set(points) <= {p.name for p in snapshots.iterdir()}
    for point in points:
        copy = str(snapshots / point / "table")
        ours = read_ours(spark, copy)
        theirs = read_theirs(hudi.HudiTable(copy))
        assert assert_same_rows(point, "_hoodie_record_key", ours, theirs) == expected, point
    crashed = trips.at(str(snapshots / "metadata_table.property_cleared" / "table"))
    assert Path(crashed.path, FOLDER).exists()
    assert all(not _stored(crashed.path).get(k) for k in LISTED)
    with caplog.at_level(logging.INFO, logger="hoodie.transaction.metadata_table"):
        crashed.table.services.savepoint()
    crashed.assert_turned_off()
    assert any("stopped before deleting the folder" in r.getMessage() for r in caplog.records)
    assert crashed.rows() == expected


def test_archival_turns_it_off(spark, tmp_path):
    register(spark)
    trips = TableCopy(spark, V8_TRIPS, tmp_path)
    expected = trips.rows()
    assert archive(trips.table.meta_client, keep_min=1, keep_max=2, max_delta_commits=None)
    trips.assert_turned_off()
    assert trips.rows() == expected


def test_the_upgrade_to_version_8_lists_no_metadata_table(spark, tmp_path):
    """hudi-rs reads metadata tables of version 8 tables: had the upgraded `hoodie.properties`
    kept listing the version 6 one, it would read through it. The writers' default keeps a
    version 6 table's metadata table, and the upgrade carries one that reads
    (tests/interop/test_metadata_table_services.py); this one does not (its HFile is not
    one), so it is turned off, and the upgrade goes on."""
    register(spark)
    table = TableCopy(spark, V6_COW, tmp_path)
    expected = table.rows()
    table.table.services.upgrade()
    assert _stored(table.path)[props.TABLE_VERSION] == "8"
    table.assert_turned_off(others_kept=False)
    assert table.rows() == expected


def test_a_listed_metadata_table_without_its_folder_is_cleared_too(tmp_path, caplog):
    path = str(unzip(V8_TRIPS, tmp_path))
    shutil.rmtree(Path(path, FOLDER))
    table = HoodieTable.open(path)
    with caplog.at_level(logging.INFO, logger="hoodie.transaction.metadata_table"):
        turn_off_metadata_table(table.meta_client, "test")
    assert all(not _stored(path).get(k) for k in LISTED)
    assert not table.meta_client.properties.extra.get(props.METADATA_PARTITIONS)
    (said,) = [r.getMessage() for r in caplog.records]
    assert "(already gone)" in said and "files" in said

"""Fault injection in the upgrade from table version 6 to 8 (`HoodieTable.upgrade`).

The source is a version 6 merge-on-read table with a history worth moving: compacted delta
commits (older slices keep their log files), a savepoint, a clean, instants archived into
`.hoodie/archived/`. A child process upgrades a copy and is killed with SIGKILL at each crash
point of the three steps (build the layout 2 timeline beside layout 1; switch
`hoodie.properties`; remove layout 1). Then, in this process:
- readers (ours and hudi-rs) see the whole table, as version 6 before the switch and as
  version 8 after it, with the same rows at every instant;
- the next upgrade finishes, and the table is the one an uninterrupted upgrade makes: the same
  timeline files, the same LSM history, nothing of layout 1 left, no properties backup.
A torn `hoodie.properties` (a file system without atomic replace) reads as its backup.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from crash_support import MOR, assert_killed, hudi_rs, run_child, snapshot
from listing_compare import assert_reads_list_alike
from tests_support import SCHEMA, write_config

from hoodie import HoodieTable
from hoodie.meta_client import PROPERTIES_BACKUP, PROPERTIES_FILE
from hoodie.read.planner import readable_range
from hoodie.timeline import LAYOUT_V2

pytestmark = pytest.mark.slow

VERSION_6 = {
    "hoodie.write.table.version": "6",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.cleaner.commits.retained": "2",
}
ROWS = [
    [(i, f"n{i}", ("2024-01-01", "2024-01-02")[i % 2], 1, False) for i in range(1, 7)],
    [(1, "n1-v2", "2024-01-02", 2, False), (2, "n2-v2", "2024-01-01", 2, False)],
    [(3, "n3-v3", "2024-01-02", 3, False), (2, None, "2024-01-01", 3, True)],
    [(7, "n7", "2024-01-03", 4, False), (4, "n4-v4", "2024-01-01", 4, False)],
]
PLAN = {"action": "upgrade", "table_type": MOR, "options": VERSION_6}
BEFORE_SWITCH = ["upgrade.instant_copied", "upgrade.timeline_built", "properties.backed_up"]
AFTER_SWITCH = ["properties.written", "upgrade.switched", "upgrade.layout_1_file_removed"]


@pytest.fixture(scope="module")
def source(spark, tmp_path_factory):
    """The version 6 table, its readable write instants and the rows at each."""
    path = tmp_path_factory.mktemp("upgrade-source") / "table"
    config = write_config(MOR, options=VERSION_6)
    table = HoodieTable.for_write(str(path), config)
    for step, rows in enumerate(ROWS):
        table.upsert(spark.createDataFrame(rows, SCHEMA), config)
        if step == 1:
            table.services.savepoint()
        if step % 2:
            table.services.compact(spark, config)  # the latest slices end with base files
    table.services.clean(config)
    table.services.archive(config)
    assert table.properties.table_version == 6
    assert table.meta_client.archived_instants(), "something to move to the LSM timeline"
    first, _ = readable_range(table.meta_client)
    writes = [t for t in table.timeline().completed.write_timeline.timestamps() if t >= first]
    rows = {t: snapshot(spark, str(path), **{"as.of.instant": t}) for t in writes}
    return path, rows


@pytest.fixture(scope="module")
def reference(source, tmp_path_factory):
    """The table an uninterrupted upgrade makes (copies keep modification times, so the
    completion times match)."""
    path = tmp_path_factory.mktemp("upgrade-reference") / "table"
    shutil.copytree(source[0], path)
    HoodieTable.open(str(path)).services.upgrade(None)
    return path


def timeline_files(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in (path / LAYOUT_V2.folder).rglob("*"))


def assert_reads(spark, path: Path, rows: dict) -> None:
    """The rows at every instant (ours), and the latest in hudi-rs."""
    for instant, expected in rows.items():
        assert snapshot(spark, str(path), **{"as.of.instant": instant}) == expected, instant
    latest = rows[max(rows)]
    assert snapshot(spark, str(path)) == latest
    assert hudi_rs(str(path)) == latest


@pytest.mark.parametrize("point", BEFORE_SWITCH + AFTER_SWITCH)
def test_upgrade_crash(spark, source, reference, tmp_path, point):
    path = tmp_path / "table"
    shutil.copytree(source[0], path)
    child = run_child(str(path), PLAN, point, tmp_path)
    assert_killed(child, point)
    crashed = HoodieTable.open(str(path))
    assert crashed.properties.table_version == (6 if point in BEFORE_SWITCH else 8)
    assert_reads(spark, path, source[1])

    result = crashed.services.upgrade(None)  # finishes (or redoes) it
    assert result.to_version == 8 and crashed.properties.table_version == 8
    latest = source[1][max(source[1])]
    assert snapshot(spark, str(path)) == latest and hudi_rs(str(path)) == latest
    # The uninterrupted upgrade's table, file for file (so it reads as that one at every
    # instant: the data files are the source's in both).
    assert timeline_files(path) == timeline_files(reference)
    assert sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file()) == [
        "hoodie.properties"
    ]
    assert not (path / ".hoodie" / "archived").exists()
    assert [(i.timestamp, i.action, i.completion_time) for i in crashed.timeline()] == [
        (i.timestamp, i.action, i.completion_time)
        for i in HoodieTable.open(str(reference)).timeline()
    ]


def test_a_torn_properties_file_reads_as_its_backup(spark, source, tmp_path):
    """Where replacing a file is not atomic, a crash can leave `hoodie.properties` cut short
    while the backup is whole: readers take the backup, and the upgrade runs again from it."""
    path = tmp_path / "table"
    shutil.copytree(source[0], path)
    child = run_child(str(path), PLAN, "properties.written", tmp_path)
    assert_killed(child, "properties.written")
    written = (path / PROPERTIES_FILE).read_bytes()
    cut = len(written) // 2
    if written[cut - 1 : cut] == b"\n":
        cut -= 1  # end inside a line
    (path / PROPERTIES_FILE).write_bytes(written[:cut])
    assert (path / PROPERTIES_BACKUP).exists()
    table = HoodieTable.open(str(path))
    assert table.properties.table_version == 6  # the backup's
    assert snapshot(spark, str(path)) == source[1][max(source[1])]

    table.services.upgrade(None)
    assert HoodieTable.open(str(path)).properties.table_version == 8
    assert not (path / PROPERTIES_BACKUP).exists()
    assert_reads(spark, path, source[1])


MDT_OPTIONS = {**VERSION_6, "hoodie.metadata.enable": "true"}


@pytest.fixture(scope="module")
def mdt_source(spark, tmp_path_factory):
    """A version 6 merge-on-read table with a metadata table, its logs compacted."""
    path = tmp_path_factory.mktemp("upgrade-mdt-source") / "table"
    config = write_config(MOR, options=MDT_OPTIONS)
    table = HoodieTable.for_write(str(path), config)
    for rows in ROWS[:2]:
        table.upsert(spark.createDataFrame(rows, SCHEMA), config)
    table.services.compact(spark, config)
    assert HoodieTable.open(str(path)).meta_client.table_metadata() is not None
    return path, snapshot(spark, str(path))


@pytest.mark.parametrize("point", ["upgrade.metadata_table_switched", "upgrade.timeline_built"])
def test_upgrade_crash_with_a_metadata_table(spark, mdt_source, tmp_path, point):
    """Killed once the metadata table is upgraded (and hidden from readers), before the data
    table switched: a version 6 table every reader reads by listing storage; the next upgrade
    turns the half-upgraded metadata table off and finishes, and the next write builds it."""
    path = tmp_path / "table"
    shutil.copytree(mdt_source[0], path)
    plan = {**PLAN, "options": MDT_OPTIONS}
    child = run_child(str(path), plan, point, tmp_path)
    assert_killed(child, point)
    crashed = HoodieTable.open(str(path))
    assert crashed.properties.table_version == 6
    assert crashed.meta_client.table_metadata() is None  # being built: listed as inflight
    assert snapshot(spark, str(path)) == mdt_source[1] == hudi_rs(str(path))

    config = write_config(MOR, options={**MDT_OPTIONS, "hoodie.write.table.version": "8"})
    crashed.services.upgrade(None, config)
    upgraded = HoodieTable.open(str(path))
    assert upgraded.properties.table_version == 8
    assert snapshot(spark, str(path)) == mdt_source[1] == hudi_rs(str(path))
    upgraded.upsert(spark.createDataFrame(ROWS[2], SCHEMA), config)
    metadata = HoodieTable.open(str(path)).meta_client.table_metadata()
    assert metadata is not None, "the next write built no metadata table"
    assert_reads_list_alike(HoodieTable.open(str(path)).meta_client, f"after {point}")
    assert snapshot(spark, str(path)) == hudi_rs(str(path))

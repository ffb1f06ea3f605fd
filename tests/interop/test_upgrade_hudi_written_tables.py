"""Upgrading tables Apache Hudi 0.x wrote (every version 6 table of the hudi-rs sample
fixtures) to table version 8: they read the same afterwards, at every instant, in our reader
and in hudi-rs.

Their history is not ours: JSON commit metadata with every field Hudi writes, log files with
command blocks (a rolled-back delta commit), a table without meta fields, empty tables, and
file times from unzipping (all later than every instant, so each completion time is clamped
to just before the next instant). A merge-on-read table's log files are compacted first.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from rs_compare import assert_same_rows, read_ours, read_theirs
from sample_tables import ROOT, unzip

from hoodie import HoodieTable
from hoodie import properties as P
from hoodie.read.datasource import register
from hoodie.read.planner import readable_range

hudi = pytest.importorskip("hudi")

pytestmark = pytest.mark.spark

ZIPS = sorted(ROOT.rglob("*.zip"))


def _id(zip_path: Path) -> str:
    return str(zip_path.relative_to(ROOT).with_suffix(""))


def _without_file_names(table: pa.Table | None) -> pa.Table | None:
    """A compaction moves rows to new files: compare everything but where they are."""
    if table is None:
        return None
    return table.select([c for c in table.column_names if c != "_hoodie_file_name"])


@pytest.mark.parametrize("zip_path", ZIPS, ids=_id)
def test_a_table_apache_hudi_wrote_reads_the_same_after_the_upgrade(spark, tmp_path, zip_path):
    """hudi-rs reads the upgraded table at every instant as it read the version 6 one, and we
    read it as hudi-rs does (test_read_fixtures.py shows we agree on the version 6 tables)."""
    register(spark)
    path = str(unzip(zip_path, tmp_path))
    table = HoodieTable.open(path)
    assert table.properties.table_version == 6
    key = "_hoodie_record_key" if table.properties.populate_meta_fields else (
        table.properties.record_key_fields[0]
    )  # fmt: skip
    writes = table.timeline().completed.write_timeline.timestamps()
    if writes:
        first, _ = readable_range(table.meta_client)
        writes = [t for t in writes if t >= first]

    def theirs(instant: str | None = None) -> pa.Table | None:
        options = hudi.HudiReadOptions()
        if instant is not None:
            options = options.with_as_of_timestamp(instant)
        return read_theirs(hudi.HudiTable(path), options)

    before = {t: theirs(t) for t in writes}
    snapshot = theirs()

    result = table.services.upgrade(spark)
    assert (result.from_version, result.to_version) == (6, 8)
    props = P.loads((Path(path) / ".hoodie" / "hoodie.properties").read_text())
    assert (props[P.TABLE_VERSION], props[P.INITIAL_VERSION]) == ("8", "6")
    completed = table.timeline().completed.instants
    for instant, following in zip(completed, completed[1:]):
        assert instant.timestamp <= instant.completion_time
        if instant.timestamp != following.timestamp:
            assert instant.completion_time < following.timestamp

    ours = read_ours(spark, path)
    assert_same_rows(_id(zip_path), key, ours, theirs())
    if snapshot is not None:  # the compaction moved rows to other files, nothing else
        assert_same_rows("before", key, _without_file_names(ours), _without_file_names(snapshot))
    for instant, rows in before.items():
        ours = read_ours(spark, path, **{"as.of.instant": instant})
        assert_same_rows(f"as of {instant}", key, ours, theirs(instant))
        if rows is not None:
            assert_same_rows(f"as of {instant}, before", key, ours, rows)

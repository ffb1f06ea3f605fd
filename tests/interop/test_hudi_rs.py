"""Interoperability with hudi-rs (the `hudi` package): it reads what we write, and we pick the
same files as it does in tables Apache Hudi wrote."""

from __future__ import annotations

import posixpath
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from sample_tables import ROOT, unzip

from hoodie import HoodieTable, WriteConfig
from hoodie.schema import META_COLUMNS

hudi = pytest.importorskip("hudi")

FIXTURES = ROOT / "sample_table" / "cow"
META = list(META_COLUMNS)
A, B, C = "2024-01-01", "2024-01-02", "2024-01-03"
SCHEMA = "id int, kind string, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
COLUMNS = ["id", "kind", "name", "dt", "ts", "_hoodie_is_deleted"]
FIRST = [
    (1, "x", "n1", A, 1, False),
    (2, "x", "n2", A, 1, False),
    (3, "y", "n3", B, 1, False),
    (4, "y", "n4", B, 1, False),
]
SECOND = [
    (1, "x", "n1-up", A, 2, False),  # update
    (3, "y", "n3", B, 2, True),  # delete
    (4, "y", "n4-up", B, 2, False),  # update
    (5, "z", "n5", A, 2, False),  # insert into an existing partition
    (6, "z", "n6", C, 2, False),  # insert into a new partition
]
LAYOUTS = {
    "partitioned": dict(record_key="id", partition_path="dt", precombine_field="ts"),
    "non_partitioned": dict(record_key="id", partition_path=None, precombine_field="ts"),
    "complex_key": dict(record_key=["id", "kind"], partition_path="dt", precombine_field=None),
}


def _key(layout: str, row: dict) -> str:
    if layout == "complex_key":
        return f"id:{row['id']},kind:{row['kind']}"
    return str(row["id"])


def _expected(layout: str, batches) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for batch in batches:
        for values in batch:
            row = dict(zip(COLUMNS, values))
            if row["_hoodie_is_deleted"]:
                rows.pop(_key(layout, row), None)
            else:
                rows[_key(layout, row)] = row
    return rows


def _sorted_rows(rows) -> list[dict]:
    return sorted(rows, key=lambda r: (r["id"], r["kind"]))


def _hudi_rs_rows(path: str, options=None) -> pa.Table:
    batches = hudi.HudiTable(path).read(options)
    return pa.Table.from_batches(batches) if batches else pa.table({})


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def written(request, spark, tmp_path_factory):
    layout = request.param
    path = str(tmp_path_factory.mktemp(layout) / layout)
    cfg = WriteConfig.build(f"interop_{layout}", **LAYOUTS[layout])
    table = HoodieTable.for_write(path, cfg)
    first = table.upsert(spark.createDataFrame(FIRST, SCHEMA), cfg)
    second = table.upsert(spark.createDataFrame(SECOND, SCHEMA), cfg)
    assert (second.num_updates, second.num_inserts, second.num_deletes) == (2, 2, 1)
    ours = [r.asDict() for r in table.read(spark).collect()]
    return SimpleNamespace(
        layout=layout, path=path, table=table, instants=[first.instant, second.instant], ours=ours
    )


@pytest.mark.spark
def test_hudi_rs_reads_latest_snapshot(written):
    got = _hudi_rs_rows(written.path)
    expected = _expected(written.layout, [FIRST, SECOND])
    assert got.num_rows == len(expected)
    assert set(got.column("_hoodie_record_key").to_pylist()) == set(expected)
    assert _sorted_rows(got.select(COLUMNS).to_pylist()) == _sorted_rows(expected.values())
    # Meta columns too: hudi-rs and our reader return the very same rows.
    assert _sorted_rows(got.select(META + COLUMNS).to_pylist()) == _sorted_rows(written.ours)


@pytest.mark.spark
def test_hudi_rs_time_travel_to_first_commit(written):
    options = hudi.HudiReadOptions().with_as_of_timestamp(written.instants[0])
    got = _hudi_rs_rows(written.path, options)
    expected = _expected(written.layout, [FIRST])
    assert set(got.column("_hoodie_record_key").to_pylist()) == set(expected)
    assert _sorted_rows(got.select(COLUMNS).to_pylist()) == _sorted_rows(expected.values())
    assert set(got.column("_hoodie_commit_time").to_pylist()) == {written.instants[0]}


@pytest.mark.spark
def test_hudi_rs_sees_our_table_metadata(written):
    table = hudi.HudiTable(written.path)
    assert table.table_type == "COPY_ON_WRITE"
    assert table.get_schema().names == COLUMNS
    assert table.get_schema_with_meta_fields().names == META + COLUMNS
    timeline = table.get_timeline()
    assert timeline.get_latest_commit_timestamp() == written.instants[-1]
    assert [i.timestamp for i in timeline.get_completed_commits()] == written.instants
    partitions = table.get_partition_schema().names
    assert partitions == ([] if written.layout == "non_partitioned" else ["dt"])
    slices = {s.base_file_relative_path() for s in table.get_file_slices()}
    ours = {f.relative_path for f in written.table.file_system_view().latest_base_files()}
    assert slices == ours


# -- tables written by Apache Hudi ---------------------------------------------------------------
def _unzip(zip_path: Path, target: Path) -> str:
    return str(unzip(zip_path, target))


@pytest.mark.parametrize("zip_path", sorted(FIXTURES.glob("*.zip")), ids=lambda p: p.stem)
def test_same_base_files_as_hudi_rs_on_hudi_written_tables(zip_path, tmp_path):
    path = _unzip(zip_path, tmp_path)
    theirs = hudi.HudiTable(path)
    rows = _hudi_rs_rows(path)
    slices = theirs.get_file_slices()
    picked = {s.base_file_relative_path() for s in slices}
    latest = HoodieTable.open(path).file_system_view().latest_base_files()
    assert {f.relative_path for f in latest} == picked
    assert {(f.partition_path, f.file_id, f.instant) for f in latest} == {
        (s.partition_path, s.file_id, s.creation_instant_time) for s in slices
    }
    assert not any(s.has_log_files() for s in slices)
    if zip_path.stem == "v6_empty":
        assert rows.num_rows == 0 and not latest
    else:
        # The tables' SQL inserts ids 1-3, then updates 1 and inserts 4.
        assert sorted(rows.column("id").to_pylist()) == [1, 2, 3, 4]
        if "_hoodie_file_name" in rows.column_names:  # not with populate.meta.fields=false
            names = {posixpath.basename(p) for p in picked}
            assert set(rows.column("_hoodie_file_name").to_pylist()) <= names

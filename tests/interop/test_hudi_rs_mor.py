"""hudi-rs (the `hudi` package) reads our merge-on-read tables: after 1, 3 and 6 delta commits
and after compaction, its snapshot equals the expected rows and ours, and its read-optimized
result equals the content of the latest base files."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie import HoodieTable, WriteConfig
from hoodie.properties import MERGE_ON_READ
from hoodie.read.datasource import register

hudi = pytest.importorskip("hudi")

A, B, C = "2024-01-01", "2024-01-02", "2024-01-03"
SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
RS_READ_OPTIMIZED = "hoodie.read.use.read_optimized.mode"

# Six delta commits: ("upsert", rows) or ("delete", ids). Rows: (id, name, dt, ts, deleted).
BATCHES = [
    ("upsert", [(i, f"n{i}", (A, B, C)[i % 3], 1, False) for i in range(1, 13)]),
    ("upsert", [(1, "n1-u2", B, 2, False), (2, "n2-u2", C, 2, False), (13, "n13", A, 2, False)]),
    ("delete", [(3, A), (4, B)]),
    ("upsert", [(1, "n1-stale", B, 1, False), (5, "n5-u4", C, 4, False), (6, None, A, 4, True)]),
    ("upsert", [(3, "n3-back", A, 5, False), (7, "n7-u5", B, 5, False), (14, "n14", B, 5, False)]),
    ("upsert", [(7, "n7-u6", B, 6, False), (8, None, C, 6, True), (2, "n2-u6", C, 6, False)]),
]
CHECKPOINTS = (1, 3, 6)


def _apply(expected: dict, batch) -> None:
    kind, rows = batch
    if kind == "delete":
        for key, _dt in rows:
            expected.pop(key, None)
        return
    for key, name, _dt, ts, deleted in rows:
        stored = expected.get(key)
        if stored is not None and ts < stored[1]:
            continue  # an older version loses to the stored one (precombine field ts)
        if deleted:
            expected.pop(key, None)
        else:
            expected[key] = (name, ts)


def _by_id(table: pa.Table) -> dict:
    assert table.num_rows == len(set(table["id"].to_pylist())), "duplicate keys"
    return dict(zip(table["id"].to_pylist(), zip(table["name"].to_pylist(),
                                                  table["ts"].to_pylist())))  # fmt: skip


def _theirs(path: str, read_optimized: bool = False) -> dict:
    options = hudi.HudiReadOptions()
    if read_optimized:
        options = options.with_hudi_option(RS_READ_OPTIMIZED, "true")
    batches = hudi.HudiTable(path).read(options)
    return _by_id(pa.Table.from_batches(batches)) if batches else {}


def _ours(spark, path: str, read_optimized: bool = False) -> dict:
    reader = spark.read.format("hoodie")
    if read_optimized:
        reader = reader.option("hoodie.datasource.query.type", "read_optimized")
    rows = reader.load(path).select("id", "name", "ts").collect()
    return _by_id(pa.table({"id": [r.id for r in rows], "name": [r.name for r in rows],
                            "ts": [r.ts for r in rows]}))  # fmt: skip


def _latest_base_files(path: str) -> dict:
    slices = hudi.HudiTable(path).get_file_slices(
        hudi.HudiReadOptions().with_hudi_option(RS_READ_OPTIMIZED, "true")
    )
    files = [s.base_file_relative_path() for s in slices if s.base_file_name]
    tables = [pq.read_table(os.path.join(path, f), columns=["id", "name", "ts"]) for f in files]
    return _by_id(pa.concat_tables(tables)) if tables else {}


@pytest.fixture(scope="module")
def mor(spark, tmp_path_factory):
    register(spark)
    path = str(tmp_path_factory.mktemp("mor_interop") / "trips")
    cfg = WriteConfig.build(
        "trips",
        record_key="id",
        partition_path="dt",
        precombine_field="ts",
        table_type=MERGE_ON_READ,
        options={"hoodie.compact.inline": "false"},
    )
    table = HoodieTable.for_write(path, cfg)
    expected: dict = {}
    states = {}
    for number, batch in enumerate(BATCHES, start=1):
        kind, rows = batch
        if kind == "delete":
            table.delete(spark.createDataFrame(rows, "id int, dt string"), cfg)
        else:
            table.upsert(spark.createDataFrame(rows, SCHEMA), cfg)
        _apply(expected, batch)
        if number in CHECKPOINTS:
            states[number] = SimpleNamespace(
                expected=dict(expected),
                theirs=_theirs(path),
                ours=_ours(spark, path),
                theirs_ro=_theirs(path, read_optimized=True),
                ours_ro=_ours(spark, path, read_optimized=True),
                base_files=_latest_base_files(path),
            )
    (compaction,) = table.services.compact(spark)
    states["compacted"] = SimpleNamespace(
        expected=dict(expected),
        theirs=_theirs(path),
        ours=_ours(spark, path),
        theirs_ro=_theirs(path, read_optimized=True),
        ours_ro=_ours(spark, path, read_optimized=True),
        base_files=_latest_base_files(path),
    )
    return SimpleNamespace(path=path, states=states, compaction=compaction)


@pytest.mark.parametrize("state", [*CHECKPOINTS, "compacted"])
def test_hudi_rs_snapshot_equals_expected_rows(mor, state):
    got = mor.states[state]
    assert got.theirs == got.expected
    assert got.ours == got.expected


@pytest.mark.parametrize("state", [*CHECKPOINTS, "compacted"])
def test_hudi_rs_read_optimized_equals_base_files(mor, state):
    got = mor.states[state]
    assert got.theirs_ro == got.base_files
    assert got.ours_ro == got.base_files


def test_logs_were_merged_before_compaction(mor):
    # The checks above are only meaningful if logs held changes the base files lacked.
    assert mor.states[6].base_files != mor.states[6].expected
    assert mor.states["compacted"].base_files == mor.states["compacted"].expected
    assert mor.compaction.files_written == len(
        {s.file_id for s in mor.compaction.metadata.write_stats()}
    )

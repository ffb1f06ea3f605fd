"""Readers running while a writer commits see whole snapshots only, never a partial write."""

from __future__ import annotations

import json
import operator
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from listing_compare import (
    assert_indexes_whole,
    assert_metadata_table_whole,
    assert_reads_list_alike,
)

from hoodie import HoodieTable, WriteConfig
from hoodie.read.datasource import register

pytestmark = pytest.mark.slow

WRITER = Path(__file__).with_name("concurrent_writer.py")
ROUNDS = 3


def _state(rounds_done: int) -> dict:
    """The table after the writer's first `rounds_done` rounds (see concurrent_writer.py)."""
    state = {0: "initial"}
    for r in range(rounds_done):
        state[1000 + r] = f"w0r{r}"  # writer 0's own key is 1000 * (0 + 1) + r
        state[0] = f"w0r{r}"
    return state


def mdt(version: int | str | None) -> dict[str, str]:
    """None: the table version 6 default (no metadata table); else that table version, the
    metadata table kept by the writer, and read through by our reader and hudi-rs (version 8);
    "<version>-indexes": its column_stats and bloom_filters partitions too."""
    if version is None:
        return {}
    options = {"hoodie.write.table.version": str(version)[0], "hoodie.metadata.enable": "true"}
    if str(version).endswith("-indexes"):
        options.update({"hoodie.metadata.index.column.stats.enable": "true",
                        "hoodie.metadata.index.bloom.filter.enable": "true"})  # fmt: skip
    return options


WITH_MDT = [None, 8, pytest.param(6, marks=pytest.mark.writers)]
# Merge-on-read: the writer's commits add log files that readers must merge or ignore. With the
# indexes (make test-writers; in make test, readers filter among concurrent writers in
# test_concurrent_writers.py), each read is also filtered, data skipping by them, and
# copy-on-write too: its new base files are what skipping decides on.
MOR, COW = "MERGE_ON_READ", "COPY_ON_WRITE"
CASES = [
    pytest.param(MOR, None, id="no-mdt", marks=pytest.mark.writers),
    pytest.param(MOR, 8, id="mdt8"),
    pytest.param(MOR, 6, id="mdt6", marks=pytest.mark.writers),
    *(pytest.param(t, v, id=f"{name}-mdt{v}", marks=pytest.mark.writers)
      for t, name in ((MOR, "mor"), (COW, "cow")) for v in ("8-indexes", "6-indexes")),
]  # fmt: skip
# The filtered reads: the writer's own keys (bloom filters, key ranges), the shared row.
FILTERS = [[("id", "=", 1001)], [("id", ">=", 1002)], [("value", "=", "initial")]]


@pytest.mark.parametrize("table_type, version", CASES)
def test_readers_see_whole_snapshots_during_writes(spark, tmp_path, table_type, version):
    register(spark)
    path = str(tmp_path / "table")
    cfg = WriteConfig.build(
        "concurrent", record_key="id", partition_path="p", precombine_field="ts",
        table_type=table_type, options=mdt(version),
    )  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    schema = "id int, value string, p string, ts bigint"
    table.upsert(spark.createDataFrame([(0, "initial", "shared", 0)], schema), cfg)
    valid = [_state(k) for k in range(ROUNDS + 1)]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, HOODIE_WRITER_TABLE_TYPE=table_type,
               HOODIE_WRITER_OPTIONS=json.dumps(mdt(version)))  # fmt: skip
    out = tmp_path / "writer.json"
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), path, "0", str(ROUNDS), str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    hudi = pytest.importorskip("hudi")
    seen = []
    while writer.poll() is None:
        rows = spark.read.format("hoodie").load(path).select("id", "value").collect()
        ours = {r.id: r.value for r in rows}
        assert len(ours) == len(rows), "duplicate keys"
        assert ours in valid, f"a read saw a state no commit produced: {ours}"
        batches = hudi.HudiTable(path).read()
        theirs = pa.Table.from_batches(batches)
        theirs = dict(zip(theirs["id"].to_pylist(), theirs["value"].to_pylist()))
        assert theirs in valid, f"hudi-rs saw a state no commit produced: {theirs}"
        seen.append(valid.index(ours))
        if "indexes" in str(version):  # filtered, data skipping by the indexes
            filters = FILTERS[len(seen) % len(FILTERS)]
            reader = HoodieTable.open(path)
            rows = reader.read(spark, filters=filters).select("id", "value").collect()
            found = {r.id: r.value for r in rows}
            assert found in [_filtered(state, filters) for state in valid], (filters, found)
    _, stderr = writer.communicate()
    assert writer.returncode == 0, stderr[-3000:]
    assert all("instant" in r for r in json.loads(out.read_text()))
    final = {r.id: r.value for r in spark.read.format("hoodie").load(path).collect()}
    assert final == valid[-1]
    # The reads overlapped the writes: they saw more than one snapshot.
    assert len(set(seen)) > 1, seen
    if version is not None:
        assert_metadata_table_whole(table.meta_client)
        assert_reads_list_alike(table.meta_client)
    if "indexes" in str(version):
        assert_indexes_whole(table.meta_client)
        for filters in FILTERS:
            rows = table.read(spark, filters=filters).select("id", "value").collect()
            assert {r.id: r.value for r in rows} == _filtered(valid[-1], filters), filters


def _filtered(state: dict, filters: list) -> dict:
    """The rows of `state` (id -> value) that `filters` (an AND of = and >=) match."""
    compare = {"=": operator.eq, ">=": operator.ge}
    return {
        key: value for key, value in state.items()
        if all(compare[op]({"id": key, "value": value}[column], bound)
               for column, op, bound in filters)
    }  # fmt: skip


@pytest.mark.parametrize("version", WITH_MDT, ids=lambda v: f"mdt{v}" if v else "no-mdt")
def test_a_write_completing_after_the_listing_is_not_read(spark, tmp_path, monkeypatch, version):
    """The race behind a torn read that 4 writers on S3 produced: write A, still running when
    a reader listed the files (so only some of its log files may be listed), completed before
    the reader decided which instants count, and a write B that started after A had already
    completed, so A's instant was before the snapshot's. The reader must count the instants of
    the timeline it listed against, and so see none of A. Here A's completion is held back
    until the listing is done, then put in place before the reader goes on. With the metadata
    table, A's delta commit there is complete while A is not: it must not count either."""
    import hoodie.read.datasource as datasource
    from hoodie.read.datasource import HoodieDataSource
    from hoodie.timeline import Action, Instant, State

    path = str(tmp_path / "table")
    cfg = WriteConfig.build("torn", record_key="id", partition_path="p", precombine_field="ts",
                            table_type="MERGE_ON_READ", options=mdt(version))  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    schema = "id int, value string, p string, ts bigint"
    table.upsert(spark.createDataFrame([(1, "first", "a", 1), (2, "first", "b", 1)], schema), cfg)
    a = table.upsert(spark.createDataFrame([(1, "A", "a", 2)], schema), cfg).instant
    table.upsert(spark.createDataFrame([(2, "B", "b", 2)], schema), cfg)
    completed = Path(path) / table.meta_client.instant_path(
        Instant(a, Action.DELTA_COMMIT, State.COMPLETED)
    )
    held = completed.with_name("held-back")
    completed.rename(held)  # A is still running when the reader lists

    planned = datasource.plan_read

    def plan_then_complete(*args, **kwargs):
        plan = planned(*args, **kwargs)
        held.rename(completed)  # ... and completes right after
        return plan

    monkeypatch.setattr(datasource, "plan_read", plan_then_complete)
    source = HoodieDataSource({"path": path})
    reader = source.reader(source.schema())
    rows = pa.Table.from_batches([b for p in reader.partitions() for b in reader.read(p)])
    assert completed.exists()
    assert sorted(zip(rows["id"].to_pylist(), rows["value"].to_pylist())) == [
        (1, "first"), (2, "B")
    ]  # fmt: skip
    monkeypatch.undo()  # the next read sees A whole
    rows = spark.read.format("hoodie").load(path).select("id", "value").collect()
    assert sorted((r.id, r.value) for r in rows) == [(1, "A"), (2, "B")]

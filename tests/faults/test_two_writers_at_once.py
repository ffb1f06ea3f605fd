"""Two writers of one table at once, with the default settings: nothing committed is lost.

The case of issue 38: a second upsert started while the first is inflight rolled the first
back (the single-writer EAGER policy took it for a crashed write), the first then completed
anyway, and its rows were gone while the timeline said it committed. Here the first writer
(a child process) stops just before its commit (`HOODIE_PAUSE_AT`), its files written and its
heartbeat beating; the second (this process) writes other keys meanwhile; then the first goes
on. Either both writes apply, or the later one to commit fails with a ConcurrentWriteConflict
(they rewrote the same file group) and leaves nothing behind; the second writer never undoes
the first, with the default settings and with `single_writer` stated.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from crash_support import CHILD, COW, FINISHED, FIRST, MOR, S1, apply, hudi_rs, snapshot
from listing_compare import (
    assert_indexes_whole,
    assert_metadata_table_whole,
    assert_reads_list_alike,
)
from tests_support import SCHEMA, write_config

from hoodie import ClusteringUpdateError, HoodieTable
from hoodie.faults import PAUSE_AT, PAUSE_DIR
from hoodie.read.datasource import register
from hoodie.table_metadata import TableMetadata
from hoodie.timeline import WRITE_ACTIONS, Action

pytestmark = pytest.mark.slow

SINGLE = {"hoodie.write.concurrency.mode": "single_writer"}
INDEXED = "hoodie.metadata.index.column.stats.enable"


def mdt(version: int, indexes: bool = False) -> dict[str, str]:
    """The metadata table kept, on that table version; with `indexes`, its column_stats and
    bloom_filters partitions too."""
    options = {"hoodie.write.table.version": str(version), "hoodie.metadata.enable": "true"}
    if indexes:
        options.update({"hoodie.metadata.index.column.stats.enable": "true",
                        "hoodie.metadata.index.bloom.filter.enable": "true"})  # fmt: skip
    return options


# (table type, options, partition of both writers' new keys, does the first one conflict?)
# FIRST's partitions hold one small file group each, which both writers' inserts fill (and so
# rewrite: a conflict); a new partition gets a new file group per writer. A child JVM each:
# `make test` runs the case (35-60 s on a loaded 2-core machine; writes that both apply
# are in its test_concurrent_writers run) and the same with the metadata table and its indexes
# on version 8 (the conflicting write's rollback leaves none of its files' records),
# `make test-writers` all.
CASES = [
    pytest.param(COW, {}, FIRST[0][2], True, id="cow-same-group"),
    pytest.param(MOR, {}, "2024-02-01", False, id="mor-new-groups", marks=pytest.mark.writers),
    pytest.param(COW, {}, "2024-02-01", False, id="cow-new-groups", marks=pytest.mark.writers),
    pytest.param(
        COW, SINGLE, FIRST[0][2], True, id="cow-single-writer-same-group", marks=pytest.mark.writers
    ),
    # With the metadata table: the conflicting write's rollback, and two delta commits of it
    # while the first writer's instant is pending.
    pytest.param(
        COW,
        mdt(8, indexes=True),
        FIRST[0][2],
        True,
        id="cow-same-group-mdt8-indexes",
        marks=pytest.mark.writers,
    ),
    pytest.param(
        COW, mdt(8), FIRST[0][2], True, id="cow-same-group-mdt8", marks=pytest.mark.writers
    ),  # fmt: skip
    pytest.param(
        COW, mdt(6), FIRST[0][2], True, id="cow-same-group-mdt6", marks=pytest.mark.writers
    ),  # fmt: skip
    pytest.param(
        MOR, mdt(8), "2024-02-01", False, id="mor-new-groups-mdt8", marks=pytest.mark.writers
    ),  # fmt: skip
    pytest.param(
        MOR, mdt(6), "2024-02-01", False, id="mor-new-groups-mdt6", marks=pytest.mark.writers
    ),  # fmt: skip
    # With the indexes too: both writers' files get their records, or the loser's none.
    pytest.param(
        COW,
        mdt(6, indexes=True),
        FIRST[0][2],
        True,
        id="cow-same-group-mdt6-indexes",
        marks=pytest.mark.writers,
    ),  # fmt: skip
    pytest.param(
        COW,
        mdt(8, indexes=True),
        "2024-02-01",
        False,
        id="cow-new-groups-mdt8-indexes",
        marks=pytest.mark.writers,
    ),  # fmt: skip
    pytest.param(
        MOR,
        mdt(8, indexes=True),
        "2024-02-01",
        False,
        id="mor-new-groups-mdt8-indexes",
        marks=pytest.mark.writers,
    ),  # fmt: skip
    pytest.param(
        MOR,
        mdt(6, indexes=True),
        "2024-02-01",
        False,
        id="mor-new-groups-mdt6-indexes",
        marks=pytest.mark.writers,
    ),  # fmt: skip
]


def _rows(first_key: int, partition: str, ts: int) -> list[tuple]:
    return [(k, f"n{k}", partition, ts, False) for k in range(first_key, first_key + 20)]


@pytest.mark.parametrize("table_type, options, partition, conflicts", CASES)
def test_a_second_writer_never_undoes_a_running_one(
    spark, tmp_path, table_type, options, partition, conflicts
):
    first_rows, second_rows = _rows(100, partition, 5), _rows(200, partition, 6)
    _two_writers(spark, tmp_path, table_type, options, first_rows, second_rows, conflicts)


GLOBAL = {"hoodie.index.type": "GLOBAL_SIMPLE"}
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}

# (table type, options, partitions of the first and the second writer's keys, same keys?)
# Both insert new keys into new file groups of their own: disjoint file groups, so only the
# same-key check (`transaction/key_conflicts.py`) stops the second copy of a key. `make test`
# runs the SIMPLE case (the default index), `make test-writers` the rest: GLOBAL_SIMPLE (a key
# in two partitions; tests/spark/test_key_conflicts.py checks the whole-table scope in make
# test), other keys (both commit, with no false conflict).
A, B = "2024-02-01", "2024-02-02"
SAME_KEYS = [
    pytest.param(COW, {}, A, A, True, id="cow-simple-new-partition"),
    *(pytest.param(*case, id=name, marks=pytest.mark.writers) for *case, name in [
        (COW, GLOBAL, A, B, True, "cow-global-two-partitions"),
        (MOR, {}, A, A, True, "mor-simple-new-partition"),
        (MOR, GLOBAL, A, B, True, "mor-global-two-partitions"),
        (COW, NO_SMALL_FILES, FIRST[0][2], FIRST[0][2], True, "cow-simple-no-small-files"),
        (COW, {**GLOBAL, **mdt(8)}, A, B, True, "cow-global-mdt8"),
        (COW, GLOBAL, A, B, False, "cow-global-other-keys"),
        (MOR, {}, A, A, False, "mor-simple-other-keys"),
    ]),
]  # fmt: skip


@pytest.mark.parametrize("table_type, options, first_partition, second_partition, same",
                         SAME_KEYS)  # fmt: skip
def test_two_writers_of_the_same_new_keys_leave_one_copy(
    spark, tmp_path, table_type, options, first_partition, second_partition, same
):
    first_rows = _rows(100, first_partition, 5)
    second_rows = _rows(100 if same else 200, second_partition, 6)
    _two_writers(spark, tmp_path, table_type, options, first_rows, second_rows, same)


def _two_writers(spark, tmp_path, table_type, options, first_rows, second_rows, conflicts):
    """The first writer (a child) writes `first_rows` and stops before its commit, the second
    (here) writes `second_rows` meanwhile, then the first goes on: it commits, or (`conflicts`)
    fails with a ConcurrentWriteConflict and leaves nothing behind."""
    register(spark)
    path = str(tmp_path / "table")
    cfg = write_config(table_type, options=options, one_at_a_time=False)
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame(FIRST, SCHEMA), cfg)

    # The first writer: a child that stops just before its commit.
    pause = tmp_path / "pause"
    pause.mkdir()
    plan = {"action": "upsert", "table_type": table_type, "options": options,
            "one_at_a_time": False, "rows": [list(r) for r in first_rows]}  # fmt: skip
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               **{PAUSE_AT: "write.finalized", PAUSE_DIR: str(pause)})  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, str(CHILD), path, str(tmp_path / "plan.json")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        while not (pause / "reached").exists():
            assert child.poll() is None, child.communicate()
            time.sleep(0.1)
        first = next(i for i in table.timeline().pending if i.action in WRITE_ACTIONS)

        # The second writer, meanwhile: it must leave the first's instant alone.
        second = table.upsert(spark.createDataFrame(second_rows, SCHEMA), cfg)
        assert any(i.timestamp == first.timestamp for i in table.timeline().pending)
    finally:
        (pause / "go").touch()
        stdout, stderr = child.communicate(timeout=300)

    expected = apply(apply(S1, second_rows), [] if conflicts else first_rows)
    if conflicts:
        assert child.returncode not in (0, FINISHED), "the first write did not conflict"
        assert "ConcurrentWriteConflict" in stderr and second.instant in stderr, stderr[-3000:]
    else:
        assert child.returncode == FINISHED, f"{stdout[-2000:]}\n{stderr[-3000:]}"
    assert snapshot(spark, path) == expected
    assert hudi_rs(path) == expected
    timeline = table.timeline()
    assert not [i for i in timeline.pending if i.action in WRITE_ACTIONS | {Action.ROLLBACK}]
    completed = {i.timestamp for i in timeline.completed if i.action in WRITE_ACTIONS}
    assert (first.timestamp in completed) is not conflicts
    if "hoodie.metadata.enable" in options:
        assert_metadata_table_whole(table.meta_client)
        assert_reads_list_alike(table.meta_client)
    if INDEXED in options:
        assert_indexes_whole(table.meta_client)
        written = _indexed_files(table.meta_client)
        # both writers' files have their records; the conflicting write's rolled back, none
        assert any(second.instant in name for name in written), written
        assert any(first.timestamp in name for name in written) is not conflicts, written
        # and a filtered read, with data skipping by them, reads what it filters
        for key in (101, 201, 3):
            rows = table.read(spark, filters=[("id", "=", key)]).select("id", "name").collect()
            assert {r.id: r.name for r in rows} == {
                k: v[0] for k, v in expected.items() if k == key
            }, key  # fmt: skip
    if conflicts:  # the conflicting write's own files were rolled back: no base file names it
        names = [p.name for p in Path(path).rglob("*.parquet")]
        assert not [n for n in names if first.timestamp in n], names


def _indexed_files(meta) -> set[str]:
    """The files the metadata table's column_stats partition holds live records of."""
    metadata = TableMetadata.open(meta)
    assert metadata is not None
    records = metadata.read_partition("column_stats").values()
    return {r.file_name for r in records if not r.is_deleted}


@pytest.mark.writers
@pytest.mark.parametrize("table_type", [COW, MOR])
def test_a_writer_keeps_out_of_a_running_clustering(spark, tmp_path, table_type):
    """A clustering (a child) stops before its commit, its files written; meanwhile an
    update of a file group it rewrites fails with ClusteringUpdateError and leaves nothing,
    and inserts into a new partition commit; then the clustering commits (no overlap with
    them): the updated key keeps its old row, the inserts stay, every commit time is kept."""
    register(spark)
    path = str(tmp_path / "table")
    cfg = write_config(table_type, one_at_a_time=False)
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame(FIRST, SCHEMA), cfg)
    times = {r["_hoodie_record_key"]: r["_hoodie_commit_time"] for r in table.read(spark).collect()}
    pause = tmp_path / "pause"
    pause.mkdir()
    plan = {"action": "cluster", "table_type": table_type, "one_at_a_time": False}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               **{PAUSE_AT: "clustering.files_written", PAUSE_DIR: str(pause)})  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, str(CHILD), path, str(tmp_path / "plan.json")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    inserts = _rows(300, "2024-02-01", 7)
    try:
        while not (pause / "reached").exists():
            assert child.poll() is None, child.communicate()
            time.sleep(0.1)
        update = [(FIRST[0][0], "changed", FIRST[0][2], 99, False)]
        with pytest.raises(ClusteringUpdateError, match="Not allowed to update the clustering"):
            table.upsert(spark.createDataFrame(update, SCHEMA), cfg)
        table.upsert(spark.createDataFrame(inserts, SCHEMA), cfg)
    finally:
        (pause / "go").touch()
        stdout, stderr = child.communicate(timeout=300)
    assert child.returncode == FINISHED, f"{stdout[-2000:]}\n{stderr[-3000:]}"
    expected = apply(S1, inserts)
    assert snapshot(spark, path) == expected
    assert hudi_rs(path) == expected
    after = {r["_hoodie_record_key"]: r["_hoodie_commit_time"] for r in table.read(spark).collect()}
    assert {k: after[k] for k in times} == times
    timeline = table.timeline()
    assert not list(timeline.pending)
    assert Action.REPLACE_COMMIT in [i.action for i in timeline.completed]

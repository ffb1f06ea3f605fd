"""Readers running while a writer commits see whole snapshots only, never a partial write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

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


# Merge-on-read: the writer's commits add log files that readers must merge or ignore.
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ"])
def test_readers_see_whole_snapshots_during_writes(spark, tmp_path, table_type):
    register(spark)
    path = str(tmp_path / "table")
    cfg = WriteConfig.build(
        "concurrent", record_key="id", partition_path="p", precombine_field="ts",
        table_type=table_type,
    )  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    schema = "id int, value string, p string, ts bigint"
    table.upsert(spark.createDataFrame([(0, "initial", "shared", 0)], schema), cfg)
    valid = [_state(k) for k in range(ROUNDS + 1)]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, HOODIE_WRITER_TABLE_TYPE=table_type)
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
    _, stderr = writer.communicate()
    assert writer.returncode == 0, stderr[-3000:]
    assert all("instant" in r for r in json.loads(out.read_text()))
    final = {r.id: r.value for r in spark.read.format("hoodie").load(path).collect()}
    assert final == valid[-1]
    # The reads overlapped the writes: they saw more than one snapshot.
    assert len(set(seen)) > 1, seen

"""Every file one upsert reads or writes goes through the storage interface (`FileIO`).

The table is written through `TracingFileIO`, which records each call in a trace file from
the driver and from the Spark tasks alike. A file that appeared on disk without a recorded
write would be I/O around the interface (ruff's banned-api rule stops the imports for it; this
checks the behaviour)."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from _spark_helpers import id_dt_ts_config

from hoodie import HoodieTable
from hoodie.meta_client import HoodieTableMetaClient, table_properties_for
from hoodie.storage import TracingFileIO, load_file_io

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"
WRITES = ("write_parquet", "write_bytes", "create_if_absent")


def _files(path: str) -> set[str]:
    found = set()
    for folder, _, names in os.walk(path):
        for name in names:
            found.add(os.path.relpath(os.path.join(folder, name), path))
    return found


def _calls(trace) -> list[tuple[str, str]]:
    if not trace.exists():
        return []
    lines = trace.read_text().splitlines()
    return [tuple(line.split("\t", 1)) for line in lines]  # type: ignore[misc]


@pytest.mark.layout_v6
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_upsert_does_all_its_io_through_storage(spark, tmp_path, table_type):
    path, trace = str(tmp_path / "t"), tmp_path / "io.trace"
    config = id_dt_ts_config("traced", table_type, {"hoodie.parquet.small.file.limit": "0"})
    created = HoodieTableMetaClient.create(path, table_properties_for(config))
    traced = HoodieTable(
        HoodieTableMetaClient(TracingFileIO(load_file_io(path), str(trace)), created.properties)
    )
    rows = [(1, "a", "2024-01-01", 1), (2, "b", "2024-01-02", 1)]
    traced.upsert(spark.createDataFrame(rows, SCHEMA), config)

    before, trace_before = _files(path), len(_calls(trace))
    update = traced.upsert(spark.createDataFrame([(1, "a2", "2024-01-01", 2)], SCHEMA), config)
    calls = _calls(trace)[trace_before:]
    after = _files(path)

    # Every file the upsert left behind was written through the interface: created by one of
    # the write calls, or moved into place (write_atomic writes a temporary file, then moves).
    written = {p for op, p in calls if op in WRITES}
    moved_in = {p for op, p in calls if op == "write_atomic"}
    assert after - before <= written | moved_in, (after - before) - written - moved_in

    # The commit's data file is one write: a new base file version (copy-on-write) or a log
    # file (merge-on-read), from a Spark task; the previous base file is read through it too.
    (stat,) = update.metadata.write_stats()
    counts = Counter(op for op, _ in calls)
    if table_type == "COPY_ON_WRITE":
        assert ("write_parquet", stat.path) in calls
        assert counts["write_parquet"] == 1
        read = {p for op, p in calls if op in ("read_parquet", "parquet_file")}
        assert stat.prev_commit in " ".join(read)  # the version it replaced was read
    else:
        assert ("create_if_absent", stat.path) in calls and counts["write_parquet"] == 0

    # The instant's three timeline files: requested created exclusively, then inflight and
    # completed replaced atomically.
    instant = update.instant
    timeline = [(op, p) for op, p in calls if p.startswith(f".hoodie/{instant}")]
    assert [op for op, _ in timeline if op in ("create_if_absent", "write_atomic")] == [
        "create_if_absent",
        "write_atomic",
        "write_atomic",
    ]
    # Recursive listings: the instant's markers, and one of the whole table: the write's
    # routing plan (its units cover every partition, as the batch's partitions are only known
    # in the tasks). The automatic clean lists nothing: the table has fewer writes than the
    # clean retains, so no slice can be let go.
    recursive = [p for op, p in calls if "recursive=True" in op]
    assert sorted(recursive) == ["", f".hoodie/.temp/{instant}"], recursive

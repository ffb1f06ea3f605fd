"""The bulk insert task (hoodie.write.bulk_insert), fed batches as Spark's shuffle feeds it.

Its contract: records arrive in any order, partition paths interleaved and a key's records
anywhere in the task's batches, each with its place in the batch (`ARRIVAL`); it keeps one
record per key (the largest precombine value, then the later one), drops deletes, refuses
repeated keys without a precombine field, holds at most a file's records in memory, and
writes each partition path's records into files of about `max_file_size` bytes, sorted by key
and of consecutive key ranges, each announced by a marker first.
"""

from __future__ import annotations

import itertools
import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.bloom_filter import BloomFilterSpec
from hoodie.exceptions import DuplicateRecordKeyError
from hoodie.markers import WriteMarkers
from hoodie.merge import MergeMode
from hoodie.schema import FILE_NAME, IS_DELETED, PARTITION_PATH, RECORD_KEY
from hoodie.storage import load_file_io
from hoodie.write import bulk_insert
from hoodie.write.bulk_insert import ARRIVAL, BulkInsertWriter
from hoodie.write.task_errors import returning_errors_of_batches

INSTANT = "20261125080000000"
# The files here are tiny: a bloom filter sized for 60,000 keys (431 KB) would be most of each.
SMALL_FILTER = BloomFilterSpec(num_entries=1000, fpp=0.01)
DATA = pa.schema([("id", pa.string()), ("name", pa.string()), ("ts", pa.int64())])


def _writer(
    tmp_path,
    max_file_size: int = 10_000_000,
    precombine: str | None = "ts",
    max_memory: int = 1 << 30,
):
    storage = load_file_io(str(tmp_path))
    return BulkInsertWriter(storage=storage, instant=INSTANT, data_schema=DATA,
                            merge_mode=MergeMode.event_time(precombine), record_key_fields=("id",),
                            compression="snappy", markers=WriteMarkers(storage, INSTANT),
                            max_file_size=max_file_size,
                            max_memory=max_memory, bloom_filter=SMALL_FILTER)  # fmt: skip


_arrivals = itertools.count()


def _batch(rows: list[tuple]) -> pa.RecordBatch:
    """rows: (partition, id, name, ts, deleted), in the batch's order: each batch made later
    arrives later."""
    columns = list(zip(*rows))
    return pa.record_batch({
        PARTITION_PATH: pa.array(columns[0], pa.string()),
        RECORD_KEY: pa.array(columns[1], pa.string()),
        "id": pa.array(columns[1], pa.string()),
        "name": pa.array(columns[2], pa.string()),
        "ts": pa.array(columns[3], pa.int64()),
        IS_DELETED: pa.array(columns[4], pa.bool_()),
        ARRIVAL: pa.array([next(_arrivals) for _ in rows], pa.int64()),
    })  # fmt: skip


def _run(writer, batches) -> list[dict]:
    out = [b for b in writer(iter(batches))]
    return [json.loads(text) for b in out for text in b.column(0).to_pylist()]


def _stored(tmp_path, stats) -> dict[str, list[tuple]]:
    files = {}
    for stat in stats:
        table = pq.read_table(tmp_path / stat["path"])
        assert set(table.column(FILE_NAME).to_pylist()) == {stat["path"].split("/")[-1]}
        files[stat["path"]] = list(zip(table.column("id").to_pylist(),
                                       table.column("name").to_pylist()))  # fmt: skip
    return files


def test_one_record_per_key_across_batches_and_no_deletes(tmp_path):
    batches = [
        _batch([("a", "1", "old", 1, False), ("b", "4", "y", 1, False),
                ("a", "2", "x", 1, False), ("a", "3", "v", 1, False),
                ("b", "5", "first", 2, False)]),
        # later, interleaved: key 1's larger precombine value wins, key 2's smaller loses, key
        # 3's delete wins (nothing written), key 5's equal value wins by arriving later
        _batch([("a", "2", "stale", 0, False), ("a", "1", "new", 5, False),
                ("b", "5", "second", 2, False), ("a", "3", "gone", 9, True)]),
    ]  # fmt: skip
    stats = _run(_writer(tmp_path), batches)
    files = _stored(tmp_path, stats)
    assert sorted(r for rows in files.values() for r in rows) == [
        ("1", "new"), ("2", "x"), ("4", "y"), ("5", "second")]  # fmt: skip
    assert sorted(s["partition_path"] for s in stats) == ["a", "b"]
    assert [s["num_inserts"] for s in sorted(stats, key=lambda s: s["partition_path"])] == [2, 2]
    markers = WriteMarkers(load_file_io(str(tmp_path)), INSTANT).all()
    assert sorted(m.data_file for m in markers) == sorted(files)
    assert (tmp_path / "a" / ".hoodie_partition_metadata").is_file()


def _rows(count: int, partition: str = "p") -> list[tuple]:
    # names that do not compress away: a record costs some 28 bytes stored
    return [(partition, f"{i:06d}", f"name-{i * 7919 % 100_003:06d}-{i}", i, False)
            for i in range(count)]  # fmt: skip


def test_files_roll_over_at_the_written_size(tmp_path):
    rows = _rows(50_000)
    max_size = 500_000
    batches = [_batch(rows[i : i + 4096]) for i in range(0, len(rows), 4096)]
    stats = _run(_writer(tmp_path, max_file_size=max_size), batches)
    by_key = sorted(stats, key=lambda s: s["path"])
    sizes = [(tmp_path / s["path"]).stat().st_size for s in by_key]
    assert [s["file_size_in_bytes"] for s in by_key] == sizes
    assert len(stats) >= 3 and len({s["file_id"] for s in stats}) == len(stats)
    # every file at most the target and, but for the last one, close to it
    assert max(sizes) <= max_size * 1.05, sizes
    full = sorted(sizes)[1:]
    assert min(full) >= max_size * 0.7, sizes
    assert sum(s["num_writes"] for s in stats) == len(rows)
    keys = sorted(k for f in _stored(tmp_path, stats).values() for k, _ in f)
    assert keys == [r[1] for r in rows]


def test_file_size_follows_the_records_not_an_estimate(tmp_path):
    # The same number of records, several times the bytes each: several times the files.
    narrow = _run(_writer(tmp_path / "narrow", max_file_size=300_000), [_batch(_rows(20_000))])
    wide_rows = [(p, k, "".join(f"{(ts + 1) * (j + 3) * 2654435761 % 1_000_003:07d}"
                                for j in range(20)), ts, d)
                 for p, k, _, ts, d in _rows(20_000)]  # fmt: skip
    wide = _run(_writer(tmp_path / "wide", max_file_size=300_000), [_batch(wide_rows)])
    assert len(narrow) >= 2
    narrow_bytes = sum(s["file_size_in_bytes"] for s in narrow)
    wide_bytes = sum(s["file_size_in_bytes"] for s in wide)
    assert wide_bytes > 3 * narrow_bytes
    # files of the target size either way: their number follows the bytes
    expected = wide_bytes / narrow_bytes * len(narrow)
    assert 0.6 * expected <= len(wide) <= 1.5 * expected, (len(narrow), len(wide), expected)


def test_a_small_batch_is_one_file(tmp_path):
    # fewer records than the probe: sized from what there is, written at the end
    stats = _run(_writer(tmp_path), [_batch(_rows(50)), _batch(_rows(50, "q"))])
    assert sorted((s["partition_path"], s["num_writes"]) for s in stats) == [("p", 50),
                                                                           ("q", 50)]  # fmt: skip


def test_a_repeated_key_without_precombine_field_is_refused(tmp_path):
    # As the executor runs it: the core's errors come back as the task's result row.
    writer = returning_errors_of_batches(_writer(tmp_path, precombine=None))
    batches = [_batch([("p", "1", "a", 1, False)]), _batch([("p", "1", "b", 1, False)])]
    [result] = _run(writer, batches)
    assert result["hoodie_error"] == DuplicateRecordKeyError.__name__
    assert "'1' appears more than once" in result["message"]


def test_a_batch_of_deletes_writes_nothing(tmp_path):
    assert _run(_writer(tmp_path), [_batch([("p", "1", "a", 1, True)])]) == []
    assert not (tmp_path / "p").exists()


def _key_ranges(tmp_path, stats) -> list[tuple[str, str]]:
    """Each file's (first, last) key, in key order; asserts each file is sorted by key."""
    ranges = []
    for stat in stats:
        keys = pq.read_table(tmp_path / stat["path"]).column(RECORD_KEY).to_pylist()
        assert keys == sorted(keys), stat["path"]
        ranges.append((keys[0], keys[-1]))
    return sorted(ranges)


def test_keys_in_any_order_make_files_sorted_by_key(tmp_path):
    # The shuffle delivers keys in no order: one file, written in key order.
    rows = _rows(500)
    random.Random(7).shuffle(rows)
    stats = _run(_writer(tmp_path), [_batch(rows[:200]), _batch(rows[200:])])
    assert len(stats) == 1
    keys = pq.read_table(tmp_path / stats[0]["path"]).column("id").to_pylist()
    assert keys == sorted(r[1] for r in rows)


def _counting_spills(monkeypatch) -> list[str]:
    """The folders records were spilled to, one entry per partition path spilled."""
    spills = []
    spill = bulk_insert._PartitionRows.spill

    def counted(held, folder):
        spills.append(os.path.dirname(folder))
        spill(held, folder)

    monkeypatch.setattr(bulk_insert._PartitionRows, "spill", counted)
    return spills


def test_a_partition_outgrowing_a_file_is_cut_into_consecutive_key_ranges(tmp_path, monkeypatch):
    # More than a file's records in no order: set aside on disk, then files whose key
    # ranges follow one another (routing units split partitions by them), none bigger than
    # the target, all but the last close to it, every record once; nothing left on disk.
    local = tmp_path / "local"
    local.mkdir()
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(local))
    spills = _counting_spills(monkeypatch)
    rows = _rows(50_000)
    random.Random(11).shuffle(rows)
    batches = [_batch(rows[i : i + 4096]) for i in range(0, len(rows), 4096)]
    table = tmp_path / "table"
    max_size = 500_000
    stats = _run(_writer(table, max_file_size=max_size), batches)
    assert len(stats) >= 3
    ranges = _key_ranges(table, stats)
    assert all(high < low for (_, high), (low, _) in zip(ranges, ranges[1:])), ranges
    sizes = sorted(s["file_size_in_bytes"] for s in stats)
    assert sizes[-1] <= max_size * 1.05 and sizes[1] >= max_size * 0.7, sizes
    keys = sorted(k for f in _stored(table, stats).values() for k, _ in f)
    assert keys == sorted(r[1] for r in rows)
    # a file's records at most in memory: the rest went to SPARK_LOCAL_DIRS, and is gone
    assert len(spills) >= 2 and set(spills) == {str(local)}, spills
    assert list(local.iterdir()) == []


def test_partition_paths_that_together_outgrow_a_file_are_set_aside(tmp_path, monkeypatch):
    # Three partition paths interleaved, each below a file's records, together above: the
    # task's memory holds a file's records at most, so they go to disk all the same, and each
    # partition path still gets one file of its own records.
    spills = _counting_spills(monkeypatch)
    rows = [row for trio in zip(_rows(8_000, "a"), _rows(8_000, "b"), _rows(8_000, "c"))
            for row in trio]  # fmt: skip
    batches = [_batch(rows[i : i + 3000]) for i in range(0, len(rows), 3000)]
    writer = _writer(tmp_path, max_file_size=400_000)
    stats = _run(writer, batches)
    assert writer._file_records is not None and 8_000 < writer._file_records < 24_000
    assert len(spills) >= 3, spills
    assert sorted((s["partition_path"], s["num_writes"]) for s in stats) == [
        ("a", 8_000), ("b", 8_000), ("c", 8_000)]  # fmt: skip
    for stat in stats:
        table = pq.read_table(tmp_path / stat["path"])
        assert set(table.column(PARTITION_PATH).to_pylist()) == {stat["partition_path"]}
        assert table.column("id").to_pylist() == [f"{i:06d}" for i in range(8_000)]


def test_records_beyond_the_memory_budget_are_set_aside_though_they_fit_a_file(
    tmp_path, monkeypatch
):
    # Far fewer records than a file holds, but more bytes than the task may keep in memory:
    # they go to disk in budget-sized parts, and the files are the same as without a budget.
    spills = _counting_spills(monkeypatch)
    rows = _rows(20_000, "a") + _rows(20_000, "b")
    random.Random(5).shuffle(rows)
    batches = [_batch(rows[i : i + 2000]) for i in range(0, len(rows), 2000)]
    budget = sum(b.nbytes for b in batches) // 8
    stats = _run(_writer(tmp_path / "budget", max_memory=budget), batches)
    assert len(spills) >= 2 * 6, spills  # both partition paths, at least 6 times each
    spilled = len(spills)
    unbounded = _run(_writer(tmp_path / "free"), batches)
    assert len(spills) == spilled  # without the budget, nothing went to disk
    assert sorted((s["partition_path"], s["num_writes"]) for s in stats) == [
        ("a", 20_000), ("b", 20_000)]  # fmt: skip
    for name, stat in (("budget", stats), ("free", unbounded)):
        files = _stored(tmp_path / name, stat)
        assert sorted(k for f in files.values() for k, _ in f) == sorted(r[1] for r in rows)
    assert len(unbounded) == len(stats)


def test_a_key_repeated_across_a_spill_keeps_its_winner(tmp_path, monkeypatch):
    # A key's versions on either side of a spill: the winner is chosen among all of them.
    spills = _counting_spills(monkeypatch)
    rows = _rows(30_000)
    random.Random(3).shuffle(rows)
    p, older, _, ts, _ = rows[100]
    p, newer, _, ts2, _ = rows[200]
    rows.append((p, older, "older", ts - 1, False))  # loses though it arrives last
    rows.append((p, newer, "newer", ts2 + 1, False))  # wins from the last batch
    batches = [_batch(rows[i : i + 5_000]) for i in range(0, len(rows), 5_000)]
    stats = _run(_writer(tmp_path, max_file_size=100_000), batches)
    assert spills
    stored = dict(r for f in _stored(tmp_path, stats).values() for r in f)
    assert len(stored) == 30_000
    assert stored[older] != "older" and stored[newer] == "newer"

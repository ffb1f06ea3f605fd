"""SIMPLE-index upserts that tag in their write tasks, routed by key range (index/routing.py).

The differential test holds every routed write to the model (with partitions of one and of
several file groups); here, what it cannot see: the units a table's footers give, that keys
below, between and above the ranges land in the right unit, that new file groups stay inside
their unit's range, that overlapping ranges too big for one task fall back to a tagging job,
and that a routed upsert is one Spark job.
"""

from __future__ import annotations

import hudi
import pyarrow as pa
import pytest
from _spark_helpers import id_dt_ts_config, snapshot

from hoodie import HoodieTable
from hoodie.fs_view import FileSystemView
from hoodie.index.routing import RoutingPlan, read_key_ranges
from hoodie.index.simple import SimpleIndex

pytestmark = pytest.mark.spark
SCHEMA = "id string, name string, dt string, ts bigint"
# Files of 20 records (~3.5 KB, one bulk insert each) and no file small enough to take
# inserts: a partition of 100 keys is five file groups, more than two full files, so worth
# splitting; a unit of more than two full files (12 KB) is too big for one task.
SIZES = {
    "hoodie.parquet.max.file.size": "6000",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.compact.inline": "false",  # a merge-on-read table's five loads are delta commits
    # files of kilobytes: a bloom filter sized for 60,000 keys (431 KB) would be most of each
    "hoodie.index.bloom.num_entries": "100",
    "hoodie.index.bloom.fpp": "0.01",
    "hoodie.bloom.index.filter.type": "SIMPLE",
}
FILE_RECORDS = 20


def _keys(numbers) -> list[str]:
    return [f"k{n:03d}" for n in numbers]


def _table(spark, tmp_path, table_type: str, keys: list[str]):
    """`keys` in files of FILE_RECORDS records, in key order: one bulk insert per file."""
    cfg = id_dt_ts_config("routed", table_type, SIZES)
    table = HoodieTable.for_write(str(tmp_path / "routed"), cfg)
    for start in range(0, len(keys), FILE_RECORDS):
        rows = [(k, "v1", "d1", 1) for k in keys[start : start + FILE_RECORDS]]
        table.bulk_insert(spark.createDataFrame(rows, SCHEMA), cfg)
    assert len(table.file_system_view().latest_base_files()) == -(-len(keys) // FILE_RECORDS)
    return table, cfg


def _plan(spark, table: HoodieTable, cfg) -> RoutingPlan | None:
    view = FileSystemView(table.meta_client.storage, table.timeline())
    return SimpleIndex().plan_routing(spark, table.meta_client, cfg, view)


def _ranges(spark, table: HoodieTable) -> dict[str, tuple[str, str]]:
    """file id -> (min key, max key) of its latest base file, from the footers."""
    files = table.file_system_view().latest_base_files()
    ranges = read_key_ranges(spark, table.meta_client.storage, files)
    return {f.file_id: (r.min_key, r.max_key) for f in files
            if (r := ranges[f.relative_path])}  # fmt: skip


def _job_sites(spark, group: str) -> dict[str, int]:
    """Spark jobs of a job group, by the core module whose action started them."""
    tracker = spark.sparkContext.statusTracker()
    sites: dict[str, int] = {}
    for job in tracker.getJobIdsForGroup(group):
        stage = tracker.getStageInfo(tracker.getJobInfo(job).stageIds[0])
        module = stage.name.split(" at ")[-1].split(":")[0].rsplit("/", 1)[-1]
        sites[module] = sites.get(module, 0) + 1
    return sites


def _rows(table: HoodieTable, spark) -> dict[str, tuple]:
    return {k: (r["name"], r["dt"], r["ts"]) for k, r in snapshot(table, spark).items()}


def _hudi_rs(path: str) -> dict[str, tuple]:
    batches = hudi.HudiTable(path).read()
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return {r["id"]: (r["name"], r["dt"], r["ts"]) for r in rows}


@pytest.mark.parametrize(
    "table_type", ["COPY_ON_WRITE", pytest.param("MERGE_ON_READ", marks=pytest.mark.full)]
)
def test_keys_route_to_the_unit_whose_range_holds_them(spark, tmp_path, table_type):
    table, cfg = _table(spark, tmp_path, table_type, _keys(range(100)))
    plan = _plan(spark, table, cfg)
    assert plan is not None
    assert [u.lower for u in plan.units["d1"]] == [None, "k020", "k040", "k060", "k080"]
    before = _ranges(spark, table)

    # Updates in two units; inserts below every range, between two, above every range, and
    # in a new partition.
    batch = [
        ("k005", "v2", "d1", 2),
        ("k025", "v2", "d1", 2),
        ("a", "new", "d1", 2),
        ("k0195", "new", "d1", 2),
        ("k100", "new", "d1", 2),
        ("z001", "new", "d2", 2),
    ]
    group = f"routed-upsert-{table_type}"  # job groups outlive a test: one name per test
    spark.sparkContext.setJobGroup(group, "a routed upsert")
    try:
        result = table.upsert(spark.createDataFrame(batch, SCHEMA), cfg)
    finally:
        spark.sparkContext.setJobGroup(None, None)  # type: ignore[arg-type]
    sites = _job_sites(spark, group)

    expected = {k: ("v1", "d1", 1) for k in _keys(range(100))}
    expected.update({k: (n, d, ts) for k, n, d, ts in batch})
    assert _rows(table, spark) == expected
    assert _hudi_rs(str(tmp_path / "routed")) == expected

    # Each update went to the file group holding its key; the inserts to new file groups
    # inside their unit's range (below k020, and at or above k080), so units stay disjoint.
    stats = result.metadata.write_stats()
    touched = {s.file_id for s in stats if s.partition_path == "d1" and s.file_id in before}
    holding = {fid for fid, (lo, hi) in before.items() if lo <= "k005" <= hi or lo <= "k025" <= hi}
    assert touched == holding and len(touched) == 2
    after = _ranges(spark, table)
    new = {fid: r for fid, r in after.items() if fid not in before}
    d1_new = sorted(r for fid, r in new.items() if any(
        s.file_id == fid and s.partition_path == "d1" for s in stats))  # fmt: skip
    assert d1_new == [("a", "k0195"), ("k100", "k100")]
    replanned = _plan(spark, table, cfg)
    assert replanned is not None
    # ([a, k0195] overlaps [k000, k019]; [k100, k100] is a unit of its own above [k080, k099].)
    assert [len(u.slices) for u in replanned.units["d1"]] == [2, 1, 1, 1, 1, 1]

    # The footers are read once, for the plan; everything else is the write's one pass over
    # the batch (Spark runs its broadcast of the ranges and its shuffle as jobs of their own).
    assert sites == {"routing.py": 1, "executor.py": 3}, sites


def test_overlapping_ranges_too_big_for_one_task_tag_in_a_job_of_their_own(spark, tmp_path):
    """Even keys in six files, then the odd ones bulk-inserted as one file beside them: its
    range overlaps all six, so the partition would be one unit of more than two full
    files; the plan gives up, and the upsert tags in a job of its own, with the same result."""
    table, cfg = _table(spark, tmp_path, "COPY_ON_WRITE", _keys(range(0, 240, 2)))
    assert _plan(spark, table, cfg) is not None
    odd = [(k, "v1", "d1", 1) for k in _keys(range(1, 240, 2))]
    one_file = id_dt_ts_config("routed", "COPY_ON_WRITE", {**SIZES, "hoodie.parquet.max.file.size":
                                                            str(10**6)})  # fmt: skip
    table.bulk_insert(spark.createDataFrame(odd, SCHEMA), one_file)
    assert _plan(spark, table, cfg) is None

    batch = [("k003", "v2", "d1", 2), ("k064", "v2", "d1", 2), ("k500", "new", "d1", 2)]
    table.upsert(spark.createDataFrame(batch, SCHEMA), cfg)
    expected = {k: ("v1", "d1", 1) for k in _keys(range(240))}
    expected.update({k: (n, d, ts) for k, n, d, ts in batch})
    assert _rows(table, spark) == expected
    assert _hudi_rs(str(tmp_path / "routed")) == expected


def test_a_partition_of_one_file_group_needs_no_footers(spark, tmp_path):
    """Small partitions are one unit each, planned from the listing alone (no Spark job), and
    the upsert is its write alone: no broadcast of ranges either."""
    cfg = id_dt_ts_config("small")
    table = HoodieTable.for_write(str(tmp_path / "small"), cfg)
    table.write(spark.createDataFrame([("1", "a", "d1", 1), ("2", "b", "d2", 1)], SCHEMA), cfg)
    spark.sparkContext.setJobGroup("plan", "routing plan")
    try:
        plan = _plan(spark, table, cfg)
    finally:
        spark.sparkContext.setJobGroup(None, None)  # type: ignore[arg-type]
    assert spark.sparkContext.statusTracker().getJobIdsForGroup("plan") == []
    assert plan is not None
    assert {p: len(units) for p, units in plan.units.items()} == {"d1": 1, "d2": 1}
    assert all(u.lower is None and u.ranges == {} for units in plan.units.values() for u in units)
    spark.sparkContext.setJobGroup("small-upsert", "an upsert of small partitions")
    try:
        table.upsert(spark.createDataFrame([("1", "a2", "d1", 2), ("3", "c", "d3", 1)], SCHEMA),
                     cfg)  # fmt: skip
    finally:
        spark.sparkContext.setJobGroup(None, None)  # type: ignore[arg-type]
    assert _job_sites(spark, "small-upsert") == {"executor.py": 2}  # its shuffle, its result
    assert {k: r["name"] for k, r in snapshot(table, spark).items()} == {"1": "a2", "2": "b",
                                                                         "3": "c"}  # fmt: skip


def test_a_delete_writes_in_one_task_per_routing_unit(spark, tmp_path):
    """A delete's records are keys alone, so adaptive execution, sizing tasks by shuffled
    bytes, would give a big delete to one task, which would rewrite every touched file group
    in turn. A routed delete asks for one task per routing unit instead (here three), up to
    spark.sql.shuffle.partitions (eight here)."""
    cfg = id_dt_ts_config("spread")
    table = HoodieTable.for_write(str(tmp_path / "spread"), cfg)
    rows = [(f"k{n}", "v", f"d{n % 3}", 1) for n in range(30)]
    table.write(spark.createDataFrame(rows, SCHEMA), cfg)
    group = "spread-delete"
    spark.sparkContext.setJobGroup(group, "a delete over three partitions")
    session_partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "8")
    try:
        keys = spark.createDataFrame([(f"k{n}", f"d{n % 3}") for n in range(0, 30, 7)],
                                     "id string, dt string")  # fmt: skip
        result = table.delete(keys, cfg)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", session_partitions)
        spark.sparkContext.setJobGroup(None, None)  # type: ignore[arg-type]
    assert result.num_deletes == 5 and result.files_written == 3
    tracker = spark.sparkContext.statusTracker()
    stages = [tracker.getStageInfo(s) for job in tracker.getJobIdsForGroup(group)
              for s in tracker.getJobInfo(job).stageIds]  # fmt: skip
    # the input's stage, the write's, and the collect of its write stats; left to adaptive
    # execution, the write's stage would be one task
    tasks = [s.numTasks for s in stages if s is not None and "executor.py" in s.name]
    assert 3 in tasks and 1 not in tasks, tasks
    assert {k for k in snapshot(table, spark)} == {f"k{n}" for n in range(30) if n % 7}

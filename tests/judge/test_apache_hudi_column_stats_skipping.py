"""Data skipping by the metadata table Apache Hudi writes: Apache Hudi 1.2 writes a partitioned
table (copy-on-write and merge-on-read, table version 8) with its metadata table's
`column_stats` and `bloom_filters` partitions on, in insert batches of disjoint id ranges (a
base file each per partition), then an upsert (merge-on-read: log files in some file groups).
Our filtered reads (`HoodieTable.read(filters=...)`, and the `hoodie` data source with
Spark's pushed filters for IS NULL) return exactly the rows of our unfiltered read filtered in
Python, for equalities, ranges and IN on int, string, double and date columns, the record key
and the partition column; the skipping report says the metadata table pruned (`column_stats`,
`bloom_filters`) and no footer was read for skipping (every base file is covered). The unit
tests (tests/unit/test_data_skipping_metadata.py) check the same on sample tables Apache Hudi
wrote, without Spark."""

from __future__ import annotations

import datetime as dt
import logging
import operator
import posixpath

import pyarrow as pa
import pytest
from apache_hudi import HUDI_1, datasource_options

from hoodie import HoodieTable
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.read import data_skipping, native
from hoodie.read.datasource import register, snapshot_arrow_schema
from hoodie.read.options import ReadOptions
from hoodie.read.planner import plan_read
from hoodie.read.predicates import KeyRule, NullCheck

pytestmark = [pytest.mark.spark, pytest.mark.hudi_full]

DAY0 = dt.date(2024, 1, 1)
WRITE = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.write.table.version": "8",
    "hoodie.parquet.small.file.limit": "0",  # every insert batch its own base files
    "hoodie.compact.inline.max.delta.commits": "20",  # merge-on-read: the upsert's logs stay
}
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


def batch(ids: list[int], suffix: str = "") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int32()),
            "dt": pa.array(["a" if i % 2 else "b" for i in ids]),
            "ts": pa.array([1 if not suffix else 2] * len(ids), pa.int64()),
            "name": pa.array([f"n{i:04d}{suffix}" for i in ids]),
            "x": pa.array([i * 1.5 for i in ids], pa.float64()),
            "day": pa.array([DAY0 + dt.timedelta(days=i) for i in ids], pa.date32()),
            "n": pa.array([None if i % 40 == 0 else i for i in ids], pa.int64()),
        }
    )


@pytest.fixture(scope="module", params=["cow", "mor"])
def written(request, apache_hudi, tmp_path_factory):
    judge = apache_hudi(HUDI_1)
    path = str(tmp_path_factory.mktemp(f"skip_{request.param}") / "t")
    for k in range(4):
        options = {**datasource_options(f"skip_{request.param}", request.param, "insert"), **WRITE}
        judge.write(path, batch(list(range(100 * k, 100 * k + 20))), options)
    options = {**datasource_options(f"skip_{request.param}", request.param), **WRITE}
    judge.write(path, batch([102, 103, 104], suffix="u"), options)
    return request.param, path


FILTERS = [
    [("id", "=", 205)],
    [("id", ">=", 310), ("id", "<", 315)],
    [("id", "in", [3, 212, 999])],
    [("name", "=", "n0107")],
    [("name", "in", ["n0003u", "n0318"])],
    [("x", "<", 10.0)],
    [("x", "=", 306.0)],
    [("day", "=", DAY0 + dt.timedelta(days=211))],
    [("day", ">", DAY0 + dt.timedelta(days=316))],
    [("dt", "=", "a"), ("id", "<=", 1)],
    [("_hoodie_record_key", "=", "117")],
    [[("id", "=", 9)], [("name", "=", "n0219")]],
    [("id", "=", 9999)],
]


def matches(row: dict, filters: list) -> bool:
    if filters and isinstance(filters[0], list):
        return any(matches(row, group) for group in filters)
    for column, op, value in filters:
        got = row[column]
        if got is None:
            return False
        compare = {
            "=": operator.eq,
            "<": operator.lt,
            "<=": operator.le,
            ">": operator.gt,
            ">=": operator.ge,
            "in": lambda a, b: a in b,
        }[op]
        if not compare(got, value):
            return False
    return True


def as_rows(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


def test_filtered_reads_skip_by_the_metadata_table(spark, written, monkeypatch, caplog):
    kind, path = written
    register(spark)
    meta = HoodieTableMetaClient.open(path)
    partitions = meta.properties.extra.get("hoodie.table.metadata.partitions", "")
    assert {"column_stats", "bloom_filters"} <= set(partitions.split(","))
    footers: list[str] = []
    reports: list[data_skipping.SkippingReport] = []
    real_read, real_skip = data_skipping.read_footers, native.skip_slices

    def counted_read(storage, paths):
        paths = list(paths)
        footers.extend(paths)
        return real_read(storage, paths)

    def recorded_skip(*args, **kwargs):
        kept, report = real_skip(*args, **kwargs)
        reports.append(report)
        return kept, report

    monkeypatch.setattr(data_skipping, "read_footers", counted_read)
    monkeypatch.setattr(native, "skip_slices", recorded_skip)
    table = HoodieTable.open(path)
    everything = table.read(spark)
    columns = everything.columns
    all_rows = [r.asDict() for r in everything.collect()]
    assert len(all_rows) == 80
    pruned = 0
    for filters in FILTERS:
        reports.clear()
        with caplog.at_level(logging.INFO, logger="hoodie.read.data_skipping"):
            got = as_rows(table.read(spark, filters=filters))
        expected = sorted(tuple(r[c] for c in columns) for r in all_rows if matches(r, filters))
        assert got == expected, filters
        (report,) = reports
        assert report.footers_read == 0, (filters, footers)
        assert report.skipped == report.by_metadata, filters
        logged = report.with_logs + report.combined  # slices with logs
        assert report.indexed == report.considered - logged, filters
        if kind == "mor":
            # Apache Hudi 1.2 keeps its log files' column stats: none is left unchecked
            assert logged >= 1 and report.with_logs == 0, filters
        pruned += report.skipped
        if report.skipped:
            assert f"{report.skipped} by the metadata table's column_stats" in caplog.text
        caplog.clear()
    assert footers == []
    assert pruned >= 2 * len(FILTERS)  # every selective filter pruned files

    # IS NULL: through the data source with Spark's pushed filters (its rows), and the plan's
    # skipping on the driver (its report)
    plan = plan_read(meta, ReadOptions.parse({}))
    schema = snapshot_arrow_schema(meta)
    rule = KeyRule.of(meta.properties.record_key_fields, meta.properties.key_generator_class,
                      schema)  # fmt: skip
    skipped = 0
    for is_null in (True, False):
        kept, report = data_skipping.skip_slices(
            meta.storage, plan.splits, plan.merge_logs, rule.with_keys(NullCheck("n", is_null)),
            schema, metadata=plan.metadata,
        )  # fmt: skip
        assert report.footers_read == 0 and report.skipped == report.by_metadata
        for split in plan.splits:
            if split not in kept:
                # its merged rows: those whose version comes from one of its files (a slice
                # with logs is decided by all its files' statistics combined)
                assert split.base_file is not None
                names = {posixpath.basename(f) for f in (split.base_file, *split.log_files)}
                held = [r for r in all_rows if r["_hoodie_file_name"] in names]
                assert held and all((r["n"] is None) != is_null for r in held), names
        skipped += report.skipped
    assert skipped >= 4  # IS NULL: every base file but those of ids 0 and 200
    spark.conf.set(PUSHDOWN, "true")
    try:
        reader = spark.read.format("hoodie").option("hoodie.read.filter.pushdown", "true")
        nulls = as_rows(reader.load(path).where("n IS NULL"))
    finally:
        spark.conf.unset(PUSHDOWN)
    expected = sorted(tuple(r[c] for c in columns) for r in all_rows if r["n"] is None)
    assert nulls == expected and len(nulls) == 2

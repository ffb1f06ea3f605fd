"""Data skipping of merge-on-read file slices with log files, through `HoodieTable.read(filters=
...)`: by the metadata table's column statistics of all the slice's files combined
(`hoodie.metadata.index.column.stats.enable`, table versions 6 and 8: our writes index log
files too), and record key filters by the record index (`hoodie.index.type=RECORD_INDEX`). The
rows are always those of the same read without skipping; the report (`native.skip_slices`)
says what decided. Unit tests: tests/unit/test_data_skipping_logs.py."""

from __future__ import annotations

import pytest
from _spark_helpers import id_dt_ts_config

from hoodie import HoodieTable
from hoodie.properties import MERGE_ON_READ
from hoodie.read import native

pytestmark = pytest.mark.spark

DDL = "id string, dt string, ts long, v int"
OFF = {"hoodie.enable.data.skipping": "false"}
SMALL = {  # several file groups per partition, each of a narrow key and value range
    "hoodie.parquet.max.file.size": "4000",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.metadata.enable": "true",
    "hoodie.compact.inline": "false",
}
N = 1200


def key(i: int) -> str:
    return f"{i:05d}"


def rows(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


@pytest.fixture
def reports(monkeypatch):
    """The skipping reports of the reads the test makes."""
    made = []
    real = native.skip_slices

    def recorded(*args, **kwargs):
        kept, report = real(*args, **kwargs)
        made.append(report)
        return kept, report

    monkeypatch.setattr(native, "skip_slices", recorded)
    return made


def filtered(spark, table: HoodieTable, filters, reports):
    """The rows of a filtered read, checked against the same read without skipping, and its
    report."""
    reports.clear()
    got = rows(table.read(spark, filters=filters))
    (report,) = reports
    assert got == rows(table.read(spark, OFF, filters=filters)), filters
    return got, report


@pytest.fixture(
    scope="module", params=[pytest.param(6, marks=pytest.mark.full), 8], ids=["v6", "v8"]
)
def logged(spark, tmp_path_factory, request) -> HoodieTable:
    """N rows (v = i) bulk-inserted into several file groups, then keys 10 and 11 updated to
    v = 5010 and 5011 (log files in their file groups), key 700 deleted (a log of deletes);
    with column stats and the record index (`RECORD_INDEX` tags the writes)."""
    options = {
        **SMALL,
        "hoodie.write.table.version": str(request.param),
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.index.type": "RECORD_INDEX",
    }
    cfg = id_dt_ts_config("logged", MERGE_ON_READ, options)
    table = HoodieTable.for_write(str(tmp_path_factory.mktemp("logged") / "t"), cfg)
    data = [(key(i), "a" if i % 2 else "b", 1, i) for i in range(N)]
    table.bulk_insert(spark.createDataFrame(data, DDL), cfg)
    table.upsert(spark.createDataFrame([(key(10), "b", 2, 5010), (key(11), "a", 2, 5011)], DDL),
                 cfg)  # fmt: skip
    table.delete(spark.createDataFrame([(key(700), "b")], "id string, dt string"), cfg)
    return table


def test_slices_with_logs_are_skipped_by_combined_column_stats(spark, logged, reports):
    got, report = filtered(spark, logged, [("v", "=", 5010)], reports)
    assert [r[-1] for r in got] == [5010]
    with_logs = report.combined + report.with_logs
    assert with_logs == 3  # keys 10 and 11 (partitions b and a), key 700
    # every log file is indexed: no slice unchecked. Key 10's slice holds 5010, key 11's
    # combined range reaches 5011: both kept; the slice with a log of deletes only is ruled
    # out by its base file's range
    assert report.with_logs == 0 and report.by_combined == 1
    assert report.considered - report.skipped == 2
    assert "1 slices with logs skipped by combined statistics" in report.describe("logged")
    # the old value of key 10 is still inside its slice's combined range (and key 11's, which
    # reaches from 1 to 5011): kept, not returned
    got, report = filtered(spark, logged, [("v", "=", 10)], reports)
    assert got == [] and report.considered - report.skipped == 2
    got, report = filtered(spark, logged, [("v", "=", 700)], reports)  # deleted
    assert got == []
    got, report = filtered(spark, logged, [("v", ">=", 690), ("v", "<", 705)], reports)
    assert [r[-1] for r in got] == [i for i in range(690, 705) if i != 700]
    # partial updates' rule: each column's range over all the slice's files
    got, report = filtered(spark, logged, [("v", ">", 5000), ("dt", "=", "a")], reports)
    assert [r[-1] for r in got] == [5011] and report.considered - report.skipped == 1


def test_a_key_filter_reads_the_one_slice_the_record_index_names(spark, logged, reports):
    got, report = filtered(spark, logged, [("id", "=", key(10))], reports)
    assert [r[-1] for r in got] == [5010]
    assert report.by_record_index == report.considered - 1
    assert f"{report.by_record_index} by the record index" in report.describe("logged")
    got, report = filtered(spark, logged, [("id", "in", [key(11), key(900)])], reports)
    assert sorted(r[-1] for r in got) == [900, 5011]
    assert report.considered - report.skipped == 2
    # a deleted key, and one never written: the index holds neither, nothing is read
    for absent in (key(700), "nope"):
        got, report = filtered(spark, logged, [("id", "=", absent)], reports)
        assert got == [] and report.by_record_index == report.considered
    # time travel: the index describes the latest state only, so it is not used
    first = logged.timeline().completed.write_timeline.instants[0].timestamp
    reports.clear()
    old = rows(logged.read(spark, {"as.of.instant": first}, filters=[("id", "=", key(10))]))
    assert [r[-1] for r in old] == [10] and reports[0].by_record_index == 0

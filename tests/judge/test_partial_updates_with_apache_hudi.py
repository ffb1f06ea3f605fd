"""Partial update blocks (`IS_PARTIAL`, table version 8 merge-on-read; design:
incremental-pipelines.md 2.3) with Apache Hudi 1.2 as the judge, in the direction our own
tests cannot cover: Apache Hudi's Spark SQL `MERGE INTO ... WHEN MATCHED THEN UPDATE SET <some
columns>` writes them, and we read its table as it does (the columns the block lacks from the
version before), hudi-rs 0.5 too; our compaction folds them into base files Apache Hudi reads
the same. (Apache Hudi reading ours: tests/spark/test_partial_update.py.)"""

from __future__ import annotations

import glob
import os

import pyarrow as pa
import pytest
from apache_hudi import HUDI_1, assert_same_as_apache_hudi, datasource_options
from hudi import HudiTableBuilder
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie.logformat import read_log_file
from hoodie.read.datasource import register

# (`make test-hudi`: make test reads our own partial blocks, tests/spark/test_partial_update.py)
pytestmark = [pytest.mark.spark, pytest.mark.hudi_full]

SCHEMA = pa.schema([("id", pa.int32()), ("dt", pa.string()), ("ts", pa.int64()),
                    ("name", pa.string()), ("amount", pa.int32())])  # fmt: skip


def _rows(table: pa.Table) -> list[tuple]:
    table = table.sort_by("id")
    return list(zip(*(table.column(c).to_pylist() for c in ("id", "ts", "name", "amount"))))


def test_we_read_apache_hudis_merge_into_partial_blocks(spark, apache_hudi, tmp_path):
    register(spark)
    path = str(tmp_path / "theirs")
    judge = apache_hudi(HUDI_1)
    options = {**datasource_options("merge_into", "mor"), "hoodie.write.table.version": "8",
               "hoodie.compact.inline": "false"}  # fmt: skip
    first = [(1, "a", 5, "a1", 10), (2, "a", 5, "b1", 20), (3, "a", 5, "c1", 30)]
    judge.write(path, pa.Table.from_pylist(
        [dict(zip(SCHEMA.names, r)) for r in first], schema=SCHEMA), options)  # fmt: skip
    judge.sql(
        "SET hoodie.write.table.version = 8",  # (Spark SQL writes 1.2's version 9 otherwise)
        f"CREATE TABLE merge_into USING hudi LOCATION '{path}'",
        "MERGE INTO merge_into t USING (SELECT 1 AS id, 'a' AS dt, 7L AS ts, 11 AS amount "
        "UNION ALL SELECT 2, 'a', 3L, 21) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET amount = s.amount, ts = s.ts",
        "SELECT 1 AS done",  # (the job keeps the last statement's rows; MERGE INTO has none)
    )
    partial = [b for log in glob.glob(os.path.join(path, "a", ".*.log.*"))
               for b in read_log_file(log) if b.is_partial]  # fmt: skip
    assert partial, "Apache Hudi wrote no partial update block: the test tests nothing"
    props = HoodieTable.open(path).meta_client.properties
    assert props.table_version == 8
    theirs = judge.read(path)
    # the names the blocks lack come from the base file; key 2's stale ts loses
    expected = [(1, 7, "a1", 11), (2, 5, "b1", 20), (3, 5, "c1", 30)]
    assert _rows(theirs) == expected
    ours = read_ours(spark, path)
    assert _rows(ours) == expected
    assert_same_as_apache_hudi("merge into", ours, theirs, "id")
    assert_same_rows("merge into", "_hoodie_record_key", ours,
                     read_theirs(HudiTableBuilder.from_base_uri(path).build()))  # fmt: skip

    # our compaction folds the partial block; Apache Hudi reads the base files the same
    config = WriteConfig.build("merge_into", record_key="id", partition_path="dt",
                               precombine_field="ts", table_type="MERGE_ON_READ")  # fmt: skip
    HoodieTable.open(path, config=config).services.compact(spark, config)
    compacted = judge.read(path)
    assert _rows(compacted) == expected
    assert_same_as_apache_hudi("compacted", read_ours(spark, path), compacted, "id")

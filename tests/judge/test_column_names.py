"""Names Avro refuses, asked of Apache Hudi. A Hudi table records its schema as Avro: Apache Hudi
refuses to write a column named `a-b` and cannot read a table whose commit schema has one, so we
refuse it too (tests/unit/test_validation.py has every rule). A table named like a dbt model
(`daily-orders`) has its Avro record named as Apache Hudi names it, and a column named `é` (a
letter, to Avro) is written and read by both."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, ApacheHudiError, assert_same_as_apache_hudi
from apache_hudi import datasource_options as hudi_options
from rs_compare import read_ours

from hoodie import ColumnNameError, HoodieTable, WriteConfig

TABLE = "daily-orders"
SCHEMA = "id int, dt string, ts bigint, `é` string"
FIRST = [(1, "x", 1, "a"), (2, "y", 1, "b")]
SECOND = [(1, "x", 2, "a2"), (3, "y", 2, "c")]


def our_config() -> WriteConfig:
    return WriteConfig.build(TABLE, record_key="id", partition_path="dt", precombine_field="ts")


def commit_schemas(path: str) -> list[dict]:
    client = HoodieTable.open(path).meta_client
    commits = client.timeline().completed.write_timeline
    return [json.loads(client.commit_metadata(i).schema or "{}") for i in commits]


def test_a_name_apache_hudi_refuses_is_refused_by_us_with_nothing_written(
    spark, apache_hudi, tmp_path
):
    rows = pa.table({"id": [1], "dt": ["x"], "ts": [1], "a-b": ["v"]})
    with pytest.raises(ApacheHudiError, match="Illegal character in: a-b"):
        apache_hudi(HUDI_1).write(str(tmp_path / "theirs"), rows, hudi_options("t", "cow"))
    path = tmp_path / "ours"
    cfg = our_config()
    table = HoodieTable.for_write(str(path), cfg)
    with pytest.raises(ColumnNameError, match="column 'a-b' has '-' at position 2"):
        table.upsert(spark.createDataFrame(rows.to_pylist()), cfg)
    assert not list(path.glob("**/*.parquet")) and not list(path.glob(".hoodie/*.commit*"))


def test_apache_hudi_reads_our_table_named_like_a_dbt_model(spark, apache_hudi, tmp_path):
    """(Both versions read one of ours in the next test.)"""
    path = str(tmp_path / "ours")
    cfg = our_config()
    table = HoodieTable.for_write(path, cfg)
    for batch in (FIRST, SECOND):
        table.upsert(spark.createDataFrame(batch, SCHEMA), cfg)
    theirs = apache_hudi(HUDI_1).read(path)
    assert sorted(theirs.column("é").to_pylist()) == ["a2", "b", "c"]
    assert_same_as_apache_hudi(HUDI_1, read_ours(spark, path), theirs, "_hoodie_record_key")


def test_we_name_the_record_as_apache_hudi_does(spark, apache_hudi, tmp_path):
    """Apache Hudi 0.15 writes the table (version 6), we upsert into it, and both Apache Hudi
    versions read the result; our commit's schema names its record as theirs does."""
    path = str(tmp_path / "theirs")
    rows = pa.table({"id": pa.array([1, 2], pa.int32()), "dt": ["x", "y"],
                     "ts": pa.array([1, 1], pa.int64()), "é": ["a", "b"]})  # fmt: skip
    apache_hudi(HUDI_0).write(path, rows, hudi_options(TABLE, "cow"))
    cfg = our_config()
    HoodieTable.for_write(path, cfg).upsert(spark.createDataFrame(SECOND, SCHEMA), cfg)
    first, ours = commit_schemas(path)
    assert (ours["name"], ours["namespace"]) == (first["name"], first["namespace"])
    assert (ours["name"], ours["namespace"]) == ("daily__orders_record", "hoodie.daily__orders")
    for version in (HUDI_0, HUDI_1):
        theirs = apache_hudi(version).read(path)
        assert sorted(theirs.column("é").to_pylist()) == ["a2", "b", "c"]
        assert_same_as_apache_hudi(version, read_ours(spark, path), theirs, "_hoodie_record_key")

"""`hoodie.index.type=RECORD_INDEX`: a global index that finds keys in the metadata table's
record index (`hoodie.index.record_index.RecordIndex`), which the index type turns on
(`hoodie.metadata.record.index.enable` unset: true) and our writes keep.

A write tagged by it updates a record whose partition value changed in place
(`hoodie.record.index.update.partition.path` false, Apache Hudi's default) or moves it (true);
deletes find the key wherever it is. A write on a table that has no record index yet is
tagged as GLOBAL_SIMPLE tags it, with the same option (Apache Hudi's fallback takes every
index option at its default and moves the record: docs/design/metadata-table.md, 7 step 8),
and its commit builds the index.
"""

from __future__ import annotations

import logging

import pytest
from _spark_helpers import id_dt_ts_config, snapshot

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.exceptions import InvalidConfigError
from hoodie.meta_client import HoodieTableMetaClient

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
A, B = "2024-01-01", "2024-01-02"
FALLBACK = "has no record index"


def config(table_type: str, version: int, **options: str) -> WriteConfig:
    return id_dt_ts_config("ri", table_type, {
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.write.table.version": str(version),
        "hoodie.metadata.enable": "true",
        "hoodie.compact.inline": "false",
        **options,
    })  # fmt: skip


def view(table: HoodieTable, spark) -> dict[int, tuple[str, str, str]]:
    """key -> (name, dt column, _hoodie_partition_path)."""
    return {int(k): (r["name"], r["dt"], r["_hoodie_partition_path"])
            for k, r in snapshot(table, spark).items()}  # fmt: skip


def with_record_index(spark, path: str, cfg: WriteConfig) -> HoodieTable:
    """Keys 1 and 2 in A, 3 in B, written by `cfg`, whose commit builds the record index."""
    table = HoodieTable.for_write(path, cfg)
    rows = [(1, "one", A, 1, False), (2, "two", A, 1, False), (3, "three", B, 1, False)]
    table.upsert(spark.createDataFrame(rows, SCHEMA), cfg)
    assert record_index_listed(path)
    return table


def record_index_listed(path: str) -> bool:
    meta = HoodieTableMetaClient.open(path)
    return "record_index" in props.metadata_partitions(meta.properties.extra)


@pytest.mark.parametrize(
    "table_type, version", [("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 8)], ids=["cow-v6", "mor-v8"]
)
def test_tagging_by_the_record_index(spark, tmp_path, caplog, table_type, version):
    path = str(tmp_path / "t")
    cfg = config(table_type, version)
    table = with_record_index(spark, path, cfg)
    caplog.set_level(logging.WARNING, logger="hoodie.index.record_index")
    batch = [(1, "one-b", B, 2, False), (3, None, B, 2, True), (4, "four", A, 2, False)]
    table.upsert(spark.createDataFrame(batch, SCHEMA), cfg)
    assert FALLBACK not in caplog.text  # tagged by the record index
    # key 1 updated where it is stored (its partition column keeps that partition's value), key
    # 3 deleted, key 4 inserted
    assert view(table, spark) == {1: ("one-b", A, A), 2: ("two", A, A), 4: ("four", A, A)}
    # the write kept the index: the next one is tagged by it too, key 4 found where it went
    table.upsert(spark.createDataFrame([(2, "two-b", B, 3, False), (4, "four-b", B, 3, False)],
                                       SCHEMA), cfg)  # fmt: skip
    assert FALLBACK not in caplog.text
    assert view(table, spark) == {1: ("one-b", A, A), 2: ("two-b", A, A), 4: ("four-b", A, A)}


def test_a_table_without_the_index_is_tagged_as_global_simple_and_gets_it(spark, tmp_path, caplog):
    """The first RECORD_INDEX write on a table without a record index: tagged by the key
    column of every partition, keeping `hoodie.record.index.update.partition.path` (false:
    key 2 stays in A), and its commit builds the index, which the next write is tagged by."""
    path = str(tmp_path / "t")
    plain = id_dt_ts_config("ri", "COPY_ON_WRITE", {"hoodie.write.table.version": "8"})
    table = HoodieTable.for_write(path, plain)
    rows = [(1, "one", A, 1, False), (2, "two", A, 1, False), (3, "three", B, 1, False)]
    table.upsert(spark.createDataFrame(rows, SCHEMA), plain)
    assert not record_index_listed(path)
    cfg = config("COPY_ON_WRITE", 8)
    caplog.set_level(logging.WARNING, logger="hoodie.index.record_index")
    table.upsert(spark.createDataFrame([(2, "two-b", B, 2, False)], SCHEMA), cfg)
    assert FALLBACK in caplog.text
    assert view(table, spark) == {1: ("one", A, A), 2: ("two-b", A, A), 3: ("three", B, B)}
    assert record_index_listed(path)
    caplog.clear()
    table.upsert(spark.createDataFrame([(3, "three-c", A, 3, True)], SCHEMA), cfg)
    assert FALLBACK not in caplog.text
    assert view(table, spark) == {1: ("one", A, A), 2: ("two-b", A, A)}


def test_moves_with_update_partition_path(spark, tmp_path, caplog):
    path = str(tmp_path / "t")
    cfg = config("MERGE_ON_READ", 6, **{"hoodie.record.index.update.partition.path": "true"})
    table = with_record_index(spark, path, cfg)
    caplog.set_level(logging.WARNING, logger="hoodie.index.record_index")
    batch = [(1, "one-b", B, 2, False), (2, "two", A, 2, False)]
    table.upsert(spark.createDataFrame(batch, SCHEMA), cfg)
    assert FALLBACK not in caplog.text
    assert view(table, spark) == {1: ("one-b", B, B), 2: ("two", A, A), 3: ("three", B, B)}


def test_a_new_table_takes_inserts_and_an_insert_finds_stored_keys(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = config("COPY_ON_WRITE", 8)
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame([(1, "one", A, 1, False)], SCHEMA), cfg)
    insert = WriteConfig.build(
        "ri",
        record_key="id",
        partition_path="dt",
        precombine_field="ts",
        options={
            **cfg.options,
            "hoodie.datasource.write.operation": "insert",
            "hoodie.datasource.insert.dup.policy": "drop",
        },
    )
    table.insert(spark.createDataFrame([(1, "again", B, 2, False), (5, "five", B, 2, False)],
                                       SCHEMA), insert)  # fmt: skip
    assert view(table, spark) == {1: ("one", A, A), 5: ("five", B, B)}


@pytest.mark.parametrize(
    "value, parsed",
    [("RECORD_INDEX", "RECORD_INDEX"), ("record_index", "RECORD_INDEX"),
     ("GLOBAL_RECORD_LEVEL_INDEX", "RECORD_INDEX")],
)  # fmt: skip
def test_the_index_type_and_its_option(value, parsed):
    cfg = WriteConfig.build("t", record_key="id", options={"hoodie.index.type": value})
    assert cfg.index_type == parsed and cfg.record_index_update_partition_path is False
    cfg = WriteConfig.build(
        "t",
        record_key="id",
        options={"hoodie.index.type": value, "hoodie.record.index.update.partition.path": "true"},
    )
    assert cfg.record_index_update_partition_path is True
    with pytest.raises(InvalidConfigError, match="partitioned record index.*RECORD_INDEX"):
        WriteConfig.build("t", record_key="id", options={"hoodie.index.type": "RECORD_LEVEL_INDEX"})
    # the index type asks for the index, and with it the metadata table
    assert cfg.metadata_indexes.record_index is True
    assert cfg.keeps_metadata_table(6, {}) is True
    for off, named in (("hoodie.metadata.record.index.enable", "record.index.enable=false"),
                       ("hoodie.metadata.enable", "hoodie.metadata.enable=false")):  # fmt: skip
        with pytest.raises(InvalidConfigError, match=f"RECORD_INDEX.*{named}"):
            WriteConfig.build("t", record_key="id",
                              options={"hoodie.index.type": value, off: "false"})  # fmt: skip

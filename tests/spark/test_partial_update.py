"""Partial updates (`hoodie.write.partial.update.columns`, which dbt's merge_update_columns and
merge_exclude_columns set; design: incremental-pipelines.md 3.2, D6): a matched key whose
incoming row wins takes the listed columns and the ordering field, keeps its other stored
columns, and a new key is inserted whole; a stale row loses whole. On merge-on-read the kept
columns come from the slice the log is appended to, its earlier logs included. hudi-rs and
Apache Hudi 1.2 read the tables as we do (whole rows: no partial blocks on version 6)."""

from __future__ import annotations

import glob
import json
import os

import pytest
from _spark_helpers import id_dt_ts_config, snapshot
from apache_hudi import HUDI_1, assert_same_as_apache_hudi
from hudi import HudiTableBuilder
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import InvalidConfigError
from hoodie.logformat import BlockType, read_log_file

pytestmark = pytest.mark.spark

SCHEMA = "id int, dt string, ts bigint, name string, amount int"
A, B = "2024-01-01", "2024-01-02"
PARTIAL = {"hoodie.write.partial.update.columns": "amount"}


# copy-on-write at the suite's table version; merge-on-read at version 8, whose partial update
# blocks are then written and read (version 6's whole-row logs: the dbt scenario's mor model,
# R15, and `make test-v8` the other way round)
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_partial_update_keeps_the_columns_it_does_not_list(spark, tmp_path, apache_hudi,
                                                           table_type):  # fmt: skip
    path = str(tmp_path / "t")
    version = {"hoodie.write.table.version": "8"} if table_type == "MERGE_ON_READ" else {}
    table = HoodieTable.for_write(path, id_dt_ts_config("partial", table_type, version))
    table.upsert(spark.createDataFrame(
        [(1, A, 5, "a", 10), (2, A, 5, "b", 20), (3, B, 5, "c", 30)], SCHEMA))  # fmt: skip
    # a whole-row update first: on merge-on-read key 2's stored name is then in a log
    table.upsert(spark.createDataFrame([(2, A, 6, "b2", 21)], SCHEMA))

    config = id_dt_ts_config("partial", table_type, {**PARTIAL, **version})
    partial = HoodieTable.open(path, config=config)
    result = partial.upsert(spark.createDataFrame([
        (1, A, 7, "x", 11),  # newer: amount and ts taken, name kept
        (2, A, 8, None, 22),  # newer: the name its log holds is kept
        (3, B, 1, "y", 33),  # stale: loses whole
        (4, B, 1, "d", 40),  # new: inserted whole
    ], SCHEMA))  # fmt: skip

    assert result.num_inserts == 1
    rows = {k: (r["ts"], r["name"], r["amount"]) for k, r in snapshot(partial, spark).items()}
    assert rows == {"1": (7, "a", 11), "2": (8, "b2", 22), "3": (5, "c", 30), "4": (1, "d", 40)}
    if table_type == "MERGE_ON_READ":
        # the matched keys' rows went to a partial update block (IS_PARTIAL, without the kept
        # name column), as Apache Hudi 1.x's MERGE INTO writes them
        blocks = [b for b in _data_blocks(path, result.instant) if b.is_partial]
        assert len(blocks) == 1
        assert "name" not in [f["name"] for f in json.loads(blocks[0].schema)["fields"]]
    ours = read_ours(spark, path)
    assert_same_rows("partial", "_hoodie_record_key", ours,
                     read_theirs(HudiTableBuilder.from_base_uri(path).build()))  # fmt: skip
    assert_same_as_apache_hudi("partial", ours, apache_hudi(HUDI_1).read(path), "id")


def _data_blocks(path: str, instant: str) -> list:
    """The data blocks `instant` wrote into the table's log files."""
    blocks = []
    for log in glob.glob(os.path.join(path, "*", ".*.log.*")):
        written = [b for b in read_log_file(log) if b.instant_time == instant]
        blocks += [b for b in written if b.block_type is BlockType.PARQUET_DATA]
    return blocks


def test_partial_update_refusals(spark, tmp_path):
    # a global index moving records between partitions could not keep their stored columns
    with pytest.raises(InvalidConfigError, match="hoodie.simple.index.update.partition.path"):
        id_dt_ts_config("moves", options={**PARTIAL, "hoodie.index.type": "GLOBAL_SIMPLE"})
    WriteConfig.build("in_place", record_key="id", options={
        **PARTIAL, "hoodie.index.type": "GLOBAL_SIMPLE",
        "hoodie.simple.index.update.partition.path": "false"})  # fmt: skip

    path = str(tmp_path / "t")
    rows = spark.createDataFrame([(1, A, 5, "a", 10)], SCHEMA)
    HoodieTable.for_write(path, id_dt_ts_config("refused")).upsert(rows)
    unknown = {"hoodie.write.partial.update.columns": "amount,amout"}
    with pytest.raises(InvalidConfigError, match=r"amout, which is not a column.*id, dt, ts"):
        HoodieTable.open(path, config=id_dt_ts_config("refused", options=unknown)).upsert(rows)
    assert len(HoodieTable.open(path).timeline().completed) == 1  # nothing was written

    custom = str(tmp_path / "custom")
    payload = {"hoodie.datasource.write.payload.class":
               "org.apache.hudi.common.model.PartialUpdateAvroPayload"}  # fmt: skip
    HoodieTable.for_write(custom, id_dt_ts_config("custom", options=payload)).upsert(rows)
    with pytest.raises(InvalidConfigError, match="CUSTOM.*partial update"):
        HoodieTable.open(
            custom, config=id_dt_ts_config("custom", options={**payload, **PARTIAL})
        ).upsert(rows)

"""insert and bulk_insert (`hoodie.datasource.write.operation`): only new keys, and where they go.

What every operation sequence must read is the differential test's (rule R12); here, what it
cannot see: the commit's operation type, the files each kind of insert writes, that a refused
insert leaves no trace, and the errors.
"""

from __future__ import annotations

import pytest
from _spark_helpers import all_files, id_dt_ts_config, snapshot

from hoodie import HoodieTable, InvalidConfigError, RecordKeyExistsError, WriteConfig

pytestmark = pytest.mark.spark
SCHEMA = "id int, name string, dt string, ts bigint"
# Every base file stays small (under the limit): an insert may fill any of them (with a small
# bloom filter: one sized for 60,000 keys takes 431 KB of footer).
SMALL = {"hoodie.parquet.small.file.limit": "100000", "hoodie.index.bloom.num_entries": "100",
         "hoodie.bloom.index.filter.type": "SIMPLE"}


def _config(operation: str, policy: str = "fail", table_type: str = "COPY_ON_WRITE"):
    options = {**SMALL, "hoodie.datasource.write.operation": operation,
               "hoodie.datasource.insert.dup.policy": policy}  # fmt: skip
    return id_dt_ts_config("events", table_type, options)


@pytest.fixture
def table(spark, tmp_path):
    cfg = _config("upsert")
    table = HoodieTable.for_write(str(tmp_path / "events"), cfg)
    table.write(spark.createDataFrame([(1, "a", "d1", 1), (2, "b", "d2", 1)], SCHEMA), cfg)
    return table


def _groups(table: HoodieTable) -> dict[str, str]:
    """file id -> the instant of its latest base file."""
    return {f.file_id: f.instant for f in table.file_system_view().latest_base_files()}


def _operation_type(table: HoodieTable, instant: str) -> str:
    """What the completed commit of `instant` records as its operation."""
    (done,) = [i for i in table.timeline().completed.instants if i.timestamp == instant]
    return table.commit_metadata(done).operation_type


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_fills_small_file_groups_and_bulk_insert_only_makes_new_ones(
    spark, tmp_path, table_type
):
    cfg = _config("upsert", table_type=table_type)
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    first = table.write(spark.createDataFrame([(1, "a", "d1", 1)], SCHEMA), cfg)
    (group,) = _groups(table)

    inserted = table.write(spark.createDataFrame([(2, "b", "d1", 1)], SCHEMA),
                           _config("insert", table_type=table_type))  # fmt: skip
    assert _operation_type(table, inserted.instant) == "INSERT"
    assert _groups(table) == {group: inserted.instant}  # the small group took the insert

    bulk = table.write(spark.createDataFrame([(3, "c", "d1", 1)], SCHEMA),
                       _config("bulk_insert", table_type=table_type))  # fmt: skip
    assert _operation_type(table, bulk.instant) == "BULK_INSERT"
    groups = _groups(table)
    assert groups[group] == inserted.instant  # not rewritten
    assert sorted(groups.values()) == [inserted.instant, bulk.instant]
    assert {k: r["name"] for k, r in snapshot(table, spark).items()} == {"1": "a", "2": "b",
                                                                          "3": "c"}  # fmt: skip
    assert first.operation == "BULK_INSERT"  # a first write looks up nothing


@pytest.mark.parametrize("operation", ["insert", "bulk_insert"])
def test_a_stored_key_fails_the_insert_and_nothing_is_written(spark, table, operation):
    before, timeline = all_files(table.base_uri), table.timeline()
    rows = [(5, "new", "d1", 1), (2, "b2", "d2", 9), (1, "a2", "d1", 9), (1, "a3", "d1", 10)]
    with pytest.raises(RecordKeyExistsError) as raised:
        table.write(spark.createDataFrame(rows, SCHEMA), _config(operation))
    message = str(raised.value)
    assert "table 'events': 3 incoming row(s) carry record keys the table already holds" in message
    assert "'1' in partition 'd1'" in message and "'2' in partition 'd2'" in message
    assert "hoodie.datasource.insert.dup.policy=drop" in message
    assert "hoodie.datasource.write.operation=upsert to update stored records" in message
    # Refused before anything was written: no instant (not even a rolled-back one), no file.
    assert all_files(table.base_uri) == before
    assert HoodieTable.open(table.base_uri).timeline().instants == timeline.instants


def test_drop_keeps_stored_records_and_the_same_key_elsewhere_is_new(spark, table):
    rows = [(1, "a2", "d1", 9), (1, "elsewhere", "d3", 1), (6, "f", "d1", 1)]
    result = table.write(spark.createDataFrame(rows, SCHEMA), _config("insert", "drop"))
    assert result.num_inserts == 2 and result.num_updates == 0
    rows = sorted((r.id, r.dt, r.name) for r in table.read(spark).collect())
    assert rows == [(1, "d1", "a"), (1, "d3", "elsewhere"), (2, "d2", "b"), (6, "d1", "f")]


def test_configs_an_insert_cannot_have():
    with pytest.raises(InvalidConfigError, match=r"dup.policy'=none .* is not supported.*drop"):
        _config("insert", "none")
    with pytest.raises(InvalidConfigError, match="must be one of upsert, insert, bulk_insert"):
        _config("append")
    bucket = {"hoodie.index.type": "BUCKET", "hoodie.datasource.write.operation": "insert"}
    with pytest.raises(InvalidConfigError, match="operation=insert needs the SIMPLE index"):
        WriteConfig.build("t", record_key="id", options=bucket)


def test_an_explicit_insert_with_the_bucket_index_is_refused(spark, tmp_path):
    cfg = WriteConfig.build("b", record_key="id", options={"hoodie.index.type": "BUCKET"})
    table = HoodieTable.for_write(str(tmp_path / "b"), cfg)
    with pytest.raises(InvalidConfigError, match="operation insert needs the SIMPLE index"):
        table.insert(spark.createDataFrame([(1, "a", "d1", 1)], SCHEMA), cfg)
    assert not table.timeline().instants

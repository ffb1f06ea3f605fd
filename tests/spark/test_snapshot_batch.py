"""The rows a snapshot run upserts (`snapshot_batch`), against dbt's MERGE semantics, and the
snapshot configs that are refused. No dbt and no writes: tests/dbt/scenarios does those."""

from __future__ import annotations

import datetime

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.hoodie.snapshot import snapshot_batch, snapshot_errors, snapshot_settings
from hoodie import HoodieTable

pytestmark = pytest.mark.spark

COLUMNS = {
    "dbt_scd_id": "dbt_scd_id",
    "dbt_valid_to": "dbt_valid_to",
    "dbt_valid_from": "dbt_valid_from",
    "dbt_updated_at": "dbt_updated_at",
    "dbt_is_deleted": "dbt_is_deleted",
}
D1, D2, D3 = (datetime.datetime(2026, 1, d) for d in (1, 2, 3))
FOREVER = datetime.datetime(9999, 12, 31)

# What the table holds: the hoodie data source adds Hudi's meta columns; `old` is a column
# the source no longer has.
STORED = """
    _hoodie_commit_time string, _hoodie_record_key string, id int, name string, old string,
    dbt_scd_id string, dbt_valid_from timestamp, dbt_valid_to timestamp
"""
# dbt's staging query, in its column order (change type first, unique key after the source).
STAGED = """
    dbt_change_type string, id int, name string, extra string, dbt_unique_key int,
    dbt_valid_from timestamp, dbt_valid_to timestamp, dbt_scd_id string
"""


def _rows(df) -> dict[str, dict]:
    rows = [r.asDict() for r in df.collect()]
    by_id = {r["dbt_scd_id"]: r for r in rows}
    assert len(by_id) == len(rows), "one scd id twice: the upsert would fail"
    return by_id


def test_closing_takes_the_stored_row_and_only_sets_its_end(spark):
    stored = spark.createDataFrame(
        [
            ("c1", "a", 1, "ann", "x", "a1", D1, None),  # current, updated below
            ("c1", "b", 2, "bob", "y", "b1", D1, None),  # current, deleted below
            ("c1", "c", 3, "cy", "z", "c0", D1, D2),  # closed already: named, not reclosed
            ("c1", "d", 3, "cy", "z", "c1", D2, None),  # current and unchanged
        ],
        STORED,
    )
    staged = spark.createDataFrame(
        [
            # 'update' carries the NEW source values: none of them may reach the stored row.
            ("update", 1, "anna", "new", 1, D3, D3, "a1"),
            ("insert", 1, "anna", "new", 1, D3, None, "a2"),
            ("delete", 2, None, None, 2, D3, D3, "b1"),
            ("update", 3, "cyd", "new", 3, D3, D3, "c0"),
            # An insert whose version is stored (e.g. a key deleted and restored unchanged) is
            # not inserted by dbt's MERGE, so it must not reopen the stored version here.
            ("insert", 3, "cy", None, 3, D1, None, "c0"),
            ("insert", 4, "dee", "new", 4, D3, None, "e1"),
        ],
        STAGED,
    )
    batch = snapshot_batch(staged, stored, COLUMNS)
    assert batch.columns == [
        "id", "name", "old", "dbt_scd_id", "dbt_valid_from", "dbt_valid_to", "extra",
    ]  # fmt: skip
    rows = _rows(batch)
    assert set(rows) == {"a1", "b1", "a2", "e1"}
    assert rows["a1"] == {"id": 1, "name": "ann", "old": "x", "dbt_scd_id": "a1",
                          "dbt_valid_from": D1, "dbt_valid_to": D3, "extra": None}  # fmt: skip
    assert (rows["b1"]["name"], rows["b1"]["old"], rows["b1"]["dbt_valid_to"]) == ("bob", "y", D3)
    # New versions: the source's values, null for a column the source dropped.
    assert (rows["a2"]["name"], rows["a2"]["extra"], rows["a2"]["old"]) == ("anna", "new", None)
    assert rows["e1"]["dbt_valid_to"] is None


def test_valid_to_current_counts_as_current_and_names_are_case_insensitive(spark):
    columns = {**COLUMNS, "dbt_scd_id": "VERSION_ID", "dbt_valid_to": "Valid_Until"}
    stored = spark.createDataFrame(
        [(1, "v1", D1, FOREVER), (2, "v2", D1, D2)],
        "id int, version_id string, dbt_valid_from timestamp, valid_until timestamp",
    )
    staged = spark.createDataFrame(
        [("update", 1, 1, D3, D3.date(), "v1"), ("update", 2, 2, D3, D3.date(), "v2")],
        "dbt_change_type string, id int, dbt_unique_key int, dbt_valid_from timestamp, "
        "valid_until date, version_id string",
    )
    batch = snapshot_batch(staged, stored, columns, "to_timestamp('9999-12-31')")
    rows = [r.asDict() for r in batch.collect()]
    # v1 ended at the far future, so it was current; its end keeps the stored type.
    assert rows == [{"id": 1, "version_id": "v1", "dbt_valid_from": D1, "valid_until": D3}]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"file_format": "delta"}, "Snapshot 'snap': file_format='delta' is not supported"),
        ({"partition_by": ["day"]}, "Snapshot 'snap': partition_by=['day'] does not apply"),
        ({"precombine_field": "ts"}, "Snapshot 'snap': precombine_field='ts' does not apply"),
        ({"options": {"hoodie.nope": "1"}}, "Snapshot 'snap': unknown option 'hoodie.nope'"),
    ],
)
def test_refused_configs_name_the_snapshot_and_the_option(config, message):
    with pytest.raises(CompilationError) as error:
        snapshot_settings("snap", config, COLUMNS, schema="s", alias="snap", warehouse_dir="/w")
    assert message in error.value.msg


def test_the_table_is_keyed_by_the_scd_id_column_and_not_partitioned():
    config = {"file_format": "hudi", "unique_key": "id", "location_root": "/lake"}
    columns = {**COLUMNS, "dbt_scd_id": "version_id"}
    settings = snapshot_settings("snap", config, columns, schema="s", alias="a", warehouse_dir="/w")
    assert settings.base_uri == "/lake/a"
    assert settings.write_config.record_key_fields == ("version_id",)
    assert settings.write_config.partition_fields == ()
    assert settings.write_config.precombine_field is None
    assert settings.write_config.table_type == "COPY_ON_WRITE"


def test_a_unique_key_the_query_returns_twice_is_named_as_the_cause(spark, tmp_path):
    config = {"unique_key": "id"}
    settings = snapshot_settings(
        "snap", config, COLUMNS, schema="s", alias="snap", warehouse_dir=str(tmp_path)
    )
    cfg = settings.write_config
    # The check strategy hashes the key with the run's time: one id twice, one scd id twice.
    twice = spark.createDataFrame([(1, "h1"), (1, "h1")], "id int, dbt_scd_id string")
    with pytest.raises(DbtRuntimeError) as error:
        with snapshot_errors("snap", config, COLUMNS):
            HoodieTable.for_write(settings.base_uri, cfg).upsert(twice, cfg)
    assert "Snapshot 'snap': its query returns more than one row for some unique_key='id'" in (
        error.value.msg
    )
    with pytest.raises(CompilationError, match="Snapshot 'snap': column 'dbt_valid_to' is miss"):
        with snapshot_errors("snap", config, COLUMNS):
            snapshot_batch(twice, twice, COLUMNS)

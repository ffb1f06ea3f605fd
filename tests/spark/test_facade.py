"""The facade's shape: the write config given once, to `for_write` or `open`, serves every
write and service of the table; a call's `config` overrides it for that call only."""

from __future__ import annotations

import pytest
from _spark_helpers import all_files, id_dt_ts_config

from hoodie import HoodieTable, InvalidConfigError

pytestmark = pytest.mark.spark

A = "2024-01-01"
SCHEMA = "id int, name string, dt string, ts bigint"
# Manual cleaning that keeps one version of each file group.
KEEP_ONE = {
    "hoodie.clean.automatic": "false",
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}


def _base_files(path: str) -> list[str]:
    return [f for f in all_files(path) if f.endswith(".parquet") and not f.startswith(".hoodie")]


def test_writes_and_services_take_the_config_given_to_for_write(spark, tmp_path):
    path = str(tmp_path / "t")
    table = HoodieTable.for_write(path, id_dt_ts_config("given_once", options=KEEP_ONE))
    for ts in (1, 2, 3):
        table.upsert(spark.createDataFrame([(1, f"v{ts}", A, ts)], SCHEMA))
    assert len(_base_files(path)) == 3  # the table's config: no automatic cleaning
    # The default policy (KEEP_LATEST_COMMITS, 10 commits) would keep all three versions.
    cleaned = table.services.clean()
    assert cleaned is not None and cleaned.total_files_deleted == 2
    assert len(_base_files(path)) == 1


def test_a_calls_config_overrides_the_tables_for_that_call_only(spark, tmp_path):
    path = str(tmp_path / "t")
    table = HoodieTable.for_write(path, id_dt_ts_config("override", options=KEEP_ONE))
    automatic = id_dt_ts_config("override", options={**KEEP_ONE, "hoodie.clean.automatic": "true"})
    table.upsert(spark.createDataFrame([(1, "a", A, 1)], SCHEMA))
    table.upsert(spark.createDataFrame([(1, "b", A, 2)], SCHEMA))
    assert len(_base_files(path)) == 2
    table.upsert(spark.createDataFrame([(1, "c", A, 3)], SCHEMA), automatic)  # cleans after
    assert len(_base_files(path)) == 1
    table.upsert(spark.createDataFrame([(1, "d", A, 4)], SCHEMA))  # the table's own again
    assert len(_base_files(path)) == 2


def test_a_table_opened_without_a_config_reads_but_does_not_write(spark, tmp_path):
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("opened")
    HoodieTable.for_write(path, cfg).upsert(spark.createDataFrame([(1, "a", A, 1)], SCHEMA))
    opened = HoodieTable.open(path)
    assert opened.read(spark).count() == 1
    with pytest.raises(InvalidConfigError, match="table 'opened' was opened without a write"):
        opened.upsert(spark.createDataFrame([(2, "b", A, 1)], SCHEMA))
    HoodieTable.open(path, config=cfg).upsert(spark.createDataFrame([(2, "b", A, 1)], SCHEMA))
    assert opened.read(spark).count() == 2

"""The tables every crash test starts from, written once per test process."""

from __future__ import annotations

import pytest
from crash_support import COW, FIRST, MOR, S2, SECOND, snapshot
from tests_support import SCHEMA, write_config

from hoodie import HoodieTable
from hoodie.read.datasource import register


@pytest.fixture(scope="session")
def prepared(spark, tmp_path_factory):
    """Each table type with two completed writes (merge-on-read: the second in log files)."""
    register(spark)
    out = {}
    for table_type in (COW, MOR):
        path = str(tmp_path_factory.mktemp("prepared") / table_type.lower())
        cfg = write_config(table_type)
        table = HoodieTable.for_write(path, cfg)
        table.upsert(spark.createDataFrame(FIRST, SCHEMA), cfg)
        table.upsert(spark.createDataFrame(SECOND, SCHEMA), cfg)
        assert snapshot(spark, path) == S2
        out[table_type] = path
    return out

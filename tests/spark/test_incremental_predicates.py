"""dbt's incremental_predicates as a lake upsert takes them (dbt/adapters/hoodie/
incremental_predicates.py): partition columns of DBT_INTERNAL_DEST only, every row of the run
inside them, never under a global index."""

from __future__ import annotations

import pytest
from _spark_helpers import id_dt_ts_config
from dbt_common.exceptions import CompilationError

from dbt.adapters.hoodie.incremental_predicates import check_rows, predicates_of

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"


def test_predicates_bound_the_partitions_a_run_may_touch(spark):
    cfg = id_dt_ts_config("orders")
    rows = spark.createDataFrame([(1, "a", "2024-01-02", 1), (2, "b", "2024-01-03", 1)], SCHEMA)
    check_rows("orders", predicates_of("orders", "DBT_INTERNAL_DEST.dt >= '2024-01-02'"), rows, cfg)
    check_rows("orders", ["dt in ('2024-01-02', '2024-01-03')", "dt is not null"], rows, cfg)
    with pytest.raises(CompilationError, match=r"Model 'orders': 1 row\(s\) of this run lie"):
        check_rows("orders", ["DBT_INTERNAL_DEST.dt > '2024-01-02'"], rows, cfg)
    with pytest.raises(CompilationError, match="may name only the partition columns \\(dt\\)"):
        check_rows("orders", ["DBT_INTERNAL_DEST.ts > 0"], rows, cfg)
    with pytest.raises(CompilationError, match="may name only"):
        check_rows("orders", ["DBT_INTERNAL_SOURCE.dt = dt"], rows, cfg)
    with pytest.raises(CompilationError, match="may name only"):
        check_rows("orders", ["dt = = '2024'"], rows, cfg)  # not SQL
    glob = id_dt_ts_config("orders", options={"hoodie.index.type": "GLOBAL_SIMPLE"})
    with pytest.raises(CompilationError, match="cannot bound a GLOBAL_SIMPLE upsert"):
        check_rows("orders", ["dt > '2024'"], rows, glob)
    with pytest.raises(CompilationError, match="must be a list of SQL conditions"):
        predicates_of("orders", [1])
    assert predicates_of("orders", None) == [] and predicates_of("orders", []) == []


def test_a_batch_warns_of_rows_outside_its_window(spark):
    from datetime import datetime, timezone

    from dbt.adapters.hoodie.microbatch import BatchWindow

    config = {"incremental_strategy": "microbatch", "event_time": "ts"}
    batch = {"id": "20260102", "event_time_start": datetime(2026, 1, 2, tzinfo=timezone.utc),
             "event_time_end": datetime(2026, 1, 3, tzinfo=timezone.utc)}  # fmt: skip
    window = BatchWindow.of("daily", config, batch)
    assert window is not None
    rows = spark.sql(
        "select * from values (1, timestamp'2026-01-02 10:00:00Z'), "
        "(2, timestamp'2026-01-03 00:00:00Z'), (3, null) as t(id, ts)"
    )
    warning = window.check_rows("daily", rows)
    assert warning is not None
    assert "2 row(s) of batch 20260102 have an event_time outside" in warning
    assert window.check_rows("daily", rows.where("id = 1")) is None
    with pytest.raises(CompilationError, match="event_time='ts' is not a column"):
        window.check_rows("daily", rows.select("id"))
    assert BatchWindow.of("daily", {"incremental_strategy": "merge"}, batch) is None

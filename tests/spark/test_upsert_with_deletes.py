"""An upsert that also deletes keys, and records entries of its own in the commit
(`HoodieTable.upsert(df, deletes=..., extra_metadata=...)`): what a microbatch batch of a dbt
model writes (it replaces its window), in one instant, whatever the stored rows' ordering
values; the delete flag never becomes a column of the table."""

from __future__ import annotations

import pytest
from _spark_helpers import id_dt_ts_config, snapshot
from apache_hudi import HUDI_1, assert_same_as_apache_hudi
from hudi import HudiTableBuilder
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable
from hoodie.exceptions import InvalidConfigError, MissingColumnError

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"
A, B = "2024-01-01", "2024-01-02"


# (`make test` runs merge-on-read, whose deletes go to a log; copy-on-write is `full`)
@pytest.mark.parametrize(
    "table_type", ["MERGE_ON_READ", pytest.param("COPY_ON_WRITE", marks=pytest.mark.full)]
)
def test_upsert_deletes_keys_in_the_same_commit(spark, tmp_path, apache_hudi, table_type):
    cfg = id_dt_ts_config("window", table_type)
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    table.upsert(spark.createDataFrame([(1, "a", A, 5), (2, "b", A, 9), (3, "c", B, 5)], SCHEMA))

    # Key 2 is deleted although its stored ts (9) is larger than anything in the batch; key 1
    # is updated, key 4 inserted; key 3 untouched.
    rows = spark.createDataFrame([(1, "a2", A, 6), (4, "d", B, 1)], SCHEMA)
    deletes = spark.createDataFrame([(2, A)], "id int, dt string")
    result = table.upsert(rows, deletes=deletes, extra_metadata={"dbt.batch.id": "20240101"})

    assert (result.num_inserts, result.num_updates, result.num_deletes) == (1, 1, 1)
    now = snapshot(table, spark)
    assert {k: (r["name"], r["ts"]) for k, r in now.items()} == {
        "1": ("a2", 6), "3": ("c", 5), "4": ("d", 1),
    }  # fmt: skip
    assert "_hoodie_is_deleted" not in table.schema().names
    instant = next(i for i in table.timeline().completed if i.timestamp == result.instant)
    extra = table.commit_metadata(instant).extra_metadata
    assert extra["dbt.batch.id"] == "20240101" and "schema" in extra

    # hudi-rs and Apache Hudi read the same rows.
    path = str(tmp_path / "t")
    ours = read_ours(spark, path)
    assert_same_rows("upsert+deletes", "_hoodie_record_key", ours,
                     read_theirs(HudiTableBuilder.from_base_uri(path).build()))  # fmt: skip
    assert_same_as_apache_hudi("upsert+deletes", ours, apache_hudi(HUDI_1).read(path), "id")


def test_deletes_and_extra_metadata_are_checked(spark, tmp_path):
    cfg = id_dt_ts_config("checked")
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    rows = spark.createDataFrame([(1, "a", A, 5)], SCHEMA)
    table.upsert(rows)
    with pytest.raises(MissingColumnError, match="keys to delete lack column.*dt"):
        table.upsert(rows, deletes=spark.createDataFrame([(1,)], "id int"))
    with pytest.raises(InvalidConfigError, match="commit metadata key 'schema' is the write's own"):
        table.upsert(rows, extra_metadata={"schema": "{}"})
    with pytest.raises(InvalidConfigError, match="non-empty text keys with text values"):
        table.upsert(rows, extra_metadata={"n": 1})  # type: ignore[dict-item]
    insert = id_dt_ts_config("checked", options={"hoodie.datasource.write.operation": "insert"})
    with pytest.raises(InvalidConfigError, match="is an upsert's, not insert's"):
        table.write(rows, insert, deletes=spark.createDataFrame([(1, A)], "id int, dt string"))
    assert len(list(table.timeline().completed)) == 1  # nothing refused was written

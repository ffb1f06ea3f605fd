"""Bad input at the edges of a write: refused with a message naming the table and column,
before anything is written; and null partition values, which are not bad input.

Schema refusals cost no Spark job (they are decided from the DataFrame's schema), so they are
many; null keys need the job that finds them, so each case is a small batch.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pyarrow as pa
import pytest
from _spark_helpers import all_files, id_dt_ts_config

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import (
    ColumnTypeError,
    DuplicateColumnError,
    MissingColumnError,
    NullRecordKeyError,
)
from hoodie.naming import DEFAULT_PARTITION

pytestmark = pytest.mark.spark

A, B = "2024-01-01", "2024-01-02"
ROWS = "id int, name string, dt string, ts bigint"
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
          "hoodie.compact.inline": "false"}  # fmt: skip


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    """A copy-on-write table (SIMPLE index) and a merge-on-read one (BUCKET index: its write
    is one Spark job whose tasks write as they go), each with one commit."""
    out = {}
    for name, table_type, options in [
        ("cow", "COPY_ON_WRITE", {}),
        ("mor_bucket", "MERGE_ON_READ", BUCKET),
    ]:
        path = str(tmp_path_factory.mktemp(name) / name)
        cfg = id_dt_ts_config(name, table_type, options)
        table = HoodieTable.for_write(path, cfg)
        rows = [(1, "a", A, 1), (2, "b", A, 1), (3, "c", B, 1)]
        table.upsert(spark.createDataFrame(rows, ROWS), cfg)
        out[name] = SimpleNamespace(path=path, cfg=cfg, table=table)
    return out


def refused(write, path: str, error: type, *says: str) -> str:
    """Run a write that must fail; check the message and that no file changed (no instant,
    not even a rollback, no marker, no data file, no partition metadata)."""
    before = all_files(path)
    with pytest.raises(error) as caught:
        write()
    message = str(caught.value)
    for text in says:
        assert text in message, message
    assert all_files(path) == before
    return message


SCHEMA_CASES = {
    "double key": (
        "select 1.5d as id, 'n' as name, '2024-01-01' as dt, 1L as ts",
        ColumnTypeError, "the record key column 'id' is double", "1.0 vs 1",
    ),
    "map key": (
        "select map('k', 1) as id, 'n' as name, '2024-01-01' as dt, 1L as ts",
        ColumnTypeError, "the record key column 'id' is map<string,int>",
    ),
    "array key": (
        "select array(1, 2) as id, 'n' as name, '2024-01-01' as dt, 1L as ts",
        ColumnTypeError, "the record key column 'id' is array<int>",
    ),
    "struct key": (
        "select named_struct('a', 1) as id, 'n' as name, '2024-01-01' as dt, 1L as ts",
        ColumnTypeError, "the record key column 'id' is struct<a:int>",
    ),
    "float partition": (
        "select 1 as id, 'n' as name, cast(1.5 as float) as dt, 1L as ts",
        ColumnTypeError, "the partition column 'dt' is float",
    ),
    "struct partition": (
        "select 1 as id, 'n' as name, named_struct('d', '2024-01-01') as dt, 1L as ts",
        ColumnTypeError, "the partition column 'dt' is struct<d:string>",
    ),
    "map ordering": (
        "select 1 as id, 'n' as name, '2024-01-01' as dt, map('t', 1) as ts",
        ColumnTypeError, "the precombine column 'ts' is map<string,int>", "no order",
    ),
    "array ordering": (
        "select 1 as id, 'n' as name, '2024-01-01' as dt, array(1L) as ts",
        ColumnTypeError, "the precombine column 'ts' is array<bigint>",
    ),
    "binary ordering": (
        "select 1 as id, 'n' as name, '2024-01-01' as dt, cast('t' as binary) as ts",
        ColumnTypeError, "the precombine column 'ts' is binary", "signed bytes",
    ),
    "a, a": (
        "select 1 as id, 'n' as name, 'm' as name, '2024-01-01' as dt, 1L as ts",
        DuplicateColumnError, "column 'name' twice ('name', 'name')",
    ),
    "a, A": (
        "select 1 as id, 'n' as name, 'm' as NAME, '2024-01-01' as dt, 1L as ts",
        DuplicateColumnError, "differ only in case ('name', 'NAME')",
    ),
    "missing key": (
        "select 1 as ID, 'n' as name, '2024-01-01' as dt, 1L as ts",
        MissingColumnError, "record key column 'id' (record_key) is not in the data",
        "Columns: ID, name, dt, ts", "The data has 'ID'",
    ),
    "missing ordering": (
        "select 1 as id, 'n' as name, '2024-01-01' as dt",
        MissingColumnError, "precombine column 'ts' (precombine_field)",
    ),
    "string is_deleted": (
        "select 1 as id, 'n' as name, '2024-01-01' as dt, 1L as ts, 'yes' as _hoodie_is_deleted",
        ColumnTypeError, "'_hoodie_is_deleted' must be boolean", "got string",
    ),
    "null column": (
        "select 1 as id, null as name, '2024-01-01' as dt, 1L as ts",
        ColumnTypeError, "column 'name' has type null", "cast(null as string) as name",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
def test_schema_refusals_write_nothing(spark, tables, case):
    sql, error, *says = SCHEMA_CASES[case]
    t = tables["cow"]
    df = spark.sql(sql)
    message = refused(lambda: t.table.upsert(df, t.cfg), t.path, error, *says)
    assert message.startswith("table 'cow': ")


def test_schema_refusals_of_the_other_write_paths(spark, tables, tmp_path):
    """The checks come first in every write: delete, merge-on-read under the BUCKET index,
    insert overwrite, and a table's first write (which leaves no instant behind)."""
    cow, mor = tables["cow"], tables["mor_bucket"]
    double_key = spark.sql("select 1.5d as id, '2024-01-01' as dt")
    refused(lambda: cow.table.delete(double_key, cow.cfg), cow.path, ColumnTypeError,
            "table 'cow': the record key column 'id' is double")  # fmt: skip
    binary = spark.sql("select 1 as id, 'n' as name, 'x' as dt, cast('t' as binary) as ts")
    refused(lambda: mor.table.upsert(binary, mor.cfg), mor.path, ColumnTypeError,
            "table 'mor_bucket': the precombine column 'ts' is binary")  # fmt: skip
    twice = spark.sql("select 1 as id, 'n' as name, 'x' as dt, 1L as ts, 2L as TS")
    refused(lambda: cow.table.overwrite(twice, cow.cfg), cow.path, DuplicateColumnError,
            "table 'cow': the data has column 'ts'")  # fmt: skip
    path = str(tmp_path / "first")
    cfg = WriteConfig.build("first", record_key="id")
    first = HoodieTable.for_write(path, cfg)
    refused(lambda: first.upsert(spark.sql("select array('x') as id"), cfg), path,
            ColumnTypeError, "table 'first': the record key column 'id'")  # fmt: skip
    assert first.timeline().timestamps() == []


NULL_KEY_CASES = {
    # (table type, options, key, partition): the batch also holds rows with good keys.
    "cow simple, composite": ("COPY_ON_WRITE", {}, ["id", "name"], "dt"),
    "mor simple": ("MERGE_ON_READ", {}, "id", "dt"),
    "cow bucket": ("COPY_ON_WRITE", BUCKET, "id", "dt"),
    "mor bucket, composite": ("MERGE_ON_READ", BUCKET, ["id", "name"], "dt"),
    "mor bucket, unpartitioned": ("MERGE_ON_READ", BUCKET, "id", None),
}


@pytest.mark.parametrize("case", list(NULL_KEY_CASES))
def test_null_and_empty_keys_are_refused_on_every_write_path(spark, tmp_path, case):
    """Simple keys: null or '' is refused. Composite keys: only a key missing entirely (every
    column null or '') is, as in Hudi; (null, 'd') is the key `id:__null__,name:d`."""
    table_type, options, key, partition = NULL_KEY_CASES[case]
    composite = isinstance(key, list)
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("t", record_key=key, partition_path=partition, precombine_field="ts",
                            table_type=table_type, options=options)  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    schema = "id string, name string, dt string, ts bigint"
    rows = [("1", "a", A, 1), ("2", "b", B, 1), ("", "" if composite else "c", B, 1)]
    rows += [(None, "d", B, 1)] if composite else [(None, None, B, 1)]
    if composite:
        rows += [(None, None, B, 1)]
    message = refused(lambda: table.upsert(spark.createDataFrame(rows, schema), cfg),
                      path, NullRecordKeyError, "table 't': ")  # fmt: skip
    columns = "every one of its columns id, name is null or empty" if composite else "column 'id'"
    # Found in the first stage of a one-job write (a first write is a bulk insert, a BUCKET
    # write tags in its tasks), before any task writes: no count.
    counted = "a row in partition '2024-01-02' has" if partition else "a row has"
    assert f"{counted} a null or empty record key ({columns})" in message, message
    assert "nothing was written" in message
    assert table.timeline().timestamps() == []


@pytest.mark.parametrize("name", ["cow", "mor_bucket"])
def test_null_keys_in_deletes_and_upserts_of_existing_tables(spark, tables, name):
    """The table keeps its timeline and files: under the BUCKET index's one-job write the
    partition with good rows is not written either (no rollback instant to undo it)."""
    t = tables[name]
    good_and_bad = spark.createDataFrame([(1, "a2", A, 2), (None, "x", B, 2)], ROWS)
    refused(lambda: t.table.upsert(good_and_bad, t.cfg), t.path, NullRecordKeyError,
            f"table '{name}': ", "record key (column 'id')")  # fmt: skip
    keys = spark.createDataFrame([(2, A), (None, B)], "id int, dt string")
    refused(lambda: t.table.delete(keys, t.cfg), t.path, NullRecordKeyError,
            f"table '{name}': ", "record key (column 'id')")  # fmt: skip


def test_null_and_empty_partition_values_go_to_the_default_partition(spark, tmp_path):
    """Null and '' partition values are written to `__HIVE_DEFAULT_PARTITION__` (Hudi's
    folder for both), hive-style too, and read back as they were, by us and by hudi-rs; a
    partition filter keeps the default partition where '' rows may match."""
    hudi = pytest.importorskip("hudi")
    path = str(tmp_path / "t")
    cfg = WriteConfig.build("t", record_key="id", partition_path=["dt", "hr"],
                            hive_style_partitioning=True)  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    rows = [(1, A, 1), (2, A, None), (3, "", 3), (4, None, None)]
    table.upsert(spark.createDataFrame(rows, "id int, dt string, hr int"), cfg)
    default = DEFAULT_PARTITION
    expected = [
        (1, A, 1, f"dt={A}/hr=1"),
        (2, A, None, f"dt={A}/hr={default}"),
        (3, "", 3, f"dt={default}/hr=3"),
        (4, None, None, f"dt={default}/hr={default}"),
    ]
    for *_, partition in expected:
        assert os.path.isfile(os.path.join(path, partition, ".hoodie_partition_metadata"))
    columns = ["id", "dt", "hr", "_hoodie_partition_path"]
    ours = table.read(spark).select(*columns).collect()
    assert sorted(tuple(r) for r in ours) == expected
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read()).select(columns)
    assert sorted(zip(*(theirs[c].to_pylist() for c in columns))) == expected

    # Pruning (unit-tested in test_partition_filter) keeps the '' row of the default partition.
    key = "spark.sql.python.filterPushdown.enabled"
    spark.conf.set(key, "true")
    try:
        pruned = spark.read.format("hoodie").option("hoodie.read.filter.pushdown", "true")
        not_null = pruned.load(path).filter("dt is not null")
        assert sorted(r.id for r in not_null.collect()) == [1, 2, 3]
    finally:
        spark.conf.unset(key)


def test_a_failed_first_write_leaves_a_folder_that_existed_as_it_was(spark, tmp_path):
    """What dbt runs ask (remove_if_first_write_fails): a failure in the write's Spark job,
    after the instant was requested (a null key found by the bulk insert's tasks), takes the
    table away, and the user's files stay. Without it the empty table stays."""
    path = tmp_path / "t"
    (path / "notes").mkdir(parents=True)
    (path / "README").write_text("kept")
    before = all_files(str(path))
    cfg = WriteConfig.build("t", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(str(path), cfg, remove_if_first_write_fails=True)
    assert (path / ".hoodie" / "hoodie.properties").is_file()
    df = spark.createDataFrame([(None, A), (1, B)], "id int, dt string")
    with pytest.raises(NullRecordKeyError):
        table.upsert(df, cfg)
    assert all_files(str(path)) == before
    assert sorted(os.listdir(path)) == ["README", "notes"]
    # A new folder is removed whole; the default keeps the empty table.
    fresh = str(tmp_path / "fresh")
    with pytest.raises(NullRecordKeyError):
        HoodieTable.for_write(fresh, cfg, remove_if_first_write_fails=True).upsert(df, cfg)
    assert not os.path.exists(fresh)
    kept = HoodieTable.for_write(fresh, cfg)
    with pytest.raises(NullRecordKeyError):
        kept.upsert(df, cfg)
    assert HoodieTable.exists(fresh) and kept.timeline().timestamps() == []

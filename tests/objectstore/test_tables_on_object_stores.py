"""Tables on object storage: the core's writes, reads and table services against a local S3
server and Azurite, with hudi-rs reading the same bucket through the same endpoint.

The same operations as on a local disk (tests/spark), through `storage_options` (pyarrow's
options of the store's file system) as well as a path: upserts and deletes, time travel and
incremental reads, merge-on-read log files and compaction, clean and archive, savepoint and
restore, the upgrade to table version 8, an overwrite that changes the table's keys (built
beside the table and swapped in), and the rollback of a write killed midway
(tests/faults/test_crash_on_object_stores.py).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import InvalidConfigError
from hoodie.read.datasource import register
from hoodie.storage import SECRET_OPTIONS, load_file_io
from hoodie.timeline import WRITE_ACTIONS, Action

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "id int, name string, dt string, ts bigint"


def _config(table_type: str, **options: str) -> WriteConfig:
    return WriteConfig.build(
        "lake_table",
        record_key="id",
        partition_path="dt",
        precombine_field="ts",
        table_type=table_type,
        options={"hoodie.parquet.small.file.limit": "0", **options},
    )


def _rows(df) -> dict[int, tuple]:
    return {r["id"]: (r["name"], r["dt"], r["ts"]) for r in df.collect()}


ARCHIVE_V2 = ".hoodie/timeline/history"  # Hudi 1.x's LSM timeline


def _bound(table: HoodieTable, instant: str) -> str:
    return table.timeline().completion_times().get(instant, instant)


def _last_write(table: HoodieTable) -> str:
    return [i for i in table.timeline().completed if i.action in WRITE_ACTIONS][-1].timestamp


def _hudi_rs(bucket, uri: str) -> dict[int, tuple]:
    hudi = pytest.importorskip("hudi")
    table = hudi.HudiTable(uri, options=bucket.hudi_rs_options)
    rows = pa.Table.from_batches(table.read()).to_pylist()
    assert len({r["id"] for r in rows}) == len(rows), "a key appears twice in hudi-rs's read"
    return {r["id"]: (r["name"], r["dt"], r["ts"]) for r in rows}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writes_reads_and_services(spark, bucket, table_type):
    register(spark)
    uri = bucket.uri("lake/orders")
    options = bucket.storage_options
    cfg = _config(table_type)
    df = lambda rows: spark.createDataFrame(rows, SCHEMA)  # noqa: E731
    table = HoodieTable.for_write(uri, cfg, options)
    assert table.base_uri == uri and table.storage.is_object_store
    table.upsert(df([(1, "a", "d1", 1), (2, "b", "d1", 1), (3, "c", "d2", 1)]), cfg)
    first = _last_write(table)
    table.upsert(df([(2, "B", "d1", 2), (4, "d", "d2", 2)]), cfg)
    second = _last_write(table)
    table.delete(df([(3, "c", "d2", 3)]), cfg)
    expected = {1: ("a", "d1", 1), 2: ("B", "d1", 2), 4: ("d", "d2", 2)}

    reopened = HoodieTable.open(uri, options)
    read = reopened.read(spark)
    # On an object store the data source reads (through pyarrow's store, with the options),
    # not Spark's parquet reader, whose Hadoop may not reach the store.
    assert not read.inputFiles()
    assert _rows(read) == expected
    assert _hudi_rs(bucket, uri) == expected
    # What a user's Spark read names: the store's options as hoodie.storage.<name>.
    storage = {f"hoodie.storage.{k}": v for k, v in options.items()}
    as_of = spark.read.format("hoodie").options(**storage).option("as.of.instant", first)
    assert _rows(as_of.load(uri)) == {1: ("a", "d1", 1), 2: ("b", "d1", 1), 3: ("c", "d2", 1)}
    changes = spark.read.format("hoodie").options(**storage).options(**{
        "hoodie.datasource.query.type": "incremental",
        # A version 8 timeline ranges over completion times (README: "Compatibility").
        "hoodie.datasource.read.begin.instanttime": _bound(table, first),
        "hoodie.datasource.read.end.instanttime": _bound(table, second),
    })  # fmt: skip
    assert _rows(changes.load(uri)) == {2: ("B", "d1", 2), 4: ("d", "d2", 2)}
    if table_type == "MERGE_ON_READ":
        logs = [f for f in table.storage.list_files("d1") if ".log." in f.name]
        assert logs, "merge-on-read updates went to log files"
        assert table.services.compact(spark, cfg)
        assert table.timeline().completed.latest().action is Action.COMMIT

    # More commits: clean keeps one, archival moves the oldest out of the active timeline.
    cfg = _config(
        table_type,
        **{
            "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "2",
            "hoodie.keep.max.commits": "3",
        },
    )
    for ts in range(5, 9):
        table.upsert(df([(1, f"a{ts}", "d1", ts)]), cfg)
    expected[1] = ("a8", "d1", 8)
    table.services.clean(cfg)
    assert _rows(HoodieTable.open(uri, options).read(spark)) == expected
    assert _hudi_rs(bucket, uri) == expected
    assert table.meta_client.archived_instants(), "nothing was archived"
    archive = ".hoodie/archived" if table.properties.table_version == 6 else ARCHIVE_V2
    assert table.storage.list_files(archive)

    # Savepoint, a later write, restore to the savepoint.
    saved = _last_write(table)
    table.services.savepoint(saved)
    table.upsert(df([(9, "z", "d3", 9)]), cfg)
    table.services.restore(saved, cfg)
    assert _rows(HoodieTable.open(uri, options).read(spark)) == expected
    assert _hudi_rs(bucket, uri) == expected

    # The upgrade to table version 8 on the store: the same rows, now and at the savepoint.
    # (Copy-on-write only: on merge-on-read it adds a compaction, which the store runs above.)
    if table_type != "COPY_ON_WRITE":
        return
    at_saved = _rows(as_of.option("as.of.instant", saved).load(uri))
    table.services.upgrade(spark, cfg)
    assert table.properties.table_version == 8
    assert not table.storage.list_files(".hoodie/archived")
    assert _rows(HoodieTable.open(uri, options).read(spark)) == expected
    assert _rows(as_of.option("as.of.instant", saved).load(uri)) == at_saved
    assert _hudi_rs(bucket, uri) == expected
    table.upsert(df([(5, "e", "d3", 10)]), cfg)
    assert _hudi_rs(bucket, uri) == {**expected, 5: ("e", "d3", 10)}


def test_an_overwrite_that_changes_the_keys_swaps_in_a_new_table(spark, bucket):
    register(spark)
    uri = bucket.uri("lake/rekeyed")
    options = bucket.storage_options
    cfg = _config("COPY_ON_WRITE")
    table = HoodieTable.for_write(uri, cfg, options)
    table.upsert(spark.createDataFrame([(1, "a", "d1", 1), (2, "b", "d1", 1)], SCHEMA), cfg)
    by_name = WriteConfig.build("lake_table", record_key="name", partition_path="dt",
                                precombine_field="ts")  # fmt: skip
    table.overwrite(spark.createDataFrame([(7, "x", "d9", 1)], SCHEMA), by_name)
    reopened = HoodieTable.open(uri, options)
    assert reopened.properties.record_key_fields == ("name",)
    assert _rows(reopened.read(spark)) == {7: ("x", "d9", 1)}
    assert _hudi_rs(bucket, uri) == {7: ("x", "d9", 1)}
    leftovers = [p for p in load_file_io(bucket.uri("lake"), options).list_dirs() if p != "rekeyed"]
    assert leftovers == [], leftovers


def test_bad_storage_options_name_the_option():
    with pytest.raises(InvalidConfigError, match="unknown storage option for s3://.*endpoint"):
        HoodieTable.open("s3://bucket/t", {"endpoint": "127.0.0.1:1"})
    with pytest.raises(InvalidConfigError, match="connect_timeout must be a number"):
        HoodieTable.open("s3://bucket/t", {"connect_timeout": "soon"})
    azure = "abfs://container@account.dfs.core.windows.net/t"
    with pytest.raises(InvalidConfigError, match="for abfs://.*AzureFileSystem.*account_name"):
        HoodieTable.open(azure, {"endpoint_override": "127.0.0.1:1"})
    with pytest.raises(
        InvalidConfigError, match="apply to abfs://, abfss://, gcs://, gs://, s3://"
    ):
        HoodieTable.open("file:///tmp/t", {"region": "us-east-1"})


def test_storage_options_are_no_part_of_what_is_printed_or_stored(bucket):
    options = bucket.storage_options
    secrets = {name: value for name, value in options.items() if name in SECRET_OPTIONS}
    assert secrets, "the test store takes a credential"
    storage = load_file_io(bucket.uri("t"), options)
    assert not any(value in repr(storage) for value in secrets.values())
    assert storage.shareable_options == {k: v for k, v in options.items() if k not in secrets}

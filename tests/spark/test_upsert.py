"""Upserts and deletes through `HoodieTable` on a local SparkSession.

Writes are the expensive part (a few seconds each), so most checks share module-scoped tables
built once by a fixture, and each test asserts on one aspect of the result.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _spark_helpers import (
    BASE_FILE_RE,
    all_files,
    commit_json,
    completed,
    file_id,
    parquet_files,
    read_properties,
    snapshot,
    user_columns,
)

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import (
    DuplicateRecordKeyError,
    InvalidConfigError,
    NullRecordKeyError,
    SchemaError,
)
from hoodie.schema import MAX_KEY_FOOTER, MIN_KEY_FOOTER
from hoodie.timeline import WRITE_ACTIONS

# Files of tens of kilobytes: a bloom filter sized for 60,000 keys (431 KB) would be most of
# each; one vector for 100 keys takes 180 bytes.
SMALL_BLOOM_FILTER = {
    "hoodie.index.bloom.num_entries": "100",
    "hoodie.index.bloom.fpp": "0.01",
    "hoodie.bloom.index.filter.type": "SIMPLE",
}

pytestmark = pytest.mark.spark

A, B, C = "2024-01-01", "2024-01-02", "2024-01-03"
BASIC = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
STAT_FIELDS = (
    "fileId",
    "path",
    "prevCommit",
    "numWrites",
    "numInserts",
    "numUpdateWrites",
    "numDeletes",
    "fileSizeInBytes",
)


# -- the main scenario: one partitioned table with a precombine field, six writes -------------
@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    """Six writes to one table; the write results and a snapshot after each one."""
    path = str(tmp_path_factory.mktemp("history") / "orders")
    cfg = WriteConfig.build("orders", record_key="id", partition_path="dt", precombine_field="ts")
    table = HoodieTable.for_write(path, cfg)
    results, snaps = [], []

    def upsert(rows, schema=BASIC):
        results.append(table.upsert(spark.createDataFrame(rows, schema), cfg))
        snaps.append(snapshot(table, spark))

    def delete(rows):
        keys = spark.createDataFrame(rows, "id int, dt string, ts bigint")
        results.append(table.delete(keys, cfg))
        snaps.append(snapshot(table, spark))

    # c1: a new table
    upsert([(1, "a1", A, 10, False), (2, "b1", A, 10, False), (3, "c1", A, 10, False),
            (4, "d1", B, 10, False)])  # fmt: skip
    # c2: an update, an insert into an existing partition, one into a new partition
    upsert([(1, "a2", A, 11, False), (5, "e1", A, 10, False), (6, "f1", C, 10, False)])
    # c3: deletes and precombine decisions
    upsert(
        [
            (2, "b1", A, 10, True),  # delete (equal ordering value)
            (99, "zz", A, 10, True),  # delete of a key the table does not hold
            (3, "stale", A, 5, False),  # smaller ts than stored: ignored
            (4, "tie", B, 10, False),  # equal ts: incoming wins
            (6, "f-hi", C, 20, False),  # two rows for one stored key: largest ts wins
            (6, "f-lo", C, 15, False),
            (7, "g-old", A, 1, False),  # two rows for one new key: largest ts wins
            (7, "g-new", A, 2, False),
        ]
    )
    # c4: table.delete of keys the table does not hold (one in a partition that does not exist)
    delete([(99, A, 100), (98, "2030-12-31", 100)])
    # c5: table.delete of a stored key
    delete([(5, A, 100)])
    # c6: re-insert the deleted key 2, update key 1, with a new column
    upsert(
        [(2, "b2", A, 30, False, "x2"), (1, "a3", A, 30, False, "x1")],
        BASIC + ", extra string",
    )
    return SimpleNamespace(
        path=path,
        cfg=cfg,
        table=table,
        results=results,
        snaps=snaps,
        instants=[r.instant for r in results],
    )


def test_insert_into_new_table(history):
    r1, snap = history.results[0], history.snaps[0]
    c1 = history.instants[0]
    # A table's first write has nothing to look up: a bulk insert (hoodie.write.bulk_insert).
    assert (r1.operation, r1.num_inserts, r1.num_updates, r1.num_deletes) == (
        "BULK_INSERT", 4, 0, 0,
    )  # fmt: skip
    assert r1.files_written == 2  # one new file group per partition
    assert set(snap) == {"1", "2", "3", "4"}
    assert {k: user_columns(v) for k, v in snap.items()} == {
        "1": {"id": 1, "name": "a1", "dt": A, "ts": 10, "_hoodie_is_deleted": False},
        "2": {"id": 2, "name": "b1", "dt": A, "ts": 10, "_hoodie_is_deleted": False},
        "3": {"id": 3, "name": "c1", "dt": A, "ts": 10, "_hoodie_is_deleted": False},
        "4": {"id": 4, "name": "d1", "dt": B, "ts": 10, "_hoodie_is_deleted": False},
    }
    for row in snap.values():
        assert row["_hoodie_commit_time"] == c1
        assert row["_hoodie_commit_seqno"].startswith(c1 + "_")
        assert row["_hoodie_partition_path"] == row["dt"]
        assert BASE_FILE_RE.match(row["_hoodie_file_name"])
        assert row["_hoodie_file_name"].endswith(f"_{c1}.parquet")
    # Partition A holds one file group with rows 1, 2, 3.
    assert len({snap[k]["_hoodie_file_name"] for k in ("1", "2", "3")}) == 1


def test_update_sets_new_commit_time_and_keeps_untouched_rows(history):
    before, after = history.snaps[0], history.snaps[1]
    c2 = history.instants[1]
    r2 = history.results[1]
    assert (r2.num_updates, r2.num_inserts, r2.num_deletes) == (1, 2, 0)
    assert after["1"]["name"] == "a2" and after["1"]["ts"] == 11
    assert after["1"]["_hoodie_commit_time"] == c2
    assert after["1"]["_hoodie_commit_seqno"].startswith(c2 + "_")
    for key in ("2", "3", "4"):
        assert user_columns(after[key]) == user_columns(before[key])
        assert after[key]["_hoodie_commit_time"] == before[key]["_hoodie_commit_time"]
        assert after[key]["_hoodie_commit_seqno"] == before[key]["_hoodie_commit_seqno"]
    # Rows 2 and 3 share the rewritten file with row 1: same file group, new file.
    assert after["2"]["_hoodie_file_name"] == after["1"]["_hoodie_file_name"]
    assert file_id(after["2"]["_hoodie_file_name"]) == file_id(before["2"]["_hoodie_file_name"])
    assert after["2"]["_hoodie_file_name"].endswith(f"_{c2}.parquet")
    # The file group of partition B was not touched at all.
    assert after["4"]["_hoodie_file_name"] == before["4"]["_hoodie_file_name"]


def test_insert_into_existing_and_new_partition(history):
    before, after = history.snaps[0], history.snaps[1]
    c2 = history.instants[1]
    assert set(after) == {"1", "2", "3", "4", "5", "6"}
    assert user_columns(after["5"]) == {
        "id": 5, "name": "e1", "dt": A, "ts": 10, "_hoodie_is_deleted": False
    }  # fmt: skip
    assert after["5"]["_hoodie_partition_path"] == A
    assert after["5"]["_hoodie_commit_time"] == c2
    # The small file group of partition A takes the insert.
    assert file_id(after["5"]["_hoodie_file_name"]) == file_id(before["1"]["_hoodie_file_name"])
    assert after["6"]["_hoodie_partition_path"] == C
    assert os.path.isfile(os.path.join(history.path, C, after["6"]["_hoodie_file_name"]))
    assert os.path.isfile(os.path.join(history.path, C, ".hoodie_partition_metadata"))


def test_delete_with_is_deleted_column(history):
    r3, snap = history.results[2], history.snaps[2]
    assert "2" not in snap
    assert "99" not in snap  # deleting a key the table does not hold adds nothing
    assert r3.num_deletes == 1
    assert (r3.num_updates, r3.num_inserts) == (2, 1)  # keys 4 and 6 updated, 7 inserted


def test_precombine_against_stored_row(history):
    before, after = history.snaps[1], history.snaps[2]
    c3 = history.instants[2]
    # A smaller ordering value than the stored one is ignored: the stored row is kept as is.
    assert after["3"] == {**before["3"], "_hoodie_file_name": after["3"]["_hoodie_file_name"]}
    assert after["3"]["name"] == "c1"
    # An equal ordering value: the incoming row wins.
    assert after["4"]["name"] == "tie"
    assert after["4"]["_hoodie_commit_time"] == c3


def test_precombine_within_batch(history):
    after = history.snaps[2]
    c3 = history.instants[2]
    assert (after["6"]["name"], after["6"]["ts"]) == ("f-hi", 20)  # stored key, two rows
    assert (after["7"]["name"], after["7"]["ts"]) == ("g-new", 2)  # new key, two rows
    assert after["7"]["_hoodie_commit_time"] == c3


def test_delete_of_missing_keys_is_a_no_op(history):
    r4 = history.results[3]
    assert (r4.num_deletes, r4.num_inserts, r4.num_updates, r4.files_written) == (0, 0, 0, 0)
    assert history.snaps[3] == history.snaps[2]
    assert not os.path.exists(os.path.join(history.path, "2030-12-31"))


@pytest.mark.layout_v6
def test_delete_api(history):
    r5, before, after = history.results[4], history.snaps[3], history.snaps[4]
    assert r5.operation == "DELETE"
    assert (r5.num_deletes, r5.num_inserts, r5.num_updates) == (1, 0, 0)
    assert set(after) == set(before) - {"5"}
    for key in after:
        assert user_columns(after[key]) == user_columns(before[key])
        assert after[key]["_hoodie_commit_time"] == before[key]["_hoodie_commit_time"]
    meta = commit_json(history.path, r5.instant)
    assert meta["operationType"] == "DELETE"


def test_reinsert_of_deleted_key(history):
    r6, snap = history.results[5], history.snaps[5]
    c6 = history.instants[5]
    assert (r6.num_inserts, r6.num_updates) == (1, 1)
    assert user_columns(snap["2"]) == {
        "id": 2, "name": "b2", "dt": A, "ts": 30, "_hoodie_is_deleted": False, "extra": "x2"
    }  # fmt: skip
    assert snap["2"]["_hoodie_commit_time"] == c6


@pytest.mark.layout_v6
def test_added_column_reads_null_for_old_rows(history):
    snap = history.snaps[5]
    assert set(snap) == {"1", "2", "3", "4", "6", "7"}
    assert snap["1"]["extra"] == "x1" and snap["1"]["name"] == "a3"
    for key in ("3", "4", "6", "7"):
        assert snap[key]["extra"] is None
    # Key 3 was never rewritten by the stale update of c3.
    assert snap["3"]["_hoodie_commit_time"] == history.instants[0]
    schema = json.loads(commit_json(history.path, history.instants[5])["extraMetadata"]["schema"])
    assert [f["name"] for f in schema["fields"]][-1] == "extra"


@pytest.mark.layout_v6
def test_instant_files(history):
    meta = os.path.join(history.path, ".hoodie")
    assert completed(history.table) == history.instants
    assert history.instants == sorted(history.instants)
    for instant in history.instants:
        for suffix in ("commit.requested", "inflight", "commit"):
            assert os.path.isfile(os.path.join(meta, f"{instant}.{suffix}")), (instant, suffix)
    props = read_properties(history.path)
    assert props["hoodie.table.version"] == "6"
    assert props["hoodie.table.type"] == "COPY_ON_WRITE"
    assert props["hoodie.table.recordkey.fields"] == "id"
    assert props["hoodie.table.partition.fields"] == "dt"
    assert props["hoodie.table.precombine.field"] == "ts"


@pytest.mark.layout_v6
def test_commit_metadata(history):
    c1, c2 = history.instants[0], history.instants[1]
    meta = commit_json(history.path, c2)
    assert meta["operationType"] == "UPSERT"
    stats = meta["partitionToWriteStats"]
    assert set(stats) == {A, C}  # partition B was not touched
    for partition, entries in stats.items():
        for stat in entries:
            for name in STAT_FIELDS:
                assert name in stat, name
            assert stat["path"].startswith(partition + "/")
            assert os.path.basename(stat["path"]).startswith(stat["fileId"] + "_")
            full = os.path.join(history.path, stat["path"])
            assert stat["fileSizeInBytes"] == os.path.getsize(full)
            assert pq.read_metadata(full).num_rows == stat["numWrites"]
    (a,) = stats[A]
    assert a["prevCommit"] == c1
    assert (a["numWrites"], a["numInserts"], a["numUpdateWrites"], a["numDeletes"]) == (4, 1, 1, 0)
    assert a["fileId"] == file_id(history.snaps[0]["1"]["_hoodie_file_name"])
    (c,) = stats[C]
    assert c["prevCommit"] == "null"
    assert (c["numWrites"], c["numInserts"], c["numUpdateWrites"], c["numDeletes"]) == (1, 1, 0, 0)

    schema = json.loads(meta["extraMetadata"]["schema"])
    assert schema["type"] == "record"
    fields = {f["name"]: f["type"] for f in schema["fields"]}
    assert list(fields) == ["id", "name", "dt", "ts", "_hoodie_is_deleted"]
    assert fields["id"] == ["null", "int"]
    assert fields["name"] == ["null", "string"]
    assert fields["ts"] == ["null", "long"]
    assert fields["_hoodie_is_deleted"] == ["null", "boolean"]

    deletes = commit_json(history.path, history.instants[2])["partitionToWriteStats"]
    assert sum(s["numDeletes"] for entries in deletes.values() for s in entries) == 1


def test_partition_metadata(history):
    c1, c2 = history.instants[0], history.instants[1]
    for partition, created in ((A, c1), (B, c1), (C, c2)):
        with open(os.path.join(history.path, partition, ".hoodie_partition_metadata")) as f:
            text = f.read()
        assert f"commitTime={created}" in text
        assert "partitionDepth=1" in text


def test_base_file_names_and_footers(history):
    files = parquet_files(history.path)
    assert files
    committed = set(history.instants)
    for relative in files:
        name = os.path.basename(relative)
        match = BASE_FILE_RE.match(name)
        assert match, name
        assert match["instant"] in committed
        parquet = pq.ParquetFile(os.path.join(history.path, relative))
        footer = parquet.metadata.metadata
        keys = parquet.read(columns=["_hoodie_record_key", "_hoodie_file_name"]).to_pydict()
        assert keys["_hoodie_record_key"]
        assert footer[b"hoodie_min_record_key"].decode() == min(keys["_hoodie_record_key"])
        assert footer[b"hoodie_max_record_key"].decode() == max(keys["_hoodie_record_key"])
        assert set(keys["_hoodie_file_name"]) == {name}


def test_latest_base_files_match_snapshot(history):
    latest = history.table.file_system_view().latest_base_files()
    named = {row["_hoodie_file_name"] for row in history.snaps[5].values()}
    assert {f.name for f in latest} == named
    assert len({(f.partition_path, f.file_id) for f in latest}) == len(latest)


def test_hudi_rs_reads_the_evolved_table(history):
    hudi = pytest.importorskip("hudi")
    got = pa.Table.from_batches(hudi.HudiTable(history.path).read()).to_pylist()
    assert {r["_hoodie_record_key"]: r for r in got} == history.snaps[5]


# -- complex keys ------------------------------------------------------------------------------
def test_complex_record_key(spark, tmp_path):
    path = str(tmp_path / "complex")
    cfg = WriteConfig.build("complex", record_key=["a", "b"], partition_path="dt")
    table = HoodieTable.for_write(path, cfg)
    rows = [(1, "x", A, "v1"), (1, "y", A, "v2"), (2, None, A, "v3"), (3, "", B, "v4")]
    result = table.upsert(spark.createDataFrame(rows, "a int, b string, dt string, v string"), cfg)
    assert result.num_inserts == 4
    snap = snapshot(table, spark)
    assert {k: v["v"] for k, v in snap.items()} == {
        "a:1,b:x": "v1",
        "a:1,b:y": "v2",
        "a:2,b:__null__": "v3",  # Hudi's markers for null and empty key parts
        "a:3,b:__empty__": "v4",
    }
    assert snap["a:2,b:__null__"]["b"] is None
    assert snap["a:3,b:__empty__"]["_hoodie_partition_path"] == B
    props = read_properties(path)
    assert props["hoodie.table.recordkey.fields"] == "a,b"
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.ComplexKeyGenerator"


# -- a non-partitioned table holding every supported type ---------------------------------------
TYPES = (
    "id int, i int, big bigint, small smallint, dbl double, dec decimal(10,2), d date, "
    "flag boolean, bin binary, arr array<string>, st struct<x:int,y:string>, m map<string,int>"
)
TYPED_ROWS = [
    (1, 5, 2**40, 7, 1.5, decimal.Decimal("12345678.91"), datetime.date(2024, 1, 2), True,
     b"\x00\x01", ["a", "b"], (1, "y"), {"k": 1}),
    (2, None, None, None, None, None, None, None, None, None, None, None),
    (3, -5, -(2**40), -7, -0.25, decimal.Decimal("-0.01"), datetime.date(1970, 1, 1), False,
     b"", [], (None, None), {}),
]  # fmt: skip
TYPED_UPDATE = [
    (3, 6, 1, 1, 2.5, decimal.Decimal("-1.10"), datetime.date(1999, 12, 31), None, b"\xff",
     [None, "z"], (2, None), {"a": None, "b": 2}),
    (4, 0, 0, 0, 0.0, decimal.Decimal("0.00"), datetime.date(2000, 2, 29), True, b"4", ["x"],
     (4, "four"), {"four": 4}),
]  # fmt: skip


@pytest.fixture(scope="module")
def typed(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("typed") / "typed")
    cfg = WriteConfig.build("typed", record_key="id")
    table = HoodieTable.for_write(path, cfg)
    first = table.upsert(spark.createDataFrame(TYPED_ROWS, TYPES), cfg)
    second = table.upsert(spark.createDataFrame(TYPED_UPDATE, TYPES), cfg)
    return SimpleNamespace(path=path, table=table, results=[first, second])


def _expected_typed() -> dict[int, dict]:
    names = ["id", "i", "big", "small", "dbl", "dec", "d", "flag", "bin", "arr", "st", "m"]
    out = {}
    for row in TYPED_ROWS[:2] + TYPED_UPDATE:
        record = dict(zip(names, row))
        if record["st"] is not None:
            record["st"] = dict(zip(["x", "y"], record["st"]))
        out[record["id"]] = record
    return out


def test_data_types_round_trip(spark, typed):
    df = typed.table.read(spark)
    types = dict(df.dtypes)
    assert types["i"] == "int" and types["big"] == "bigint" and types["dbl"] == "double"
    assert types["small"] in ("smallint", "int")  # Hudi records smallint as Avro int
    assert types["dec"] == "decimal(10,2)"
    assert types["d"] == "date" and types["flag"] == "boolean" and types["bin"] == "binary"
    assert types["arr"] == "array<string>"
    assert types["st"] == "struct<x:int,y:string>"
    assert types["m"] == "map<string,int>"
    rows = {r["id"]: {k: r[k] for k in r.keys() if not k.startswith("_hoodie")}
            for r in (row.asDict(recursive=True) for row in df.collect())}  # fmt: skip
    expected = _expected_typed()
    assert set(rows) == set(expected)
    for key, record in expected.items():
        got = dict(rows[key])
        got["bin"] = bytes(got["bin"]) if got["bin"] is not None else None
        assert got == record, key


def test_timestamp_column_round_trip(spark, tmp_path):
    path = str(tmp_path / "ts")
    cfg = WriteConfig.build("ts_table", record_key="id")
    table = HoodieTable.for_write(path, cfg)
    value = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)
    df = spark.createDataFrame([(1, value), (2, None)], "id int, t timestamp")
    table.upsert(df, cfg)
    out = {r["id"]: r["t"] for r in table.read(spark).collect()}
    assert out == {1: value, 2: None}
    assert dict(table.read(spark).dtypes)["t"] == "timestamp"


@pytest.mark.layout_v6
def test_non_partitioned_layout(typed):
    path = typed.path
    first, second = typed.results
    assert (first.num_inserts, second.num_inserts, second.num_updates) == (3, 1, 1)
    entries = os.listdir(path)
    assert not [e for e in entries if os.path.isdir(os.path.join(path, e)) and e != ".hoodie"]
    assert ".hoodie_partition_metadata" in entries
    with open(os.path.join(path, ".hoodie_partition_metadata")) as f:
        assert "partitionDepth=0" in f.read()
    latest = typed.table.file_system_view().latest_base_files()
    assert len(latest) == 1 and latest[0].partition_path == ""
    assert latest[0].relative_path == latest[0].name
    assert latest[0].instant == second.instant
    assert os.path.isfile(os.path.join(path, latest[0].name))
    stats = commit_json(path, second.instant)["partitionToWriteStats"]
    assert list(stats) == [""]
    assert stats[""][0]["path"] == latest[0].name
    assert stats[""][0]["prevCommit"] == first.instant
    table = pq.read_table(os.path.join(path, latest[0].name))
    assert set(table.column("_hoodie_partition_path").to_pylist()) == {""}
    assert read_properties(path)["hoodie.table.keygenerator.class"] == (
        "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    )


# -- failures and options, on a table without a precombine field -------------------------------
@pytest.fixture(scope="module")
def plain(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("plain") / "plain")
    cfg = WriteConfig.build("plain", record_key="id", partition_path="dt")
    table = HoodieTable.for_write(path, cfg)
    rows = [("1", "a", A), ("2", "b", A), ("3", "c", None)]
    result = table.upsert(spark.createDataFrame(rows, "id string, name string, dt string"), cfg)
    return SimpleNamespace(path=path, cfg=cfg, table=table, result=result)


def test_null_partition_value_goes_to_default_partition(spark, plain):
    folder = os.path.join(plain.path, "__HIVE_DEFAULT_PARTITION__")
    assert os.path.isfile(os.path.join(folder, ".hoodie_partition_metadata"))
    assert [f for f in os.listdir(folder) if f.endswith(".parquet")]
    snap = snapshot(plain.table, spark)
    assert snap["3"]["_hoodie_partition_path"] == "__HIVE_DEFAULT_PARTITION__"
    assert snap["3"]["dt"] is None
    assert snap["1"]["_hoodie_partition_path"] == A


def test_null_record_key_leaves_table_untouched(spark, plain):
    files, timeline = all_files(plain.path), completed(plain.table)
    df = spark.createDataFrame(
        [("4", "d", A), (None, "e", A), ("", "f", B)], "id string, name string, dt string"
    )
    # Found before the one-job write's shuffle, by the first row that lacks a key: no count.
    with pytest.raises(NullRecordKeyError, match=r"a row in partition .* null or empty record"):
        plain.table.upsert(df, plain.cfg)
    assert completed(plain.table) == timeline
    assert plain.table.timeline().timestamps() == timeline  # nothing pending either
    assert all_files(plain.path) == files


def test_duplicate_keys_without_precombine(spark, plain):
    files, timeline = all_files(plain.path), completed(plain.table)
    df = spark.createDataFrame([("1", "x", A), ("1", "y", A)], "id string, name string, dt string")
    with pytest.raises(DuplicateRecordKeyError, match="'1'"):
        plain.table.upsert(df, plain.cfg)
    assert plain.table.timeline().timestamps() == timeline
    assert all_files(plain.path) == files


def test_missing_configured_column(spark, plain):
    df = spark.createDataFrame([("5", "e")], "id string, name string")
    with pytest.raises(SchemaError, match="'dt'"):
        plain.table.upsert(df, plain.cfg)
    assert completed(plain.table) == [plain.result.instant]


def test_changing_record_key_is_refused(spark, plain):
    cfg = WriteConfig.build("plain", record_key="name", partition_path="dt")
    df = spark.createDataFrame([("5", "e", A)], "id string, name string, dt string")
    with pytest.raises(InvalidConfigError, match="record_key"):
        HoodieTable.for_write(plain.path, cfg).upsert(df, cfg)
    assert completed(plain.table) == [plain.result.instant]


def test_dropping_a_column_is_refused(spark, plain):
    df = spark.createDataFrame([("5", A)], "id string, dt string")
    with pytest.raises(SchemaError, match="name"):
        plain.table.upsert(df, plain.cfg)
    assert completed(plain.table) == [plain.result.instant]


def test_hive_style_partitioning(spark, tmp_path):
    path = str(tmp_path / "hive")
    cfg = WriteConfig.build(
        "hive", record_key="id", partition_path="dt", hive_style_partitioning=True
    )
    table = HoodieTable.for_write(path, cfg)
    df = spark.createDataFrame([(1, A), (2, B), (3, None)], "id int, dt string")
    table.upsert(df, cfg)
    for folder in (f"dt={A}", f"dt={B}", "dt=__HIVE_DEFAULT_PARTITION__"):
        assert os.path.isfile(os.path.join(path, folder, ".hoodie_partition_metadata")), folder
    assert not os.path.exists(os.path.join(path, A))
    snap = snapshot(table, spark)
    assert snap["1"]["_hoodie_partition_path"] == f"dt={A}"
    assert snap["3"]["_hoodie_partition_path"] == "dt=__HIVE_DEFAULT_PARTITION__"
    assert snap["1"]["dt"] == A
    assert read_properties(path)["hoodie.datasource.write.hive_style_partitioning"] == "true"
    plain_cfg = WriteConfig.build("hive", record_key="id", partition_path="dt")
    with pytest.raises(InvalidConfigError, match="hive_style_partitioning"):
        table.upsert(df, plain_cfg)


# -- file sizing -------------------------------------------------------------------------------
def test_a_first_write_rolls_over_at_the_written_file_size(spark, tmp_path):
    path = str(tmp_path / "sized")
    options = {"hoodie.parquet.max.file.size": "60000", "hoodie.parquet.small.file.limit": "30000",
               **SMALL_BLOOM_FILTER}
    cfg = WriteConfig.build("sized", record_key="id", partition_path="dt", options=options)
    table = HoodieTable.for_write(path, cfg)
    rows = spark.range(0, 12000).selectExpr(
        "cast(id as int) as id", "concat('name-', id) as name", f"'{A}' as dt"
    )
    first = table.upsert(rows, cfg)
    assert first.num_inserts == 12000
    groups = table.file_system_view().latest_base_files()
    # A first write is a bulk insert: it rolls over to a new file once the file holds
    # hoodie.parquet.max.file.size of parquet (not at hoodie.copyonwrite.record.size.estimate
    # bytes a record, which would make ~60 files of 1,000 small records here).
    assert len(groups) == first.files_written >= 3
    sizes = sorted(f.size for f in groups)
    assert sizes[-1] <= 60000 * 1.05, sizes
    assert sizes[1] >= 60000 * 0.7, sizes  # all full but the last one written
    footers = [pq.read_metadata(os.path.join(path, f.relative_path)) for f in groups]
    assert sum(f.num_rows for f in footers) == 12000
    # Files of consecutive key ranges (routing units split a partition by them), though the
    # JVM hands the task a partition's keys in hash order (hoodie/write/bulk_insert.py).
    ranges = sorted((f.metadata[MIN_KEY_FOOTER], f.metadata[MAX_KEY_FOOTER]) for f in footers)
    assert all(high < low for (_, high), (low, _) in zip(ranges, ranges[1:])), ranges


@pytest.mark.layout_v6
def test_inserts_fill_a_small_file_group(spark, tmp_path):
    path = str(tmp_path / "small")
    options = {"hoodie.parquet.max.file.size": "60000", "hoodie.parquet.small.file.limit": "30000",
               **SMALL_BLOOM_FILTER}
    cfg = WriteConfig.build("small", record_key="id", partition_path="dt", options=options)
    table = HoodieTable.for_write(path, cfg)

    def batch(start, stop):
        return spark.range(start, stop).selectExpr(
            "cast(id as int) as id", "concat('name-', id) as name", f"'{A}' as dt"
        )

    first = table.upsert(batch(0, 300), cfg)
    [small] = table.file_system_view().latest_base_files()
    assert small.size < 30000

    second = table.upsert(batch(300, 310), cfg)
    assert (second.num_inserts, second.files_written) == (10, 1)
    [grown] = table.file_system_view().latest_base_files()
    assert grown.file_id == small.file_id and grown.instant == second.instant
    stat = commit_json(path, second.instant)["partitionToWriteStats"][A][0]
    assert stat["prevCommit"] == first.instant
    assert stat["numWrites"] == 310
    assert snapshot(table, spark).keys() == {str(i) for i in range(310)}


# -- table.delete ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def deletable(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("deletable") / "del")
    cfg = WriteConfig.build("del", record_key="id", partition_path="dt", precombine_field="ts")
    table = HoodieTable.for_write(path, cfg)
    rows = [(1, "a", A, 10), (2, "b", A, 10), (3, "c", A, 10)]
    table.upsert(spark.createDataFrame(rows, "id int, name string, dt string, ts bigint"), cfg)
    return SimpleNamespace(path=path, cfg=cfg, table=table)


def test_delete_with_only_key_and_partition_columns(spark, deletable):
    keys = spark.createDataFrame([(1, A)], "id int, dt string")
    result = deletable.table.delete(keys, deletable.cfg)
    assert result.num_deletes == 1
    assert "1" not in snapshot(deletable.table, spark)


def test_delete_is_unconditional(spark, deletable):
    keys = spark.createDataFrame([(2, A, 0)], "id int, dt string, ts bigint")
    result = deletable.table.delete(keys, deletable.cfg)
    assert result.num_deletes == 1
    assert "2" not in snapshot(deletable.table, spark)


def test_a_first_write_refused_in_one_task_leaves_no_files(spark, tmp_path):
    """A table's first write is a bulk insert, whose tasks write as they go: when one task
    refuses its rows (a key twice, no precombine field), what the others wrote goes too."""
    path = str(tmp_path / "first")
    cfg = WriteConfig.build("first", record_key="id", partition_path="dt",
                            options={"hoodie.upsert.shuffle.parallelism": "2"})  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    rows = [(str(i), "x", A) for i in range(50)] + [("1", "y", B), ("1", "z", B)]
    df = spark.createDataFrame(rows, "id string, name string, dt string")
    with pytest.raises(DuplicateRecordKeyError, match="'1' appears more than once"):
        table.upsert(df, cfg)
    assert not [i for i in table.timeline().completed if i.action in WRITE_ACTIONS]
    assert not table.timeline().pending
    assert [f for f in all_files(path) if f.endswith(".parquet")] == []


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_table_merging_by_commit_time_takes_the_later_write(spark, tmp_path, table_type):
    """A version 6 table with Apache Hudi 0.x's default payload (OverwriteWithLatestAvroPayload,
    as Hudi 0.15 creates tables) merges by commit time: our upsert's stale row (smaller ts)
    replaces the stored one, as Apache Hudi writes it and as our readers merge its logs; the
    precombine field still picks one row per key within the batch."""
    from hoodie.properties import OVERWRITE_PAYLOAD, PAYLOAD_CLASS

    path = str(tmp_path / "t")
    cfg = WriteConfig.build("by_commit_time", record_key="id", partition_path="dt",
                            precombine_field="ts", table_type=table_type)  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame([(1, "a", A, 5, False)], BASIC), cfg)
    props = os.path.join(path, ".hoodie", "hoodie.properties")
    lines = [x for x in open(props).read().splitlines() if not x.startswith(f"{PAYLOAD_CLASS}=")]
    open(props, "w").write("\n".join([*lines, f"{PAYLOAD_CLASS}={OVERWRITE_PAYLOAD}"]) + "\n")
    table = HoodieTable.for_write(path, cfg)
    batch = [(1, "stale-low", A, 1, False), (1, "stale-high", A, 2, False)]
    table.upsert(spark.createDataFrame(batch, BASIC), cfg)
    assert snapshot(table, spark)["1"]["name"] == "stale-high"

"""No data value and no crafted metadata makes the core touch a file outside the table.

Writes: every hostile partition value goes through the core (COW and MOR, SIMPLE and BUCKET,
upsert, insert, bulk insert and overwrite, table versions 6 and 8, with and without urlencode).
Each is either refused with `PartitionPathError` naming the table, the column and the value,
leaving the table unchanged, or written and read back, by our reader and hudi-rs, once per key,
and updated in place by a second upsert. Nothing ever appears beside the table.

Crafted tables: commit metadata, compaction and clean plans naming files outside the table
make compaction, clean and rollback raise `UnsafePathError`, and the file outside stays.

The rules themselves, value by value, are unit tests (tests/unit/test_partition_paths.py);
here one Spark job checks that their SQL form agrees, and each write path is run once.
"""

from __future__ import annotations

import json
import os
import posixpath

import hudi
import pyarrow as pa
import pyarrow.parquet  # noqa: F401  (pa.parquet)
import pytest
from _spark_helpers import all_files, id_dt_ts_config
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F
from rs_compare import assert_same_rows, read_ours

from hoodie import HoodieTable, WriteConfig, partition_paths
from hoodie.exceptions import HoodieError, PartitionPathError, UnsafePathError
from hoodie.keygen import escape_path_name, partition_path_problem, shown

pytestmark = pytest.mark.spark

URLENCODE = "hoodie.datasource.write.partitionpath.urlencode"
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
NO_SERVICES = {"hoodie.compact.inline": "false", "hoodie.clean.automatic": "false"}
ROWS = "id int, name string, dt string, ts bigint"
LONG = "x" * 5000
LONG_SEGMENT = "s" * 256
# The hostile values. Without urlencode, all but the last three are refused; with
# urlencode, all but the two long ones are written (escaped).
HOSTILE = [
    "..", "../x", "../../x", "/abs/path", ".", ".hoodie", ".hoodie/.temp", "a//b", "a/", "/a",
    "a\nb", "a\x00b", LONG, LONG_SEGMENT, "ünï/cödé ☃", "%2E%2E", "2024/01/31",
]  # fmt: skip
SAFE_AS_IS = ["ünï/cödé ☃", "%2E%2E", "2024/01/31"]
TOO_LONG = [LONG, LONG_SEGMENT]


def tree(folder) -> dict[str, int]:
    return all_files(str(folder))


def test_sql_rules_agree_with_python(spark):
    """`keygen`'s SQL forms of the rules, the escaping and the shown value give what
    `partition_paths` gives, for every hostile value and its escaped form (one Spark job)."""
    values = HOSTILE + [partition_paths.escape_path_name(v) for v in HOSTILE] + ["", "a"]
    df = spark.createDataFrame([(v,) for v in values], "p string")
    got = df.select(
        "p",
        partition_path_problem(F.col("p")).alias("problem"),
        escape_path_name(F.col("p")).alias("escaped"),
        shown(F.col("p")).alias("shown"),
    ).collect()
    assert len(got) == len(values)
    for row in got:
        value = row["p"]
        assert row["problem"] == partition_paths.problem(value), repr(value)
        assert row["escaped"] == partition_paths.escape_path_name(value), repr(value)
        assert json.loads(row["shown"].split(" (first")[0]) == value[:100]
        assert row["shown"].endswith(partition_paths.shown(value).split('"')[-1])


def test_extreme_values_of_plain_types_make_plain_paths(spark):
    """`KeyGenerator.partition_paths_safe` skips the per-row check for partition columns of
    _PLAIN_TEXT_TYPES: their extreme values (Spark's text of them) make paths every rule
    accepts, escaped or not, within the length it assumes."""
    from hoodie.keygen import _PLAIN_TEXT_CHARACTERS, KeyGenerator

    columns = {
        "b": ("boolean", ["true", "false"]),
        "i8": ("tinyint", ["-128"]),
        "i64": ("bigint", ["-9223372036854775808"]),
        "f": ("float", ["'-Infinity'", "'NaN'", "-3.4028235E38", "1.4E-45"]),
        "d": ("double", ["-1.7976931348623157E308", "-4.9E-324", "'-Infinity'"]),
        "dec": ("decimal(38,38)", ["-0.99999999999999999999999999999999999999"]),
        "dec0": ("decimal(38,0)", ["-99999999999999999999999999999999999999"]),
        "dt": ("date", ["date '-5877641-06-23'", "date '+5881580-07-11'"]),
        "ts": ("timestamp", ["timestamp '-290308-12-21 19:59:06.224192Z'",
                             "timestamp '+294247-01-10 04:00:54.775807Z'"]),
        "ntz": ("timestamp_ntz", ["timestamp_ntz '-290308-12-21 19:59:05.224192'"]),
    }  # fmt: skip
    for name, (type_name, literals) in columns.items():
        rows = spark.sql(" union all ".join(
            f"select cast({v} as {type_name}) as `{name}`" for v in literals
        ))  # fmt: skip
        for hive, encode in ((False, False), (True, True)):
            keygen = KeyGenerator(("id",), (name,), hive, encode)
            assert keygen.partition_paths_safe(rows.schema), type_name
            got = rows.select(keygen.partition_path().alias("p"),
                              F.col(name).cast("string").alias("text")).collect()  # fmt: skip
            assert len(got) == len(literals)
            for row in got:
                assert partition_paths.problem(row["p"]) is None, (type_name, row["p"])
                assert len(row["text"]) <= _PLAIN_TEXT_CHARACTERS, row["text"]


def test_hive_style_name_too_long_is_refused_for_plain_types(spark, tmp_path):
    """Safe types do not make a hive-style column name safe: a name of 300 characters makes
    a folder name longer than file systems take, whatever the value."""
    name = "n" * 300
    path = tmp_path / "schema" / "t"
    cfg = WriteConfig.build(
        "orders",
        record_key="id",
        partition_path=name,
        precombine_field="ts",
        options={"hoodie.datasource.write.hive_style_partitioning": "true"},
    )
    batch = spark.createDataFrame([(1, 7, 1)], f"id int, {name} int, ts bigint")
    table = HoodieTable.for_write(str(path), cfg)
    before = tree(tmp_path)
    with pytest.raises(PartitionPathError, match=partition_paths.LONG_SEGMENT):
        table.upsert(batch, cfg)
    assert tree(tmp_path) == before


# Each write path once: (table type, options, the refused write, its two hostile values,
# whether the table has a commit first). The refused values rotate through the cases.
# fmt: off
REFUSED_CASES = {
    "cow simple, first write (bulk insert, one job)": (
        "COPY_ON_WRITE", {}, "upsert", ("../../x", LONG), False),
    "cow simple v8, upsert (routed, one job)": (
        "COPY_ON_WRITE", {"hoodie.write.table.version": "8"}, "upsert", ("/abs/path", "."),
        True),
    "cow simple, insert (summary)": (
        "COPY_ON_WRITE", {}, "insert", ("a\x00b", ".hoodie/.temp"), True),
    "mor bucket, upsert (one job)": ("MERGE_ON_READ", BUCKET, "upsert", ("a\nb", "/a"), True),
    "mor bucket v8, overwrite (summary)": (
        "MERGE_ON_READ", {**BUCKET, "hoodie.write.table.version": "8"}, "overwrite",
        ("a/", ".."), True),
    "mor simple, urlencode, upsert (routed)": (
        "MERGE_ON_READ", {URLENCODE: "true"}, "upsert", (LONG_SEGMENT, LONG_SEGMENT + "/b"),
        True),
    "mor simple, bulk insert into a table (lookup, summary)": (
        "MERGE_ON_READ", {}, "bulk_insert", ("a//b", ".hoodie"), True),
}
# fmt: on


@pytest.mark.parametrize("case", list(REFUSED_CASES))
def test_hostile_value_is_refused_and_nothing_changes(spark, tmp_path, case):
    table_type, options, operation, values, has_commit = REFUSED_CASES[case]
    path = tmp_path / "schema" / "t"
    cfg = id_dt_ts_config("orders", table_type, {**options, **NO_SERVICES})
    table = HoodieTable.for_write(str(path), cfg)
    if has_commit:
        table.upsert(spark.createDataFrame([(1, "a", "2024-01-01", 1)], ROWS), cfg)
    before = tree(tmp_path)
    rows = [(2, "b", "2024-01-02", 1)] + [(3 + i, "c", v, 1) for i, v in enumerate(values)]
    write = getattr(table, operation)
    with pytest.raises(PartitionPathError) as caught:
        write(spark.createDataFrame(rows, ROWS), cfg)
    message = str(caught.value)
    assert "\n" not in message and "\x00" not in message and len(message) < 600, message
    assert "table 'orders'" in message and "partition column dt" in message, message
    urlencoded = options.get(URLENCODE) == "true"
    shown = [partition_paths.shown(partition_paths.escape_path_name(v) if urlencoded else v)
             for v in values]  # fmt: skip
    assert any(text in message for text in shown), message
    assert URLENCODE in message
    after = tree(tmp_path)
    if has_commit:
        assert after == before  # not a rollback, marker or partition file
    else:  # the table's creation is all there is (no instant, no data file)
        assert set(after) <= {"schema/t/.hoodie/hoodie.properties"}, after


def _written_and_read_back(spark, tmp_path, table_type, options, values):
    """Write `values` (one key each), read them back by both readers, upsert them again and
    read the update; nothing lands beside the table."""
    path = tmp_path / "schema" / "t"
    (tmp_path / "schema" / "neighbour").mkdir(parents=True)
    cfg = id_dt_ts_config("orders", table_type, {**options, **NO_SERVICES})
    table = HoodieTable.for_write(str(path), cfg)
    rows = [(i, f"v1-{i}", v, 1) for i, v in enumerate(values)]
    table.upsert(spark.createDataFrame(rows, ROWS), cfg)
    _reads_back(spark, path, rows)
    updated = [(i, f"v2-{i}", dt, 2) for i, _, dt, _ in rows]
    table.upsert(spark.createDataFrame(updated, ROWS), cfg)
    _reads_back(spark, path, updated)
    outside = {p for p in tree(tmp_path) if not p.startswith("schema/t/")}
    assert outside == set(), outside
    return table


def _reads_back(spark, path, rows):
    ours = read_ours(spark, str(path))
    got = sorted((r["id"], r["name"], r["dt"]) for r in ours.to_pylist())
    assert got == sorted((i, name, dt) for i, name, dt, _ in rows)  # each key exactly once
    for row in ours.to_pylist():  # the stored path is the folder the row is listed under
        stored, file_id = row["_hoodie_partition_path"], row["_hoodie_file_name"].split("_")[0]
        assert posixpath.normpath(stored) == stored, stored
        assert any(file_id in name for name in os.listdir(path / stored)), stored
    theirs = pa.Table.from_batches(hudi.HudiTable(str(path)).read())
    assert_same_rows("hudi-rs", "id", ours, theirs)


ENCODED_CASES = {
    "cow simple v6": ("COPY_ON_WRITE", {}),
    "mor bucket v8": ("MERGE_ON_READ", {**BUCKET, "hoodie.write.table.version": "8"}),
}
# Merge-on-read reads each slice with logs in a Python task: fewer partitions keep it short.
MOR_VALUES = ["..", "../x", ".", ".hoodie/.temp", "a/", "a\nb", "a\x00b"]


@pytest.mark.parametrize("case", list(ENCODED_CASES))
def test_hostile_values_are_written_escaped_with_urlencode(spark, tmp_path, case):
    """With urlencode every hostile value but the too long ones is one escaped folder."""
    table_type, options = ENCODED_CASES[case]
    values = (
        MOR_VALUES if table_type == "MERGE_ON_READ" else [v for v in HOSTILE if v not in TOO_LONG]
    )
    _written_and_read_back(spark, tmp_path, table_type, {**options, URLENCODE: "true"}, values)
    folders = set(os.listdir(tmp_path / "schema" / "t"))
    assert folders >= {"%2E%2E", "%2E", "..%2Fx", "%2Ehoodie%2F.temp", "a%0Ab", "a%00b"}


def test_safe_values_are_written_as_they_are(spark, tmp_path):
    """Without urlencode, values that are safe paths (unicode, `%2E%2E` as text, Hudi's
    `2024/01/31` folders) are written as they are."""
    v8 = {"hoodie.write.table.version": "8"}
    _written_and_read_back(spark, tmp_path, "COPY_ON_WRITE", v8, SAFE_AS_IS)
    assert (tmp_path / "schema" / "t" / "%2E%2E").is_dir()
    assert (tmp_path / "schema" / "t" / "2024" / "01" / "31").is_dir()


# -- crafted tables: metadata naming files outside the table -----------------------------------
V6 = {"hoodie.write.table.version": "6", **NO_SERVICES}


def _crafted(spark, tmp_path, table_type):
    """A table with two commits under tmp/schema/t, and a victim file beside and above it."""
    path = tmp_path / "schema" / "t"
    cfg = id_dt_ts_config("orders", table_type, V6)
    table = HoodieTable.for_write(str(path), cfg)
    for ts in (1, 2):
        rows = [(1, f"v{ts}", "2024-01-01", ts), (2, f"v{ts}", "2024-01-02", ts)]
        table.upsert(spark.createDataFrame(rows, ROWS), cfg)
    for victim in (tmp_path / "victim.parquet", tmp_path / "schema" / "victim.parquet"):
        victim.write_bytes(b"not the table's")
    return table, path


def _next_instant(table) -> str:
    return str(int(table.timeline().instants[-1].timestamp) + 1)


def _untouched(tmp_path, before, error):
    assert tree(tmp_path) == before
    assert "orders" in str(error.value) or "schema/t" in str(error.value), error.value


@pytest.mark.parametrize(
    "named",
    [
        "2024-01-01/../../../victim.parquet",
        "../victim.parquet",
        "/abs/victim.parquet",
        ".hoodie/hoodie.properties",
    ],
)
def test_rollback_refuses_commit_metadata_naming_files_elsewhere(spark, tmp_path, named):
    """The latest commit's write stats name a file outside the table (or in its metadata):
    rolling it back raises before anything changes."""
    from hoodie.timeline import State

    table, path = _crafted(spark, tmp_path, "COPY_ON_WRITE")
    latest = table.timeline().completed.instants[-1]
    commit_file = path / table.meta_client.layout.path(latest.with_state(State.COMPLETED))
    data = json.loads(commit_file.read_text())
    stats = data["partitionToWriteStats"]["2024-01-01"]
    stats[0]["path"] = named
    commit_file.write_text(json.dumps(data))
    before = tree(tmp_path)
    with pytest.raises(UnsafePathError) as caught:
        table.services.rollback()
    _untouched(tmp_path, before, caught)


def test_rollback_refuses_a_marker_naming_the_tables_metadata(spark, tmp_path):
    """A marker of the latest commit names `.hoodie/hoodie.properties` as a file the commit
    created: rolling the commit back deletes nothing."""
    table, path = _crafted(spark, tmp_path, "COPY_ON_WRITE")
    latest = table.timeline().completed.instants[-1].timestamp
    marker = path / ".hoodie" / ".temp" / latest / ".hoodie" / "hoodie.properties.marker.CREATE"
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    before = tree(tmp_path)
    with pytest.raises(UnsafePathError) as caught:
        table.services.rollback()
    _untouched(tmp_path, before, caught)
    assert "'.hoodie/hoodie.properties'" in str(caught.value) or '".hoodie/hoodie.properties"' in (
        str(caught.value)
    )


def test_clean_refuses_a_plan_naming_files_elsewhere(spark, tmp_path):
    from hoodie.avro_metadata import CleanerPlan, CleanFileInfo
    from hoodie.timeline import Action, Instant, State

    table, path = _crafted(spark, tmp_path, "COPY_ON_WRITE")
    inside = next((path / "2024-01-01").glob("*.parquet"))
    plan = CleanerPlan(None, "", "KEEP_LATEST_COMMITS", {"2024-01-01": [
        CleanFileInfo(f"file:{inside}"),  # would go first: the check comes before any delete
        CleanFileInfo(f"file:{path}/2024-01-01/../../victim.parquet"),
        CleanFileInfo(f"file:{tmp_path}/victim.parquet"),
    ]})  # fmt: skip
    requested = Instant(_next_instant(table), Action.CLEAN, State.REQUESTED)
    table.meta_client.save_instant(requested, plan.to_avro())
    before = tree(tmp_path)
    with pytest.raises(UnsafePathError) as caught:
        table.services.clean()
    _untouched(tmp_path, before, caught)
    assert inside.exists()


def test_compaction_refuses_a_plan_naming_files_elsewhere(spark, tmp_path):
    from hoodie.compaction_plan import CompactionOperation, CompactionPlan
    from hoodie.timeline import Action, Instant, State

    table, path = _crafted(spark, tmp_path, "MERGE_ON_READ")
    base = table.timeline().completed.instants[0].timestamp
    op = CompactionOperation("..", "victim", base, "victim.parquet", ())
    requested = Instant(_next_instant(table), Action.COMPACTION, State.REQUESTED)
    table.meta_client.save_instant(requested, CompactionPlan([op]).to_avro())
    before = tree(tmp_path)
    with pytest.raises(UnsafePathError) as caught:
        table.services.compact(spark)
    _untouched(tmp_path, before, caught)
    assert "compaction plan" in str(caught.value)


def test_reads_ignore_commit_metadata_naming_files_elsewhere(spark, tmp_path):
    """Readers take files from the table's folders, never from paths the commit metadata
    names: a commit naming a file beside the table (a base file of the same file group, with
    other rows) changes no snapshot or incremental read."""
    from hoodie.timeline import State

    table, path = _crafted(spark, tmp_path, "COPY_ON_WRITE")
    expected = sorted((r["id"], r["name"]) for r in read_ours(spark, str(path)).to_pylist())
    latest = table.timeline().completed.instants[-1]
    commit_file = path / table.meta_client.layout.path(latest.with_state(State.COMPLETED))
    data = json.loads(commit_file.read_text())
    stat = data["partitionToWriteStats"]["2024-01-01"][0]
    real = path / stat["path"]
    planted = tmp_path / "schema" / real.name  # the same name, one folder above the table
    rows = pa.parquet.read_table(real).to_pylist()
    pa.parquet.write_table(pa.Table.from_pylist([{**r, "name": "planted"} for r in rows]), planted)
    stat["path"] = f"../{real.name}"
    data["partitionToWriteStats"]["../.."] = [{**stat, "partitionPath": "../.."}]
    commit_file.write_text(json.dumps(data))
    first = table.timeline().completed.instants[0].timestamp
    incremental = {"hoodie.datasource.query.type": "incremental",
                   "hoodie.datasource.read.begin.instanttime": first}  # fmt: skip
    for options in ({}, incremental):
        try:
            got = sorted(
                (r["id"], r["name"]) for r in read_ours(spark, str(path), **options).to_pylist()
            )
        except HoodieError as error:  # refusing the table is as good
            assert "orders" in str(error) or "schema/t" in str(error), error
            continue
        except AnalysisException as error:  # the same, raised in the data source's planning
            assert "UnsafePathError" in str(error) and "schema/t" in str(error), error
            continue
        assert got == expected if not options else "planted" not in {n for _, n in got}

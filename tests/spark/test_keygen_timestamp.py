"""Timestamp and custom key generator parts against what Apache Hudi 1.2 wrote for the same rows
(docs/design/incremental-samples/runs/keygen-1.2.0-v8.txt and merge-keygen-cluster-1.2.0-v8.txt):
each setting of the probe, one Spark job for all of them."""

from __future__ import annotations

import datetime as dt
import decimal
import re

import pytest
from pyspark.sql import functions as F

from hoodie.exceptions import InvalidConfigError
from hoodie.keygen import KeyGenerator
from hoodie.options.keygen import TimestampSpec, spark_pattern, split_typed_fields

pytestmark = pytest.mark.spark

K = "hoodie.keygen.timebased."
SCHEMA = ("id int, region string, ts_ms bigint, ts_us bigint, ts_s bigint, ts_i int, ts_d double, "
          "ts_dec decimal(12,1), day string, date date")  # fmt: skip
ROWS = [
    (1, "eu", 1767225600123, 1767225600123456, 1767225600, 490968, 1767225600.9,
     decimal.Decimal("1767225600.7"), "2026-01-01 23:30:00", dt.date(2026, 1, 1)),
    (2, "us/x", -1500, -1500, 1767299400, 0, -0.5, decimal.Decimal("-1.2"), "2026-01-02",
     dt.date(1969, 12, 31)),
    (3, None, None, None, None, None, None, None, None, None),
]  # fmt: skip


def ts(kind: str, out: str, **extra: str) -> dict[str, str]:
    return {K + "timestamp.type": kind, K + "output.dateformat": out,
            **{K + k.replace("_", "."): v for k, v in extra.items()}}  # fmt: skip


# name -> (field, settings, hive style, url encode, Apache Hudi's three partition paths)
CASES = {
    "ms-null-levels": ("ts_ms", ts("EPOCHMILLISECONDS", "yyyy/MM/dd"), False, False,
                       ["2026/01/01", "1969/12/31", "1970/01/01"]),
    "ms-fraction": ("ts_ms", ts("EPOCHMILLISECONDS", "yyyyMMddHHmmssSSS"), False, False,
                    ["20260101000000123", "19691231235958500", "19700101000000001"]),
    "us-null": ("ts_us", ts("EPOCHMICROSECONDS", "yyyy-MM-dd'T'HH-mm-ss.SSS"), False, False,
                ["2026-01-01T00-00-00.123", "1969-12-31T23-59-59.999", "1970-01-01T00-00-00.000"]),
    "unix-null-zone": ("ts_s", ts("UNIX_TIMESTAMP", "yyyy-MM-dd-HH",
                                  output_timezone="America/New_York"), False, False,
                       ["2025-12-31-19", "2026-01-01-15", "1969-12-31-19"]),
    "unix-hive-tz": ("ts_s", ts("UNIX_TIMESTAMP", "yyyy-MM-dd'T'HH",
                                output_timezone="Asia/Kolkata"), True, False,
                     ["ts_s=2026-01-01T05", "ts_s=2026-01-02T02", "ts_s=1970-01-01T05"]),
    "scalar-days": ("ts_i", ts("SCALAR", "yyyy-MM", timestamp_scalar_time_unit="DAYS"),
                    False, False, None),
    "unix-double": ("ts_d", ts("UNIX_TIMESTAMP", "yyyy-MM-dd_HH.mm.ss"), False, False,
                    ["2026-01-01_00.00.00", "1970-01-01_00.00.00", "1970-01-01_00.00.01"]),
    "unix-decimal": ("ts_dec", ts("UNIX_TIMESTAMP", "yyyy-MM-dd_HH.mm.ss"), False, False,
                     ["2026-01-01_00.00.00", "1969-12-31_23.59.59", "1970-01-01_00.00.01"]),
    "scalar-days-date": ("date", ts("SCALAR", "yyyy-MM-dd", timestamp_scalar_time_unit="DAYS"),
                         False, False, ["2026-01-01", "1969-12-31", "1970-01-02"]),
    "ms-date": ("date", ts("EPOCHMILLISECONDS", "yyyy-MM-dd"), False, False,
                ["1970-01-01", "1969-12-31", "1970-01-01"]),
    "datestring-null-zones": ("day", ts("DATE_STRING", "yyyy-MM-dd-HH",
                                        input_dateformat="yyyy-MM-dd HH:mm:ss,yyyy-MM-dd",
                                        input_timezone="America/New_York",
                                        output_timezone="Asia/Tokyo"), False, False,
                              ["2026-01-02-13", "2026-01-02-14", "1970-01-01-09"]),
    "datestring-general-zone": ("day", {**ts("DATE_STRING", "yyyyMMddHH",
                                             input_dateformat="yyyy-MM-dd HH:mm:ss;yyyy-MM-dd",
                                             timezone="Asia/Kolkata", output_timezone="UTC"),
                                        K + "input.dateformat.list.delimiter.regex": ";"},
                                False, False, ["2026010123", "2026010200", "1970010105"]),
    "mixed-strings": ("day", ts("MIXED", "yyyy/MM",
                                input_dateformat="yyyy-MM-dd HH:mm:ss,yyyy-MM-dd"), False, False,
                      ["2026/01", "2026/01", "1970/01"]),
    "hive-urlencode-levels": ("ts_ms", ts("EPOCHMILLISECONDS", "yyyy/MM/dd"), True, True,
                              ["ts_ms=2026%2F01%2F01", "ts_ms=1969%2F12%2F31",
                               "ts_ms=1970%2F01%2F01"]),
}  # fmt: skip


@pytest.fixture(scope="module")
def batch(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def test_each_setting_gives_apache_hudis_partition_paths(batch):
    columns, expected = {}, {}
    for name, (field, settings, hive, encode, paths) in CASES.items():
        keygen = KeyGenerator(("id",), (field,), hive, encode, kind="TIMESTAMP",
                              timestamp=TimestampSpec.of(settings, name))  # fmt: skip
        columns[name] = keygen.partition_path(batch.schema)
        expected[name] = paths
    got = batch.orderBy("id").select(*[c.alias(n) for n, c in columns.items()]).collect()
    for name, paths in expected.items():
        if paths is not None:
            assert [row[name] for row in got] == paths, name
    # SCALAR DAYS: 490968 days is past year 3000; 0 days the epoch; null one day after it
    assert [row["scalar-days"][-7:] for row in got][1:] == ["1970-01", "1970-01"]


def test_a_session_time_zone_changes_nothing(spark, batch):
    keygen = KeyGenerator(("id",), ("day",), kind="TIMESTAMP", timestamp=TimestampSpec.of(
        CASES["datestring-null-zones"][1], "t"))  # fmt: skip
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "Pacific/Auckland")
        got = [r[0] for r in batch.orderBy("id").select(keygen.partition_path(batch.schema))
               .collect()]  # fmt: skip
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert got == CASES["datestring-null-zones"][4]


def test_custom_parts_as_apache_hudi_wrote_them(batch):
    """`region:SIMPLE,ts_ms:TIMESTAMP` with hive style and urlencode per part; one record key
    field keeps its plain value, two are `f:v` pairs (the probe's custom cases)."""
    names, types = split_typed_fields(("region:SIMPLE", "ts_ms:TIMESTAMP"))
    spec = TimestampSpec.of(ts("EPOCHMILLISECONDS", "yyyy/MM"), "custom")
    one = KeyGenerator(("id",), names, True, True, kind="CUSTOM", partition_types=types,
                       timestamp=spec)  # fmt: skip
    two = KeyGenerator(
        ("id", "region"),
        names,
        kind="CUSTOM",
        partition_types=types,
        timestamp=TimestampSpec.of(ts("EPOCHMILLISECONDS", "yyyyMMdd"), "c"),
    )
    got = batch.orderBy("id").select(
        one.record_key().alias("k1"), one.partition_path(batch.schema).alias("p1"),
        two.record_key().alias("k2"), two.partition_path(batch.schema).alias("p2"),
    ).collect()  # fmt: skip
    assert [r["k1"] for r in got] == ["1", "2", "3"]
    assert [r["p1"] for r in got] == [
        "region=eu/ts_ms=2026%2F01", "region=us%2Fx/ts_ms=1969%2F12",
        "region=__HIVE_DEFAULT_PARTITION__/ts_ms=1970%2F01",
    ]  # fmt: skip
    assert [r["k2"] for r in got][0] == "id:1,region:eu"
    assert [r["p2"] for r in got][0] == "eu/20260101"
    assert one.class_name == "org.apache.hudi.keygen.CustomKeyGenerator"


def test_an_unreadable_string_fails_through_the_callers_error(batch):
    spec = TimestampSpec.of(ts("DATE_STRING", "yyyy", input_dateformat="yyyy-MM-dd"), "t")
    keygen = KeyGenerator(("id",), ("region",), kind="TIMESTAMP", timestamp=spec)
    quiet = batch.select(keygen.partition_path(batch.schema)).collect()
    assert [r[0] for r in quiet] == [None, None, "1970"]  # null: the epoch's text reads back
    loud = keygen.partition_path(batch.schema, lambda text, field: F.raise_error(
        F.concat(F.lit(f"{field}: "), text)))  # fmt: skip
    with pytest.raises(Exception, match="region: eu"):
        batch.filter("id = 1").select(loud).collect()


@pytest.mark.parametrize(("kind", "field"), [("UNIX_TIMESTAMP", "day"), ("MIXED", "ts_ms"),
                                             ("DATE_STRING", "date")])  # fmt: skip
def test_a_column_the_type_cannot_read_is_refused_before_any_job(batch, kind, field):
    spec = TimestampSpec.of(ts(kind, "yyyy", input_dateformat="yyyy-MM-dd"), "t")
    keygen = KeyGenerator(("id",), (field,), kind="TIMESTAMP", timestamp=spec)
    with pytest.raises(InvalidConfigError, match=f"partition field {field} is"):
        keygen.partition_path(batch.schema)


def test_joda_patterns_are_translated_or_refused_by_name():
    assert spark_pattern("k", "yyyy-MM-dd'T'HH:mm:ss.SSS") == "yyyy-MM-dd'T'HH:mm:ss.SSS"
    assert spark_pattern("k", "yyyy[MM]#''") == "yyyy'['MM']''#'''"
    for pattern, letter in (("yyyy-MM-ddZ", "'Z' (time zone offset"), ("EEE", "'E' (day of week"),
                            ("hh a", "'h' (clockhour"), ("ww", "'w' (week")):  # fmt: skip
        with pytest.raises(InvalidConfigError, match=re.escape(letter)):
            spark_pattern("k", pattern)
    with pytest.raises(InvalidConfigError, match="'MMM' is not supported"):
        spark_pattern("k", "dd-MMM-yyyy")
    with pytest.raises(InvalidConfigError, match="'yy' is not supported in an input"):
        TimestampSpec.of(ts("DATE_STRING", "yyyy", input_dateformat="dd-MM-yy"), "t")
    assert spark_pattern("k", "yy") == "yy"  # (writing two digits is the same in both)
    with pytest.raises(InvalidConfigError, match="unclosed quote"):
        spark_pattern("k", "yyyy'T")
    with pytest.raises(InvalidConfigError, match="not a time zone"):
        TimestampSpec.of(ts("UNIX_TIMESTAMP", "yyyy", output_timezone="Mars/Olympus"), "t")
    with pytest.raises(InvalidConfigError, match="needs hoodie.keygen.timebased.input"):
        TimestampSpec.of(ts("DATE_STRING", "yyyy"), "t")

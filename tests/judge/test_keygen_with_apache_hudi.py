"""Timestamp and custom key generators with Apache Hudi (issue 42, step 8): the same rows
written by Apache Hudi 1.2 and by us through each key generator setting of the probe
(docs/design/incremental-samples/keygen_probe.py) give byte-identical `_hoodie_record_key`,
`_hoodie_partition_path` and folder names, and the same keygen keys in `hoodie.properties`;
each side reads the other's table (Apache Hudi's reader cannot read a custom key generator's
table with a timestamp part, its own included: it parses the folder back into the column),
hudi-rs reads ours.

The default suite runs one setting (a DATE_STRING timestamp table with zones and a null;
tests/spark/test_keygen_timestamp.py checks every setting's expressions against the probe's
recorded outputs); the rest run under hudi_full.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
from pathlib import Path

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, ApacheHudiError, datasource_options
from rs_compare import assert_same_rows, read_ours, read_theirs

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import InvalidConfigError, PartitionPathError, TableIdentityError
from hoodie.keygen import KeyGenerator
from hoodie.options.keygen import TimestampSpec
from hoodie.properties import loads

pytestmark = pytest.mark.spark

TS = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
CUSTOM = "org.apache.hudi.keygen.CustomKeyGenerator"
K = "hoodie.keygen.timebased."
META = ["_hoodie_record_key", "_hoodie_partition_path", "id"]
PROPERTY_KEYS = ("hoodie.table.keygenerator.", "hoodie.table.partition.fields", "hoodie.keygen.")


def rows() -> pa.Table:
    return pa.table({
        "id": pa.array([1, 2, 3], pa.int32()),
        "region": ["eu", "us/x", None],
        "ts": pa.array([1, 1, 1], pa.int64()),
        "ts_ms": pa.array([1767225600123, -1500, None], pa.int64()),
        "ts_s": pa.array([1767225600, 1767299400, None], pa.int64()),
        "ts_dec": pa.array([decimal.Decimal("1767225600.7"), decimal.Decimal("-1.2"), None],
                           pa.decimal128(12, 1)),
        "day": ["2026-01-01 23:30:00", "2026-01-02", None],
    })  # fmt: skip


DDL = (
    "id int, region string, ts bigint, ts_ms bigint, ts_s bigint, ts_dec decimal(12,1), day string"
)


def frame(spark, table: pa.Table | None = None):
    return spark.createDataFrame((table or rows()).to_pylist(), DDL)


def ts(field: str, kind: str, out: str, **extra: str) -> dict[str, str]:
    return {"hoodie.datasource.write.keygenerator.class": TS,
            "hoodie.datasource.write.partitionpath.field": field,
            K + "timestamp.type": kind, K + "output.dateformat": out,
            **{(k if k.startswith("hoodie.") else K + k): v for k, v in extra.items()}}  # fmt: skip


HIVE = "hoodie.datasource.write.hive_style_partitioning"
ENCODE = "hoodie.datasource.write.partitionpath.urlencode"
DEFAULT = {
    "datestring-zones": ts("day", "DATE_STRING", "yyyy-MM-dd-HH",
                           **{"input.dateformat": "yyyy-MM-dd HH:mm:ss,yyyy-MM-dd",
                              "input.timezone": "America/New_York",
                              "output.timezone": "Asia/Tokyo"}),
    "custom-hive-urlencode": {
        "hoodie.datasource.write.keygenerator.class": CUSTOM,
        "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts_ms:TIMESTAMP",
        K + "timestamp.type": "EPOCHMILLISECONDS", K + "output.dateformat": "yyyy/MM",
        HIVE: "true", ENCODE: "true",
    },
}  # fmt: skip
FULL = {
    "millis-levels": ts("ts_ms", "EPOCHMILLISECONDS", "yyyy/MM/dd"),
    "unix-hive-zone": ts("ts_s", "UNIX_TIMESTAMP", "yyyy-MM-dd'T'HH",
                         **{"output.timezone": "Asia/Kolkata", HIVE: "true"}),
    "decimal-seconds": ts("ts_dec", "UNIX_TIMESTAMP", "yyyy-MM-dd_HH.mm.ss.SSS"),
    "general-zone": ts("day", "MIXED", "yyyyMMddHH",
                       **{"input.dateformat": "yyyy-MM-dd HH:mm:ss;yyyy-MM-dd",
                          "input.dateformat.list.delimiter.regex": ";",
                          "timezone": "Asia/Kolkata", "output.timezone": "UTC"}),
    "deltastreamer-aliases": {
        "hoodie.datasource.write.keygenerator.class": TS,
        "hoodie.datasource.write.partitionpath.field": "ts_ms",
        "hoodie.deltastreamer.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.deltastreamer.keygen.timebased.output.dateformat": "yyyy-MM",
    },
    "custom-two-keys": {
        "hoodie.datasource.write.keygenerator.class": CUSTOM,
        "hoodie.datasource.write.recordkey.field": "id,region",
        "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts_ms:TIMESTAMP",
        K + "timestamp.type": "EPOCHMILLISECONDS", K + "output.dateformat": "yyyyMMdd",
    },
    "custom-by-type": {
        "hoodie.datasource.write.keygenerator.type": "CUSTOM",
        "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts_s:TIMESTAMP",
        K + "timestamp.type": "SCALAR", K + "timestamp.scalar.time.unit": "SECONDS",
        K + "output.dateformat": "yyyy",
    },
}  # fmt: skip


def written(root: Path) -> tuple[list[dict], list[str], dict[str, str]]:
    """The stored keys by id (read from the base files), the partition folders and the keygen
    keys of `hoodie.properties`."""
    files = sorted(root.rglob("*.parquet"))
    files = [f for f in files if ".hoodie" not in f.relative_to(root).parts]
    table = pa.concat_tables([pa.parquet.read_table(f, columns=META) for f in files])
    keys = table.sort_by("id").to_pylist()
    folders = sorted({str(f.parent.relative_to(root)) for f in files})
    props = loads((root / ".hoodie" / "hoodie.properties").read_text())
    kept = {k: v for k, v in props.items() if k.startswith(PROPERTY_KEYS)}
    return keys, folders, kept


def write_both(spark, apache_hudi, tmp_path: Path, name: str, options: dict[str, str],
               version: str = HUDI_1, table_version: int = 8) -> tuple[Path, Path]:  # fmt: skip
    theirs, ours = tmp_path / f"theirs-{name}", tmp_path / f"ours-{name}"
    hudi = {**datasource_options("kg", "cow"), **options}
    if version == HUDI_1:
        hudi["hoodie.write.table.version"] = str(table_version)
    apache_hudi(version).write(str(theirs), rows(), hudi)
    cfg = WriteConfig.build("kg", precombine_field="ts", options={
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.write.table.version": str(table_version), **options})  # fmt: skip
    HoodieTable.for_write(str(ours), cfg).upsert(frame(spark), cfg)
    return theirs, ours


def assert_same_keys(name: str, theirs: Path, ours: Path, table_version: int) -> None:
    their_keys, their_folders, their_props = written(theirs)
    our_keys, our_folders, our_props = written(ours)
    assert our_keys == their_keys, name
    assert our_folders == their_folders, name
    if table_version == 8:  # (1.2 names the key generator by type at version 6 too; 0.15 and
        assert our_props == {
            **their_props,
            **{  # we by class there)
                k: v for k, v in our_props.items() if k == "hoodie.table.keygenerator.class"
            },
        }, name
    else:
        for key in (k for k in their_props if k.startswith("hoodie.keygen.")):
            assert our_props[key] == their_props[key], (name, key)


def each_reads_the_other(spark, apache_hudi, name, theirs: Path, ours: Path, custom: bool,
                         hudi_reads: bool = True):  # fmt: skip
    from hudi import HudiTableBuilder

    by_id = "id"
    mine_of_theirs = read_ours(spark, str(theirs)).select(META).sort_by("id").to_pylist()
    assert mine_of_theirs == written(theirs)[0], name
    if custom:  # the SIMPLE part prunes, the TIMESTAMP part's column is read from the files
        read = spark.read.format("hoodie").load(str(ours))
        found = read.where("region = 'eu' and ts_ms = 1767225600123").collect()
        assert [r.id for r in found] == [1]
        assert read.where("ts_ms is null").count() == 1
        # hudi-rs 0.5 takes `region\:SIMPLE` for a column name, on Apache Hudi's table too
        for root in (theirs, ours):
            with pytest.raises(Exception, match="SIMPLE. declared in .hoodie.table.partition"):
                read_theirs(HudiTableBuilder.from_base_uri(str(root)).build())
        return
    rs = read_theirs(HudiTableBuilder.from_base_uri(str(ours)).build())
    mine = read_ours(spark, str(ours))
    assert_same_rows(f"{name}: hudi-rs of ours", by_id, mine, rs.select(mine.column_names))
    if not hudi_reads:
        return
    # Apache Hudi reads ours as its own: the data, and the partition column as a string (its
    # reader's type for a timestamp partition); we read its table as it does
    data = [c for c in rows().column_names if c != "id"]
    their_own = apache_hudi(HUDI_1).read(str(theirs)).select([*META, *data])
    assert_same_rows(f"{name}: ours of theirs", by_id, read_ours(spark, str(theirs)).select(META),
                     their_own.select(META))  # fmt: skip
    of_ours = apache_hudi(HUDI_1).read(str(ours)).select([*META, *data])
    assert_same_rows(f"{name}: theirs of ours", by_id, of_ours, their_own)


@pytest.mark.parametrize("name", [
    "datestring-zones",
    pytest.param("custom-hive-urlencode", marks=pytest.mark.hudi_full),
])  # fmt: skip
def test_same_keys_as_apache_hudi(spark, apache_hudi, tmp_path, name):
    """(Apache Hudi's reads of both tables: under hudi_full, in the next test.)"""
    theirs, ours = write_both(spark, apache_hudi, tmp_path, name, DEFAULT[name])
    assert_same_keys(name, theirs, ours, 8)
    each_reads_the_other(spark, apache_hudi, name, theirs, ours, name.startswith("custom"),
                         hudi_reads=False)  # fmt: skip


@pytest.mark.hudi_full
@pytest.mark.parametrize("name", [*FULL, "datestring-zones"])
def test_same_keys_as_apache_hudi_full(spark, apache_hudi, tmp_path, name):
    theirs, ours = write_both(spark, apache_hudi, tmp_path, name, {**FULL, **DEFAULT}[name])
    assert_same_keys(name, theirs, ours, 8)
    each_reads_the_other(spark, apache_hudi, name, theirs, ours, name.startswith("custom"))


@pytest.mark.hudi_full
@pytest.mark.parametrize(("version", "name"), [(HUDI_1, "datestring-zones"),
                                               (HUDI_0, "datestring-zones"),
                                               (HUDI_0, "custom-hive-urlencode")])  # fmt: skip
def test_same_keys_at_table_version_6(spark, apache_hudi, tmp_path, version, name):
    theirs, ours = write_both(spark, apache_hudi, tmp_path, name, DEFAULT[name], version, 6)
    assert_same_keys(name, theirs, ours, 6)


@pytest.mark.hudi_full
def test_apache_hudi_upserts_into_our_timestamp_table(spark, apache_hudi, tmp_path):
    """Its later write finds our records where its key generator puts them (one row per key,
    the updated ones in place); ours finds its records likewise, without repeating the
    settings (they are the table's)."""
    options = FULL["millis-levels"]
    _, ours = write_both(spark, apache_hudi, tmp_path, "up", options)
    again = rows().set_column(2, "ts", pa.array([2, 2, 2], pa.int64()))
    apache_hudi(HUDI_1).write(
        str(ours),
        again,
        {**datasource_options("kg", "cow"), **options, "hoodie.write.table.version": "8"},
    )
    got = read_ours(spark, str(ours)).sort_by("id")
    assert got.column("ts").to_pylist() == [2, 2, 2]
    cfg = WriteConfig.build("kg", record_key="id", partition_path="ts_ms", precombine_field="ts")
    third = rows().set_column(2, "ts", pa.array([3, 3, 3], pa.int64()))
    HoodieTable.open(str(ours)).upsert(frame(spark, third), cfg)
    assert read_ours(spark, str(ours)).sort_by("id").column("ts").to_pylist() == [3, 3, 3]
    assert written(ours)[1] == ["1969/12/31", "1970/01/01", "2026/01/01"]


def test_a_later_write_keeps_the_tables_key_generator_or_is_refused(spark, tmp_path):
    """Unsaid, the key generator and its settings are the table's; said otherwise, refused;
    hostile patterns and values never leave the table."""
    path = str(tmp_path / "t")
    options = {**DEFAULT["datestring-zones"], "hoodie.datasource.write.recordkey.field": "id"}
    cfg = WriteConfig.build("kg", precombine_field="ts", options=options)
    table = HoodieTable.for_write(path, cfg)
    table.upsert(frame(spark), cfg)
    plain = WriteConfig.build("kg", record_key="id", partition_path="day", precombine_field="ts")
    table.upsert(frame(spark), plain)  # the table's settings
    read = spark.read.format("hoodie").load(path)
    # a filter on the source column is not decided by the folder (`2026-01-02-14`)
    assert read.where("day = '2026-01-02'").select("id").collect()[0][0] == 2
    assert written(Path(path))[1] == ["1970-01-01-09", "2026-01-02-13", "2026-01-02-14"]
    other = dict(options, **{K + "output.timezone": "UTC"})
    with pytest.raises(TableIdentityError, match="hoodie.keygen.timebased"):
        table.upsert(frame(spark), WriteConfig.build("kg", precombine_field="ts", options=other))
    dots = ts("ts_ms", "EPOCHMILLISECONDS", "'..'/yyyy",
              **{"hoodie.datasource.write.recordkey.field": "id"})  # fmt: skip
    escape = str(tmp_path / "dots")
    with pytest.raises(PartitionPathError, match=r"\.\./"):
        dcfg = WriteConfig.build("kg", precombine_field="ts", options=dots)
        HoodieTable.for_write(escape, dcfg).upsert(frame(spark), dcfg)
    assert not list(tmp_path.glob("*.parquet")) and not (tmp_path / "1970").exists()
    with pytest.raises(InvalidConfigError, match="'Z' \\(time zone offset"):
        WriteConfig.build("kg", precombine_field="ts", options=dict(
            options, **{K + "output.dateformat": "yyyy-MM-ddZ"}))  # fmt: skip


def test_apache_hudis_other_key_generators_are_refused_by_name():
    for key, value, name in (
        ("hoodie.datasource.write.keygenerator.class",
         "org.apache.hudi.keygen.GlobalDeleteKeyGenerator", "GLOBAL_DELETE"),
        ("hoodie.datasource.write.keygenerator.type", "SIMPLE_AVRO", "Apache Hudi's"),
    ):  # fmt: skip
        with pytest.raises(InvalidConfigError, match=name):
            WriteConfig.build("kg", record_key="id", options={key: value})
    with pytest.raises(ApacheHudiError if False else InvalidConfigError, match="column:SIMPLE"):
        WriteConfig.build("kg", record_key="id", partition_path="region", options={
            "hoodie.datasource.write.keygenerator.class": CUSTOM})  # fmt: skip


@pytest.mark.hudi_full
def test_the_upgrade_types_a_custom_key_generators_partition_fields(spark, apache_hudi, tmp_path):
    """Version 6 keeps a custom key generator's fields plain (as Apache Hudi 0.15 and 1.2 write
    them); the upgrade names the key generator by class and type and types the fields from the
    writer's config, as Apache Hudi's upgrade does; Apache Hudi 1.2 then writes the same keys."""
    path = tmp_path / "up"
    options = {**DEFAULT["custom-hive-urlencode"], "hoodie.datasource.write.recordkey.field": "id"}
    cfg = WriteConfig.build("kg", precombine_field="ts", options=options)
    HoodieTable.for_write(str(path), cfg).upsert(frame(spark), cfg)
    assert written(path)[2]["hoodie.table.partition.fields"] == "region,ts_ms"
    table = HoodieTable.open(str(path))
    table.services.upgrade(spark, cfg)
    props = written(path)[2]
    assert props["hoodie.table.partition.fields"] == "region:SIMPLE,ts_ms:TIMESTAMP"
    assert props["hoodie.table.keygenerator.type"] == "CUSTOM"
    assert props["hoodie.table.keygenerator.class"] == CUSTOM
    before = written(path)[:2]
    again = rows().set_column(2, "ts", pa.array([2, 2, 2], pa.int64()))
    hudi = {**datasource_options("kg", "cow"), **options, "hoodie.write.table.version": "8"}
    apache_hudi(HUDI_1).write(str(path), again, hudi)
    assert written(path)[1] == before[1]  # its upsert found our records where they are
    got = read_ours(spark, str(path)).sort_by("id")
    assert got.column("ts").to_pylist() == [2, 2, 2]


@pytest.mark.full
def test_a_string_no_input_format_reads_stops_the_write(spark, tmp_path):
    """As Apache Hudi fails its write (the probe's `datestring-unparsable`), naming the value."""
    bad = {**DEFAULT["datestring-zones"], "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "region"}  # fmt: skip
    cfg = WriteConfig.build("kg", precombine_field="ts", options=bad)
    with pytest.raises(PartitionPathError, match=r'value "(eu|us/x)" is read by none'):
        HoodieTable.for_write(str(tmp_path / "bad"), cfg).upsert(frame(spark), cfg)
    assert not list((tmp_path / "bad").rglob("*.parquet"))


def drawn_setting(rng: random.Random) -> tuple[dict[str, str], pa.Array]:
    """A timestamp setting and 12 values of its type (a null among them), drawn."""
    kind = rng.choice(["UNIX_TIMESTAMP", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR",
                       "DATE_STRING"])  # fmt: skip
    output = rng.choice(["yyyy/MM/dd", "yyyyMMddHH", "yyyy-MM-dd'T'HH.mm.ss.SSS",
                         "y-M-d-H-m-s-S", "yy/MM", "'day='dd_HH"])  # fmt: skip
    zone = rng.choice(["UTC", "Asia/Kolkata", "America/New_York", "GMT+05:30",
                       "Australia/Lord_Howe"])  # fmt: skip
    settings = {K + "timestamp.type": kind, K + "output.dateformat": output,
                K + "output.timezone": zone}  # fmt: skip
    seconds = [rng.randint(-2_000_000_000, 4_000_000_000) for _ in range(11)]
    if kind == "DATE_STRING":
        settings[K + "input.dateformat"] = "yyyy-MM-dd HH:mm:ss,yyyy-MM-dd"
        settings[K + "input.timezone"] = rng.choice(["UTC", "Asia/Kolkata"])
        tz = dt.timezone(dt.timedelta(hours=5, minutes=30)) if "Kolkata" in settings[
            K + "input.timezone"] else dt.timezone.utc  # fmt: skip
        moments = [dt.datetime.fromtimestamp(max(s, 0), tz) for s in seconds]
        texts = [m.strftime("%Y-%m-%d %H:%M:%S" if i % 3 else "%Y-%m-%d")
                 for i, m in enumerate(moments)]  # fmt: skip
        return settings, pa.array([*texts, None], pa.string())
    unit = {"UNIX_TIMESTAMP": 1, "EPOCHMILLISECONDS": 1000, "EPOCHMICROSECONDS": 1_000_000}
    if kind == "SCALAR":
        name, per_second = rng.choice([("MINUTES", 1 / 60), ("HOURS", 1 / 3600), ("SECONDS", 1)])
        settings[K + "timestamp.scalar.time.unit"] = name
        values = [int(s * per_second) for s in seconds]
    else:
        values = [s * unit[kind] + rng.randint(0, unit[kind] - 1) for s in seconds]
    return settings, pa.array([*values, None], pa.int64())


@pytest.mark.hudi_full
def test_drawn_settings_give_apache_hudis_partition_paths(spark, apache_hudi, tmp_path):
    """Settings and values drawn (seeded): Apache Hudi writes them, our expression computes the
    paths of the same rows."""
    rng = random.Random(20261206)
    for draw in range(6):
        settings, values = drawn_setting(rng)
        rows_ = pa.table({"id": pa.array(range(len(values)), pa.int32()),
                          "ts": pa.array([1] * len(values), pa.int64()), "v": values})  # fmt: skip
        options = {**datasource_options("kg", "cow"), **settings,
                   "hoodie.datasource.write.keygenerator.class": TS,
                   "hoodie.datasource.write.partitionpath.field": "v",
                   "hoodie.write.table.version": "8"}  # fmt: skip
        root = tmp_path / f"draw-{draw}"
        apache_hudi(HUDI_1).write(str(root), rows_, options)
        theirs = [r["_hoodie_partition_path"] for r in written(root)[0]]
        kind = "string" if pa.types.is_string(values.type) else "bigint"
        batch = spark.createDataFrame(rows_.to_pylist(), f"id int, ts bigint, v {kind}")
        keygen = KeyGenerator(("id",), ("v",), kind="TIMESTAMP",
                              timestamp=TimestampSpec.of(settings, "drawn"))  # fmt: skip
        ours = [r[0] for r in batch.orderBy("id").select(keygen.partition_path(batch.schema))
                .collect()]  # fmt: skip
        assert ours == theirs, (draw, settings)

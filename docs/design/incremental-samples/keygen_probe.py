"""Makes Apache Hudi write one small table per timestamp / custom key generator setting and
prints the keys, partition paths, folders and keygen keys of `hoodie.properties` (research
and judge data for step 8 of docs/design/incremental-pipelines.md: null values, zones,
number types, aliases, custom parts, refusals).

    PYTHONPATH=tests:. .venv/bin/python docs/design/incremental-samples/keygen_probe.py \
        1.2.0 8 OUT > docs/design/incremental-samples/runs/keygen-1.2.0-v8.txt
    (runs/keygen-1.2.0-v6.txt and keygen-0.15.0-v6.txt: `1.2.0 6` / `0.15.0 6 OUT
    ms-null-levels datestring-null-zones custom-one-key-hive-enc custom-simple-only`)
"""

from __future__ import annotations

import datetime as dt
import decimal
import sys
from pathlib import Path

import pyarrow as pa
from apache_hudi import ApacheHudi, datasource_options

TS = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
CUSTOM = "org.apache.hudi.keygen.CustomKeyGenerator"
K = "hoodie.keygen.timebased."
UTC = dt.timezone.utc


def rows() -> pa.Table:
    return pa.table(
        {
            "id": [1, 2, 3],
            "region": ["eu", "us/x", None],
            "ts": [1, 1, 1],
            "ts_ms": pa.array([1767225600123, -1500, None], pa.int64()),
            "ts_us": pa.array([1767225600123456, -1500, None], pa.int64()),
            "ts_s": pa.array([1767225600, 1767299400, None], pa.int64()),
            "ts_i": pa.array([490968, 0, None], pa.int32()),  # hours
            "ts_d": pa.array([1767225600.9, -0.5, None], pa.float64()),
            "ts_dec": pa.array(
                [decimal.Decimal("1767225600.7"), decimal.Decimal("-1.2"), None],
                pa.decimal128(12, 1),
            ),  # fmt: skip
            "day": ["2026-01-01 23:30:00", "2026-01-02", None],
            "date": pa.array([dt.date(2026, 1, 1), dt.date(1969, 12, 31), None], pa.date32()),
            "tstamp": pa.array(
                [
                    dt.datetime(2026, 1, 1, 5, 6, 7, 123456, UTC),
                    dt.datetime(1970, 1, 1, tzinfo=UTC),
                    None,
                ],
                pa.timestamp("us", "UTC"),
            ),  # fmt: skip
        }
    )


def ts(field: str, kind: str, out: str, **extra: str) -> dict[str, str]:
    opts = {
        "hoodie.datasource.write.keygenerator.class": TS,
        "hoodie.datasource.write.partitionpath.field": field,
        K + "timestamp.type": kind,
        K + "output.dateformat": out,
    }
    opts.update({(k if k.startswith("hoodie.") else K + k): v for k, v in extra.items()})
    return opts


CASES = {
    "ms-null-levels": ts("ts_ms", "EPOCHMILLISECONDS", "yyyy/MM/dd"),
    "ms-fraction": ts("ts_ms", "EPOCHMILLISECONDS", "yyyyMMddHHmmssSSS"),
    "us-null": ts("ts_us", "EPOCHMICROSECONDS", "yyyy-MM-dd'T'HH-mm-ss.SSS"),
    "unix-null-zone": ts(
        "ts_s", "UNIX_TIMESTAMP", "yyyy-MM-dd-HH", **{"output.timezone": "America/New_York"}
    ),
    "scalar-hours-int": ts(
        "ts_i", "SCALAR", "yyyy-MM-dd-HH", **{"timestamp.scalar.time.unit": "hours"}
    ),
    "scalar-default-unit": ts("ts_s", "SCALAR", "yyyy-MM-dd"),
    "unix-double": ts("ts_d", "UNIX_TIMESTAMP", "yyyy-MM-dd_HH.mm.ss"),
    "unix-decimal": ts("ts_dec", "UNIX_TIMESTAMP", "yyyy-MM-dd_HH.mm.ss"),
    "scalar-days-date": ts(
        "date", "SCALAR", "yyyy-MM-dd", **{"timestamp.scalar.time.unit": "DAYS"}
    ),
    "ms-date": ts("date", "EPOCHMILLISECONDS", "yyyy-MM-dd"),
    "us-timestamp": ts("tstamp", "EPOCHMICROSECONDS", "yyyy-MM-dd-HH"),
    "datestring-null-zones": ts(
        "day",
        "DATE_STRING",
        "yyyy-MM-dd-HH",
        **{
            "input.dateformat": "yyyy-MM-dd HH:mm:ss,yyyy-MM-dd",
            "input.timezone": "America/New_York",
            "output.timezone": "Asia/Tokyo",
        },
    ),
    "datestring-general-zone": ts(
        "day",
        "DATE_STRING",
        "yyyyMMddHH",
        **{
            "input.dateformat": "yyyy-MM-dd HH:mm:ss;yyyy-MM-dd",
            "input.dateformat.list.delimiter.regex": ";",
            "timezone": "Asia/Kolkata",
            "output.timezone": "UTC",
        },
    ),
    "mixed-strings": ts(
        "day", "MIXED", "yyyy/MM", **{"input.dateformat": "yyyy-MM-dd HH:mm:ss,yyyy-MM-dd"}
    ),
    "mixed-number": ts("ts_ms", "MIXED", "yyyy/MM", **{"input.dateformat": "yyyy-MM-dd"}),
    "unix-on-string": ts("day", "UNIX_TIMESTAMP", "yyyy"),
    "datestring-unparsable": ts(
        "region", "DATE_STRING", "yyyy", **{"input.dateformat": "yyyy-MM-dd"}
    ),
    "deltastreamer-aliases": {
        "hoodie.datasource.write.keygenerator.class": TS,
        "hoodie.datasource.write.partitionpath.field": "ts_ms",
        "hoodie.deltastreamer.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.deltastreamer.keygen.timebased.output.dateformat": "yyyy-MM",
        "hoodie.deltastreamer.keygen.timebased.output.timezone": "Asia/Kolkata",
    },
    "hive-urlencode-levels": ts(
        "ts_ms",
        "EPOCHMILLISECONDS",
        "yyyy/MM/dd",
        **{
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.partitionpath.urlencode": "true",
        },
    ),
    "hive-levels": ts(
        "ts_ms",
        "EPOCHMILLISECONDS",
        "yyyy/MM",
        **{"hoodie.datasource.write.hive_style_partitioning": "true"},
    ),
    "dotdot-literal": ts("ts_ms", "EPOCHMILLISECONDS", "'..'/yyyy"),
    "two-record-keys": {
        **ts("ts_ms", "EPOCHMILLISECONDS", "yyyy"),
        "hoodie.datasource.write.recordkey.field": "id,region",
    },
    "custom-one-key-hive-enc": {
        "hoodie.datasource.write.keygenerator.class": CUSTOM,
        "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts_ms:TIMESTAMP",
        K + "timestamp.type": "EPOCHMILLISECONDS",
        K + "output.dateformat": "yyyy/MM",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.urlencode": "true",
    },
    "custom-untyped": {
        "hoodie.datasource.write.keygenerator.class": CUSTOM,
        "hoodie.datasource.write.partitionpath.field": "region,ts_ms:TIMESTAMP",
        K + "timestamp.type": "EPOCHMILLISECONDS",
        K + "output.dateformat": "yyyy",
    },
    "custom-simple-only": {
        "hoodie.datasource.write.keygenerator.class": CUSTOM,
        "hoodie.datasource.write.recordkey.field": "id,region",
        "hoodie.datasource.write.partitionpath.field": "region:simple",
    },
    "custom-no-partition": {
        "hoodie.datasource.write.keygenerator.class": CUSTOM,
        "hoodie.datasource.write.partitionpath.field": "",
    },
    "custom-type-only": {
        "hoodie.datasource.write.keygenerator.type": "CUSTOM",
        "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts_ms:TIMESTAMP",
        K + "timestamp.type": "EPOCHMILLISECONDS",
        K + "output.dateformat": "yyyy",
    },
}


def props(root: Path) -> str:
    text = (root / ".hoodie" / "hoodie.properties").read_text()
    keys = ("keygen", "partition", "hive_style", "urlencode", "table.version")
    return "\n".join(f"    {line}" for line in sorted(text.splitlines())
                     if not line.startswith("#") and any(k in line for k in keys))  # fmt: skip


def main() -> None:
    version, table_version, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    only = set(sys.argv[4:])
    judge = ApacheHudi(version)
    try:
        for name, extra in CASES.items():
            if only and name not in only:
                continue
            root = out / f"keygen-{version}-v{table_version}-{name}"
            print(f"########## {name} {extra}", flush=True)
            opts = datasource_options("keygen_probe", "cow", "upsert")
            opts.update(extra)
            if version.startswith("1."):
                opts["hoodie.write.table.version"] = table_version
            try:
                judge.write(str(root), rows(), opts)
                got = judge.read(str(root)).select(
                    ["_hoodie_record_key", "_hoodie_partition_path", "id"]
                )
                for row in got.sort_by("id").to_pylist():
                    print(f"  {row}")
                folders = sorted({str(p.parent.relative_to(root)) for p in root.rglob("*.parquet")})
                print(f"  folders: {folders}")
                print(props(root), flush=True)
            except Exception as exc:  # noqa: BLE001
                print(f"  !! {type(exc).__name__}: {str(exc)[:600]}", flush=True)
    finally:
        judge.close()


if __name__ == "__main__":
    main()

"""Makes Apache Hudi write small tables with payload classes and merge modes, key generators and
clustering, and dumps what it wrote (research for docs/design/incremental-pipelines.md).

    PYTHONPATH=tests:. .venv/bin/python docs/design/incremental-samples/merge_keygen_cluster_probe.py \
        1.2.0 8 OUT [merge] [keygen] [cluster]
    ... 0.15.0 6 OUT ...

merge: a merge-on-read table per payload class (and, on 1.x, per merge mode), two upserts
(key 1: a stale update with a null column; key 2: a newer update with a null column) and the
snapshot read, with hoodie.properties' merge keys; on 1.x with table version 6 the table is then
written once with hoodie.write.table.version=8 (the upgrade) and its keys dumped again.
keygen: one table per key generator setting; the stored keys and partition paths, and the
keygen keys of hoodie.properties. cluster: a copy-on-write table of three bulk inserts (three
small file groups) then inline clustering sorted by a column; the timeline files and the
decoded clustering plan and replace commit metadata.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import fastavro
import pyarrow as pa
from apache_hudi import ApacheHudi, datasource_options

PAYLOADS = [
    "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload",
    "org.apache.hudi.common.model.PartialUpdateAvroPayload",
    "org.apache.hudi.common.model.EventTimeAvroPayload",
]
KEYS = ("merge", "payload", "keygen", "partition", "ordering", "precombine", "cdc", "version")


def props(root: Path) -> str:
    text = (root / ".hoodie" / "hoodie.properties").read_text()
    return "\n".join(
        f"    {line}"
        for line in sorted(text.splitlines())
        if not line.startswith("#") and any(k in line for k in KEYS)
    )


def merge(judge: ApacheHudi, version: str, table_version: str, out: Path) -> None:
    variants = [("payload", p) for p in PAYLOADS]
    if version.startswith("1."):
        variants += [("mode", m) for m in ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING")]
    for kind, value in variants:
        root = out / f"merge-{version}-v{table_version}-{value.rsplit('.', 1)[-1]}"
        print(f"########## {root.name}")
        base = datasource_options("merge_probe", "mor", "upsert")
        if kind == "payload":
            base["hoodie.datasource.write.payload.class"] = value
        else:
            base["hoodie.write.record.merge.mode"] = value
        if version.startswith("1."):
            base["hoodie.write.table.version"] = table_version
        first = pa.table(
            {"id": [1, 2], "dt": ["a", "a"], "ts": [5, 5], "name": ["a1", "b1"], "amount": [10, 20]}
        )
        second = pa.table(
            {
                "id": [1, 2],
                "dt": ["a", "a"],
                "ts": [3, 7],
                "name": pa.array([None, None], pa.string()),
                "amount": [11, 21],
            }
        )
        try:
            judge.write(str(root), first, base)
            print(props(root))
            judge.write(str(root), second, base)
            got = judge.read(str(root)).select(["id", "ts", "name", "amount"]).sort_by("id")
            print(
                f"  snapshot after (1: ts 3 name null amount 11; 2: ts 7 name null amount 21): "
                f"{got.to_pylist()}"
            )
            if version.startswith("1.") and table_version == "6":
                upgraded = dict(base, **{"hoodie.write.table.version": "8"})
                judge.write(
                    str(root),
                    pa.table({"id": [3], "dt": ["a"], "ts": [1], "name": ["c"], "amount": [1]}),
                    upgraded,
                )
                print("  after the upgrade to 8:")
                print(props(root))
        except Exception as exc:  # noqa: BLE001
            print(f"  !! {type(exc).__name__}: {str(exc)[:800]}")


KEYGENS = {
    "timestamp-epochmillis": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "ts_ms",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
    },
    "timestamp-unix-hive-tz": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "ts_s",
        "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd'T'HH",
        "hoodie.keygen.timebased.output.timezone": "Asia/Kolkata",
        "hoodie.datasource.write.hive_style_partitioning": "true",
    },
    "timestamp-datestring": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
        "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd HH:mm:ss,yyyy-MM-dd",
        "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd",
    },
    "timestamp-scalar-days": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "days",
        "hoodie.keygen.timebased.timestamp.type": "SCALAR",
        "hoodie.keygen.timebased.timestamp.scalar.time.unit": "DAYS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM",
    },
    "custom": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
        "hoodie.datasource.write.recordkey.field": "id,region",
        "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts_ms:TIMESTAMP",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd",
    },
    "complex-one-field": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "region",
    },
    "keygen-type-timestamp": {
        "hoodie.datasource.write.keygenerator.type": "TIMESTAMP",
        "hoodie.datasource.write.partitionpath.field": "ts_ms",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
    },
}


def keygen(judge: ApacheHudi, version: str, table_version: str, out: Path) -> None:
    rows = pa.table(
        {
            "id": [1, 2],
            "region": ["eu", "us"],
            "ts": [1, 1],
            "ts_ms": [
                1767225600123,
                1767311999999,
            ],  # 2026-01-01T00:00:00.123Z, 2026-01-01T23:59:59.999Z
            "ts_s": [1767225600, 1767299400],  # 2026-01-01T00:00Z, 2026-01-01T20:30Z
            "day": ["2026-01-01 23:30:00", "2026-01-02"],
            "days": [20454, 20455],
        }
    )
    for name, extra in KEYGENS.items():
        root = out / f"keygen-{version}-v{table_version}-{name}"
        print(f"########## {root.name} {extra}")
        opts = datasource_options("keygen_probe", "cow", "upsert")
        opts.update(extra)
        if version.startswith("1."):
            opts["hoodie.write.table.version"] = table_version
        try:
            judge.write(str(root), rows, opts)
            got = judge.read(str(root)).select(
                ["_hoodie_record_key", "_hoodie_partition_path", "id"]
            )
            print(f"  {got.sort_by('id').to_pylist()}")
            folders = sorted(str(p.parent.relative_to(root)) for p in root.rglob("*.parquet"))
            print(f"  folders: {folders}")
            print(props(root))
        except Exception as exc:  # noqa: BLE001
            print(f"  !! {type(exc).__name__}: {str(exc)[:800]}")


def decode(path: Path) -> str:
    data = path.read_bytes()
    if not data:
        return "(empty)"
    try:
        return json.dumps(json.loads(data))[:3000]
    except ValueError:
        records = list(fastavro.reader(io.BytesIO(data)))
        return json.dumps(records, default=str)[:4000]


def cluster(judge: ApacheHudi, version: str, table_version: str, out: Path) -> None:
    for strategy in ("linear", "z-order"):
        root = out / f"cluster-{version}-v{table_version}-{strategy}"
        print(f"########## {root.name}")
        try:
            for batch in range(3):
                opts = datasource_options("cluster_probe", "cow", "bulk_insert")
                opts.update(
                    {
                        "hoodie.clustering.inline": "true" if batch == 2 else "false",
                        "hoodie.clustering.inline.max.commits": "2",
                        "hoodie.clustering.plan.strategy.sort.columns": "name,id",
                        "hoodie.layout.optimize.strategy": strategy,
                    }
                )
                if version.startswith("1."):
                    opts["hoodie.write.table.version"] = table_version
                ids = [batch * 10 + i for i in range(4)]
                judge.write(
                    str(root),
                    pa.table(
                        {
                            "id": ids,
                            "dt": ["a"] * 4,
                            "ts": [1] * 4,
                            "name": [f"n{(7 * i) % 5}" for i in ids],
                        }
                    ),
                    opts,
                )
            timeline = root / ".hoodie" / ("timeline" if table_version != "6" else "")
            for path in sorted(timeline.iterdir()):
                if path.is_file() and not path.name.startswith("."):
                    print(f"  {path.name}  {path.stat().st_size}")
                    if "replace" in path.name or "clustering" in path.name:
                        print(f"    {decode(path)}")
            print(f"  data files: {sorted(p.name for p in root.rglob('*.parquet'))}")
            got = judge.read(str(root)).select(["id", "name", "_hoodie_file_name"])
            print(f"  rows: {got.num_rows}, files read: {sorted(set(got.column(2).to_pylist()))}")
        except Exception as exc:  # noqa: BLE001
            print(f"  !! {type(exc).__name__}: {str(exc)[:800]}")


def main() -> None:
    version, table_version, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    parts = sys.argv[4:] or ["merge", "keygen", "cluster"]
    judge = ApacheHudi(version)
    try:
        for part in parts:
            {"merge": merge, "keygen": keygen, "cluster": cluster}[part](
                judge, version, table_version, out
            )
    finally:
        judge.close()


if __name__ == "__main__":
    main()

"""Small helpers shared by the Spark tests: snapshots, file listings and base file names."""

from __future__ import annotations

import json
import os
import re

from hoodie import HoodieTable, WriteConfig
from hoodie.naming import parse_base_file_name

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
BASE_FILE_RE = re.compile(
    rf"^(?P<file_id>{UUID}-0)_(?P<token>\d+-\d+-\d+)_(?P<instant>\d{{17}})\.parquet$"
)
META = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)


def id_dt_ts_config(
    name: str, table_type: str = "COPY_ON_WRITE", options: dict[str, str] | None = None
) -> WriteConfig:
    """The Spark tests' usual table: key `id`, partitioned by `dt`, ordered by `ts`, with
    `options` as raw hoodie.* settings."""
    return WriteConfig.build(
        name,
        record_key="id",
        partition_path="dt",
        precombine_field="ts",
        table_type=table_type,
        options=options or {},
    )


def snapshot(table: HoodieTable, spark) -> dict[str, dict]:
    """The table's latest snapshot, by record key, each row as a plain dict."""
    rows = table.read(spark).collect()
    out = {r["_hoodie_record_key"]: r.asDict(recursive=True) for r in rows}
    assert len(out) == len(rows), "a record key appears twice in the snapshot"
    return out


def user_columns(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in META}


def all_files(base: str) -> dict[str, int]:
    """Every file under the base path (meta folder included): relative path -> size."""
    out = {}
    for root, _dirs, files in os.walk(base):
        for name in files:
            full = os.path.join(root, name)
            out[os.path.relpath(full, base)] = os.path.getsize(full)
    return out


def parquet_files(base: str) -> list[str]:
    return sorted(p for p in all_files(base) if p.endswith(".parquet"))


def file_id(file_name: str) -> str:
    parsed = parse_base_file_name(os.path.basename(file_name))
    assert parsed is not None, file_name
    return parsed.file_id


def completed(table: HoodieTable) -> list[str]:
    return [i.timestamp for i in table.timeline().completed.instants]


def commit_json(base: str, instant: str) -> dict:
    with open(os.path.join(base, ".hoodie", f"{instant}.commit")) as handle:
        return json.load(handle)


def read_properties(base: str) -> dict[str, str]:
    out = {}
    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                out[key] = value
    return out

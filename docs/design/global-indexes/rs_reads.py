"""Probe (issue 41): does hudi-rs read Apache Hudi's global-index tables as Apache Hudi does?

For every table the probe runs left in /tmp (`/tmp/probe-<scenario>-*/t`), finds the run's log
in docs/design/global-indexes/out (by the table's first instant time), takes the last snapshot Apache Hudi read
there, and compares it with hudi-rs's snapshot of the table (key, `_hoodie_partition_path`, ts,
name, commit time; `dt` left out, see FINDINGS.md F1). Prints one line per table.

    PYTHONPATH=$PWD python docs/design/global-indexes/rs_reads.py [SCENARIO ...]
"""

from __future__ import annotations

import glob
import os
import re
import sys
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent


def first_instant(path: str) -> str | None:
    names = sorted(os.listdir(os.path.join(path, ".hoodie")))
    for name in names:
        match = re.match(r"(\d{17})", name)
        if match:
            return match.group(1)
    timeline = os.path.join(path, ".hoodie", "timeline")
    if os.path.isdir(timeline):
        for name in sorted(os.listdir(timeline)):
            match = re.match(r"(\d{17})", name)
            if match:
                return match.group(1)
    return None


def last_snapshot(log: Path) -> set[tuple]:
    rows: set[tuple] = set()
    current: set[tuple] | None = None
    for line in log.read_text().splitlines():
        if line.startswith(" snapshot:"):
            current = set()
            rows = current
        elif line.startswith(" ") and not line.startswith("  ") and current is not None:
            current = None
        elif current is not None and line.startswith("  ") and "commit=" in line:
            fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            key = line.split()[0]
            current.add((key, fields["_pp"], int(fields["ts"]), fields["name"], fields["commit"]))
    return rows


def hudi_rs_rows(path: str) -> set[tuple]:
    import hudi

    batches = hudi.HudiTable(path).read()
    if not batches:
        return set()
    t = pa.Table.from_batches(batches).to_pydict()
    return {
        (k, p, ts, n, c)
        for k, p, ts, n, c in zip(
            t["_hoodie_record_key"],
            t["_hoodie_partition_path"],
            t["ts"],
            t["name"],
            t["_hoodie_commit_time"],
        )
    }


def main(scenarios: list[str]) -> None:
    logs = list((HERE / "out").glob("*/*.txt"))
    for table in sorted(glob.glob("/tmp/probe-*/t")):
        scenario = table.split("/")[2].split("-")[1]
        if scenarios and scenario not in scenarios:
            continue
        instant = first_instant(table)
        log = next((p for p in logs if instant and instant in p.read_text()), None)
        if log is None:
            continue
        expected = last_snapshot(log)
        try:
            got = hudi_rs_rows(table)
        except Exception as error:  # noqa: BLE001 - a probe reports what hudi-rs refused
            print(f"{log.parent.name}/{log.name}: hudi-rs FAILED {type(error).__name__}: {error}")
            continue
        verdict = "agrees" if got == expected else f"DIFFERS: +{got - expected} -{expected - got}"
        print(f"{log.parent.name}/{log.name}: {len(got)} rows, hudi-rs {verdict}")


if __name__ == "__main__":
    main(sys.argv[1:])

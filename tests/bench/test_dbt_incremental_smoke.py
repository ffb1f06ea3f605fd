"""Smoke test of bench/dbt_incremental.py (whole `dbt run`s of one incremental model, ours
against dbt-spark's `incremental` on parquet) at a tiny size.

The benchmark is run by hand (bench/README.md); this proves its pipeline still works: the
workload, the three dbt projects, every `dbt run` subprocess, the verification of each table
against the expected one, and the report. 3,000 rows, one upsert batch, three partitions: two
`dbt run`s per kind, each with a JVM of its own: about 1.5 minutes, so it runs in `make
bench-smoke`, not in `make test` (which has the comparison's smoke run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KINDS = ["cow_upsert", "mor_upsert", "spark_parquet_incremental", "dbt_table"]


@pytest.mark.slow
@pytest.mark.bench
def test_dbt_incremental_smoke(tmp_path):
    out = tmp_path / "dbt_incremental.json"
    command = [
        sys.executable, str(ROOT / "bench" / "dbt_incremental.py"),
        "--rows", "3000", "--batches", "1", "--partitions", "3", "--no-update-1pct",
        "--out", str(out), "--workdir", str(tmp_path / "work"),
    ]  # fmt: skip
    quick = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC {os.environ.get('JAVA_TOOL_OPTIONS', '')}"
    env = {**os.environ, "JAVA_TOOL_OPTIONS": quick.strip(), "PYSPARK_PYTHON": sys.executable}
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-5000:]}\n{run.stderr[-5000:]}"

    report = json.loads(out.read_text())
    assert report["verified"] is True and report["problems"] == []
    assert report["kinds"] == KINDS and report["batch_order"] == ["load", "upsert_1"]
    expected = report["expected"]
    assert expected["rows"] > 3000  # the batch's inserts came on top of the load
    for kind in KINDS:
        table = report["tables"][kind]
        assert table["matches_expected"] is True, kind
        assert (table["rows"], table["checksum"]) == (expected["rows"], expected["checksum"])
        runs = report["runs"][kind]
        assert [r["batch"] for r in runs] == ["load", "upsert_1"], kind
        for record in runs:
            assert record["wall_seconds"] > record["model_seconds"] > 0, (kind, record)
            assert record["table"]["data_files"] > 0, (kind, record)
    assert set(report["ratios_wall_to_spark_incremental"]) == {"cow_upsert", "mor_upsert",
                                                              "dbt_table"}
    assert set(report["ratios_model_to_table"]) == {"cow_upsert", "mor_upsert"}
    assert "| all |" in run.stdout

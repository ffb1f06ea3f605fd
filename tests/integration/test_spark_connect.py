"""The same upsert code runs over Spark Connect: no sparkContext, RDD or JVM access."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).with_name("connect_upsert.py")


def test_upsert_over_spark_connect(tmp_path):
    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect]")
    base, out = tmp_path / "table", tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(base), str(out)],
        env=dict(os.environ, PYSPARK_PYTHON=sys.executable),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(out.read_text())
    assert report["session"].startswith("pyspark.sql.connect")
    assert report["first"] == [3, 0]
    assert report["second"] == [1, 1]
    assert report["rows"] == [[1, "a", "x"], [2, "B", "x"], [3, "c", "y"], [4, "d", "z"]]
    assert report["mor_log_files"] == [1]  # the update went to a log file
    assert report["mor_compactions"] == 1
    assert report["mor_rows"] == [[1, "a"], [2, "B"], [5, "e"]]
    assert report["mor_mixed_rows"] == report["mor_rows"]
    (scanned,) = report["mor_mixed_scanned"]  # partition y's base file
    assert scanned in os.listdir(tmp_path / "table_mor" / "y")
    hudi = pytest.importorskip("hudi")
    table = pa.Table.from_batches(hudi.HudiTable(str(base)).read())
    assert sorted(zip(table["id"].to_pylist(), table["v"].to_pylist())) == [
        (1, "a"), (2, "B"), (3, "c"), (4, "d"),
    ]  # fmt: skip

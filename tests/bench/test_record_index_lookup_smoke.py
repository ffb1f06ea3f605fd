"""Smoke run of bench/record_index_lookup.py at 30,000 keys (`make bench-smoke`): the record
index is built, every lookup finds every key it asks for in both modes (the script asserts
it), and the report holds each shape's seconds and bytes; ranged reads never read more than
the whole files and their tails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.bench
def test_record_index_lookup_smoke(tmp_path):
    out = tmp_path / "report.json"
    command = [sys.executable, str(ROOT / "bench" / "record_index_lookup.py"), "--keys", "30000",
               "--repeats", "1", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    subprocess.run(command, check=True, env=env, timeout=600, capture_output=True)
    report = json.loads(out.read_text())
    assert report["keys"] == 30000 and report["file_groups"] == 10
    for shape in ("10 keys", "1%", "100%"):
        ranged, whole = report[shape]["ranged"], report[shape]["whole"]
        assert ranged["seconds"] > 0 and whole["hfile_bytes_read"] <= report["hfile_bytes"]
        assert ranged["hfile_bytes_read"] <= report["hfile_bytes"] + 10 * (64 << 10)

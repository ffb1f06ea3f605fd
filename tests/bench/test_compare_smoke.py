"""Smoke test of the comparative benchmark (bench/compare.py) at a tiny size.

The benchmark itself is not part of the test suite (`make bench` runs it), nor is this smoke
run of it (`make bench-smoke` runs it, ~1.5 minutes of `make test`'s CPU before); it proves
that the whole pipeline still works end to end: workload generation, every system's worker,
the measurements, the correctness check and the three outputs. It runs the real entry point in
a subprocess (with a JVM of its own, apart from the suite's session) with its own output and
work folders.

At 3,000 rows the run is all fixed costs, so the smoke run trims them: 3 partitions instead of
30, 2 shuffle partitions, one run per read, the three Spark systems in one JVM and session
(`--shared-spark`), and a JVM that only uses its quick JIT compiler and serial GC
(`JAVA_TOOL_OPTIONS`), which starts faster. 65-100 s on a 2-core machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Every system once; of the BUCKET-index variants one (they differ from the SIMPLE ones only in
# the write options).
SYSTEMS = ["cow_upsert", "mor_upsert", "cow_upsert_bucket", "spark_parquet", "deltalake",
           "pyiceberg"]  # fmt: skip
STEPS = ["load", "upsert_1", "upsert_2", "update_1pct", "delete"]


@pytest.mark.slow
@pytest.mark.bench
def test_compare_smoke(tmp_path):
    out = tmp_path / "results"
    command = [
        sys.executable,
        str(ROOT / "bench" / "compare.py"),
        "--rows", "3000",
        "--batches", "2",
        "--partitions", "3",
        "--shuffle-partitions", "2",
        "--scan-repeats", "1",
        "--shared-spark",
        "--systems", ",".join(SYSTEMS),
        "--out", str(out),
        "--name", "smoke",
        "--workdir", str(tmp_path / "work"),
    ]  # fmt: skip
    started = time.perf_counter()
    # Added to the caller's options (`make test` also maps a class archive), not in their place.
    quick = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC {os.environ.get('JAVA_TOOL_OPTIONS', '')}"
    env = {**os.environ, "JAVA_TOOL_OPTIONS": quick.strip()}
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - started
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-5000:]}\n{run.stderr[-5000:]}"

    results = json.loads((out / "smoke.json").read_text())
    assert results["verified"] is True and results["problems"] == []
    assert list(results["results"]) == SYSTEMS
    expected = results["workload"]["expected_checksum"]
    for name, record in results["results"].items():
        assert record["status"] == "ok", (name, record.get("error"))
        assert record["correct"] is True, name
        assert record["check"]["checksum"] == expected, name
        assert record["check"]["rows"] == results["workload"]["expected_rows"], name
        assert list(record["steps"]) == STEPS, name
        for step in record["steps"].values():
            assert step["seconds"] > 0 and step["bytes_written"] > 0, name
            assert step["peak_rss_bytes"] >= step["driver_peak_rss_bytes"] > 0, name
            assert step["bytes_read"] > 0, name  # at least the input files
            if name not in ("deltalake", "pyiceberg"):
                assert step["spark_jobs"] >= 1 and step["spark_tasks"] >= 1, (name, step)
        assert record["scan"]["seconds"] > 0 and record["scan_partition"]["seconds"] > 0
        same_files = record["scan"]["reference"].get("parquet_same_files")
        assert (same_files is not None) == name.startswith(("cow", "mor")), name
        data_source = record["scan"]["reference"].get("data_source")
        assert (data_source is not None) == name.startswith(("cow", "mor")), name
    # our 10% upserts: one Spark job for the routed write (plus its shuffle's map stage)
    assert results["results"]["cow_upsert"]["steps"]["upsert_2"]["spark_jobs"] <= 3
    bound = results["results"]["cow_upsert"]["steps"]["upsert_1"]["details"]["physical_bound"]
    assert bound["files"] > 0 and bound["seconds"] > 0
    assert results["machine"]["cores"] >= 1 and results["machine"]["memory_bytes"] > 0

    markdown = (out / "smoke.md").read_text()
    for name in SYSTEMS:
        assert f"`{name}`" in markdown
    assert "cores" in markdown and "Verification: every finished system" in markdown
    assert (out / "smoke.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| 1% update / COW |" in markdown and "parquet of the same files" in markdown
    assert "full scan, data source / parquet of the same files" in markdown

    # the summary across sizes (`make bench` runs three), here from this run twice
    sys.path.insert(0, str(ROOT / "bench"))
    from compare import report

    paths = report.write_sizes([results, results], out, "sizes")
    summary = json.loads(paths[0].read_text())
    ratios = summary["sizes"][0]["ratios"]
    assert set(ratios) == {"cow_upsert", "mor_upsert", "cow_upsert_bucket"}
    assert ratios["mor_upsert"]["update_1pct/cow"] > 0
    assert ratios["cow_upsert"]["upsert/deltalake"] > 0
    assert "| 1% update / COW |" in paths[1].read_text()
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"bench/compare.py smoke run: {seconds:.1f}s")

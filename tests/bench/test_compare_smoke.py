"""Smoke test of the comparative benchmark (bench/compare.py) at a tiny size.

The benchmark itself is not part of the test suite (`make bench` runs it), nor is this smoke
run of it (`make bench-smoke` runs it, ~1.5 minutes of `make test`'s CPU before); it proves
that the whole pipeline still works end to end: workload generation, every system's worker,
the measurements, the correctness check and the three outputs. It runs the real entry point in
a subprocess (with a JVM of its own, apart from the suite's session) with its own output and
work folders.

At 3,000 rows the run is all fixed costs, so the smoke run trims them: 3 partitions instead of
30, 2 shuffle partitions, one run per read, the Spark systems in one JVM and session
(`--shared-spark`; the Apache Hudi systems in one child process per Apache Hudi version), and a
JVM that only uses its quick JIT compiler and serial GC (`JAVA_TOOL_OPTIONS`), which starts
faster. Apache Hudi itself runs too (1.2 copy-on-write and merge-on-read with its defaults,
merge-on-read with our settings, 0.15 merge-on-read): it needs `make apache-hudi`, and fails
without it where `HOODIE_REQUIRE_APACHE_HUDI=1` (else skips). 4.5-6.5 minutes on a busy 2-core
machine.
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
# Apache Hudi: both versions, both table types, its defaults and our settings.
APACHE_HUDI = ["apache_hudi_cow", "apache_hudi_mor", "apache_hudi_mor_ours", "apache_hudi_015_mor"]
SYSTEMS = ["cow_upsert", "mor_upsert", "cow_upsert_bucket", "spark_parquet", "deltalake",
           "pyiceberg", *APACHE_HUDI]  # fmt: skip
STEPS = ["load", "upsert_1", "upsert_2", "update_1pct", "delete"]
MERGE_ON_READ = {"mor_upsert", "apache_hudi_mor", "apache_hudi_mor_ours", "apache_hudi_015_mor"}
TABLE_VERSIONS = {"apache_hudi_cow": "8", "apache_hudi_mor": "8", "apache_hudi_mor_ours": "8",
                  "apache_hudi_015_mor": "6", "cow_upsert": "6", "mor_upsert": "6"}  # fmt: skip


def require_apache_hudi() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from compare.systems.apache_hudi import HUDI_0, HUDI_1, missing

    problems = [p for p in (missing(HUDI_1), missing(HUDI_0)) if p]
    if problems:
        if os.environ.get("HOODIE_REQUIRE_APACHE_HUDI") == "1":
            pytest.fail("; ".join(problems))
        pytest.skip("; ".join(problems))


@pytest.mark.slow
@pytest.mark.bench
def test_compare_smoke(tmp_path):
    require_apache_hudi()
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
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    seconds = time.perf_counter() - started
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-5000:]}\n{run.stderr[-5000:]}"

    results = json.loads((out / "smoke.json").read_text())
    assert results["verified"] is True and results["problems"] == []
    assert list(results["results"]) == SYSTEMS
    workload = results["workload"]
    expected = workload["expected_checksum"]
    assert workload["expected_point"]["rows"] == 1 and workload["expected_filter"]["rows"] > 0
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
        # the point read and the filter: timed, and their rows the expected ones
        for read, want in (("point_read", "expected_point"), ("filter", "expected_filter")):
            assert record[read]["seconds"] > 0, (name, read)
            assert record[read]["result"] == workload[want], (name, read)
        # merge-on-read alone has a read-optimized query and a compaction
        mor = name in MERGE_ON_READ
        assert (record.get("scan_ro") is not None) == mor, name
        assert (record.get("compaction") is not None) == mor, name
        assert record["read_optimized"] == record["compacts"] == mor, name
        if name in TABLE_VERSIONS:
            assert record["steps"]["load"]["details"]["table_version"] == TABLE_VERSIONS[name]
        if name in APACHE_HUDI:
            versions = record["versions"]
            assert versions["apache_hudi"] == ("0.15.0" if "015" in name else "1.2.0"), name
            assert versions["spark"].startswith("3.5"), versions
            details = record["steps"]["update_1pct"]["details"]
            assert details["updates"] == results["workload"]["steps"][3]["updates"], details
            if mor and "015" not in name:  # 0.15's first load is a delta commit: the 5th
                # (the delete) compacted inline, leaving nothing to compact
                assert record["compaction"]["details"]["compaction_instants"], name
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
    assert "runs on its own Spark, **3.5**" in markdown
    assert "| read-optimized scan |" in markdown and "| point read by key |" in markdown
    assert "| compaction |" in markdown and "| n/a |" in markdown
    assert "| 1% filter / Apache Hudi 1.2 |" in markdown
    assert "`mor_upsert` against Apache Hudi 1.2 with our settings" in markdown
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
    for key in ("load", "upsert", "update_1pct", "delete", "scan", "point_read", "filter"):
        assert ratios["cow_upsert"][f"{key}/apache_hudi"] > 0, key
        assert ratios["mor_upsert"][f"{key}/apache_hudi_ours"] > 0, key
    assert ratios["mor_upsert"]["scan_ro/apache_hudi"] > 0
    assert ratios["mor_upsert"]["scan/scan_ro"] > 0
    assert summary["sizes"][0]["systems"]["apache_hudi_cow"]["reads_seconds"]["scan_ro"] == "n/a"
    sizes_markdown = paths[1].read_text()
    assert "| 1% update / COW |" in sizes_markdown
    assert "`apache_hudi_mor`" in sizes_markdown and "| read-optimized scan |" in sizes_markdown
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"bench/compare.py smoke run: {seconds:.1f}s")

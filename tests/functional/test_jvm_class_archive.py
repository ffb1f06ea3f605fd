"""The dbt adapter's JVM class archive, JVM side (dbt/adapters/hoodie/class_archive.py): a
session's driver JVM writes the archive as it exits, and the next one maps Spark's classes from
it. Two sessions in child processes (the suites' own JAVA_TOOL_OPTIONS archive left out), each
with the options the adapter gives its session. `make test-full`: ~40 s, mostly the JVM writing
~200 MB; the bookkeeping is tests/unit/test_class_archive.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbt.adapters.hoodie.class_archive import DYNAMIC_ARCHIVE_MAGIC

pytestmark = [pytest.mark.slow, pytest.mark.full]

SESSION = """
import sys
from pyspark.sql import SparkSession
from dbt.adapters.hoodie.environment import _with_class_archive

log = sys.argv[1]
# (write: as a run on a terminal would; this child's output is a pipe)
conf = _with_class_archive({"spark.ui.enabled": "false",
                            "spark.driver.extraJavaOptions": f"-Xlog:class+load=info:file={log}"},
                           write=True)
builder = SparkSession.builder.master("local[1]")
for key, value in conf.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
assert spark.range(3).count() == 3
print("OPTIONS", conf["spark.driver.extraJavaOptions"])
"""


def _session(tmp_path: Path, name: str) -> str:
    ours = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")  # (the suites' own archive)
    env = {k: v for k, v in os.environ.items() if k not in ours}
    env.update(DBT_HOODIE_CACHE_DIR=str(tmp_path / "cache"), PYSPARK_PYTHON=sys.executable)
    log = tmp_path / f"{name}.log"
    proc = subprocess.run([sys.executable, "-c", SESSION, str(log)], env=env, text=True,
                          capture_output=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    # (the pipes close when the JVM exits, its archive written: no warning of it on them)
    assert "[cds]" not in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-3000:]
    return proc.stdout.split("OPTIONS", 1)[1].strip()


def _whole_archive(folder: Path, seconds: float = 120) -> Path:
    """The partial archive the first JVM writes as it exits (after its Python process)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in folder.glob("*.partial.jsa"):
            with open(path, "rb") as file:
                if file.read(4) == DYNAMIC_ARCHIVE_MAGIC:
                    return path
        time.sleep(1)
    raise AssertionError(f"no whole archive in {sorted(folder.iterdir())}")


def test_the_first_session_writes_the_archive_and_the_next_maps_it(tmp_path):
    first = _session(tmp_path, "first")
    assert "-XX:ArchiveClassesAtExit=" in first
    partial = _whole_archive(tmp_path / "cache" / "jvm")
    assert str(partial) in first
    second = _session(tmp_path, "second")
    final = partial.name.split(".", 1)[0] + ".jsa"
    assert f"-XX:SharedArchiveFile={tmp_path / 'cache' / 'jvm' / final}" in second
    loaded = (tmp_path / "second.log").read_text()
    shared = loaded.count("source: shared objects file (top)")
    assert shared > 5000, f"{shared} classes from the archive"  # Spark's, not the JDK's own

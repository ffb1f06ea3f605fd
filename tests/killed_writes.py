"""A write run in a child process that a crash point kills (`hoodie.faults.CRASH_AT`): the
interop tests' crashes around the metadata table's commits and services."""

from __future__ import annotations

import os
import subprocess
import sys

from hoodie.faults import CRASH_AT

# a small session, as the fault tests' children (tests/faults/tests_support.py): Spark's
# default 200 shuffle partitions made each child's upsert ~3x slower
_CHILD = (
    "import os, sys; sys.path[:0] = {paths!r}\n"
    "os.environ['HOODIE_CRASH_PID'] = str(os.getpid())  # for points in Spark tasks\n"
    "{prelude}\n"
    "from pyspark.sql import SparkSession\n"
    "from hoodie import HoodieTable, WriteConfig\n"
    "spark = (SparkSession.builder.master('local[1]')\n"
    "    .config('spark.sql.shuffle.partitions', '1').config('spark.ui.enabled', 'false')\n"
    "    .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
    "cfg = WriteConfig.build('mdt', 'id', 'dt', 'ts', table_type='MERGE_ON_READ', "
    "options={options!r})\n"
    "df = spark.createDataFrame({rows!r}, 'id string, dt string, ts long, v string')\n"
    "HoodieTable.for_write({path!r}, cfg).upsert(df, cfg)\n"
)


def upsert_killed_at(
    path: str,
    options: dict[str, str],
    point: str,
    prelude: str = "",
    rows: list[tuple] | None = None,
) -> int:
    """Upsert keys '1' (partition a) and '3' (partition c) (or `rows`: id, dt, ts, v) into the
    merge-on-read table 'mdt' at `path` with `options`, in a child process killed at the
    crash point `point` (in the driver or a Spark task), after running the Python `prelude`;
    its exit code (non-zero once the point was reached)."""
    rows = rows or [("1", "a", 5, "crash"), ("3", "c", 5, "new")]
    code = _CHILD.format(paths=sys.path, options=options, path=path, prelude=prelude,
                         rows=rows)  # fmt: skip
    env = {**os.environ, CRASH_AT: point}
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=600,
                          check=False).returncode  # fmt: skip

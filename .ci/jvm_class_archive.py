"""Build a class-data-sharing archive of the classes a Spark driver JVM loads, once per machine.

Usage: python .ci/jvm_class_archive.py <archive path>

The test suite starts some forty JVMs (its own sessions, every crash-test child, every dbt
run, every concurrent writer). Each one spends most of its start loading and verifying the
same ~20,000 classes from Spark's jars. Java 13+ can dump the classes an application loaded
into an archive (`-XX:ArchiveClassesAtExit`) and map it at the next start
(`-XX:SharedArchiveFile`): measured here, a local session's start and first job drop from
~25 s to ~8 s on a loaded 2-core machine.

The archive is made by one run of what the tests do (a Hive-enabled session, copy-on-write
and merge-on-read upserts through the core, reads through the data source, SQL on a catalog
table). It records the class path it was made with: a JVM whose class path or JDK differs
(a pyspark upgrade, another Java) ignores it and starts as before, so a stale archive costs
time, never correctness. Nothing here is needed to use dbt-hoodie; it only speeds up tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

# What the run does: the same kinds of work as the tests, on a tiny table.
WORKLOAD = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession
    from hoodie import HoodieTable, WriteConfig
    from hoodie.read.datasource import register

    root, archive = sys.argv[1], sys.argv[2]
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", f"{root}/warehouse")
        .config("spark.driver.extraJavaOptions",
                f"-Dderby.system.home={root}/derby -XX:ArchiveClassesAtExit={archive}")
        .config("spark.log.level", "ERROR")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .enableHiveSupport()
        .getOrCreate()
    )
    register(spark)
    rows = [(i, f"n{i}", f"2026-01-0{i % 3 + 1}", i) for i in range(20)]
    schema = "id int, name string, day string, ts bigint"
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        for index in ("SIMPLE", "BUCKET"):
            path = f"{root}/{table_type}_{index}"
            cfg = WriteConfig.build(
                "archive", record_key="id", partition_path="day", precombine_field="ts",
                table_type=table_type, options={"hoodie.index.type": index},
            )
            table = HoodieTable.for_write(path, cfg)
            table.upsert(spark.createDataFrame(rows, schema), cfg)
            table.upsert(spark.createDataFrame(rows[:5], schema), cfg)
            spark.read.format("hoodie").load(path).groupBy("day").count().collect()
    path = f"{root}/COPY_ON_WRITE_SIMPLE"
    spark.sql("CREATE DATABASE IF NOT EXISTS archive")
    spark.catalog.createTable("archive.t", path=path, source="hoodie",
                              schema=HoodieTable.open(path).catalog_schema())
    spark.sql("SELECT day, max(ts) FROM archive.t GROUP BY day ORDER BY day").collect()
    spark.sql("CREATE TABLE archive.p USING parquet AS SELECT * FROM archive.t")
    spark.sql("SHOW TABLE EXTENDED IN archive LIKE 'p'").collect()
    spark.stop()
    """
)


def build(archive: Path) -> None:
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="jvm-archive-") as root:
        partial = Path(root) / "classes.jsa"
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
        # The archive is made by the driver JVM alone (spark.driver.extraJavaOptions), not by
        # spark-submit's launcher JVM, whose class path differs.
        run = subprocess.run(
            [sys.executable, "-c", WORKLOAD, root, str(partial)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if run.returncode != 0 or not partial.exists():
            # Only a speed-up: say why, and let the tests run without it.
            print(f"no JVM class archive (exit {run.returncode}):\n{run.stderr[-3000:]}",
                  file=sys.stderr)  # fmt: skip
            return
        shutil.move(str(partial), archive)


if __name__ == "__main__":
    target = Path(sys.argv[1])
    if not target.exists():
        build(target)

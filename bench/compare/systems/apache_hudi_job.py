"""Apache Hudi's side of the `apache_hudi*` systems: a child process on Apache Hudi's PySpark.

Apache Hudi's Spark bundles are built for Spark 3.5, the project runs Spark 4: this script runs
on the reference venv of `make apache-hudi` (.venv/apache-hudi, PySpark 3.5) with one bundle
from .venv/apache-hudi-jars, and imports nothing of the project (it cannot: other PySpark).
The bench worker (compare/systems/apache_hudi.py) starts it, sends one JSON job per line on
stdin and reads one JSON reply per line from the file descriptor `--reply-fd` (stdout goes to
stderr, so nothing Spark prints can break a reply). The worker times each job from its side:
what is measured is Apache Hudi's work, plus a pipe round trip of well under a millisecond.

Jobs:
- {"job": "write", "path", "files": [parquet], "options": {...}}: the files as one DataFrame,
  written with `df.write.format("hudi").options(...).mode("append").save(path)`;
- {"job": "compact", "path", "options": {...}} -> {"instants": [...]}: `CALL run_compaction(op
  => 'scheduleAndExecute', path => ..., options => ...)`, Apache Hudi's compaction procedure;
- {"job": "read", "path", "options", "where", "columns", "out"} -> {"rows": n or null}: the
  datasource read, filtered by the SQL condition `where`; with `out`, `columns` of it written
  as parquet there (for the runner's check); without, every column into Spark's `noop` sink,
  as the other Spark systems' timed reads (no rows reach the driver);
- {"job": "count", "path", "options", "where"} -> {"rows": n};
- {"job": "group", "label"}: later Spark jobs go to job group `label`;
- {"job": "counts", "label"} -> that group's jobs, the stages that ran tasks, their tasks;
- {"job": "stop"}.
A failed job replies {"error": the exception's class, "message": ...}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

HOODIE_CATALOG = "org.apache.spark.sql.hudi.catalog.HoodieCatalog"
# What Apache Hudi's Spark quick start requires of a session; the rest comes from the bench
HUDI_SESSION = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": HOODIE_CATALOG,
    "spark.sql.catalogImplementation": "in-memory",
}


def session(jar: str, master: str, config: dict[str, str]):
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName("compare-apache-hudi")
    builder = builder.config("spark.jars", jar)
    for key, value in {**config, **HUDI_SESSION}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _sql_text(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _frame(spark, job: dict):
    frame = spark.read.format("hudi").options(**job.get("options", {})).load(job["path"])
    if job.get("where"):
        frame = frame.where(job["where"])
    return frame


def run(spark, job: dict) -> dict:
    kind = job["job"]
    if kind == "write":
        frame = spark.read.parquet(*job["files"])
        frame.write.format("hudi").options(**job["options"]).mode("append").save(job["path"])
        return {}
    if kind == "compact":
        options = ",".join(f"{k}={v}" for k, v in job.get("options", {}).items())
        call = f"CALL run_compaction(op => 'scheduleAndExecute', path => {_sql_text(job['path'])}"
        if options:
            call += f", options => {_sql_text(options)}"
        rows = spark.sql(call + ")").collect()
        return {"instants": sorted({str(row[0]) for row in rows})}
    if kind == "read":
        frame = _frame(spark, job)
        if job.get("out"):
            frame.select(*job["columns"]).write.mode("overwrite").parquet(job["out"])
            return {"rows": spark.read.parquet(job["out"]).count()}
        frame.write.format("noop").mode("overwrite").save()
        return {"rows": None}
    if kind == "count":
        return {"rows": _frame(spark, job).count()}
    if kind == "group":
        spark.sparkContext.setJobGroup(job["label"], job["label"])
        return {}
    if kind == "counts":
        tracker = spark.sparkContext.statusTracker()
        jobs = tracker.getJobIdsForGroup(job["label"])
        stage_ids: set[int] = set()
        for job_id in jobs:
            info = tracker.getJobInfo(job_id)
            stage_ids.update(info.stageIds if info else ())
        stages = [tracker.getStageInfo(s) for s in sorted(stage_ids)]
        ran = [s for s in stages if s is not None and s.numCompletedTasks + s.numFailedTasks]
        return {
            "spark_jobs": len(jobs),
            "spark_stages": len(ran),
            "spark_tasks": sum(s.numCompletedTasks + s.numFailedTasks for s in ran),
        }
    raise ValueError(f"unknown job {kind!r}")


def _root_cause(error: Exception) -> str:
    """A Java exception's innermost cause (a Spark job's error holds the real one deep down)."""
    java = getattr(error, "java_exception", None)
    if java is None:
        return ""
    try:
        while java.getCause() is not None and java.getCause() != java:
            java = java.getCause()
        return "\nRoot cause: " + str(java.toString())[:2000]
    except Exception:  # noqa: BLE001 - the gateway may be gone
        return ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jar", required=True)
    parser.add_argument("--master", required=True)
    parser.add_argument("--config", required=True, help="Spark settings, a JSON object")
    parser.add_argument("--reply-fd", type=int, required=True)
    args = parser.parse_args()
    replies = os.fdopen(args.reply_fd, "w", buffering=1)
    os.dup2(2, 1)  # whatever prints to stdout (Spark, the JVM) goes to stderr
    sys.stdout = sys.stderr
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = session(args.jar, args.master, json.loads(args.config))
    import pyspark

    ready = {"spark": spark.version, "pyspark": pyspark.__version__}
    replies.write(json.dumps({"ready": ready}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        if job["job"] == "stop":
            break
        try:
            reply = run(spark, job)
        except Exception as error:  # noqa: BLE001 - every failure goes back to the bench
            text = (str(error) or traceback.format_exc())[:6000]
            reply = {"error": type(error).__name__, "message": text + _root_cause(error)}
        replies.write(json.dumps(reply) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()

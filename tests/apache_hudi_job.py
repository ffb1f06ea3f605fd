"""Apache Hudi's side of tests/apache_hudi.py: one long-lived child process on the reference
PySpark (.venv/apache-hudi, `make apache-hudi`) with one Apache Hudi Spark bundle, taking jobs.

It imports nothing of the project: only PySpark and the standard library, so it runs on the
reference venv's Spark 3.5 with Apache Hudi's own jar. Protocol: one JSON object per line on
stdin, one JSON reply per line on the file descriptor given by --reply-fd (stdout itself goes to
stderr, so nothing Spark or the JVM prints can break a reply). Rows travel as parquet folders:

- {"job": "write", "path", "rows": parquet folder, "options": {...}, "mode": "append"}
- {"job": "read", "path", "options": {...}, "where": SQL condition or absent, "out": parquet
  folder} -> {"rows": n}
- {"job": "count", "path", "options": {...}} -> {"rows": n, "columns": [names]} (no rows written:
  a table with no schema yet reads as a frame of no columns, which parquet cannot hold)
- {"job": "sql", "statements": [...], "out": parquet folder or null} -> {"rows": n} of the last
- {"job": "stop"}
A failed job replies {"error": the exception's class, "message": its first lines}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

HOODIE_CATALOG = "org.apache.spark.sql.hudi.catalog.HoodieCatalog"


def session(jar: str, scratch: str):
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("apache-hudi-judge")
        .config("spark.jars", jar)
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", HOODIE_CATALOG)
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
        .config("spark.local.dir", os.path.join(scratch, "local"))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.driver.memory", "1g")
        .config("spark.log.level", "WARN")
        .getOrCreate()
    )


def run(spark, job: dict) -> dict:
    kind = job["job"]
    if kind == "write":
        frame = spark.read.parquet(job["rows"])
        writer = frame.write.format("hudi").options(**job.get("options", {}))
        writer.mode(job.get("mode", "append")).save(job["path"])
        return {}
    if kind == "read":
        frame = spark.read.format("hudi").options(**job.get("options", {})).load(job["path"])
        if job.get("where"):
            frame = frame.where(job["where"])
        frame.write.mode("overwrite").parquet(job["out"])
        return {"rows": spark.read.parquet(job["out"]).count()}
    if kind == "count":
        frame = spark.read.format("hudi").options(**job.get("options", {})).load(job["path"])
        return {"rows": frame.count(), "columns": frame.columns}
    if kind == "sql":
        result = None
        for statement in job["statements"]:
            result = spark.sql(statement)
        if job.get("out") and result is not None:
            result.write.mode("overwrite").parquet(job["out"])
            return {"rows": spark.read.parquet(job["out"]).count()}
        return {}
    raise ValueError(f"unknown job {kind!r}")


def _root_cause(error: Exception) -> str:
    """A Java exception's innermost cause (a Spark job's error holds the real one deep down,
    past where the message is cut)."""
    java = getattr(error, "java_exception", None)
    if java is None:
        return ""
    try:
        while java.getCause() is not None and java.getCause() != java:
            java = java.getCause()
        return "\nRoot cause: " + str(java.toString())[:2000]
    except Exception:  # the gateway may be gone
        return ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jar", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--reply-fd", type=int, required=True)
    args = parser.parse_args()
    replies = os.fdopen(args.reply_fd, "w", buffering=1)
    os.dup2(2, 1)  # whatever prints to stdout (Spark, the JVM) goes to stderr
    sys.stdout = sys.stderr
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = session(args.jar, args.scratch)
    replies.write(json.dumps({"ready": spark.version}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        if job["job"] == "stop":
            break
        try:
            reply = run(spark, job)
        except Exception as error:  # every failure goes back to the test, which decides
            text = (str(error) or traceback.format_exc())[:6000]
            reply = {"error": type(error).__name__, "message": text + _root_cause(error)}
        replies.write(json.dumps(reply) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()

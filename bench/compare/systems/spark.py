"""What the Spark-based systems share: the session, reading the input, forcing a scan."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa

from . import System

BENCH_DIR = Path(__file__).resolve().parents[2]


def start_spark(master: str, app_name: str):
    """The session of bench/upsert_cow.py (local[2], 4g driver, 8 shuffle partitions, UTC), so
    these numbers compare with the single-batch benchmarks; plus Python data source filter
    pushdown, which the hoodie source needs for partition pruning."""
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    from upsert_cow import build_spark

    spark = build_spark(master, app_name)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    return spark


def noop(df) -> None:
    """Run the query and read every column, without collecting rows in the driver."""
    df.write.format("noop").mode("overwrite").save()


class SparkSystem(System):
    uses_spark = True

    def open(self) -> None:
        self.spark = start_spark(self.options.get("master", "local[2]"), f"compare-{self.name}")
        shuffle = self.options.get("shuffle_partitions")
        if shuffle:
            self.spark.conf.set("spark.sql.shuffle.partitions", str(shuffle))

    def close(self) -> None:
        # --shared-spark: the next system reuses the session (and its warm Python workers);
        # the worker stops it when it exits.
        if not self.options.get("shared_spark"):
            self.spark.stop()

    def step_started(self, label: str) -> None:
        # The bench runs classic local Spark; the status tracker has no session-level twin.
        self.spark.sparkContext.setJobGroup(label, label)

    def step_counts(self, label: str) -> dict:
        """Jobs of the call's job group, the stages that ran tasks (AQE and shuffle reuse
        skip some of a job's stages) and their tasks."""
        tracker = self.spark.sparkContext.statusTracker()
        jobs = tracker.getJobIdsForGroup(label)
        stage_ids = set()
        for job in jobs:
            info = tracker.getJobInfo(job)
            stage_ids.update(info.stageIds if info else ())
        stages = [tracker.getStageInfo(s) for s in sorted(stage_ids)]
        ran = [s for s in stages if s is not None and s.numCompletedTasks + s.numFailedTasks]
        return {
            "spark_jobs": len(jobs),
            "spark_stages": len(ran),
            "spark_tasks": sum(s.numCompletedTasks + s.numFailedTasks for s in ran),
        }

    def versions(self) -> dict:
        import pyspark

        return {"pyspark": pyspark.__version__, "spark_master": self.spark.sparkContext.master}

    def inputs(self, files: list[str]):
        """The input as a lazy DataFrame: reading it is part of the measured write."""
        return self.spark.read.parquet(*files)

    def snapshot(self):
        raise NotImplementedError

    def in_partition(self, date: str):
        from pyspark.sql import functions as F

        return self.snapshot().where(F.col("event_date") == F.lit(date).cast("date"))

    def scan(self) -> None:
        noop(self.snapshot())

    def scan_partition(self, date: str) -> None:
        noop(self.in_partition(date))

    def count_partition(self, date: str) -> int:
        return self.in_partition(date).count()

    def with_key(self, key: int):
        from pyspark.sql import functions as F

        return self.snapshot().where(F.col("id") == F.lit(int(key)))

    def above(self, column: str, above: float):
        from pyspark.sql import functions as F

        return self.snapshot().where(F.col(column) > F.lit(float(above)))

    def point_read(self, key: int) -> None:
        noop(self.with_key(key))

    def point_read_rows(self, key: int, columns: list[str]) -> pa.Table:
        return self.with_key(key).select(*columns).toArrow()

    def filter_rows(self, column: str, above: float) -> None:
        noop(self.above(column, above))

    def filter_result(self, column: str, above: float, columns: list[str]) -> pa.Table:
        return self.above(column, above).select(*columns).toArrow()

    def read_check(self, columns: list[str]) -> pa.Table:
        return self.snapshot().select(*columns).toArrow()

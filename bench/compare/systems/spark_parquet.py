"""Plain Spark, no lake format: what a dbt-spark user falls back to without Hudi.

That is dbt-spark's `insert_overwrite` incremental strategy on a parquet table partitioned by
date, with `spark.sql.sources.partitionOverwriteMode=dynamic`: every write rewrites the whole
of each partition the batch touches. To upsert, the model reads those partitions, drops the
rows whose keys are in the batch (left anti join), adds the batch, and overwrites; a delete is
the same without the union. Rows are repartitioned by date first, so each partition is
rewritten as one file (as our Hudi tables hold one file group per partition here) rather than
one file per shuffle task.

What this fallback gives up, and the lake formats do not: a reader during the overwrite can
see a partition half replaced, there is no history, and a partition whose rows are all deleted
keeps its old file (dynamic overwrite only replaces partitions that still have rows).
"""

from __future__ import annotations

from .spark import SparkSystem


class SparkParquet(SparkSystem):
    name = "spark_parquet"
    description = "plain Spark parquet, dynamic partition overwrite"

    def open(self) -> None:
        super().open()
        self.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")

    def snapshot(self):
        return self.spark.read.parquet(str(self.table_dir))

    def _overwrite(self, df) -> None:
        (
            df.repartition("event_date")
            .write.mode("overwrite")
            .partitionBy("event_date")
            .parquet(str(self.table_dir))
        )

    def _affected(self, batch):
        """The batch's partitions of the current table (partition pruning reads no others)."""
        from pyspark.sql import functions as F

        dates = [row[0] for row in batch.select("event_date").distinct().collect()]
        return self.snapshot().where(F.col("event_date").isin(dates))

    def create(self, files: list[str]) -> None:
        self._overwrite(self.inputs(files))

    def upsert(self, files: list[str]) -> None:
        batch = self.inputs(files)
        kept = self._affected(batch).join(batch.select("id"), "id", "left_anti")
        self._overwrite(kept.unionByName(batch))

    def delete(self, files: list[str]) -> None:
        keys = self.inputs(files)
        self._overwrite(self._affected(keys).join(keys.select("id"), "id", "left_anti"))

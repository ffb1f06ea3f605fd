"""Upserts through a Spark Connect session (run as a child process by test_spark_connect)."""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

from hoodie import HoodieTable, WriteConfig  # noqa: E402


def main(base: str, out: str) -> None:
    spark = (
        SparkSession.builder.remote("local[2]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
    cfg = WriteConfig.build("conn", record_key="id", partition_path="p", precombine_field="ts")
    table = HoodieTable.for_write(base, cfg)
    first = table.upsert(
        spark.createDataFrame([(1, "a", "x", 1), (2, "b", "x", 1), (3, "c", "y", 1)],
                              "id int, v string, p string, ts long"), cfg)  # fmt: skip
    second = table.upsert(
        spark.createDataFrame([(2, "B", "x", 2), (4, "d", "z", 1)],
                              "id int, v string, p string, ts long"), cfg)  # fmt: skip
    rows = table.read(spark).select("id", "v", "p").orderBy("id").collect()
    with open(out, "w") as handle:
        json.dump(
            {
                "session": type(spark).__module__,
                "first": [first.num_inserts, first.num_updates],
                "second": [second.num_inserts, second.num_updates],
                "rows": [list(r) for r in rows],
            },
            handle,
        )
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

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
    # Merge-on-read: a delta commit with log files, then a compaction, over the same session.
    mor_cfg = WriteConfig.build("conn_mor", record_key="id", partition_path="p",
                                precombine_field="ts", table_type="MERGE_ON_READ",
                                options={"hoodie.compact.inline": "false"})  # fmt: skip
    mor = HoodieTable.for_write(base + "_mor", mor_cfg)
    schema = "id int, v string, p string, ts long"
    mor.upsert(spark.createDataFrame([(1, "a", "x", 1), (2, "b", "x", 1), (5, "e", "y", 1)],
                                     schema), mor_cfg)  # fmt: skip
    delta = mor.upsert(spark.createDataFrame([(2, "B", "x", 2)], schema), mor_cfg)
    # Partition y's slice is Spark's parquet scan, x's (with its log file) the data source's.
    mixed = mor.read(spark)
    mixed_rows = mixed.select("id", "v").orderBy("id").collect()
    compactions = mor.services.compact(spark)
    mor_rows = mor.read(spark).select("id", "v").orderBy("id").collect()
    with open(out, "w") as handle:
        json.dump(
            {
                "session": type(spark).__module__,
                "first": [first.num_inserts, first.num_updates],
                "second": [second.num_inserts, second.num_updates],
                "rows": [list(r) for r in rows],
                "mor_log_files": [s.log_version for s in delta.metadata.write_stats()],
                "mor_compactions": len(compactions),
                "mor_mixed_rows": [list(r) for r in mixed_rows],
                "mor_mixed_scanned": [os.path.basename(f) for f in mixed.inputFiles()],
                "mor_rows": [list(r) for r in mor_rows],
            },
            handle,
        )
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

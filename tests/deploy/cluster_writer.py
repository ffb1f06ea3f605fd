"""A dbt-hoodie driver on a multi-process cluster: `local-cluster[2,1,1024]`, two executor
JVMs with Python workers of their own, running `PYSPARK_PYTHON`, a Python without dbt-hoodie.

Usage: python cluster_writer.py <table path> <ship|no-ship> <out.json>
Upserts two batches into a merge-on-read table through the core, compacts it, reads it
back, and writes the rows (or the error) to out.json.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

from hoodie import HoodieTable, WriteConfig
from hoodie.integration import register_data_source, ship_core


def main(path: str, ship: str, out: str) -> None:
    spark = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .config("spark.executor.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    try:
        if ship == "ship":
            ship_core(spark)
        register_data_source(spark)
        config = WriteConfig.build("cluster", record_key="id", partition_path="p",
                                   precombine_field="ts", table_type="MERGE_ON_READ")  # fmt: skip
        table = HoodieTable.for_write(path, config)
        schema = "id int, name string, p string, ts bigint"
        table.upsert(spark.createDataFrame([(1, "a", "x", 1), (2, "b", "y", 1)], schema), config)
        table.upsert(spark.createDataFrame([(2, "B", "y", 2), (3, "c", "x", 2)], schema), config)
        table.services.compact(spark, config)
        rows = table.read(spark).select("id", "name").collect()
        result = {"rows": sorted([r.id, r.name] for r in rows)}
    except Exception as error:  # noqa: BLE001 - the test reads the outcome
        result = {"error": f"{type(error).__name__}: {error}"[-3000:]}
    finally:
        spark.stop()
    with open(out, "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main(*sys.argv[1:4])

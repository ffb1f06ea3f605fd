"""What the fault tests and their child writers share: schema, write config, Spark session."""

from __future__ import annotations

from hoodie import WriteConfig

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"


def write_config(
    table_type: str, inline_compaction: bool = False, options: dict | None = None
) -> WriteConfig:
    base = {"hoodie.compact.inline": str(inline_compaction).lower(),
            "hoodie.compact.inline.max.delta.commits": "1"} if table_type == "MERGE_ON_READ" \
        else {}  # fmt: skip
    return WriteConfig.build(
        "crashy",
        record_key="id",
        partition_path="dt",
        precombine_field="ts",
        table_type=table_type,
        options={**base, **(options or {})},
    )


def child_spark():
    """A small local session for a child writer: one core, so several children fit at once."""
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.log.level", "ERROR")
        .getOrCreate()
    )

"""What the fault tests and their child writers share: schema, write config, Spark session."""

from __future__ import annotations

from hoodie import WriteConfig

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
# The crash tests' writers, one at a time: no table lock for a killed writer to leave held, and
# a killed writer's instant counts as failed half a second after its last heartbeat (by default,
# three minutes: a writer that is only slow must never be taken for a crashed one).
ONE_AT_A_TIME = {"hoodie.write.concurrency.mode": "single_writer",
                 "hoodie.client.heartbeat.interval_in_ms": "250",
                 "hoodie.client.heartbeat.tolerable.misses": "1"}  # fmt: skip


def write_config(
    table_type: str,
    inline_compaction: bool = False,
    options: dict | None = None,
    one_at_a_time: bool = True,
) -> WriteConfig:
    """The fault tests' config; `one_at_a_time=False`: the default concurrency settings."""
    base = {"hoodie.compact.inline": str(inline_compaction).lower(),
            "hoodie.compact.inline.max.delta.commits": "1"} if table_type == "MERGE_ON_READ" \
        else {}  # fmt: skip
    if one_at_a_time:
        base.update(ONE_AT_A_TIME)
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

"""What the crash tests and the child writer they kill agree on: schema and write config."""

from __future__ import annotations

from hoodie import WriteConfig

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"


def write_config(table_type: str, inline_compaction: bool = False) -> WriteConfig:
    return WriteConfig.build(
        "crashy",
        record_key="id",
        partition_path="dt",
        precombine_field="ts",
        table_type=table_type,
        options={"hoodie.compact.inline": str(inline_compaction).lower(),
                 "hoodie.compact.inline.max.delta.commits": "1"} if table_type == "MERGE_ON_READ"
        else {},
    )  # fmt: skip

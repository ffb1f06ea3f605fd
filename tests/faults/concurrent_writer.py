"""One of several writers upserting into the same table at once (optimistic concurrency).

Usage: python concurrent_writer.py <base path> <writer number> <rounds> <out.json>
Each round upserts this writer's own key into its own partition; even-numbered writers also
update the shared key in the shared partition, so they conflict with each other. The result
of every round (instant, or the error's class and message) goes to out.json. The table type
and further write options come from HOODIE_WRITER_TABLE_TYPE and HOODIE_WRITER_OPTIONS (JSON).
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


from tests_support import child_spark  # noqa: E402

from hoodie import HoodieTable, WriteConfig  # noqa: E402
from hoodie.exceptions import HoodieError  # noqa: E402

SCHEMA = "id int, value string, p string, ts bigint"
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}


def config() -> WriteConfig:
    return WriteConfig.build(
        "concurrent",
        record_key="id",
        partition_path="p",
        precombine_field="ts",
        table_type=os.environ.get("HOODIE_WRITER_TABLE_TYPE", "COPY_ON_WRITE"),
        options={**OCC, **json.loads(os.environ.get("HOODIE_WRITER_OPTIONS", "{}"))},
    )


def rows_for(writer: int, round_: int) -> list[tuple]:
    ts = time.time_ns()
    value = f"w{writer}r{round_}"
    rows = [(1000 * (writer + 1) + round_, value, f"own{writer}", ts)]
    if writer % 2 == 0:
        rows.append((0, value, "shared", ts))
    return rows


def main(base: str, writer: int, rounds: int, out: str) -> None:
    spark = child_spark()
    cfg = config()
    table = HoodieTable.open(base)
    results = []
    for round_ in range(rounds):
        rows = rows_for(writer, round_)
        try:
            result = table.upsert(spark.createDataFrame(rows, SCHEMA), cfg)
            results.append({"round": round_, "instant": result.instant, "rows": rows})
        except HoodieError as error:
            results.append({"round": round_, "error": type(error).__name__,
                            "message": str(error), "rows": rows})  # fmt: skip
    with open(out, "w") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])

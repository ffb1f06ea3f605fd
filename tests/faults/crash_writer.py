"""A writer that a fault-injection test kills: run as a child process with HOODIE_CRASH_AT set.

Usage: python crash_writer.py <base path> <plan.json>
The plan is {"action": "upsert" | "compact" | "rollback", "rows": [[id, name, dt, ts], ...],
"table_type": ...}. Reaching the crash point kills this process with SIGKILL; finishing the
action instead exits with status 3, which the test reports as a crash point never reached.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ["HOODIE_CRASH_PID"] = str(os.getpid())

from tests_support import SCHEMA, child_spark, write_config  # noqa: E402

from hoodie import HoodieTable  # noqa: E402

NOT_REACHED = 3


def main(base: str, plan_path: str) -> None:
    with open(plan_path) as handle:
        plan = json.load(handle)
    spark = child_spark()
    cfg = write_config(plan["table_type"], inline_compaction=plan.get("inline", False))
    table = HoodieTable.open(base)
    if plan["action"] == "upsert":
        table.upsert(spark.createDataFrame([tuple(r) for r in plan["rows"]], SCHEMA), cfg)
    elif plan["action"] == "compact":
        table.compact(spark, cfg)
    elif plan["action"] == "rollback":
        table.rollback()
    sys.exit(NOT_REACHED)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

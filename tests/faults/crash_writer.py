"""A writer that a fault-injection test kills: run as a child process with HOODIE_CRASH_AT set.

Usage: python crash_writer.py <base path> <plan.json>
The plan is {"action": ..., "table_type": ..., "options": {...}} plus what the action needs
(and "storage_options" for a table on object storage).
Only "upsert" (of "rows": [[id, name, dt, ts, deleted], ...]), "compact" and "cluster" start
Spark; the
others run on the driver alone, as they do in the core, so their child costs a Python start,
not a JVM's: "rollback" (the latest commit), "clean", "archive" (with the options' keep.*),
"savepoint" / "restore" (of "instant"), "schedule_compaction", "upgrade" (to table version 8,
of a table with no log files to compact), and "commit": the commit step
of an optimistic-concurrency write whose files are written (the state and inputs the test
captured just before that write completed, in "ready"), under a table lock of "lease_seconds".
Reaching the crash point kills this process with SIGKILL; finishing the action instead exits
with status 3, which the test reports as a crash point never reached.
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
    action = plan["action"]
    cfg = write_config(plan["table_type"], plan.get("inline", False), plan.get("options"),
                       plan.get("one_at_a_time", True))  # fmt: skip
    table = HoodieTable.open(base, plan.get("storage_options"))
    if action == "upsert":
        spark = child_spark()
        table.upsert(spark.createDataFrame([tuple(r) for r in plan["rows"]], SCHEMA), cfg)
    elif action == "compact":
        table.services.compact(child_spark(), cfg)
    elif action == "cluster":
        table.services.cluster(child_spark(), cfg)
    elif action == "rollback":
        table.services.rollback(config=cfg)
    elif action == "clean":  # what `table.services.clean(cfg)` does, without importing PySpark
        from hoodie.table_services.clean import CleanConfig, Cleaner

        policy = (cfg.cleaner_policy, cfg.cleaner_commits_retained,
                  cfg.cleaner_file_versions_retained)  # fmt: skip
        from hoodie.transaction.failed_writes import FailedWritesPolicy

        failed_writes = FailedWritesPolicy.of(table.storage, cfg)
        Cleaner(table.meta_client, CleanConfig(*policy), failed_writes).run()
    elif action == "archive":
        from hoodie.table_services.archival import archive

        archive(table.meta_client, cfg.keep_min_commits, cfg.keep_max_commits)
    elif action == "savepoint":
        table.services.savepoint(plan["instant"])
    elif action == "restore":
        table.services.restore(plan["instant"], cfg)
    elif action == "schedule_compaction":
        from hoodie.table_services.compaction import Compactor

        Compactor(table.meta_client, cfg).schedule()
    elif action == "commit":
        commit(table, cfg, plan)
    elif action == "upgrade":  # a table with no log files to compact: no Spark needed
        table.services.upgrade(None, cfg)
    sys.exit(NOT_REACHED)


def commit(table, cfg, plan) -> None:
    """The completion step of a write, given what the write had in hand at that moment."""
    from hoodie.metadata import CommitMetadata
    from hoodie.timeline import LAYOUT_V1, Action, Instant, State, Timeline
    from hoodie.transaction.failed_writes import FailedWritesPolicy
    from hoodie.transaction.lock import FileSystemLock
    from hoodie.transaction.transaction import Transaction

    with open(plan["ready"]) as handle:
        ready = json.load(handle)
    instant = Instant(ready["instant"], Action(ready["action"]), State.INFLIGHT)
    started = Timeline([LAYOUT_V1.parse_file_name(name) for name in ready["started"]])
    lock = FileSystemLock(table.storage, lease_seconds=plan["lease_seconds"])
    policy = FailedWritesPolicy.of(table.storage, cfg, lock)
    transaction = Transaction(table.meta_client, policy, instant, started)
    transaction.commit(CommitMetadata.from_json(ready["metadata"]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

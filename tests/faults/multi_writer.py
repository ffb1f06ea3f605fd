"""One of several writer processes upserting into shared tables at once (optimistic concurrency).

Usage: python multi_writer.py <plan.json>
The plan: {"writer": w, "rounds": n, "ready": path, "go": path, "out": path,
           "tables": [{"path", "table_type", "index", "keys"}, ...]}.
The writer creates `ready` once its JVM is up and starts writing when `go` exists, so that
all writers start together.
One JVM does every round of every table: round r writes the batch `batch(table, w, r)` of
each table in turn, so a process's tables take turns and its JVM starts only once. The result
of every write (its instant, or the error's class and message, and the rows) goes to `out`.
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

SCHEMA = "id int, value string, p string, ts bigint, _hoodie_is_deleted boolean"
SHARED_KEYS = 8  # seeded into partition `shared` of every `overlap` table
OWN_KEYS = 4  # seeded into partition `w<w>` of every `disjoint` table, per writer
# The metadata table's index partitions, kept by every write's commit.
INDEXES = {"hoodie.metadata.index.column.stats.enable": "true",
           "hoodie.metadata.index.bloom.filter.enable": "true"}  # fmt: skip


def config(spec: dict) -> WriteConfig:
    """The writers' config: concurrent writers (stated, or with `defaults` in the spec the
    default concurrency settings), automatic clean (a short history, so it has work to do),
    merge-on-read compacting inline every two delta commits; archival is left out of the way
    so the test can read every instant back. With `metadata_table` (6 or 8): that table version,
    with hoodie.metadata.enable=true, compacting it every four delta commits (its clean follows;
    its archival is held back as the data table's is); with `indexes` as well, its
    `column_stats` and `bloom_filters` partitions (`INDEXES`)."""
    stated = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
    options = {
        **({} if spec.get("defaults") else stated),
        "hoodie.index.type": spec["index"],
        "hoodie.bucket.index.num.buckets": "4",
        "hoodie.clean.automatic": "true",
        "hoodie.cleaner.commits.retained": "6",
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.keep.min.commits": "400",
        "hoodie.keep.max.commits": "500",
    }
    if spec.get("metadata_table") is not None:  # that table version, keeping the metadata table
        options.update({"hoodie.write.table.version": str(spec["metadata_table"]),
                        "hoodie.metadata.enable": "true",
                        "hoodie.metadata.compact.max.delta.commits": "4"})  # fmt: skip
        if spec.get("indexes"):
            options.update(INDEXES)
    return WriteConfig.build(
        "writers", record_key="id", partition_path="p", precombine_field="ts",
        table_type=spec["table_type"], options=options,
    )  # fmt: skip


def seed_rows(keys: str, writers: int) -> list[tuple]:
    if keys == "overlap":
        return [(k, "seed", "shared", 0, False) for k in range(SHARED_KEYS)]
    return [
        (own_key(w, k), "seed", f"w{w}", 0, False) for w in range(writers) for k in range(OWN_KEYS)
    ]


def own_key(writer: int, n: int) -> int:
    return 1000 * (writer + 1) + n


def batch(keys: str, writer: int, round_: int) -> list[tuple]:
    """Updates of two keys others may update too (overlap) or of this writer's own key
    (disjoint), an insert of a new key, and every third round a delete of an earlier one."""
    ts = time.time_ns()
    value = f"w{writer}r{round_}"
    new = own_key(writer, 100 + round_)
    if keys == "overlap":
        partition = "shared"
        updated = sorted({(writer + round_) % SHARED_KEYS,
                          (3 * writer + 2 * round_ + 1) % SHARED_KEYS})  # fmt: skip
    else:
        partition = f"w{writer}"
        updated = [own_key(writer, round_ % OWN_KEYS)]
    rows = [(k, value, partition, ts, False) for k in updated]
    rows.append((new, value, partition, ts, False))
    if round_ % 3 == 2:
        rows.append((own_key(writer, 100 + round_ - 2), None, partition, ts, True))
    return rows


def main(plan_path: str) -> None:
    with open(plan_path) as handle:
        plan = json.load(handle)
    spark = child_spark()
    tables = [(spec, HoodieTable.open(spec["path"], spec.get("storage_options")), config(spec))
              for spec in plan["tables"]]  # fmt: skip
    spark.createDataFrame([(1,)], "x int").collect()  # the JVM is up before the start
    open(plan["ready"], "w").close()
    while not os.path.exists(plan["go"]):
        time.sleep(0.05)
    writer, results = plan["writer"], []
    for round_ in range(plan["rounds"]):
        for spec, table, cfg in tables:
            rows = batch(spec["keys"], writer, round_)
            entry = {"table": spec["path"], "writer": writer, "round": round_, "rows": rows}
            started = time.monotonic()
            try:
                result = table.upsert(spark.createDataFrame(rows, SCHEMA), cfg)
                entry.update(instant=result.instant,
                             compactions=[c.instant for c in result.compactions])  # fmt: skip
            except HoodieError as error:
                entry.update(error=type(error).__name__, message=str(error))
            entry["seconds"] = round(time.monotonic() - started, 2)
            results.append(entry)
    with open(plan["out"], "w") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main(sys.argv[1])

"""Runs several dbt commands in one process (one JVM) and reports what happened as JSON.

Usage: python dbt_driver.py <project_dir> <plan.json> <out.json>
The plan is {"commands": [[...dbt args...], ...], "tables": ["schema.table", ...]}. For each
command the report holds success and the error text; for each table, its rows (user columns).
"""

from __future__ import annotations

import json
import sys


def _comment(spark, name: str) -> str | None:
    """The table comment (spark.catalog.getTable() shows none for data source tables)."""
    schema, table = name.split(".")
    info = spark.sql(f"SHOW TABLE EXTENDED IN {schema} LIKE '{table}'").collect()[0][3]
    lines = [line for line in info.splitlines() if line.startswith("Comment: ")]
    return lines[0][len("Comment: ") :] if lines else None


def main() -> None:
    project_dir, plan_path, out_path = sys.argv[1:4]
    from dbt.cli.main import dbtRunner

    with open(plan_path) as handle:
        plan = json.load(handle)
    report = {"commands": [], "tables": {}}
    for args in plan["commands"]:
        logged: list[str] = []

        def collect(event, logged=logged):
            if event.info.level == "error":
                logged.append(event.info.msg)

        result = dbtRunner(callbacks=[collect]).invoke(
            [*args, "--project-dir", project_dir, "--profiles-dir", project_dir]
        )
        messages, timings = [], {}
        if result.result is not None and hasattr(result.result, "results"):
            messages = [str(getattr(r, "message", "")) for r in result.result.results]
            for r in result.result.results:
                node = getattr(r, "node", None)
                if node is not None and getattr(r, "timing", None):
                    timings[node.name] = [t.to_dict() for t in r.timing]
        report["commands"].append(
            {
                "args": args,
                "success": result.success,
                "error": str(result.exception) if result.exception else "\n".join(logged),
                "messages": messages,
                "timings": timings,
            }
        )
    if plan.get("tables"):
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        for name in plan["tables"]:
            if not spark.catalog.tableExists(name):
                report["tables"][name] = {"columns": [], "rows": [], "missing": True}
                continue
            df = spark.table(name)
            user = [c for c in df.columns if not c.startswith("_hoodie_")]
            report["tables"][name] = {
                "columns": df.columns,
                "types": {f.name: f.dataType.simpleString() for f in df.schema.fields},
                "comments": {f.name: f.metadata.get("comment") for f in df.schema.fields},
                "description": _comment(spark, name),
                "rows": [r.asDict() for r in df.select(user).collect()],
            }
    with open(out_path, "w") as handle:
        json.dump(report, handle, default=str)


if __name__ == "__main__":
    main()

"""A dbt project on disk and a plan of dbt commands to run on it, with a report of the outcome.

Two kinds of tests use it: tests/dbt/scenarios runs the plan in its own pytest process
(`run_plan`, dbt's programmatic runner, the process's one Hive-enabled SparkSession), and
tests/functional runs it in a child process of its own (`dbt_driver.py`), where a scenario
needs another interpreter or several JVMs at once.

The report holds, per command, its success, error and result messages; per table named in
the plan (a model of the project's schema), its columns, types, comments and rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

# Every profile of one process must give the same session settings: the adapter builds one
# SparkSession per distinct set, and a JVM holds one SparkContext.
DRIVER = Path(__file__).parent / "functional" / "dbt_driver.py"
SPARK_CONF = {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"}
# Every test project's dbt_project.yml; a test that needs more (model configs) appends to it.
PROJECT_YML = textwrap.dedent("""\
    name: functional
    version: "1.0"
    config-version: 2
    profile: functional
    vars:
      batch: 1
    """)


def profile_target(spark_root: Path, schema: str | None = None) -> dict:
    """A `type: hoodie` session profile whose warehouse and metastore are under spark_root."""
    target = {
        "type": "hoodie",
        "threads": 1,
        "master": "local[2]",
        "warehouse_dir": str(spark_root / "warehouse"),
        "metastore_dir": str(spark_root / "metastore"),
        "spark_conf": dict(SPARK_CONF),
    }
    if schema is not None:
        target["schema"] = schema
    return target


class DbtProject:
    """A dbt project under root whose models land in `schema` of the warehouse under
    spark_root; tests write its files and name its tables by model name."""

    def __init__(self, root: Path, spark_root: Path, schema: str, **profile: object):
        self.root = root
        self.schema = schema
        # Where the schema's tables live: <warehouse>/<schema>.db/<model>.
        self.lake = spark_root / "warehouse" / f"{schema}.db"
        (root / "models").mkdir(parents=True)
        (root / "seeds").mkdir()
        (root / "dbt_project.yml").write_text(PROJECT_YML)
        # A profile key given as None is left out (a Connect server keeps its own warehouse).
        target = {k: v for k, v in {**profile_target(spark_root, schema), **profile}.items()
                  if v is not None}  # fmt: skip
        self.remote = target.get("remote")
        outputs = {"target": "test", "outputs": {"test": target}}
        (root / "profiles.yml").write_text(yaml.safe_dump({"functional": outputs}))

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    def plan(self, commands: list[list[str]], tables: list[str] = ()) -> dict:
        return {"commands": commands, "tables": list(tables), "schema": self.schema,
                "remote": self.remote}  # fmt: skip


class ChildProcessProject(DbtProject):
    """A project with its own warehouse and metastore, whose plans run in a child process."""

    def __init__(self, root: Path, **profile: object):
        super().__init__(root, spark_root=root, schema="func", **profile)

    def run(
        self,
        commands: list[list[str]],
        tables: list[str] = (),
        python: str = sys.executable,
        worker_python: str | None = None,
    ) -> dict:
        """Run the plan with `python`; Spark's Python workers run `worker_python` (default:
        the same)."""
        plan = self.root / "plan.json"
        out = self.root / "report.json"
        plan.write_text(json.dumps(self.plan(commands, tables)))
        env = dict(os.environ, PYSPARK_PYTHON=worker_python or python)
        if python != sys.executable:
            # Another interpreter (a clean venv) must import its own install, not a checkout.
            env.pop("PYTHONPATH", None)
        proc = subprocess.run(
            [python, str(DRIVER), str(self.root), str(plan), str(out)],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0 or not out.exists():
            output = f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            raise AssertionError(f"dbt driver failed:\n{output}")
        return json.loads(out.read_text())


LOCAL_CLUSTER = "local-cluster[2,1,1024]"  # two executor JVMs beside the driver


class ClusterProject(ChildProcessProject):
    """A project whose profile's master is a local-cluster (executor JVMs of their own),
    run by a child process; the executors' Python workers run `worker_python`."""

    def __init__(self, root: Path, worker_python: str, **profile: object):
        spark_conf = {**SPARK_CONF, "spark.executor.memory": "512m"}
        super().__init__(root, master=LOCAL_CLUSTER, spark_conf=spark_conf, **profile)
        self.worker_python = worker_python

    def run(self, commands: list[list[str]], tables: list[str] = (), **kwargs) -> dict:
        return super().run(commands, tables, worker_python=self.worker_python, **kwargs)


class ConnectProject(ChildProcessProject):
    """A project whose profile is `remote: sc://...` (a Spark Connect server started apart),
    run by a child process that is only a Connect client: its tables are in the server's
    warehouse and metastore."""

    def __init__(self, root: Path, url: str, warehouse: Path, schema: str, **profile: object):
        DbtProject.__init__(self, root, spark_root=root, schema=schema, remote=url, master=None,
                            warehouse_dir=None, metastore_dir=None, **profile)  # fmt: skip
        self.lake = warehouse / f"{schema}.db"


def _listed(spark, name: str, field: str) -> str | None:
    """A line of the table's listing (spark.catalog.getTable() shows no comment for data
    source tables, SHOW TBLPROPERTIES no properties): "Comment", "Table Properties"."""
    schema, table = name.split(".")
    info = spark.sql(f"SHOW TABLE EXTENDED IN {schema} LIKE '{table}'").collect()[0][3]
    lines = [line for line in info.splitlines() if line.startswith(f"{field}: ")]
    return lines[0][len(field) + 2 :] if lines else None


def _command(project_dir: str, args: list[str]) -> dict:
    from dbt.cli.main import dbtRunner

    logged: list[str] = []

    def collect(event) -> None:
        if event.info.level == "error":
            logged.append(event.info.msg)

    result = dbtRunner(callbacks=[collect]).invoke(
        [*args, "--project-dir", project_dir, "--profiles-dir", project_dir]
    )
    messages, timings, batches = [], {}, {}
    if result.result is not None and hasattr(result.result, "results"):
        messages = [str(getattr(r, "message", "")) for r in result.result.results]
        for r in result.result.results:
            node = getattr(r, "node", None)
            if node is not None and getattr(r, "timing", None):
                timings[node.name] = [t.to_dict() for t in r.timing]
            # A microbatch model's batches, by their start: which ran and which failed.
            done = getattr(r, "batch_results", None)
            if node is not None and done is not None:
                batches[node.name] = {
                    "successful": sorted(str(b[0]) for b in done.successful),
                    "failed": sorted(str(b[0]) for b in done.failed),
                }
    return {
        "args": args,
        "success": result.success,
        "error": str(result.exception) if result.exception else "\n".join(logged),
        "messages": messages,
        "timings": timings,
        "batches": batches,
    }


def _table(spark, name: str) -> dict:
    if not spark.catalog.tableExists(name):
        return {"columns": [], "rows": [], "missing": True}
    df = spark.table(name)
    user = [c for c in df.columns if not c.startswith("_hoodie_")]
    return {
        "columns": df.columns,
        "types": {f.name: f.dataType.simpleString() for f in df.schema.fields},
        "comments": {f.name: f.metadata.get("comment") for f in df.schema.fields},
        "description": _listed(spark, name, "Comment"),
        "properties": _listed(spark, name, "Table Properties"),
        "rows": [r.asDict() for r in df.select(user).collect()],
    }


def run_plan(project_dir: str, plan: dict) -> dict:
    """Runs the plan's dbt commands in this process, then reads its tables (by model name).

    The report is plain JSON data (dates and decimals as strings), wherever the plan ran.
    """
    report: dict = {"commands": [_command(project_dir, args) for args in plan["commands"]]}
    report["tables"] = {}
    if plan.get("tables"):
        from pyspark.sql import SparkSession

        builder = SparkSession.builder
        spark = (builder.remote(plan["remote"]) if plan.get("remote") else builder).getOrCreate()
        for name in plan["tables"]:
            report["tables"][name] = _table(spark, f"{plan['schema']}.{name}")
    return json.loads(json.dumps(report, default=str))

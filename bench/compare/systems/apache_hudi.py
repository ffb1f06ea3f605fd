"""Apache Hudi itself, through its Spark datasource: 1.2 (table version 8, or its default 9) and
0.15 (table version 6), copy-on-write and merge-on-read.

Apache Hudi's bundles are built for Spark 3.5 (Maven Central has none for Spark 4), so it runs
in a child process of the worker on the reference venv of `make apache-hudi`
(.venv/apache-hudi, PySpark 3.5; bundles in .venv/apache-hudi-jars): apache_hudi_job.py. The
child's Spark gets the settings of the other Spark systems (`upsert_cow.SESSION_CONFIG`: 4g
driver, UTC, ...; the run's master and shuffle partitions) plus what Apache Hudi requires
(Kryo with its registrator, its session extension and catalog). The child, its JVM and its
Python workers are the worker's descendants, so memory and bytes read count them as for any
system; the worker times each call around the job's round trip.

The writes, as a user of the datasource writes them: the first load is a `bulk_insert` (the
row writer, Apache Hudi's default), each upsert batch an `upsert`, the deletes a `delete` of
the keys (`id`, `event_date`); record key `id`, partition path `event_date`, precombine field
`ts`, everything else Apache Hudi's defaults unless the variant says otherwise (for
merge-on-read that includes inline compaction after 5 delta commits: the datasource compacts
inline when no async compaction runs, as ours does by default). Compaction is
Apache Hudi's `run_compaction` procedure, scheduled and executed at once over every file slice
with log files (the scheduling trigger set to 1 delta commit, so it always plans), as our
`services.compact` compacts.

Apache Hudi's Spark default index is SIMPLE (1.2 and 0.15: "Default is SIMPLE on Spark
engine"), the index our core uses by default: the default runs are also the runs with our
index. The `_ours` variants also take the rest of our core's bench settings (snappy rather
than gzip, no metadata table, as our version-6 tables; the first load sorted by key within each
partition path, one task per partition path; merge-on-read compacted inline after 5 delta
commits), to show what Apache Hudi's defaults cost apart from its engine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from . import System, hudi_table_version

ROOT = Path(__file__).resolve().parents[3]
ENV_PYTHON = ROOT / ".venv" / "apache-hudi" / "bin" / "python"
JARS = ROOT / ".venv" / "apache-hudi-jars"
JOB = Path(__file__).resolve().with_name("apache_hudi_job.py")
HUDI_1 = "1.2.0"
HUDI_0 = "0.15.0"
TABLE_NAME = "bench_fact"

# What a compaction run takes: plan every slice with log files, however few delta commits
COMPACT_OPTIONS = {"hoodie.compact.inline.max.delta.commits": "1"}
# Our core's bench settings (see the module docstring), for the `_ours` variants
OURS = {
    "hoodie.index.type": "SIMPLE",
    "hoodie.parquet.compression.codec": "snappy",
    "hoodie.metadata.enable": "false",
    "hoodie.bulkinsert.sort.mode": "PARTITION_PATH_REPARTITION_AND_SORT",
}
OURS_MOR = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "5"}


def bundle(version: str) -> Path:
    return JARS / f"hudi-spark3.5-bundle_2.12-{version}.jar"


def missing(version: str) -> str | None:
    """Why Apache Hudi `version` cannot run here, or None."""
    for path in (ENV_PYTHON, bundle(version)):
        if not path.exists():
            return f"{path} is missing: run `make apache-hudi` (Apache Hudi {version})"
    return None


def child_environment() -> dict[str, str]:
    """This process's environment for Apache Hudi's PySpark: none of the project's PySpark or
    Python paths, and the caller's JVM options (the quick JIT of the smoke run) without a
    class archive, which is of the project's Spark."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYSPARK_", "SPARK_", "PYTHON")) and k != "JAVA_TOOL_OPTIONS"
    }
    options = os.environ.get("JAVA_TOOL_OPTIONS", "").split()
    kept = [o for o in options if not o.startswith("-XX:SharedArchiveFile")]
    if kept:
        env["JAVA_TOOL_OPTIONS"] = " ".join(kept)
    return env


class HudiProcess:
    """One Apache Hudi Spark session in a child process (apache_hudi_job.py); a job at a time."""

    def __init__(self, version: str, master: str, config: dict[str, str]):
        problem = missing(version)
        if problem:
            raise RuntimeError(problem)
        self.version = version
        self.scratch = Path(tempfile.mkdtemp(prefix=f"compare-apache-hudi-{version}-"))
        self.log_path = self.scratch / "stderr.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in close()
        read_end, write_end = os.pipe()
        command = [
            str(ENV_PYTHON),
            str(JOB),
            "--jar", str(bundle(version)),
            "--master", master,
            "--config", json.dumps(config),
            "--reply-fd", str(write_end),
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=self._log,
            stderr=self._log,
            env=child_environment(),
            cwd=self.scratch,
            pass_fds=(write_end,),
            text=True,
        )
        os.close(write_end)
        self._replies = os.fdopen(read_end, "r")
        self.ready = self._reply()["ready"]
        self._count = 0

    def _reply(self) -> dict:
        line = self._replies.readline()
        if not line:
            self._log.flush()
            tail = self.log_path.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"Apache Hudi {self.version}'s process ended:\n{tail}")
        return json.loads(line)

    def ask(self, job: dict) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        reply = self._reply()
        if "error" in reply:
            raise RuntimeError(f"Apache Hudi {self.version}: {reply['error']}: {reply['message']}")
        return reply

    def rows(self, job: dict) -> pa.Table:
        """A read job's rows, through a parquet folder in the scratch folder."""
        self._count += 1
        out = self.scratch / f"rows-{self._count:05d}"
        try:
            self.ask({**job, "out": str(out)})
            return pq.read_table(out)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write(json.dumps({"job": "stop"}) + "\n")
                self.process.stdin.close()
                self.process.wait(timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(30)
        self._replies.close()
        self._log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


# --shared-spark (smoke runs): one child per Apache Hudi version in the shared worker, stopped
# when the worker exits
_SHARED: dict[str, HudiProcess] = {}


def close_shared() -> None:
    while _SHARED:
        _SHARED.popitem()[1].close()


def session_config(options: dict) -> dict[str, str]:
    """The Spark settings of the bench's own Spark systems (compare/systems/spark.py)."""
    from .spark import BENCH_DIR

    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    from upsert_cow import SESSION_CONFIG

    config = dict(SESSION_CONFIG)
    if options.get("shuffle_partitions"):
        config["spark.sql.shuffle.partitions"] = str(options["shuffle_partitions"])
    return config


class ApacheHudi(System):
    uses_spark = True
    version = HUDI_1
    table_type = "COPY_ON_WRITE"
    write_table_version: str | None = "8"  # None: the version's default
    settings: dict[str, str] = {}  # write options beyond the defaults
    has_read_optimized = False
    compacts = False

    def open(self) -> None:
        master = self.options.get("master", "local[2]")
        if self.options.get("shared_spark"):
            if self.version not in _SHARED:
                _SHARED[self.version] = HudiProcess(self.version, master, self.config())
            self.hudi = _SHARED[self.version]
        else:
            self.hudi = HudiProcess(self.version, master, self.config())
        self.path = str(self.table_dir)

    def config(self) -> dict[str, str]:
        return session_config(self.options)

    def close(self) -> None:
        if not self.options.get("shared_spark"):
            self.hudi.close()

    def versions(self) -> dict:
        return {
            "apache_hudi": self.version,
            "spark": self.hudi.ready["spark"],
            "pyspark": self.hudi.ready["pyspark"],
            "table_type": self.table_type,
            "write_table_version": self.write_table_version or "default",
            "options": self.settings,
        }

    def write_options(self, operation: str) -> dict[str, str]:
        options = {
            "hoodie.table.name": TABLE_NAME,
            "hoodie.datasource.write.table.type": self.table_type,
            "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "event_date",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.operation": operation,
        }
        if self.write_table_version:
            options["hoodie.write.table.version"] = self.write_table_version
        return {**options, **self.settings}

    def _write(self, files: list[str], operation: str) -> None:
        job = {"job": "write", "path": self.path, "files": files}
        self.hudi.ask({**job, "options": self.write_options(operation)})

    def create(self, files: list[str]) -> None:
        self._write(files, "bulk_insert")

    def upsert(self, files: list[str]) -> None:
        self._write(files, "upsert")

    def delete(self, files: list[str]) -> None:
        self._write(files, "delete")

    def compact(self) -> None:
        options = {**self.write_options("upsert"), **COMPACT_OPTIONS}
        self.compacted = self.hudi.ask({"job": "compact", "path": self.path, "options": options})

    def details(self, step: str, before: dict[str, int]) -> dict:
        """The table's version and what the latest commit wrote, as our core reads them from
        the timeline (not measured); an error is recorded, never raised."""
        out: dict = {"table_version": hudi_table_version(self.table_dir)}
        try:
            from hoodie import HoodieTable

            table = HoodieTable.open(self.path)
            instants = table.timeline().completed.write_timeline.instants
            stats = table.commit_metadata(instants[-1]).write_stats()
            out.update(
                instant=instants[-1].timestamp,
                action=str(getattr(instants[-1].action, "value", instants[-1].action)),
                inserts=sum(s.num_inserts for s in stats),
                updates=sum(s.num_update_writes for s in stats),
                deletes=sum(s.num_deletes for s in stats),
                file_groups_written=len({s.file_id for s in stats}),
                log_files_written=sum(".log." in (s.path or "") for s in stats),
            )
        except Exception as error:  # noqa: BLE001 - details are informative only
            out["details_error"] = f"{type(error).__name__}: {str(error)[:300]}"
        if step == "compaction":
            out["compaction_instants"] = getattr(self, "compacted", {}).get("instants")
        return out

    def step_started(self, label: str) -> None:
        self.hudi.ask({"job": "group", "label": label})

    def step_counts(self, label: str) -> dict:
        reply = self.hudi.ask({"job": "counts", "label": label})
        return {k: reply[k] for k in ("spark_jobs", "spark_stages", "spark_tasks")}

    # reads: every column into Spark's noop sink, as the other Spark systems
    def _read(self, where: str | None = None, **options: str) -> None:
        self.hudi.ask({"job": "read", "path": self.path, "options": options, "where": where})

    def _rows(self, columns: list[str], where: str | None = None, **options: str) -> pa.Table:
        job = {"job": "read", "path": self.path, "options": options, "where": where}
        return self.hudi.rows({**job, "columns": columns})

    def scan(self) -> None:
        self._read()

    def scan_read_optimized(self) -> None:
        self._read(**{"hoodie.datasource.query.type": "read_optimized"})

    def scan_partition(self, date: str) -> None:
        self._read(partition_condition(date))

    def count_partition(self, date: str) -> int:
        job = {"job": "count", "path": self.path, "options": {}}
        return self.hudi.ask({**job, "where": partition_condition(date)})["rows"]

    def point_read(self, key: int) -> None:
        self._read(f"id = {int(key)}")

    def point_read_rows(self, key: int, columns: list[str]) -> pa.Table:
        return self._rows(columns, f"id = {int(key)}")

    def filter_rows(self, column: str, above: float) -> None:
        self._read(filter_condition(column, above))

    def filter_result(self, column: str, above: float, columns: list[str]) -> pa.Table:
        return self._rows(columns, filter_condition(column, above))

    def read_check(self, columns: list[str]) -> pa.Table:
        return self._rows(columns)


def partition_condition(date: str) -> str:
    import datetime as dt

    return f"event_date = DATE'{dt.date.fromisoformat(date).isoformat()}'"


def filter_condition(column: str, above: float) -> str:
    if not column.isidentifier():
        raise ValueError(f"not a column name: {column!r}")
    return f"{column} > {float(above)!r}D"


class ApacheHudiMor(ApacheHudi):
    table_type = "MERGE_ON_READ"
    has_read_optimized = True
    compacts = True


class ApacheHudiCow(ApacheHudi):
    name = "apache_hudi_cow"
    description = (
        "Apache Hudi 1.2.0 datasource, copy-on-write, table version 8, its defaults (SIMPLE "
        "index, metadata table, gzip), Spark 3.5"
    )


class ApacheHudiMorDefault(ApacheHudiMor):
    name = "apache_hudi_mor"
    description = (
        "Apache Hudi 1.2.0 datasource, merge-on-read, table version 8, its defaults (SIMPLE "
        "index, metadata table, gzip, inline compaction after 5 delta commits), Spark 3.5"
    )


class ApacheHudiCowOurs(ApacheHudi):
    name = "apache_hudi_cow_ours"
    description = (
        "Apache Hudi 1.2.0, copy-on-write, table version 8, our core's settings (SIMPLE, snappy, "
        "no metadata table, first load sorted per partition), Spark 3.5"
    )
    settings = OURS


class ApacheHudiMorOurs(ApacheHudiMor):
    name = "apache_hudi_mor_ours"
    description = (
        "Apache Hudi 1.2.0, merge-on-read, table version 8, our core's settings (SIMPLE, snappy, "
        "no metadata table, first load sorted per partition, inline compaction after 5 delta "
        "commits), Spark 3.5"
    )
    settings = {**OURS, **OURS_MOR}


class ApacheHudiCowV9(ApacheHudi):
    name = "apache_hudi_cow_v9"
    description = "Apache Hudi 1.2.0, copy-on-write, all defaults (table version 9), Spark 3.5"
    write_table_version = None


class ApacheHudiMorV9(ApacheHudiMor):
    name = "apache_hudi_mor_v9"
    description = "Apache Hudi 1.2.0, merge-on-read, all defaults (table version 9), Spark 3.5"
    write_table_version = None


class ApacheHudi015Cow(ApacheHudi):
    name = "apache_hudi_015_cow"
    description = "Apache Hudi 0.15.0, copy-on-write, its defaults (table version 6), Spark 3.5"
    version = HUDI_0
    write_table_version = None


class ApacheHudi015Mor(ApacheHudiMor):
    name = "apache_hudi_015_mor"
    description = "Apache Hudi 0.15.0, merge-on-read, its defaults (table version 6), Spark 3.5"
    version = HUDI_0
    write_table_version = None

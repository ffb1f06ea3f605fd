"""Our core: `cow_upsert` and `mor_upsert`, Hudi tables written by `hoodie` on local Spark.

The writes are exactly what the dbt materializations call: `HoodieTable.for_write` +
`table.upsert(df, cfg)` / `table.delete(df, cfg)`, with the core's default options (SIMPLE
index, cleaning and, for merge-on-read, inline compaction every 5 delta commits), because
those are what a dbt user gets. The initial load is an upsert into an empty table, as a
model's first run is.

Where the time of a write goes is recorded too: `stage_timer` wraps the write client's steps
that run Spark jobs (as bench/upsert_mor.py does for one batch, plus compaction, cleaning and
archiving); the wrappers cost nothing measurable.

For copy-on-write, after each write (not measured) the physical bound is computed: the time
pyarrow alone needs to read and rewrite exactly the base files the commit replaced. Those are
the previous base files of the file groups the commit updated, found from the commit's write
stats (`prevCommit` and `fileId`) in the listing taken before the write.
"""

from __future__ import annotations

import multiprocessing
import os
import posixpath
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from . import hudi_table_version
from .spark import SparkSystem

PUSHDOWN_OPTION = "hoodie.read.filter.pushdown"
# The write's steps -> what their time is (Spark is lazy: each includes the jobs it triggers)
STAGES = {
    "BatchPreparer.summarize": "input: read the batch, key checks, fill the input cache",
    "SimpleIndex.tag_and_place": "SIMPLE index: stored keys scan + join (tagging), fill the "
    "tagged cache",
    "BucketIndex.tag_and_place": "BUCKET index: bucket hash, lookup of (partition, bucket) "
    "file groups",
    "WriteExecutor.write_file_groups": "write: shuffle to file groups, merge or append, "
    "parquet/log files",
    "WriteExecutor.write_buckets": "BUCKET index, merge-on-read: input, tagging and write in "
    "one Spark job",
    "SimpleIndex.plan_routing": "SIMPLE index: routing units from the listing (and footers)",
    "WriteExecutor.write_routed": "SIMPLE index: input, tagging and write in one Spark job",
    "WriteExecutor.bulk_insert": "bulk insert (first load): input, sort and write in one job",
    "TableServiceRunner._compact_inline": "merge-on-read inline compaction",
    "TableServiceRunner._clean": "cleaning old file versions",
    "TableServiceRunner.archive": "archiving old instants",
}
# The report's columns (bench/compare/report.py) for those steps.
STAGE_COLUMNS = {
    "BatchPreparer.summarize": "check_keys_and_partitions",
    "SimpleIndex.tag_and_place": "tagging",
    "BucketIndex.tag_and_place": "tagging",
    "WriteExecutor.write_file_groups": "write_file_groups",
    "WriteExecutor.write_buckets": "write_buckets",
    "SimpleIndex.plan_routing": "tagging",
    "WriteExecutor.write_routed": "write_file_groups",
    "WriteExecutor.bulk_insert": "write_file_groups",
    "TableServiceRunner._compact_inline": "compact_inline",
    "TableServiceRunner._clean": "clean",
    "TableServiceRunner.archive": "archive",
}


def stage_timer():
    """Seconds spent in each of STAGES during the block: bench/upsert_mor.py's timer."""
    from .spark import BENCH_DIR

    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    from upsert_mor import stage_timer as timer

    return timer(STAGES)


class HoodieCore(SparkSystem):
    table_type = "COPY_ON_WRITE"
    index_options: dict[str, str] = {}  # SIMPLE, the default index

    def open(self) -> None:
        super().open()
        from hoodie import WriteConfig
        from hoodie.read.datasource import register

        register(self.spark)
        self.cfg = WriteConfig.build(
            "bench_fact",
            record_key="id",
            partition_path="event_date",
            precombine_field="ts",
            table_type=self.table_type,
            options=self.index_options,
        )
        self.table = None
        self.result = None

    def versions(self) -> dict:
        return {**super().versions(), "table_type": self.table_type}

    def _write(self, files: list[str], delete: bool = False) -> None:
        from hoodie import HoodieTable

        if self.table is None:
            self.table = HoodieTable.for_write(str(self.table_dir), self.cfg)
        df = self.inputs(files)
        write = self.table.delete if delete else self.table.upsert
        with stage_timer() as stages:
            started = time.perf_counter()
            self.result = write(df, self.cfg)
            total = time.perf_counter() - started
        by_column: dict[str, float] = {}
        for name, seconds in stages.items():
            column = STAGE_COLUMNS[name]
            by_column[column] = by_column.get(column, 0.0) + seconds
        self.stages = {column: round(s, 3) for column, s in by_column.items()}
        self.stages["driver_and_rest"] = round(total - sum(stages.values()), 3)

    def create(self, files: list[str]) -> None:
        self._write(files)

    def upsert(self, files: list[str]) -> None:
        self._write(files)

    def delete(self, files: list[str]) -> None:
        self._write(files, delete=True)

    def snapshot(self):
        """The core's read (`HoodieTable.read`): Spark's parquet scan of the planned base files
        where nothing needs merging, the `hoodie` data source otherwise."""
        from hoodie import HoodieTable

        return HoodieTable.open(str(self.table_dir)).read(self.spark)

    def data_source_snapshot(self):
        """The `hoodie` data source, as catalog tables (dbt's models) and SQL read."""
        return (
            self.spark.read.format("hoodie")
            .option(PUSHDOWN_OPTION, "true")
            .load(str(self.table_dir))
        )

    def reference_scans(self) -> dict:
        """Spark's own parquet scan of the latest base files our snapshot reads: issue 17's
        read target is 1.2x of it. For merge-on-read these are the base files alone (what a
        read-optimized query reads), without the log files a snapshot merges."""
        from hoodie import HoodieTable

        from .spark import noop

        view = HoodieTable.open(str(self.table_dir)).file_system_view()
        files = [str(self.table_dir / f.relative_path) for f in view.latest_base_files()]
        return {
            "parquet_same_files": lambda: noop(self.spark.read.parquet(*files)),
            "data_source": lambda: noop(self.data_source_snapshot()),
        }

    def details(self, step: str, before: dict[str, int]) -> dict:
        if step == "compaction":
            return {
                "table_version": hudi_table_version(self.table_dir),
                "compaction_instants": [r.instant for r in self.compactions],
                "updates": sum(r.num_updates for r in self.compactions),
                "deletes": sum(r.num_deletes for r in self.compactions),
                "file_groups_written": sum(len(r.metadata.write_stats()) for r in self.compactions),
            }
        r = self.result
        stats = r.metadata.write_stats()
        return {
            "table_version": hudi_table_version(self.table_dir),
            "instant": r.instant,
            "inserts": r.num_inserts,
            "updates": r.num_updates,
            "deletes": r.num_deletes,
            "file_groups_written": len(stats),
            "log_files_written": sum(".log." in (s.path or "") for s in stats),
            "compactions": len(r.compactions),
            "core_seconds": round(r.seconds, 3),
            "stages_seconds": self.stages,
        }


class CowUpsert(HoodieCore):
    name = "cow_upsert"
    description = "our core, copy-on-write, local Spark"
    table_type = "COPY_ON_WRITE"

    def details(self, step: str, before: dict[str, int]) -> dict:
        out = super().details(step, before)
        out["physical_bound"] = physical_bound_apart(self.table_dir, self.result.instant, before)
        return out


class MorUpsert(HoodieCore):
    name = "mor_upsert"
    description = "our core, merge-on-read, local Spark"
    table_type = "MERGE_ON_READ"
    has_read_optimized = True
    compacts = True

    def scan_read_optimized(self) -> None:
        from hoodie import HoodieTable

        from .spark import noop

        table = HoodieTable.open(str(self.table_dir))
        noop(table.read(self.spark, {"hoodie.datasource.query.type": "read_optimized"}))

    def compact(self) -> None:
        """Every file slice with log files, as `hoodie_compact` and Apache Hudi's
        `run_compaction` do (the writes compact inline too, after 5 delta commits)."""
        from hoodie import HoodieTable

        table = HoodieTable.open(str(self.table_dir), config=self.cfg)
        self.compactions = table.services.compact(self.spark)


# One bucket per date partition: the SIMPLE runs' layout (one file group per partition), so
# the two differ only in tagging.
BUCKET_INDEX = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}


class CowUpsertBucket(CowUpsert):
    name = "cow_upsert_bucket"
    description = "our core, copy-on-write, BUCKET index (1 bucket per partition), local Spark"
    index_options = BUCKET_INDEX


class MorUpsertBucket(MorUpsert):
    name = "mor_upsert_bucket"
    description = "our core, merge-on-read, BUCKET index (1 bucket per partition), local Spark"
    index_options = BUCKET_INDEX


def rewritten_base_files(table_dir: Path, instant: str, before: dict[str, int]) -> list[str]:
    """The base files that commit `instant` replaced: for every file group it updated (its
    write stat has a `prevCommit`), that group's base file of the previous commit."""
    from hoodie import HoodieTable

    table = HoodieTable.open(str(table_dir))
    matches = [
        i for i in table.timeline().completed.write_timeline.instants if i.timestamp == instant
    ]
    if not matches:
        return []
    out = []
    for stat in table.commit_metadata(matches[0]).write_stats():
        if stat.prev_commit in ("", "null", None) or not (stat.path or "").endswith(".parquet"):
            continue
        suffix = f"_{stat.prev_commit}.parquet"
        prefix = posixpath.join(stat.partition_path, stat.file_id + "_")
        old = [p for p in before if p.startswith(prefix) and p.endswith(suffix)]
        out.extend(p for p in old[:1] if (table_dir / p).exists())  # unless cleaning took it
    return out


def physical_bound_apart(table_dir: Path, instant: str, before: dict[str, int]) -> dict:
    """`physical_bound` in a process of its own: pyarrow's memory pool keeps what the bound
    read, which counted as the Python driver's own memory in every later step (the
    copy-on-write driver grew from 373 to 1,036 MiB over the sizes while merge-on-read's,
    which computes no bound, stayed at 146 MiB)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(physical_bound, table_dir, instant, before).result()


def physical_bound(table_dir: Path, instant: str, before: dict[str, int]) -> dict:
    """pyarrow alone reading and rewriting (snappy parquet) the files the commit rewrote,
    one thread per core: what the bytes cost without a merge, an index or Spark."""
    import pyarrow.parquet as pq

    files = rewritten_base_files(table_dir, instant, before)
    scratch = Path(tempfile.mkdtemp(prefix="physical-bound-"))

    def rewrite(index_and_path):
        index, relpath = index_and_path
        table = pq.read_table(table_dir / relpath)
        pq.write_table(table, scratch / f"{index}.parquet", compression="snappy")
        return table.num_rows

    try:
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            rows = sum(pool.map(rewrite, enumerate(files)))
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "files": len(files),
        "bytes": sum(before[p] for p in files),
        "rows": rows,
        "seconds": round(seconds, 3),
    }

"""Where a write's or a scan's time goes: CPU seconds per process kind (the JVM, Python workers,
the Python driver) around each step, for the steps `make bench` times.

On 2 cores a step's wall time is bounded below by its CPU seconds over 2, so the split says
which side a missed target has to win back: the JVM's (input scan, shuffle, sort, rows to
Arrow) or the Python workers' (merge, parquet encode and decode). The profiles:

- `writes`: our load, three 10% upserts, the 1% update and the delete (the benchmark's
  workload, copy-on-write or merge-on-read);
- `load-parts`: plain Spark's load and ours, beside the JVM parts of ours, cumulatively (scan +
  shuffle, + the rows' transfer to Python as Arrow, as the bulk insert hands them over);
  and the sorts the bulk insert made before `cefe207` (by partition and key strings, by a
  hash prefix), with the transfer after the second;
- `hand-off`: what the load's JVM part costs by column kind: the rows' transfer to Python
  as Arrow with every column, without the decimal columns and without the string columns;
  and the bulk insert's former sort beside a sort by its first key alone (one long, which
  Spark can radix-sort);
- `scan`: our full scans (`HoodieTable.read`, the `hoodie` data source) beside
  `spark.read.parquet` of the same latest base files;
- `merge`: one copy-on-write file group's merge handle in this process, step by step (the
  batch's combine, the stored file's read, the merge, the new file's write): the largest base
  file of the `writes` table, with a batch of updates to 5% of its rows and as many inserts;
- `mor-scan`: the same for a merge-on-read table after its load and an update of one of its
  30 partitions (log files in that partition's slices only): `HoodieTable.read` scans the
  other slices with Spark's reader and merges those through the data source.

    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/python bench/cpu_split.py writes --rows 3000000
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare.systems.spark import noop, start_spark  # noqa: E402
from compare.workload import generate  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from hoodie import HoodieTable, WriteConfig  # noqa: E402
from hoodie.read.datasource import register  # noqa: E402


def _kind(process: psutil.Process) -> str:
    command = " ".join(process.cmdline()[:3])
    if "java" in command:
        return "jvm"
    if "pyspark.daemon" in command or "pyspark.worker" in command:
        return "python worker"
    return "driver"


def _cpu_by_pid() -> dict[int, tuple[str, float]]:
    me = psutil.Process()
    seen = {}
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
            seen[process.pid] = (_kind(process), times.user + times.system)
        except psutil.Error:  # a worker that ended meanwhile
            continue
    return seen


def measure(label: str, step: Callable[[], object]) -> None:
    """Print the step's wall time and the CPU seconds each process kind spent in it."""
    before = _cpu_by_pid()
    started = time.perf_counter()
    step()
    wall = time.perf_counter() - started
    spent: dict[str, float] = {}
    for pid, (kind, cpu) in _cpu_by_pid().items():
        spent[kind] = spent.get(kind, 0.0) + cpu - before.get(pid, (kind, 0.0))[1]
    split = ", ".join(f"{kind} {seconds:.1f}" for kind, seconds in sorted(spent.items()))
    print(f"{label:36s} wall {wall:6.2f} s   CPU s: {split}", flush=True)


def profile_writes(spark, workload, root: Path, table_type: str) -> None:
    shutil.rmtree(root / "table", ignore_errors=True)
    config = WriteConfig.build(
        "bench", record_key="id", partition_path="event_date", precombine_field="ts",
        table_type=table_type,
    )  # fmt: skip
    table = HoodieTable.for_write(str(root / "table"), config)
    for step in workload.steps:
        write = table.delete if step.kind == "delete" else table.upsert
        measure(step.name, lambda w=write, s=step: w(spark.read.parquet(*s.files), config))


def profile_load_parts(spark, workload, root: Path) -> None:
    load = workload.steps[0].files
    out = root / "plain_spark"

    def plain_load() -> None:
        shutil.rmtree(out, ignore_errors=True)
        rows = spark.read.parquet(*load).repartition("event_date")
        rows.write.partitionBy("event_date").parquet(str(out))

    def shuffled():
        return spark.read.parquet(*load).repartition("event_date")

    def by_strings():
        return shuffled().sortWithinPartitions("event_date", "id")

    def by_prefix():  # the bulk insert's sort before cefe207: one long, partition then key hash
        prefix = F.shiftleft(F.pmod(F.xxhash64("event_date"), F.lit(1 << 23)), 40).bitwiseOR(
            F.xxhash64("id").bitwiseAND(F.lit((1 << 40) - 1))
        )
        return shuffled().sortWithinPartitions(prefix, "event_date", "id")

    def to_python(batches):
        return (batch.slice(0, 0) for batch in batches)

    def hoodie_load() -> None:
        shutil.rmtree(root / "loaded", ignore_errors=True)
        config = WriteConfig.build("bench", record_key="id", partition_path="event_date",
                                   precombine_field="ts")  # fmt: skip
        table = HoodieTable.for_write(str(root / "loaded"), config)
        table.upsert(spark.read.parquet(*load), config)

    schema = spark.read.parquet(*load).schema
    for _ in range(2):  # the first round pays the JIT
        measure("plain Spark load", plain_load)
        measure("hoodie load (bulk insert)", hoodie_load)
        measure("scan + shuffle", lambda: noop(shuffled()))
        measure("+ rows to Python as Arrow (the bulk insert's hand-off)",
                lambda: noop(shuffled().mapInArrow(to_python, schema)))  # fmt: skip
        measure("+ sort by strings", lambda: noop(by_strings()))
        measure("+ sort by a hash prefix", lambda: noop(by_prefix()))
        measure("+ that, rows to Python as Arrow",
                lambda: noop(by_prefix().mapInArrow(to_python, schema)))  # fmt: skip


def profile_hand_off(spark, workload, root: Path) -> None:
    load = workload.steps[0].files
    columns = spark.read.parquet(*load).schema
    strings = [f.name for f in columns if f.dataType.simpleString() == "string"]
    decimals = [f.name for f in columns if f.dataType.simpleString().startswith("decimal")]

    def shuffled(drop: tuple[str, ...] = ()):
        return spark.read.parquet(*load).repartition("event_date").drop(*drop)

    def to_python(frame):
        return frame.mapInArrow(lambda batches: (b.slice(0, 0) for b in batches), frame.schema)

    prefix = F.shiftleft(F.pmod(F.xxhash64("event_date"), F.lit(1 << 23)), 40).bitwiseOR(
        F.xxhash64(F.col("id").cast("string")).bitwiseAND(F.lit((1 << 40) - 1))
    )
    for _ in range(2):  # the first round pays the JIT
        measure("scan + shuffle", lambda: noop(shuffled()))
        measure("+ to Python, every column", lambda: noop(to_python(shuffled())))
        measure(f"+ to Python, without {len(decimals)} decimals",
                lambda: noop(to_python(shuffled(tuple(decimals)))))  # fmt: skip
        measure(f"+ to Python, without {len(strings)} strings",
                lambda: noop(to_python(shuffled(tuple(strings)))))  # fmt: skip
        measure("+ the bulk insert's sort before cefe207", lambda: noop(
            shuffled().withColumn("p", prefix).sortWithinPartitions(
                "p", "event_date", "id", F.col("ts").desc())))  # fmt: skip
        measure("+ a sort by its first key alone", lambda: noop(
            shuffled().withColumn("p", prefix).sortWithinPartitions("p")))  # fmt: skip


def profile_merge(root: Path, rounds: int = 5) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    from hoodie.index.placement import FileGroupTarget
    from hoodie.markers import WriteMarkers
    from hoodie.schema import META_COLUMNS, RECORD_KEY
    from hoodie.storage import load_file_io
    from hoodie.write.merge_handle import CopyOnWriteHandle, write_base_file

    table = HoodieTable.open(str(root / "table"))
    base = max(table.file_system_view().latest_base_files(), key=lambda f: f.size)
    stored = table.storage.read_parquet(base.relative_path)
    user = stored.drop_columns(META_COLUMNS)
    twentieth = stored.num_rows // 20
    updates = user.slice(0, twentieth)
    updates = updates.set_column(
        updates.schema.get_field_index("ts"), "ts", pc.add(updates.column("ts"), 1)
    )
    inserts = user.slice(twentieth, twentieth)
    inserts = inserts.set_column(0, "id", pc.add(inserts.column("id"), 10**12))
    batch = pa.concat_tables([updates, inserts])
    batch = batch.append_column(RECORD_KEY, pc.cast(batch.column("id"), pa.string()))
    print(f"{base.relative_path}: {stored.num_rows} rows, batch {batch.num_rows}", flush=True)

    scratch = root / "merge_scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / base.partition_path).mkdir(parents=True)
    shutil.copy(root / "table" / base.relative_path, scratch / base.relative_path)
    storage = load_file_io(str(scratch))
    instant = "29991231235959999"
    target = FileGroupTarget(base.partition_path, base.file_id, base.relative_path, base.instant)
    handle = CopyOnWriteHandle(storage, instant, {base.file_id: target}, user.schema, ("id",),
                               "ts", "snappy", WriteMarkers(storage, instant))  # fmt: skip
    for _ in range(rounds):
        times = [time.perf_counter()]
        incoming = handle.combine(batch)
        times.append(time.perf_counter())
        previous = handle._read_previous(target)
        times.append(time.perf_counter())
        output, stat = handle._merge(target, incoming, previous)
        times.append(time.perf_counter())
        assert stat.path is not None
        write_base_file(storage, stat.path, output, "snappy")
        times.append(time.perf_counter())
        steps = zip(["combine", "read", "merge", "write"], zip(times, times[1:]))
        print("   ".join(f"{name} {end - start:.3f} s" for name, (start, end) in steps),
              f"  all {times[-1] - times[0]:.3f} s", flush=True)  # fmt: skip


def profile_mor_scan(spark, workload, root: Path) -> None:
    path = root / "mor_table"
    if not (path / ".hoodie").exists():
        config = WriteConfig.build(
            "bench_mor", record_key="id", partition_path="event_date", precombine_field="ts",
            table_type="MERGE_ON_READ", options={"hoodie.compact.inline": "false"},
        )  # fmt: skip
        table = HoodieTable.for_write(str(path), config)
        measure("MOR load", lambda: table.upsert(spark.read.parquet(*workload.steps[0].files),
                                                 config))  # fmt: skip
        update = spark.read.parquet(*workload.steps[1].files)
        day = update.select(F.min("event_date")).first()[0]
        one_partition = update.where(F.col("event_date") == F.lit(day))
        measure("MOR update of one partition", lambda: table.upsert(one_partition, config))
    profile_scan(spark, root, "mor_table")


def profile_scan(spark, root: Path, name: str = "table") -> None:
    path = str(root / name)
    view = HoodieTable.open(path).file_system_view()
    files = [f"{path}/{base.relative_path}" for base in view.latest_base_files()]
    table = HoodieTable.open(path)
    source = spark.read.format("hoodie")
    for _ in range(3):
        measure("HoodieTable.read full scan", lambda: noop(table.read(spark)))
        measure("hoodie data source full scan", lambda: noop(source.load(path)))
        measure("spark.read.parquet, same files", lambda: noop(spark.read.parquet(*files)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    profiles = ["writes", "load-parts", "hand-off", "scan", "mor-scan", "merge"]
    parser.add_argument("profile", choices=profiles)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--table-type", default="COPY_ON_WRITE")
    parser.add_argument("--work", type=Path, default=Path("/tmp/hoodie-cpu-split"))
    args = parser.parse_args()
    root = args.work / str(args.rows)
    if args.profile == "merge":  # in this process, no Spark: the `writes` table must exist
        profile_merge(root)
        return
    workload = generate(args.rows, 3, 20261122, root / "data")
    spark = start_spark("local[2]", "cpu-split")
    register(spark)
    if args.profile == "writes":
        profile_writes(spark, workload, root, args.table_type)
    elif args.profile == "load-parts":
        profile_load_parts(spark, workload, root)
    elif args.profile == "hand-off":
        profile_hand_off(spark, workload, root)
    elif args.profile == "mor-scan":
        profile_mor_scan(spark, workload, root)
    else:
        if not (root / "table" / ".hoodie").exists():
            profile_writes(spark, workload, root, args.table_type)
        profile_scan(spark, root)


if __name__ == "__main__":
    main()

"""Benchmark: `dbt run` of one incremental model, ours against dbt-spark's on parquet.

Times whole `dbt run` processes (the JVM start, dbt's parsing, the model, everything: wall
time around the subprocess) of ONE incremental model per dbt project, for our `cow_upsert` and
`mor_upsert` materializations and for dbt-spark's own `incremental` materialization on a
parquet table, over the same input, on the same machine, in one run.

The input is compare.py's FACT workload (bench/compare/workload.py, imported): an initial
table of `--rows` rows (22 columns, 30 date partitions) and `--batches` upsert batches of
rows/10 each, half updates of existing keys (skewed toward recent days, but touching every
partition) and half new keys in the 3 newest days; then, as one more run, compare.py's
`update_1pct` batch (rows/100 updates drawn uniformly over all live keys: every partition, no
inserts; `--no-update-1pct` leaves it out). The generator writes them as parquet under
`<workdir>/data/` (`load`, `upsert_1`, ..., `update_1pct`; it also writes compare.py's delete
batch, which is not used here). The models read them with `parquet.`<data_dir>/<batch>``, the
batch named by a dbt var: run 1 is `dbt run --vars '{batch: load}'` (the initial load), run
k + 1 is `--vars '{batch: upsert_k}'`, the last run `--vars '{batch: update_1pct}'`.

Each kind is its own dbt project (own folder, warehouse, Derby metastore) with one model, and
every run is its own `dbt run --threads 1` subprocess, so every measured run pays its own JVM
start. The runs are interleaved: run 1 of every kind, then run 2 of every kind, ... (so a
slow minute of the machine does not fall on one kind only). The models (key `id`, partition
`event_date`, precombine `ts`):

- `cow_upsert`: `config(materialized='cow_upsert', record_key='id',
  partition_path='event_date', precombine_field='ts')`, `select *` from the batch;
- `mor_upsert`: the same with `materialized='mor_upsert'`; inline compaction after 5 delta
  commits, the default, so with 3 batches the `update_1pct` run (the 5th delta commit) also
  compacts every file group, inside its measured `dbt run`;
- `spark_parquet_incremental`: dbt-spark's `materialized='incremental', file_format='parquet',
  incremental_strategy='insert_overwrite', partition_by=['event_date']`. dbt-spark has no
  `merge` strategy for parquet, so the upsert is written in the model: on incremental runs
  (`{% if is_incremental() %}`) it selects the batch UNION ALL the rows of `{{ this }}` in the
  batch's partitions (`event_date in (select event_date from batch)`) whose (id, event_date)
  is not in the batch (`not exists`); on the first run, just the batch. Columns are listed
  explicitly: the table created by dbt-spark's `create table ... partitioned by` has the
  partition column last, and UNION ALL matches by position.
- `dbt_table` (leave out with `--no-table`): dbt's `table` materialization, `file_format=
  'parquet'`, `partition_by=['event_date']`, rebuilding the whole table every run from a source
  that holds the table's current rows (`state_<batch>`: the expected table after that run,
  written by the generator's side like the batches): what a model without incremental logic
  costs, with no merge at all. Issue 44's targets compare the models' times with it: a lake
  model's first run within 1.2x, an incremental run within 1x.
- `spark_parquet_append` (only with `--append`; a labelled reference, NOT an upsert: its table
  ends with every version of every updated row, so it is left out of the verification):
  `incremental_strategy='append'`, `select *` from the batch. It shows what dbt-spark pays
  with no merge at all.

Reading the table being overwritten. Spark refuses an `INSERT OVERWRITE` into a file-source
table that its query also reads (Spark 3: `Cannot overwrite a path that is also being read
from`; Spark 4: `[UNSUPPORTED_OVERWRITE.TABLE] Can't overwrite the target that is also being
read from`), but only in `spark.sql.sources.partitionOverwriteMode=static`, the default: in
DataSourceAnalysis (sql/core/.../datasources/DataSourceStrategy.scala) the check
`DDLUtils.verifyNotReadPath` runs only `if (overwrite && !insertCommand.dynamicPartitionOverwrite)`,
since a dynamic overwrite writes to a staging folder and moves the partitions in after the job
has read everything. dbt-spark's incremental materialization runs `set
spark.sql.sources.partitionOverwriteMode = DYNAMIC` whenever the strategy is `insert_overwrite`
with `partition_by`, creates a temp view of the model's SQL (`<model>__dbt_tmp`) and runs
`insert overwrite table <this> partition (event_date) select <columns> from <view>`: a dynamic
overwrite, so the model may read `{{ this }}`, and no staging model or other workaround is
needed. Checked on this PySpark (4.3.0): this benchmark's runs do exactly that, and by hand the
same `insert overwrite ... partition (p)` of a table from a view over itself fails in static
mode with the Spark 4 error above and succeeds in dynamic mode (replacing only the partitions
the query returns). Without `partition_by` the strategy overwrites the whole table in static
mode, and such a model could not read `{{ this }}`. What the dynamic overwrite gives up, unlike
the lake tables: a reader during the move can see some partitions replaced and others not, a
failure during the move leaves the table half replaced, and the table keeps no history.

Per run and kind the JSON records the wall seconds of the subprocess; dbt's own
`execution_time` of the model (run_results.json: the materialization alone); their difference
(everything else: the Python start, dbt's imports and parsing, the JVM start and the adapter's
Spark session, dbt's listing of the schema); dbt's `elapsed_time` of the run (run_results.json:
from after parsing to the end, so wall minus it is the Python start, dbt's imports and parsing,
with no partial parsing since the vars change on every run, and `elapsed_time` minus the
model's time is mostly the Spark session's start: JVM, Derby metastore); and the table's files
and bytes afterwards. After the last run every table is read (the lake tables with hudi-rs,
`hudi.HudiTable(path).read(...)`, no JVM; the parquet table with pyarrow) and reduced with
workload.py's `checksum` (row count, distinct ids, an order-independent hash over `id`,
`event_date`, `ts`, `amount`, `status`, `updated_at`, `is_returned`, `comment`); the expected
table is computed from the input files alone (each batch replaces the rows of its keys). A kind
whose table disagrees, or a failed `dbt run`, exits 1. The JVM options come from the
environment (`JAVA_TOOL_OPTIONS`, recorded in the JSON) and apply to every kind alike.

    .venv/bin/python bench/dbt_incremental.py                       # 1,000,000 rows, 3 batches
    .venv/bin/python bench/dbt_incremental.py --rows 20000 --out /tmp/dbt_inc.json
    .venv/bin/python bench/dbt_incremental.py --append              # + the append reference

Writes bench/results/dbt_incremental.json (machine, commit, versions, every run) and prints a
markdown table of wall seconds per run and kind with the ratios to the Spark incremental model.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
from compare import metrics  # noqa: E402
from compare import workload as wl  # noqa: E402
from upsert_cow import repo_commit  # noqa: E402

DEFAULT_OUT = HERE / "results" / "dbt_incremental.json"
SCHEMA = "bench"
SPARK = "spark_parquet_incremental"
APPEND = "spark_parquet_append"
TABLE = "dbt_table"
LAKE_KINDS = ("cow_upsert", "mor_upsert")
PROFILES = """\
bench:
  target: local
  outputs:
    local:
      type: hoodie
      schema: {schema}
      master: "{master}"
      warehouse_dir: {root}/lake
      metastore_dir: {root}/metastore
      spark_conf:
        spark.sql.shuffle.partitions: "4"
        spark.ui.enabled: "false"
"""
PROJECT = """\
name: bench
version: '1.0'
config-version: 2
profile: bench
vars:
  data_dir: {data_dir}
  batch: load
"""
BATCH = "parquet.`{{ var('data_dir') }}/{{ var('batch') }}`"
COLUMNS = ", ".join(wl.SCHEMA.names)
LAKE_MODEL = """\
{{{{ config(materialized='{kind}', record_key='id', partition_path='event_date',
          precombine_field='ts') }}}}
select * from {batch}
"""
SPARK_MODEL = """\
{{{{ config(materialized='incremental', file_format='parquet',
          incremental_strategy='insert_overwrite', partition_by=['event_date']) }}}}
{{#- dbt-spark has no merge for parquet: the upsert is the batch plus the rows of the batch's
    partitions that the batch does not replace; insert_overwrite (dynamic) swaps those
    partitions in. -#}}
with batch as (select {columns} from {batch})
select {columns} from batch
{{% if is_incremental() %}}
union all
select {t_columns} from {{{{ this }}}} as t
where t.event_date in (select event_date from batch)
  and not exists (select 1 from batch as b where b.id = t.id and b.event_date = t.event_date)
{{% endif %}}
"""
TABLE_MODEL = """\
{{{{ config(materialized='table', file_format='parquet', partition_by=['event_date']) }}}}
{{#- no incremental logic: each run rebuilds the table from a source holding the current rows
    (the run's state_<batch> folder) -#}}
select {columns} from {state}
"""
STATE = "parquet.`{{ var('data_dir') }}/state_{{ var('batch') }}`"
APPEND_MODEL = """\
{{{{ config(materialized='incremental', file_format='parquet', incremental_strategy='append',
          partition_by=['event_date']) }}}}
select * from {batch}
"""


def model_sql(kind: str) -> str:
    if kind in LAKE_KINDS:
        return LAKE_MODEL.format(kind=kind, batch=BATCH)
    if kind == SPARK:
        t_columns = ", ".join(f"t.{name}" for name in wl.SCHEMA.names)
        return SPARK_MODEL.format(columns=COLUMNS, t_columns=t_columns, batch=BATCH)
    if kind == APPEND:
        return APPEND_MODEL.format(batch=BATCH)
    if kind == TABLE:
        return TABLE_MODEL.format(columns=COLUMNS, state=STATE)
    raise ValueError(kind)


def make_project(root: Path, kind: str, data_dir: Path, master: str) -> None:
    shutil.rmtree(root, ignore_errors=True)
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(PROJECT.format(data_dir=data_dir))
    (root / "profiles.yml").write_text(PROFILES.format(schema=SCHEMA, master=master, root=root))
    (root / "models" / f"{kind}.sql").write_text(model_sql(kind))


def table_dir(root: Path, kind: str) -> Path:
    """Where both adapters put the model's table: <warehouse>/<schema>.db/<model>."""
    return root / "lake" / f"{SCHEMA}.db" / kind


def folder_size(folder: Path) -> dict:
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    data = [p for p in files if metrics.is_data_file(str(p.relative_to(folder)))]
    return {
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "data_files": len(data),
        "data_bytes": sum(p.stat().st_size for p in data),
    }


def dbt_run(root: Path, batch: str) -> dict:
    """One `dbt run` subprocess applying `batch`: wall seconds and dbt's per-model times."""
    env = dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable))
    dbt = Path(sys.executable).with_name("dbt")
    command = [
        str(dbt), "run", "--threads", "1", "--profiles-dir", str(root), "--project-dir",
        str(root), "--vars", json.dumps({"batch": batch}),
    ]  # fmt: skip
    run_results = root / "target" / "run_results.json"
    run_results.unlink(missing_ok=True)
    load_before = round(os.getloadavg()[0], 2)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=root)
    wall = time.perf_counter() - started
    (root / f"dbt_run_{batch}.log").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
    if done.returncode != 0 or not run_results.exists():
        raise RuntimeError(
            f"dbt run ({root.name}, {batch}) failed with exit {done.returncode}:\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    run_report = json.loads(run_results.read_text())
    results = run_report["results"]
    models = {r["unique_id"].split(".")[-1]: r for r in results}
    bad = {name: r["status"] for name, r in models.items() if r["status"] != "success"}
    if bad:
        raise RuntimeError(f"dbt run ({root.name}, {batch}): {bad}")
    model_seconds = sum(r["execution_time"] for r in models.values())
    return {
        "batch": batch,
        "wall_seconds": round(wall, 3),
        "model_seconds": round(model_seconds, 3),
        "outside_model_seconds": round(wall - model_seconds, 3),
        "dbt_elapsed_seconds": round(run_report["elapsed_time"], 3),
        "models": {name: round(r["execution_time"], 3) for name, r in models.items()},
        "load_average_1m_before": load_before,
    }


# -- the expected table and the tables' contents ------------------------------------------------
def read_input(data_dir: Path, batch: str, columns: list[str] | None = None) -> pa.Table:
    return ds.dataset(data_dir / batch, format="parquet").to_table(
        columns=wl.CHECK_COLUMNS if columns is None else columns
    )


def expected_table(
    data_dir: Path, batches: list[str], columns: list[str] | None = None
) -> pa.Table:
    """The load, then each upsert batch replacing the rows of its keys (`id` is unique over the
    table; an update keeps its row's `event_date`, so (id, event_date) is the same key)."""
    table = read_input(data_dir, batches[0], columns)
    for batch in batches[1:]:
        rows = read_input(data_dir, batch, columns)
        keep = pc.invert(pc.is_in(table["id"], rows["id"]))
        table = pa.concat_tables([table.filter(keep), rows])
    return table


def read_table(kind: str, path: Path) -> pa.Table:
    if kind in LAKE_KINDS:
        import hudi

        batches = hudi.HudiTable(str(path)).read(hudi.HudiReadOptions())
        table = pa.Table.from_batches(batches)
        return table.select(wl.CHECK_COLUMNS)
    # Spark's parquet table: event_date is only in the folder names (event_date=2024-01-01)
    dataset = ds.dataset(path, format="parquet", partitioning="hive")
    return dataset.to_table(columns=wl.CHECK_COLUMNS)


def write_states(data_dir: Path, batch_order: list[str]) -> None:
    """`state_<batch>`: the table's rows after each run, every column, as the `table` kind's
    source (written like the batches, in files of ROWS_PER_INPUT_FILE rows)."""
    for number, batch in enumerate(batch_order, start=1):
        state = expected_table(data_dir, batch_order[:number], wl.SCHEMA.names)
        wl._write(state.cast(wl.SCHEMA), data_dir / f"state_{batch}")


# -- report ---------------------------------------------------------------------------------------
def versions() -> dict:
    out = {}
    for name in ("dbt-core", "dbt-spark", "dbt-hoodie", "pyspark", "pyarrow", "hudi", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    java = subprocess.run(["java", "-version"], capture_output=True, text=True)
    lines = [line for line in java.stderr.splitlines() if "Picked up" not in line]
    out["java"] = lines[0] if lines else None
    out["python"] = sys.version.split()[0]
    return out


def markdown(report: dict) -> str:
    kinds = report["kinds"]
    head = ["run", "batch"] + [f"`{k}` s" for k in kinds]
    head += ["cow / spark", "mor / spark"]
    if TABLE in kinds:
        head += ["cow / table (model)", "mor / table (model)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for number, batch in enumerate(report["batch_order"], start=1):
        runs = {k: report["runs"][k][number - 1] for k in kinds}
        spark = runs[SPARK]["wall_seconds"]
        cells = [str(number), f"{batch} ({report['steps'][batch]['rows']:,} rows)"]
        cells += [f"{r['wall_seconds']:.1f} ({r['model_seconds']:.1f})" for r in runs.values()]
        spark_model = runs[SPARK]["model_seconds"]
        cells += [
            f"{runs[k]['wall_seconds'] / spark:.2f} ({runs[k]['model_seconds'] / spark_model:.2f})"
            for k in LAKE_KINDS
        ]
        if TABLE in kinds:
            table_model = runs[TABLE]["model_seconds"]
            cells += [f"{runs[k]['model_seconds'] / table_model:.2f}" for k in LAKE_KINDS]
        lines.append("| " + " | ".join(cells) + " |")
    totals = {k: sum(r["wall_seconds"] for r in report["runs"][k]) for k in kinds}
    model_totals = {k: sum(r["model_seconds"] for r in report["runs"][k]) for k in kinds}
    cells = ["all", ""] + [f"{totals[k]:.1f} ({model_totals[k]:.1f})" for k in kinds]
    cells += [
        f"{totals[k] / totals[SPARK]:.2f} ({model_totals[k] / model_totals[SPARK]:.2f})"
        for k in LAKE_KINDS
    ]
    if TABLE in kinds:
        cells += [f"{model_totals[k] / model_totals[TABLE]:.2f}" for k in LAKE_KINDS]
    lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Wall seconds of each `dbt run` subprocess (in parentheses: dbt's `execution_time` of "
        "the model); ratios of wall seconds (in parentheses: of the models' times); to "
        f"`{TABLE}` (dbt's `table` materialization rebuilding the table from a source of its "
        "current rows), of the models' times."
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the initial load")
    parser.add_argument("--batches", type=int, default=3, help="upsert batches of rows/10 each")
    parser.add_argument("--partitions", type=int, default=wl.PARTITIONS, help="date partitions")
    parser.add_argument("--seed", type=int, default=20261122, help="workload random seed")
    parser.add_argument("--master", default="local[2]", help="the profiles' Spark master")
    parser.add_argument(
        "--append", action="store_true", help="also run dbt-spark's append strategy (reference)"
    )
    parser.add_argument(
        "--no-table", action="store_true",
        help="leave out dbt's table materialization (rebuilding the table every run)",
    )
    parser.add_argument(
        "--no-update-1pct", action="store_true", help="leave out the last run, the 1%% update"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the JSON report")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder")
    parser.add_argument("--keep", action="store_true", help="keep the work folder afterwards")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    machine_before = metrics.machine()
    kinds = [*LAKE_KINDS, SPARK] + ([] if args.no_table else [TABLE])
    kinds += [APPEND] if args.append else []
    owned = args.workdir is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="dbt-incremental-")).resolve()
    print(f"work folder: {workdir}", flush=True)
    runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
    checks: dict[str, dict] = {}
    problems: list[str] = []
    try:
        data_dir = workdir / "data"
        shutil.rmtree(data_dir, ignore_errors=True)
        print(f"generating {args.rows:,} rows + {args.batches} batches ...", flush=True)
        workload = wl.generate(args.rows, args.batches, args.seed, data_dir, args.partitions)
        # the load, the upsert batches, then the 1% update (when the generator makes one)
        names = [step.name for step in workload.steps]
        batch_order = ["load"] + [f"upsert_{n}" for n in range(1, args.batches + 1)]
        if "update_1pct" in names and not args.no_update_1pct:
            batch_order.append("update_1pct")
        expected = wl.checksum(expected_table(data_dir, batch_order))
        if TABLE in kinds:
            write_states(data_dir, batch_order)
        print(
            f"  {workload.generate_seconds:.1f} s; expected final table: "
            f"{expected['rows']:,} rows, checksum {expected['checksum']}",
            flush=True,
        )
        for kind in kinds:
            make_project(workdir / kind, kind, data_dir, args.master)

        for number, batch in enumerate(batch_order, start=1):
            for kind in kinds:
                root = workdir / kind
                record = dbt_run(root, batch)
                record["run"] = number
                record["table"] = folder_size(table_dir(root, kind))
                runs[kind].append(record)
                print(
                    f"run {number} ({batch}) {kind}: dbt run {record['wall_seconds']:.1f} s, "
                    f"model {record['model_seconds']:.1f} s; table "
                    f"{record['table']['data_files']} data files",
                    flush=True,
                )

        for kind in kinds:
            got = wl.checksum(read_table(kind, table_dir(workdir / kind, kind)))
            reference = kind == APPEND
            agrees = got == expected
            checks[kind] = {**got, "matches_expected": agrees, "verified": not reference}
            print(f"{kind}: {got['rows']:,} rows, checksum {got['checksum']}"
                  + (" (reference, not an upsert: not verified)" if reference
                     else "" if agrees else "  <-- DIFFERS"), flush=True)  # fmt: skip
            if not reference and not agrees:
                problems.append(f"{kind}: {got} != expected {expected}")
    except RuntimeError as error:
        problems.append(str(error))
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    finally:
        if owned and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"work folder kept: {workdir}", flush=True)

    machine = metrics.machine()
    machine["load_average_before"] = machine_before["load_average"]
    machine["load_average_after"] = machine.pop("load_average")
    steps = {s.name: {k: v for k, v in s.to_dict().items() if k != "files"} for s in workload.steps}
    report = {
        "benchmark": "dbt_incremental",
        "command": "python bench/dbt_incremental.py " + " ".join(sys.argv[1:] if argv is None
                                                                 else argv),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": repo_commit(),
        "rows": args.rows,
        "batches": args.batches,
        "partitions": args.partitions,
        "seed": args.seed,
        "kinds": kinds,
        "batch_order": batch_order,
        "steps": {name: steps[name] for name in batch_order},
        "spark": {"master": args.master, "shuffle_partitions": 4,
                  "java_tool_options": os.environ.get("JAVA_TOOL_OPTIONS")},
        "machine": machine,
        "versions": versions(),
        "models": {kind: model_sql(kind) for kind in kinds},
        "runs": runs,
        "ratios_wall_to_spark_incremental": {
            kind: [round(a["wall_seconds"] / b["wall_seconds"], 3)
                   for a, b in zip(runs[kind], runs[SPARK])]
            for kind in kinds if kind != SPARK
        },
        "ratios_model_to_table": {
            kind: [round(a["model_seconds"] / b["model_seconds"], 3)
                   for a, b in zip(runs[kind], runs[TABLE])]
            for kind in LAKE_KINDS
        } if TABLE in kinds else None,
        "expected": expected,
        "tables": checks,
        "verified": not problems,
        "problems": problems,
        "total_seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_name(args.out.name + ".tmp")
    partial.write_text(json.dumps(report, indent=2) + "\n")
    partial.replace(args.out)
    print()
    print(markdown(report))
    print(f"\nwritten: {args.out}")
    if problems:
        print("FAILED: " + "; ".join(problems), file=sys.stderr)
        return 1
    print("verified: every upsert kind holds the expected table")
    return 0


if __name__ == "__main__":
    sys.exit(main())

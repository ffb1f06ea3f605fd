"""Benchmark: what a small model costs in `dbt run`, against dbt's `table` materialization.

A project of `--models` models of each kind (`table`: a plain parquet table, dbt-spark's own
materialization; `cow_upsert`; `mor_upsert`), all the same SELECT of `--rows` rows, built by
`dbt run` `--runs` times in a row (the first run creates every table; later runs are
incremental for the lake models and rebuild the `table` models). Each model's time is dbt's
own `execution_time` (run_results.json): the materialization alone, without dbt's start-up,
parsing or the JVM start, which a project pays once. Issue 17's target: a `cow_upsert` of a
few rows costs at most 2x the `table` model of the same SELECT in the same run.

    .venv/bin/python bench/small_models.py                       # 5 models of each kind, 3 runs
    .venv/bin/python bench/small_models.py --models 10 --runs 4 --out /tmp/small.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "small_models.json"
KINDS = {
    "table": "materialized='table'",
    "cow_upsert": "materialized='cow_upsert', record_key='id', precombine_field='ts'",
    "mor_upsert": "materialized='mor_upsert', record_key='id', precombine_field='ts'",
}
PROFILES = """\
small:
  target: local
  outputs:
    local:
      type: hoodie
      schema: bench
      master: "local[2]"
      warehouse_dir: {root}/lake
      metastore_dir: {root}/metastore
      spark_conf:
        spark.sql.shuffle.partitions: "4"
        spark.ui.enabled: "false"
"""


def _select(rows: int) -> str:
    """`rows` rows, new values on every run (the run's time as ts and in the name)."""
    return (
        "select cast(id as int) as id, concat('name-', id, '-', unix_timestamp()) as name, "
        f"unix_millis(current_timestamp()) as ts from range({rows})"
    )


def _project(root: Path, models: int, rows: int) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: small\nversion: '1.0'\nprofile: small\n")
    (root / "profiles.yml").write_text(PROFILES.format(root=root))
    for kind, config in KINDS.items():
        for n in range(models):
            sql = f"{{{{ config({config}) }}}}\n{_select(rows)}\n"
            (root / "models" / f"{kind}_{n}.sql").write_text(sql)


def _run(root: Path) -> tuple[float, dict[str, float]]:
    """One `dbt run` (one thread, so models do not overlap): wall time, time per model."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    dbt = Path(sys.executable).with_name("dbt")
    started = time.perf_counter()
    done = subprocess.run(
        [str(dbt), "run", "--threads", "1", "--profiles-dir", str(root), "--project-dir",
         str(root)],
        env=env, capture_output=True, text=True, cwd=root,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"dbt run failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    results = json.loads((root / "target" / "run_results.json").read_text())["results"]
    return wall, {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=5, help="models of each kind")
    parser.add_argument("--rows", type=int, default=3, help="rows each model selects")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    runs = []
    with tempfile.TemporaryDirectory(prefix="small-models-") as tmp:
        root = Path(tmp)
        _project(root, args.models, args.rows)
        for number in range(1, args.runs + 1):
            wall, times = _run(root)
            per_kind = {kind: sorted(t for m, t in times.items() if m.startswith(kind + "_"))
                        for kind in KINDS}  # fmt: skip
            medians = {kind: statistics.median(ts) for kind, ts in per_kind.items()}
            runs.append(
                {
                    "run": number,
                    "wall_seconds": round(wall, 2),
                    "models": times,
                    "median_seconds": medians,
                    "ratio_to_table": {k: medians[k] / medians["table"] for k in KINDS},
                }
            )
            ratios = runs[-1]["ratio_to_table"]
            print(f"run {number}: dbt run {wall:.1f} s; median per model: "
                  + ", ".join(f"{k} {v:.2f} s" for k, v in medians.items())
                  + f"; cow/table {ratios['cow_upsert']:.2f}x, "
                  f"mor/table {ratios['mor_upsert']:.2f}x", flush=True)  # fmt: skip
    report = {
        "benchmark": "small_models",
        "command": "python bench/small_models.py " + " ".join(sys.argv[1:]),
        "models_per_kind": args.models,
        "rows": args.rows,
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

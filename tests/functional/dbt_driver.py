"""Runs a plan of dbt commands in this process (one JVM) and writes its report as JSON.

Usage: python dbt_driver.py <project_dir> <plan.json> <out.json>
See tests/dbt_runs.py for the plan and the report.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# The clean venv of test_packaging has the tests' folder on no path of its own.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbt_runs import run_plan  # noqa: E402


def main() -> None:
    project_dir, plan_path, out_path = sys.argv[1:4]
    with open(plan_path) as handle:
        plan = json.load(handle)
    report = run_plan(project_dir, plan)
    with open(out_path, "w") as handle:
        json.dump(report, handle, default=str)


if __name__ == "__main__":
    main()

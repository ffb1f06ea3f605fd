"""The differential test's soak: many random sequences (`make soak SEQUENCES=500 SEED=1`).

Runs `tests/property` scenarios with Hypothesis on one local SparkSession, prints a line per
sequence, and at the end how many agreed with the model. On the first disagreement Hypothesis
shrinks it to the shortest sequence, which is printed as core API calls; the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# tests/: the helpers the harness shares with the other tests (listing_compare)
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from diff_harness import Disagreement, run_scenario  # noqa: E402
from diff_strategies import INDEXES, scenarios  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402


def make_spark(root: str):
    """The tests' session (tests/conftest.py): local[2], small shuffles, UTC, no UI."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("hoodie-soak")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.warehouse.dir", os.path.join(root, "warehouse"))
        .config("spark.local.dir", os.path.join(root, "local"))
        .config("spark.log.level", "ERROR")
        .getOrCreate()
    )


def soak_settings(sequences: int) -> settings:
    """Hypothesis's settings of a soak (this one and soak_hudi.py): `sequences` random
    sequences, no example database, no deadline, shrinking the first failure only."""
    return settings(
        max_examples=sequences,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        print_blob=False,
    )


def run_sequences(sequence, disagreement: type[Exception], tally: dict) -> int:
    """Run Hypothesis's test `sequence`: 0 when every sequence agreed, 1 on a `disagreement`
    (printed as Hypothesis shrunk it), 2 when the harness itself broke."""
    try:
        sequence()
    except disagreement as error:
        print(f"\nDISAGREEMENT (shrunk in {tally['shrink_runs']} runs):\n{error}", flush=True)
        return 1
    except Exception as error:  # the harness itself broke (a Spark error, Apache Hudi's, ...)
        print(f"\nERROR (shrunk in {tally['shrink_runs']} runs): {type(error).__name__}: {error}")
        for sub in getattr(error, "exceptions", ()):  # Hypothesis's FlakyFailure: what failed
            traceback.print_exception(sub)
        return 2
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sequences", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-ops", type=int, default=12, help="operations per sequence, at most")
    parser.add_argument("--min-ops", type=int, default=4, help="operations per sequence, at least")
    parser.add_argument("--index", choices=INDEXES, help="only tables of this index (default: all)")
    args = parser.parse_args(argv)

    root = tempfile.mkdtemp(prefix="hoodie-soak-")
    spark = make_spark(root)
    tally = {"agreed": 0, "steps": 0, "failed": False, "shrink_runs": 0, "known": 0}
    examples: list[str] = []
    started = time.monotonic()

    indexes = (args.index,) if args.index else INDEXES

    @soak_settings(args.sequences)
    @seed(args.seed)
    @given(
        scenario=scenarios(
            max_ops=args.max_ops, min_ops=args.min_ops, indexes=indexes, metadata_tables=True
        )
    )
    def sequence(scenario):
        if tally["failed"]:
            tally["shrink_runs"] += 1
        t0 = time.monotonic()
        try:
            stats = run_scenario(spark, scenario, root)
        except BaseException as error:
            if not tally["failed"]:
                print(f"sequence {tally['agreed'] + 1}: DISAGREES; shrinking...", flush=True)
                if not isinstance(error, Disagreement):  # the first failure, as it happened
                    traceback.print_exception(error)
            tally["failed"] = True
            raise
        if tally["failed"]:
            return
        tally["agreed"] += 1
        tally["steps"] += stats.steps
        tally["known"] += stats.hudi_rs_known
        examples.extend(stats.hudi_rs_examples[: max(0, 2 - len(examples))])
        p = scenario.params
        kinds = Counter(type(op).__name__ for op in scenario.ops)
        ops = " ".join(f"{name}x{count}" for name, count in sorted(kinds.items()))
        moving = p.index in ("GLOBAL_SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX")
        print(
            f"sequence {tally['agreed']}: agreed, {stats.steps} steps, {stats.reads} reads "
            f"({stats.refused} refused), {time.monotonic() - t0:.1f} s (operations "
            f"{stats.op_seconds:.1f} s, reads {stats.check_seconds:.1f} s) "
            f"[table version {p.table_version} {p.table_type} {p.index} "
            f"partitioned={p.partitioned} "
            f"precombine={p.precombine}"
            f"{f' update_partition_path={p.update_partition_path}' if moving else ''}"
            f"{f' max_file_size={p.max_file_size}' if p.max_file_size else ''}"
            f"{f' write_memory={p.write_memory}' if p.write_memory else ''}"
            f"{' metadata_table' if p.metadata_table else ''}"
            f"{f' merge={p.merge}' if p.merge else ''}"
            f"{f' cdc={p.cdc}' if p.cdc else ''}] {ops}",
            flush=True,
        )

    status = run_sequences(sequence, Disagreement, tally)
    minutes = (time.monotonic() - started) / 60
    print(
        f"\n{tally['agreed']} sequence(s) agreed with the model ({tally['steps']} steps) in "
        f"{minutes:.1f} min, {tally['agreed'] / minutes:.2f} sequences/min; seed {args.seed}",
        flush=True,
    )
    if tally["known"]:
        print(f"{tally['known']} hudi-rs read(s) differed where hudi 0.5.0 is known to, e.g.:")
        for example in examples:
            print(example)
    spark.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())

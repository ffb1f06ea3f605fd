"""Apache Hudi as the semantics oracle, soaked (`make soak-hudi SEQUENCES=200 SEED=1`).

Runs `hudi_oracle.py`'s random sequences with Hypothesis: each through our core and through
Apache Hudi's datasource (0.15 for table version 6, 1.2 for version 8, each in its child JVM of
`make apache-hudi`), comparing the tables' rows after every step. Prints a line per sequence
and at the end how many agreed; on the first disagreement Hypothesis shrinks it to the shortest
sequence, printed with both tables' rows and the model's; the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

from apache_hudi import ApacheHudi, available  # noqa: E402
from diff_strategies import INDEXES  # noqa: E402
from hudi_oracle import (  # noqa: E402
    HUDI_0,
    HUDI_1,
    Disagreement,
    apache_hudi_version,
    oracle_scenarios,
    run_oracle,
)
from hypothesis import given, seed  # noqa: E402
from soak import make_spark, run_sequences, soak_settings  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sequences", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-ops", type=int, default=8, help="operations per sequence, at most")
    parser.add_argument("--min-ops", type=int, default=3, help="operations per sequence, at least")
    parser.add_argument("--index", choices=INDEXES,
                        help="only tables of this index (default: SIMPLE and BUCKET)")  # fmt: skip
    args = parser.parse_args(argv)
    indexes = (args.index,) if args.index else ("SIMPLE", "BUCKET")
    missing = [v for v in (HUDI_1, HUDI_0) if not available(v)]
    if missing:
        print(f"Apache Hudi {', '.join(missing)} is not installed here: make apache-hudi")
        return 2

    root = tempfile.mkdtemp(prefix="hoodie-soak-hudi-")
    spark = make_spark(root)
    judges: dict[str, ApacheHudi] = {}
    tally = {"agreed": 0, "steps": 0, "failed": False, "shrink_runs": 0, "runs": 0}
    known: Counter = Counter()  # reads of deliberate differences, over the agreed sequences
    started = time.monotonic()

    @soak_settings(args.sequences)
    @seed(args.seed)
    @given(scenario=oracle_scenarios(max_ops=args.max_ops, min_ops=args.min_ops, indexes=indexes))
    def sequence(scenario):
        version = apache_hudi_version(scenario.params)
        if version not in judges:
            judges[version] = ApacheHudi(version)
        if tally["failed"]:
            tally["shrink_runs"] += 1
        tally["runs"] += 1
        t0 = time.monotonic()
        workdir = os.path.join(root, f"run{tally['runs']}")
        try:
            stats = run_oracle(spark, judges[version], scenario, workdir, f"oracle{tally['runs']}")
        except BaseException as error:
            if not tally["failed"]:
                print(f"sequence {tally['agreed'] + 1}: DISAGREES; shrinking...", flush=True)
                if not isinstance(error, Disagreement):
                    traceback.print_exception(error)
                else:
                    print(error, flush=True)
            tally["failed"] = True
            raise
        if tally["failed"]:
            return
        tally["agreed"] += 1
        tally["steps"] += stats.steps
        known.update(stats.known)
        p = scenario.params
        moving = ""
        if p.index in ("GLOBAL_SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX"):
            moving = f" update_partition_path={p.update_partition_path}"
        kinds = Counter(type(op).__name__ for op in scenario.ops)
        ops = " ".join(f"{name}x{count}" for name, count in sorted(kinds.items()))
        if stats.known:  # deliberate differences (hudi_oracle.OracleRunner._known)
            ops += f" known: {_counts(stats.known)}"
        print(
            f"sequence {tally['agreed']}: agreed, {stats.steps} steps ({stats.refused} refused "
            f"by us, {stats.skipped} skipped), "
            f"{time.monotonic() - t0:.1f} s (ours {stats.our_seconds:.1f} s, Apache "
            f"Hudi {stats.hudi_seconds:.1f} s) [Apache Hudi {version}, table version "
            f"{p.table_version} {p.table_type} {p.index} partitioned={p.partitioned} "
            f"precombine={p.precombine} compact_every={p.compact_every}"
            f"{moving}] {ops}",
            flush=True,
        )

    status = run_sequences(sequence, Disagreement, tally)
    minutes = (time.monotonic() - started) / 60
    print(
        f"\n{tally['agreed']} sequence(s) agreed with Apache Hudi ({tally['steps']} steps) in "
        f"{minutes:.1f} min; seed {args.seed}",
        flush=True,
    )
    if known:
        print(f"reads left out as deliberate differences: {_counts(known)}", flush=True)
    for judge in judges.values():
        judge.close()
    spark.stop()
    return status


def _counts(known: Counter) -> str:
    return ", ".join(f"{what} x{n}" for what, n in sorted(known.items()))


if __name__ == "__main__":
    sys.exit(main())

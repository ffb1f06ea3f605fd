"""Compare our Hudi core with plain Spark, delta-rs, pyiceberg and Apache Hudi itself on one
FACT upsert workload: writes, compaction, scans, a point read and a filter.

    .venv/bin/python bench/compare.py                      # N = 1,000,000 (what `make bench` runs)
    .venv/bin/python bench/compare.py --rows 3000000       # or 10000000
    .venv/bin/python bench/compare.py --rows 3000 --batches 2 --out /tmp/cmp   # smoke size

Writes bench/results/compare_<N>.json, .md and .png; exits 1 if any system's final table, point
read or filter differs from the expected one (or a system fails). The Apache Hudi systems need
`make apache-hudi`. See bench/README.md and the `compare`
package next to this file.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `compare` below is the package bench/compare/ (a package wins over this module of the
# same name); the worker processes inherit this path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare.runner import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

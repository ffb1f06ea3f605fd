"""Apache Hudi 1.2 writes once to a copy of a table Apache Hudi 0.15 wrote (table version 6,
metadata table on) with hoodie.write.table.version=8: the 6 -> 8 upgrade as Apache Hudi does
it, metadata table included. Dumps both timelines and properties after.

    PYTHONPATH=tests:docs/design/mdt-samples .venv/bin/python \\
        docs/design/mdt-samples/upgrade_and_dump.py V6_TABLE OUT
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pyarrow as pa
from apache_hudi import ApacheHudi
from write_and_dump import dump, options


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    root = out / f"{source.name}-upgraded-to-v8"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(source, root)
    judge = ApacheHudi("1.2.0")
    try:
        rows = pa.table({"id": [2, 7], "dt": ["a", "b"], "ts": [9, 9], "name": ["x9", "t"]})
        judge.write(str(root), rows, options("mdt_mor", "mor", "1.2.0", "8", "upsert"))
        got = judge.read(str(root), **{"hoodie.metadata.enable": "true"})
        print("== rows read back:", sorted(got.column("id").to_pylist()))
    finally:
        judge.close()
    dump(root)


if __name__ == "__main__":
    main()

"""A failed data commit whose metadata-table delta commit completed, and the rollback that
follows, as Apache Hudi does them: two upserts, then the second upsert's completed instant file
is removed from the data timeline (so the data instant is pending, its MDT delta commit
complete: the "MDT ahead" case of a writer that died between the two commits), then a third
upsert, which rolls the failed instant back first. Dumps the table.

    PYTHONPATH=tests:docs/design/mdt-samples .venv/bin/python \\
        docs/design/mdt-samples/rollback_and_dump.py 1.2.0 8 OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

from apache_hudi import ApacheHudi
from write_and_dump import dump, options, rows


def completed_file(timeline: Path, instant: str) -> Path:
    """The completed instant file of `instant` (v6: `<t>.deltacommit`, v8:
    `<t>_<completion>.deltacommit`)."""
    found = [
        p
        for p in timeline.iterdir()
        if p.name.startswith(instant) and p.name.endswith(".deltacommit")
    ]
    assert len(found) == 1, found
    return found[0]


def main() -> None:
    version, table_version, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    root = out / f"hudi-{version}-mor-v{table_version}-rollback"
    judge = ApacheHudi(version)
    try:

        def write(data, op="upsert"):
            judge.write(str(root), data, options("mdt_rb", "mor", version, table_version, op))

        write(rows([1, 2, 3], ["a", "a", "b"], [1, 1, 1], ["w", "x", "y"]))
        write(rows([2, 4], ["a", "b"], [2, 2], ["x2", "z"]))
        timeline = root / ".hoodie" / ("timeline" if table_version == "8" else "")
        instants = sorted(
            p.name.split(".")[0].split("_")[0]
            for p in timeline.iterdir()
            if p.name.endswith(".deltacommit.requested")
        )
        failed = instants[-1]
        done = completed_file(timeline, failed)
        done.unlink()
        (done.parent / f".{done.name}.crc").unlink(missing_ok=True)
        print(f"== data instant {failed} made pending (its MDT delta commit stays complete)")
        got = judge.read(str(root), **{"hoodie.metadata.enable": "true"})
        print(
            "== rows read back with the failed instant pending:",
            sorted(got.column("id").to_pylist()),
        )
        write(rows([5], ["b"], [3], ["v"]))
        got = judge.read(str(root), **{"hoodie.metadata.enable": "true"})
        print("== rows read back after the next write:", sorted(got.column("id").to_pylist()))
    finally:
        judge.close()
    dump(root)


if __name__ == "__main__":
    main()

"""Makes Apache Hudi write a tiny table with its metadata table on, and dumps what it wrote.

    PYTHONPATH=tests .venv/bin/python docs/design/mdt-samples/write_and_dump.py 1.2.0 mor 8 OUT
    PYTHONPATH=tests .venv/bin/python docs/design/mdt-samples/write_and_dump.py 0.15.0 mor 6 OUT

Arguments: Apache Hudi version, table type (cow/mor), table version to write (6 on 0.15; 6, 8
or 9 on 1.2), output folder (the table is kept there). The writes: an insert of four keys in
two partitions, an upsert (one update, one new key), a delete of one key, a third upsert; the
metadata table's partitions files, column_stats, bloom_filters and record_index are on, and the
metadata table compacts after 3 delta commits so its compaction shows. The dump (stdout):
every file under .hoodie (sizes), both hoodie.properties, the HFiles' trailers (magic and
version) and the metadata table's timeline. It uses tests/apache_hudi.py, so it needs `make
apache-hudi`; a run takes a minute or two of one core.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
from apache_hudi import ApacheHudi, datasource_options


def rows(ids, dts, ts, names) -> pa.Table:
    return pa.table({"id": ids, "dt": dts, "ts": ts, "name": names})


def options(name: str, kind: str, version: str, table_version: str, op: str) -> dict[str, str]:
    out = datasource_options(name, kind, op)
    out.update(
        {
            "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.metadata.index.bloom.filter.enable": "true",
            "hoodie.metadata.record.index.enable": "true",
            "hoodie.index.type": "RECORD_INDEX",
            "hoodie.metadata.compact.max.delta.commits": "3",
            "hoodie.clean.commits.retained": "2",
            "hoodie.compact.inline": "true" if kind == "mor" else "false",
            "hoodie.compact.inline.max.delta.commits": "3",
        }
    )
    if version.startswith("1."):
        out["hoodie.write.table.version"] = table_version
    return out


def hfile_trailer(path: Path) -> str:
    """The first block's magic, the trailer's magic and the HFile version (the trailer is the
    last 4096 bytes; its last 4 bytes are the minor version, then the major version in 3)."""
    data = path.read_bytes()
    trailer = data[-4096:]
    minor, major = trailer[-4], int.from_bytes(trailer[-3:], "big")
    return (
        f"first-block-magic={data[:8]!r} trailer-magic={trailer[:8]!r} "
        f"major={major} minor={minor} size={len(data)}"
    )


def dump(root: Path) -> None:
    hoodie = root / ".hoodie"
    print("== files under .hoodie")
    for path in sorted(hoodie.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            print(f"{path.relative_to(root)}  {path.stat().st_size}")
    for props in (hoodie / "hoodie.properties", hoodie / "metadata/.hoodie/hoodie.properties"):
        print(f"== {props.relative_to(root)}")
        print(props.read_text())
    print("== HFiles")
    for path in sorted((hoodie / "metadata").rglob("*.hfile")):
        print(f"{path.relative_to(root)}: {hfile_trailer(path)}")
    print("== data files")
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".hoodie" not in path.parts and not path.name.startswith("."):
            print(f"{path.relative_to(root)}  {path.stat().st_size}")


def main() -> None:
    version, kind, table_version, out = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
    root = out / f"hudi-{version}-{kind}-v{table_version}"
    judge = ApacheHudi(version)
    try:
        name = f"mdt_{kind}"
        write = lambda data, op: judge.write(  # noqa: E731
            str(root), data, options(name, kind, version, table_version, op)
        )
        first = rows([1, 2, 3, 4], ["a", "a", "b", "b"], [1, 1, 1, 1], ["w", "x", "y", "z"])
        write(first, "upsert")
        write(rows([2, 5], ["a", "b"], [2, 2], ["x2", "v"]), "upsert")
        write(rows([3], ["b"], [3], ["y"]), "delete")
        write(rows([1, 6], ["a", "a"], [4, 4], ["w4", "u"]), "upsert")
        got = judge.read(str(root), **{"hoodie.metadata.enable": "true"})
        print("== rows read back:", sorted(got.column("id").to_pylist()))
    finally:
        judge.close()
    dump(root)


if __name__ == "__main__":
    main()

"""Makes Apache Hudi write small tables with CDC on, and dumps what it wrote and its CDC query.

    PYTHONPATH=tests:. .venv/bin/python docs/design/incremental-samples/cdc_probe.py 1.2.0 8 OUT
    PYTHONPATH=tests:. .venv/bin/python docs/design/incremental-samples/cdc_probe.py 0.15.0 6 OUT

Arguments: Apache Hudi version, table version to write (6 on 0.15; 6 or 8 on 1.2), output
folder. For each table type (cow, mor) and supplemental logging mode it runs: an upsert of
four keys in two partitions; an upsert (one update, one insert); a delete of one key; an
upsert moving key 1 to the other partition (GLOBAL_SIMPLE with update.partition.path=true)
and inserting key 6; on merge-on-read an inline compaction after the 4th delta commit. The
dump (stdout): every file under the table (sizes), hoodie.properties, the timeline, each CDC
log file's blocks (headers, the SCHEMA header, the records), and Apache Hudi's CDC query from
the start and per instant. Uses tests/apache_hudi.py (`make apache-hudi`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pyarrow as pa
from apache_hudi import ApacheHudi, datasource_options

from hoodie.logformat import BlockType, read_log_file

MODES = ("data_before_after", "data_before", "op_key_only")


def rows(ids, dts, ts, names) -> pa.Table:
    return pa.table({"id": ids, "dt": dts, "ts": ts, "name": names})


def options(name, kind, version, table_version, op, mode) -> dict[str, str]:
    out = datasource_options(name, kind, op)
    out.update(
        {
            "hoodie.table.cdc.enabled": "true",
            "hoodie.table.cdc.supplemental.logging.mode": mode,
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.simple.index.update.partition.path": "true",
            "hoodie.metadata.enable": "false",
            "hoodie.compact.inline": "true" if kind == "mor" else "false",
            "hoodie.compact.inline.max.delta.commits": "4",
        }
    )
    if version.startswith("1."):
        out["hoodie.write.table.version"] = table_version
    return out


def dump_cdc_log(path: Path) -> None:
    for block in read_log_file(str(path)):
        header = {k.name: (v if k.name != "SCHEMA" else "<below>") for k, v in block.header.items()}
        print(f"  block {block.block_type.name} header={header}")
        if block.block_type == BlockType.CDC_DATA:
            print(f"  SCHEMA={block.schema}")
            as_avro = dataclasses.replace(block, block_type=BlockType.AVRO_DATA)
            for record in as_avro._avro_records().to_pylist():
                print(f"    {record}")


def dump(root: Path) -> None:
    print("== files")
    for path in sorted(root.rglob("*")):
        if path.is_file() and "metadata" not in path.parts and not path.name.endswith(".crc"):
            print(f"{path.relative_to(root)}  {path.stat().st_size}")
    print("== hoodie.properties")
    print((root / ".hoodie" / "hoodie.properties").read_text())
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".cdc" in path.name and not path.name.endswith(".crc"):
            print(f"== CDC log {path.relative_to(root)}")
            dump_cdc_log(path)
    for path in sorted((root / ".hoodie").rglob("*commit")):
        if path.is_file():
            text = path.read_bytes()
            try:
                meta = json.loads(text)
                stats = [
                    {
                        k: s.get(k)
                        for k in (
                            "fileId",
                            "path",
                            "cdcStats",
                            "prevCommit",
                            "numInserts",
                            "numUpdateWrites",
                            "numDeletes",
                        )
                    }
                    for ss in meta.get("partitionToWriteStats", {}).values()
                    for s in ss
                ]
                print(f"== {path.name}: operation={meta.get('operationType')} stats={stats}")
            except ValueError:
                print(f"== {path.name}: (avro, {len(text)} bytes)")


def cdc(judge, root, begin, end=None) -> None:
    opts = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.query.incremental.format": "cdc",
        "hoodie.datasource.read.begin.instanttime": begin,
    }
    if end:
        opts["hoodie.datasource.read.end.instanttime"] = end
    got = judge.read(str(root), **opts)
    print(f"== CDC query ({begin}, {end or 'latest'}] schema={got.schema.to_string()!r}")
    for row in got.to_pylist():
        print(f"   {row}")


def main() -> None:
    version, table_version, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    judge = ApacheHudi(version)
    try:
        for kind in ("cow", "mor"):
            for mode in MODES if kind == "cow" else MODES[:1]:
                root = out / f"hudi-{version}-{kind}-v{table_version}-{mode}"
                name = f"cdc_{kind}"
                print(f"########## {root.name}")

                def write(data, op, kind=kind, mode=mode, root=root, name=name):
                    judge.write(
                        str(root), data, options(name, kind, version, table_version, op, mode)
                    )

                try:
                    write(
                        rows(
                            [1, 2, 3, 4], ["a", "a", "b", "b"], [1, 1, 1, 1], ["w", "x", "y", "z"]
                        ),
                        "upsert",
                    )
                    write(rows([2, 5], ["a", "b"], [2, 2], ["x2", "v"]), "upsert")
                    write(rows([3], ["b"], [3], ["y"]), "delete")
                    write(rows([1, 6], ["b", "a"], [4, 4], ["w4", "u"]), "upsert")
                    dump(root)
                    cdc(judge, root, "0")
                    timeline = root / ".hoodie" / ("timeline" if table_version != "6" else "")
                    instants = sorted(
                        {
                            p.name.split(".")[0].split("_")[0]
                            for p in timeline.iterdir()
                            if p.is_file() and p.name[:1].isdigit()
                        }
                    )
                    print("== instants", instants)
                    prev = "0"
                    for instant in instants:
                        cdc(judge, root, prev, instant)
                        prev = instant
                except Exception as exc:  # noqa: BLE001
                    print(f"!! {type(exc).__name__}: {exc}"[:3000])
    finally:
        judge.close()


if __name__ == "__main__":
    main()

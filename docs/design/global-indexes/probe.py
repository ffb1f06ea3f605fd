"""Probe (issue 41, items 3 and 7): what Apache Hudi 0.15.0 / 1.2.0 do under their global indexes.

Runs Apache Hudi itself through the project's harness (tests/apache_hudi.py: a child process on
the reference PySpark with the Hudi bundle), writes small tables with record key `id`, partition
field `dt`, ordering field `ts`, and prints, after every step, the rows Apache Hudi reads back
(snapshot, and read-optimized on merge-on-read) and what each instant's commit metadata says
(per partition: file id, file, writes / deletes / update writes / inserts), read with our own
meta client (a read-only use of it).

    python docs/design/global-indexes/probe.py SCENARIO VERSION KIND INDEX FLAG [MD]
      SCENARIO: a name in SCENARIOS; VERSION 0.15.0 | 1.2.0; KIND cow | mor;
      INDEX GLOBAL_SIMPLE | GLOBAL_BLOOM | ...; FLAG true | false | default (the
      update.partition.path option of the index, or unset); MD on | off (metadata table)
    python docs/design/global-indexes/probe.py many SCENARIO VERSION KIND:INDEX:FLAG:MD ...   # a list, one process
    python docs/design/global-indexes/probe.py matrix SCENARIO[,SCENARIO...] [VERSION ...]   # every combination

Logs go to docs/design/global-indexes/out/<scenario>/<version>-<kind>-<index>-<flag>-<md>.txt.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the repository (this folder is docs/design/global-indexes)
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
from apache_hudi import ApacheHudi, ApacheHudiError  # noqa: E402

PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
FLAG_KEYS = {
    "GLOBAL_SIMPLE": "hoodie.simple.index.update.partition.path",
    "SIMPLE": "hoodie.simple.index.update.partition.path",
    "GLOBAL_BLOOM": "hoodie.bloom.index.update.partition.path",
    "BLOOM": "hoodie.bloom.index.update.partition.path",
}

# A row: (id, dt, ts, name, deleted). A step: (operation, rows, extra options).
Row = tuple[str, str, int, str, bool]


def up(*rows: Row, op: str = "upsert", **extra: str) -> tuple[str, list[Row], dict[str, str]]:
    return (op, list(rows), dict(extra))


SCENARIOS: dict[str, list[tuple[str, list[Row], dict[str, str]]]] = {
    # 1. the plain move: k1 from A to B with a higher ts; k2 stays as a witness
    "move": [
        up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
        up(("k1", "B", 20, "k1v2", False)),
    ],
    # an update (k1) and a stale update (k2) in the key's own partition (no move), to compare
    # the global indexes' file layout with SIMPLE's
    "inplace": [
        up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
        up(("k1", "A", 20, "k1v2", False), ("k2", "A", 5, "k2stale", False)),
    ],
    # 2. moves with a lower / equal ts than the stored row
    "stale": [
        up(
            ("k1", "A", 10, "k1v1", False),
            ("k2", "A", 10, "k2v1", False),
            ("k3", "A", 10, "k3v1", False),
        ),
        up(("k1", "B", 5, "k1lower", False), ("k2", "B", 10, "k2equal", False)),
    ],
    # 3..6 and more, one key per question (see FINDINGS.md):
    #   k1 A->B->A; k2 delete op with the wrong partition; k3 is_deleted in B, higher ts;
    #   k4 is_deleted in B, lower ts; k5 twice in one batch (B ts20, C ts30); k6 twice
    #   (A ts30 = its own partition, B ts20); n1 new key twice (B ts1, C ts2); k7 into a
    #   brand-new partition N; k8 witness, untouched.
    "edge": [
        up(*[(f"k{i}", "A", 10, f"k{i}v1", False) for i in range(1, 9)]),
        up(
            ("k1", "B", 20, "k1toB", False),
            ("k3", "B", 20, "k3del", True),
            ("k4", "B", 5, "k4delstale", True),
            ("k5", "B", 20, "k5B20", False),
            ("k5", "C", 30, "k5C30", False),
            ("k6", "A", 30, "k6A30", False),
            ("k6", "B", 20, "k6B20", False),
            ("n1", "B", 1, "n1B1", False),
            ("n1", "C", 2, "n1C2", False),
            ("k7", "N", 20, "k7toN", False),
        ),
        up(("k2", "B", 20, "k2delop", False), op="delete"),
        up(("k1", "A", 30, "k1backA", False)),
    ],
    # 5. insert and bulk_insert of a key stored in another partition
    "insert": [
        up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
        up(("k1", "B", 20, "k1insB", False), op="insert"),
        up(("k2", "B", 20, "k2bulkB", False), op="bulk_insert"),
    ],
    # a delete (is_deleted row) with the right partition but lower ts, and the delete op with
    # the right partition, for comparison with the wrong-partition ones in "edge"
    "delright": [
        up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
        up(("k1", "A", 5, "k1delstale", True)),
        up(("k2", "A", 5, "k2delop", False), op="delete"),
    ],
}


def sql(*statements: str) -> tuple[str, list[Row], dict[str, str]]:
    """A step of Spark SQL statements ('{path}' stands for the table's path)."""
    return ("sql", [], {"statements": "\n".join(statements)})


SCENARIOS["dupthen"] = [
    # 7. a key already in two partitions (an insert made the duplicate), then upserted
    up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
    up(("k1", "B", 20, "k1insB", False), op="insert"),
    up(("k1", "C", 30, "k1toC", False)),
    up(("k1", "C", 25, "k1staleC", False), ("k2", "A", 5, "k2stale", True)),
]

SCENARIOS["delnew"] = [
    # deletes of keys the table does not hold: an _hoodie_is_deleted row and the delete operation
    up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
    up(("k1", "A", 20, "k1v2", False), ("x1", "B", 20, "x1del", True)),
    up(("x2", "B", 20, "x2delop", False), op="delete"),
]

COMPACT_ONE = "options => 'hoodie.compact.inline.max.delta.commits=1'"
SCENARIOS["movecompact"] = [
    # a move, then a compaction of the old group (merge-on-read only)
    up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
    up(("k1", "B", 20, "k1toB", False), ("k2", "A", 5, "k2stale", False)),
    sql(f"CALL run_compaction(op => 'scheduleAndExecute', path => '{{path}}', {COMPACT_ONE})"),
]
SCENARIOS["compaction"] = [
    # 7. a move out of a file group under a pending compaction (merge-on-read only)
    up(("k1", "A", 10, "k1v1", False), ("k2", "A", 10, "k2v1", False)),
    up(("k2", "A", 20, "k2v2", False)),
    sql(f"CALL run_compaction(op => 'schedule', path => '{{path}}', {COMPACT_ONE})"),
    up(("k1", "B", 30, "k1toB", False)),
    sql(f"CALL run_compaction(op => 'run', path => '{{path}}', {COMPACT_ONE})"),
]


def batch(rows: list[Row]) -> pa.Table:
    cols = list(zip(*rows))
    return pa.table(
        {
            "id": pa.array(cols[0], pa.string()),
            "dt": pa.array(cols[1], pa.string()),
            "ts": pa.array(cols[2], pa.int64()),
            "name": pa.array(cols[3], pa.string()),
            "_hoodie_is_deleted": pa.array(cols[4], pa.bool_()),
        }
    )


def options(
    name: str, version: str, kind: str, index: str, flag: str, md: str, payload: str
) -> dict[str, str]:
    opts = {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.type": {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}[
            kind
        ],
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.index.type": index,
        "hoodie.metadata.enable": "true" if md == "on" else "false",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2",
        "hoodie.bulkinsert.shuffle.parallelism": "2",
        "hoodie.compact.inline": "false",
        "hoodie.datasource.compaction.async.enable": "false",
    }
    if payload == "default-payload":
        opts["hoodie.datasource.write.payload.class"] = PAYLOAD
    if version.startswith("1."):
        opts["hoodie.write.table.version"] = "8"
        opts["hoodie.record.merge.mode"] = "EVENT_TIME_ORDERING"
    if flag != "default":
        opts[FLAG_KEYS[index]] = flag
    return opts


def rows_text(table: pa.Table) -> list[str]:
    d = table.to_pydict()
    out = []
    for i in range(table.num_rows):
        out.append(
            f"  {d['id'][i]:<3} dt={d['dt'][i]:<2} _pp={d['_hoodie_partition_path'][i]:<2} "
            f"ts={d['ts'][i]:<3} name={d['name'][i]:<11} "
            f"commit={d['_hoodie_commit_time'][i]} file={d['_hoodie_file_name'][i][:12]}"
        )
    return sorted(out)


def timeline_text(path: str) -> list[str]:
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.timeline import Action

    client = HoodieTableMetaClient.open(path)
    lines = []
    for instant in client.timeline():
        line = f"  {instant.timestamp} {instant.action.value} {instant.state.name}"
        if instant.is_completed and instant.action in (
            Action.COMMIT,
            Action.DELTA_COMMIT,
            Action.REPLACE_COMMIT,
        ):
            try:
                meta = client.commit_metadata(instant)
            except Exception as error:  # noqa: BLE001 - a probe prints what it cannot parse
                lines.append(f"{line} (metadata not parsed: {error})")
                continue
            lines.append(f"{line} op={meta.operation_type}")
            for partition, stats in sorted(meta.partition_to_write_stats.items()):
                for s in stats:
                    lines.append(
                        f"    [{partition}] {s.file_id[:12]} {Path(s.path or '').name} "
                        f"prev={s.prev_commit} writes={s.num_writes} deletes={s.num_deletes} "
                        f"updates={s.num_update_writes} inserts={s.num_inserts} "
                        f"log_records={s.total_log_records}"
                    )
        else:
            lines.append(line)
    files = []
    for dirpath, _, names in os.walk(path):
        rel = os.path.relpath(dirpath, path)
        if rel.startswith(".hoodie"):
            continue
        for n in sorted(names):
            if not n.startswith("."):
                files.append(f"    {rel}/{n}")
            elif ".log." in n and not n.endswith(".crc"):
                files.append(f"    {rel}/{n}")
                files.extend(log_text(os.path.join(dirpath, n)))
    return lines + ["  files:"] + files


def log_text(local_path: str) -> list[str]:
    """The blocks of one log file: type, instant, and each record's key, partition, ts, name
    and commit time (data blocks) or key, partition and ordering value (delete blocks)."""
    from hoodie.logformat import read_log_file

    out = []
    for block in read_log_file(local_path):
        head = f"      block {block.block_type.name} instant={block.instant_time}"
        try:
            if block.is_data_block:
                t = block.records().to_pydict()
                keys, parts = t["_hoodie_record_key"], t["_hoodie_partition_path"]
                recs = [
                    f"{keys[i]}/{parts[i]} dt={t['dt'][i]} ts={t['ts'][i]} {t['name'][i]} "
                    f"c={t['_hoodie_commit_time'][i]}"
                    for i in range(len(keys))
                ]
                out.append(f"{head}: {recs}")
            elif block.block_type.name == "DELETE":
                recs = [
                    f"{d.record_key}/{d.partition_path} ord={d.ordering_value}"
                    for d in block.deleted_records()
                ]
                out.append(f"{head}: deletes {recs}")
            else:
                out.append(head)
        except Exception as error:  # noqa: BLE001 - a probe prints what it cannot decode
            out.append(f"{head}: (not decoded: {error})")
    return out


def run_one(judge: ApacheHudi, scenario: str, kind: str, index: str, flag: str, md: str,
            payload: str, log) -> None:  # fmt: skip
    path = tempfile.mkdtemp(prefix=f"probe-{scenario}-", dir="/tmp")
    table_path = os.path.join(path, "t")
    name = f"p_{scenario}"
    opts = options(name, judge.version, kind, index, flag, md, payload)
    log(f"# {scenario} Apache Hudi {judge.version} {kind} {index} flag={flag} md={md} {payload}")
    log(f"# options: {json.dumps(opts, sort_keys=True)}")
    for number, (operation, rows, extra) in enumerate(SCENARIOS[scenario], 1):
        log(f"\n## step {number}: {operation} {rows} {extra or ''}")
        if operation == "sql":
            try:
                for statement in extra["statements"].split("\n"):
                    result = judge.sql(statement.replace("{path}", table_path))
                    log(f"  sql result: {result.to_pylist() if result is not None else None}")
            except ApacheHudiError as error:
                log(f"  SQL FAILED: {error.kind}: {error.message[:1500]}")
        try:
            if operation == "sql":
                pass
            else:
                judge.write(
                    table_path,
                    batch(rows),
                    {**opts, "hoodie.datasource.write.operation": operation, **extra},
                )
        except ApacheHudiError as error:
            log(f"  REFUSED/FAILED: {error.kind}: {error.message[:1500]}")
            continue
        queries = {"snapshot": {}}
        if kind == "mor":
            queries["read_optimized"] = {"hoodie.datasource.query.type": "read_optimized"}
        for query, qopts in queries.items():
            try:
                table = judge.read(table_path, **qopts)
                log(f" {query}:")
                for line in rows_text(table):
                    log(line)
            except ApacheHudiError as error:
                log(f" {query}: READ FAILED {error.kind}: {error.message[:800]}")
        log(" timeline:")
        for line in timeline_text(table_path):
            log(line)


def combos(versions):
    for version in versions:
        for kind in ("cow", "mor"):
            for index, md in (("GLOBAL_SIMPLE", "on"), ("GLOBAL_SIMPLE", "off"),
                              ("GLOBAL_BLOOM", "on")):  # fmt: skip
                for flag in ("default", "false"):
                    yield version, kind, index, flag, md


def main(argv: list[str]) -> None:
    if argv[0] == "matrix":
        scenarios = argv[1].split(",")
        versions = argv[2:] or ["0.15.0", "1.2.0"]
        todo = [(s, *c) for s in scenarios for c in combos(versions)]
        payload = "default-payload"
    elif argv[0] == "many":  # many SCENARIO VERSION kind:index:flag:md ...
        scenario, version = argv[1], argv[2]
        todo = [(scenario, version, *spec.split(":")) for spec in argv[3:]]
        payload = "default-payload"
    else:
        scenario, version, kind, index, flag = argv[:5]
        md = argv[5] if len(argv) > 5 else "off"
        payload = argv[6] if len(argv) > 6 else "default-payload"
        todo = [(scenario, version, kind, index, flag, md)]
    judges: dict[str, ApacheHudi] = {}
    try:
        for scenario, version, kind, index, flag, md in todo:
            out_dir = HERE / "out" / scenario
            out_dir.mkdir(parents=True, exist_ok=True)
            if version not in judges:
                judges[version] = ApacheHudi(version)
            suffix = "" if payload == "default-payload" else f"-{payload}"
            out = out_dir / f"{version}-{kind}-{index}-{flag}-md{md}{suffix}.txt"
            with open(out, "w") as handle:

                def log(text: str, handle=handle) -> None:
                    handle.write(text + "\n")
                    handle.flush()

                try:
                    run_one(judges[version], scenario, kind, index, flag, md, payload, log)
                except Exception:  # noqa: BLE001
                    log("PROBE ERROR:\n" + traceback.format_exc())
            print(f"done {out}", flush=True)
    finally:
        for judge in judges.values():
            judge.close()


if __name__ == "__main__":
    main(sys.argv[1:])

"""Damage is an error, never silence: a seeded fuzz of mutated copies of small tables.

Four small tables (copy-on-write and merge-on-read, table versions 6 and 8) are written once
per session with a history that leaves every kind of file behind: commits and delta commits,
delete blocks, a compaction, a clean, a rollback, an archived timeline and a write that never
completed.
Each case damages one file of one table (deletes, truncates, empties it, flips bytes in it or
appends garbage to it), reads the table through the core's read path (the `hoodie` data
source's planner and slice reader, without Spark) and puts it back. A case passes when the
read either raises one of the project's errors (`hoodie.exceptions.HoodieError`) naming the
damaged file, or returns exactly the undamaged table's rows: damage that does not matter to
the read (a file of the write that never completed, a torn tail of a log file) changes
nothing. A different result in silence, or an exception outside the project's classes, fails.
Damage to an instant file must not make time travel to an earlier write fail either.

`FUZZ_CASES` (default 320) and `FUZZ_SEED` set the case list; `make fuzz` runs many more.
"""

from __future__ import annotations

import collections
import os
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import CorruptDataFileError, HoodieError
from hoodie.read.datasource import HoodieDataSource, register

CASES = int(os.environ.get("FUZZ_CASES", "320"))
SEED = int(os.environ.get("FUZZ_SEED", "38"))
SCHEMA = "id int, name string, dt string, ts bigint"
COLUMNS = ("id", "name", "dt", "ts")
TABLES = [(table_type, version) for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ")
          for version in (6, 8)]  # fmt: skip
MUTATIONS = ("delete", "truncate", "empty", "corrupt", "append")


@dataclass(frozen=True)
class Written:
    """A table the fuzz damages, and what its undamaged reads return."""

    path: Path
    table_type: str
    version: int
    rows: list[tuple]  # the snapshot
    earlier: str  # a completed write before the latest one ...
    earlier_rows: list[tuple]  # ... and the table as of it (time travel)
    latest: str


def read_rows(path: Path, **options: str) -> list[tuple]:
    """The table's rows through the core's read path (no Spark): plan, then read each slice."""
    source = HoodieDataSource({"path": str(path), **options})
    reader = source.reader(source.schema())
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    if not batches:
        return []
    table = pa.Table.from_batches(batches).select(list(COLUMNS))
    return _sorted(zip(*(table.column(c).to_pylist() for c in COLUMNS), strict=True))


def _sorted(rows) -> list[tuple]:
    """Rows in a stable order, whatever a damaged file decoded to (nulls included)."""
    return sorted(rows, key=repr)


def _write(spark, root: Path, table_type: str, version: int) -> Written:
    path = root / f"{table_type.lower()}_v{version}"
    cfg = WriteConfig.build(
        "fuzzed", record_key="id", partition_path="dt", precombine_field="ts",
        table_type=table_type,
        options={"hoodie.write.table.version": str(version), "hoodie.compact.inline": "false",
                 "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4",
                 "hoodie.cleaner.commits.retained": "3"},
    )  # fmt: skip
    table = HoodieTable.for_write(str(path), cfg)

    def upsert(rows):
        return table.upsert(spark.createDataFrame(rows, SCHEMA), cfg).instant

    upsert([(i, f"n{i}", "a" if i % 2 else "b", 1) for i in range(1, 7)])
    upsert([(1, "u1", "a", 2), (2, "u2", "b", 2), (7, "n7", "a", 2)])
    table.delete(spark.createDataFrame([(3, "x", "a", 3)], SCHEMA), cfg)
    if table_type == "MERGE_ON_READ":
        table.services.compact(spark, cfg)  # a compaction plan, and base files after log files
    upsert([(4, "u4", "b", 4), (8, "n8", "c", 4)])
    table.services.rollback()  # the latest commit: a rollback instant, and its files gone
    earlier = upsert([(5, "u5", "a", 5), (9, "n9", "c", 5)])
    earlier_rows = read_rows(path)
    latest = upsert([(2, "v2", "b", 6), (10, "n10", "a", 6)])
    rows = read_rows(path)
    # A write that never completed: its files stay, no reader counts them.
    failed = upsert([(1, "failed", "a", 7), (11, "failed", "c", 7)])
    timeline = table.meta_client.timeline()
    done = next(i for i in timeline.completed if i.timestamp == failed)
    (path / table.meta_client.instant_path(done)).unlink()
    assert read_rows(path) == rows
    assert read_rows(path, **{"as.of.instant": earlier}) == earlier_rows != rows
    return Written(path, table_type, version, rows, earlier, earlier_rows, latest)


@pytest.fixture(scope="session")
def fuzzed_tables(spark, tmp_path_factory) -> list[Written]:
    register(spark)
    root = tmp_path_factory.mktemp("fuzzed")
    return [_write(spark, root, table_type, version) for table_type, version in TABLES]


def file_kind(relative: str) -> str:
    """What kind of table file a path names, for the case list and the counts."""
    name = relative.rsplit("/", 1)[-1]
    if name.startswith("hoodie.properties"):
        return "properties"
    if "/archived/" in relative or "/history/" in relative:
        return "archived"
    if relative.startswith(".hoodie/"):
        return "instant"
    if name == ".hoodie_partition_metadata":
        return "partition_metadata"
    if ".log." in name:
        return "log"
    return "base"


@dataclass(frozen=True)
class Case:
    table: int
    relative: str
    mutation: str
    seed: int

    @property
    def kind(self) -> str:
        return file_kind(self.relative)

    def __str__(self) -> str:
        return f"{self.mutation} {self.relative} (table {self.table}, seed {self.seed})"


def case_list(tables: list[Written], count: int, seed: int) -> list[Case]:
    """`count` cases from `seed`, spread over the file kinds: each kind as often as the others,
    so the few kinds (properties, archived) are not drowned by the many instant files."""
    rng = random.Random(seed)
    by_kind: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
    for index, written in enumerate(tables):
        for file in sorted(written.path.rglob("*")):
            if file.is_file() and file.stat().st_size > 0:
                relative = file.relative_to(written.path).as_posix()
                if "/.temp/" not in relative and not relative.endswith(".crc"):
                    by_kind[file_kind(relative)].append((index, relative))
    kinds = sorted(by_kind)
    cases = []
    for n in range(count):
        table, relative = rng.choice(by_kind[kinds[n % len(kinds)]])
        cases.append(Case(table, relative, rng.choice(MUTATIONS), rng.randrange(2**32)))
    return cases


def damage(file: Path, case: Case) -> None:
    rng = random.Random(case.seed)
    data = file.read_bytes()
    if case.mutation == "delete":
        file.unlink()
    elif case.mutation == "empty":
        file.write_bytes(b"")
    elif case.mutation == "truncate":
        file.write_bytes(data[: rng.randrange(1, len(data))] if len(data) > 1 else b"")
    elif case.mutation == "append":
        file.write_bytes(data + rng.randbytes(rng.randrange(1, 64)))
    else:  # corrupt: a few bytes flipped
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(damaged))
            damaged[at] ^= rng.randrange(1, 256)
        file.write_bytes(bytes(damaged))


@dataclass
class Outcome:
    case: Case
    what: str  # "same" (the undamaged rows), or the error class's name
    problem: str | None = None  # why the case fails


def run_case(written: Written, case: Case) -> Outcome:
    file = written.path / case.relative
    original = file.read_bytes()
    try:
        damage(file, case)
        outcome = _judge(case, lambda: read_rows(written.path), written.rows, written.path)
        if outcome.problem is None and case.kind == "instant" and _after(case, written.earlier):
            travelled = _judge(
                case, lambda: read_rows(written.path, **{"as.of.instant": written.earlier}),
                written.earlier_rows,
            )  # fmt: skip
            if travelled.what != "same":
                travelled.problem = (
                    f"time travel to {written.earlier}, before the damaged instant, failed: "
                    f"{travelled.problem or travelled.what}"
                )
                return travelled
        return outcome
    finally:
        file.write_bytes(original)


def _after(case: Case, instant: str) -> bool:
    name = case.relative.rsplit("/", 1)[-1]
    return name[:17].isdigit() and name[:17] > instant


def hudi_rs_rows(path: Path) -> list[tuple]:
    """The table's rows as hudi-rs reads them."""
    import hudi

    batches = hudi.HudiTable(str(path)).read()
    if not batches:
        return []
    table = pa.Table.from_batches(batches).select(list(COLUMNS))
    return _sorted(zip(*(table.column(c).to_pylist() for c in COLUMNS), strict=True))


def _looks_pending(case: Case) -> bool:
    """A deleted completed instant file: the instant is left requested and inflight, which is
    a write still running, or one that failed and awaits its rollback, to every reader; no
    file of the table says otherwise (Apache Hudi and hudi-rs read it so too)."""
    action = case.relative.rsplit(".", 1)[-1]
    return case.mutation == "delete" and case.kind == "instant" and action in _WRITE_ACTIONS


_WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def _judge(case: Case, read, expected: list[tuple], path: Path | None = None) -> Outcome:
    name = case.relative.rsplit("/", 1)[-1]
    try:
        rows = read()
    except HoodieError as error:
        what = type(error).__name__
        if name not in str(error):
            return Outcome(case, what, f"{what} does not name {name}: {error}")
        return Outcome(case, what)
    except Exception as error:  # noqa: BLE001 - what the test exists to catch
        return Outcome(case, type(error).__name__, f"not a HoodieError: {error!r}")
    if rows != expected:
        if path is not None and _looks_pending(case) and rows == hudi_rs_rows(path):
            return Outcome(case, "as pending (hudi-rs agrees)")
        return Outcome(case, "wrong", f"silent wrong read: {rows} instead of {expected}")
    return Outcome(case, "same")


def test_damaged_tables_read_whole_or_fail_naming_the_file(fuzzed_tables):
    cases = case_list(fuzzed_tables, CASES, SEED)
    outcomes = [run_case(fuzzed_tables[case.table], case) for case in cases]
    counts = collections.Counter(o.what for o in outcomes)
    print(f"\nfuzz: {len(outcomes)} cases (seed {SEED}): {dict(sorted(counts.items()))}")
    failed = [f"{o.case}: {o.problem}" for o in outcomes if o.problem is not None]
    assert not failed, f"{len(failed)} of {len(outcomes)} cases:\n" + "\n".join(failed)
    assert counts["wrong"] == 0
    assert len(outcomes) >= min(CASES, 300)


def test_damaged_tables_read_by_spark_fail_naming_the_file(spark, fuzzed_tables, tmp_path):
    """The Spark read path (`HoodieTable.read`), one sample of each side: a base file of the
    latest commit cut short is found by the driver's plan (the project's own error class); a
    log block of the latest delta commit with a flipped byte fails in the Spark task that
    merges it, and the query's error names the class and the file."""
    cow, mor = fuzzed_tables[0], fuzzed_tables[2]
    copy = tmp_path / "cow"
    shutil.copytree(cow.path, copy)
    base = next(copy.rglob(f"*_{cow.latest}.parquet"))
    base.write_bytes(base.read_bytes()[:-100])
    with pytest.raises(CorruptDataFileError, match=base.name):
        HoodieTable.open(str(copy)).read(spark).collect()

    copy = tmp_path / "mor"
    shutil.copytree(mor.path, copy)
    log = next(f for f in copy.rglob(".*.log.*") if _written_by(copy, f, mor.latest))
    damaged = bytearray(log.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    log.write_bytes(bytes(damaged))
    with pytest.raises(Exception, match=f"CorruptDataFileError(.|\\n)*{re.escape(log.name)}"):
        HoodieTable.open(str(copy)).read(spark).collect()


def _written_by(table: Path, log: Path, instant: str) -> bool:
    """Whether the completed commit `instant` names `log` in its write stats."""
    meta = HoodieTable.open(str(table)).meta_client
    done = next(i for i in meta.timeline().completed if i.timestamp == instant)
    return any(
        s.path and s.path.endswith(log.name) for s in meta.commit_metadata(done).write_stats()
    )

"""Four writer processes upsert into the same tables at once, with optimistic concurrency.

Each writer process (`multi_writer.py`, one JVM) runs its rounds over every table of the
scenario: copy-on-write and merge-on-read, SIMPLE and BUCKET index, with keys the writers
share (`overlap`) or keys each writer has to itself (`disjoint`), and with automatic clean and
(merge-on-read) inline compaction every two delta commits running inside the writers; on a
local disk (the file-system lock) or on object storage (the local S3 server or Azurite, and
the storage-based lock that is the default there). While they run, this process reads the
tables. Then:
- conflicts happen where writers share file groups, and each is a ConcurrentWriteConflict
  naming the other writer's instant (or a compaction's); writers on disjoint keys conflict only
  with compactions, which touch every file group;
- every acknowledged write's rows are in the final table with the right values: the table
  equals the model built from the committed writes (no lost update, no duplicate key), for us
  and for hudi-rs;
- every read saw the state after some prefix of the commits, never part of one (on object
  stores, whose modification times are whole seconds, the order of commits is not known: the
  state after the commits completed before the read and some of those completed during it);
- no write that its writer saw commit, or that was still running, was rolled back: rollback
  instants only undo writes whose writer failed them (a conflict), and nothing is left pending.

The same checks hold for writers that state no concurrency settings at all (issue 38: a
model run twice at once, by a schedule and by hand).

With the metadata table on (`hoodie.metadata.enable=true`, on table version 6 or 8, compacted
every four delta commits), which every write commits to under the table lock and lists files
through without it, the metadata table also lists what storage holds at the end, holds no
pending instant and a delta commit of every completed data instant, and reads through it plan
what listing storage plans (`listing_compare.py`). With its `column_stats` and `bloom_filters`
partitions on too, every file storage holds has its records there, equal to its rows' bounds
and counts, and no file a rollback (of a write that lost a conflict) or a clean deleted has
any (`assert_indexes_whole`); and each read among the writers is also a filtered one, whose
data skipping takes the files' statistics from those partitions: it returns the filtered
state after a prefix of the commits.

`make test` runs three scenarios with three writers for four rounds: merge-on-read BUCKET
overlapping on S3 (concurrency stated), copy-on-write SIMPLE disjoint on a local disk with
no concurrency option (the defaults), and merge-on-read SIMPLE overlapping on a local disk
with the metadata table and its indexes on table version 8. `make test-writers` (marker
`writers`) runs all twelve stated scenarios with four writers for ten rounds, the eight local
ones and merge-on-read BUCKET on S3 with the metadata table on both table versions (files
only, then with the indexes), and two writers with the defaults for 20 rounds over all four
table type and key combinations of SIMPLE on a local disk (~95 s).
"""

from __future__ import annotations

import itertools
import json
import operator
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from listing_compare import (
    assert_indexes_whole,
    assert_metadata_table_whole,
    assert_reads_list_alike,
)
from multi_writer import SCHEMA, config, seed_rows

from hoodie import HoodieTable
from hoodie.avro_metadata import RollbackMetadata
from hoodie.integration import STORAGE_PREFIX
from hoodie.read import native
from hoodie.read.datasource import register
from hoodie.timeline import METAFOLDER, WRITE_ACTIONS, Action

pytestmark = pytest.mark.slow

CHILD = Path(__file__).with_name("multi_writer.py")
WRITERS, ROUNDS = 4, 10
WRITERS_IN_MAKE_TEST, ROUNDS_IN_MAKE_TEST = 3, 4
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
# (table type, index, keys, store, metadata table, its indexes): None, the table version 6
# default (no metadata table); 6 or 8, that table version with hoodie.metadata.enable=true;
# indexes: its column_stats and bloom_filters partitions too (multi_writer.INDEXES).
SCENARIOS = [(t, i, k, "local", None, False) for t in (COW, MOR) for i in ("SIMPLE", "BUCKET")
             for k in ("overlap", "disjoint")]  # fmt: skip
SCENARIOS += [(t, i, "overlap", store, None, False) for store in ("s3", "azure")
              for t, i in ((COW, "SIMPLE"), (MOR, "BUCKET"))]  # fmt: skip
# The metadata table on, on both table versions (make test-writers): every local scenario, and
# one on S3 (the storage-based lock); with its files partition only, and with the indexes.
MDT_SCENARIOS = [(t, i, k, "local", v, False) for v in (6, 8) for t in (COW, MOR)
                 for i in ("SIMPLE", "BUCKET") for k in ("overlap", "disjoint")]  # fmt: skip
MDT_SCENARIOS += [(MOR, "BUCKET", "overlap", "s3", v, False) for v in (6, 8)]
INDEX_SCENARIOS = [(*s[:5], True) for s in MDT_SCENARIOS]
IN_MAKE_TEST = [(MOR, "BUCKET", "overlap", "s3", None, False),
                (COW, "SIMPLE", "disjoint", "local", None, False),
                (MOR, "SIMPLE", "overlap", "local", 8, True)]  # fmt: skip
# Of those, the scenarios whose writers give no concurrency option (the defaults).
WITH_DEFAULTS_IN_MAKE_TEST = {(COW, "SIMPLE", "disjoint", "local", None, False)}
# Two writers with the default settings, 20 rounds (make test-writers).
DEFAULT_SCENARIOS = [(t, "SIMPLE", k, "local", None, False) for t in (COW, MOR)
                     for k in ("overlap", "disjoint")]  # fmt: skip
# The filtered reads of a scenario with the indexes (one a read, in turn), which data skipping
# decides by them: record keys (bloom filters, key ranges), a string and a number range.
FILTERS = [[("id", "=", 3)], [("id", "=", 2001)], [("value", "=", "seed")], [("id", ">=", 3000)]]
COMPARE = {"=": operator.eq, ">=": operator.ge}
DEFAULT_ROUNDS = 20
CONFLICT = re.compile(r"^write (\d{17}) to table '\w+' conflicts with (.+?), which")
NAMED = re.compile(r"(\d{17}) \((\w+)\)")


def _name(scenario) -> str:
    table_type, index, keys, store, mdt, indexes = scenario
    name = f"{'cow' if table_type == COW else 'mor'}-{index.lower()}-{keys}"
    name = name if store == "local" else f"{name}-{store}"
    name = name if mdt is None else f"{name}-mdt{mdt}"
    return f"{name}-indexes" if indexes else name


def test_concurrent_writers(spark, tmp_path, request):
    _run_and_check(spark, tmp_path, IN_MAKE_TEST, request, ROUNDS_IN_MAKE_TEST,
                   WRITERS_IN_MAKE_TEST, defaults=WITH_DEFAULTS_IN_MAKE_TEST)  # fmt: skip


@pytest.mark.writers
def test_concurrent_writers_full_matrix(spark, tmp_path, request):
    _run_and_check(spark, tmp_path, SCENARIOS, request, ROUNDS, WRITERS)


@pytest.mark.writers
def test_concurrent_writers_with_the_metadata_table_full_matrix(spark, tmp_path, request):
    _run_and_check(spark, tmp_path, MDT_SCENARIOS, request, ROUNDS, WRITERS)


@pytest.mark.writers
def test_concurrent_writers_with_the_metadata_indexes_full_matrix(spark, tmp_path, request):
    _run_and_check(spark, tmp_path, INDEX_SCENARIOS, request, ROUNDS, WRITERS)


@pytest.mark.writers
def test_two_writers_with_default_settings_full(spark, tmp_path, request):
    _run_and_check(spark, tmp_path, DEFAULT_SCENARIOS, request, DEFAULT_ROUNDS, 2,
                   defaults=set(DEFAULT_SCENARIOS))  # fmt: skip


# -- the run -------------------------------------------------------------------------------------
def _run_and_check(
    spark, tmp_path, scenarios, request, rounds: int, writers: int,
    defaults: set[tuple[str, str, str, str, int | None, bool]] = frozenset(),  # stated no option
) -> None:  # fmt: skip
    register(spark)
    request.getfixturevalue("monkeypatch").setattr(native, "skip_slices", _SKIPPING.record)
    specs = []
    for scenario in scenarios:
        table_type, index, keys, store, mdt, indexes = scenario
        spec = {"path": str(tmp_path / _name(scenario)), "name": _name(scenario),
                "table_type": table_type, "index": index, "keys": keys,
                "defaults": scenario in defaults, "metadata_table": mdt,
                "indexes": indexes}  # fmt: skip
        if store != "local":
            bucket = request.getfixturevalue("bucket_on")(store)
            spec.update(path=bucket.uri(_name(scenario)), storage_options=bucket.storage_options,
                        hudi_rs_options=bucket.hudi_rs_options)  # fmt: skip
        cfg = config(spec)
        table = HoodieTable.for_write(spec["path"], cfg, spec.get("storage_options"))
        seed = table.upsert(spark.createDataFrame(seed_rows(keys, writers), SCHEMA), cfg)
        spec["seed"] = {"instant": seed.instant, "rows": seed_rows(keys, writers)}
        specs.append(spec)
    started = time.monotonic()
    results, reads = _run_writers(spark, tmp_path, specs, rounds, writers)
    seconds = time.monotonic() - started
    summary = []
    for spec in specs:
        writes = [r for r in results if r["table"] == spec["path"]]
        summary.append(_check_table(spark, spec, writes, reads[spec["path"]], rounds, writers))
    print(f"\n{writers} writers x {rounds} rounds in {seconds:.0f}s: " + "; ".join(summary))


def _run_writers(
    spark, tmp_path, specs, rounds: int, writers: int
) -> tuple[list[dict], dict[str, list]]:
    """Start the writers together; read every table over and over until they are done."""
    go = tmp_path / "go"
    children, outs, ready = [], [], []
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    for w in range(writers):
        plan = {"writer": w, "rounds": rounds, "tables": specs, "go": str(go),
                "ready": str(tmp_path / f"ready{w}"),
                "out": str(tmp_path / f"writer{w}.json")}  # fmt: skip
        (tmp_path / f"plan{w}.json").write_text(json.dumps(plan))
        outs.append(Path(plan["out"]))
        ready.append(Path(plan["ready"]))
        children.append(
            subprocess.Popen(
                [sys.executable, str(CHILD), str(tmp_path / f"plan{w}.json")],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
        )
    reads: dict[str, list] = {spec["path"]: [] for spec in specs}
    while not all(p.exists() for p in ready):
        assert all(c.poll() is None for c in children), _output(children)
        time.sleep(0.2)
    go.touch()
    while any(c.poll() is None for c in children):
        for spec in specs:
            reads[spec["path"]].append(_read(spark, spec))
        time.sleep(2)  # a reader among the writers, not a fifth load on two cores
    for child in children:
        assert child.returncode == 0, _output([child])
    return [r for out in outs for r in json.loads(out.read_text())], reads


def _output(children) -> str:
    text = []
    for child in children:
        if child.poll() is not None:
            stdout, stderr = child.communicate()
            text.append(f"exit {child.returncode}:\n{stdout[-2000:]}\n{stderr[-4000:]}")
    return "\n".join(text)


class _Skipping:
    """Records what data skipping did in each filtered read (`native.skip_slices`)."""

    def __init__(self) -> None:
        self.reports: list = []

    def record(self, *args, **kwargs):
        kept, report = _SKIP_SLICES(*args, **kwargs)
        self.reports.append(report)
        return kept, report


_SKIP_SLICES = native.skip_slices
_SKIPPING = _Skipping()


def _read(spark, spec: dict) -> tuple[set[str], dict, set[str], tuple | None]:
    """A snapshot, and the completed writes (and compactions) seen just before and after it;
    with the indexes also a filtered read (data skipping on: the filter's number in
    `FILTERS`, its rows, what skipping did)."""
    before = _completed(spec)
    options = {STORAGE_PREFIX + k: v for k, v in (spec.get("storage_options") or {}).items()}
    reader = spark.read.format("hoodie").options(**options)
    rows = reader.load(spec["path"]).select("id", "value", "ts").collect()
    snapshot = {r.id: (r.value, r.ts) for r in rows}
    assert len(snapshot) == len(rows), f"duplicate keys in a read of {spec['path']}"
    filtered = None
    if spec.get("indexes"):
        number = spec.setdefault("filtered_reads", 0) % len(FILTERS)
        spec["filtered_reads"] += 1
        table = HoodieTable.open(spec["path"], spec.get("storage_options"))
        _SKIPPING.reports.clear()
        rows = table.read(spark, filters=FILTERS[number]).select("id", "value", "ts").collect()
        found = {r.id: (r.value, r.ts) for r in rows}
        assert len(found) == len(rows), f"duplicate keys in a filtered read of {spec['path']}"
        filtered = (number, found, list(_SKIPPING.reports))
    return before, snapshot, _completed(spec), filtered


def _filtered(state: dict, number: int) -> dict:
    """The rows of `state` that filter `number` of `FILTERS` matches."""

    def matches(key: int, value: str) -> bool:
        row = {"id": key, "value": value}
        return all(COMPARE[op](row[column], bound) for column, op, bound in FILTERS[number])

    return {k: v for k, v in state.items() if matches(k, v[0])}


def _completed(spec: dict) -> set[str]:
    timeline = HoodieTable.open(spec["path"], spec.get("storage_options")).timeline()
    return {i.timestamp for i in timeline.completed if i.action in WRITE_ACTIONS}


# -- the checks ----------------------------------------------------------------------------------
def _model(commits: list[dict]) -> dict:
    """The table after these writes, in the order they completed: the larger `ts` wins (the
    precombine field), deletes remove a key. Keys several writers update have distinct `ts`,
    so their order does not matter; a key's delete must come after its insert."""
    state: dict[int, tuple] = {}
    for commit in commits:
        for key, value, _p, ts, deleted in commit["rows"]:
            stored = state.get(key)
            if stored is not None and ts < stored[1]:
                continue
            if deleted:
                state.pop(key, None)
            else:
                state[key] = (value, ts)
    return state


def _check_table(
    spark, spec: dict, writes: list[dict], reads: list, rounds: int, writers: int
) -> str:
    path, name = spec["path"], spec["name"]
    table = HoodieTable.open(path, spec.get("storage_options"))
    timeline = table.timeline()
    assert len(writes) == writers * rounds
    committed = [spec["seed"], *[w for w in writes if "instant" in w]]
    by_instant = {c["instant"]: c for c in committed}
    failed = [w for w in writes if "instant" not in w]
    # A merge-on-read table's commits are its compactions.
    compactions = {i.timestamp for i in timeline if i.action is Action.COMPACTION
                   or (spec["table_type"] == MOR and i.action is Action.COMMIT)}  # fmt: skip

    # Conflicts: each a clear ConcurrentWriteConflict naming the other writer's instant.
    for w in failed:
        assert w["error"] == "ConcurrentWriteConflict", (
            f"{name}: writer {w['writer']}'s round {w['round']} failed with {w['error']}, not a "
            f"conflict: {w['message']}"
        )
        match = CONFLICT.match(w["message"])
        assert match, w["message"]
        w["tried"], w["named"] = match.group(1), NAMED.findall(match.group(2))
        assert w["named"], w["message"]
    writer_of = {c["instant"]: c["writer"] for c in committed[1:]}
    writer_of |= {w["tried"]: w["writer"] for w in failed}
    with_writes = 0
    for w in failed:
        for other, action in w["named"]:
            if other in compactions:  # pending ("compaction") or completed ("commit")
                assert action in ("compaction", "commit"), w["message"]
            else:
                with_writes += 1
                assert writer_of.get(other, w["writer"]) != w["writer"], w["message"]
    if spec["keys"] == "overlap":
        assert with_writes > 0, f"{name}: writers sharing file groups never conflicted"
    else:
        assert with_writes == 0, f"{name}: writers on disjoint keys conflicted: {failed}"

    # Every acknowledged write is in the final table, with the right values.
    expected = _model(committed)
    final = _read(spark, spec)
    assert final[1] == expected, f"{name}: the table is not the committed writes' result"
    if final[3] is not None:
        number, found, _ = final[3]
        assert found == _filtered(expected, number), f"{name}: filter {FILTERS[number]}"
    hudi = pytest.importorskip("hudi")
    theirs = hudi.HudiTable(path, options=spec.get("hudi_rs_options") or {}).read()
    theirs = pa.Table.from_batches(theirs)
    theirs = dict(zip(theirs["id"].to_pylist(), zip(theirs["value"].to_pylist(),
                                                     theirs["ts"].to_pylist())))  # fmt: skip
    assert theirs == expected, f"{name}: hudi-rs reads another table"

    # Every read saw the state after a prefix of the commits (in the order they completed).
    order = _completion_order(path, by_instant) if "storage_options" not in spec else None
    assert order is None or sorted(order) == sorted(by_instant)
    skipping = []  # the filtered reads' skipping reports
    for before, snapshot, after, filtered in reads:
        before, after = before - compactions, after - compactions
        assert before <= after <= set(by_instant), "a completed write no writer saw commit"
        if order is None:  # S3: the completed before, and any of those completed during
            during = sorted(after - before)
            subsets = (c for k in range(len(during) + 1) for c in itertools.combinations(during, k))
            # In instant order: a key is deleted two rounds after its writer inserted it, so
            # the insert comes first (a delete applied first would let the insert back in).
            states = [_model([by_instant[i] for i in sorted({*before, *c})]) for c in subsets]
        else:
            low, high = len(before), len(after)
            assert set(order[:low]) == before and set(order[:high]) == after, "out of order"
            states = [_model([by_instant[i] for i in order[:k]]) for k in range(low, high + 1)]
        assert snapshot in states, f"{name}: a read saw a state no prefix of commits produced"
        if filtered is not None:  # read with data skipping by the indexes, between the same two
            number, found, reports = filtered
            assert found in [_filtered(s, number) for s in states], (
                f"{name}: a read filtered by {FILTERS[number]} saw a state no prefix of commits "
                f"produced: {found}"
            )
            skipping.extend(reports)

    # No live or acknowledged write was rolled back; nothing is left pending.
    tried = {w["tried"] for w in failed}
    rollbacks = [i for i in timeline.completed if i.action is Action.ROLLBACK]
    for instant in rollbacks:
        content = table.meta_client.instant_content(instant)
        undone = RollbackMetadata.from_avro(content).commits_rolled_back
        assert set(undone) <= tried, f"{name}: rollback {instant.timestamp} undid {undone}"
    assert not [i for i in timeline.pending if i.action in WRITE_ACTIONS]
    if spec["metadata_table"] is not None:
        assert_metadata_table_whole(table.meta_client, name)
        if "storage_options" not in spec:
            assert_reads_list_alike(table.meta_client, name)
    summary = ""
    if spec["indexes"]:
        assert_indexes_whole(table.meta_client, name)
        by_metadata = sum(r.by_metadata for r in skipping)
        indexed = sum(r.indexed for r in skipping)
        # the reads took base files' statistics from the indexes while the writers wrote
        assert indexed > 0, f"{name}: no filtered read found a file's statistics: {skipping}"
        summary = f" ({indexed} files' statistics from the indexes, {by_metadata} skipped)"
    done = {i.timestamp for i in timeline.completed}
    return (
        f"{name}: {len(committed) - 1} commits, {len(failed)} conflicts ({with_writes} with "
        f"writes), {len(rollbacks)} rollbacks, {len(compactions & done)} compactions, "
        f"{len(reads)} reads{summary}"
    )


def _completion_order(path: str, writes: dict) -> list[str]:
    """The committed writes in the order they completed (their completed files' times; on a
    table version 8 timeline, the completion times in their names)."""
    timeline = HoodieTable.open(path).timeline()
    if timeline.layout.version >= 2:
        completed = timeline.completion_times()
        return sorted((i for i in writes if i in completed), key=completed.__getitem__)
    meta = Path(path) / METAFOLDER
    done = []
    for instant in writes:
        for suffix in ("commit", "deltacommit", "replacecommit"):
            file = meta / f"{instant}.{suffix}"
            if file.exists():
                done.append((file.stat().st_mtime_ns, instant))
    return [i for _, i in sorted(done)]

"""A randomized differential test of the core's write and read semantics (issue 14, item 1).

Hypothesis draws a table (copy-on-write or merge-on-read, SIMPLE, BUCKET or BLOOM index,
partitioned or not, with or without an ordering field) and a sequence of operations on it
(upserts with duplicate keys, ties, stale rows, deletes and nulls; the delete operation; schema
additions; compaction; clean; archive; savepoint and restore; rollback; writes that fail), runs it
against the core and, after every step, holds every reader to the model of README's rules
(`diff_model.py`). A failure shrinks to the shortest sequence and prints it as core API calls.

CI runs a small derandomized set; `make soak` runs many more (tests/property/soak.py).
"""

from __future__ import annotations

import dataclasses

import pytest
from diff_harness import run_scenario
from diff_model import (
    BLOOM,
    BUCKET,
    COW,
    GLOBAL_SIMPLE,
    MOR,
    RECORD_INDEX,
    SIMPLE,
    Archive,
    Clean,
    Cluster,
    Compact,
    Delete,
    Insert,
    Params,
    Rec,
    Restore,
    Rollback,
    Savepoint,
    Upgrade,
    Upsert,
)
from diff_strategies import Scenario, scenarios
from hypothesis import HealthCheck, Phase, example, given, settings

from hoodie.index import simple
from hoodie.index.simple import SimpleIndex

pytestmark = pytest.mark.spark

CI_EXAMPLES = 2


@settings(
    max_examples=CI_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    # No shrinking in CI: a step costs seconds; `make soak` shrinks (and the failure message
    # prints the whole sequence as core API calls either way).
    phases=(Phase.explicit, Phase.generate),
)
@given(scenario=scenarios(max_ops=5))
# drawn rarely in CI's few examples: on merge-on-read under RECORD_INDEX, a soft delete whose
# ordering value loses (the record stays, and so must its record index entry: else the next
# upsert of the key inserted it again, a duplicate), one that wins, a stale update
@example(
    scenario=Scenario(
        Params(table_type=MOR, index=RECORD_INDEX, compact_every=10, table_version=8),
        (
            Upsert(
                (
                    Rec("k0", "p0", ts=3, v="a"),
                    Rec("k1", "p0", ts=3, v="b"),
                    Rec("k2", "p1", ts=3, v="c"),
                )
            ),  # fmt: skip
            Upsert((Rec("k0", "p0", ts=1, deleted=True), Rec("k1", "p0", ts=5, deleted=True))),
            Upsert((Rec("k0", "p0", ts=2, v="stale"), Rec("k3", "p0", ts=1, v="d"))),
            Upsert((Rec("k0", "p0", ts=4, v="a4"), Rec("k2", "p1", ts=0, deleted=True))),
        ),
    )
)
# R18: an upsert that deletes, in its own commit, keys stored with a larger ordering value
# than anything in the batch, on merge-on-read (a log's unordered deletes) and under a global
# index (found wherever stored)
@example(
    scenario=Scenario(
        Params(table_type=MOR, index=SIMPLE, compact_every=10),
        (
            Upsert((Rec("k0", "p0", ts=5, v="a"), Rec("k1", "p1", ts=5, v="b"))),
            Upsert((Rec("k2", "p0", ts=1, v="c"),), deletes=(("k0", "p0"), ("k3", "p1"))),
            Compact(),
            Upsert((Rec("k0", "p0", ts=0, v="back"),), deletes=(("k1", "p1"),)),
        ),
    )
)
def test_random_sequences_agree_with_the_model(spark, tmp_path_factory, scenario):
    run_scenario(spark, scenario, str(tmp_path_factory.mktemp("difftest")), spark_reads="last")


def _lead_cases(table_type: str, index: str, table_version: int = 6) -> Scenario:
    """The lead's two regression cases in one sequence."""
    ops = [
        Upsert((Rec("k1", ts=1, v="a"),)),  # the table exists; k0 is unknown
        # (1) a delete with ts=20 and a row with ts=10 for one key in one batch: the delete
        # wins the precombine, so the key ends absent (deletes of unknown keys used to be
        # filtered out before the batch was deduplicated, keeping the ts=10 row)
        Upsert((Rec("k0", ts=20, deleted=True), Rec("k0", ts=10, v="b"))),
        # (2) on merge-on-read, k2 deleted with ts=20 and then inserted with ts=0: the log's
        # delete outranks the insert, so k2 stays absent (as hudi-rs reads it) until
        # compaction folds the delete away; on copy-on-write the insert shows at once
        Upsert((Rec("k2", ts=5, v="c"),)),
        Upsert((Rec("k2", ts=20, deleted=True),)),
        Upsert((Rec("k2", ts=0, v="back"),)),
    ]
    if table_type == MOR:
        ops += [Compact(), Upsert((Rec("k2", ts=0, v="again"),))]
    return Scenario(
        Params(
            table_type=table_type,
            index=index,
            partitioned=False,
            compact_every=10,
            table_version=table_version,
        ),  # fmt: skip
        tuple(ops),
    )


@pytest.mark.parametrize(
    "table_type,index,version",
    [
        (COW, SIMPLE, 6),
        (MOR, BUCKET, 6),
        pytest.param(MOR, SIMPLE, 8, marks=pytest.mark.full),  # make test: MOR BLOOM 8
        pytest.param(COW, BLOOM, 6, marks=pytest.mark.full),  # and COW SIMPLE 6
        (MOR, BLOOM, 8),
    ],
    ids=lambda v: str(v).lower(),
)
def test_the_lead_regression_cases(spark, tmp_path, table_type, index, version):
    lead = _lead_cases(table_type, index, version)
    run_scenario(spark, lead, str(tmp_path), spark_reads="last")


@pytest.mark.full  # make test: the join's tagging in test_inserts_never_change_stored_records
def test_batches_too_large_for_the_driver_tag_by_a_spark_join(spark, tmp_path, monkeypatch):
    """Upserts tagged in a job of their own (where routing units would be too big), and there
    batches above KEY_FILTER_MAX_ROWS tagged by a Spark join of every stored key (and its
    cached result), not on the driver: the lead cases, then the delete operation of a
    stored and an unknown key, on merge-on-read, where keys are also read from log files.
    No file counts as small, so every insert makes a file group of its own, and an update
    tagged wrongly would show as a duplicate key."""
    monkeypatch.setattr(simple, "KEY_FILTER_MAX_ROWS", 0)
    # tag in a job of its own
    monkeypatch.setattr(SimpleIndex, "in_task_tagging", lambda *args: None)
    lead = _lead_cases(MOR, SIMPLE)
    params = dataclasses.replace(lead.params, small_file_limit=0)
    ops = (*lead.ops, Delete((("k1", None), ("k9", None))), Upsert((Rec("k1", ts=30, v="z"),)))
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


@pytest.mark.parametrize(
    "table_type, lookup", [(COW, "driver"), (MOR, "join")], ids=["cow-driver", "mor-join"]
)
def test_inserts_never_change_stored_records(spark, tmp_path, monkeypatch, table_type, lookup):
    """R12 in one sequence: insert and bulk_insert, with dup policies drop and fail, into a
    table with records (small file groups to fill, a key deleted on merge-on-read but still in
    its base file), by the driver-side lookup and by the Spark join (and there, bulk inserts
    whose records go to local disk as they come)."""
    if lookup == "join":
        monkeypatch.setattr(simple, "KEY_FILTER_MAX_ROWS", 0)
    ops = (
        Upsert((Rec("k0", "p0", ts=1, v="a"), Rec("k1", "p1", ts=1, v="b"))),
        # k0 is stored: dropped; k2 new (ties: the later row wins); k3 a delete of a new key
        Insert(
            (
                Rec("k0", "p0", ts=9, v="x"),
                Rec("k2", "p0", ts=2, v="c"),
                Rec("k2", "p0", ts=2, v="c2"),
                Rec("k3", "p0", ts=1, deleted=True),
            ),
            policy="drop",
        ),
        Insert((Rec("k1", "p1", ts=9, v="x"), Rec("k3", "p1", ts=1, v="d")), policy="fail"),
        Insert(
            (Rec("k1", "p1", ts=9, v="x"), Rec("k3", "p1", ts=1, v="d")), bulk=True, policy="drop"
        ),
        Upsert((Rec("k2", "p0", ts=5, deleted=True),)),
        Insert(
            (Rec("k2", "p0", ts=7, v="back"), Rec("k1", "p0", ts=1, v="e")),
            bulk=True,
            policy="fail",
        ),
        Insert(
            (Rec("k2", "p0", ts=7, v="back"), Rec("k1", "p0", ts=1, v="e")),
            columns=(),
            policy="drop",
        ),
    )
    # merge-on-read: the bulk inserts set their records aside on disk after every batch
    memory = 2000 if table_type == MOR else None
    params = Params(table_type=table_type, index=SIMPLE, compact_every=10, write_memory=memory)
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


def test_rolling_back_the_commit_a_clean_retained_restores_what_it_replaced(spark, tmp_path):
    """Found by `make soak SEQUENCES=500 SEED=1` (sequence 259): with one commit retained, the
    automatic clean after the delete removed the version the delete replaced, so rolling the
    delete back lost k0. Hudi's cleaner keeps the newest version from before the earliest
    retained commit, and so do we now."""
    ops = (
        Upsert((Rec("k0"), Rec("k0"))),
        Clean(),
        Delete((("k0", None),)),
        Rollback(),
    )
    params = Params(table_type=COW, index=SIMPLE, partitioned=False, commits_retained=1,
                    keep_min=2, keep_max=3)  # fmt: skip
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


def test_a_version_8_incremental_range_reaches_archived_writes(spark, tmp_path):
    """Found by `make soak SEQUENCES=40 SEED=7` (sequence 3), table version 8: after archival
    moved the first writes to the LSM timeline, an incremental read from 0 kept only the rows
    of writes still on the active timeline (the range is one of completion times, and the
    archived writes' were not looked up), so k0's version from an archived delta commit was
    dropped. The archived writes' completion times now come from the LSM timeline."""
    row = Rec("k0", "p0")
    ops = (
        Upsert((row,)),
        Upsert((row,)),
        Upsert((row, Rec("k0", "p0", ts=2))),
        Upsert((row,)),
    )
    params = Params(table_type=MOR, index=SIMPLE, compact_every=2, keep_min=2, keep_max=3,
                    table_version=8)  # fmt: skip
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


def test_archival_keeps_the_delta_commits_the_compaction_trigger_counts(spark, tmp_path):
    """Found by `make soak SEQUENCES=40 SEED=7` (sequence 20), table version 6: with
    keep_max (3) below compact_every (4), archival moved the delta commits written since the
    latest compaction off the active timeline, where the inline trigger counts them, so the
    compaction after the fourth delta commit never ran. Archival now keeps them, as Hudi's
    archiver does (CompactionUtils.getEarliestInstantToRetainForCompaction)."""
    ops = (
        Upsert((Rec("k0"),)),
        Upsert((Rec("k1"), Rec("k0", deleted=True))),
        Upsert((Rec("k0"),)),
        Insert((Rec("k0"),), policy="drop"),
        Upsert((Rec("k0"),)),
    )
    params = Params(table_type=MOR, index=SIMPLE, partitioned=False, compact_every=4,
                    keep_min=2, keep_max=3)  # fmt: skip
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


def test_a_rolled_back_compaction_is_not_run_again(spark, tmp_path):
    """Found by `make soak SEQUENCES=40 SEED=7` (sequence 20, after the archival fix): rolling
    back a completed compaction left its plan pending, so the next inline compaction ran it a
    second time beside a new one. Hudi reverts the commit to its compaction instant and deletes
    that too; so do we now."""
    row = Rec("k0")
    ops = (
        Upsert((row,)),
        Upsert((row, row)),
        Upsert((row,)),
        Upsert((row,)),
        Rollback(),
        Delete((("k0", None),)),
    )
    params = Params(table_type=MOR, index=BUCKET, partitioned=False, compact_every=2,
                    keep_min=2, keep_max=3)  # fmt: skip
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


@pytest.mark.parametrize("table_type", [pytest.param(COW, marks=pytest.mark.full), MOR])
def test_an_upgrade_to_version_8_midway(spark, tmp_path, table_type):
    """R13: a version 6 history (merge-on-read: logs left to compact), a savepoint, the upgrade,
    then version 8 writes, a rollback, a restore across the upgrade and archival; every read
    (time travel to each instant, incremental ranges, hudi-rs) checked after each step."""
    ops = (
        Upsert((Rec("k0", "p0", ts=1, v="a"), Rec("k1", "p1", ts=1, v="a"))),
        Upsert((Rec("k0", "p0", ts=2, v="b"), Rec("k2", "p0", ts=1, v="a"))),
        Savepoint(),
        Upsert((Rec("k1", "p1", ts=3, v="c"), Rec("k2", "p0", ts=1, deleted=True))),
        Upgrade(),
        Upsert((Rec("k0", "p0", ts=4, v="d"), Rec("k3", "p1", ts=1, v="a"))),
        Delete((("k1", "p1"),)),
        Rollback(),
        Upgrade(),
        Upsert((Rec("k3", "p1", ts=5, v="e"),)),
        Restore(),
        Upsert((Rec("k2", "p0", ts=6, v="f"),)),
        Archive(),
    )
    params = Params(table_type=table_type, index=SIMPLE, compact_every=4, keep_min=2,
                    keep_max=3)  # fmt: skip
    # Every step's Spark reads on merge-on-read (slices across the upgrade); the last on COW.
    reads = "every" if table_type == MOR else "last"
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads=reads)


@pytest.mark.parametrize(
    "table_type, update_partition_path, version, index",
    # make test: the in-place case under RECORD_INDEX (moves under GLOBAL_SIMPLE on
    # merge-on-read: tests/spark/test_global_index.py); make test-full: each index both ways;
    # the soak's `--index` draws the rest
    [
        pytest.param(MOR, True, 8, GLOBAL_SIMPLE, id="mor-move-v8", marks=pytest.mark.full),
        pytest.param(COW, False, 6, RECORD_INDEX, id="cow-in-place-v6-record-index"),
        pytest.param(COW, False, 6, GLOBAL_SIMPLE, id="cow-in-place-v6", marks=pytest.mark.full),
        pytest.param(MOR, True, 8, RECORD_INDEX, id="mor-move-v8-record-index",
                     marks=pytest.mark.full),
    ],
)  # fmt: skip
def test_global_index_keys_change_partitions(
    spark, tmp_path, table_type, update_partition_path, version, index
):
    """G1-G8 in one sequence: keys change partitions (there and back before a compaction, a
    stale row, one key in both partitions of a batch, deletes naming the wrong partition, the
    delete operation), on both table types, moving or updated in place."""
    ops = (
        Upsert(
            (
                Rec("k0", "p0", ts=1, v="a"),
                Rec("k1", "p0", ts=1, v="b"),
                Rec("k2", "p1", ts=1, v="c"),
                Rec("k2", "p0", ts=0, v="c-old"),
            )
        ),  # fmt: skip
        Upsert((Rec("k0", "p1", ts=2, v="a2"), Rec("k1", "p1", ts=0, v="stale"))),
        Upsert(
            (
                Rec("k0", "p0", ts=3, v="a3"),
                Rec("k2", "p0", ts=2, deleted=True),
                Rec("k3", "p1", ts=1, v="d"),
                Rec("k3", "p0", ts=2, v="d2"),
            )
        ),  # fmt: skip
        Delete((("k1", "p1"),)),
        Upsert((Rec("k0", "p1", ts=4, v="a4"), Rec("k1", "p1", ts=5, v="b5"))),
        *([Compact()] if table_type == MOR else []),
        Upsert((Rec("k3", "p1", ts=3, v="d3"), Rec("k0", "p0", ts=5, v="a5"))),
    )
    params = Params(table_type=table_type, index=index, compact_every=10,
                    update_partition_path=update_partition_path,
                    table_version=version)  # fmt: skip
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


def _merge_mode_case(
    merge: str, table_type: str, index: str, version: int, short: bool = False
) -> Scenario:
    """R14: the probe's shape (a stale and a newer update with null columns), a batch whose
    rows of one key fill each other, a soft delete and a re-insert, compaction."""
    ops = [
        Upsert((Rec("k0", "p0", ts=5, v="a", extras=(("e1", 10),)),
                Rec("k1", "p0", ts=5, v="b", extras=(("e1", 20),))), columns=("e1",)),
        Upsert((Rec("k0", "p0", ts=3, v=None, extras=(("e1", 11),)),
                Rec("k1", "p0", ts=7, v=None, extras=(("e1", None),))), columns=("e1",)),
        Upsert((Rec("k2", "p1", ts=2, v=None, extras=(("e1", 1),)),
                Rec("k2", "p1", ts=4, v="x", extras=(("e1", None),)),
                Rec("k2", "p1", ts=3, v="y", extras=(("e1", 3),))), columns=("e1",)),
        Upsert((Rec("k1", "p0", ts=1, v="c"), Rec("k0", "p0", ts=9, deleted=True))),
        Upsert((Rec("k0", "p0", ts=1, v=None, extras=(("e1", 5),)),), columns=("e1",)),
    ]  # fmt: skip
    if short:  # make test's case: the re-insert and the write after compaction left out
        ops = ops[:4]
    if table_type == MOR:
        ops += [Compact()] + ([] if short else [Upsert((Rec("k2", "p1", ts=0, v=None),))])
    params = Params(table_type=table_type, index=index, compact_every=10,
                    table_version=version, merge=merge)  # fmt: skip
    return Scenario(params, tuple(ops))


@pytest.mark.parametrize(
    "merge,table_type,index,version",
    [
        # (the judge's merge-mode case and the random draws of R14 run in `make test`)
        pytest.param("partial-short", MOR, SIMPLE, 8, marks=pytest.mark.full),
        pytest.param("partial", MOR, SIMPLE, 8, marks=pytest.mark.full),
        pytest.param("partial", COW, SIMPLE, 6, marks=pytest.mark.full),
        pytest.param("non_defaults", MOR, BUCKET, 6, marks=pytest.mark.full),
        pytest.param("non_defaults", COW, BLOOM, 8, marks=pytest.mark.full),
        pytest.param("commit", MOR, SIMPLE, 6, marks=pytest.mark.full),
        pytest.param("commit", COW, GLOBAL_SIMPLE, 8, marks=pytest.mark.full),
    ],
    ids=lambda v: str(v).lower(),
)
def test_merge_modes_agree_with_the_model(spark, tmp_path, merge, table_type, index, version):
    short = merge.endswith("-short")
    case = _merge_mode_case(merge.removesuffix("-short"), table_type, index, version, short)
    run_scenario(spark, case, str(tmp_path), spark_reads="last")


@pytest.mark.parametrize("table_type, version", [
    pytest.param(COW, 6, id="cow-v6"),
    pytest.param(MOR, 8, id="mor-v8", marks=pytest.mark.full),
])  # fmt: skip
def test_clustering_changes_no_read(spark, tmp_path, table_type, version):
    """R17 in one sequence: clustering after updates, a tombstone and a stale update (merged
    away on merge-on-read), writes into the clustered file groups, clustering again, then a
    rollback of that clustering and of the write before it: every read, time travel and
    incremental range included, as without clustering, before and after a clean."""
    ops = (
        Upsert((Rec("k0", "p0", ts=1, v="a"), Rec("k1", "p0", ts=1, v="b"),
                Rec("k2", "p1", ts=1, v="c"))),
        Upsert((Rec("k0", "p0", ts=5, v="a5"), Rec("k1", "p0", ts=3, deleted=True))),
        Cluster(),
        Upsert((Rec("k0", "p0", ts=2, v="stale"), Rec("k3", "p0", ts=1, v="d"),
                Rec("k2", "p1", ts=4, v="c4"))),
        Clean(),  # one commit retained: the groups the first clustering replaced go
        Cluster(),
        Rollback(),
        Rollback(),
        # an update of a file group the rolled-back clustering planned: the plan went too
        Upsert((Rec("k1", "p0", ts=9, v="b9"), Rec("k0", "p0", ts=9, v="a9"))),
    )  # fmt: skip
    params = Params(table_type=table_type, index=SIMPLE, compact_every=10, table_version=version,
                    commits_retained=1)  # fmt: skip
    run_scenario(spark, Scenario(params, ops), str(tmp_path), spark_reads="last")


def _partial_update_case(table_type: str, index: str, version: int) -> Scenario:
    """R15 in one sequence: partial updates of keys whose stored values are in a base file and
    in a log, a stale one, a new key (whole), a key deleted since (whole again), only the key
    listed (the ordering column alone taken) with a column the stored rows lack."""
    ops = [
        Upsert((Rec("k0", "p0", ts=5, v="a", extras=(("e1", 10),)),
                Rec("k1", "p0", ts=5, v="b", extras=(("e1", 20),))), columns=("e1",)),
        Upsert((Rec("k1", "p0", ts=6, v="b6", extras=(("e1", 21),)),), columns=("e1",)),
        Upsert((Rec("k0", "p0", ts=7, v="x", extras=(("e1", 11),)),
                Rec("k1", "p0", ts=8, v="y", extras=(("e1", None),)),
                Rec("k2", "p1", ts=1, v="c", extras=(("e1", 1),))),
               columns=("e1",), update_columns=("e1",)),
        Upsert((Rec("k0", "p0", ts=9, deleted=True),)),
        Upsert((Rec("k0", "p0", ts=10, v="back", extras=(("e1", 99),)),
                Rec("k1", "p0", ts=2, v="stale", extras=(("e1", 0),))),
               columns=("e1",), update_columns=("v",)),
        Compact(),
        Upsert((Rec("k1", "p0", ts=20, v="z", extras=(("e1", 5), ("e2", 7))),),
               columns=("e1", "e2"), update_columns=("id",)),
    ]  # fmt: skip
    if table_type == COW:
        ops.remove(Compact())
    params = Params(table_type=table_type, index=index, compact_every=10, table_version=version,
                    update_partition_path=False)  # fmt: skip
    return Scenario(params, tuple(ops))


@pytest.mark.parametrize("table_type,index,version", [
    pytest.param(COW, SIMPLE, 6, id="cow-simple-v6"),
    pytest.param(MOR, SIMPLE, 6, id="mor-simple-v6", marks=pytest.mark.full),
    pytest.param(MOR, BUCKET, 8, id="mor-bucket-v8", marks=pytest.mark.full),
    pytest.param(COW, BLOOM, 8, id="cow-bloom-v8", marks=pytest.mark.full),
    pytest.param(MOR, GLOBAL_SIMPLE, 8, id="mor-global-v8", marks=pytest.mark.full),
])  # fmt: skip
def test_partial_updates_agree_with_the_model(spark, tmp_path, table_type, index, version):
    run_scenario(spark, _partial_update_case(table_type, index, version), str(tmp_path),
                 spark_reads="last")  # fmt: skip


def _cdc_case(table_type: str, mode: str, version: int, short: bool = False) -> Scenario:
    """R16 in one sequence: inserts, an update re-writing an identical row (a `u` with
    before == after), a stale update that loses and a delete of an absent key (nothing), a
    delete, an upsert deleting keys in its own commit (R18), a partial update (R15),
    clustering and compaction (nothing), a rollback (its changes gone) and cleaning with two
    commits retained (older ranges may be refused, recent ones must read)."""
    ops = [
        Upsert((Rec("k0", "p0", ts=1, v="a"), Rec("k1", "p0", ts=1, v="b"),
                Rec("k2", "p1", ts=1, v="c"))),
        Upsert((Rec("k0", "p0", ts=1, v="a"), Rec("k1", "p0", ts=0, v="stale"),
                Rec("k3", "p1", ts=2, deleted=True))),
        Delete((("k2", "p1"), ("k3", "p0"))),
        Upsert((Rec("k3", "p1", ts=3, v="d", extras=(("e1", 1),)),), columns=("e1",),
               deletes=(("k1", "p0"),)),
        Cluster(),
        Upsert((Rec("k0", "p0", ts=4, v="x", extras=(("e1", 7),)),
                Rec("k3", "p1", ts=5, v="y", extras=(("e1", 8),))), columns=("e1",),
               update_columns=("e1",)),
        Upsert((Rec("k2", "p1", ts=6, v="back"),)),
        Rollback(),
        Clean(),
        Upsert((Rec("k3", "p1", ts=2, v="old"), Rec("k2", "p1", ts=7, v="c7"))),
    ]  # fmt: skip
    if short:  # make test's case: without the clustering, the write rolled back and rollback
        ops = ops[:4] + ops[5:6] + ops[8:]
    if table_type == MOR:
        ops.insert(7, Compact())
    params = Params(table_type=table_type, index=SIMPLE, compact_every=10, table_version=version,
                    commits_retained=2, cdc=mode)  # fmt: skip
    return Scenario(params, tuple(ops))


@pytest.mark.parametrize("table_type, mode, version", [
    pytest.param(COW, "OP_KEY_ONLY-short", 6, id="cow-op-key-only-v6-short"),
    pytest.param(COW, "OP_KEY_ONLY", 6, id="cow-op-key-only-v6", marks=pytest.mark.full),
    pytest.param(MOR, "DATA_BEFORE_AFTER", 8, id="mor-data-before-after-v8",
                 marks=pytest.mark.full),
    pytest.param(MOR, "DATA_BEFORE", 6, id="mor-data-before-v6", marks=pytest.mark.full),
    pytest.param(COW, "DATA_BEFORE", 8, id="cow-data-before-v8", marks=pytest.mark.full),
])  # fmt: skip
def test_cdc_reads_agree_with_the_model(spark, tmp_path, table_type, mode, version):
    short = mode.endswith("-short")
    case = _cdc_case(table_type, mode.removesuffix("-short"), version, short)
    run_scenario(spark, case, str(tmp_path), spark_reads="last")

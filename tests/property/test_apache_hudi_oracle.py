"""Apache Hudi as the semantics oracle (issue 39, item 5): fixed sequences run through our core
and through Apache Hudi's datasource, each on its own table, rows compared after every step
(`hudi_oracle.py`; `make soak-hudi` runs random ones), and the differences we keep on purpose,
each shown against Apache Hudi itself."""

from __future__ import annotations

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, ApacheHudiError
from diff_harness import batch_rows, batch_schema, read_in_process, write_config
from diff_model import (
    BUCKET,
    COW,
    MOR,
    SIMPLE,
    Compact,
    Delete,
    Params,
    Rec,
    Rollback,
    Upsert,
    java_bucket,
)
from diff_strategies import Scenario
from hudi_oracle import (
    NO_INLINE_COMPACTION,
    OracleRunner,
    apache_hudi_version,
    hudi_batch,
    hudi_options,
    run_oracle,
)

from hoodie import HoodieTable
from hoodie.exceptions import DuplicateRecordKeyError

pytestmark = [pytest.mark.spark, pytest.mark.hudi_full]

# Ties in a batch (the later row wins), a stale row (the stored larger value stays), a delete
# that wins a tie, a delete that loses to a larger value, a column added and then omitted, the
# delete operation of a stored and an unknown key, a rollback, and a key deleted with a large
# value and written again with a smaller one (merge-on-read: stays deleted until compaction).
MIXED = (
    Upsert((Rec("k0", "p0", 1, "a"), Rec("k0", "p0", 1, "b"), Rec("k1", "p1", 2, "a"))),
    Upsert(
        (
            Rec("k0", "p0", 0, "stale"),
            Rec("k1", "p1", 2, "x"),
            Rec("k1", "p1", 2, deleted=True),
            Rec("k2", "p0", 3, "c", extras=(("e1", 7),)),
        ),
        ("e1",),
    ),  # fmt: skip
    Upsert((Rec("k2", "p0", 5, deleted=True), Rec("k3", "p1", 1, "d"), Rec("k3", "p1", 0, "e"))),
    Upsert((Rec("k2", "p0", 1, "back"), Rec("k0", "p0", 3, "f", extras=(("e2", 1),))), ("e2",)),
    Delete((("k3", "p1"), ("k9", "p0"), ("k3", "p1"))),
    Upsert((Rec("k1", "p1", 1, "g"), Rec("k3", "p1", 9, "h", extras=(("e1", 2),))), ("e1",)),
    Rollback(),
    Upsert((Rec("k3", "p1", 2, "i"), Rec("k0", "p0", 2, "old"))),
)


def _unpartitioned(ops: tuple) -> tuple:
    def rec(r: Rec) -> Rec:
        return Rec(r.key, None, r.ts, r.v, r.deleted, r.extras)

    out = []
    for op in ops:
        if isinstance(op, Upsert):
            op = Upsert(tuple(rec(r) for r in op.rows), op.columns)
        elif isinstance(op, Delete):
            op = Delete(tuple((k, None) for k, _ in op.keys))
        out.append(op)
    return tuple(out)


NEVER = NO_INLINE_COMPACTION
CASES = {
    "v6-cow-simple": Scenario(Params(COW, SIMPLE, table_version=6), MIXED),
    "v6-mor-simple": Scenario(
        Params(MOR, SIMPLE, partitioned=False, compact_every=NEVER, table_version=6),
        _unpartitioned(MIXED[:5]) + (Compact(),) + _unpartitioned(MIXED[5:]),
    ),
    "v8-mor-bucket": Scenario(
        Params(MOR, BUCKET, compact_every=NEVER, table_version=8),
        # no rollback: Apache Hudi 1.2 compacts first and then refuses it (hudi_oracle.py)
        MIXED[:4] + (Compact(),) + MIXED[4:6] + MIXED[7:] + (Compact(),),
    ),
    "v8-cow-no-precombine": Scenario(
        Params(COW, SIMPLE, precombine=False, table_version=8),
        (
            Upsert((Rec("k0", "p0", 5, "a"), Rec("k1", "p1", 5, "b"))),
            Upsert(
                (
                    Rec("k0", "p0", 1, "older ts, still replaces"),
                    Rec("k1", "p1", 9, deleted=True),
                    Rec("k2", "p0", 1, "c", extras=(("e1", 3),)),
                ),
                ("e1",),
            ),
            Delete((("k2", "p0"), ("k7", "p1"))),
            Rollback(),
            Upsert((Rec("k1", "p1", 0, "again"),)),
        ),  # fmt: skip
    ),
    # found by `make soak-hudi SEQUENCES=200 SEED=1` (sequence 30): Apache Hudi 1.2 fails the
    # delete operation on a table whose every write was rolled back; the oracle leaves it out
    "v8-cow-delete-after-rolling-back-everything": Scenario(
        Params(COW, SIMPLE, table_version=8),
        (
            Upsert((Rec("k0", "p0", 0),)),
            Rollback(),
            Delete((("k0", "p0"),)),
            Upsert((Rec("k0", "p0", 1, "a"),)),
        ),
    ),
}
# found by `make soak-hudi SEQUENCES=40 SEED=2` (sequence 38): the delete operation, then a
# `_hoodie_is_deleted` row of the key with a smaller ordering value than the stored row's. Our
# merge-on-read reader brought the stored row back (the key's deletes counted as one, whose
# ordering value lost to the row's); the key stays deleted, as in Apache Hudi and hudi-rs.
STALE_DELETE_AFTER_DELETE = (
    Upsert((Rec("k1", None, 5, "a"), Rec("k0", None, 1, "b"))),
    Delete((("k1", None),)),
    Upsert((Rec("k1", None, 2, deleted=True), Rec("k0", None, 2, "c"))),
    Compact(),
    Upsert((Rec("k1", None, 1, "back"),)),
)
for _version in (6, 8):
    CASES[f"v{_version}-mor-stale-delete-after-the-delete-operation"] = Scenario(
        Params(MOR, SIMPLE, partitioned=False, compact_every=NEVER, table_version=_version),
        STALE_DELETE_AFTER_DELETE,
    )


# found by `make soak-hudi SEQUENCES=200 SEED=1` (sequence 158, again): Apache Hudi 0.15 logs a
# stale `_hoodie_is_deleted` row of k2 and applies it over the compacted base row, where our
# write rewrote that small file group (an insert took it) and kept the row; the oracle knows
# the difference by what was written, whatever each table's layout
def _rec(key, ts, v, deleted=False, **extras) -> Rec:
    return Rec(key, None, ts, v, deleted, tuple(extras.items()))


E12, E1 = ("e1", "e2"), ("e1",)
CASES["v6-mor-stale-delete-after-compaction-layouts-differ"] = Scenario(
    Params(MOR, SIMPLE, partitioned=False, compact_every=NEVER, table_version=6),
    (
        Upsert((_rec("k2", 3, "c", e1=2, e2=None), _rec("k3", 2, "c", e1=2, e2=2),
                _rec("k3", 5, "a", e1=2, e2=2), _rec("k1", 0, "a", e1=None, e2=1),
                _rec("k1", 5, "c", True, e1=2, e2=None)), E12),
        Upsert((_rec("k0", 3, "c", e1=None), _rec("k2", 5, "c", e1=None),
                _rec("k1", 1, "c", True, e1=0), _rec("k3", 1, None, e1=2),
                _rec("k3", 2, "c", True, e1=0)), E1),
        Rollback(),
        Upsert((_rec("k1", 3, "c"),)),
        Delete((("k0", None), ("k1", None), ("k1", None))),
        Compact(),
        Upsert((_rec("k3", 3, None, e1=2, e2=2),), E12),
        Upsert((_rec("k1", 0, "a", e1=None), _rec("k3", 2, "b", e1=0), _rec("k1", 0, "c", e1=0),
                _rec("k1", 5, "c", e1=0), _rec("k2", 0, "a", True, e1=1)), E1),
    ),
)  # fmt: skip
# found by `make soak-hudi SEQUENCES=200 SEED=1` (sequence 163): Apache Hudi 0.15 takes k2's
# delete (a key it does not hold) as an insert into the small file group of k0, whose update
# then rewrites that base file; ours logs the update (read-optimized differs until compaction)
CASES["v6-mor-a-delete-of-an-unknown-key-takes-a-small-file-in-0-15"] = Scenario(
    Params(MOR, SIMPLE, partitioned=False, compact_every=NEVER, table_version=6),
    (
        Upsert((_rec("k0", 0, None), _rec("k1", 0, "c"))),
        Upsert((_rec("k0", 0, None), _rec("k2", 0, "a", True))),
        Compact(),
        Upsert((_rec("k0", 1, "x"),)),
    ),
)
KNOWN = {
    "v6-mor-stale-delete-after-compaction-layouts-differ": {
        "stale delete applied",
        "read-optimized layout",
    },
    "v6-mor-a-delete-of-an-unknown-key-takes-a-small-file-in-0-15": {"read-optimized layout"},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixed_sequences_agree_with_apache_hudi(spark, apache_hudi, tmp_path, case):
    scenario = CASES[case]
    judge = apache_hudi(apache_hudi_version(scenario.params))
    stats = run_oracle(
        spark, judge, scenario, str(tmp_path / "run"), f"oracle_{case.replace('-', '_')}"
    )
    skipped = 1 if case == "v8-cow-delete-after-rolling-back-everything" else 0
    assert stats.steps == len(scenario.ops) and stats.refused == 0 and stats.skipped == skipped
    assert set(stats.known) == KNOWN.get(case, set())


# -- differences we keep on purpose ---------------------------------------------------------------
def _ours(spark, path: str, p: Params, batches) -> HoodieTable:
    config = write_config(p)
    table = HoodieTable.for_write(path, config)
    for upsert in batches:
        table.upsert(spark.createDataFrame(batch_rows(p, upsert), batch_schema(p, upsert)), config)
    return table


def _rows(table: pa.Table | None) -> list[tuple]:
    if table is None:
        return []
    return sorted((r["id"], r["ts"], r["v"]) for r in table.to_pylist())


def test_a_null_ordering_value_loses_where_apache_hudi_refuses_it(spark, apache_hudi, tmp_path):
    """README: a null precombine value loses to any value. Apache Hudi has no such rule: 0.15
    refuses the row ("Could not create payload": the value may not be null), and 1.2 writes it
    but then fails the upsert of its key (its merge casts the null's default Integer 0 to the
    field's Long, or compares a null ordering value). We define the case instead of failing."""
    p = Params(COW, SIMPLE, partitioned=False, table_version=6)
    first = Upsert((Rec("k0", None, None, "null ts"),))
    second = Upsert((Rec("k0", None, 0, "ts 0"), Rec("k1", None, None, "only row")))
    ours = str(tmp_path / "ours")
    _ours(spark, ours, p, [first, second])
    assert _rows(read_in_process(ours, {})) == [("k0", 0, "ts 0"), ("k1", None, "only row")]

    old = apache_hudi(HUDI_0)
    with pytest.raises(ApacheHudiError, match="DefaultHoodieRecordPayload"):
        old.write(str(tmp_path / "theirs0"), hudi_batch(p, first, ()),
                  {**hudi_options(p, "null_ts_0", HUDI_0),
                   "hoodie.datasource.write.operation": "upsert"})  # fmt: skip

    p8 = Params(COW, SIMPLE, partitioned=False, table_version=8)
    new = apache_hudi(HUDI_1)
    theirs = str(tmp_path / "theirs1")
    options = {
        **hudi_options(p8, "null_ts_1", HUDI_1),
        "hoodie.datasource.write.operation": "upsert",
    }
    new.write(theirs, hudi_batch(p8, first, ()), options)
    with pytest.raises(ApacheHudiError, match="ClassCastException|NullPointerException"):
        new.write(theirs, hudi_batch(p8, second, ()), options)


def test_duplicate_keys_without_precombine_field_we_refuse_apache_hudi_keeps_the_later(
    spark, apache_hudi, tmp_path
):
    """README: without `precombine_field`, two rows of one key in a batch are an error, since
    nothing says which is latest. Apache Hudi 1.2 (COMMIT_TIME_ORDERING) keeps the later row of
    the batch as it arrived; we refuse and write nothing."""
    p = Params(MOR, SIMPLE, partitioned=False, precombine=False, table_version=8)
    first = Upsert((Rec("k1", None, 0, "x"),))
    batch = Upsert((Rec("k0", None, 1, "a"), Rec("k0", None, 0, "b")))
    ours = str(tmp_path / "ours")
    table = _ours(spark, ours, p, [first])
    with pytest.raises(DuplicateRecordKeyError):
        _ours(spark, ours, p, [batch])
    assert _rows(read_in_process(ours, {})) == [("k1", 0, "x")]
    assert len(table.timeline().completed.write_timeline.instants) == 1

    judge = apache_hudi(HUDI_1)
    theirs = str(tmp_path / "theirs")
    options = {**hudi_options(p, "no_precombine", HUDI_1),
               "hoodie.datasource.write.operation": "upsert"}  # fmt: skip
    judge.write(theirs, hudi_batch(p, first, ()), options)
    judge.write(theirs, hudi_batch(p, batch, ()), options)
    assert _rows(judge.read(theirs)) == [("k0", 0, "b"), ("k1", 0, "x")]


@pytest.mark.parametrize("version", [HUDI_0, HUDI_1])
def test_a_bucket_of_deletes_only_is_a_file_group_of_apache_hudis_not_ours(
    spark, apache_hudi, tmp_path, version
):
    """Merge-on-read, BUCKET index: a batch whose only row of a new bucket deletes an unknown
    key makes Apache Hudi create that bucket (a base file of no rows), so the key's insert that
    follows goes to the bucket's log and read-optimized does not show it until compaction. We
    create no bucket for deletes (README: a bucket that does not exist yet is created from the
    batch's surviving rows), so the insert makes the bucket's base file. The snapshots agree,
    and Apache Hudi reads our layout as we do, read-optimized included."""
    p = Params(MOR, BUCKET, partitioned=False, table_version=6 if version == HUDI_0 else 8)
    assert java_bucket("k0", 2) != java_bucket("k1", 2)
    batches = [
        Upsert((Rec("k0", None, 1, "a"),)),
        Upsert((Rec("k1", None, 1, deleted=True),)),
        Upsert((Rec("k1", None, 1, "b"),)),
    ]
    ours = str(tmp_path / "ours")
    _ours(spark, ours, p, batches)
    judge = apache_hudi(version)
    theirs = str(tmp_path / "theirs")
    options = {**hudi_options(p, "deletes_only_bucket", version),
               "hoodie.datasource.write.operation": "upsert"}  # fmt: skip
    for batch in batches:
        judge.write(theirs, hudi_batch(p, batch, ()), options)

    both = [("k0", 1, "a"), ("k1", 1, "b")]
    read_optimized = {"hoodie.datasource.query.type": "read_optimized"}
    assert _rows(judge.read(theirs)) == _rows(read_in_process(ours, {})) == both
    assert _rows(judge.read(theirs, **read_optimized)) == [("k0", 1, "a")]
    assert _rows(read_in_process(ours, read_optimized)) == both
    assert _rows(judge.read(ours, **read_optimized)) == both


# found by `make soak-hudi SEQUENCES=200 SEED=1` (sequence 158)
@pytest.mark.parametrize("version", [HUDI_0, HUDI_1])
def test_a_stale_delete_of_a_compacted_row_loses_where_apache_hudi_0_15_applies_it(
    spark, apache_hudi, tmp_path, version
):
    """Merge-on-read: a `_hoodie_is_deleted` row whose ordering value is smaller than the
    stored row's loses (README: a delete competes with its ordering value like any row). Apache
    Hudi 0.15's snapshot read applies such a delete from a log over the row of a compacted base
    file whatever their ordering values (it compares them only between log records); 1.2
    compares them, as we do."""
    p = Params(MOR, SIMPLE, partitioned=False, compact_every=NEVER,
               table_version=6 if version == HUDI_0 else 8)  # fmt: skip
    first = Upsert((Rec("k0", None, 3, "a"), Rec("k1", None, 1, "b")))
    stale_delete = Upsert((Rec("k0", None, 0, deleted=True),))
    ours = str(tmp_path / "ours")
    table = _ours(spark, ours, p, [first])
    table.services.compact(spark, write_config(p))
    _ours(spark, ours, p, [stale_delete])
    kept = [("k0", 3, "a"), ("k1", 1, "b")]
    assert _rows(read_in_process(ours, {})) == kept

    judge = apache_hudi(version)
    theirs = str(tmp_path / "theirs")
    options = {**hudi_options(p, "stale_delete", version),
               "hoodie.datasource.write.operation": "upsert"}  # fmt: skip
    judge.write(theirs, hudi_batch(p, first, ()), options)
    judge.sql(
        f"CREATE TABLE IF NOT EXISTS stale_delete_{version.replace('.', '_')} USING hudi "
        f"LOCATION '{theirs}'",
        "SET hoodie.compact.inline.max.delta.commits=1",
        f"CALL run_compaction(op => 'scheduleandexecute', "
        f"table => 'stale_delete_{version.replace('.', '_')}')",
        f"SET hoodie.compact.inline.max.delta.commits={p.compact_every}",
    )
    judge.write(theirs, hudi_batch(p, stale_delete, ()), options)
    applied = [("k1", 1, "b")]
    assert _rows(judge.read(theirs)) == (applied if version == HUDI_0 else kept)
    assert _rows(judge.read(ours)) == (applied if version == HUDI_0 else kept)


# found while fixing the case above: Apache Hudi 0.15 and 1.2 alike
REINSERTS = {
    # the key's version before the delete is in the base file
    "base": (
        Upsert((Rec("k1", None, 5, "a"), Rec("k0", None, 1, "b"))),
        Delete((("k1", None),)),
        Upsert((Rec("k1", None, 2, "again"),)),
    ),
    # and a newer one in a log
    "log": (
        Upsert((Rec("k1", None, 5, "a"), Rec("k0", None, 1, "b"))),
        Upsert((Rec("k1", None, 6, "newer"),)),
        Delete((("k1", None),)),
        Upsert((Rec("k1", None, 2, "again"),)),
    ),
}


@pytest.mark.parametrize("where", sorted(REINSERTS))
@pytest.mark.parametrize("version", [HUDI_0, HUDI_1])
def test_an_insert_after_the_delete_operation_where_apache_hudi_brings_back_the_base_row(
    spark, apache_hudi, tmp_path, version, where
):
    """Merge-on-read: the delete operation removes a key, then a batch inserts it again with a
    smaller ordering value than the deleted version's. README: the delete operation removes the
    key whatever its ordering value, so the later row is an insert, on merge-on-read as on
    copy-on-write, and compaction keeps it. Apache Hudi (0.15 and 1.2, on its own table and on
    ours) returns the deleted version of the base file instead: it merges the logs first (the
    insert wins over the delete there) and weighs the result against the base file's row by
    ordering value alone. hudi-rs 0.5 departs too (`TableModel.merged`'s variant). The oracle
    counts such records as "resurrected" and leaves them out until both read them alike."""
    p = Params(MOR, SIMPLE, partitioned=False, compact_every=NEVER,
               table_version=6 if version == HUDI_0 else 8)  # fmt: skip
    judge = apache_hudi(version)
    name = f"reinsert_{where}_{version.replace('.', '_')}"
    stats = OracleRunner(
        spark, judge, Scenario(p, REINSERTS[where]), str(tmp_path / "run"), name
    ).run()  # not run_oracle: its tables are read again below
    assert stats.known == {"resurrected": 1}

    ours = str(tmp_path / "run" / "ours")
    inserted = [("k0", 1, "b"), ("k1", 2, "again")]
    assert _rows(read_in_process(ours, {})) == inserted
    assert _rows(judge.read(ours)) == [("k0", 1, "b"), ("k1", 5, "a")]
    # copy-on-write gives the same rows as our merge-on-read, in both systems
    cow = Params(COW, SIMPLE, partitioned=False, table_version=p.table_version)
    cow_stats = OracleRunner(spark, judge, Scenario(cow, REINSERTS[where]),
                             str(tmp_path / "cow"), f"{name}_cow").run()  # fmt: skip
    assert cow_stats.known == {}
    assert _rows(read_in_process(str(tmp_path / "cow" / "ours"), {})) == inserted
    # once compacted, Apache Hudi reads our table as we do
    HoodieTable.for_write(ours, write_config(p)).services.compact(spark, write_config(p))
    assert _rows(judge.read(ours)) == _rows(read_in_process(ours, {})) == inserted

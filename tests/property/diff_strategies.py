"""Hypothesis strategies: a table's parameters and a sequence of operations on it.

Tables stay tiny so that collisions are the rule: four keys, two partitions, ordering values
from a handful (ties and stale updates are frequent), nulls in every data column.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from diff_model import (
    BLOOM,
    BUCKET,
    COW,
    EXTRA_COLUMNS,
    GLOBAL,
    GLOBAL_BLOOM,
    GLOBAL_SIMPLE,
    KEY_LOOKUP,
    MOR,
    RECORD_INDEX,
    SIMPLE,
    VALUE_COLUMNS,
    Archive,
    Clean,
    Cluster,
    Compact,
    Delete,
    FailedUpsert,
    Insert,
    Params,
    Rec,
    Restore,
    Rollback,
    Savepoint,
    Upgrade,
    Upsert,
)
from hypothesis import strategies as st

KEYS = ("k0", "k1", "k2", "k3")
INDEXES = (SIMPLE, BUCKET, BLOOM, GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX)
PARTITIONS = ("p0", "p1")
TS = (None, 0, 1, 2, 3, 5)
VALUES = (None, "a", "b", "c")
EXTRA_VALUES = (None, 0, 1, 2)
FAIL_POINTS = ("write.inflight", "write.files_written", "write.finalized")
RECOVERIES = ("undone", "crashed", "explicit")
CDC_MODES = ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER")  # R16


@dataclass(frozen=True)
class Scenario:
    params: Params
    ops: tuple

    def __repr__(self) -> str:
        return "\n" + self.to_script()

    def to_script(self) -> str:
        from diff_harness import scenario_script

        return scenario_script(self)


@st.composite
def table_params(draw, indexes: tuple[str, ...] = INDEXES, metadata_tables: bool = False) -> Params:
    """A table's parameters (`indexes`: drawn from these, e.g. one index for a soak;
    `metadata_tables`: whether the writes keep a metadata table is drawn too, else never)."""
    keep_min, keep_max = draw(st.sampled_from(((2, 3), (3, 5), (20, 30))))
    params = Params(
        table_type=draw(st.sampled_from((COW, MOR))),
        index=draw(st.sampled_from(indexes)),
        partitioned=draw(st.booleans()),
        precombine=draw(st.sampled_from((True, True, True, False))),
        compact_every=draw(st.sampled_from((2, 3, 4))),
        bucket_count=2,
        commits_retained=draw(st.sampled_from((10, 2, 1))),
        keep_min=keep_min,
        keep_max=keep_max,
        max_file_size=draw(st.sampled_from((None, None, 6000))),
        write_memory=draw(st.sampled_from((None, None, 2000))),
        table_version=draw(st.sampled_from((6, 8))),
        update_partition_path=draw(st.booleans()),
        metadata_table=draw(st.booleans()) if metadata_tables else False,
    )
    # R14: a merge mode besides the default, with the ordering field; the column-wise payloads
    # not under a global index (refused)
    merges = ("",) * 5 + ("commit",)
    if params.index not in GLOBAL:
        merges += ("non_defaults", "partial")
    merge = draw(st.sampled_from(merges)) if params.precombine else ""
    # R16: CDC on for half the tables, in each supplemental logging mode
    cdc = draw(st.sampled_from(("",) * 3 + CDC_MODES))
    return replace(params, merge=merge, cdc=cdc)


def _partition(p: Params):
    return st.sampled_from(PARTITIONS) if p.partitioned else st.none()


@st.composite
def upserts(draw, p: Params, ts: tuple = TS, window: bool = False, partial: bool = True) -> Upsert:
    """`ts`: the ordering values to draw from (the Apache Hudi oracle leaves out null).
    `window`: also delete, in the same commit, keys the batch has no row of (R18). `partial`:
    sometimes a partial update (R15; the Apache Hudi oracle draws none)."""
    columns = tuple(sorted(draw(st.sets(st.sampled_from(EXTRA_COLUMNS), max_size=2))))
    rows = draw(
        st.lists(
            st.builds(
                Rec,
                key=st.sampled_from(KEYS),
                partition=_partition(p),
                ts=st.sampled_from(ts),
                v=st.sampled_from(VALUES),
                deleted=st.sampled_from((False, False, False, True)),
                extras=st.tuples(
                    *[st.tuples(st.just(c), st.sampled_from(EXTRA_VALUES)) for c in columns]
                ),
            ),
            min_size=1,
            max_size=5,
        )
    )
    deletes: tuple = ()
    others = [k for k in KEYS if k not in {rec.key for rec in rows}]
    if window and others:
        keys = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True))
        deletes = tuple((key, draw(_partition(p))) for key in keys)
    update: tuple = ()
    refused = p.merge in ("non_defaults", "partial") or (p.index in GLOBAL
                                                         and p.update_partition_path)  # fmt: skip
    if partial and not refused and draw(st.sampled_from((False, False, True))):  # R15
        pool = ("id", *VALUE_COLUMNS, *columns)
        update = tuple(sorted(draw(st.sets(st.sampled_from(pool), min_size=1, max_size=2))))
    return Upsert(tuple(rows), columns, deletes, update)


@st.composite
def inserts(draw, p: Params) -> Insert:
    upsert = draw(upserts(p))
    bulk = draw(st.booleans())
    policy = draw(st.sampled_from(("drop", "fail")))
    return Insert(upsert.rows, upsert.columns, bulk, policy)


@st.composite
def deletes(draw, p: Params) -> Delete:
    keys = draw(st.lists(st.tuples(st.sampled_from(KEYS), _partition(p)), min_size=1, max_size=3))
    return Delete(tuple(keys))


@st.composite
def failed_upserts(draw, p: Params) -> FailedUpsert:
    return FailedUpsert(
        draw(upserts(p)), draw(st.sampled_from(FAIL_POINTS)), draw(st.sampled_from(RECOVERIES))
    )


def operations(p: Params) -> st.SearchStrategy:
    # Upserts first: Hypothesis shrinks towards the first branch.
    choices = [
        (10, upserts(p)),
        (2, deletes(p)),
        (2, upserts(p, window=True)),  # R18
        (1, failed_upserts(p)),
        (1, st.just(Clean())),
        (1, st.just(Archive())),
        (1, st.just(Savepoint())),
        (1, st.just(Restore())),
        (1, st.just(Rollback())),
    ]
    if p.mor:
        choices.insert(2, (2, st.just(Compact())))
    if p.table_version == 6 and not (p.merge == "commit" and p.mor):  # R14
        choices.append((1, st.just(Upgrade())))
    if p.index != BUCKET:  # R17 (the BUCKET index refuses clustering)
        choices.append((1, st.just(Cluster())))
    if p.index in KEY_LOOKUP:  # insert and bulk_insert need an index that looks keys up
        choices.insert(1, (3, inserts(p)))
    weighted = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.one_of(*weighted)


@st.composite
def scenarios(
    draw,
    max_ops: int = 10,
    min_ops: int = 1,
    indexes: tuple[str, ...] = INDEXES,
    metadata_tables: bool = False,
) -> Scenario:
    """(`metadata_tables`: the soak's; make test's differential test keeps them off.)"""
    p = draw(table_params(indexes, metadata_tables))
    first = draw(upserts(p))  # a table starts with a write
    rest = draw(st.lists(operations(p), min_size=min_ops - 1, max_size=max_ops - 1))
    return Scenario(p, (first, *rest))

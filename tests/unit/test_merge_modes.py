"""Merge modes and payloads, table-driven from what Apache Hudi 1.2 wrote and read in the probe
(docs/design/incremental-samples/runs/merge-keygen-cluster-1.2.0-v8.txt and
merge-1.2.0-v6-upgrade.txt): each table's hoodie.properties, the mode we read from it, the
keys we write for it, the snapshot after a stale and a newer update with a null column, and
the 6 -> 8 upgrade's mapping."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodie import properties as P
from hoodie.exceptions import InvalidConfigError, UnsupportedTableError
from hoodie.merge import (
    COMMIT_TIME_STRATEGY,
    CUSTOM_MERGER_STRATEGY,
    EVENT_TIME_STRATEGY,
    INSTANT,
    PAYLOAD_STRATEGY,
    SEQUENCE,
    MergeMode,
    Payload,
    combine,
    incoming_wins,
    merge_mode_for_write,
    merge_mode_of,
    merge_slice,
    precombine,
    upgraded_merge_keys,
)

DEFAULT, EVENT, OVERWRITE, NON_DEFAULTS, PARTIAL = (
    Payload.DEFAULT, Payload.EVENT_TIME, Payload.OVERWRITE_WITH_LATEST,
    Payload.OVERWRITE_NON_DEFAULTS, Payload.PARTIAL_UPDATE,
)  # fmt: skip
E, C, X = "EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"

# The probe: stored (ts 5, name a1|b1, amount 10|20); then key 1 gets a stale (ts 3, null, 11)
# and key 2 a newer (ts 7, null, 21). Apache Hudi 1.2's snapshot after, per payload (v6 and v8
# alike).
SNAPSHOT_AFTER = {
    DEFAULT: [(1, 5, "a1", 10), (2, 7, None, 21)],
    EVENT: [(1, 5, "a1", 10), (2, 7, None, 21)],
    OVERWRITE: [(1, 3, None, 11), (2, 7, None, 21)],
    NON_DEFAULTS: [(1, 3, "a1", 11), (2, 7, "b1", 21)],
    PARTIAL: [(1, 5, "a1", 10), (2, 7, "b1", 21)],
}
# (payload written, hoodie.properties' merge keys as Apache Hudi 1.2 wrote them on v8: mode,
# strategy id, payload class)
V8_ROWS = [
    (DEFAULT, E, EVENT_TIME_STRATEGY, DEFAULT),
    (OVERWRITE, C, COMMIT_TIME_STRATEGY, OVERWRITE),
    (NON_DEFAULTS, X, PAYLOAD_STRATEGY, NON_DEFAULTS),
    (PARTIAL, X, PAYLOAD_STRATEGY, PARTIAL),
    (EVENT, E, EVENT_TIME_STRATEGY, EVENT),
]
# (payload of the version 6 table, written by 1.2 with its strategy id, then the keys its
# upgrade to 8 wrote: mode, strategy, payload) -- merge-on-read with an ordering field
V6_UPGRADE_ROWS = [
    (DEFAULT, EVENT_TIME_STRATEGY, E, EVENT_TIME_STRATEGY, DEFAULT),
    (OVERWRITE, COMMIT_TIME_STRATEGY, E, EVENT_TIME_STRATEGY, DEFAULT),
    (NON_DEFAULTS, PAYLOAD_STRATEGY, X, PAYLOAD_STRATEGY, NON_DEFAULTS),
    (PARTIAL, PAYLOAD_STRATEGY, X, PAYLOAD_STRATEGY, PARTIAL),
    (EVENT, EVENT_TIME_STRATEGY, E, EVENT_TIME_STRATEGY, DEFAULT),
]


def _props(version: int, table_type: str = P.MERGE_ON_READ, ordering: str | None = "ts",
           **keys: str) -> P.TableProperties:  # fmt: skip
    stored = {P.TABLE_NAME: "merge_probe", P.TABLE_TYPE: table_type,
              P.TABLE_VERSION: str(version),
              P.TIMELINE_LAYOUT_VERSION: "2" if version >= 8 else "1",
              P.RECORD_KEY_FIELDS: "id", P.PARTITION_FIELDS: "dt"}  # fmt: skip
    if ordering:
        stored[P.ORDERING_FIELDS if version >= 8 else P.PRECOMBINE_FIELD] = ordering
    stored.update(keys)
    return P.TableProperties.from_dict(stored)


def _v8(mode: str, strategy: str, payload: Payload) -> P.TableProperties:
    return _props(8, **{P.RECORD_MERGE_MODE: mode, P.RECORD_MERGE_STRATEGY_ID: strategy,
                        P.PAYLOAD_CLASS: payload.value})  # fmt: skip


STORED = pa.table({"id": [1, 2], "ts": [5, 5], "name": ["a1", "b1"], "amount": [10, 20]})
INCOMING = pa.table({"id": [1, 2], "ts": [3, 7], "name": pa.array([None, None], pa.string()),
                     "amount": [11, 21]})  # fmt: skip


def _rows(table: pa.Table) -> list[tuple]:
    table = table.sort_by("id")
    return list(zip(*(table.column(c).to_pylist() for c in ("id", "ts", "name", "amount"))))


@pytest.mark.parametrize(("written", "mode", "strategy", "payload"), V8_ROWS,
                         ids=[r[0].short_name for r in V8_ROWS])  # fmt: skip
def test_version_8_keys_read_and_written_as_apache_hudi_writes_them(
    written, mode, strategy, payload
):
    read = merge_mode_of(_v8(mode, strategy, payload))
    assert (read.mode.value, read.payload in (written, DEFAULT)) == (mode, True)
    # a table we create with the payload stores what Apache Hudi 1.2 stored
    ours = merge_mode_for_write(written.value, None, "ts").table_keys(8)
    assert ours == {P.RECORD_MERGE_MODE: mode, P.RECORD_MERGE_STRATEGY_ID: strategy,
                    P.PAYLOAD_CLASS: payload.value}  # fmt: skip
    # ... and hoodie.properties keeps them when it is written again
    stored = _props(8, **{P.RECORD_MERGE_MODE: mode, **ours}).to_dict()
    assert (stored[P.RECORD_MERGE_MODE], stored[P.RECORD_MERGE_STRATEGY_ID],
            stored[P.PAYLOAD_CLASS]) == (mode, strategy, payload.value)  # fmt: skip


@pytest.mark.parametrize(("payload", "strategy", "mode", "new_strategy", "new_payload"),
                         V6_UPGRADE_ROWS,
                         ids=[r[0].short_name for r in V6_UPGRADE_ROWS])  # fmt: skip
def test_version_6_reads_by_payload_and_upgrades_as_apache_hudi_1_2(
    payload, strategy, mode, new_strategy, new_payload
):
    v6 = _props(6, **{P.PAYLOAD_CLASS: payload.value, P.RECORD_MERGE_STRATEGY_ID: strategy})
    assert merge_mode_of(v6).payload is payload
    assert upgraded_merge_keys(v6) == {
        P.RECORD_MERGE_MODE: mode, P.RECORD_MERGE_STRATEGY_ID: new_strategy,
        P.RECORD_MERGER_STRATEGY: new_strategy, P.PAYLOAD_CLASS: new_payload.value,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("table_type", "ordering", "payload", "mode", "new_payload"),
    [
        # SevenToEightUpgradeHandler.upgradeMergeMode without (merge-on-read and ordering)
        (P.COPY_ON_WRITE, "ts", DEFAULT, E, DEFAULT),
        (P.COPY_ON_WRITE, "ts", EVENT, C, OVERWRITE),
        (P.COPY_ON_WRITE, "ts", OVERWRITE, C, OVERWRITE),
        (P.COPY_ON_WRITE, "ts", None, C, OVERWRITE),
        (P.MERGE_ON_READ, None, DEFAULT, E, DEFAULT),
        (P.MERGE_ON_READ, None, None, C, OVERWRITE),
        (P.COPY_ON_WRITE, "ts", PARTIAL, X, PARTIAL),
        (P.MERGE_ON_READ, "ts", None, E, DEFAULT),
    ],
)
def test_the_upgrade_of_copy_on_write_and_unordered_tables(
    table_type, ordering, payload, mode, new_payload
):
    keys = {P.PAYLOAD_CLASS: payload.value} if payload else {}
    upgraded = upgraded_merge_keys(_props(6, table_type, ordering, **keys))
    assert (upgraded[P.RECORD_MERGE_MODE], upgraded[P.PAYLOAD_CLASS]) == (mode, new_payload.value)


def test_a_version_6_table_without_a_payload_class_merges_by_commit_time():
    """Apache Hudi 0.15's default payload, OverwriteWithLatestAvroPayload."""
    assert merge_mode_of(_props(6)).name == C
    assert merge_mode_of(_props(6, **{P.PAYLOAD_CLASS: DEFAULT.value})).by_event_time


@pytest.mark.parametrize("payload", list(SNAPSHOT_AFTER), ids=lambda p: p.short_name)
def test_against_the_stored_row_as_apache_hudi_merged_it(payload):
    """Copy-on-write's merge (an incoming row against the stored one) and merge-on-read's
    (the log folded onto the base file) give Apache Hudi's snapshot."""
    mode = MergeMode.of_payload(payload, "ts")
    merged = combine(INCOMING, STORED, mode)
    if mode.by_event_time:
        wins = incoming_wins(
            merged.column("ts").combine_chunks(), STORED.column("ts").combine_chunks()
        )
        merged = pa.concat_tables([merged.filter(wins), STORED.filter(pc.invert(wins))])
    assert _rows(merged) == SNAPSHOT_AFTER[payload]
    versions = pa.concat_tables([STORED, INCOMING.cast(STORED.schema)])
    versions = versions.append_column(SEQUENCE, pa.array(range(4), pa.int64()))
    versions = versions.append_column(INSTANT, pa.array(["t1", "t1", "t2", "t2"]))
    nothing = pa.table({"id": pa.array([], pa.int64()), SEQUENCE: pa.array([], pa.int64())})
    assert _rows(merge_slice(versions, "id", nothing, mode)) == SNAPSHOT_AFTER[payload]


def test_a_column_added_since_the_stored_row_is_filled_from_a_stale_update():
    """PartialUpdateAvroPayload: the stored row wins on its ordering value and its nulls come
    from the incoming one, also in a column the table gained after the stored row was written
    (found by the differential soak: the column stayed null)."""
    stored = pa.table({"id": [1], "ts": pa.array([2], pa.int64()), "v": ["c"]})
    incoming = pa.table({"id": [1], "ts": pa.array([None], pa.int64()),
                         "v": pa.array([None], pa.string()),
                         "e1": pa.array([1], pa.int64())})  # fmt: skip
    merged = combine(incoming, stored, MergeMode.of_payload(PARTIAL, "ts"))
    assert merged.to_pylist() == [{"id": 1, "ts": 2, "v": "c", "e1": 1}]


def test_a_slice_folds_its_versions_in_arrival_order():
    """Three versions of a key: OverwriteNonDefaults keeps each column's last non-null value;
    PartialUpdate lets a version with a smaller ordering value fill only the nulls; a delete
    cuts what arrived before it."""
    rows = pa.table({"id": [1, 1, 1, 2, 2], "ts": [5, 3, 9, 1, 2],
                     "name": ["a", "b", None, "x", None], "amount": [None, 2, None, 7, None],
                     SEQUENCE: pa.array(range(5), pa.int64()),
                     INSTANT: ["t1", "t2", "t3", "t1", "t3"]})  # fmt: skip
    deletes = pa.table({"id": [2], SEQUENCE: pa.array([3], pa.int64()), INSTANT: ["t2"]})
    by_column = merge_slice(rows, "id", deletes, MergeMode.of_payload(NON_DEFAULTS, "ts"))
    assert _rows(by_column) == [(1, 9, "b", 2), (2, 2, None, None)]
    partial = merge_slice(rows, "id", deletes, MergeMode.of_payload(PARTIAL, "ts"))
    # 1: (5,a,-) then (3,b,2) loses but fills amount, then (9,-,-) wins, filled: (9,a,2)
    assert _rows(partial) == [(1, 9, "a", 2), (2, 2, None, None)]
    assert partial.column(INSTANT).to_pylist() == ["t3", "t3"]  # the latest version's meta


def test_a_batch_precombines_by_ordering_value_and_partial_update_fills_nulls():
    batch = pa.table({"id": [1, 1, 1], "ts": [5, 9, 4], "name": ["a", None, "c"],
                      "amount": [None, None, 3]})  # fmt: skip
    for payload in (DEFAULT, OVERWRITE, NON_DEFAULTS):
        assert _rows(precombine(batch, "id", MergeMode.of_payload(payload, "ts"))) == [
            (1, 9, None, None)
        ]
    # the rows by ordering value, each filling the nulls of the ones above it
    assert _rows(precombine(batch, "id", MergeMode.of_payload(PARTIAL, "ts"))) == [(1, 9, "a", 3)]


@pytest.mark.parametrize(
    ("keys", "named"),
    [
        ({P.PAYLOAD_CLASS: "org.apache.hudi.common.model.AWSDmsAvroPayload"}, "AWSDmsAvroPayload"),
        ({P.RECORD_MERGE_MODE: X, P.RECORD_MERGE_STRATEGY_ID: CUSTOM_MERGER_STRATEGY},
         CUSTOM_MERGER_STRATEGY),
        ({P.RECORD_MERGE_MODE: X, P.PAYLOAD_CLASS: DEFAULT.value}, "CUSTOM"),
        ({P.RECORD_MERGE_STRATEGY_ID: "b1c2..."}, "b1c2"),
    ],
)  # fmt: skip
def test_other_payloads_and_mergers_are_refused_naming_them(keys, named):
    with pytest.raises(UnsupportedTableError, match=named):
        merge_mode_of(_props(8, **keys))


def test_version_9_partial_update_mode_is_refused():
    table = _props(9, **{"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"})
    with pytest.raises(UnsupportedTableError, match="partial.update.mode"):
        merge_mode_of(table)


@pytest.mark.parametrize(
    ("payload", "mode", "ordering", "expected"),
    [
        (None, None, "ts", E),
        (None, None, None, C),
        (None, C, "ts", C),
        (None, E, "ts", E),
        (PARTIAL.value, None, "ts", "CUSTOM(PartialUpdateAvroPayload)"),
        (NON_DEFAULTS.value, X, "ts", "CUSTOM(OverwriteNonDefaultsWithLatestAvroPayload)"),
        (OVERWRITE.value, C, "ts", C),
        (EVENT.value, None, "ts", E),
    ],
)
def test_what_a_write_asks_for(payload, mode, ordering, expected):
    assert merge_mode_for_write(payload, mode, ordering).name == expected


@pytest.mark.parametrize(
    ("payload", "mode", "message"),
    [
        (None, X, "needs a payload class"),
        (PARTIAL.value, E, "disagree"),
        ("com.example.MyPayload", None, "com.example.MyPayload"),
    ],
)
def test_what_a_write_cannot_ask_for(payload, mode, message):
    with pytest.raises(InvalidConfigError, match=message):
        merge_mode_for_write(payload, mode, "ts")


def test_version_6_tables_we_create_name_their_payload():
    """Decision D7: Apache Hudi 0.x reads a version 6 table without a payload class as
    OverwriteWithLatestAvroPayload."""
    assert merge_mode_for_write(None, None, "ts").table_keys(6) == {P.PAYLOAD_CLASS: DEFAULT.value}
    assert merge_mode_for_write(None, None, None).table_keys(6) == {
        P.PAYLOAD_CLASS: OVERWRITE.value
    }
    assert merge_mode_for_write(PARTIAL.value, None, "ts").table_keys(6) == {
        P.PAYLOAD_CLASS: PARTIAL.value
    }


def test_a_table_keeps_its_merge_mode():
    """A write naming no merge mode takes the table's; one naming the same mode in other
    words is fine; another is an identity change (refused, as a precombine field's is)."""
    from hoodie import WriteConfig
    from hoodie.meta_client import identity_changes, merge_mode_for, table_properties_for

    def config(**options: str) -> WriteConfig:
        options = {"hoodie.write.table.version": "8", **options}
        return WriteConfig.build("t", record_key="id", precombine_field="ts", options=options)

    partial = {"hoodie.datasource.write.payload.class": PARTIAL.value}
    stored = table_properties_for(config(**partial))
    assert stored.to_dict()[P.PAYLOAD_CLASS] == PARTIAL.value
    assert merge_mode_for(config(), stored).payload is PARTIAL
    assert not identity_changes(stored, table_properties_for(config()), config())
    assert not identity_changes(stored, stored, config(**{"hoodie.record.merge.mode": "custom",
                                                          **partial}))  # fmt: skip
    changes = identity_changes(stored, stored, config(**{"hoodie.record.merge.mode": E}))
    assert [(c.setting, c.stored, c.wanted) for c in changes] == [
        ("merge mode", "CUSTOM(PartialUpdateAvroPayload)", E)
    ]


def test_column_wise_payloads_are_refused_under_a_global_index(tmp_path):
    from hoodie import HoodieTable, WriteConfig

    config = WriteConfig.build(
        "t", record_key="id", precombine_field="ts",
        options={"hoodie.index.type": "GLOBAL_SIMPLE",
                 "hoodie.datasource.write.payload.class": NON_DEFAULTS.value},
    )  # fmt: skip
    table = HoodieTable.for_write(str(tmp_path / "t"), config)
    with pytest.raises(InvalidConfigError, match="OverwriteNonDefaults.*global index"):
        table.upsert(None, config)  # refused before the batch is looked at


def test_our_upgrade_writes_apache_hudis_merge_keys(tmp_path):
    """`upgrade_to_version_8` stores `upgraded_merge_keys`: a copy-on-write table with
    EventTimeAvroPayload becomes COMMIT_TIME_ORDERING, as Apache Hudi 1.2's upgrade makes it."""
    from hoodie import HoodieTable, WriteConfig
    from hoodie.meta_client import HoodieTableMetaClient
    from hoodie.table_services.upgrade import upgrade_to_version_8

    config = WriteConfig.build(
        "t", record_key="id", precombine_field="ts",
        options={"hoodie.datasource.write.payload.class": EVENT.value},
    )  # fmt: skip
    path = str(tmp_path / "t")
    table = HoodieTable.for_write(path, config)
    assert merge_mode_of(table.meta_client.properties).payload is EVENT
    upgrade_to_version_8(table.meta_client)
    stored = HoodieTableMetaClient.open(path).properties
    assert merge_mode_of(stored).name == C
    assert stored.to_dict()[P.PAYLOAD_CLASS] == OVERWRITE.value
    assert stored.to_dict()[P.RECORD_MERGER_STRATEGY] == COMMIT_TIME_STRATEGY


@pytest.mark.parametrize("payload", [NON_DEFAULTS, PARTIAL], ids=lambda p: p.short_name)
def test_the_vectorized_fold_is_the_fold_row_by_row(payload):
    """Random slices (keys with 1 to 9 versions, nulls, ties): `merge_slice` equals a plain
    Python fold of the payload's rule in arrival order."""
    import os
    import random

    rng = random.Random(7)
    mode = MergeMode.of_payload(payload, "ts")

    def step(old: dict, new: dict) -> dict:
        first, second = new, old
        if payload is PARTIAL and new["ts"] is None and old["ts"] is not None:
            first, second = old, new
        elif payload is PARTIAL and None not in (new["ts"], old["ts"]) and old["ts"] > new["ts"]:
            first, second = old, new
        out = {c: first[c] if first[c] is not None else second[c] for c in ("ts", "a", "b")}
        return {**out, "id": new["id"], SEQUENCE: new[SEQUENCE]}

    for _ in range(int(os.environ.get("FOLD_CASES", "20"))):
        rows = [{"id": f"k{rng.randrange(6)}", "ts": rng.choice([None, 1, 2, 3]),
                 "a": rng.choice([None, "x", "y"]), "b": rng.choice([None, 1, 2])}
                for _ in range(rng.randrange(1, 30))]  # fmt: skip
        for i, row in enumerate(rows):
            row[SEQUENCE] = i
        expected: dict = {}
        for row in rows:
            expected[row["id"]] = step(expected[row["id"]], row) if row["id"] in expected else row
        table = pa.Table.from_pylist(rows, schema=pa.schema([
            ("id", pa.string()), ("ts", pa.int64()), ("a", pa.string()), ("b", pa.int64()),
            (SEQUENCE, pa.int64())]))  # fmt: skip
        nothing = pa.table({"id": pa.array([], pa.string()), SEQUENCE: pa.array([], pa.int64())})
        got = merge_slice(table, "id", nothing, mode).to_pylist()
        assert got == [expected[k] for k in sorted(expected)]


def test_partial_update_precombine_is_the_fold_by_ordering_value():
    """Random batches: PartialUpdateAvroPayload's precombine equals folding a key's rows from
    the smallest (ordering value, arrival) up, each row's non-null columns over the others."""
    import random

    rng = random.Random(11)
    mode = MergeMode.of_payload(PARTIAL, "ts")
    for _ in range(200):
        rows = [
            {"id": f"k{rng.randrange(5)}", "ts": rng.choice([None, 1, 2, 3]),
             "a": rng.choice([None, "x", "y"])}
            for _ in range(rng.randrange(1, 25))
        ]  # fmt: skip
        expected: dict = {}
        ranked = sorted(
            enumerate(rows), key=lambda p: (p[1]["ts"] is not None, p[1]["ts"] or 0, p[0])
        )
        for _, row in ranked:
            held = expected.get(row["id"], {})
            expected[row["id"]] = {c: row[c] if row[c] is not None else held.get(c) for c in row}
        table = pa.Table.from_pylist(rows, schema=pa.schema(
            [("id", pa.string()), ("ts", pa.int64()), ("a", pa.string())]))  # fmt: skip
        got = precombine(table, "id", mode).to_pylist()
        assert got == [expected[k] for k in sorted(expected)]

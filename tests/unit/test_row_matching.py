"""A read's filter in its tasks (`hoodie.read.row_matching`) keeps every row Spark would keep:
random predicates over random rows (nulls, NaN, infinities, strings outside ASCII) against
Spark's semantics written out here, and the record keys a filter names pick the base file's
row groups."""

from __future__ import annotations

import base64
import datetime
import decimal
import math
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.bloom_filter import BLOOM_FILTER_FOOTER, BloomFilterSpec, bloom_filter_footer
from hoodie.merge import MergeMode
from hoodie.read.planner import FileSplit
from hoodie.read.predicates import (
    AllOf,
    Among,
    AnyOf,
    Compare,
    KeyIn,
    NullCheck,
    Prefix,
)
from hoodie.read.row_matching import arrow_filter, matching_rows, required_keys
from hoodie.read.slice_reader import SliceReadSpec, _base_rows, read_slice, row_groups_with_keys
from hoodie.schema import RECORD_KEY
from hoodie.storage import load_file_io

TEXTS = [None, "", "a", "ab", "b", "é", "éa", "\uffff", "\U0001f600", "A"]
FLOATS = [None, -1.5, 0.0, -0.0, 2.5, 7.0, math.nan, math.inf, -math.inf]
INTS = [None, -3, 0, 1, 2, 5, 120]
SCHEMA = pa.schema(
    [(RECORD_KEY, pa.string()), ("i", pa.int32()), ("x", pa.float64()), ("s", pa.string())]
)
VALUES = {"i": INTS[1:], "x": FLOATS[1:], "s": TEXTS[1:]}


def _spark_order(value):
    """Spark's order of doubles: NaN above everything, and equal to itself."""
    return (1, 0.0) if isinstance(value, float) and math.isnan(value) else (0, value)


def spark_holds(predicate, row: dict):
    """Spark's three-valued result of `predicate` for `row` (None: unknown, not kept)."""
    if isinstance(predicate, AllOf):
        results = [spark_holds(p, row) for p in predicate.parts]
        if any(r is False for r in results):
            return False
        return None if any(r is None for r in results) else True
    if isinstance(predicate, AnyOf):
        results = [spark_holds(p, row) for p in predicate.parts]
        if any(r is True for r in results):
            return True
        return None if any(r is None for r in results) else False
    if isinstance(predicate, KeyIn):
        return row[RECORD_KEY] in predicate.keys
    x = row[predicate.column]
    if isinstance(predicate, NullCheck):
        return (x is None) == predicate.is_null
    if x is None:
        return None
    if isinstance(predicate, Prefix):
        return x.startswith(predicate.prefix) != predicate.negated
    if isinstance(predicate, Among):
        if any(v is not None and _spark_order(x) == _spark_order(v) for v in predicate.values):
            found = True
        elif any(v is None for v in predicate.values):
            return None
        else:
            found = False
        return found != predicate.negated
    a, b = _spark_order(x), _spark_order(predicate.value)
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[
        predicate.op
    ]


def random_leaf(rng: random.Random):
    kind = rng.randrange(6)
    column = rng.choice(["i", "x", "s"])
    if kind == 0:
        return NullCheck(column, rng.random() < 0.5)
    if kind == 1:
        return Prefix("s", rng.choice(["", "a", "é", "\U0001f600"]), rng.random() < 0.5)
    if kind == 2:
        values = tuple(rng.choice([*VALUES[column], None]) for _ in range(rng.randint(1, 3)))
        return Among(column, values, rng.random() < 0.5)
    if kind == 3:
        return KeyIn(tuple(rng.sample([f"k{i}" for i in range(40)], rng.randint(1, 4))))
    return Compare(column, rng.choice(["=", "!=", "<", "<=", ">", ">="]),
                   rng.choice(VALUES[column]))  # fmt: skip


def random_predicate(rng: random.Random, depth: int = 0):
    if depth >= 2 or rng.random() < 0.4:
        return random_leaf(rng)
    parts = tuple(random_predicate(rng, depth + 1) for _ in range(rng.randint(1, 3)))
    return (AllOf if rng.random() < 0.5 else AnyOf)(parts)


def random_rows(rng: random.Random) -> pa.Table:
    n = 40
    return pa.table(
        {
            RECORD_KEY: [f"k{i}" for i in range(n)],
            "i": [rng.choice(INTS) for _ in range(n)],
            "x": [rng.choice(FLOATS) for _ in range(n)],
            "s": [rng.choice(TEXTS) for _ in range(n)],
        },
        schema=SCHEMA,
    )


def test_the_filter_keeps_every_row_spark_keeps_and_drops_rows():
    rng = random.Random(7)
    dropped = 0
    for _ in range(600):
        rows = random_rows(rng)
        predicate = random_predicate(rng)
        kept = matching_rows(rows, predicate)
        kept_keys = set(kept.column(RECORD_KEY).to_pylist())
        for row in rows.to_pylist():
            if spark_holds(predicate, row) is True:
                assert row[RECORD_KEY] in kept_keys, (predicate, row)
        dropped += rows.num_rows - kept.num_rows
    assert dropped > 600 * 40 // 4  # it filters, not only keeps


def test_what_arrow_would_judge_unlike_spark_keeps_every_row():
    date_schema = pa.schema([("d", pa.date32()), ("t", pa.timestamp("us", "UTC")),
                             ("m", pa.decimal128(5, 2)), ("i", pa.int8())])  # fmt: skip
    unknown = [
        Compare("i", "=", "5"),  # a string against an int column: Spark casts
        Compare("i", "=", 3.5),
        Compare("i", "=", 1000),  # out of int8's range
        Compare("i", "=", True),
        Compare("t", ">", datetime.datetime(2026, 1, 1)),  # time zones
        Compare("m", "=", decimal.Decimal("1.005")),  # not representable: rounded
        Compare("x", "=", math.nan),
        Compare("nope", "=", 1),
        Among("i", (1, "2")),
        Among("i", (1, None), negated=True),
        AnyOf((Compare("i", "=", 1), Compare("i", "=", "x"))),  # one branch unknown
        KeyIn(("k1",)),  # no record key column in these rows
    ]
    for predicate in unknown:
        assert arrow_filter(predicate, date_schema) is None, predicate
    known = [
        Compare("d", ">=", datetime.date(2026, 1, 1)),
        Compare("m", "=", decimal.Decimal("1.25")),
        AllOf((Compare("i", "=", "x"), Compare("i", ">", 2))),  # the known part of an AND
    ]
    for predicate in known:
        assert arrow_filter(predicate, date_schema) is not None, predicate


def test_the_record_keys_a_filter_names():
    a, b = KeyIn(("1", "2")), KeyIn(("2", "3"))
    other = Compare("x", ">", 1.0)
    assert required_keys(a) == {"1", "2"}
    assert required_keys(AllOf((a, other))) == {"1", "2"}
    assert required_keys(AllOf((a, b))) == {"2"}
    assert required_keys(AnyOf((a, b))) == {"1", "2", "3"}
    assert required_keys(AnyOf((a, other))) is None  # the other branch may hold any key
    assert required_keys(other) is None and required_keys(AllOf(())) is None


def _keyed_file(tmp_path, rows: int, group: int) -> str:
    keys = [f"k{i:05d}" for i in range(rows)]  # in key order, as base files are written
    table = pa.table({RECORD_KEY: keys, "v": list(range(rows))})
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=group)
    return str(tmp_path / "f.parquet")


def test_the_keys_pick_the_row_groups_whose_statistics_may_hold_them(tmp_path):
    metadata = pq.ParquetFile(_keyed_file(tmp_path, 1000, 100)).metadata
    assert row_groups_with_keys(metadata, ["k00150"]) == [1]
    assert row_groups_with_keys(metadata, ["k00000", "k00999"]) == [0, 9]
    assert row_groups_with_keys(metadata, ["a", "k01000", "z"]) == []
    assert row_groups_with_keys(metadata, sorted(f"k{i:05d}" for i in range(0, 1000, 50))) == list(
        range(10)
    )
    # a nested column before the key: statistics are per leaf column
    nested = pa.table({"s": [{"a": 1, "b": "zzz"}], RECORD_KEY: ["k5"]})
    pq.write_table(nested, tmp_path / "nested.parquet")
    nested_metadata = pq.ParquetFile(tmp_path / "nested.parquet").metadata
    assert row_groups_with_keys(nested_metadata, ["k5"]) == [0]
    assert row_groups_with_keys(nested_metadata, ["zzz"]) == []
    pq.write_table(pa.table({"v": [1]}), tmp_path / "nokey.parquet")
    assert row_groups_with_keys(pq.ParquetFile(tmp_path / "nokey.parquet").metadata, ["k"]) is None


@pytest.mark.parametrize(
    "predicate",
    [KeyIn(("k00150", "k00700")), AllOf((Compare("v", ">", 990),)), KeyIn(("none",))],
)
def test_a_base_file_read_with_a_filter_gives_the_rows_that_may_match(tmp_path, predicate):
    _keyed_file(tmp_path, 1000, 100)
    storage = load_file_io(str(tmp_path))
    schema = pa.schema([(RECORD_KEY, pa.string()), ("v", pa.int64())])
    spec = SliceReadSpec(storage=storage, schema=schema, record_key_fields=(RECORD_KEY,),
                         merge_mode=MergeMode.commit_time(), valid_instants=frozenset(),
                         row_filter=predicate)  # fmt: skip
    batches = list(read_slice(spec, FileSplit("", "f", "f.parquet")))
    got = pa.Table.from_batches(batches, schema).to_pylist()
    everything = pq.read_table(tmp_path / "f.parquet").to_pylist()
    assert got == [row for row in everything if spark_holds(predicate, row)]


def _bloomed_file(tmp_path, footer_filter: str) -> str:
    """A base file of keys k00000..k00999 (one row group) with, in its footer, a bloom filter
    of them ("own"), of them and k00150x ("maybe": as a filter past its entries says maybe
    to keys it lacks), or bytes that are not a filter ("unreadable")."""
    keys = [f"k{i:05d}" for i in range(1000)]
    extra = ["k00150x"] if footer_filter == "maybe" else []
    footer = bloom_filter_footer(pa.array(keys + extra), BloomFilterSpec())
    if footer_filter == "unreadable":
        footer[BLOOM_FILTER_FOOTER] = base64.b64encode(b"not a filter")
    table = pa.table({RECORD_KEY: keys, "v": list(range(1000))}).replace_schema_metadata(footer)
    pq.write_table(table, tmp_path / "f.parquet")
    return "f.parquet"


@pytest.mark.parametrize("footer_filter", ["own", "maybe", "unreadable"])
def test_a_key_named_read_of_a_slice_decodes_base_file_row_groups_that_hold_its_keys(
    tmp_path, monkeypatch, footer_filter, caplog
):
    """A point read merging a slice's logs (`_base_rows`): where the key statistics admit a
    key (`k00150x`), the bloom filter rules the file out; where the filter may hold it (or
    cannot be read: a warning), the key column alone is decoded and rules it out. Every
    column is decoded only for a row group that holds a key."""
    relative = _bloomed_file(tmp_path, footer_filter)
    storage = load_file_io(str(tmp_path))
    spec = SliceReadSpec(storage=storage, schema=pa.schema([(RECORD_KEY, pa.string())]),
                         record_key_fields=(RECORD_KEY,), merge_mode=MergeMode.commit_time(),
                         valid_instants=frozenset())  # fmt: skip
    decoded = []  # (row groups, columns: None for all)
    real = pq.ParquetFile.read_row_groups

    def read_row_groups(self, groups, columns=None, **kwargs):
        decoded.append((groups, columns))
        return real(self, groups, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", read_row_groups)
    held = _base_rows(spec, relative, frozenset({"k00150"}))
    assert held.column(RECORD_KEY).to_pylist()[150] == "k00150"
    assert decoded == [([0], [RECORD_KEY]), ([0], None)]
    decoded.clear()
    absent = _base_rows(spec, relative, frozenset({"k00150x"}))
    assert absent.num_rows == 0
    assert decoded == ([] if footer_filter == "own" else [([0], [RECORD_KEY])])
    assert ("ignores the bloom filter of f.parquet" in caplog.text) == (
        footer_filter == "unreadable"
    )

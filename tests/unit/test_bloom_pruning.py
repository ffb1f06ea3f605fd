"""The BLOOM index's pruning, without Spark: which files are candidates for which keys (key
ranges, log-only slices), what bloom filters rule out, and the confirmation that drops their
false positives."""

from __future__ import annotations

import base64

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie import WriteConfig
from hoodie.bloom_filter import (
    BLOOM_FILTER_FOOTER,
    BloomFilterSpec,
    StoredFilter,
    bloom_filter_footer,
)
from hoodie.exceptions import CorruptDataFileError, InvalidConfigError, MalformedMetadataError
from hoodie.fs_view import CommittedInstants
from hoodie.index import index_for
from hoodie.index.bloom import (
    BloomIndex,
    bloom_candidates,
    candidate_files,
    confirmed_keys,
    footer_speaks_for,
    in_key_range,
)
from hoodie.index.keys import KeySource
from hoodie.index.routing import KeyRange
from hoodie.logformat import add_meta_fields, parquet_data_block
from hoodie.schema import MAX_KEY_FOOTER, META_COLUMNS, MIN_KEY_FOOTER, RECORD_KEY, to_avro_schema
from hoodie.storage import TracingFileIO, load_file_io

STORED = [f"key-{i:04d}" for i in range(0, 400, 2)]  # even numbers only
ABSENT = [f"key-{i:04d}" for i in range(1, 400, 2)]
NO_INSTANTS = CommittedInstants(frozenset())
INSTANT = "20240101000000000"
SMALL = BloomFilterSpec(num_entries=500)  # at Apache Hudi's fpp, 1e-9


def _base_file(tmp_path, relative: str, keys: list[str], footer: dict[bytes, bytes]) -> None:
    table = pa.table({RECORD_KEY: pa.array(keys, pa.string()), "v": list(range(len(keys)))})
    (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(footer), str(tmp_path / relative))


def _footer(keys: list[str], spec: BloomFilterSpec = SMALL):
    return bloom_filter_footer(pa.array(keys, pa.string()), spec)


def test_only_a_footer_that_covers_every_key_of_its_slice_bounds_it():
    sources = [
        KeySource("p", "ranged", "p/ranged.parquet"),
        KeySource("p", "unranged", "p/unranged.parquet"),  # no (ASCII) range in its footer
        KeySource("p", "logged", "p/logged.parquet", ("p/.logged.log.1",)),
        KeySource("q", "log-only", None, ("q/.log-only.log.1",)),
    ]
    assert [footer_speaks_for(s) for s in sources] == [True, True, False, False]
    ranges = {
        "p/ranged.parquet": KeyRange("b", "d"),
        "p/logged.parquet": KeyRange("b", "c"),  # its logs may hold keys beyond the range
    }
    assert candidate_files(sources, ranges) == [
        (0, "p", "b", "d"),
        (1, "p", None, None),
        (2, "p", None, None),
        (3, "q", None, None),
    ]


def test_a_bloom_filter_rules_out_the_keys_a_file_lacks(tmp_path):
    storage = load_file_io(str(tmp_path))
    footer = _footer(STORED)
    kept = bloom_candidates(storage, "p/f.parquet", footer, pa.array(STORED + ABSENT))
    # Every stored key stays (no false negatives); at fpp 1e-9 no absent one does.
    assert kept.to_pylist() == STORED


def test_a_footer_without_a_filter_prunes_nothing_and_a_broken_one_is_damage(tmp_path):
    storage = load_file_io(str(tmp_path))
    keys = pa.array(ABSENT)
    assert bloom_candidates(storage, "p/f.parquet", {}, keys).to_pylist() == ABSENT
    cut = {BLOOM_FILTER_FOOTER: base64.b64encode(b"\xff\xff\xff\xff\x00")}
    with pytest.raises(MalformedMetadataError, match=r"p/f\.parquet .*cut short") as error:
        bloom_candidates(storage, "p/f.parquet", cut, keys)
    assert error.value.path.endswith("p/f.parquet")


def test_false_positives_are_confirmed_away_against_the_key_column(tmp_path):
    """A filter of two bits (every key looks present): the key column decides."""
    loose = BloomFilterSpec(num_entries=1, fpp=0.5, filter_type="SIMPLE")
    footer = _footer(STORED, loose)
    assert sum(StoredFilter.of(footer).might_contain(ABSENT)) > len(ABSENT) // 2
    _base_file(tmp_path, "p/f.parquet", STORED, footer)
    storage = load_file_io(str(tmp_path))
    source = KeySource("p", "f", "p/f.parquet")
    asked = pa.array(["key-0002", "key-0003", "key-0398", "key-0399", "zzz"])
    found = confirmed_keys(storage, source, asked, NO_INSTANTS)
    assert found.to_pylist() == ["key-0002", "key-0398"]


def test_the_key_column_is_read_only_when_the_filter_leaves_a_key(tmp_path):
    _base_file(tmp_path, "p/f.parquet", STORED, _footer(STORED))
    trace = tmp_path / "trace"
    storage = TracingFileIO(load_file_io(str(tmp_path)), str(trace))
    source = KeySource("p", "f", "p/f.parquet")
    assert confirmed_keys(storage, source, pa.array(ABSENT[:50]), NO_INSTANTS).to_pylist() == []
    calls = [line.split("\t")[0] for line in trace.read_text().splitlines()]
    assert calls == ["parquet_file"]  # the footer, and no key column
    found = confirmed_keys(storage, source, pa.array(["key-0010", "key-0011"]), NO_INSTANTS)
    assert found.to_pylist() == ["key-0010"]
    calls = [line.split("\t")[0] for line in trace.read_text().splitlines()]
    assert calls[1:] == ["parquet_file", f"read_parquet,columns=['{RECORD_KEY}']"]


def test_a_damaged_candidate_base_file_stops_the_lookup(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "f.parquet").write_bytes(b"PAR1 not a parquet file")
    storage = load_file_io(str(tmp_path))
    with pytest.raises(CorruptDataFileError, match=r"f\.parquet \(a parquet base file"):
        confirmed_keys(storage, KeySource("p", "f", "p/f.parquet"), pa.array(["k"]), NO_INSTANTS)


def _log_file(tmp_path, relative: str, keys: list[str]) -> None:
    """A log file of one parquet data block of `keys`, written by INSTANT."""
    schema = add_meta_fields(to_avro_schema(pa.schema([("v", pa.int64())]), "t"))
    columns = {c: pa.array(["x"] * len(keys), pa.string()) for c in META_COLUMNS}
    columns[RECORD_KEY] = pa.array(keys, pa.string())
    table = pa.table({**columns, "v": pa.array(range(len(keys)), pa.int64())})
    (tmp_path / relative).write_bytes(parquet_data_block(table, INSTANT, schema))


def test_a_slice_whose_keys_may_live_in_logs_is_read_whole(tmp_path):
    """A base file and a log file where keys may live in logs alone: the footer does not speak
    for the slice (its filter, which holds only "other", is not consulted), and the keys of
    the base file and of the log's blocks of completed instants are read as SIMPLE reads
    them. A block of an instant that did not complete makes no key exist."""
    _base_file(tmp_path, "p/f.parquet", STORED, _footer(["other"]))
    _log_file(tmp_path, "p/.f_1.log.1_0-1-0", ["logged-1", "logged-2"])
    storage = load_file_io(str(tmp_path))
    source = KeySource("p", "f", "p/f.parquet", ("p/.f_1.log.1_0-1-0",))
    asked = pa.array(["key-0004", "key-0005", "logged-2", "logged-3"])
    found = confirmed_keys(storage, source, asked, CommittedInstants(frozenset({INSTANT})))
    assert sorted(found.to_pylist()) == ["key-0004", "logged-2"]
    assert confirmed_keys(storage, source, asked, NO_INSTANTS).to_pylist() == ["key-0004"]
    log_only = KeySource("p", "f", None, ("p/.f_1.log.1_0-1-0",))
    found = confirmed_keys(storage, log_only, asked, CommittedInstants(frozenset({INSTANT})))
    assert found.to_pylist() == ["logged-2"]
    # The same base file alone: its footer speaks for it, and its filter rules the keys out.
    alone = KeySource("p", "f", "p/f.parquet")
    assert confirmed_keys(storage, alone, asked, NO_INSTANTS).to_pylist() == []


def test_the_bloom_index_is_picked_and_its_options_honoured_or_refused():
    """hoodie.index.type=BLOOM (any case) picks BloomIndex, which tags in a job of its own and
    can check inserts; its two options parse; Apache Hudi's bloom index options we do not
    honour are unknown options, refused by name."""
    cfg = WriteConfig.build(
        "t",
        record_key="id",
        options={
            "hoodie.index.type": "bloom",
            "hoodie.bloom.index.prune.by.ranges": "false",
            "hoodie.bloom.index.parallelism": "7",
            "hoodie.datasource.write.operation": "insert",
        },
    )
    index = index_for(cfg)
    assert isinstance(index, BloomIndex) and index.name == "BLOOM"
    assert (cfg.bloom_prune_by_ranges, cfg.bloom_parallelism) == (False, 7)
    assert not index.tags_in_write_tasks()
    index.check_insert("t", "insert")  # no refusal: BLOOM looks keys up
    assert index.commit_metadata() == {"hoodie.index.type": "BLOOM"}
    for key in ("hoodie.bloom.index.use.caching", "hoodie.bloom.index.bucketized.checking",
                "hoodie.bloom.index.use.metadata"):  # fmt: skip
        with pytest.raises(InvalidConfigError, match=f"unknown option '{key}'"):
            WriteConfig.build("t", record_key="id", options={key: "true"})
    with pytest.raises(InvalidConfigError, match="prune.by.ranges"):
        WriteConfig.build("t", record_key="id",
                          options={"hoodie.bloom.index.prune.by.ranges": "maybe"})  # fmt: skip


def test_a_footer_range_rules_keys_out_before_its_filter(tmp_path):
    """With prune_by_ranges the task checks the footer's key range first (a key outside it is
    not looked up, even where the filter would let it through); bounds outside ASCII prune
    nothing (Java orders them otherwise than Arrow)."""
    loose = BloomFilterSpec(num_entries=1, fpp=0.5, filter_type="SIMPLE")
    keys = ["m1", "m2", "m3"]
    footer = {**_footer(keys, loose), MIN_KEY_FOOTER: b"m1", MAX_KEY_FOOTER: b"m3"}
    asked = pa.array(["a", "m0", "m2", "m4", "z"])
    assert in_key_range(footer, asked).to_pylist() == ["m2"]
    odd = {**footer, MAX_KEY_FOOTER: "m\u00e9".encode()}
    assert in_key_range(odd, asked).to_pylist() == asked.to_pylist()
    assert in_key_range({}, asked).to_pylist() == asked.to_pylist()
    _base_file(tmp_path, "p/f.parquet", keys, footer)
    trace = tmp_path / "trace"
    storage = TracingFileIO(load_file_io(str(tmp_path)), str(trace))
    source = KeySource("p", "f", "p/f.parquet")
    outside = pa.array(["a", "b", "z"])
    assert confirmed_keys(storage, source, outside, NO_INSTANTS, prune_by_ranges=True) == pa.array(
        [], pa.string()
    )
    assert "read_parquet" not in trace.read_text()  # nothing in range: no key column
    found = confirmed_keys(storage, source, asked, NO_INSTANTS, prune_by_ranges=True)
    assert found.to_pylist() == ["m2"]

"""The record index's write-side helpers that need no Spark: the vectorized file group mapping
(which Spark tasks group keys by; every key must land where `file_group_index`, checked against
Apache Hudi's own spread, puts it, or readers look for it in the wrong file group), the key
sources' JSON round trip, and the location records, whose values a task shares between keys."""

from __future__ import annotations

import posixpath
import random

import pyarrow as pa
import pytest

from hoodie.exceptions import HoodieError
from hoodie.metadata_records import (
    RecordIndexRecord,
    encode_metadata_record,
    file_group_index,
    file_group_indexes,
    java_string_hash,
)
from hoodie.transaction.record_index import (
    DELETED,
    FILE_ID,
    GROUP,
    INSTANT_TIME,
    KEY,
    LOCATED_SCHEMA,
    PARTITION,
    EntryMaker,
    KeySource,
)

KEYS = [
    "", "1", "6", "a", "k0001", "x" * 300, "émoji-🙂", "日本語キー", "\x00nul", "Aa", "BB",
    "-2147483648", "polygenelubricants",  # hashCode Integer.MIN_VALUE: Math.abs stays negative
    "uuid-5c1c3a8e-0d6f-4b8e-9a7c-2f0e1d3c4b5a",
]  # fmt: skip


@pytest.mark.parametrize("count", [1, 2, 7, 10, 13, 1000, 10000])
def test_the_vectorized_mapping_is_file_group_index(count):
    rng = random.Random(count)
    keys = [*KEYS, *("".join(rng.choice("ab0Zé€") for _ in range(rng.randrange(0, 40)))
                     for _ in range(500))]  # fmt: skip
    got = file_group_indexes(pa.array(keys, pa.string()), count).tolist()
    assert got == [file_group_index(k, count) for k in keys]
    # a slice (non-zero offset) and large strings map alike
    sliced = pa.array(keys, pa.string()).slice(3, 50)
    assert file_group_indexes(sliced, count).tolist() == [
        file_group_index(k, count) for k in keys[3:53]
    ]
    large = pa.array(keys, pa.large_string())
    assert file_group_indexes(large, count).tolist() == got


def test_the_hash_of_min_value():
    assert java_string_hash("polygenelubricants") == -(1 << 31)
    assert file_group_indexes(pa.array(["polygenelubricants"]), 10).tolist() == [
        file_group_index("polygenelubricants", 10)
    ]


def test_no_keys_and_null_keys():
    assert file_group_indexes(pa.array([], pa.string()), 10).tolist() == []
    assert file_group_indexes(pa.array(["", ""], pa.string()), 10).tolist() == [0, 0]
    with pytest.raises(HoodieError, match="null"):
        file_group_indexes(pa.array(["a", None], pa.string()), 10)


def test_key_sources_travel_as_json():
    source = KeySource("p", "f-0", "20240101000000000", keys=("a", "b"), removed=("c",),
                       keys_file="x.parquet", base_file="p/b.parquet", log_files=("p/.l",),
                       spans=((("20240101000000000", 0, 10),),), removes=True,
                       files=("p/b.parquet",), of_instant="20240101000000000")  # fmt: skip
    assert KeySource.from_json(source.to_json()) == source


def test_location_records_share_their_value_and_a_location_wins_over_a_delete():
    rows = pa.Table.from_pylist([
        {GROUP: 0, KEY: "b", PARTITION: "p1", FILE_ID: "8a1f0a52-6c4f-4b5e-a5a5-2f1f1e0d2c3b-0",
         INSTANT_TIME: "20240102030405678", DELETED: False},
        {GROUP: 0, KEY: "a", PARTITION: "p1", FILE_ID: "8a1f0a52-6c4f-4b5e-a5a5-2f1f1e0d2c3b-0",
         INSTANT_TIME: "20240102030405678", DELETED: False},
        {GROUP: 0, KEY: "a", PARTITION: "p0", FILE_ID: "old-file", INSTANT_TIME:
         "20240102030405678", DELETED: True},  # moved: the location stands
        {GROUP: 0, KEY: "c", PARTITION: "", FILE_ID: "", INSTANT_TIME: "", DELETED: True},
    ], schema=LOCATED_SCHEMA)  # fmt: skip
    for version in (6, 8):
        entries, removed = EntryMaker(version, "UTC").changes(rows)
        assert [k for k, _ in entries] == [b"a", b"b"] and removed == ["c"]
        want = encode_metadata_record(RecordIndexRecord.placing(
            "a", "p1", "8a1f0a52-6c4f-4b5e-a5a5-2f1f1e0d2c3b-0", "20240102030405678", "UTC"
        ), version)  # fmt: skip
        assert entries[0][1] == entries[1][1] == want


@pytest.mark.parametrize("content", [b"{not json", b'[["dt=a"]]', b"7"])
def test_a_damaged_groups_file_of_a_rollback_is_an_error_naming_it(tmp_path, content):
    """What a rollback captured of the file groups it undid, damaged: an error naming the
    file, not a record index left with keys located nowhere."""
    from hoodie.exceptions import MalformedMetadataError
    from hoodie.storage.local import LocalFileIO
    from hoodie.transaction.record_index import _GROUPS_FILE, undo_folder, undone_changes

    storage = LocalFileIO(str(tmp_path))
    storage.write_bytes(posixpath.join(undo_folder("20240101000000002", "20240101000000001"),
                                       _GROUPS_FILE), content)  # fmt: skip
    with pytest.raises(MalformedMetadataError, match=_GROUPS_FILE):
        undone_changes(storage, "20240101000000002", "20240101000000001", view=None)

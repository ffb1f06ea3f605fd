"""The BUCKET index's hash must be Apache Hudi's, or the two writers would split a key.

The expected values were printed by Java 17 itself (`String.hashCode()` and
`(List.hashCode() & Integer.MAX_VALUE) % n`, as Hudi's `BucketIdentifier` computes them).
"""

from __future__ import annotations

import re

import pytest

from hoodie import WriteConfig
from hoodie.exceptions import InvalidConfigError
from hoodie.fs_view import FileSlice
from hoodie.index.bucket import (
    BucketIndex,
    bucket_id,
    bucket_of_file_id,
    java_string_hash,
    new_bucket_file_id,
)

# value, String.hashCode(), bucket of [value] among 4, among 7
JAVA = [
    ("", 0, 3, 3),
    ("k1", 3366, 1, 2),
    ("hello", 99162322, 1, 3),
    ("id:1,name:x", -790005597, 2, 2),
    ("Ünïcödé", 1055431381, 0, 0),
    ("😀x", 54959989, 0, 3),  # a character outside the BMP: two UTF-16 units
    ("1234567890123", -869565001, 2, 1),
]


@pytest.mark.parametrize("value, java_hash, of_4, of_7", JAVA)
def test_hash_and_bucket_match_java(value, java_hash, of_4, of_7):
    assert java_string_hash(value) == java_hash
    assert bucket_id([value], 4) == of_4
    assert bucket_id([value], 7) == of_7


def test_several_hash_fields_hash_as_a_java_list():
    assert bucket_id(["1", "x"], 4) == 0  # Arrays.asList("1", "x").hashCode() == 2600
    # Hudi reads a complex key's __null__ part back as null, which List.hashCode counts as 0.
    assert bucket_id([None, "x"], 1000) == ((31 * (31 + 0) + java_string_hash("x")) % 1000)


def test_bucket_file_ids():
    file_id = new_bucket_file_id(3)
    assert re.fullmatch(r"00000003-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-0", file_id)
    assert bucket_of_file_id(file_id) == 3
    assert bucket_of_file_id("a1b2c3d4-0000-0000-0000-000000000000-0") is None
    assert bucket_of_file_id("12345678") is None


def test_bucket_options_are_checked():
    cfg = WriteConfig.build(
        "t",
        record_key=["id", "name"],
        options={
            "hoodie.index.type": "bucket",
            "hoodie.bucket.index.num.buckets": "8",
            "hoodie.bucket.index.hash.field": "id",
        },
    )
    assert (cfg.index_type, cfg.bucket_count, cfg.bucket_hash_fields) == ("BUCKET", 8, ("id",))
    with pytest.raises(InvalidConfigError, match="num.buckets' must be a positive integer"):
        WriteConfig.build("t", record_key="id", options={"hoodie.bucket.index.num.buckets": "0"})
    with pytest.raises(InvalidConfigError, match="hash.field names name, which is not record key"):
        WriteConfig.build("t", record_key="id", options={"hoodie.bucket.index.hash.field": "name"})
    with pytest.raises(InvalidConfigError, match="'HBASE' is not supported; supported: SIMPLE"):
        WriteConfig.build("t", record_key="id", options={"hoodie.index.type": "HBASE"})


def test_two_writers_creating_one_bucket_conflict():
    """Concurrent writers that each create the same new bucket would leave two file groups
    for it; conflict detection treats that like writing the same file group."""
    from hoodie.transaction.conflicts import _same_bucket

    first, second, other = new_bucket_file_id(2), new_bucket_file_id(2), new_bucket_file_id(3)
    assert _same_bucket({("p", first)}, {("p", second)}) == {("p", second)}
    assert _same_bucket({("p", first)}, {("p", first)}) == set()  # the plain overlap's case
    assert _same_bucket({("p", first)}, {("q", second), ("p", other)}) == set()
    assert _same_bucket({("p", "a1b2c3d4-0000-0000-0000-000000000000-0")}, {("p", second)}) == set()


def test_file_groups_of_another_layout_are_refused_with_both_causes_when_ids_look_like_buckets():
    """A random file id starting with 8 digits reads as a bucket, too high for any real count:
    the refusal names the file group and both ways the table could have been written."""
    index = BucketIndex(3, ("id",))
    ok = FileSlice("p", new_bucket_file_id(2), "1")
    assert index.file_groups([ok], "t") == {("p", 2): ok.file_id}
    random_id = "3669712a-5d1e-4c2b-9a0f-1e2d3c4b5a69-0"
    with pytest.raises(InvalidConfigError, match="not a bucket file group"):
        index.file_groups([ok, FileSlice("p", random_id, "1")], "t")
    digits_id = "36697120-5d1e-4c2b-9a0f-1e2d3c4b5a69-0"
    with pytest.raises(
        InvalidConfigError,
        match=(
            f"file group {digits_id} in partition 'p', which names bucket 36697120, but "
            r"hoodie.bucket.index.num.buckets is 3: .*more buckets .* or with another index"
        ),
    ):
        index.file_groups([FileSlice("p", digits_id, "1")], "t")

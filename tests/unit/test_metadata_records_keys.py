"""The metadata table's keys and file groups: hashed ids against the keys Apache Hudi wrote
(docs/design/metadata-table.md 1.1, [ran]), `String.hashCode` and the file group mapping
against values a JVM computed, and the record index's file group count estimate."""

from __future__ import annotations

import pytest

from hoodie.exceptions import HoodieError
from hoodie.metadata_records import (
    ALL_PARTITIONS_KEY,
    NON_PARTITIONED_NAME,
    MetadataPartitionType,
    bloom_filter_key,
    column_index_id,
    column_stats_key,
    estimate_file_group_count,
    file_group_id,
    file_group_index,
    file_index_id,
    java_string_hash,
    partition_identifier,
    partition_index_id,
    partition_stats_key,
)


def test_hashed_ids_equal_apache_hudis() -> None:
    """The ids the design quotes from Apache Hudi's tables."""
    assert partition_index_id("a") == "BFHqp2KLzrM="
    assert column_index_id("dt") == "e3OKIURx+ew="
    assert column_index_id("_hoodie_commit_time") == "JBBzUToHtLc="


def test_keys_are_ids_concatenated() -> None:
    name = "46732c7d-27e4-4f2e-83a5-d07db8837ec3-0_0-54-179_20261127183452182.parquet"
    assert len(file_index_id(name)) == 24  # base64 of 16 bytes of MD5
    assert file_index_id(name) != file_index_id("dir/" + name)
    assert column_stats_key("a", name, "dt") == (
        column_index_id("dt") + partition_index_id("a") + file_index_id(name)
    )
    assert bloom_filter_key("a", name) == partition_index_id("a") + file_index_id(name)
    assert partition_stats_key("b", "ts") == column_index_id("ts") + partition_index_id("b")


def test_ids_hash_utf8() -> None:
    """Non-ASCII names hash their UTF-8 bytes: different from any ASCII spelling."""
    assert partition_index_id("é") != partition_index_id("e")
    assert len(partition_index_id("日本")) == 12


def test_unpartitioned_tables_use_dot() -> None:
    assert partition_identifier("") == NON_PARTITIONED_NAME == "."
    assert partition_identifier("dt=2024-01-01") == "dt=2024-01-01"
    assert ALL_PARTITIONS_KEY == "__all_partitions__"


# (text, String.hashCode(), Math.abs(Math.abs(h) % 10), Math.abs(Math.abs(h) % 7)), as a JVM
# (java 17) printed them.
JAVA = [
    ("", 0, 0, 0),
    ("1", 49, 9, 0),
    ("hello", 99162322, 2, 0),
    ("polygenelubricants", -2147483648, 8, 2),  # Integer.MIN_VALUE: Math.abs keeps it negative
    ("ä", 228, 8, 4),
    ("日本語キー", -858417722, 2, 1),
    ("\U0001f600", 1772899, 9, 2),  # a surrogate pair: two UTF-16 code units
    ("key-\U0001f600-é", -2139820627, 7, 0),
    ("a/b/c=2024-01-01", -2010798603, 3, 2),
    ("0123456789abcdefghij0123456789", 1406902767, 7, 4),
]


@pytest.mark.parametrize("text, java_hash, of_10, of_7", JAVA)
def test_string_hash_and_file_group_as_the_jvm(
    text: str, java_hash: int, of_10: int, of_7: int
) -> None:
    assert java_string_hash(text) == java_hash
    assert file_group_index(text, 10) == of_10
    assert file_group_index(text, 7) == of_7


def test_record_keys_spread_as_apache_hudi_spread_them() -> None:
    """[ran]: keys "1".."6" went to record-index-0009, -0000, -0001, ... of 10."""
    assert [file_group_index(k, 10) for k in "123456"] == [9, 0, 1, 2, 3, 4]
    assert file_group_index("anything", 1) == 0
    with pytest.raises(HoodieError):
        file_group_index("1", 0)


def test_file_group_ids() -> None:
    assert file_group_id("files-", 0) == "files-0000-0"
    assert file_group_id(MetadataPartitionType.RECORD_INDEX.file_id_prefix, 9) == (
        "record-index-0009-0"
    )
    assert file_group_id("col-stats-", 12345) == "col-stats-12345-0"


def test_partition_types() -> None:
    names = {kind.partition_name: kind for kind in MetadataPartitionType}
    assert names["files"].file_id_prefix == "files-"
    assert names["column_stats"].file_id_prefix == "col-stats-"
    assert names["bloom_filters"].file_id_prefix == "bloom-filters-"
    assert names["partition_stats"].record_type == 6
    assert MetadataPartitionType.of("record_index") is MetadataPartitionType.RECORD_INDEX
    assert MetadataPartitionType.of("secondary_index_by_city") is (
        MetadataPartitionType.SECONDARY_INDEX
    )
    assert MetadataPartitionType.of("expr_index_lower") is MetadataPartitionType.EXPRESSION_INDEX
    with pytest.raises(HoodieError, match="'nonsense'"):
        MetadataPartitionType.of("nonsense")


GIB = 1 << 30


@pytest.mark.parametrize(
    "records, size, low, high, growth, expected",
    [
        (0, 100, 10, 10000, 2.0, 10),  # [ran]: an empty table gets 10
        (1_000_000_000, 100, 10, 10000, 2.0, 186),  # 2e9 / (2^30 / 100), rounded down
        (10**12, 100, 10, 10000, 2.0, 10000),  # clamped to the maximum
        (50_000_000, 100, 10, 10000, 2.0, 10),  # 9.3 -> 9, below the minimum
        (10**10, 0, 10, 10000, 2.0, 18),  # size 0 counts as 1 byte per record
        (10**12, 100, 42, 42, 2.0, 42),  # min == max fixes the count
        (1_000_000_000, 100, 10, 10000, 1.5, 139),
    ],
)
def test_record_index_file_group_estimate(
    records: int, size: int, low: int, high: int, growth: float, expected: int
) -> None:
    assert estimate_file_group_count(records, size, low, high, growth, GIB) == expected


def test_the_estimate_multiplies_in_java_floats() -> None:
    """recordCount * growthFactor is a float product: 16777217 (2^24 + 1) is 16777216 as a
    float, so growth 1.0 over one record per group gives 16777216 groups, not 16777217."""
    assert estimate_file_group_count(16_777_217, 1, 1, 10**9, 1.0, 1) == 16_777_216


def test_the_estimate_refuses_a_record_larger_than_a_file_group() -> None:
    with pytest.raises(HoodieError, match="max.filegroup.size"):
        estimate_file_group_count(10, 2048, 1, 100, 2.0, 1024)


def test_hashes_vectorized_equal_the_scalar_ones() -> None:
    """`java_string_hashes` (numpy over UTF-16 code units; ASCII straight from the Arrow
    buffer) against `java_string_hash`, which the JVM's values above check: ASCII, accents,
    CJK, characters beyond the BMP (surrogate pairs), empty strings, long strings, a sliced
    and a chunked array, and the file groups they map to."""
    import random

    import numpy as np
    import pyarrow as pa

    from hoodie.metadata_records import file_group_indexes, java_string_hashes

    rng = random.Random(41)
    alphabet = "abcXYZ09 '\"/\\=%\téäü日本語キー\U0001f600\U0001d11e\uffff\u07ff"
    texts = [text for text, *_ in JAVA]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(3000)]
    texts += [f"key-{i}" for i in range(3000)] + ["x" * 100_000, "é" * 5000]
    rng.shuffle(texts)
    expected = np.array([java_string_hash(t) for t in texts], dtype=np.int32)
    array = pa.array(texts)
    assert (java_string_hashes(array) == expected).all()
    assert (java_string_hashes(array.slice(7, 500)) == expected[7:507]).all()
    chunked = pa.chunked_array([array.slice(0, 10), array.slice(10)])
    assert (java_string_hashes(chunked) == expected).all()
    assert (java_string_hashes(array.cast(pa.large_string())) == expected).all()
    assert len(java_string_hashes(pa.array([], pa.string()))) == 0
    for count in (1, 4, 7, 10, 10_000):
        scalar = [file_group_index(t, count) for t in texts]
        assert file_group_indexes(array, count).tolist() == scalar
    with pytest.raises(HoodieError, match="never null"):
        java_string_hashes(pa.array(["a", None]))
    with pytest.raises(HoodieError):
        file_group_indexes(array, 0)

"""The metadata table's partitions, record keys and file groups, as Apache Hudi names them.

A metadata record's key is the HFile row key. `files` records are keyed by partition path (and
`__all_partitions__` for the list of partitions), `record_index` records by the data record key;
`column_stats`, `bloom_filters` and `partition_stats` by hashed ids concatenated
(`HoodieMetadataPayload.getColumnStatsIndexKey`, `getBloomFilterIndexKey`): a partition or
column id is XXHash64 of the name's UTF-8 with seed 0xdabadaba (a Java int passed where a long
is expected, so sign-extended to 0xFFFFFFFFDABADABA), 8 bytes big-endian, base64; a file id is
the MD5 of the file name. Which file group of a partition a key lands in is Java's
`String.hashCode` of the key modulo the partition's file group count
(`HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex`), so it must be computed over UTF-16
code units with 32-bit overflow, exactly as the JVM does.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import math
import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from ..exceptions import HoodieError

# HoodieTableMetadata.RECORDKEY_PARTITION_LIST and NON_PARTITIONED_NAME
ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."

_HASH_SEED = 0xFFFFFFFFDABADABA


class MetadataPartitionType(enum.Enum):
    """A partition of the metadata table (`MetadataPartitionType`): its folder name (a prefix
    for the per-index partitions of 1.x), the prefix of its file group ids and the `type` code
    of its records (partition list records of `files` are 1; expression indexes store column
    stats or bloom filter records)."""

    FILES = ("files", "files-", 2)
    COLUMN_STATS = ("column_stats", "col-stats-", 3)
    BLOOM_FILTERS = ("bloom_filters", "bloom-filters-", 4)
    RECORD_INDEX = ("record_index", "record-index-", 5)
    EXPRESSION_INDEX = ("expr_index_", "expr-index-", -1)
    SECONDARY_INDEX = ("secondary_index_", "secondary-index-", 7)
    PARTITION_STATS = ("partition_stats", "partition-stats-", 6)

    def __init__(self, partition_name: str, file_id_prefix: str, record_type: int) -> None:
        self.partition_name = partition_name
        self.file_id_prefix = file_id_prefix
        self.record_type = record_type

    @property
    def is_prefix(self) -> bool:
        """Expression and secondary indexes: one MDT partition per index, named prefix + name."""
        return self.partition_name.endswith("_")

    @classmethod
    def of(cls, partition: str) -> MetadataPartitionType:
        """The type of an MDT partition folder (`record_index`, `secondary_index_idx_city`)."""
        for kind in cls:
            if partition == kind.partition_name or (
                kind.is_prefix and partition.startswith(kind.partition_name)
            ):
                return kind
        raise HoodieError(
            f"{partition!r} is no metadata table partition Apache Hudi writes (known: "
            f"{', '.join(kind.partition_name for kind in cls)})"
        )


def partition_identifier(partition_path: str) -> str:
    """The name a data partition has in the metadata table: its path, `.` when unpartitioned
    (`HoodieTableMetadataUtil.getPartitionIdentifier`)."""
    return partition_path or NON_PARTITIONED_NAME


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode("ascii")


def _hash_id(name: str) -> str:
    return _b64(xxhash.xxh64(name.encode("utf-8"), seed=_HASH_SEED).digest())


def partition_index_id(partition: str) -> str:
    """`PartitionIndexID(partition).asBase64EncodedString()` (12 characters); `partition` as
    the metadata table names it (see `partition_identifier`)."""
    return _hash_id(partition)


def column_index_id(column: str) -> str:
    """`ColumnIndexID(column).asBase64EncodedString()` (12 characters)."""
    return _hash_id(column)


def file_index_id(file_name: str) -> str:
    """`FileIndexID(file name).asBase64EncodedString()`: MD5 of the name (no folder), 24
    characters."""
    return _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def column_stats_key(partition: str, file_name: str, column: str) -> str:
    """The key of a file's column stats record: column id + partition id + file id."""
    return column_index_id(column) + partition_index_id(partition) + file_index_id(file_name)


def bloom_filter_key(partition: str, file_name: str) -> str:
    """The key of a base file's bloom filter record: partition id + file id."""
    return partition_index_id(partition) + file_index_id(file_name)


def partition_stats_key(partition: str, column: str) -> str:
    """The key of a partition's stats record (1.x): column id + partition id."""
    return column_index_id(column) + partition_index_id(partition)


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode`: h = 31 * h + c over UTF-16 code units, as a signed 32-bit int."""
    units = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _java_abs(value: int) -> int:
    """Math.abs on an int: Integer.MIN_VALUE stays negative."""
    return value if value == -(1 << 31) else abs(value)


def file_group_index(key: str, count: int) -> int:
    """Which of a partition's `count` file groups holds `key`
    (`mapRecordKeyToFileGroupIndex`: abs(abs(hashCode) % count), Java int arithmetic)."""
    if count <= 0:
        raise HoodieError(f"a metadata table partition has at least one file group, not {count}")
    h = _java_abs(java_string_hash(key))
    remainder = int(math.fmod(h, count))  # Java's %: the sign of the dividend
    return abs(remainder)


# Keys hashed per numpy pass (`java_string_hashes`): bounds the per-unit arrays to some MB.
_HASH_CHUNK = 1 << 16


def java_string_hashes(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """`java_string_hash` of every string of `keys` (no nulls), vectorized: an int32 array.

    Java hashes UTF-16 code units: h = sum(unit_i * 31^(n - 1 - i)) modulo 2^32. An ASCII
    string's UTF-8 bytes are its units, so those are hashed straight from the Arrow buffer;
    other strings are encoded to UTF-16 first (a character beyond the BMP is two units, its
    surrogates). Products and sums wrap modulo 2^64 in uint64, which keeps them right
    modulo 2^32."""
    array = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    if array.null_count:
        raise HoodieError("record keys are never null: a null key has no file group")
    array = array.cast(pa.large_string())
    out = np.empty(len(array), dtype=np.int32)
    for start in range(0, len(array), _HASH_CHUNK):
        chunk = array.slice(start, _HASH_CHUNK)
        ascii_ = pc.string_is_ascii(chunk).to_numpy(zero_copy_only=False)
        hashes = np.empty(len(chunk), dtype=np.uint64)
        if ascii_.all():
            hashes[:] = _hash_units(*_ascii_units(chunk))
        else:
            picked = np.flatnonzero(ascii_)
            hashes[picked] = _hash_units(*_ascii_units(chunk.take(pa.array(picked))))
            others = np.flatnonzero(~ascii_)
            encoded = [
                text.encode("utf-16-be") for text in chunk.take(pa.array(others)).to_pylist()
            ]
            units = np.frombuffer(b"".join(encoded), dtype=">u2").astype(np.uint64)
            ends = np.cumsum([len(e) // 2 for e in encoded], dtype=np.int64)
            hashes[others] = _hash_units(units, np.concatenate(([0], ends)))
        out[start : start + len(chunk)] = hashes.astype(np.uint32).view(np.int32)
    return out


def _ascii_units(chunk: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The code units (bytes) of an ASCII large-string array and its offsets."""
    _, offsets_buffer, data_buffer = chunk.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[
        chunk.offset : chunk.offset + len(chunk) + 1
    ]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.empty(0, np.uint8)
    )
    return data[offsets[0] : offsets[-1]].astype(np.uint64), offsets - offsets[0]


def _hash_units(units: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Java's hash of each string (units[offsets[i]:offsets[i + 1]]), as uint64 < 2^32."""
    lengths = np.diff(offsets)
    count = len(lengths)
    if count == 0 or len(units) == 0:
        return np.zeros(count, dtype=np.uint64)
    longest = int(lengths.max())
    powers = np.ones(longest, dtype=np.uint64)
    if longest > 1:
        powers[1:] = np.cumprod(np.full(longest - 1, 31, dtype=np.uint64))  # wraps mod 2^64
    owner = np.repeat(np.arange(count), lengths)
    exponents = offsets[1:][owner] - 1 - np.arange(len(units))
    terms = units * powers[exponents]
    filled = lengths > 0
    sums = np.zeros(count, dtype=np.uint64)
    sums[filled] = np.add.reduceat(terms, offsets[:-1][filled])
    return sums & np.uint64(0xFFFFFFFF)


def file_group_indexes(keys: pa.Array | pa.ChunkedArray, count: int) -> np.ndarray:
    """`file_group_index` of every key of `keys`, vectorized (`java_string_hashes`)."""
    if count <= 0:
        raise HoodieError(f"a metadata table partition has at least one file group, not {count}")
    hashes = java_string_hashes(keys).astype(np.int64)
    # abs(abs(h) % count) in Java ints equals |h| % count in longs, Integer.MIN_VALUE too
    return (np.abs(hashes) % count).astype(np.int32)


def file_group_id(prefix: str, index: int) -> str:
    """A metadata table file group's id (`getFileIDForFileGroup`): prefix, index on four
    digits, `-0` (the file index, always 0)."""
    return f"{prefix}{index:04d}-0"


def _float32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def estimate_file_group_count(
    record_count: int,
    average_record_size: int,
    min_count: int,
    max_count: int,
    growth_factor: float,
    max_file_group_size: int,
) -> int:
    """How many file groups a record index initialized over `record_count` records gets
    (`HoodieTableMetadataUtil.estimateFileGroupCount`): the records grown by `growth_factor`
    (a Java float product, rounded up), divided (rounding down) by the records one file group
    of `max_file_group_size` bytes holds, clamped to [min_count, max_count]; `min_count` when
    the two are equal (and not 0). The count never changes after initialization."""
    if min_count == max_count and min_count != 0:
        return min_count
    per_group = max_file_group_size // max(average_record_size, 1)
    if per_group <= 0:
        raise HoodieError(
            f"a record index file group of {max_file_group_size} bytes holds no record of "
            f"{average_record_size} bytes: raise hoodie.metadata.record.index.max.filegroup.size"
        )
    expected = math.ceil(_float32(_float32(float(record_count)) * _float32(growth_factor)))
    estimate = expected // per_group
    if estimate >= max_count:
        return max_count
    if estimate <= min_count:
        return min_count
    return max(1, estimate)

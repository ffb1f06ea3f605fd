"""Reading HFiles (`hoodie.hfile.HFileReader`): hudi-rs's samples (HBase's writer: NONE and GZ,
one- to three-level indexes, fake first keys, repeated keys, no entries), asserting what
hudi-rs's own tests assert of them; the metadata table's files as Apache Hudi 0.15 and 1.2
wrote them (tests/fixtures/hfile/README.md); lookups through the index; damaged files.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import struct
from pathlib import Path

import fastavro
import pytest

from hoodie import hfile as hfile_module
from hoodie.bloom_filter import BLOOM_FILTER_FOOTER, BLOOM_TYPE_FOOTER, StoredFilter
from hoodie.exceptions import CorruptDataFileError, DamagedFileError
from hoodie.hfile import TRAILER_SIZE, BlockType, ChecksumType, Codec, HFileReader
from hoodie.logformat import BlockType as LogBlockType
from hoodie.logformat import HeaderKey, read_log_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hfile"
LARGE = "hudi-key-" + "a" * 100 + "-"  # the large keys' prefix in hudi-rs's samples


def sample(name: str) -> HFileReader:
    path = FIXTURES / f"hudi_1_0_hbase_{name}.hfile.gz"
    return HFileReader(gzip.decompress(path.read_bytes()), path.name)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def key(i: int, prefix: str = "hudi-key-", suffix: str = "") -> bytes:
    return f"{prefix}{i:09}{suffix}".encode()


def value(i: int) -> bytes:
    return f"hudi-value-{i:09}".encode()


# -- hudi-rs's samples -----------------------------------------------------------------------
# name: (entries, key prefix, key suffix, index levels, codec)
SAMPLES = {
    "2_4_9_16KB_NONE_5000": (5000, "hudi-key-", "", 1, Codec.NONE),
    "2_4_9_64KB_NONE_5000": (5000, "hudi-key-", "", 1, Codec.NONE),
    "2_4_9_16KB_GZ_20000": (20000, "hudi-key-", "", 1, Codec.GZ),
    "2_4_9_512KB_GZ_20000": (20000, "hudi-key-", "", 1, Codec.GZ),
    "2_4_13_16KB_GZ_20000_fake_first_key": (20000, "hudi-key-", "-abcdefghij", 1, Codec.GZ),
    "2_4_13_1KB_GZ_20000_large_keys": (20000, LARGE, "", 2, Codec.GZ),
    "2_4_13_1KB_GZ_10000_large_keys_deep_index": (10000, LARGE, "", 3, Codec.GZ),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_hudi_rs_samples_read_whole(name):
    count, prefix, suffix, levels, codec = SAMPLES[name]
    reader = sample(name)
    assert reader.codec == codec
    assert reader.trailer.num_data_index_levels == levels
    assert reader.trailer.major_version == 3
    assert reader.entry_count == count
    expected = [(key(i, prefix, suffix), value(i)) for i in range(count)]
    assert list(reader) == expected
    assert reader.first_key == expected[0][0]
    assert reader.last_key == expected[-1][0]
    assert len(reader.data_index) > 1
    assert reader.meta_block("bloomFilter")  # HBase writes one; no other meta block exists
    assert reader.meta_block("nope") is None


def test_hudi_rs_sample_without_entries():
    reader = sample("2_4_9_no_entry")
    assert reader.entry_count == 0
    assert list(reader) == []
    assert reader.first_key is None and reader.last_key is None
    assert reader.get(b"hudi-key-000000000") is None
    assert list(reader.lookup([b"a", b"b"])) == []
    assert b"schema" in reader.file_info


def test_hudi_rs_sample_with_repeated_keys():
    # 200 keys, each written once and then 20 times more (values with _0 .. _19).
    reader = sample("2_4_9_16KB_GZ_200_20_non_unique")
    assert reader.entry_count == 4200
    entries = list(reader)
    assert entries[:22] == (
        [(key(0), value(0))]
        + [(key(0), value(0) + f"_{j}".encode()) for j in range(20)]
        + [(key(1), value(1))]
    )
    assert [k for k, _ in entries[::21]] == [key(i) for i in range(200)]
    # A lookup finds a key's first value (a key's repeats stay in one block).
    for i in range(200):
        assert reader.get(key(i)) == value(i)
    assert dict(reader.lookup([key(5), key(6)])) == {key(5): value(5), key(6): value(6)}


@pytest.mark.parametrize(
    "name, hits, misses",
    [
        ("2_4_9_16KB_NONE_5000", [0, 100, 4999], [b"aaa", b"hudi-key-nonexistent"]),
        ("2_4_9_512KB_GZ_20000", [8888, 0, 19999], [key(20000)]),
        ("2_4_9_64KB_NONE_5000", [1688], [key(1688) + b"0"]),
        ("2_4_13_1KB_GZ_20000_large_keys", [5340, 0, 19999], [key(20000, LARGE)]),
        ("2_4_13_1KB_GZ_10000_large_keys_deep_index", [5340, 9999], [key(9999, LARGE) + b"a"]),
    ],
)
def test_hudi_rs_samples_get(name, hits, misses):
    _, prefix, suffix, _, _ = SAMPLES[name]
    reader = sample(name)
    for i in hits:
        assert reader.get(key(i, prefix, suffix)) == value(i)
    for missing in misses:
        assert reader.get(missing) is None


def test_fake_first_keys_in_the_index():
    reader = sample("2_4_13_16KB_GZ_20000_fake_first_key")
    suffix = "-abcdefghij"
    # Block 2's index key is HBase's shortened "hudi-key-00000047", its first row
    # "hudi-key-000000470-abcdefghij": a key between the two is in no block.
    assert b"hudi-key-00000047" in [entry.key for entry in reader.data_index]
    assert reader.get(b"hudi-key-000000470") is None
    assert reader.get(key(469, suffix=suffix)) == value(469)
    assert reader.get(key(470, suffix=suffix)) == value(470)
    assert reader.get(key(99, suffix=suffix)) == value(99)
    every = [key(i, suffix=suffix) for i in range(0, 20000, 13)]
    assert dict(reader.lookup(every)) == {k: value(int(k[9:18])) for k in every}


def test_lookup_as_hudi_rs_tests_it():
    reader = sample("2_4_9_16KB_NONE_5000")
    found = list(reader.lookup([b"hudi-key-nonexistent", key(100), key(0)]))
    assert found == [(key(0), value(0)), (key(100), value(100))]


def test_lookups_decompress_only_the_blocks_they_need(monkeypatch):
    reader = sample("2_4_9_16KB_GZ_20000")
    calls = []
    real = hfile_module._gunzip
    monkeypatch.setattr(hfile_module, "_gunzip", lambda *a: calls.append(1) or real(*a))
    blocks = len(reader.data_index)
    assert blocks > 50
    keys = [key(i) for i in range(0, 20000, 2000)]  # ten keys, ten blocks apart
    assert dict(reader.lookup(reversed(keys))) == {k: value(int(k[9:])) for k in keys}
    assert len(calls) == 10
    calls.clear()
    assert len(list(reader.lookup(key(i) for i in range(100, 110)))) == 10  # one block
    assert len(calls) == 1
    calls.clear()
    assert reader.get(key(20000)) is None  # past the last key: no block read
    assert reader.get(b"a") is None  # before the first
    assert calls == []
    # Each block's first key is found in that block alone.
    firsts = [reader._block(n)[1][0] for n in range(0, blocks, 5)]
    calls.clear()
    assert [k for k, _ in reader.lookup(firsts)] == firsts
    assert len(calls) == len(firsts)


# -- the metadata table's files as Apache Hudi wrote them --------------------------------------
@pytest.mark.parametrize("version, checksum", [("1_2_0", ChecksumType.NULL),
                                               ("0_15_0", ChecksumType.CRC32C)])  # fmt: skip
def test_metadata_table_base_files(version, checksum):
    name = f"mdt_files_base_{version}.hfile"
    reader = HFileReader(fixture(name), name)
    assert [k for k, _ in reader] == [b"__all_partitions__", b"a", b"b"]
    assert (reader.first_key, reader.last_key) == (b"__all_partitions__", b"b")
    assert reader.codec == Codec.GZ
    assert reader.trailer.minor_version == (0 if version == "1_2_0" else 3)
    assert reader.trailer.comparator_class_name.endswith("HoodieHBaseKVComparator")
    assert {reader.block_header(e.offset).checksum_type for e in reader.data_index} == {checksum}
    schema = json.loads(reader.file_info[b"schema"])
    assert schema["name"] == "HoodieMetadataRecord"
    parsed = fastavro.parse_schema(schema)
    records = {k: fastavro.schemaless_reader(io.BytesIO(v), parsed, None) for k, v in reader}
    assert records[b"__all_partitions__"]["type"] == 1
    assert set(records[b"__all_partitions__"]["filesystemMetadata"]) == {"a", "b"}
    for partition in (b"a", b"b"):
        assert records[partition]["key"] == ""  # Hudi leaves the key to the HFile's key
        assert records[partition]["type"] == 2
        (data_file,) = records[partition]["filesystemMetadata"]
        assert data_file.endswith(".parquet")
    assert reader.get(b"a") == dict(reader)[b"a"]
    # The bloom filter of the file's own keys, as a meta block.
    assert reader.file_info[b"bloomFilterTypeCode"] == b"DYNAMIC_V0"
    assert reader.file_info[b"minRecordKey"] == b"__all_partitions__"
    assert reader.file_info[b"maxRecordKey"] == b"b"
    bloom = reader.meta_block("bloomFilter")
    stored = StoredFilter.of({BLOOM_FILTER_FOOTER: bloom, BLOOM_TYPE_FOOTER: b"DYNAMIC_V0"})
    assert stored.might_contain(["a", "b", "__all_partitions__", "zz", "c"])[:3] == [True] * 3


@pytest.mark.parametrize("version", ["1_2_0", "0_15_0"])
def test_metadata_table_log_files(version):
    blocks = list(read_log_file(fixture(f"mdt_files_log_{version}.log")))
    (block,) = [b for b in blocks if b.block_type == LogBlockType.HFILE_DATA]
    reader = block.hfile()
    assert reader.file_info[b"schema"].decode() == block.header[HeaderKey.SCHEMA]
    assert [k for k, _ in reader] == [b"__all_partitions__", b"a", b"b"]
    assert reader.meta_index == []  # log blocks carry no bloom filter
    parsed = fastavro.parse_schema(json.loads(block.header[HeaderKey.SCHEMA]))
    types = [
        fastavro.schemaless_reader(io.BytesIO(data), parsed, None)["type"] for _, data in reader
    ]
    assert types == [1, 2, 2]


def test_only_hfile_blocks_hold_an_hfile():
    from hoodie.exceptions import HoodieError, UnsupportedTableError
    from hoodie.logformat import rollback_command_block

    (command,) = read_log_file(rollback_command_block("2", "1"))
    with pytest.raises(HoodieError, match="holds no HFile"):
        command.hfile()
    blocks = list(read_log_file(fixture("mdt_files_log_1_2_0.log")))
    (block,) = [b for b in blocks if b.block_type == LogBlockType.HFILE_DATA]
    with pytest.raises(UnsupportedTableError, match=r"HFILE_DATA.*LogBlock\.hfile\(\)"):
        block.records()


# -- damaged and unsupported files -----------------------------------------------------------
BASE = "mdt_files_base_1_2_0.hfile"


def damaged(data: bytes, match: str) -> CorruptDataFileError:
    """Opening `data` and reading all of it fails with the project's error naming the file."""
    with pytest.raises(CorruptDataFileError, match=match) as caught:
        reader = HFileReader(data, "bad.hfile")
        list(reader)
        reader.meta_block("bloomFilter")
    assert isinstance(caught.value, DamagedFileError)
    assert caught.value.path == "bad.hfile" and "bad.hfile" in str(caught.value)
    return caught.value


def trailer_fields(data: bytes) -> tuple[int, bytes]:
    """Where the trailer's protobuf message starts, and the message."""
    start = len(data) - TRAILER_SIZE + 8
    size = data[start]  # one varint byte: the messages here are short
    return start + 1, data[start + 1 : start + 1 + size]


def test_truncated_files():
    data = fixture(BASE)
    damaged(data[:100], "less than a trailer")
    damaged(data[:-1], "trailer")
    damaged(data[: len(data) // 2], "trailer")
    damaged(b"", "trailer")


def test_wrong_trailer_magic():
    data = bytearray(fixture(BASE))
    data[-TRAILER_SIZE] = ord("X")
    damaged(bytes(data), "magic")


def test_unsupported_version():
    data = bytearray(fixture(BASE))
    data[-1] = 2
    damaged(bytes(data), "not readable here: HFile major version 2")


@pytest.mark.parametrize("codec", [Codec.LZO, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_unsupported_codec(codec):
    data = bytearray(fixture(BASE))
    start, message = trailer_fields(bytes(data))
    at = start + message.rindex(b"\x60\x01")  # field 12 (codec) = 1 (GZ)
    data[at + 1] = int(codec)
    damaged(bytes(data), f"compression codec {codec.name}")
    data[at + 1] = 99
    damaged(bytes(data), "unknown compression codec 99")


def test_bad_block_magic():
    data = bytearray(fixture(BASE))
    reader = HFileReader(bytes(data), "good")
    offset = reader.data_index[0].offset
    data[offset : offset + 8] = b"DATABLKX"
    opened = HFileReader(bytes(data), "bad.hfile")  # the index is fine: it opens
    with pytest.raises(CorruptDataFileError, match="magic b'DATABLKX', not DATA"):
        opened.get(b"a")
    damaged(bytes(data), "data block 0")
    data = bytearray(fixture(BASE))
    data[reader.trailer.file_info_offset] = ord("X")
    damaged(bytes(data), "file info")


def test_lengths_past_the_end():
    good = fixture(BASE)
    reader = HFileReader(good, "good")
    # A block's on-disk size running past the blocks.
    data = bytearray(good)
    struct.pack_into(">i", data, reader.data_index[0].offset + 8, 1 << 30)
    damaged(bytes(data), "runs past")
    # A payload size the gzip stream does not have.
    data = bytearray(good)
    struct.pack_into(">i", data, reader.data_index[0].offset + 12, 5)
    damaged(bytes(data), "header says 5")
    # The load-on-open offset past the end.
    start, message = trailer_fields(good)
    data = bytearray(good)
    at = start + message.index(b"\x10")  # field 2: load_on_open_data_offset
    data[at + 1 : at + 3] = b"\xff\x7f"
    damaged(bytes(data), "outside the file's blocks")
    # A compressed payload that does not inflate.
    data = bytearray(good)
    payload = reader.data_index[0].offset + 33
    data[payload + 10 : payload + 20] = b"\xff" * 10
    damaged(bytes(data), "data block 0")


def test_random_damage_is_an_error_or_reads():
    """Byte flips anywhere: the file still reads, or it raises the project's error; never an
    IndexError or the like."""
    good = fixture(BASE)
    rng = random.Random(41)
    errors = 0
    for _ in range(400):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            reader = HFileReader(bytes(data), "flipped")
            list(reader)
            reader.get(b"a")
            reader.meta_block("bloomFilter")
        except CorruptDataFileError:
            errors += 1
    assert errors > 50


def test_block_types_are_the_magics():
    reader = HFileReader(fixture(BASE), BASE)
    assert reader.block_header(reader.data_index[0].offset).magic == BlockType.DATA.value
    assert reader.block_header(reader.trailer.load_on_open_offset).magic == b"IDXROOT2"


# -- damage inside well-framed blocks: files assembled by hand --------------------------------
def kv(row: bytes, data: bytes = b"v", mvcc: bool = True) -> bytes:
    """One key-value as a data block holds it (KeyValue key, then the MVCC byte)."""
    head = struct.pack(">iih", len(row) + 12, len(data), len(row))
    return head + row + hfile_module.KEY_TAIL + data + (b"\x00" if mvcc else b"")


def assemble(blocks: list[tuple[bytes, bytes]], entries: int, size_delta: int = 0) -> bytes:
    """An HFile of data blocks given as (index key, payload), framed as `write_hfile` frames
    them, with `entries` in the trailer and each index size off by `size_delta`."""
    h = hfile_module
    out, index = bytearray(), []
    for row, payload in blocks:
        framed = h._block(BlockType.DATA, payload)
        index.append((len(out), len(framed) + size_delta, h._key(row, False)))
        out += framed
    load_on_open = len(out)
    out += h._block(BlockType.ROOT_INDEX, h._index_payload(index))
    out += h._block(BlockType.ROOT_INDEX, b"")
    file_info = len(out)
    pair = h._proto_bytes(1, b"KEY_VALUE_VERSION") + h._proto_bytes(2, struct.pack(">i", 1))
    pairs = h._proto_bytes(1, pair)
    out += h._block(BlockType.FILE_INFO, b"PBUF" + h._varint(len(pairs)) + pairs)
    fields = [(1, file_info), (2, load_on_open), (5, len(index)), (7, entries), (8, 1), (12, 1)]
    message = b"".join(h._proto_int(number, value) for number, value in fields)
    tail = h.TRAILER_MAGIC + h._varint(len(message)) + message
    return bytes(out + tail + bytes(TRAILER_SIZE - 4 - len(tail)) + b"\x00\x00\x00\x03")


def test_assembled_file_reads():
    data = assemble([(b"a", kv(b"a", b"1") + kv(b"b", b"2")), (b"c", kv(b"c", b"3"))], 3)
    reader = HFileReader(data, "ok.hfile")
    assert list(reader) == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    assert reader.get(b"b") == b"2"


@pytest.mark.parametrize(
    "blocks, entries, size_delta, match",
    [
        ([(b"a", kv(b"b") + kv(b"a"))], 2, 0, "keys are not in order"),
        ([(b"a", kv(b"a") + kv(b"c")), (b"b", kv(b"b"))], 3, 0, "starts before its predecessor"),
        ([(b"a", kv(b"a"))], 2, 0, "hold 1 entries, the trailer says 2"),
        ([(b"a", kv(b"a"))], 1, 1, "the index gives it"),
        ([(b"b", kv(b"a"))], 1, 0, "first key is before its index key"),
        ([(b"a", kv(b"a", mvcc=False))], 1, 0, "vlong runs past the end"),
        ([(b"a", kv(b"a")[:-3])], 1, 0, "runs past the block's end"),
        ([(b"a", b"")], 0, 0, "or it has none"),
        ([(b"b", kv(b"b")), (b"a", kv(b"a"))], 2, 0, "index's keys are not in order"),
    ],
)
def test_damage_inside_blocks(blocks, entries, size_delta, match):
    damaged(assemble(blocks, entries, size_delta), match)


@pytest.mark.parametrize(
    "levels, match",
    [(9, "9 data index levels"), (0, "0 data index"), (2, "not INTERMEDIATE_INDEX or LEAF")],
)
def test_index_levels_the_file_does_not_have(levels, match):
    data = bytearray(fixture(BASE))
    start, message = trailer_fields(bytes(data))
    at = start + message.index(b"\x40\x01")  # field 8 (index levels) = 1
    data[at + 1] = levels
    damaged(bytes(data), match)

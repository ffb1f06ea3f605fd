"""Writing HFiles (`hoodie.hfile.write_hfile`) and the metadata table's HFILE_DATA log blocks
(`hoodie.logformat.hfile_data_block`): round trips through our reader, and byte for byte what
Apache Hudi 1.2 wrote for the same entries (tests/fixtures/hfile/README.md).
"""

from __future__ import annotations

import gzip
import json
import struct
import zlib
from pathlib import Path

import pytest
from listing_compare import deflated_with

from hoodie.hfile import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    BLOCK_HEADER_SIZE,
    COMPARATOR_CLASS_NAME,
    CREATE_TIME_TS,
    JAVA_DEFLATE,
    KEY_TAIL,
    KEY_VALUE_VERSION,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    RUN_LENGTH_DEFLATE,
    ChecksumType,
    Codec,
    Deflate,
    HFileReader,
    _java_hash_order,
    write_hfile,
)
from hoodie.logformat import BlockType, HeaderKey, encode_block, hfile_data_block, read_log_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hfile"
COMPUTED = {LAST_KEY, AVG_KEY_LEN, AVG_VALUE_LEN, KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY}


def read(data: bytes) -> HFileReader:
    return HFileReader(data, "ours.hfile")


def entries(count: int) -> list[tuple[bytes, bytes]]:
    """`count` keys and values, each of the same size."""
    return [(f"key-{i:06}".encode(), f"value-{i:06}".encode() * 4) for i in range(count)]


# -- round trips -----------------------------------------------------------------------------
def test_empty_file():
    data = write_hfile([], file_info={b"schema": b"{}"})
    reader = read(data)
    assert list(reader) == [] and reader.entry_count == 0
    assert reader.first_key is None and reader.last_key is None
    assert reader.get(b"a") is None
    assert reader.file_info[b"schema"] == b"{}"
    assert reader.file_info[LAST_KEY] == b""
    assert reader.file_info[AVG_KEY_LEN] == reader.file_info[AVG_VALUE_LEN] == bytes(4)
    # Apache Hudi 1.2's empty file: no data block, first offset -1, last 0.
    assert reader.data_index == []
    assert (reader.trailer.first_data_block_offset, reader.trailer.last_data_block_offset) == (
        -1,
        0,
    )
    assert reader.trailer.load_on_open_offset == 0


def test_one_entry():
    data = write_hfile([(b"k", b"v")])
    reader = read(data)
    assert list(reader) == [(b"k", b"v")]
    assert (reader.first_key, reader.last_key, reader.get(b"k")) == (b"k", b"k", b"v")
    assert reader.file_info[LAST_KEY] == b"\x00\x01k"
    assert reader.file_info[KEY_VALUE_VERSION] == struct.pack(">i", 1)
    assert reader.file_info[MAX_MEMSTORE_TS_KEY] == bytes(8)
    assert reader.file_info[CREATE_TIME_TS] == bytes(8)
    trailer = reader.trailer
    assert (trailer.major_version, trailer.minor_version) == (3, 0)
    assert trailer.comparator_class_name == COMPARATOR_CLASS_NAME
    assert trailer.compression_codec == Codec.GZ
    assert trailer.total_uncompressed_bytes is None
    assert (trailer.num_data_index_levels, trailer.data_index_count) == (1, 1)
    assert (trailer.meta_index_count, trailer.entry_count) == (0, 1)
    # The key-value as HBase lays it out, then the MVCC byte.
    payload = zlib.decompress(data[BLOCK_HEADER_SIZE : BLOCK_HEADER_SIZE + 100], 31)
    assert payload == struct.pack(">iih", 2 + 1 + 10, 1, 1) + b"k" + KEY_TAIL + b"v" + b"\x00"
    assert trailer.uncompressed_data_index_size == len(payload)


def test_many_entries_over_several_blocks():
    rows = entries(2000)
    data = write_hfile(rows, block_size=4096)
    reader = read(data)
    assert list(reader) == rows
    assert reader.entry_count == 2000
    assert len(reader.data_index) > 10
    # Each block holds at most block_size uncompressed bytes; the next key would not have fit.
    sizes = [reader.block_header(e.offset).uncompressed_size for e in reader.data_index]
    assert max(sizes) <= 4096
    per_entry = len(rows[0][0]) + len(rows[0][1]) + 21
    assert min(sizes[:-1]) > 4096 - per_entry
    # The index holds each block's first key, whole: the keys at the running entry counts.
    per_block = [size // per_entry for size in sizes]
    starts = [sum(per_block[:n]) for n in range(len(per_block))]
    assert [e.key for e in reader.data_index] == [rows[i][0] for i in starts]
    # Blocks follow each other, each after the first naming itself as the previous, as 1.2.
    headers = [reader.block_header(e.offset) for e in reader.data_index]
    assert headers[0].previous_block_offset == -1
    assert [h.previous_block_offset for h in headers[1:]] == [h.offset for h in headers[1:]]
    assert [h.offset + h.on_disk_size for h in headers[:-1]] == [h.offset for h in headers[1:]]
    assert {h.checksum_type for h in headers} == {ChecksumType.NULL}
    assert reader.trailer.uncompressed_data_index_size == sum(sizes)
    assert reader.trailer.last_data_block_offset == headers[-1].offset
    # Lookups: hits in every block, misses between keys and past both ends.
    for i in range(0, 2000, 37):
        assert reader.get(rows[i][0]) == rows[i][1]
    for missing in (b"", b"key", b"key-000100x", b"key-002000", b"zzz"):
        assert reader.get(missing) is None
    wanted = [rows[i][0] for i in range(1999, 0, -97)] + [b"key-0005000", b"a"]
    assert list(reader.lookup(wanted)) == sorted((k, dict(rows)[k]) for k in wanted[:-2])


def test_a_block_is_cut_where_the_next_entry_would_pass_block_size():
    one = len(b"k0") + len(b"v" * 9) + 21  # 32 bytes a key-value
    rows = [(f"k{i}".encode(), b"v" * 9) for i in range(4)]
    assert [len(read(write_hfile(rows, block_size=size)).data_index)
            for size in (one, 2 * one - 1, 2 * one, 4 * one)] == [4, 4, 2, 1]  # fmt: skip


def test_non_ascii_keys_sort_by_their_utf8_bytes():
    keys = sorted({"a", "é", "z", "日本", "\U0001f600", "ab", "Ω"}, key=lambda k: k.encode())
    rows = [(k.encode(), k.encode() * 3) for k in keys]
    reader = read(write_hfile(rows, block_size=32))
    assert list(reader) == rows
    assert reader.last_key == "\U0001f600".encode()
    assert reader.get("日本".encode()) == "日本".encode() * 3
    assert reader.get("日".encode()) is None


def test_meta_blocks_and_file_info():
    data = write_hfile(
        [(b"a", b"1")],
        file_info={b"schema": b'{"type": "record"}', b"custom": b"\x00\x01"},
        meta_blocks={"bloomFilter": b"bits" * 1000, "other": b""},
    )
    reader = read(data)
    assert reader.meta_block("bloomFilter") == b"bits" * 1000
    assert reader.meta_block("other") == b""
    assert reader.meta_block("none") is None
    assert reader.file_info[b"custom"] == b"\x00\x01"
    assert reader.trailer.meta_index_count == 2


def test_the_writer_refuses_what_hudi_could_not_read():
    with pytest.raises(ValueError, match="strictly increasing"):
        write_hfile([(b"b", b""), (b"a", b"")])
    with pytest.raises(ValueError, match="strictly increasing"):
        write_hfile([(b"a", b""), (b"a", b"")])
    with pytest.raises(ValueError, match="at most 32767 bytes"):
        write_hfile([(b"k" * 32768, b"")])
    with pytest.raises(TypeError, match="bytes"):
        write_hfile([("a", b"")])  # type: ignore[list-item]
    for computed in COMPUTED:
        with pytest.raises(ValueError, match="the writer's to compute"):
            write_hfile([], file_info={computed: b"x"})
    with pytest.raises(ValueError, match="block_size"):
        write_hfile([], block_size=0)


def test_java_hash_map_order():
    # The file info order Apache Hudi 1.2 wrote (a Java HashMap's), from the inserted order.
    inserted = ["MAX_MEMSTORE_TS_KEY", "schema", "bloomFilterTypeCode", "minRecordKey",
                "maxRecordKey", "hfile.LASTKEY", "hfile.AVG_KEY_LEN", "hfile.CREATE_TIME_TS",
                "hfile.AVG_VALUE_LEN", "KEY_VALUE_VERSION"]  # fmt: skip
    reader = HFileReader((FIXTURES / "mdt_files_base_1_2_0.hfile").read_bytes(), "1.2")
    assert _java_hash_order(inserted) == [name.decode() for name in reader.file_info]
    # Past 12 names the table doubles to 32 buckets (and to 64 past 24).
    many = [f"name{i}" for i in range(30)]
    assert sorted(_java_hash_order(many)) == sorted(many)
    assert _java_hash_order(many) != many


# -- the same bytes as Apache Hudi 1.2 ---------------------------------------------------------
def test_base_file_bytes_equal_apache_hudi_1_2():
    """The 1.2 metadata table's base file, written again from its entries, file info and
    bloom filter meta block, is the same file byte for byte: block layout, gzip streams,
    index, file info order, trailer."""
    theirs = (FIXTURES / "mdt_files_base_1_2_0.hfile").read_bytes()
    reader = HFileReader(theirs, "1.2")
    info = {k: v for k, v in reader.file_info.items() if k not in COMPUTED}
    bloom = reader.meta_block("bloomFilter")
    assert bloom is not None
    ours = write_hfile(list(reader), file_info=info, meta_blocks={"bloomFilter": bloom})
    again = read(ours)
    assert again.trailer == reader.trailer
    assert [again.block_header(e.offset) for e in again.data_index] == [
        reader.block_header(e.offset) for e in reader.data_index
    ]
    assert again.file_info == reader.file_info
    assert list(again.file_info) == list(reader.file_info)
    assert ours == theirs


def test_log_block_bytes_equal_apache_hudi_1_2():
    data = (FIXTURES / "mdt_files_log_1_2_0.log").read_bytes()
    (block,) = [b for b in read_log_file(data) if b.block_type == BlockType.HFILE_DATA]
    theirs = block.hfile()
    schema = block.header[HeaderKey.SCHEMA]
    instant = block.header[HeaderKey.INSTANT_TIME]
    # Our block: the same entries, header and schema; the creation time is ours (0).
    ours = hfile_data_block(list(theirs), instant, schema)
    (read_back,) = read_log_file(ours)
    assert read_back.header == block.header
    assert list(read_back.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
    assert list(read_back.hfile()) == list(theirs)
    assert read_back.hfile().file_info[b"schema"] == schema.encode()
    assert read_back.hfile().file_info[CREATE_TIME_TS] == bytes(8)
    # With 1.2's creation time the HFile, and so the whole block, are 1.2's bytes.
    created = {b"schema": schema.encode(), CREATE_TIME_TS: theirs.file_info[CREATE_TIME_TS]}
    content = write_hfile(list(theirs), file_info=created)
    assert content == block.content
    framed = encode_block(BlockType.HFILE_DATA, block.header, content)
    assert framed == data[block.offset : block.offset + block.size]


def test_structure_agrees_with_apache_hudi_0_15():
    """0.15 wrote with HBase's writer: other checksums and trailer quirks, but the same
    entries, file info and meta blocks read back from our file."""
    theirs = HFileReader((FIXTURES / "mdt_files_base_0_15_0.hfile").read_bytes(), "0.15")
    info = {k: v for k, v in theirs.file_info.items() if k not in COMPUTED}
    bloom = theirs.meta_block("bloomFilter")
    assert bloom is not None
    meta = {"bloomFilter": bloom}
    ours = read(write_hfile(list(theirs), file_info=info, meta_blocks=meta))
    assert list(ours) == list(theirs)
    assert set(ours.file_info) == set(theirs.file_info)
    for name in info:
        assert ours.file_info[name] == theirs.file_info[name], name
    # HBase stores the whole KeyValue key as the last key (and in the index) and averages
    # whole keys; 1.2 the row only, and so do we unless asked for HBase's keys.
    assert theirs.file_info[LAST_KEY] == b"\x00\x01b" + KEY_TAIL
    assert ours.file_info[LAST_KEY] == b"\x00\x01b"
    assert ours.last_key == theirs.last_key == b"b"
    hbase = read(write_hfile(list(theirs), file_info=info, meta_blocks=meta, hbase_keys=True))
    assert hbase.file_info[LAST_KEY] == theirs.file_info[LAST_KEY]
    assert list(hbase) == list(theirs)
    assert ours.meta_block("bloomFilter") == bloom
    assert (ours.trailer.entry_count, ours.trailer.data_index_count) == (3, 1)


def test_hfile_data_block_round_trip():
    rows = entries(300)
    schema = json.dumps({"type": "record", "name": "R", "fields": []})
    data = hfile_data_block(rows, "20261127000000000", schema, block_size=1024)
    (block,) = read_log_file(data)
    assert block.block_type == BlockType.HFILE_DATA
    assert block.instant_time == "20261127000000000" and block.schema == schema
    reader = block.hfile()
    assert list(reader) == rows and len(reader.data_index) > 5
    whole = hfile_data_block(rows, "20261127000000000", schema, block_size=1024, hbase_keys=True)
    (block,) = read_log_file(whole)
    assert block.hfile().file_info[LAST_KEY] == b"\x00\x0akey-000299" + KEY_TAIL
    assert list(block.hfile()) == rows
    with pytest.raises(ValueError, match="instant"):
        hfile_data_block(rows, "now", schema)


def test_how_the_data_blocks_are_deflated():
    """Data blocks deflated as asked (Java's default otherwise); either way they read back."""
    rows = entries(300)
    default = write_hfile(rows, block_size=1024)
    run_length = write_hfile(rows, block_size=1024, deflate=RUN_LENGTH_DEFLATE)
    assert JAVA_DEFLATE == Deflate(6, zlib.Z_DEFAULT_STRATEGY)
    assert deflated_with(default, JAVA_DEFLATE)
    assert not deflated_with(default, RUN_LENGTH_DEFLATE)
    assert deflated_with(run_length, RUN_LENGTH_DEFLATE)
    assert not deflated_with(run_length, JAVA_DEFLATE)
    assert list(read(run_length)) == list(read(default)) == rows
    block = hfile_data_block(rows, "20261127000000000", "{}", deflate=RUN_LENGTH_DEFLATE)
    (read_back,) = read_log_file(block)
    assert deflated_with(read_back.content, RUN_LENGTH_DEFLATE)
    assert list(read_back.hfile()) == rows


def test_gzip_streams_are_javas():
    """Each block's payload is one gzip member with Java's header (no mtime, OS 255)."""
    data = write_hfile(entries(10))
    payload = data[BLOCK_HEADER_SIZE:]
    assert payload[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    assert gzip.decompress(payload[: read(data).block_header(0).on_disk_data_size_with_header
                                   - BLOCK_HEADER_SIZE])  # fmt: skip


def root_index_keys(data: bytes) -> list[bytes]:
    """The raw keys of a file's root data index (what HBase's reader parses)."""
    reader = read(data)
    header = reader.block_header(reader.trailer.load_on_open_offset)
    start = header.offset + BLOCK_HEADER_SIZE
    payload = gzip.decompress(data[start : header.offset + header.on_disk_data_size_with_header])
    keys, pos = [], 0
    for _ in range(reader.trailer.data_index_count):
        length = payload[pos + 12]  # a one-byte vint: the keys here are short
        keys.append(payload[pos + 13 : pos + 13 + length])
        pos += 13 + length
    return keys


def test_hbase_keys_in_the_index_and_last_key():
    """HBase's reader (Apache Hudi 0.15's for the metadata table) parses index keys as whole
    KeyValue keys; `hbase_keys` writes them so, and our reader reads either layout."""
    rows = [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    plain, whole = write_hfile(rows, block_size=1), write_hfile(rows, block_size=1, hbase_keys=True)
    assert root_index_keys(plain) == [b"\x00\x01a", b"\x00\x01b", b"\x00\x01c"]
    assert root_index_keys(whole) == [b"\x00\x01" + k + KEY_TAIL for k, _ in rows]
    assert read(whole).file_info[LAST_KEY] == b"\x00\x01c" + KEY_TAIL
    for data in (plain, whole):
        reader = read(data)
        assert list(reader) == rows and reader.last_key == b"c"
        assert [reader.get(k) for k in (b"a", b"b", b"c", b"bb")] == [b"1", b"2", b"3", None]

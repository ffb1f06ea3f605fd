"""HFile version 3, the subset Apache Hudi uses: the base files and log blocks of the metadata
table are HFiles of sorted (key, value) pairs, and readers look keys up through the file's
block index instead of reading it whole.

Apache Hudi 0.15 writes them with HBase's writer, 1.x with its own (`hudi-io`), and both read
them with Hudi's own reader, which is what this module follows (Hudi documents the subset in
`hudi-io/hfile_format.md`; hudi-rs reads the same). All integers are big-endian::

    [data block]* [meta block]* | root data index | meta index | file info | trailer

Every block but the trailer starts with a 33-byte header: magic (8), on-disk size without
the header (int32, checksum bytes included), uncompressed payload size (int32), previous
block offset (int64), checksum type (byte), bytes per checksum (int32), on-disk size of
header and payload (int32). The payload follows, compressed with the file's codec (each
block a gzip stream under GZ), then 4 checksum bytes per 16 KiB chunk. Like Hudi's and
hudi-rs's readers, this one does not verify checksums (Hudi 1.x writes them as zeros).

* A data block holds key-values: int32 key length, int32 value length, the key, the value
  and, when file info says KEY_VALUE_VERSION 1, a Hadoop vlong MVCC timestamp. The key is
  HBase's KeyValue key: int16 row length, the row (the record's key, e.g. the metadata
  table's UTF-8 key), family length and family, qualifier, int64 timestamp, type byte.
  Hudi's rows are the keys this module deals in; the rest is constant
  (no family, timestamp Long.MAX_VALUE, type Put).
* The root data index lists per data block its offset, on-disk size and first key (the
  KeyValue key or just int16 length + row; HBase may put a shorter "fake" key there that
  sorts between the previous block's last key and the block's first). With more than one
  level it points at intermediate and leaf index blocks that list the data blocks.
* The meta index lists meta blocks by name (a `bloomFilter` of the keys in base files).
* File info is `PBUF` + a protobuf `InfoProto` of (name, value) byte pairs: the Avro
  `schema` of the values, `hfile.LASTKEY`, average key and value lengths, and so on.
* The trailer is the last 4096 bytes: magic `TRABLK"$`, a length-delimited protobuf
  `TrailerProto` (offsets, counts, codec), zero padding, then the minor version (1 byte)
  and the major version (3 bytes, always 3).

`HFileReader` reads a file held in memory (a log block's) or, through `HFileReader.open`, one
in storage by ranged reads: its tail and load-on-open section, then the index and data blocks
a lookup needs (`FileIO.read_range`). `write_hfile` writes what Apache Hudi 1.2 writes, byte
for byte where the inputs are the same (see its docstring); protobuf and gzip are done by
hand with the standard library.
"""

from __future__ import annotations

import bisect
import enum
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from .exceptions import CorruptDataFileError
from .storage import FileIO

MAJOR_VERSION = 3
TRAILER_SIZE = 4096
BLOCK_HEADER_SIZE = 33
BYTES_PER_CHECKSUM = 16384
CHECKSUM_SIZE = 4
# What Apache Hudi 1.x names as the comparator of its HFiles (its readers ignore it).
COMPARATOR_CLASS_NAME = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"

# HBase's writer adds a level each time a level's index outgrows a block; eight levels of
# 128 KiB index blocks would index more data blocks than any file has.
_MAX_INDEX_LEVELS = 8

TRAILER_MAGIC = b'TRABLK"$'
FILE_INFO_MAGIC = b"PBUF"

# File info keys.
LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
_COMPUTED_FILE_INFO = (LAST_KEY, AVG_KEY_LEN, AVG_VALUE_LEN, KEY_VALUE_VERSION,
                       MAX_MEMSTORE_TS_KEY)  # fmt: skip

# The KeyValue key after the row, as Hudi writes it: family length 0, timestamp
# Long.MAX_VALUE ("latest"), type 4 (Put).
KEY_TAIL = b"\x00" + struct.pack(">q", 0x7FFFFFFFFFFFFFFF) + b"\x04"
# What each key-value takes besides its row and value: key and value lengths, row length,
# the key's tail and the MVCC byte.
_KEY_VALUE_OVERHEAD = 4 + 4 + 2 + len(KEY_TAIL) + 1

# Hadoop GzipCodec's stream header as Java writes it: no name, mtime 0, OS "unknown".
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

_HEADER = struct.Struct(">8siiqBii")
_INT = struct.Struct(">i")
_SHORT = struct.Struct(">h")
_INDEX_ENTRY = struct.Struct(">qi")
_KEY_VALUE_LENGTHS = struct.Struct(">ii")


class BlockType(bytes, enum.Enum):
    """The magic that starts each kind of block."""

    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    BLOOM_CHUNK = b"BLMFBLK2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    GENERAL_BLOOM_META = b"BLMFMET2"
    DELETE_FAMILY_BLOOM_META = b"DFBLMET2"


class Codec(enum.IntEnum):
    """Compression of block payloads: HBase's `Compression.Algorithm` ordinals, as the trailer
    stores them. The reader handles NONE and GZ, as Apache Hudi's and hudi-rs's do."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


class ChecksumType(enum.IntEnum):
    NULL = 0
    CRC32 = 1
    CRC32C = 2


@dataclass(frozen=True)
class Trailer:
    """The fixed-size end of the file: where the load-on-open section is, and counts."""

    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int | None
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator_class_name: str
    compression_codec: int
    minor_version: int
    major_version: int


@dataclass(frozen=True)
class BlockHeader:
    """A block's 33-byte header, with the block's offset in the file."""

    offset: int
    magic: bytes
    on_disk_size_without_header: int
    uncompressed_size: int
    previous_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size(self) -> int:
        """Bytes the block takes in the file: header, payload and checksums."""
        return BLOCK_HEADER_SIZE + self.on_disk_size_without_header


@dataclass(frozen=True)
class IndexEntry:
    """One entry of a block index: the block's offset, on-disk size and first key (for data
    blocks the row of the KeyValue key, which may be a "fake" shorter key; for meta blocks
    the block's name)."""

    offset: int
    size: int
    key: bytes


class _Whole:
    """The bytes of a file held in memory (a log block's HFile, or a file read whole)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self.size = len(data)

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ValueError(f"bytes {offset} to {offset + length} are outside the file's "
                             f"{self.size}")  # fmt: skip
        return self._data[offset : offset + length]

    def keep(self, offset: int, length: int) -> None:
        """Hold these bytes for the reader's life (nothing to do: all are held)."""

    def prefetch(self, spans: Iterable[tuple[int, int]]) -> None:
        """Hold these spans until `release` (nothing to do: all are held)."""

    def release(self) -> None:
        """Drop what the last `prefetch` held."""


class _Ranged:
    """The bytes of a file in storage, read by ranges (`FileIO.read_range`).

    What the reader keeps for its life (the trailer and the load-on-open section) is read
    when it opens; a lookup first names every block it will read (`prefetch`), and those are
    read in as few requests as the gaps between them allow: blocks less than `_MERGE_GAP`
    apart share one read (the bytes between cost less than another request on an object
    store). Where the blocks to read come to half the file or more, the file is read whole
    in one request instead, and kept: a lookup of most keys costs what reading the file
    costs, and no more than twice what its blocks alone would."""

    def __init__(self, storage: FileIO, relative: str, size: int) -> None:
        self.storage = storage
        self.relative = relative
        self.size = size
        self._whole: bytes | None = None
        self._kept: list[tuple[int, bytes]] = []
        self._held: list[tuple[int, bytes]] = []

    def read(self, offset: int, length: int) -> bytes:
        if self._whole is not None:
            return _Whole(self._whole).read(offset, length)
        for start, data in (*self._held, *self._kept):
            if start <= offset and offset + length <= start + len(data):
                return data[offset - start : offset - start + length]
        return self._fetch(offset, length)

    def _covered(self, offset: int, length: int) -> bool:
        return self._whole is not None or any(
            start <= offset and offset + length <= start + len(data)
            for start, data in (*self._held, *self._kept)
        )

    def _fetch(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ValueError(f"bytes {offset} to {offset + length} are outside the file's "
                             f"{self.size}")  # fmt: skip
        data = self.storage.read_range(self.relative, offset, length)
        if len(data) != length:
            raise ValueError(f"the file ends at byte {offset + len(data)}, short of the "
                             f"{self.size} bytes it was listed with")  # fmt: skip
        return data

    def keep(self, offset: int, length: int) -> None:
        if self._covered(offset, length):
            return
        if length * 2 >= self.size:
            self._whole = self._fetch(0, self.size)
            self._kept = []
        else:
            self._kept.append((offset, self._fetch(offset, length)))

    def prefetch(self, spans: Iterable[tuple[int, int]]) -> None:
        wanted = sorted((max(0, offset), min(self.size, offset + length))
                        for offset, length in spans if length > 0)  # fmt: skip
        merged: list[list[int]] = []
        for start, end in wanted:
            if self._covered(start, end - start):
                continue
            if merged and start <= merged[-1][1] + _MERGE_GAP:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        if not merged:
            return
        if sum(end - start for start, end in merged) * 2 >= self.size:
            self._whole = self._fetch(0, self.size)
            self._kept, self._held = [], []
            return
        self._held = [(start, self._fetch(start, end - start)) for start, end in merged]

    def release(self) -> None:
        self._held = []


# What the first read of a ranged open takes from the end of the file: the trailer and, for
# any file but the largest, the whole load-on-open section (indexes and file info).
_OPEN_READ = 64 << 10
# Blocks closer than this are read in one request (see `_Ranged`).
_MERGE_GAP = 128 << 10


class HFileReader:
    """Reads an HFile: file info, meta blocks, and the key-values in key order, whole or by
    key through the block index (only the data blocks a lookup needs are decompressed).

    `HFileReader(data, name)` reads a file held in memory (`data`, e.g. the HFile inside a log
    block); `HFileReader.open(storage, relative, size)` reads one in storage through ranged
    reads: the trailer and load-on-open section (root index, meta index, file info) when it
    opens, then per lookup only the intermediate and leaf index blocks and the data blocks the
    sorted keys fall in, coalesced into few requests; a lookup whose blocks make up half the
    file or more reads it whole, once (see `_Ranged`). `name` (the file's path or URI) is what
    errors name: damaged or unsupported files raise `CorruptDataFileError` naming the file.
    """

    def __init__(self, data: bytes, name: str) -> None:
        self._open(_Whole(bytes(data)), name)

    @classmethod
    def open(cls, storage: FileIO, relative: str, size: int | None = None) -> HFileReader:
        """The HFile `relative` of `storage`, read by ranges; `size` is its size as listed
        (asked of the store when not given). A file shorter than that is damage."""
        reader = cls.__new__(cls)
        reader._open(_Ranged(storage, relative, storage.size(relative) if size is None else size),
                     storage.uri(relative))  # fmt: skip
        return reader

    def _open(self, source: _Whole | _Ranged, name: str) -> None:
        self._source = source
        self.name = name
        self._end = source.size - TRAILER_SIZE  # where blocks may end
        with self._damage("the trailer"):
            if source.size < TRAILER_SIZE:
                raise ValueError(f"the file has {source.size} bytes, less than a trailer's")
            tail = min(source.size, _OPEN_READ)
            source.keep(source.size - tail, tail)
            self.trailer = self._read_trailer()
        self.codec = Codec(self.trailer.compression_codec)
        with self._damage("the block index"):
            levels = self.trailer.num_data_index_levels
            if not 1 <= levels <= _MAX_INDEX_LEVELS:
                raise ValueError(f"{levels} data index levels")
            load_on_open = self.trailer.load_on_open_offset
            if not 0 <= load_on_open <= self._end - BLOCK_HEADER_SIZE:
                raise ValueError(f"the load-on-open section at byte {load_on_open} is outside "
                                 "the file's blocks")  # fmt: skip
            source.keep(load_on_open, self._end - load_on_open)
            _, root = self._read_block(load_on_open, (BlockType.ROOT_INDEX,))
            self._root = self._index_entries(
                _root_index_entries(root, self.trailer.data_index_count)
            )
            self.meta_index = self._read_meta_index()
        with self._damage("file info"):
            self.file_info = self._read_file_info()
        self._with_mvcc = self.file_info.get(KEY_VALUE_VERSION) == _INT.pack(1)
        self.entry_count = self.trailer.entry_count
        # an index block's first key is its first child's: the root's first is the file's
        self.first_key: bytes | None = self._root[0].key if self._root else None
        self.last_key: bytes | None = None
        last = self.file_info.get(LAST_KEY)
        if last:
            with self._damage("file info's hfile.LASTKEY"):
                self.last_key = _row_of(last)
        self._index_blocks: dict[int, list[IndexEntry]] = {}
        self._leaves: list[IndexEntry] | None = None
        self._cached: tuple[int, list[bytes], list[bytes]] | None = None

    # -- public --------------------------------------------------------------------------------
    @property
    def data_index(self) -> list[IndexEntry]:
        """Every data block's index entry (offset, on-disk size, first row), in order: the
        leaf level of the index, every index block read for it."""
        if self._leaves is None:
            with self._damage("the block index"):
                entries = self._root
                for _ in range(self.trailer.num_data_index_levels - 1):
                    self._source.prefetch((entry.offset, entry.size) for entry in entries)
                    deeper: list[IndexEntry] = []
                    for entry in entries:
                        deeper.extend(self._children(entry))
                        if len(deeper) > self._end // BLOCK_HEADER_SIZE:
                            raise ValueError("the index lists more blocks than the file can hold")
                    entries = deeper
                self._source.release()
                if any(a.key > b.key for a, b in zip(entries, entries[1:])):
                    raise ValueError("the data block index's keys are not in order")
                self._leaves = entries
        return self._leaves

    def meta_block(self, name: str) -> bytes | None:
        """The payload of the meta block `name` (e.g. "bloomFilter"), or None if there is none."""
        wanted = name.encode("utf-8")
        for entry in self.meta_index:
            if entry.key == wanted:
                with self._damage(f"meta block {name!r}"):
                    self._source.prefetch([(entry.offset, entry.size)])
                    try:
                        return self._read_block(entry.offset, (BlockType.META,))[1]
                    finally:
                        self._source.release()
        return None

    def __iter__(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (row key, value) in key order; duplicate keys (HBase allows them) in file
        order."""
        index = self.data_index
        with self._damage("the data blocks"):
            self._source.prefetch((entry.offset, entry.size) for entry in index)
        try:
            count = 0
            previous: bytes | None = None
            for number in range(len(index)):
                _, rows, values = self._block(number)
                if previous is not None and rows and rows[0] < previous:
                    raise self._damaged(f"data block {number} starts before its predecessor "
                                        "ends")  # fmt: skip
                count += len(rows)
                previous = rows[-1] if rows else previous
                yield from zip(rows, values)
            if count != self.entry_count:
                raise self._damaged(f"the data blocks hold {count} entries, the trailer says "
                                    f"{self.entry_count}")  # fmt: skip
        finally:
            self._source.release()

    def get(self, key: bytes) -> bytes | None:
        """The value of `key` (its first, should the file repeat it), or None."""
        for _, value in self.lookup([key]):
            return value
        return None

    def lookup(self, keys: Iterable[bytes]) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) for each of `keys` the file holds, in key order: the keys are sorted
        and deduplicated first, so each index and data block is read and decompressed at most
        once, and (reading by ranges) the blocks of all keys are read together."""
        wanted = sorted(set(keys))
        if self.last_key is not None:
            wanted = wanted[: bisect.bisect_right(wanted, self.last_key)]
        if not wanted or not self._root:
            return
        with self._damage("the block index and data blocks"):
            groups = _assign(wanted, self._root)
            for _ in range(self.trailer.num_data_index_levels - 1):
                self._source.prefetch((entry.offset, entry.size) for entry, _ in groups)
                groups = [pair for entry, some in groups
                          for pair in _assign(some, self._children(entry))]  # fmt: skip
            self._source.prefetch((entry.offset, entry.size) for entry, _ in groups)
        try:
            for entry, some in groups:
                _, rows, values = self._data_block(entry, None)
                for key in some:
                    at = bisect.bisect_left(rows, key)
                    if at < len(rows) and rows[at] == key:
                        yield key, values[at]
        finally:
            self._source.release()

    def block_header(self, offset: int) -> BlockHeader:
        """The header of the block at `offset` (tests compare files' layouts with it)."""
        with self._damage(f"the block at byte {offset}"):
            return self._header(offset)

    # -- blocks ----------------------------------------------------------------------------------
    def _children(self, entry: IndexEntry) -> list[IndexEntry]:
        """The entries of the intermediate or leaf index block `entry` points at (each index
        block is read once)."""
        children = self._index_blocks.get(entry.offset)
        if children is None:
            _, payload = self._read_block(
                entry.offset, (BlockType.INTERMEDIATE_INDEX, BlockType.LEAF_INDEX)
            )
            children = self._index_entries(_non_root_index_entries(payload))
            self._index_blocks[entry.offset] = children
        return children

    def _index_entries(self, entries: list[IndexEntry]) -> list[IndexEntry]:
        """Index entries with their keys cut to rows, checked: blocks inside the file, rows in
        order."""
        out = []
        for entry in entries:
            if not 0 <= entry.offset < self._end or entry.size < 0:
                raise ValueError(f"a block index entry points at byte {entry.offset}")
            out.append(IndexEntry(entry.offset, entry.size, _row_of(entry.key)))
        if any(a.key > b.key for a, b in zip(out, out[1:])):
            raise ValueError("the data block index's keys are not in order")
        return out

    def _block(self, number: int) -> tuple[int, list[bytes], list[bytes]]:
        """Data block `number` (of `data_index`) decoded to rows and values."""
        return self._data_block(self.data_index[number], number)

    def _data_block(
        self, entry: IndexEntry, number: int | None
    ) -> tuple[int, list[bytes], list[bytes]]:
        """The data block of index entry `entry` decoded to rows and values; the last one
        decoded is kept, so a sorted lookup decompresses each block once."""
        if self._cached is not None and self._cached[0] == entry.offset:
            return self._cached
        what = (f"data block {number} (byte {entry.offset})" if number is not None
                else f"the data block at byte {entry.offset}")  # fmt: skip
        with self._damage(what):
            header, payload = self._read_block(entry.offset, (BlockType.DATA,))
            if header.on_disk_size != entry.size:
                raise ValueError(
                    f"the index gives it {entry.size} bytes, its header {header.on_disk_size}"
                )
            rows, values = self._key_values(payload)
            if not rows or rows[0] < entry.key:
                raise ValueError("its first key is before its index key, or it has none")
            if any(a > b for a, b in zip(rows, rows[1:])):
                raise ValueError("its keys are not in order")
        self._cached = (entry.offset, rows, values)
        return self._cached

    def _key_values(self, payload: bytes) -> tuple[list[bytes], list[bytes]]:
        rows: list[bytes] = []
        values: list[bytes] = []
        pos, end = 0, len(payload)
        while pos < end:
            key_length, value_length = _KEY_VALUE_LENGTHS.unpack_from(payload, pos)
            pos += 8
            if key_length < 2 or value_length < 0 or pos + key_length + value_length > end:
                raise ValueError(
                    f"a key-value of key length {key_length} and value length {value_length} "
                    "runs past the block's end"
                )
            key = payload[pos : pos + key_length]
            pos += key_length
            rows.append(_row_of(key))
            values.append(payload[pos : pos + value_length])
            pos += value_length
            if self._with_mvcc:
                _, pos = _read_hadoop_vlong(payload, pos)
        if pos != end:
            raise ValueError("the last key-value runs past the block's end")
        return rows, values

    # -- structure -----------------------------------------------------------------------------
    # -- structure -----------------------------------------------------------------------------
    def _read_trailer(self) -> Trailer:
        trailer = self._source.read(self._end, TRAILER_SIZE)
        major = int.from_bytes(trailer[-3:], "big")
        minor = trailer[-4]
        if trailer[: len(TRAILER_MAGIC)] != TRAILER_MAGIC:
            raise ValueError(f"the trailer's magic is {trailer[:8]!r}, not {TRAILER_MAGIC!r}")
        if major != MAJOR_VERSION:
            raise _Unsupported(
                f"HFile major version {major} (minor {minor}); only version {MAJOR_VERSION} "
                "(what Apache Hudi writes) is read"
            )
        size, pos = _read_varint(trailer, len(TRAILER_MAGIC))
        if pos + size > TRAILER_SIZE - 4:
            raise ValueError(f"the trailer's message length {size} runs past the trailer")
        fields = dict(_proto_fields(trailer[pos : pos + size]))

        def number(field: int, default: int | None = None) -> int:
            value = fields.get(field, default)
            if not isinstance(value, int):
                raise ValueError(f"trailer field {field} is missing or not a number")
            return value

        comparator = fields.get(11, b"")
        codec_id = number(12, int(Codec.GZ))
        try:
            codec = Codec(codec_id)
        except ValueError:
            raise _Unsupported(f"unknown compression codec {codec_id}") from None
        if codec not in (Codec.NONE, Codec.GZ):
            raise _Unsupported(
                f"compression codec {codec.name}; only NONE and GZ are read (Apache Hudi "
                "writes GZ: hoodie.hfile.compression.algorithm)"
            )
        total = fields.get(4)
        return Trailer(
            file_info_offset=number(1),
            load_on_open_offset=number(2),
            uncompressed_data_index_size=number(3, 0),
            total_uncompressed_bytes=total if isinstance(total, int) else None,
            data_index_count=number(5, 0),
            meta_index_count=number(6, 0),
            entry_count=number(7, 0),
            num_data_index_levels=number(8, 1),
            first_data_block_offset=_signed64(number(9, 0)),
            last_data_block_offset=_signed64(number(10, 0)),
            comparator_class_name=comparator.decode("utf-8")
            if isinstance(comparator, bytes)
            else "",
            compression_codec=codec_id,
            minor_version=minor,
            major_version=major,
        )

    def _read_meta_index(self) -> list[IndexEntry]:
        root = self._header(self.trailer.load_on_open_offset)
        _, payload = self._read_block(root.offset + root.on_disk_size, (BlockType.ROOT_INDEX,))
        return _root_index_entries(payload, self.trailer.meta_index_count)

    def _read_file_info(self) -> dict[bytes, bytes]:
        _, payload = self._read_block(self.trailer.file_info_offset, (BlockType.FILE_INFO,))
        if payload[: len(FILE_INFO_MAGIC)] != FILE_INFO_MAGIC:
            raise ValueError(f"file info starts {payload[:4]!r}, not {FILE_INFO_MAGIC!r}")
        size, pos = _read_varint(payload, len(FILE_INFO_MAGIC))
        if pos + size > len(payload):
            raise ValueError(f"file info's message length {size} runs past its block")
        info: dict[bytes, bytes] = {}
        for field, pair in _proto_fields(payload[pos : pos + size]):
            if field != 1 or not isinstance(pair, bytes):
                continue
            parts = dict(_proto_fields(pair))
            name, value = parts.get(1, b""), parts.get(2, b"")
            if not isinstance(name, bytes) or not isinstance(value, bytes):
                raise ValueError("a file info entry is not a pair of byte strings")
            info[name] = value
        return info

    def _header(self, offset: int) -> BlockHeader:
        if not 0 <= offset <= self._end - BLOCK_HEADER_SIZE:
            raise ValueError(f"a block header at byte {offset} is outside the file's blocks")
        header = BlockHeader(offset, *_HEADER.unpack(self._source.read(offset, BLOCK_HEADER_SIZE)))
        if header.on_disk_size_without_header < 0 or header.uncompressed_size < 0:
            raise ValueError(f"the block at byte {offset} has a negative size")
        if header.offset + header.on_disk_size > self._end:
            raise ValueError(
                f"the block at byte {offset} ({header.on_disk_size} bytes) runs past the "
                "file's blocks"
            )
        if not BLOCK_HEADER_SIZE <= header.on_disk_data_size_with_header <= header.on_disk_size:
            raise ValueError(
                f"the block at byte {offset} says its payload ends at "
                f"{header.on_disk_data_size_with_header}, outside the block"
            )
        return header

    def _read_block(self, offset: int, kinds: tuple[BlockType, ...]) -> tuple[BlockHeader, bytes]:
        header = self._header(offset)
        if header.magic not in {kind.value for kind in kinds}:
            expected = " or ".join(kind.name for kind in kinds)
            raise ValueError(
                f"the block at byte {offset} has magic {header.magic!r}, not {expected}"
            )
        start = offset + BLOCK_HEADER_SIZE
        stored = self._source.read(start, header.on_disk_data_size_with_header - BLOCK_HEADER_SIZE)
        if self.codec == Codec.NONE:
            payload = stored
        else:
            payload = _gunzip(stored, header.uncompressed_size)
        if len(payload) != header.uncompressed_size:
            raise ValueError(
                f"the block at byte {offset} holds {len(payload)} bytes, its header says "
                f"{header.uncompressed_size}"
            )
        return header, payload

    def _damage(self, what: str) -> AbstractContextManager[None]:
        return _damage(self.name, what)

    def _damaged(self, what: str) -> CorruptDataFileError:
        return CorruptDataFileError(f"HFile {self.name} is damaged: {what}", self.name)


class _Unsupported(Exception):
    """An HFile this reader does not handle (raised as CorruptDataFileError by `_damage`)."""


@contextmanager
def _damage(name: str, what: str) -> Iterator[None]:
    """Turns what parsing bytes raises into `CorruptDataFileError` naming the file."""
    try:
        yield
    except CorruptDataFileError:
        raise
    except _Unsupported as error:
        raise CorruptDataFileError(f"HFile {name} is not readable here: {error}", name) from error
    except (ValueError, IndexError, struct.error, zlib.error, EOFError) as error:
        raise CorruptDataFileError(
            f"HFile {name} is damaged: {what} does not read ({type(error).__name__}: {error})",
            name,
        ) from error


def _assign(keys: list[bytes], entries: list[IndexEntry]) -> list[tuple[IndexEntry, list[bytes]]]:
    """Sorted `keys` by the block of `entries` (an index level, by first row) that can hold
    each: the last whose row is at most the key (an index row is at most its block's first
    row, HBase may shorten it, and greater than the previous block's last row; repeats of a
    key stay in one block, as both Hudi's and HBase's writers keep them). Keys before the
    first block are in none."""
    rows = [entry.key for entry in entries]
    out: list[tuple[IndexEntry, list[bytes]]] = []
    for key in keys:
        number = bisect.bisect_right(rows, key) - 1
        if number < 0:
            continue
        if out and out[-1][0] is entries[number]:
            out[-1][1].append(key)
        else:
            out.append((entries[number], [key]))
    return out


def _row_of(key: bytes) -> bytes:
    """The row of a KeyValue key (int16 length, row, then anything)."""
    if len(key) < 2:
        raise ValueError(f"a key of {len(key)} bytes has no row length")
    (length,) = _SHORT.unpack_from(key, 0)
    if length < 0 or 2 + length > len(key):
        raise ValueError(f"a key of {len(key)} bytes says its row has {length}")
    return key[2 : 2 + length]


def _root_index_entries(payload: bytes, count: int) -> list[IndexEntry]:
    """`count` entries of a root index block: int64 offset, int32 size, vint key length, key
    (what follows them, a multi-level index's mid-key, is not needed)."""
    if count < 0:
        raise ValueError(f"index entry count {count}")
    entries: list[IndexEntry] = []
    pos = 0
    for _ in range(count):
        offset, size = _INDEX_ENTRY.unpack_from(payload, pos)
        length, pos = _read_hadoop_vlong(payload, pos + _INDEX_ENTRY.size)
        if length < 0 or pos + length > len(payload):
            raise ValueError(f"an index key of {length} bytes runs past its block")
        entries.append(IndexEntry(offset, size, payload[pos : pos + length]))
        pos += length
    return entries


def _non_root_index_entries(payload: bytes) -> list[IndexEntry]:
    """Entries of an intermediate or leaf index block: int32 count, count + 1 int32 offsets of
    the entries (relative to the first), then per entry int64 offset, int32 size and the key
    (up to the next entry)."""
    (count,) = _INT.unpack_from(payload, 0)
    if count < 0 or 4 * (count + 2) > len(payload):
        raise ValueError(f"index block entry count {count}")
    offsets = struct.unpack_from(f">{count + 1}i", payload, 4)
    base = 4 * (count + 2)
    entries: list[IndexEntry] = []
    for number in range(count):
        start, stop = base + offsets[number], base + offsets[number + 1]
        if not (base <= start and start + _INDEX_ENTRY.size <= stop <= len(payload)):
            raise ValueError(f"index block entry {number} is outside its block")
        offset, size = _INDEX_ENTRY.unpack_from(payload, start)
        entries.append(IndexEntry(offset, size, payload[start + _INDEX_ENTRY.size : stop]))
    return entries


def _gunzip(stored: bytes, size: int) -> bytes:
    """A block payload compressed by Hadoop's GzipCodec (one or more gzip members), cut off
    past `size` + 1 bytes so that a damaged size cannot make it inflate without end."""
    out = bytearray()
    rest = stored
    while rest and len(out) <= size:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out += inflater.decompress(rest, size + 1 - len(out))
        if not inflater.eof:
            if len(out) > size:
                break
            raise ValueError("the gzip stream is cut short")
        rest = inflater.unused_data
    return bytes(out)


@dataclass(frozen=True)
class Deflate:
    """How a GZ block's bytes are deflated: zlib's level and strategy. Any inflater reads
    any of them, so readers cannot tell."""

    level: int = 6
    strategy: int = zlib.Z_DEFAULT_STRATEGY


JAVA_DEFLATE = Deflate()  # java.util.zip.Deflater's default, which Apache Hudi's GZ blocks use
# Run-length matches only, then Huffman codes: for base64 text of a bit array (a bloom filter)
# both smaller than the default (runs of 'A' where sparse, the 6 bits a character where
# dense) and a fifth to a third of its time (docs/performance/indexes.md, metadata_table.py).
RUN_LENGTH_DEFLATE = Deflate(6, zlib.Z_RLE)


def _gzip(payload: bytes, deflate: Deflate = JAVA_DEFLATE) -> bytes:
    """A gzip stream as Apache Hudi 1.x writes it (Java's default deflate level 6, unless
    `deflate` says otherwise)."""
    deflater = zlib.compressobj(deflate.level, zlib.DEFLATED, -zlib.MAX_WBITS,
                                zlib.DEF_MEM_LEVEL, deflate.strategy)  # fmt: skip
    body = deflater.compress(payload) + deflater.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


# -- varints and protobuf --------------------------------------------------------------------
def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf base-128 varint at `pos`: (value, next position)."""
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("a varint runs past the end")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes")


def _varint(value: int) -> bytes:
    value &= 0xFFFFFFFFFFFFFFFF  # negative int64s as protobuf writes them: 10 bytes
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _proto_fields(message: bytes) -> list[tuple[int, int | bytes]]:
    """A protobuf message's fields in order, as (field number, int or bytes)."""
    fields: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(message):
        tag, pos = _read_varint(message, pos)
        number, wire = tag >> 3, tag & 7
        value: int | bytes
        if wire == 0:
            value, pos = _read_varint(message, pos)
        elif wire == 1:
            value, pos = int.from_bytes(message[pos : pos + 8], "little"), pos + 8
        elif wire == 2:
            size, pos = _read_varint(message, pos)
            value, pos = message[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = int.from_bytes(message[pos : pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        if pos > len(message):
            raise ValueError("a protobuf field runs past its message")
        fields.append((number, value))
    return fields


def _proto_int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _proto_bytes(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _read_hadoop_vlong(data: bytes, pos: int) -> tuple[int, int]:
    """Hadoop's `WritableUtils.readVLong` at `pos`: (value, next position)."""
    if pos >= len(data):
        raise ValueError("a vlong runs past the end")
    first = data[pos] - 256 if data[pos] > 127 else data[pos]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    if pos + size > len(data):
        raise ValueError("a vlong runs past the end")
    value = int.from_bytes(data[pos + 1 : pos + size], "big")
    return (~value if negative else value), pos + size


def _hadoop_vint(value: int) -> bytes:
    """Hadoop's `WritableUtils.writeVInt` of a non-negative int."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    size = (value.bit_length() + 7) // 8
    return struct.pack(">b", -112 - size) + value.to_bytes(size, "big")


# -- writing ---------------------------------------------------------------------------------
def _java_hash_order(names: list[str]) -> list[str]:
    """`names` (insertion order) in the iteration order of a Java `HashMap<String, ...>`
    holding them: Apache Hudi keeps file info and meta blocks in HashMaps, so this is the
    order it writes them in (String.hashCode over UTF-16 units, spread by h ^ h >>> 16, over
    a table of 16 buckets doubled while more than 3/4 full; a bucket keeps insertion order).
    """
    capacity = 16
    while len(names) > capacity * 3 // 4:
        capacity *= 2

    def bucket(name: str) -> int:
        h = 0
        units = name.encode("utf-16-be")
        for i in range(0, len(units), 2):
            h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    position = {name: i for i, name in enumerate(names)}
    return sorted(names, key=lambda name: (bucket(name), position[name]))


def _block(
    kind: BlockType, payload: bytes, previous_offset: int = -1, deflate: Deflate = JAVA_DEFLATE
) -> bytes:
    """One GZ block as Apache Hudi 1.x frames it: checksum type NULL, zeroed checksum bytes."""
    compressed = _gzip(payload, deflate)
    data_size = BLOCK_HEADER_SIZE + len(compressed)
    chunks = -(-data_size // BYTES_PER_CHECKSUM)
    header = _HEADER.pack(
        kind.value,
        len(compressed) + CHECKSUM_SIZE * chunks,
        len(payload),
        previous_offset,
        int(ChecksumType.NULL),
        BYTES_PER_CHECKSUM,
        data_size,
    )
    return header + compressed + bytes(CHECKSUM_SIZE * chunks)


def _key(row: bytes, whole: bool) -> bytes:
    """An index or last key: int16 length and row, and with `whole` the KeyValue key's tail."""
    return _SHORT.pack(len(row)) + row + (KEY_TAIL if whole else b"")


def _index_payload(entries: list[tuple[int, int, bytes]]) -> bytes:
    out = bytearray()
    for offset, size, key in entries:
        out += _INDEX_ENTRY.pack(offset, size) + _hadoop_vint(len(key)) + key
    return bytes(out)


def write_hfile(
    entries: Iterable[tuple[bytes, bytes]],
    *,
    file_info: Mapping[bytes, bytes] = {},  # noqa: B006 (read only)
    meta_blocks: Mapping[str, bytes] = {},  # noqa: B006 (read only)
    block_size: int = 1 << 20,
    hbase_keys: bool = False,
    deflate: Deflate = JAVA_DEFLATE,
) -> bytes:
    """An HFile of `entries` ((row key, value), strictly increasing by key) as Apache Hudi 1.2's
    own writer (`HFileWriterImpl`) makes it, the layout every Hudi reader and hudi-rs reads:

    * GZ blocks with checksum type NULL and zeroed checksum bytes, minor version 0;
    * data blocks cut before a key-value that would take the block's uncompressed bytes past
      `block_size` (Hudi's `hoodie.hfile.block.size`, 1 MiB for the metadata table), each
      key-value with HBase's KeyValue key (family length 0, timestamp Long.MAX_VALUE, type
      Put) and an MVCC byte 0; each data block after the first records its own offset as the
      previous block's, as 1.2 does;
    * one meta block per `meta_blocks` entry (e.g. "bloomFilter"), then one root index level
      (the blocks' first keys, int16 length + row), the meta index (present when empty);
    * file info with `file_info` (e.g. b"schema", the bloom filter keys, and
      b"hfile.CREATE_TIME_TS", else 0) and what the writer computes: hfile.LASTKEY,
      hfile.AVG_KEY_LEN and hfile.AVG_VALUE_LEN (rows and values, integer averages),
      KEY_VALUE_VERSION 1 and MAX_MEMSTORE_TS_KEY 0, in the order of 1.2's HashMap;
    * the trailer: 1.2's fields (the uncompressed data index size is the data blocks'
      uncompressed bytes, as 1.2 writes it; no total uncompressed bytes; the first data block
      offset -1 and the last 0 when there are no entries) and the comparator class name.

    `hbase_keys` writes the index's first keys and hfile.LASTKEY as whole KeyValue keys, as
    HBase's writer (Apache Hudi 0.15) does, instead of 1.2's length and row only. Apache Hudi
    0.15 reads the metadata table with HBase's reader, whose index search takes index keys
    for KeyValues: a file in 1.2's layout with more than one data block fails it
    (ArrayIndexOutOfBoundsException in `KeyValue.getFamilyLength`; tests/judge/
    test_hfile_mdt.py). 1.2's reader and hudi-rs read both, so tables of version 6, which
    0.15 reads, want True.

    `deflate`: how the data blocks are deflated (Java's default, as Apache Hudi writes them;
    readers cannot tell).
    """
    if block_size < 1:
        raise ValueError(f"block_size must be positive, got {block_size}")
    for computed in _COMPUTED_FILE_INFO:
        if computed in file_info:
            raise ValueError(
                f"file info {computed.decode()} is the writer's to compute; leave it out"
            )
    out = bytearray()
    index: list[tuple[int, int, bytes]] = []
    block = bytearray()
    block_first: bytes | None = None
    count = 0
    key_bytes = value_bytes = uncompressed_total = 0
    first_offset, last_offset = -1, 0
    previous: bytes | None = None

    def flush() -> None:
        nonlocal block, block_first, first_offset, last_offset
        if block_first is None:
            return
        offset = len(out)
        if first_offset < 0:
            first_offset = offset
        last_offset = offset
        framed = _block(BlockType.DATA, bytes(block), -1 if offset == 0 else offset,
                        deflate)  # fmt: skip
        out.extend(framed)
        index.append((offset, len(framed), _key(block_first, hbase_keys)))
        block = bytearray()
        block_first = None

    for key, value in entries:
        if not isinstance(key, bytes) or not isinstance(value, bytes):
            raise TypeError("HFile keys and values are bytes")
        if len(key) > 0x7FFF:
            raise ValueError(f"an HFile row key has at most 32767 bytes, got {len(key)}")
        if previous is not None and key <= previous:
            raise ValueError(f"HFile keys must be strictly increasing: {key!r} after {previous!r}")
        size = len(key) + len(value) + _KEY_VALUE_OVERHEAD
        if block_first is not None and len(block) + size > block_size:
            flush()
        if block_first is None:
            block_first = key
        block += _KEY_VALUE_LENGTHS.pack(2 + len(key) + len(KEY_TAIL), len(value))
        block += _SHORT.pack(len(key)) + key + KEY_TAIL + value + b"\x00"
        count += 1
        key_bytes += len(key)
        value_bytes += len(value)
        uncompressed_total += size
        previous = key
    flush()

    meta_index: list[tuple[int, int, bytes]] = []
    for block_name in _java_hash_order(list(meta_blocks)):
        framed = _block(BlockType.META, meta_blocks[block_name])
        meta_index.append((len(out), len(framed), block_name.encode("utf-8")))
        out += framed

    load_on_open = len(out)
    out += _block(BlockType.ROOT_INDEX, _index_payload(index))
    out += _block(BlockType.ROOT_INDEX, _index_payload(meta_index))

    info: dict[bytes, bytes] = {MAX_MEMSTORE_TS_KEY: bytes(8)}
    info.update(file_info)
    info[LAST_KEY] = _key(previous, hbase_keys) if previous is not None else b""
    info[AVG_KEY_LEN] = _INT.pack(key_bytes // count if count else 0)
    info.setdefault(CREATE_TIME_TS, bytes(8))
    info[AVG_VALUE_LEN] = _INT.pack(value_bytes // count if count else 0)
    info[KEY_VALUE_VERSION] = _INT.pack(1)
    names = {name.decode("utf-8"): name for name in info}
    pairs = b"".join(
        _proto_bytes(1, _proto_bytes(1, names[name]) + _proto_bytes(2, info[names[name]]))
        for name in _java_hash_order(list(names))
    )
    file_info_offset = len(out)
    out += _block(BlockType.FILE_INFO, FILE_INFO_MAGIC + _varint(len(pairs)) + pairs)

    trailer = b"".join(
        [
            _proto_int(1, file_info_offset),
            _proto_int(2, load_on_open),
            _proto_int(3, uncompressed_total),
            _proto_int(5, len(index)),
            _proto_int(6, len(meta_index)),
            _proto_int(7, count),
            _proto_int(8, 1),
            _proto_int(9, first_offset),
            _proto_int(10, last_offset),
            _proto_bytes(11, COMPARATOR_CLASS_NAME.encode()),
            _proto_int(12, int(Codec.GZ)),
        ]
    )
    tail = TRAILER_MAGIC + _varint(len(trailer)) + trailer
    version = bytes([0]) + MAJOR_VERSION.to_bytes(3, "big")  # minor 0, major 3
    out += tail + bytes(TRAILER_SIZE - len(version) - len(tail)) + version
    return bytes(out)

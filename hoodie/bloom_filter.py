"""Apache Hudi's bloom filter of a base file's record keys, kept in the file's parquet footer.

Apache Hudi's BLOOM index (`hoodie.index.type=BLOOM`; Spark's default in older releases,
SIMPLE in 0.15 and 1.2) tags an upsert by reading, from each base file's footer, the key range
(`hoodie_min_record_key`, `hoodie_max_record_key`) and a bloom filter of the file's keys
(`org.apache.hudi.bloomfilter`, with `hoodie_bloom_filter_type_code` for the dynamic kind): a
key outside a file's range or outside its filter is not in the file. A base file without the
filter stops Apache Hudi's write ("Error checking bloom filter index"), so every base file we
write carries one, built as Apache Hudi builds it (`BloomFilterFactory`):

- SIMPLE: one bit vector (Hadoop's `BloomFilter`) of `vector_size` bits set by `hash_count`
  hashes of each key's UTF-8 bytes;
- DYNAMIC_V0 (the default, `HoodieDynamicBoundedBloomFilter`): rows of such vectors, a new row
  for every `num_entries` keys until the rows cover `dynamic_max_entries`; beyond that the keys
  go to the rows in turn.

The hashes are Hadoop's MurmurHash 2 (hash type 1), chained: the i-th hash is seeded with the
(i-1)-th, and bit `|hash % vector_size|` (Java's remainder) is set. The serialized filter is
Java `DataOutput` (big-endian): version -1, hash count, hash type (a byte), vector size, the
bits (bit i in byte i/8 at 1 << i%8); the dynamic kind adds its row size, the keys in its last
row and the row count before the rows, each with its own header. Base64 of that is the footer
value. Our filters are Apache Hudi's bytes (tests/unit/test_bloom_filter.py, against its
sample tables' base files; tests/judge/test_take_turns.py, against files it writes there), and
its BLOOM index tags our tables right (tests/judge/test_take_turns.py).

The filter takes 431 KB of footer per vector at the defaults (Apache Hudi's too): like
Apache Hudi's `hoodie.parquet.max.file.size`, ours sizes a file by its records, the footer
coming on top.

The hashing is numpy over all keys at once: keys grouped by their length, a 4-byte block's
mixing done once (it does not depend on the seed), each chained hash a few array operations
per block (1M keys: about a second of CPU).
"""

from __future__ import annotations

import base64
import functools
import math
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .exceptions import HoodieError, MalformedMetadataError
from .options.property import choice_values
from .options.write import BloomFilterType, default

BLOOM_FILTER_FOOTER = b"org.apache.hudi.bloomfilter"
BLOOM_TYPE_FOOTER = b"hoodie_bloom_filter_type_code"
SIMPLE, DYNAMIC_V0 = BloomFilterType.SIMPLE.value, BloomFilterType.DYNAMIC_V0.value
FILTER_TYPES = choice_values(BloomFilterType)
MURMUR_HASH = 1  # Hadoop's hash type code of MurmurHash (0 is Jenkins, which Hudi never writes)
_VERSION = -1  # the versioned format of Hadoop's `Filter` (a positive int was the hash count)
_HEADER = struct.Struct(">iibi")  # version, hash count, hash type, vector size
_DYNAMIC = struct.Struct(">iii")  # keys per row, keys in the last row, rows
_M = np.uint32(0x5BD1E995)  # MurmurHash 2's multiplier
_LOG2_SQUARED = math.log(2) * math.log(2)


@dataclass(frozen=True)
class BloomFilterSpec:
    """How big a base file's filter is and which kind (Apache Hudi's options and defaults:
    hoodie.index.bloom.num_entries, hoodie.index.bloom.fpp, hoodie.bloom.index.filter.type,
    hoodie.bloom.index.filter.dynamic.max.entries)."""

    # The write options' defaults (`hoodie.options.write`), declared there once.
    num_entries: int = cast(int, default("bloom_num_entries"))
    fpp: float = cast(float, default("bloom_fpp"))
    filter_type: str = cast(str, default("bloom_filter_type"))
    dynamic_max_entries: int = cast(int, default("bloom_dynamic_max_entries"))

    @property
    def vector_size(self) -> int:
        """Bits of one vector (`BloomFilterUtils.getBitSize`, Java's double arithmetic)."""
        return int(math.ceil(self.num_entries * (-math.log(self.fpp) / _LOG2_SQUARED)))

    @property
    def hash_count(self) -> int:
        """Hashes per key (`BloomFilterUtils.getNumHashes`)."""
        return int(math.ceil(math.log(2) * self.vector_size / self.num_entries))

    def footer_size(self, keys: int) -> int:
        """The bytes this filter of `keys` keys takes in a base file's footer: base64 of its
        vectors (each vector_size bits and a header), and the entries' names."""
        vector = _HEADER.size + (self.vector_size + 7) // 8
        if self.filter_type == SIMPLE:
            return 4 * -(-vector // 3) + len(BLOOM_FILTER_FOOTER)
        rows = 1 if keys <= self.num_entries else min(self._row_cap, -(-keys // self.num_entries))
        raw = _HEADER.size + _DYNAMIC.size + rows * vector
        names = len(BLOOM_FILTER_FOOTER) + len(BLOOM_TYPE_FOOTER) + len(DYNAMIC_V0)
        return 4 * -(-raw // 3) + names

    @property
    def _row_cap(self) -> int:
        """The vectors a dynamic filter grows to: until they cover dynamic_max_entries."""
        return max(1, -(-self.dynamic_max_entries // self.num_entries))


def murmur_positions(keys: pa.Array, hash_count: int, vector_size: int) -> np.ndarray:
    """The bit positions of each key (one row per key, `hash_count` columns), as Hadoop's
    `HashFunction` with MurmurHash gives them for the key's UTF-8 bytes."""
    out = np.empty((len(keys), hash_count), dtype=np.int64)
    for chosen, i, positions in _hash_rounds(keys, hash_count, vector_size):
        out[chosen, i] = positions
    return out


def _hash_rounds(
    keys: pa.Array | pa.ChunkedArray, hash_count: int, vector_size: int
) -> Iterator[tuple[np.ndarray, int, np.ndarray]]:
    """(the keys, hash i, their positions) for each length of key and each chained hash."""
    data, starts, lengths = _utf8(keys)
    if len(lengths) and int(lengths.min()) == 0:
        raise HoodieError(
            "a record key is empty: a bloom filter (as Apache Hudi's) has no bits for it"
        )
    # every byte offset's 4 bytes as a little-endian word (a view: one gather per block)
    padded = np.concatenate([data, np.zeros(3, dtype=np.uint8)])
    words = np.ndarray((len(data),), dtype="<u4", buffer=padded, strides=(1,))
    size = np.uint32(vector_size)
    for length in np.unique(lengths).tolist():
        chosen = np.nonzero(lengths == length)[0]
        start = starts[chosen]
        blocks = length >> 2
        mixed = _mixed_blocks(words, start, blocks)  # one contiguous row per block
        left = length - 4 * blocks
        tail = np.zeros(len(chosen), dtype=np.int32)
        for back, shift in ((3, 16), (2, 8), (1, 0)):
            if left >= back:
                byte = data[start + (length - back)].view(np.int8)  # Java's bytes are signed
                tail ^= byte.astype(np.int32) << shift
        tail_u = tail.view(np.uint32)
        h = np.zeros(len(chosen), dtype=np.uint32)  # the first seed: 0
        shifted = np.empty_like(h)  # (in place throughout: a 10M-row load hashes 300M times)
        with np.errstate(over="ignore"):
            for i in range(hash_count):
                h ^= np.uint32(length)
                for block in mixed:
                    h *= _M
                    h ^= block
                if left:
                    h ^= tail_u
                    h *= _M
                h ^= np.right_shift(h, np.uint32(13), out=shifted)
                h *= _M
                h ^= np.right_shift(h, np.uint32(15), out=shifted)
                # Java's abs(h % size): the magnitude of h as an int (abs of Integer.MIN_VALUE
                # stays 2^31 as unsigned) modulo size
                magnitude = np.abs(h.view(np.int32)).view(np.uint32)
                yield chosen, i, np.remainder(magnitude, size, out=magnitude)
                # h is the next hash's seed


def _utf8(keys: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The keys' UTF-8 bytes (one buffer), each key's start in it and its length."""
    keys = _binary(keys)
    if keys.null_count:
        raise HoodieError(
            "a record key is null: a bloom filter (as Apache Hudi's) has no bits for it"
        )
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int64)[
        keys.offset : keys.offset + len(keys) + 1
    ]
    data_buffer = keys.buffers()[2]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.zeros(0, np.uint8)
    )
    return data, offsets[:-1], np.diff(offsets)


def _mixed_blocks(words: np.ndarray, start: np.ndarray, blocks: int) -> np.ndarray:
    """Each key's 4-byte blocks (row j: every key's j-th block), mixed as MurmurHash 2 mixes
    them: the part of the hash that does not depend on the seed."""
    mixed = np.empty((blocks, len(start)), dtype=np.uint32)
    with np.errstate(over="ignore"):
        for j in range(blocks):
            k = words[start + 4 * j].astype(np.uint32)
            k *= _M
            k ^= k >> np.uint32(24)
            k *= _M
            mixed[j] = k
    return mixed


def _rows_of(count: int, spec: BloomFilterSpec) -> tuple[np.ndarray, int, int]:
    """Which row of a dynamic filter each of `count` keys (in the order added) goes to, the
    rows made, and the keys in the last made row (`InternalDynamicBloomFilter.add`)."""
    per_row = spec.num_entries
    cap = spec._row_cap
    made = 1 if count <= per_row else min(cap, -(-count // per_row))
    index = np.arange(count, dtype=np.int64)
    rows = np.minimum(index // per_row, made - 1)
    full = cap * per_row
    if count > full and made == cap:
        # past the bound: the first key goes to row 0, then the rows in turn from row 0
        beyond = index[full:] - full
        rows[full:] = np.where(beyond == 0, 0, (beyond - 1) % cap)
    last = count - (made - 1) * per_row
    return rows, made, last


def _header(spec: BloomFilterSpec) -> bytes:
    return _HEADER.pack(_VERSION, spec.hash_count, MURMUR_HASH, spec.vector_size)


def _rows_for(count: int, spec: BloomFilterSpec) -> tuple[np.ndarray, int, int]:
    """`_rows_of` for either kind (a simple filter is one row)."""
    if spec.filter_type == SIMPLE:
        return np.zeros(count, dtype=np.int64), 1, count
    return _rows_of(count, spec)


def _assembled(spec: BloomFilterSpec, made: int, last: int, vectors: list[bytes]) -> bytes:
    """The serialized filter of its packed vectors (`made` rows, `last` keys in the last)."""
    header = _header(spec)
    if spec.filter_type == SIMPLE:
        return header + vectors[0]
    out = [header, _DYNAMIC.pack(spec.num_entries, last, made)]
    for vector in vectors:
        out += [header, vector]
    return b"".join(out)


def serialized_filter(keys: pa.Array | pa.ChunkedArray, spec: BloomFilterSpec) -> bytes:
    """The filter of `keys` (in the order they are added, i.e. stored) as Apache Hudi
    serializes it, before base64."""
    size = spec.vector_size
    rows, made, last = _rows_for(len(keys), spec)
    bits = np.zeros((made, size), dtype=bool)
    flat = bits.reshape(-1)
    row_start = rows * size
    group, starts = None, row_start
    for chosen, _, positions in _hash_rounds(keys, spec.hash_count, size):
        if chosen is not group:  # a length's keys (the same array for all its hashes)
            group, starts = chosen, row_start[chosen]
        flat[starts + positions] = True
    return _assembled(spec, made, last, [_packed(row) for row in bits])


def _footer_of_positions(positions: np.ndarray, spec: BloomFilterSpec) -> dict[bytes, bytes]:
    """`bloom_filter_footer` of keys whose bit positions (`murmur_positions`) are given, made
    for a few keys in vectors of millions of bits: the bits set in the serialized filter
    directly (in `_assembled`'s layout), and only the 3-byte groups that are not all zero
    encoded, over the encoding of zeros (`_base64`)."""
    rows, made, last = _rows_for(len(positions), spec)
    raw, starts, laid = _laid_out(spec, made, last)
    where = _set_bits(raw, starts[rows], positions)
    touched = np.concatenate([laid, where])
    return _footer(spec, _base64(raw, touched))


def _laid_out(
    spec: BloomFilterSpec, made: int, last: int, earlier: bytes = b""
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A serialized filter of `made` vectors, `last` keys in the last, in `_assembled`'s
    layout: its bytes (those of `earlier`, the same layout with as many vectors or fewer, then
    zero bits), each vector's first byte, and the offsets of the headers written."""
    head, vector = _HEADER.size, (spec.vector_size + 7) // 8
    header = np.frombuffer(_header(spec), dtype=np.uint8)
    if spec.filter_type == SIMPLE:
        prefix = np.zeros(0, dtype=np.uint8)  # one vector, with its header
    else:
        dynamic = np.frombuffer(_DYNAMIC.pack(spec.num_entries, last, made), dtype=np.uint8)
        prefix = np.concatenate([header, dynamic])
    starts = len(prefix) + head + np.arange(made) * (head + vector)  # each vector's first byte
    raw = np.zeros(len(prefix) + made * (head + vector), dtype=np.uint8)
    raw[: len(earlier)] = np.frombuffer(earlier, dtype=np.uint8)
    raw[: len(prefix)] = prefix
    for start in starts.tolist():
        raw[start - head : start] = header
    headers = (starts[:, None] - np.arange(1, head + 1)).reshape(-1)
    return raw, starts, np.concatenate([np.arange(len(prefix)), headers])


def _set_bits(raw: np.ndarray, vector_starts: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Set each key's bits (`positions`, a row per key) in the vector starting at its
    `vector_starts` byte; the offsets of the bytes touched."""
    where = (vector_starts[:, None] + (positions >> 3)).reshape(-1)
    np.bitwise_or.at(raw, where, np.left_shift(1, positions & 7).astype(np.uint8).reshape(-1))
    return where


def _footer(spec: BloomFilterSpec, encoded: bytes) -> dict[bytes, bytes]:
    footer = {BLOOM_FILTER_FOOTER: encoded}
    if spec.filter_type == DYNAMIC_V0:
        footer[BLOOM_TYPE_FOOTER] = DYNAMIC_V0.encode()
    return footer


def grown_filter_footer(
    earlier: Mapping[bytes, bytes] | None,
    stored: int,
    added: pa.Array | pa.ChunkedArray,
    spec: BloomFilterSpec,
) -> dict[bytes, bytes] | None:
    """`bloom_filter_footer` of a base file's keys when they are the `stored` keys of an
    earlier version of the file, in that file's order, then the keys `added`, given the
    earlier file's footer: its filter with the added keys' bits set, which is the filter made
    anew (a key's vector depends only on its place in the order, and its bits on the key).
    Hashing the added keys alone is what makes rewriting a file of 300,000 keys for a few
    thousand updates and inserts cheap: making its filter anew hashes every key 30 times. And
    for a few added keys only the base64 characters of the bytes they change are rewritten
    (`_Base64.edited`): decoding and encoding the 431 KB whole took ~2.5 ms, most of what
    rewriting a small file's filter cost (a table of many small partitions).

    None when `earlier` holds no filter that `spec` would make of `stored` keys (none, another
    kind, size or hash count, a count of keys that is not `stored`, text that is not base64):
    the caller makes it anew. The earlier filter is trusted as the BLOOM index trusts it."""
    encoded = (earlier or {}).get(BLOOM_FILTER_FOOTER)
    dynamic = (earlier or {}).get(BLOOM_TYPE_FOOTER) == DYNAMIC_V0.encode()
    if encoded is None or dynamic != (spec.filter_type == DYNAMIC_V0):
        return None
    text = _Base64.of(encoded)
    if text is None:
        return None
    header, vector = _header(spec), (spec.vector_size + 7) // 8
    made, prefix = 1, 0
    if dynamic:
        prefix = len(header) + _DYNAMIC.size
        if text.size < prefix:
            return None
        start = text.read(np.arange(prefix)).tobytes()
        if start[: len(header)] != header:
            return None
        per_row, last, made = _DYNAMIC.unpack_from(start, len(header))
        if per_row != spec.num_entries or not 1 <= made <= spec._row_cap:
            return None
        if (made - 1) * per_row + last != stored:
            return None
    step = len(header) + vector
    if text.size != prefix + made * step:
        return None
    heads = prefix + np.arange(made)[:, None] * step + np.arange(len(header))
    if text.read(heads.reshape(-1)).tobytes() != header * made:
        return None
    rows, grown_made, last = _rows_for(stored + len(added), spec)
    positions = (
        murmur_positions(_binary(added), spec.hash_count, spec.vector_size)
        if len(added)
        else np.zeros((0, spec.hash_count), dtype=np.int64)
    )
    if grown_made == made and positions.size * 8 <= text.size:
        # the same layout, a few bytes changed: the dynamic kind's count of keys in its last
        # vector, and the bytes holding the added keys' bits
        starts = prefix + len(header) + np.arange(made) * step
        where = (starts[rows[stored:], None] + (positions >> 3)).reshape(-1)
        bits = np.left_shift(1, positions & 7).astype(np.uint8).reshape(-1)
        counted = np.arange(prefix)  # (none in a simple filter)
        count = header + _DYNAMIC.pack(spec.num_entries, last, made) if dynamic else b""
        return _footer(spec, text.edited(counted, np.frombuffer(count, np.uint8), where, bits))
    grown, starts, _ = _laid_out(spec, grown_made, last, base64.b64decode(encoded))
    if len(added):
        _set_bits(grown, starts[rows[stored:]], positions)
    return _footer(spec, base64.b64encode(grown.tobytes()))


def _packed(bits: np.ndarray) -> bytes:
    """A vector's bytes: bit i in byte i / 8 at 1 << (i % 8)."""
    return np.packbits(bits, bitorder="little").tobytes()


def bloom_filter_footer(
    keys: pa.Array | pa.ChunkedArray, spec: BloomFilterSpec
) -> dict[bytes, bytes]:
    """The footer entries of a base file holding `keys`: the filter, and its type code for
    the dynamic kind (Apache Hudi takes a filter without one as SIMPLE)."""
    if _few(len(keys), spec):
        return _footer_of_positions(murmur_positions(keys, spec.hash_count, spec.vector_size),
                                    spec)  # fmt: skip
    return _footer(spec, base64.b64encode(serialized_filter(keys, spec)))


def _few(keys: int, spec: BloomFilterSpec) -> bool:
    """Are `keys` so few that their bits are set one by one (`_footer_of_positions`) rather
    than in a vector of bits made whole (at the defaults: up to 1,347 keys)?"""
    return keys * spec.hash_count * 64 <= spec.vector_size


_BASE64_ALPHABET = np.frombuffer(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=np.uint8
)
_BASE64_CHARACTERS = _BASE64_ALPHABET.tobytes()
# Each base64 character's 6 bits ('=', padding, has none: 0)
_SEXTET = np.zeros(256, dtype=np.uint8)
_SEXTET[_BASE64_ALPHABET] = np.arange(64, dtype=np.uint8)


def _encoded_groups(b: np.ndarray) -> np.ndarray:
    """The 4 base64 characters of each row of 3 bytes of `b`."""
    sextets = np.empty((len(b), 4), dtype=np.uint8)
    sextets[:, 0] = b[:, 0] >> 2
    sextets[:, 1] = ((b[:, 0] & 3) << 4) | (b[:, 1] >> 4)
    sextets[:, 2] = ((b[:, 1] & 15) << 2) | (b[:, 2] >> 6)
    sextets[:, 3] = b[:, 2] & 63
    return cast(np.ndarray, _BASE64_ALPHABET[sextets])


def _decoded_groups(chars: np.ndarray) -> np.ndarray:
    """The 3 bytes of each row of 4 base64 characters of `chars` (padding decodes as 0)."""
    s = _SEXTET[chars]
    b = np.empty((len(chars), 3), dtype=np.uint8)
    b[:, 0] = (s[:, 0] << 2) | (s[:, 1] >> 4)
    b[:, 1] = ((s[:, 1] & 15) << 4) | (s[:, 2] >> 2)
    b[:, 2] = ((s[:, 2] & 3) << 6) | s[:, 3]
    return b


@dataclass(frozen=True)
class _Base64:
    """Base64 text read and edited a few bytes at a time: every 3 bytes are 4 characters of
    their own, so a byte is read or changed through its group's characters alone."""

    text: bytes
    padding: int

    @classmethod
    def of(cls, text: bytes) -> _Base64 | None:
        """`text` if it is base64 (as `b64decode(validate=True)` takes it), else None."""
        if not text or len(text) % 4:
            return None
        rest = text.translate(None, _BASE64_CHARACTERS)
        if rest not in (b"", b"=", b"==") or not text.endswith(rest):
            return None
        return cls(text, len(rest))

    @property
    def size(self) -> int:
        """The decoded bytes."""
        return len(self.text) // 4 * 3 - self.padding

    def _groups(self) -> np.ndarray:
        return np.frombuffer(self.text, dtype=np.uint8).reshape(-1, 4)

    def read(self, offsets: np.ndarray) -> np.ndarray:
        """The decoded bytes at `offsets` (each below `size`)."""
        return _decoded_groups(self._groups()[offsets // 3])[np.arange(len(offsets)), offsets % 3]

    def edited(
        self, offsets: np.ndarray, values: np.ndarray, ored: np.ndarray, bits: np.ndarray
    ) -> bytes:
        """The text of the bytes with `values` at `offsets`, then `bits` or-ed into the bytes at
        `ored` (repeats allowed): only the groups holding those bytes are encoded again."""
        touched = np.unique(np.concatenate([offsets, ored]) // 3)
        b = _decoded_groups(self._groups()[touched])
        b[np.searchsorted(touched, offsets // 3), offsets % 3] = values
        np.bitwise_or.at(b, (np.searchsorted(touched, ored // 3), ored % 3), bits)
        out = bytearray(self.text)
        np.frombuffer(out, dtype=np.uint8).reshape(-1, 4)[touched] = _encoded_groups(b)
        if self.padding:
            out[-self.padding :] = b"=" * self.padding
        return bytes(out)


def _base64(raw: np.ndarray, touched: np.ndarray) -> bytes:
    """`base64.b64encode` of the bytes `raw`, which are zero but at the offsets `touched`
    (repeats allowed). Every 3 bytes are 4 characters of their own: only the groups holding
    a touched byte are encoded, over the encoding of zeros."""
    whole = len(raw) // 3
    groups = touched // 3
    groups = groups[groups < whole]  # (a group touched twice is encoded twice, alike)
    b = raw[: whole * 3].reshape(whole, 3)[groups]
    encoded = bytearray(_base64_of_zeros(len(raw)))
    out = np.frombuffer(encoded, dtype=np.uint8)
    out[: whole * 4].reshape(whole, 4)[groups] = _encoded_groups(b)
    encoded[whole * 4 :] = base64.b64encode(raw[whole * 3 :].tobytes())  # the padded end
    return bytes(encoded)


@functools.lru_cache(maxsize=4)
def _base64_of_zeros(size: int) -> bytes:
    return base64.b64encode(bytes(size))


# Keys `bloom_filter_footers` hashes in one pass at most: enough to spread numpy's cost per
# call over many small files, few enough that their bit positions (8 bytes per hash) stay
# a few MB.
HASHED_TOGETHER = 1 << 16


def bloom_filter_footers(
    key_sets: Iterable[pa.Array | pa.ChunkedArray], spec: BloomFilterSpec
) -> Iterator[dict[bytes, bytes]]:
    """`bloom_filter_footer` of each of several base files' keys, in turn (each footer is
    hundreds of KB: take one, write its file, then the next); the keys of files of few keys
    hashed together, up to HASHED_TOGETHER at once. Hashing costs a few numpy calls per hash
    and key length whatever the number of keys (about 2 ms at the defaults' 30 hashes),
    which a task writing thousands of small files (a table of many partitions) would
    otherwise pay for each."""
    group: list[pa.Array | pa.ChunkedArray] = []
    keys = 0
    for key_set in key_sets:
        few = _few(len(key_set), spec)
        if few and keys + len(key_set) <= HASHED_TOGETHER:
            group.append(key_set)
            keys += len(key_set)
            continue
        yield from _hashed_together(group, spec)
        group, keys = ([key_set], len(key_set)) if few else ([], 0)
        if not few:
            yield bloom_filter_footer(key_set, spec)
    yield from _hashed_together(group, spec)


def _hashed_together(
    key_sets: list[pa.Array | pa.ChunkedArray], spec: BloomFilterSpec
) -> Iterator[dict[bytes, bytes]]:
    if not key_sets:
        return
    joined = pa.concat_arrays([_binary(keys) for keys in key_sets])
    positions = murmur_positions(joined, spec.hash_count, spec.vector_size)
    first = 0
    for keys in key_sets:
        yield _footer_of_positions(positions[first : first + len(keys)], spec)
        first += len(keys)


def _binary(keys: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Keys as one array of a type that concatenates with any other's (their UTF-8 bytes)."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    return keys.cast(pa.large_binary())


def java_min_max(keys: pa.Array | pa.ChunkedArray) -> tuple[str, str]:
    """The least and greatest key as Java's `String.compareTo` orders them (by UTF-16 code
    units), which Apache Hudi's BLOOM index prunes files by. Arrow orders by code points; the
    two differ only between characters U+E000..U+FFFF and those above U+FFFF, whose UTF-8
    bytes start at 0xEE: only keys with such bytes are ordered again in Python."""
    bounds = pc.min_max(keys)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    data, _, _ = _utf8(keys)
    if not bool((data >= 0xEE).any()):
        return low, high
    every = set(keys.to_pylist())
    order = lambda key: key.encode("utf-16-be")  # noqa: E731 - code units, big-endian
    return min(every, key=order), max(every, key=order)


@dataclass(frozen=True)
class StoredFilter:
    """A base file's filter as read from its footer: each vector's hash count, size, bits."""

    vectors: tuple[tuple[int, int, bytes], ...]

    @classmethod
    def of(cls, footer: dict[bytes, bytes]) -> StoredFilter:
        """The filter in a base file's `footer`; one without a filter, or with a cut or foreign
        one, is a damaged footer for this."""
        encoded = footer.get(BLOOM_FILTER_FOOTER)
        if encoded is None:
            raise MalformedMetadataError("the base file's footer has no bloom filter")
        raw = base64.b64decode(encoded)
        dynamic = footer.get(BLOOM_TYPE_FOOTER) == DYNAMIC_V0.encode()
        vectors = []
        try:
            header = _HEADER.unpack_from(raw, 0)
            offset = _HEADER.size
            count = 1
            if dynamic:
                count = _DYNAMIC.unpack_from(raw, offset)[2]
                offset += _DYNAMIC.size
            for _ in range(count):
                if dynamic:
                    header = _HEADER.unpack_from(raw, offset)
                    offset += _HEADER.size
                version, hashes, kind, vector_size = header
                size = (vector_size + 7) // 8
                bits = raw[offset : offset + size]
                offset += size
                if version != _VERSION or kind != MURMUR_HASH or len(bits) != size:
                    raise MalformedMetadataError("the base file's bloom filter is not one we read")
                vectors.append((hashes, vector_size, bits))
        except struct.error as error:
            raise MalformedMetadataError(
                f"the base file's bloom filter is cut short: {error}"
            ) from error
        return cls(tuple(vectors))

    def might_contain(self, keys: list[str]) -> list[bool]:
        """For each key, whether the filter may hold it (Apache Hudi's `mightContain`)."""
        found = np.zeros(len(keys), dtype=bool)
        for hashes, vector_size, bits in self.vectors:
            vector = np.unpackbits(np.frombuffer(bits, dtype=np.uint8), bitorder="little")
            positions = murmur_positions(pa.array(keys, pa.string()), hashes, vector_size)
            found |= vector[positions].all(axis=1)
        return found.tolist()


def might_contain(footer: dict[bytes, bytes], key: str) -> bool:
    """Whether the filter in a base file's `footer` may hold `key`."""
    return StoredFilter.of(footer).might_contain([key])[0]

"""Reading HFiles through ranged reads (`HFileReader.open`, `FileIO.read_range`).

Every file read both ways gives the same: hudi-rs's samples (HBase's writer: one- to
three-level indexes, fake first keys, repeated keys, NONE and GZ), the metadata table's files
Apache Hudi 0.15 and 1.2 wrote, and files of our writer in both key layouts. A counting
`FileIO` shows what a lookup costs: a few keys in a large file read the trailer's tail, the
load-on-open section and their blocks only; a lookup of most keys reads the file once, whole.
Damage (a file cut short of its listed size, a bad trailer, an index pointing outside) is the
project's error naming the file.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest
from counting_io import CountingFileIO

from hoodie.exceptions import CorruptDataFileError
from hoodie.hfile import TRAILER_SIZE, HFileReader, write_hfile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hfile"
SAMPLES = sorted(p.name for p in FIXTURES.glob("hudi_1_0_hbase_*.hfile.gz"))
MDT_FILES = ["mdt_files_base_1_2_0.hfile", "mdt_files_base_0_15_0.hfile"]


def ours(count: int, block_size: int, hbase_keys: bool) -> bytes:
    """An HFile of our writer: keys with non-ASCII characters, values of varied sizes."""
    rng = random.Random(count)
    keys = sorted({f"k-{rng.randrange(10**9):09}-é{i % 7}".encode() for i in range(count)})
    rows = [(k, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))) for k in keys]
    return write_hfile(rows, file_info={b"schema": b"{}"}, meta_blocks={"bloomFilter": b"bf"},
                       block_size=block_size, hbase_keys=hbase_keys)  # fmt: skip


def stored(tmp_path: Path, name: str, data: bytes) -> CountingFileIO:
    (tmp_path / name).write_bytes(data)
    return CountingFileIO(str(tmp_path))


def files() -> list[tuple[str, bytes]]:
    out = [(name[: -len(".gz")], gzip.decompress((FIXTURES / name).read_bytes()))
           for name in SAMPLES]  # fmt: skip
    out += [(name, (FIXTURES / name).read_bytes()) for name in MDT_FILES]
    for hbase in (False, True):
        for count, block in ((1, 1 << 20), (500, 512), (3000, 4096)):
            out.append((f"ours_{count}_{block}_{hbase}.hfile", ours(count, block, hbase)))
    return out


@pytest.mark.parametrize("name, data", files(), ids=[name for name, _ in files()])
def test_ranged_reads_equal_whole_file_reads(tmp_path, name, data):
    whole = HFileReader(data, name)
    storage = stored(tmp_path, name, data)
    ranged = HFileReader.open(storage, name, len(data))
    assert ranged.name == storage.uri(name)
    assert (ranged.trailer, ranged.file_info, ranged.meta_index) == (
        whole.trailer, whole.file_info, whole.meta_index
    )  # fmt: skip
    assert (ranged.first_key, ranged.last_key) == (whole.first_key, whole.last_key)
    entries = list(whole)
    keys = [k for k, _ in entries]
    rng = random.Random(7)
    for size in (1, 3, 40):
        some = rng.sample(keys, min(size, len(keys)))
        misses = [k + b"\x00" for k in some] + [b"", b"\xff" * 3, b"a"]
        assert list(HFileReader.open(storage, name, len(data)).lookup(some + misses)) == list(
            whole.lookup(some + misses)
        )
    for key in keys[:: max(1, len(keys) // 20)]:
        assert ranged.get(key) == whole.get(key)
    assert list(HFileReader.open(storage, name, len(data))) == entries
    assert ranged.data_index == whole.data_index
    assert ranged.meta_block("bloomFilter") == whole.meta_block("bloomFilter")
    assert HFileReader.open(storage, name).get(keys[-1] if keys else b"x") == whole.get(
        keys[-1] if keys else b"x"
    )  # the size asked of the store


def test_a_point_lookup_in_a_large_file_reads_a_few_blocks(tmp_path):
    data = ours(60_000, 16 << 10, False)
    storage = stored(tmp_path, "big.hfile", data)
    whole = HFileReader(data, "big.hfile")
    assert len(data) > 1 << 20 and len(whole.data_index) > 100
    keys = [k for k, _ in whole]
    reader = HFileReader.open(storage, "big.hfile", len(data))
    opened = storage.bytes_read()
    assert storage.requests() <= 2  # the tail, and the load-on-open section if not in it
    storage.reset()
    assert reader.get(keys[12345]) == whole.get(keys[12345])
    # one data block: one request, its own bytes
    assert storage.requests() == 1
    assert storage.bytes_read() == next(
        e.size for e in whole.data_index[::-1] if e.key <= keys[12345]
    )
    assert opened + storage.bytes_read() < len(data) // 20
    # keys in three blocks far apart: three requests; in neighbouring blocks: one
    storage.reset()
    far = [keys[100], keys[30_000], keys[45_000]]  # (the last blocks are in the tail read)
    assert dict(reader.lookup(far)) == dict(whole.lookup(far))
    assert storage.requests() == 3 and storage.bytes_read() < len(data) // 10
    storage.reset()
    near = keys[1000:1400]
    assert dict(reader.lookup(near)) == dict(whole.lookup(near))
    assert storage.requests() == 1
    # a key before the first or after the last reads nothing
    storage.reset()
    assert reader.get(b"a") is None and reader.get(b"\xff") is None
    assert storage.requests() == 0


def test_a_lookup_of_most_blocks_reads_the_file_whole_once(tmp_path):
    data = ours(60_000, 16 << 10, True)
    storage = stored(tmp_path, "big.hfile", data)
    whole = HFileReader(data, "big.hfile")
    keys = [k for k, _ in whole]
    reader = HFileReader.open(storage, "big.hfile", len(data))
    storage.reset()
    every_other = keys[::2]
    assert list(reader.lookup(every_other)) == list(whole.lookup(every_other))
    assert storage.ranges == [("big.hfile", 0, len(data))]
    storage.reset()
    assert reader.get(keys[5]) == whole.get(keys[5]) and list(reader) == list(whole)
    assert storage.requests() == 0  # kept


def test_a_deep_index_is_descended_only_where_the_keys_are(tmp_path):
    name = "hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile"
    data = gzip.decompress((FIXTURES / f"{name}.gz").read_bytes())
    whole = HFileReader(data, name)
    assert whole.trailer.num_data_index_levels == 3
    storage = stored(tmp_path, name, data)
    reader = HFileReader.open(storage, name, len(data))
    storage.reset()
    key = b"hudi-key-" + b"a" * 100 + b"-000005340"
    assert reader.get(key) == whole.get(key) == b"hudi-value-000005340"
    # a leaf index block and the data block (HBase writes the intermediate index blocks
    # just before the root index: the tail read at the open holds them)
    assert storage.requests() == 2
    assert storage.bytes_read() < 8 << 10 and len(data) > 100 << 10


def test_a_file_shorter_than_listed_is_an_error_naming_it(tmp_path):
    data = ours(3000, 4096, False)
    storage = stored(tmp_path, "f.hfile", data)
    uri = storage.uri("f.hfile")
    with pytest.raises(CorruptDataFileError, match="short of the") as caught:
        HFileReader.open(storage, "f.hfile", len(data) + 10)
    assert caught.value.path == uri and uri in str(caught.value)
    # cut after it opened: the blocks read later are short
    reader = HFileReader.open(storage, "f.hfile", len(data))
    (tmp_path / "f.hfile").write_bytes(data[: reader.data_index[3].offset])
    reader._source._kept.clear()  # noqa: SLF001 (as if the tail were not held)
    with pytest.raises(CorruptDataFileError, match=r"f\.hfile is damaged.*data block"):
        list(reader.lookup([reader.data_index[5].key]))


@pytest.mark.parametrize("cut", [1, TRAILER_SIZE // 2, TRAILER_SIZE + 1000, 70_000])
def test_truncated_files_are_an_error_naming_them(tmp_path, cut):
    data = ours(3000, 4096, True)
    storage = stored(tmp_path, "t.hfile", data[:-cut])
    with pytest.raises(CorruptDataFileError) as caught:
        reader = HFileReader.open(storage, "t.hfile")
        list(reader)
    assert caught.value.path == storage.uri("t.hfile")


def test_damage_read_by_ranges_is_an_error_naming_the_file(tmp_path):
    data = bytearray(ours(3000, 4096, False))
    whole = HFileReader(bytes(data), "w")
    data[whole.data_index[2].offset : whole.data_index[2].offset + 8] = b"DATABLKX"
    storage = stored(tmp_path, "d.hfile", bytes(data))
    reader = HFileReader.open(storage, "d.hfile", len(data))
    assert reader.get(whole.data_index[0].key) is not None  # other blocks read
    with pytest.raises(CorruptDataFileError, match="magic b'DATABLKX'") as caught:
        reader.get(whole.data_index[2].key)
    assert caught.value.path == storage.uri("d.hfile")
    data[-TRAILER_SIZE] = ord("X")
    storage = stored(tmp_path, "m.hfile", bytes(data))
    with pytest.raises(CorruptDataFileError, match="magic"):
        HFileReader.open(storage, "m.hfile")


def test_a_missing_file_is_file_not_found(tmp_path):
    storage = CountingFileIO(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        HFileReader.open(storage, "nope.hfile", 5000)


def test_read_range_reads_what_the_file_has(tmp_path):
    storage = stored(tmp_path, "r.bin", bytes(range(256)) * 4)
    assert storage.read_range("r.bin", 10, 5) == bytes(range(10, 15))
    assert storage.read_range("r.bin", 1020, 100) == bytes(range(252, 256))
    assert storage.read_range("r.bin", 5000, 10) == b""
    assert storage.read_range("r.bin", 3, 0) == b""
    with pytest.raises(ValueError):
        storage.read_range("r.bin", -1, 3)
    with pytest.raises(FileNotFoundError):
        storage.read_range("nope", 0, 3)

"""Ranged reads on object stores (`FileIO.read_range`: one ranged GET), and an HFile read
through them: the same entries as read whole."""

from __future__ import annotations

import pytest

from hoodie.hfile import HFileReader, write_hfile
from hoodie.storage import load_file_io


def test_read_range_takes_a_part_of_an_object(bucket):
    storage = load_file_io(bucket.uri("t"), bucket.storage_options)
    storage.write_bytes("x/f.bin", bytes(range(256)) * 4)
    assert storage.read_range("x/f.bin", 10, 5) == bytes(range(10, 15))
    assert storage.read_range("x/f.bin", 1020, 100) == bytes(range(252, 256))
    assert storage.read_range("x/f.bin", 1024, 10) == b""
    assert storage.read_range("x/f.bin", 5000, 10) == b""
    with pytest.raises(FileNotFoundError):
        storage.read_range("x/nope.bin", 0, 10)


def test_an_hfile_reads_by_ranges_as_it_reads_whole(bucket):
    storage = load_file_io(bucket.uri("t"), bucket.storage_options)
    rows = [(f"key-{i:06}".encode(), f"value-{i}".encode() * 3) for i in range(20_000)]
    data = write_hfile(rows, file_info={b"schema": b"{}"}, block_size=8 << 10)
    storage.write_bytes("m/f.hfile", data)
    reader = HFileReader.open(storage, "m/f.hfile", len(data))
    assert len(reader.data_index) > 20
    wanted = [rows[i][0] for i in (0, 777, 15_000, 19_999)] + [b"key-nope"]
    assert dict(reader.lookup(wanted)) == {rows[i][0]: rows[i][1] for i in (0, 777, 15_000, 19_999)}
    assert list(HFileReader.open(storage, "m/f.hfile")) == rows

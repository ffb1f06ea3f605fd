"""hudi-rs reads HFiles we wrote: in hudi-rs's own sample table with a metadata table
(`quickstart_trips_table/mor/avro/v8_trips_8i3u1d`, table version 8, which hudi-rs lists
through the metadata table's `files` partition), every HFile of that partition (the base
files, and the HFile inside every HFILE_DATA log block) is written again by `write_hfile` from
its entries, a data block per entry, and hudi-rs reads the same rows. A control drops one
partition's entries: its rows are gone, so the listing came from our files.
"""

from __future__ import annotations

from pathlib import Path

import hudi
import pyarrow as pa
import pytest
from sample_tables import unzip

from hoodie.hfile import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    KEY_VALUE_VERSION,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    HFileReader,
    write_hfile,
)
from hoodie.logformat import BlockType, encode_block, read_log_file

TRIPS = (
    Path(__file__).resolve().parents[1]
    / "fixtures/hudi-rs/quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
)
COMPUTED = {LAST_KEY, AVG_KEY_LEN, AVG_VALUE_LEN, KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY}


def rows(table: Path) -> list[tuple]:
    read = pa.Table.from_batches(hudi.HudiTable(str(table)).read())
    return sorted(zip(*(read.column(name).to_pylist() for name in ("uuid", "city", "fare"))))


def rewritten(data: bytes, drop: bytes | None, hbase_keys: bool) -> bytes:
    """The HFile `data` written again by us: same entries (but `drop`), file info and meta
    blocks; a data block per entry."""
    theirs = HFileReader(data, "theirs")
    info = {name: value for name, value in theirs.file_info.items() if name not in COMPUTED}
    meta = {e.key.decode(): theirs.meta_block(e.key.decode()) or b"" for e in theirs.meta_index}
    entries = [(key, value) for key, value in theirs if key != drop]
    ours = write_hfile(entries, file_info=info, meta_blocks=meta, block_size=1,
                       hbase_keys=hbase_keys)  # fmt: skip
    assert len(HFileReader(ours, "ours").data_index) == len(entries)
    return ours


def rewrite_files_partition(table: Path, drop: bytes | None = None, hbase_keys=False) -> int:
    """Every HFile of the metadata table's `files` partition written again; how many."""
    count = 0
    for path in sorted((table / ".hoodie" / "metadata" / "files").iterdir()):
        if path.suffix == ".hfile":
            path.write_bytes(rewritten(path.read_bytes(), drop, hbase_keys))
            count += 1
        elif ".log." in path.name:
            data = path.read_bytes()
            out = bytearray()
            for block in read_log_file(data):
                if block.block_type == BlockType.HFILE_DATA:
                    content = rewritten(block.content, drop, hbase_keys)
                    out += encode_block(BlockType.HFILE_DATA, block.header, content)
                    count += 1
                else:
                    out += data[block.offset : block.offset + block.size]
            path.write_bytes(bytes(out))
    return count


@pytest.fixture
def trips(tmp_path) -> Path:
    return unzip(TRIPS, tmp_path)


@pytest.mark.parametrize("hbase_keys", [False, True])
def test_hudi_rs_lists_through_our_hfiles(trips, hbase_keys):
    expected = rows(trips)
    assert {city for _, city, _ in expected} == {"chennai", "san_francisco", "sao_paulo"}
    assert rewrite_files_partition(trips, hbase_keys=hbase_keys) == 9  # 2 base files, 7 blocks
    assert rows(trips) == expected


def test_hudi_rs_lists_from_our_hfiles_control(trips):
    expected = rows(trips)
    rewrite_files_partition(trips, drop=b"city=chennai")
    assert rows(trips) == [row for row in expected if row[1] != "chennai"]
    assert len(rows(trips)) < len(expected)

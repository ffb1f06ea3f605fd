"""Parquet page checksums: every parquet file we write carries CRC32 page checksums and every
read of a data file verifies them, so flipped bytes inside a data page are an error naming the
file instead of other values. Files without checksums (Apache Hudi's) still read."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.exceptions import CorruptDataFileError
from hoodie.fs_view import CommittedInstants, damaged_data_file
from hoodie.index.keys import KeySource, stored_keys
from hoodie.logformat import BlockType, add_meta_fields, parquet_data_block, read_log_file
from hoodie.merge import MergeMode
from hoodie.read.planner import FileSplit
from hoodie.read.slice_reader import SliceReadSpec, read_slice
from hoodie.schema import to_avro_schema
from hoodie.storage import FileIO, load_file_io

VALUES = pa.table(
    {
        "_hoodie_record_key": [f"k{i:04d}" for i in range(2000)],
        "v": pa.array(range(2000), pa.int64()),
    }
)
INSTANT = "20240101000000000"
BASE = f"p/f1-0_0-1-1_{INSTANT}.parquet"


def _flip_in_last_page(data: bytearray, metadata: pq.FileMetaData, column: int) -> None:
    """Flip one bit inside the values of `column`'s last page (uncompressed: the last bytes
    of the column chunk are values), so that without a checksum the page decodes to another
    value."""
    chunk = metadata.row_group(0).column(column)
    first = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    end = first + chunk.total_compressed_size
    data[end - 12] ^= 0x04


def _damaged_base(root: Path, *, checksums: bool = True) -> FileIO:
    storage = load_file_io(str(root))
    if checksums:
        storage.write_parquet(BASE, VALUES, "none", dictionary=False)
    else:  # as Apache Hudi writes them: no page checksums
        (root / "p").mkdir(parents=True)
        pq.write_table(VALUES, root / BASE, compression="none", use_dictionary=False)
    path = root / BASE
    data = bytearray(path.read_bytes())
    _flip_in_last_page(data, pq.read_metadata(path), 1)
    path.write_bytes(bytes(data))
    return storage


def test_a_flipped_byte_in_a_base_file_page_is_an_error_naming_it(tmp_path):
    storage = _damaged_base(tmp_path)
    spec = SliceReadSpec(
        storage, VALUES.schema, ("id",), MergeMode.commit_time(), frozenset({INSTANT})
    )
    split = FileSplit("p", "f1-0", BASE, (), 0)
    with pytest.raises(CorruptDataFileError, match=rf"{BASE}.*is damaged.*CRC"):
        list(read_slice(spec, split))  # it read another value of `v` in silence


def test_tagging_verifies_base_file_pages(tmp_path):
    storage = load_file_io(str(tmp_path))
    storage.write_parquet(BASE, VALUES, "none", dictionary=False)
    path = tmp_path / BASE
    data = bytearray(path.read_bytes())
    _flip_in_last_page(data, pq.read_metadata(path), 0)  # a record key
    path.write_bytes(bytes(data))
    source = KeySource("p", "f1-0", BASE)
    with pytest.raises(CorruptDataFileError, match=rf"{BASE}.*is damaged"):
        list(stored_keys(storage, source, CommittedInstants(frozenset({INSTANT}))))


def test_a_file_without_checksums_still_reads(tmp_path):
    """Damage there stays invisible (no checksum to check), as for every reader."""
    storage = _damaged_base(tmp_path, checksums=False)
    with damaged_data_file(storage, BASE, "a parquet base file"):
        read = storage.read_parquet(BASE)
    assert read.num_rows == VALUES.num_rows and not read.equals(VALUES)


def test_a_flipped_byte_in_a_parquet_log_block_is_an_error():
    avro = add_meta_fields(to_avro_schema(pa.schema([("v", pa.int64())]), "t"))
    rows = pa.table(
        {
            **{name: pa.nulls(2000, pa.string()) for name in _meta_names(avro)},
            "v": pa.array(range(2000), pa.int64()),
        }
    )
    block_bytes = bytearray(parquet_data_block(rows, INSTANT, avro, compression="none"))
    (block,) = list(read_log_file(bytes(block_bytes)))
    content = bytearray(block.content)
    # A value in the dictionary page of `v` (blocks dictionary-encode): another value, silently.
    chunk = pq.read_metadata(pa.BufferReader(bytes(content))).row_group(0).column(5)
    content[chunk.dictionary_page_offset + 200] ^= 0x04
    start = bytes(block_bytes).index(block.content)
    block_bytes[start : start + len(content)] = content
    (damaged,) = list(read_log_file(bytes(block_bytes)))
    assert damaged.block_type is BlockType.PARQUET_DATA  # the framing is whole
    with pytest.raises(OSError, match="CRC"):
        damaged.records()


def _meta_names(avro_schema: str) -> list[str]:
    import json

    return [f["name"] for f in json.loads(avro_schema)["fields"] if f["name"] != "v"]

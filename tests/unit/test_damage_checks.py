"""Damage is an error, never silence: each check of the read path on Apache Hudi's own tables.

The reads go through the core's read path without Spark (the `hoodie` data source's planner
and slice reader). `tests/faults/test_fuzz_damage.py` throws a few hundred random damages at
tables of ours; these are the cases one by one, on tables Apache Hudi wrote.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hoodie.exceptions import (
    CorruptDataFileError,
    MalformedMetadataError,
    MissingDataFileError,
    TableNotFoundError,
    malformed,
)
from hoodie.fs_view import checked_log_blocks, damaged_data_file
from hoodie.logformat import BlockType
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.read.datasource import HoodieDataSource
from hoodie.storage import load_file_io

COW = "sample_table/cow/v6_simplekeygen_nonhivestyle"
COW_FIRST, COW_SECOND = "20240418172802262", "20240418172804498"
MOR = "sample_table/mor/parquet/v6_nonpartitioned"
MOR_SECOND = "20250117083136333"
MOR_LOG = ".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43"


def _read(root: Path, **options: str) -> list[tuple]:
    source = HoodieDataSource({"path": str(root), **options})
    reader = source.reader(source.schema())
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    table = pa.Table.from_batches(batches)
    columns = [c for c in table.column_names if not c.startswith("_hoodie")]
    return sorted(zip(*(table.column(c).to_pylist() for c in ["_hoodie_record_key", *columns])))


def _latest_base(root: Path, instant: str) -> Path:
    return next(root.rglob(f"*_{instant}.parquet"))


def test_a_partition_without_its_metadata_file_is_still_read(sample_table):
    root = sample_table(COW)
    whole = _read(root)
    (root / "10" / ".hoodie_partition_metadata").unlink()
    assert _read(root) == whole  # it hid partition 10's rows


def test_a_missing_base_file_of_a_completed_commit_is_an_error(sample_table):
    root = sample_table(COW)
    base = _latest_base(root, COW_SECOND)
    base.unlink()
    with pytest.raises(MissingDataFileError, match=f"{base.name} is missing.*{COW_SECOND}"):
        _read(root)  # it read the partition's older file version in silence


def test_a_base_file_cut_short_of_its_recorded_size_is_an_error(sample_table):
    root = sample_table(COW)
    base = _latest_base(root, COW_SECOND)
    base.write_bytes(base.read_bytes()[:-10])
    with pytest.raises(CorruptDataFileError, match=f"{base.name} is .* bytes.*{COW_SECOND}"):
        _read(root)


def test_a_base_file_with_a_broken_footer_is_an_error_naming_it(sample_table):
    root = sample_table(COW)
    base = _latest_base(root, COW_SECOND)
    data = bytearray(base.read_bytes())
    data[-12:-8] = b"\xff\xff\xff\x7f"  # the footer's length
    base.write_bytes(bytes(data))
    with pytest.raises(CorruptDataFileError, match=base.name):  # not a raw ArrowInvalid
        _read(root)


def test_a_damaged_log_block_of_a_completed_delta_commit_is_an_error(sample_table):
    root = sample_table(MOR)
    log = root / MOR_LOG
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 0xFF
    log.write_bytes(bytes(data))
    # Apache Hudi's reader skips such a block as corrupt, and the update it holds reverts.
    with pytest.raises(CorruptDataFileError, match=f"{MOR_LOG}.*{MOR_SECOND}"):
        _read(root)


def test_a_log_file_cut_short_of_its_recorded_size_is_an_error(sample_table):
    root = sample_table(MOR)
    log = root / MOR_LOG
    log.write_bytes(log.read_bytes()[:-1])
    with pytest.raises(CorruptDataFileError, match=f"{MOR_LOG}.*cut short"):
        _read(root)


def test_garbage_after_the_committed_blocks_is_a_torn_tail_and_skipped(sample_table):
    """What a writer that crashed mid-append leaves: Apache Hudi skips the torn block."""
    root = sample_table(MOR)
    whole = _read(root)
    log = root / MOR_LOG
    log.write_bytes(log.read_bytes() + b"#HUDI#\x00\x00\x00\x00\x00\x00\x01\x00garbage")
    assert _read(root) == whole


def test_corrupt_blocks_outside_recorded_bytes_are_skipped_inside_them_are_errors(
    sample_table, tmp_path
):
    """`checked_log_blocks` on its own: the bytes a completed write recorded must be whole
    blocks of that instant; what no completed write recorded is read as Hudi reads it."""
    storage = load_file_io(str(tmp_path))
    block = (sample_table(MOR) / MOR_LOG).read_bytes()  # one block, of the second commit
    storage.write_bytes("x.log", block + b"\x00garbage")
    span = ((MOR_SECOND, 0, len(block)),)
    blocks = checked_log_blocks(storage, "x.log", {MOR_SECOND}, span)
    assert [b.block_type for b in blocks] == [BlockType.PARQUET_DATA, BlockType.CORRUPT]
    # No completed write's bytes (its instant is not committed for this read): as Apache Hudi
    # reads it, the block followed by neither a magic nor the end of the file is corrupt.
    lenient = checked_log_blocks(storage, "x.log", set(), span)
    assert [b.block_type for b in lenient] == [BlockType.CORRUPT]
    other = (("20250117083199999", 0, len(block)),)
    with pytest.raises(CorruptDataFileError, match="holds no block of it"):
        checked_log_blocks(storage, "x.log", {"20250117083199999"}, other)
    storage.delete("x.log")
    with pytest.raises(MissingDataFileError, match="x.log is missing"):
        checked_log_blocks(storage, "x.log", {MOR_SECOND}, span)


def test_an_emptied_hoodie_properties_says_so(sample_table):
    root = sample_table(COW)
    (root / ".hoodie" / "hoodie.properties").write_bytes(b"")
    with pytest.raises(MalformedMetadataError, match="hoodie.properties is empty") as error:
        HoodieTableMetaClient.open(str(root))
    assert "version 0" not in str(error.value)


def test_undecodable_hoodie_properties_names_the_file(sample_table):
    root = sample_table(COW)
    properties = root / ".hoodie" / "hoodie.properties"
    properties.write_bytes(properties.read_bytes() + b"\xa8\xff")
    with pytest.raises(MalformedMetadataError, match="hoodie.properties"):
        HoodieTableMetaClient.open(str(root))
    properties.unlink()
    with pytest.raises(TableNotFoundError):
        HoodieTableMetaClient.open(str(root))


def test_a_malformed_commit_file_names_it_and_earlier_history_still_reads(sample_table):
    root = sample_table(COW)
    earlier = _read(root, **{"as.of.instant": COW_FIRST})
    commit = root / ".hoodie" / f"{COW_SECOND}.commit"
    commit.write_bytes(commit.read_bytes()[:50])
    with pytest.raises(MalformedMetadataError, match=f"{commit.name} is damaged"):
        _read(root)  # not a raw JSONDecodeError
    # Time travel to before the damaged instant needs nothing of it.
    assert _read(root, **{"as.of.instant": COW_FIRST}) == earlier


@pytest.mark.parametrize(
    "error",
    [
        OSError("When reading information for key 't/a.parquet' in bucket 'b': AWS Error "
                "SLOW_DOWN during HeadObject operation: reduce your request rate."),
        OSError("AWS Error NETWORK_CONNECTION during GetObject operation: curlCode: 28"),
        PermissionError("Permission denied"),
        ConnectionResetError("Connection reset by peer"),
    ],
)
def test_an_error_reaching_the_store_is_no_damage(tmp_path, error):
    """pyarrow raises OSError for unparsable bytes and for a store it cannot reach alike; the
    latter passes through as it is (a Spark task retries it), never as a damaged file that
    sends the user to restore a healthy one."""
    storage = load_file_io(str(tmp_path))
    with pytest.raises(type(error)) as raised, damaged_data_file(storage, "a.parquet", "base"):
        raise error
    assert raised.value is error
    with pytest.raises(type(error)) as raised, malformed(str(tmp_path / "x.commit"), "a commit"):
        raise error
    assert raised.value is error


def test_an_unparsable_file_read_as_oserror_is_damage(tmp_path):
    """The OSErrors of bytes: a parquet footer or page that does not decode."""
    storage = load_file_io(str(tmp_path))
    for text in ("Couldn't deserialize thrift: TProtocolException: Invalid data",
                 "CRC checksum verification failed"):  # fmt: skip
        with pytest.raises(CorruptDataFileError), damaged_data_file(storage, "a.parquet", "b"):
            raise OSError(text)
        with pytest.raises(MalformedMetadataError), malformed(str(tmp_path / "x"), "a commit"):
            raise OSError(text)

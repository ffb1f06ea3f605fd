"""The bytes of the metadata table's files, as Apache Hudi writes them: base HFiles and the log
content of one delta commit in one file group (an HFile data block of records, a delete block of
removed keys). The driver's delta commit (`metadata_writer.py`) and the Spark tasks writing
`record_index` files (`record_index.py`) both make them here, so the two write the same bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence

import pyarrow as pa

from ..bloom_filter import BloomFilterSpec, serialized_filter
from ..config import BLOOM_FILTERS
from ..hfile import JAVA_DEFLATE, RUN_LENGTH_DEFLATE, Deflate, write_hfile
from ..logformat import DeleteRecord, delete_block, hfile_data_block
from ..metadata_records import MetadataRecord, encode_metadata_record, metadata_record_schema


def deflate_of(partition: str) -> Deflate:
    """How a metadata table partition's HFile blocks are deflated: Java's default, as Apache
    Hudi writes them, but run-length for `bloom_filters` (readers cannot tell). Each of its
    records is a base file's bloom filter as base64 text (~431 KB at the default 60,000
    entries), which the default deflate took 10-17 ms a filter over in the driver: 0.46 s of
    a 1M-row upsert's 0.57 s commit of 30 files, 1.8 s of the 2.2 s the metadata table's
    compaction of 200 files' filters took (docs/performance/indexes.md, metadata_table.py)."""
    return RUN_LENGTH_DEFLATE if partition == BLOOM_FILTERS else JAVA_DEFLATE


def sorted_entries(records: Sequence[MetadataRecord], version: int) -> list[tuple[bytes, bytes]]:
    """(key, encoded record) pairs of `records`, sorted by key as an HFile holds them."""
    return sorted((r.key.encode("utf-8"), encode_metadata_record(r, version)) for r in records)


def metadata_base_file(
    entries: Sequence[tuple[bytes, bytes]], version: int, deflate: Deflate = JAVA_DEFLATE
) -> bytes:
    """An MDT base file of `entries` (sorted (key, encoded record) pairs) as Apache Hudi writes
    it: an HFile whose file info holds the record schema, the key range and the type of the
    bloom filter of its keys, which a meta block holds; whole KeyValue keys in its indexes for
    version 6 (Apache Hudi 0.15 reads it with HBase's reader); data blocks deflated as `deflate`
    says (`deflate_of` its partition)."""
    keys = pa.array([key.decode("utf-8") for key, _ in entries], pa.string())
    bloom = base64.b64encode(serialized_filter(keys, BloomFilterSpec()))
    file_info = {
        b"schema": metadata_record_schema(version).encode("utf-8"),
        b"bloomFilterTypeCode": b"DYNAMIC_V0",
    }
    if entries:
        file_info[b"minRecordKey"] = entries[0][0]
        file_info[b"maxRecordKey"] = entries[-1][0]
    return write_hfile(entries, file_info=file_info, meta_blocks={"bloomFilter": bloom},
                       hbase_keys=version < 8, deflate=deflate)  # fmt: skip


def log_content(
    partition: str,
    entries: Sequence[tuple[bytes, bytes]],
    removed: Iterable[str],
    instant_time: str,
    version: int,
    data_block: bool = False,
) -> bytes:
    """One delta commit's log file in one file group of `partition`: an HFile data block of
    `entries` (sorted (key, encoded record) pairs; written when there are any, or when
    `data_block` asks for one even if empty, as the `files` partition always has), then a
    delete block of the `removed` keys, as Apache Hudi writes them (the MDT partition as
    partition path, ordering value 0, the record schema in the header). Version 6 tables get
    whole KeyValue keys in the HFile's index (Apache Hudi 0.15's HBase reader)."""
    schema = metadata_record_schema(version)
    blocks = []
    if entries or data_block:
        blocks.append(hfile_data_block(entries, instant_time, schema, hbase_keys=version < 8,
                                       deflate=deflate_of(partition)))  # fmt: skip
    gone = sorted(removed)
    if gone:
        blocks.append(delete_block([DeleteRecord(k, partition) for k in gone], instant_time,
                                   schema))  # fmt: skip
    return b"".join(blocks)

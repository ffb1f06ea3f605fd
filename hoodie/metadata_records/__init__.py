"""The records of Apache Hudi's metadata table (`.hoodie/metadata`): their Avro schema per table
version, typed values and codec, keys and file groups, and how two versions of a record merge.

The metadata table is a merge-on-read table of HFiles whose cells hold one
`HoodieMetadataRecord` each (docs/design/metadata-table.md, sections 1.1 and 2). This package is
the formats floor's part of it: bytes in, typed records out and back, with no file access.

- `schema`: the exact schema JSON Apache Hudi 0.15 (table version 6) and 1.2 (version 8) write;
- `keys`: the MDT partitions, hashed keys, file group mapping and the record index's sizing;
- `records`: the record dataclasses, `decode_metadata_record`/`encode_metadata_record`, the
  record index's file id and instant encodings;
- `merge`: `merge_metadata_records`, Apache Hudi's rules for a key's versions across log blocks
  and the base file.
"""

from .keys import (
    ALL_PARTITIONS_KEY,
    NON_PARTITIONED_NAME,
    MetadataPartitionType,
    bloom_filter_key,
    column_index_id,
    column_stats_key,
    estimate_file_group_count,
    file_group_id,
    file_group_index,
    file_group_indexes,
    file_index_id,
    java_string_hash,
    java_string_hashes,
    partition_identifier,
    partition_index_id,
    partition_stats_key,
)
from .merge import merge_metadata_records
from .records import (
    BloomFilterRecord,
    ColumnStatsRecord,
    FileEntry,
    FilesRecord,
    MetadataRecord,
    PartitionStatsRecord,
    RecordIndexRecord,
    SecondaryIndexRecord,
    StatKind,
    StatValue,
    decode_metadata_record,
    encode_metadata_record,
    epoch_millis_to_instant,
    file_id_encoding_of,
    instant_to_epoch_millis,
    join_file_id,
    split_file_id,
)
from .schema import metadata_record_schema

__all__ = [
    "ALL_PARTITIONS_KEY",
    "NON_PARTITIONED_NAME",
    "BloomFilterRecord",
    "ColumnStatsRecord",
    "FileEntry",
    "FilesRecord",
    "MetadataPartitionType",
    "MetadataRecord",
    "PartitionStatsRecord",
    "RecordIndexRecord",
    "SecondaryIndexRecord",
    "StatKind",
    "StatValue",
    "bloom_filter_key",
    "column_index_id",
    "column_stats_key",
    "decode_metadata_record",
    "encode_metadata_record",
    "epoch_millis_to_instant",
    "estimate_file_group_count",
    "file_group_id",
    "file_group_index",
    "file_group_indexes",
    "file_id_encoding_of",
    "file_index_id",
    "instant_to_epoch_millis",
    "java_string_hash",
    "java_string_hashes",
    "join_file_id",
    "merge_metadata_records",
    "metadata_record_schema",
    "partition_identifier",
    "partition_index_id",
    "partition_stats_key",
    "split_file_id",
]

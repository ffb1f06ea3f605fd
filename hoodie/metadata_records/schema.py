"""The Avro schema of `HoodieMetadataRecord`, exactly as Apache Hudi writes it per table version.

Every HFile of a metadata table carries its writer schema (the `schema` file-info entry, and the
`SCHEMA` header of each log block), so readers can read either version; but a writer should
write what Apache Hudi of the table's version writes: 0.15's schema for table version 6, 1.2's
for version 8. Both are built here from shared pieces and serialized compactly in Apache Hudi's
field order, so the JSON text equals the files' byte for byte (a unit test holds that against
real files). Both start with the five Hudi meta fields, although `hoodie.populate.meta.fields`
is false in a metadata table: Apache Hudi adds them to the writer schema of its HFiles.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import fastavro

NAMESPACE = "org.apache.hudi.avro.model"
RECORD_NAME = "HoodieMetadataRecord"
META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)

# The table versions whose schema we write (7 has 6's layout of the metadata table).
SCHEMA_VERSIONS = (6, 8)

_STRING: dict[str, Any] = {"type": "string", "avro.java.string": "String"}
_UNION_DOC = "to be able to be used it w/in Avro's Union"

# (name, what its doc says it wraps, value type); 1.x adds the last two.
_WRAPPERS: tuple[tuple[str, str, Any], ...] = (
    ("BooleanWrapper", "boolean type", "boolean"),
    ("IntWrapper", "int type", "int"),
    ("LongWrapper", "long type", "long"),
    ("FloatWrapper", "float type", "float"),
    ("DoubleWrapper", "double type", "double"),
    ("BytesWrapper", "bytes type", "bytes"),
    ("StringWrapper", "string type", _STRING),
    ("DateWrapper", "Date logical type", "int"),
    (
        "DecimalWrapper",
        "Decimal logical type",
        {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
    ),
    (
        "TimeMicrosWrapper",
        "Time-micros logical type",
        {"type": "long", "logicalType": "time-micros"},
    ),
    ("TimestampMicrosWrapper", "Timestamp-micros logical type", "long"),
    ("LocalDateWrapper", "Local Date type", "int"),
)
_WRAPPERS_V6 = 11  # 0.15 has the first eleven


def _nullable(name: str, kind: Any, doc: str, default: bool = True) -> dict[str, Any]:
    """A field of union {null, kind}, with default null unless told otherwise."""
    field: dict[str, Any] = {"name": name, "type": ["null", kind], "doc": doc}
    if default:
        field["default"] = None
    return field


def _field(name: str, kind: Any, doc: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "type": kind}
    if doc is not None:
        out["doc"] = doc
    out.update(extra)
    return out


def _wrapper_records(version: int) -> list[dict[str, Any]]:
    wrappers = _WRAPPERS if version >= 8 else _WRAPPERS[:_WRAPPERS_V6]
    out = [
        {
            "type": "record",
            "name": name,
            "doc": f"A record wrapping {what} {_UNION_DOC}",
            "fields": [{"name": "value", "type": kind}],
        }
        for name, what, kind in wrappers
    ]
    if version >= 8:
        out.append(
            {
                "type": "record",
                "name": "ArrayWrapper",
                "doc": "A record containing a list of wrapped values.",
                "fields": [
                    _field(
                        "wrappedValues",
                        [
                            "null",
                            {
                                "type": "array",
                                "items": ["null", *(name for name, _, _ in _WRAPPERS)],
                            },
                        ],
                        "An array where each element is one of the supported wrapper types.",
                        default=None,
                    )
                ],
            }
        )
    return out


def _column_stats(version: int) -> dict[str, Any]:
    wrappers = _wrapper_records(version)
    fields = [
        _nullable("fileName", _STRING, "File name for which this column statistics applies"),
        _nullable("columnName", _STRING, "Column name for which this column statistics applies"),
        _field(
            "minValue",
            ["null", *wrappers],
            "Minimum value in the range. Based on user data table schema, we can convert this "
            "to appropriate type",
            default=None,
        ),
        _field(
            "maxValue",
            ["null", *(w["name"] for w in wrappers)],
            "Maximum value in the range. Based on user data table schema, we can convert it "
            "to appropriate type",
            default=None,
        ),
        _nullable("valueCount", "long", "Total count of values"),
        _nullable("nullCount", "long", "Total count of null values"),
        _nullable("totalSize", "long", "Total storage size on disk"),
        _nullable("totalUncompressedSize", "long", "Total uncompressed storage size on disk"),
        _field("isDeleted", "boolean", "Column range entry valid/deleted flag"),
    ]
    if version >= 8:
        value_type = {
            "type": "record",
            "name": "HoodieValueTypeInfo",
            "fields": [
                _field("typeOrdinal", "int", "Enum type ordinal representing the value type"),
                _nullable(
                    "additionalInfo",
                    _STRING,
                    "Optional additional information about the value type",
                ),
            ],
        }
        fields += [
            _field(
                "isTightBound",
                "boolean",
                "Whether the min/max range of a column is tight bound or not",
                default=False,
            ),
            _nullable(
                "valueType",
                value_type,
                "Value type information containing enum ordinal and optional "
                "additional information",
            ),
        ]
    return {
        "type": "record",
        "name": "HoodieMetadataColumnStats",
        "doc": "Data file column statistics",
        "fields": fields,
    }


_UUID_PIECES = (
    " \nA UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and "
    "fileIndex). \nFileID format is {UUID}-{fileIndex}."
)


def _record_index(version: int) -> dict[str, Any]:
    # 0.15's doc of fileIdEncoding names fileIdLowBits twice; 1.2 fixed it to fileIdHighBits.
    second = "fileIdHighBits" if version >= 8 else "fileIdLowBits"
    fields = [
        _nullable("partitionName", _STRING, "Refers to the partition name the record belongs to"),
        _nullable(
            "fileIdHighBits",
            "long",
            "Refers to high 64 bits if the fileId is based on UUID format." + _UUID_PIECES,
        ),
        _nullable(
            "fileIdLowBits",
            "long",
            "Refers to low 64 bits if the fileId is based on UUID format." + _UUID_PIECES,
        ),
        _nullable(
            "fileIndex",
            "int",
            "Index representing file index which is used to re-construct UUID based "
            "fileID. Applicable when the fileId is based on UUID format." + _UUID_PIECES,
        ),
        _nullable(
            "fileId",
            _STRING,
            "Represents fileId of the location where record belongs to. When the "
            "encoding is 1, fileID is stored in raw string format.",
        ),
        _nullable(
            "instantTime",
            "long",
            "Epoch time in millisecond representing the commit time at which record was added",
        ),
        _field(
            "fileIdEncoding",
            "int",
            "Represents fileId encoding. Possible values are 0 and 1. O represents UUID based "
            "fileID, and 1 represents raw string format of the fileId. \nWhen the encoding is "
            f"0, reader can deduce fileID from fileIdLowBits, {second} and fileIndex.",
            default=0,
        ),
    ]
    if version >= 8:
        fields.append(
            _nullable(
                "position",
                "long",
                "Represents position of record within a file group for easier access. It "
                "will be used for index lookup.",
            )
        )
    return {"type": "record", "name": "HoodieRecordIndexInfo", "fields": fields}


def _schema(version: int) -> dict[str, Any]:
    file_info = {
        "type": "record",
        "name": "HoodieMetadataFileInfo",
        "fields": [
            _field("size", "long", "Size of the file"),
            _field("isDeleted", "boolean", "True if this file has been deleted"),
        ],
    }
    bloom = {
        "type": "record",
        "name": "HoodieMetadataBloomFilter",
        "doc": "Data file bloom filter details",
        "fields": [
            _field("type", _STRING, "Bloom filter type code"),
            _field(
                "timestamp", _STRING, "Instant timestamp when this metadata was created/updated"
            ),
            _field("bloomFilter", "bytes", "Bloom filter binary byte array"),
            _field("isDeleted", "boolean", "Bloom filter entry valid/deleted flag"),
        ],
    }
    fields = [
        *(_field(name, ["null", "string"], "", default=None) for name in META_FIELDS),
        _field("key", _STRING),
        _field("type", "int", "Type of the metadata record"),
        _nullable(
            "filesystemMetadata",
            {"type": "map", "values": file_info, "avro.java.string": "String"},
            "Contains information about partitions and files within the dataset",
            default=False,
        ),
        _nullable(
            "BloomFilterMetadata",
            bloom,
            "Metadata Index of bloom filters for all data files in the user table",
        ),
        _nullable(
            "ColumnStatsMetadata",
            _column_stats(version),
            "Metadata Index of column statistics for all data files in the user table",
        ),
        _nullable(
            "recordIndexMetadata",
            _record_index(version),
            "Metadata Index that contains information about record keys and their location in "
            "the dataset",
        ),
    ]
    if version >= 8:
        secondary = {
            "type": "record",
            "name": "HoodieSecondaryIndexInfo",
            "fields": [_field("isDeleted", "boolean", "True if this entry has been deleted")],
        }
        fields.append(
            _nullable(
                "SecondaryIndexMetadata",
                secondary,
                "Metadata Index that contains information about secondary keys and the "
                "corresponding record keys in the dataset",
            )
        )
    return {
        "type": "record",
        "name": RECORD_NAME,
        "namespace": NAMESPACE,
        "doc": "A record saved within the Metadata Table",
        "fields": fields,
    }


def schema_version(table_version: int) -> int:
    """The schema a table of this version writes: 0.15's up to version 7, 1.2's from 8."""
    return 8 if table_version >= 8 else 6


@functools.cache
def metadata_record_schema(table_version: int) -> str:
    """The writer schema's JSON text, as Apache Hudi of that table version writes it."""
    return json.dumps(_schema(schema_version(table_version)), separators=(",", ":"))


@functools.lru_cache(maxsize=32)
def parsed_schema(schema_json: str) -> Any:
    """fastavro's parsed form of a schema text (parsing takes milliseconds; files repeat it)."""
    return fastavro.parse_schema(json.loads(schema_json))


def reader_schema() -> Any:
    """What records are decoded into: the newest schema, whose added fields have defaults, so
    an older writer's record resolves to it."""
    return parsed_schema(metadata_record_schema(8))

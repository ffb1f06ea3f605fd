"""CDC log files: the changes a write made to a file group, as Apache Hudi logs them.

With `hoodie.table.cdc.enabled`, every write that rewrites a base file also writes one CDC log
file beside it (`naming.cdc_log_file_name`: the base file's instant and write token, plus
`.cdc`). It is an ordinary Hudi log file holding one `CDC_DATA` block (type 6) whose content is
an Avro data block; its `SCHEMA` header depends on the table's supplemental logging mode
(`HoodieCDCUtils.schemaBySupplementalLoggingMode`):

* `OP_KEY_ONLY`: record `Record`, fields `op` and `record_key`, both `["string", "null"]`;
* `DATA_BEFORE`: record `hoodie.<table>.CDC`, fields `op`, `record_key`, `before`;
* `DATA_BEFORE_AFTER`: record `hoodie.<table>.CDC`, fields `op`, `ts_ms`, `before`, `after`.

The images (`before`, `after`) are the table's record without meta columns
(`<table>_record`, every field nullable). `op` is `i`, `u` or `d`; `ts_ms` is the writing
instant's time as text (not milliseconds, despite the name). Readers work out from the commit
metadata's `cdcStats` which files to read, and infer the changes of writes that left none
(new file groups, log appends): `hoodie.read.cdc`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .avro_columnar import block_content, table_encodable
from .exceptions import SchemaError
from .logformat import (
    BLOCK_CONTENT_VERSION,
    BlockType,
    HeaderKey,
    LogBlock,
    avro_block_content,
    avro_rows,
    encode_block,
)
from .options.table import CdcSupplementalLoggingMode
from .schema import avro_record_name, to_avro_schema

__all__ = [
    "CdcOperation",
    "CdcSupplementalLoggingMode",
    "cdc_data_block",
    "cdc_schema",
    "read_cdc_block",
]


class CdcOperation(Enum):
    """`HoodieCDCOperation`: what happened to a record, as the `op` field stores it."""

    INSERT = "i"
    UPDATE = "u"
    DELETE = "d"


_OPS = frozenset(op.value for op in CdcOperation)

OP = "op"
TS_MS = "ts_ms"
RECORD_KEY = "record_key"
BEFORE = "before"
AFTER = "after"

_NULLABLE_STRING = {"type": ["null", "string"], "doc": "", "default": None}


def cdc_schema(
    mode: CdcSupplementalLoggingMode | str, table_name: str, data_schema: pa.Schema
) -> dict[str, Any]:
    """The Avro schema of a CDC block's records for `mode`, as Apache Hudi 1.x writes it.

    `data_schema` is the table's schema (meta columns are dropped): the image record is the
    same `<table>_record` data blocks carry, declared in `before` and referred to by name in
    `after`.
    """
    mode = CdcSupplementalLoggingMode(mode)
    if mode is CdcSupplementalLoggingMode.OP_KEY_ONLY:
        # Apache Hudi declares this one by hand: string first, no defaults, no namespace.
        return {
            "type": "record",
            "name": "Record",
            "fields": [
                {"name": OP, "type": ["string", "null"]},
                {"name": RECORD_KEY, "type": ["string", "null"]},
            ],
        }
    image = json.loads(to_avro_schema(data_schema, table_name))
    image.pop("namespace", None)  # declared inside `hoodie.<table>`: the same full name
    image_ref = image["name"]
    fields: list[dict[str, Any]] = [{"name": OP, **_NULLABLE_STRING}]
    if mode is CdcSupplementalLoggingMode.DATA_BEFORE:
        fields += [
            {"name": RECORD_KEY, **_NULLABLE_STRING},
            {"name": BEFORE, "type": ["null", image], "doc": "", "default": None},
        ]
    else:
        fields += [
            {"name": TS_MS, **_NULLABLE_STRING},
            {"name": BEFORE, "type": ["null", image], "doc": "", "default": None},
            {"name": AFTER, "type": ["null", image_ref], "doc": "", "default": None},
        ]
    return {
        "type": "record",
        "name": "CDC",
        "namespace": avro_record_name(table_name)[1],
        "doc": "",
        "fields": fields,
    }


def cdc_fields(mode: CdcSupplementalLoggingMode | str) -> tuple[str, ...]:
    """The fields a CDC record of `mode` has, in order."""
    mode = CdcSupplementalLoggingMode(mode)
    if mode is CdcSupplementalLoggingMode.OP_KEY_ONLY:
        return (OP, RECORD_KEY)
    if mode is CdcSupplementalLoggingMode.DATA_BEFORE:
        return (OP, RECORD_KEY, BEFORE)
    return (OP, TS_MS, BEFORE, AFTER)


def cdc_data_block(
    records: pa.Table | Iterable[Mapping[str, Any]],
    instant_time: str,
    schema: Mapping[str, Any],
) -> bytes:
    """A `CDC_DATA` block of `records` (an Arrow table or dicts with exactly the schema's
    fields, images as structs/dicts of the data columns), headers `INSTANT_TIME` and `SCHEMA`
    as Apache Hudi writes them."""
    names = [f["name"] for f in schema["fields"]]
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: ""}
    if isinstance(records, pa.Table) and table_encodable(records, dict(schema)):
        # a column at a time (`avro_columnar`): the same bytes, without a call per record
        ops = records.column(OP)
        if pc.any(pc.invert(pc.is_in(ops, value_set=pa.array(sorted(_OPS))))).as_py() or (
            ops.null_count
        ):
            raise SchemaError("a CDC record's op is not one of i, u, d")
        header[HeaderKey.SCHEMA] = json.dumps(schema, separators=(",", ":"))
        content = block_content(records, dict(schema), BLOCK_CONTENT_VERSION)
        return encode_block(BlockType.CDC_DATA, header, content)
    rows = avro_rows(records) if isinstance(records, pa.Table) else [dict(r) for r in records]
    for row in rows:
        if list(row) != names:
            raise SchemaError(
                f"a CDC record has fields {list(row)}; its block's schema has {names}"
            )
        if row[OP] not in _OPS:
            raise SchemaError(f"a CDC record's op is {row[OP]!r}; it must be one of i, u, d")
    schema_json = json.dumps(schema, separators=(",", ":"))
    image = _image_name(schema)
    if image is not None:
        # Named, an image's union branch is not found by validating the record against each
        # branch (half the time of a block's encoding).
        rows = [
            {k: (image, v) if k in (BEFORE, AFTER) and v is not None else v for k, v in row.items()}
            for row in rows
        ]
    content = avro_block_content(rows, schema_json)
    header[HeaderKey.SCHEMA] = schema_json
    return encode_block(BlockType.CDC_DATA, header, content)


def _image_name(schema: Mapping[str, Any]) -> str | None:
    """The full name of the image record a CDC schema declares in `before`, if any."""
    for f in schema["fields"]:
        if f["name"] == BEFORE:
            declared = f["type"][1]
            if isinstance(declared, dict):
                namespace = declared.get("namespace", schema.get("namespace"))
                return f"{namespace}.{declared['name']}" if namespace else declared["name"]
    return None


def read_cdc_block(block: LogBlock) -> pa.Table:
    """The records of a `CDC_DATA` block: one column per field of its schema (`before` and
    `after` as structs of the data columns). Damage raises a `HoodieError` naming the block."""
    return block.cdc_records()

"""Hudi log files: the append-only files of merge-on-read tables, block by block.

A merge-on-read write does not rewrite the base parquet file; it appends *blocks* to a log file
of the file group (`.<fileId>_<baseInstant>.log.<version>_<writeToken>`). Readers merge the
blocks over the base file at read time. This module reads and writes those blocks exactly as
Apache Hudi 0.14/0.15 (table version 6, log format version 1) lays them out, so Hudi, hudi-rs
and this project can read each other's log files.

Every block is framed the same way (all integers big-endian, as Java's `DataOutputStream`)::

    #HUDI#                    6 bytes  magic, marks the start of every block
    block length              int64    bytes after this field up to and including the trailer
    log format version        int32    always 1 for table version 6
    block type                int32    `BlockType` ordinal
    header                    int32 count, then per entry: int32 key ordinal, int32 length,
                                       UTF-8 value (`HeaderKey`)
    content length            int64
    content                   bytes    block-type specific (see below)
    footer                    same layout as the header (always empty in practice)
    total block length        int64    bytes written for this block before this field,
                                       magic included: the reverse pointer, and the
                                       consistency check for crash detection

Content by block type:

* parquet data block: a complete parquet file, nothing else.
* HFile data block (the metadata table's): a complete HFile (`hoodie.hfile`), nothing else.
* Avro data block: int32 content version (3), int32 record count, then per record an int32
  length and one Avro binary datum in the writer schema of the `SCHEMA` header.
* delete block: int32 content version, int32 length, then the serialized keys. Version 3 is
  one Avro datum of `HoodieDeleteRecordList` (what Hudi 0.14/0.15 writes and the only version
  hudi-rs reads), whose ordering value is a union of wrapper records (`IntWrapper`,
  `LongWrapper`, ...); versions 1 and 2 were Java and Kryo object serialization (Hudi < 0.14).
* command block: empty; the header says what to do (`COMMAND_BLOCK_TYPE` 0 = rollback the
  blocks of `TARGET_INSTANT_TIME`).

A writer that crashes mid-append leaves a partial last block. Hudi detects it by checking that
the block length leads to a trailer that agrees with it and is followed by a magic or the end
of the file; otherwise everything up to the next magic is a *corrupt block*, which readers skip.
`read_log_file` does the same instead of failing.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import io
import json
import os
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import fastavro
import fastavro.schema
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .exceptions import HoodieError, SchemaError, UnsupportedTableError
from .hfile import JAVA_DEFLATE, Deflate, HFileReader, write_hfile
from .schema import META_COLUMNS, RECORD_KEY, from_avro_schema
from .storage import VERIFY_CHECKSUMS, FileIO, parquet_write_options

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
# Version of the bytes inside Avro data and delete blocks (`HoodieLogBlock.version` in Hudi).
BLOCK_CONTENT_VERSION = 3

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")


class BlockType(enum.IntEnum):
    """Kind of a log block; the ordinal is what the file stores (`HoodieLogBlockType`)."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(enum.IntEnum):
    """Keys of block headers and footers; the ordinal is stored (`HeaderMetadataType`).

    Table version 6 writers use the first seven; the last two come with table version 8 and
    are listed only so that such files fail with a clear message further up, not here.
    """

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


class CommandType(enum.IntEnum):
    """Value of the `COMMAND_BLOCK_TYPE` header (stored as the ordinal in decimal text)."""

    ROLLBACK_BLOCK = 0


ROLLBACK_BLOCK = CommandType.ROLLBACK_BLOCK

# The Avro schema of delete block content version 3 (Hudi 0.14/0.15, HUDI-5760). The ordering
# value is a union of one-field wrapper records (the ones the metadata table's column stats
# use); the union branch index is what the bytes record, so the order below is the format.
_WRAPPER_NAMESPACE = "org.apache.hudi.avro.model"
_WRAPPERS: list[tuple[str, Any]] = [
    ("BooleanWrapper", "boolean"),
    ("IntWrapper", "int"),
    ("LongWrapper", "long"),
    ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"),
    ("BytesWrapper", "bytes"),
    ("StringWrapper", "string"),
    ("DateWrapper", "int"),  # days since 1970-01-01
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", "long"),  # microseconds since 1970-01-01 UTC
]


def _wrapper(name: str, value_type: Any) -> dict[str, Any]:
    return {
        "namespace": _WRAPPER_NAMESPACE,
        "type": "record",
        "name": name,
        "fields": [{"name": "value", "type": value_type}],
    }


# Hudi 1.x appends an array wrapper (several ordering fields); reading accepts it, since its
# branch comes after all of 0.14's and so changes none of their indexes.
_READ_ONLY_WRAPPERS: list[Any] = [
    {
        "namespace": _WRAPPER_NAMESPACE,
        "type": "record",
        "name": "ArrayWrapper",
        "fields": [
            {
                "name": "wrappedValues",
                "type": [
                    "null",
                    {
                        "type": "array",
                        "items": ["null"]
                        + [f"{_WRAPPER_NAMESPACE}.{name}" for name, _ in _WRAPPERS]
                        + [_wrapper("LocalDateWrapper", "int")],
                    },
                ],
                "default": None,
            }
        ],
    }
]


def _delete_record_list_schema(ordering_branches: list[Any]) -> dict[str, Any]:
    item = {
        "name": "HoodieDeleteRecord",
        "type": "record",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": ["null"] + ordering_branches, "default": None},
        ],
    }
    return {
        "namespace": _WRAPPER_NAMESPACE,
        "type": "record",
        "name": "HoodieDeleteRecordList",
        "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": item}}],
    }


DELETE_RECORD_LIST_SCHEMA = _delete_record_list_schema([_wrapper(n, t) for n, t in _WRAPPERS])
_DELETE_WRITE_SCHEMA = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)
_DELETE_READ_SCHEMA = fastavro.parse_schema(
    _delete_record_list_schema([_wrapper(n, t) for n, t in _WRAPPERS] + _READ_ONLY_WRAPPERS)
)
# Ordering types a caller can ask for by their Avro primitive name, and their wrapper.
_ORDERING_WRAPPERS = {
    "boolean": "BooleanWrapper",
    "int": "IntWrapper",
    "long": "LongWrapper",
    "float": "FloatWrapper",
    "double": "DoubleWrapper",
    "bytes": "BytesWrapper",
    "string": "StringWrapper",
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DAY = datetime.date(1970, 1, 1)
_MICROSECOND = datetime.timedelta(microseconds=1)


@dataclass(frozen=True)
class DeleteRecord:
    """One key a delete block removes, with the ordering value that decides against updates.

    0 is Hudi's default ordering value (what Spark SQL's DELETE writes): it means "no event
    time", so the delete wins over any record an earlier instant wrote (commit-time ordering).
    """

    record_key: str
    partition_path: str
    ordering_value: Any = 0
    # Read from a block: the value was Hudi's default (an Integer 0, or none), so the delete
    # orders by arrival only. A long 0 of a bigint ordering field is a real value.
    natural_order: bool = field(default=False, compare=False)


@dataclass
class LogBlock:
    """One block of a log file, decoded lazily: `content` keeps the raw bytes of the block body.

    `offset` is where the block's magic starts in the file and `size` how many bytes the block
    takes (magic and trailer included), so callers can tell where a corrupt region lies.
    """

    block_type: BlockType
    header: dict[HeaderKey, str] = field(default_factory=dict)
    footer: dict[HeaderKey, str] = field(default_factory=dict)
    content: bytes = b""
    format_version: int = LOG_FORMAT_VERSION
    offset: int = 0
    size: int = 0

    @property
    def instant_time(self) -> str | None:
        """The instant that wrote the block; its data counts only once that instant completed."""
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        """For a rollback command block: the instant whose blocks must be ignored."""
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """Avro writer schema (JSON, meta columns included) of a data or delete block."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def command_type(self) -> CommandType | None:
        value = self.header.get(HeaderKey.COMMAND_BLOCK_TYPE)
        if value is None:
            return None
        try:
            return CommandType(int(value))
        except ValueError as exc:
            raise UnsupportedTableError(
                f"log command block has unknown COMMAND_BLOCK_TYPE {value!r}; only "
                f"{int(CommandType.ROLLBACK_BLOCK)} (rollback) exists in table version 6"
            ) from exc

    @property
    def is_partial(self) -> bool:
        """A partial update (`IS_PARTIAL` = "true", table version 8): the data block's records
        carry only the columns its SCHEMA header names (meta columns and the changed ones);
        readers take the others from the key's version before it."""
        return (self.header.get(HeaderKey.IS_PARTIAL) or "").strip().lower() == "true"

    @property
    def is_rollback(self) -> bool:
        return self.block_type == BlockType.COMMAND and self.command_type == ROLLBACK_BLOCK

    @property
    def is_data_block(self) -> bool:
        return self.block_type in (
            BlockType.AVRO_DATA,
            BlockType.PARQUET_DATA,
            BlockType.HFILE_DATA,
            BlockType.CDC_DATA,
        )

    def records(self, columns: list[str] | None = None) -> pa.Table:
        """The rows of a parquet or Avro data block, meta columns included.

        `columns` narrows a parquet block's read to those columns (tagging needs only keys).
        """
        if self.block_type == BlockType.PARQUET_DATA:
            return pq.read_table(pa.BufferReader(self.content), columns=columns,
                                 **VERIFY_CHECKSUMS)  # fmt: skip
        if self.block_type == BlockType.AVRO_DATA:
            table = self._avro_records()
            return table.select(columns) if columns is not None else table
        if self.block_type == BlockType.HFILE_DATA:
            raise UnsupportedTableError(
                f"log block type HFILE_DATA (instant {self.instant_time}) holds metadata table "
                "records, not table rows: read it with LogBlock.hfile()"
            )
        if self.block_type == BlockType.CDC_DATA:
            raise HoodieError(
                f"a CDC_DATA log block (instant {self.instant_time}) holds change records, "
                "not table rows: read it with cdc_records()"
            )
        raise HoodieError(
            f"a {self.block_type.name} log block holds no data records"
            + ("; use deleted_records()" if self.block_type == BlockType.DELETE else "")
        )

    def records_with_keys(self, keys: pa.Array) -> pa.Table:
        """The rows of a data block whose record key is one of `keys` (a read that names its
        keys: a point read). A parquet block's key column is read first, and its other
        columns only when a key is there: most of a table's blocks hold none of them."""
        if self.block_type == BlockType.PARQUET_DATA:
            parquet = pq.ParquetFile(pa.BufferReader(self.content), **VERIFY_CHECKSUMS)
            if RECORD_KEY in parquet.schema_arrow.names:
                hit = pc.is_in(parquet.read(columns=[RECORD_KEY]).column(0), value_set=keys)
                if not pc.any(hit).as_py():
                    return parquet.schema_arrow.empty_table()
                return parquet.read().filter(hit)
        records = self.records()
        if RECORD_KEY not in records.column_names:
            return records  # (no meta fields: the caller makes the keys of the key fields)
        return records.filter(pc.is_in(records.column(RECORD_KEY), value_set=keys))

    def cdc_records(self) -> pa.Table:
        """The change records of a CDC_DATA block (`hoodie.cdc`): one column per field of its
        SCHEMA header, images as structs."""
        if self.block_type != BlockType.CDC_DATA:
            raise HoodieError(f"a {self.block_type.name} log block holds no change records")
        return self._avro_records()

    def hfile(self) -> HFileReader:
        """The HFile an HFILE_DATA block holds whole (the metadata table's log blocks: its
        keys and `HoodieMetadataRecord` values, the writer schema in the SCHEMA header and in
        the HFile's file info). Damage raises `CorruptDataFileError` naming the block."""
        if self.block_type != BlockType.HFILE_DATA:
            raise HoodieError(f"a {self.block_type.name} log block holds no HFile")
        where = f"HFILE_DATA log block of instant {self.instant_time} at byte {self.offset}"
        return HFileReader(self.content, where)

    def _avro_records(self) -> pa.Table:
        if not self.schema:
            raise SchemaError(
                f"{self.block_type.name} block of instant {self.instant_time} has no SCHEMA "
                "header, so its records cannot be decoded"
            )
        writer_schema = fastavro.parse_schema(json.loads(self.schema))
        stream = io.BytesIO(self.content)
        version = _read_int(stream)
        if version < 1 or version > BLOCK_CONTENT_VERSION:
            raise UnsupportedTableError(
                f"Avro data block of instant {self.instant_time} has content version {version}; "
                f"versions 1 to {BLOCK_CONTENT_VERSION} are supported"
            )
        count = _read_int(stream)
        rows = []
        for _ in range(count):
            length = _read_int(stream)
            datum = stream.read(length)
            if len(datum) != length:
                raise HoodieError(
                    f"Avro data block of instant {self.instant_time} ends inside a record"
                )
            rows.append(fastavro.schemaless_reader(io.BytesIO(datum), writer_schema, None))
        return pa.Table.from_pylist(rows, schema=arrow_schema_of(self.schema))

    def deleted_records(self) -> list[DeleteRecord]:
        """The keys of a delete block (content version 3, Avro `HoodieDeleteRecordList`)."""
        if self.block_type != BlockType.DELETE:
            raise HoodieError(f"a {self.block_type.name} log block deletes no records")
        stream = io.BytesIO(self.content)
        version = _read_int(stream)
        length = _read_int(stream)
        data = stream.read(length)
        if version in (1, 2):
            encoding = "Java-serialized HoodieKey[]" if version == 1 else "Kryo DeleteRecord[]"
            raise UnsupportedTableError(
                f"delete block of instant {self.instant_time} uses content version {version} "
                f"({encoding}, written by Hudi before 0.14); only version 3 (Avro) is "
                "supported: compact the file group with Apache Hudi first"
            )
        if version != BLOCK_CONTENT_VERSION:
            raise UnsupportedTableError(
                f"delete block of instant {self.instant_time} has unknown content version "
                f"{version}; only {BLOCK_CONTENT_VERSION} is supported"
            )
        if len(data) != length:
            raise HoodieError(f"delete block of instant {self.instant_time} is truncated")
        decoded = fastavro.schemaless_reader(
            io.BytesIO(data), _DELETE_READ_SCHEMA, None, return_record_name=True
        )
        assert isinstance(decoded, dict)  # the reader's schema is a record's
        return [
            DeleteRecord(
                item["recordKey"],
                item["partitionPath"],
                _unwrap(item["orderingVal"]),
                natural_order=_is_default_ordering(item["orderingVal"]),
            )
            for item in decoded["deleteRecordList"]
        ]


def _is_default_ordering(wrapped: Any) -> bool:
    if wrapped is None:
        return True
    name, record = wrapped
    return name.rsplit(".", 1)[-1] == "IntWrapper" and record["value"] == 0


def _unwrap(wrapped: Any) -> Any:
    """The Python value of an ordering value wrapper, as Hudi's `unwrapAvroValueWrapper`."""
    if wrapped is None:
        return None
    name, record = wrapped
    short = name.rsplit(".", 1)[-1]
    if short == "ArrayWrapper":
        return [_unwrap(v) for v in record["wrappedValues"] or []]
    value = record["value"]
    if short in ("DateWrapper", "LocalDateWrapper"):
        return _EPOCH_DAY + datetime.timedelta(days=value)
    if short == "TimestampMicrosWrapper":
        return _EPOCH + datetime.timedelta(microseconds=value)
    return value


# -- schemas -----------------------------------------------------------------------------------
def arrow_schema_of(avro_schema_json: str) -> pa.Schema:
    """Arrow schema of an Avro record schema, with named-type references resolved.

    Hudi's writer schemas may define a record once and refer to it by name later; expanding
    the references first lets `hoodie.schema.from_avro_schema` map every field.
    """
    expanded = fastavro.schema.expand_schema(json.loads(avro_schema_json))
    return from_avro_schema(json.dumps(expanded))


def add_meta_fields(avro_schema_json: str) -> str:
    """The schema Hudi puts into log block headers: the five meta columns first, then the data.

    Mirrors `HoodieAvroUtils.addMetadataFields` (nullable strings with an empty doc), leaving the
    schema unchanged if it already has them.
    """
    record = json.loads(avro_schema_json)
    names = [f["name"] for f in record["fields"]]
    if names[: len(META_COLUMNS)] == list(META_COLUMNS):
        return avro_schema_json
    meta = [
        {"name": name, "type": ["null", "string"], "doc": "", "default": None}
        for name in META_COLUMNS
    ]
    data = [f for f in record["fields"] if f["name"] not in META_COLUMNS]
    out = {k: v for k, v in record.items() if k != "fields"}
    out["fields"] = meta + data
    return json.dumps(out, separators=(",", ":"))


# -- reading -----------------------------------------------------------------------------------
def read_log_file(
    source: FileIO | bytes | bytearray | memoryview | IO[bytes] | str | os.PathLike[str],
    path: str | None = None,
    *,
    include_corrupt: bool = True,
) -> Iterator[LogBlock]:
    """The blocks of one log file, in file order.

    `source` is a `FileIO` with `path` relative to its base path, the file's bytes, an open
    binary file, or a local path. The file is read whole: log files are bounded by
    `hoodie.logfile.max.size` and every block must be decoded anyway.

    A block whose framing is inconsistent (a crash mid-append, a truncated copy) comes back as a
    `BlockType.CORRUPT` block covering the bytes up to the next magic, the way Hudi's reader does,
    so the complete blocks before and after it stay readable; `include_corrupt=False` drops them.
    """
    data = _load(source, path)
    for block in _iter_blocks(data):
        if block.block_type == BlockType.CORRUPT and not include_corrupt:
            continue
        yield block


def log_file_instants(storage: FileIO, relative: str) -> set[str | None] | None:
    """The instants whose blocks a log file holds (corrupt blocks, a torn write's, count for
    none), or None when the file is gone: with concurrent writers the write that created it
    may have been rolled back since it was listed."""
    try:
        blocks = list(read_log_file(storage, relative, include_corrupt=False))
    except FileNotFoundError:
        return None
    return {b.instant_time for b in blocks}


def _load(source: Any, path: str | None) -> bytes:
    if isinstance(source, FileIO):
        if path is None:
            raise ValueError("read_log_file(storage, path): the relative path is missing")
        return source.read_bytes(path)
    if path is not None:
        raise ValueError("read_log_file: a path goes with a FileIO only")
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as handle:
            return handle.read()
    return source.read()


def _iter_blocks(data: bytes) -> Iterator[LogBlock]:
    pos = 0
    end = len(data)
    while pos < end:
        if end - pos < len(MAGIC):
            # A magic cut short: Hudi's reader hits EOF while reading it and stops.
            return
        if data[pos : pos + len(MAGIC)] != MAGIC:
            # Not at a block start (garbage before the first block): skip to the next magic.
            yield _corrupt(data, pos, pos)
            pos = _next_magic(data, pos + 1)
            continue
        body = pos + len(MAGIC)
        block_end = _checked_block_end(data, body)
        if block_end is None:
            nxt = _next_magic(data, body)
            yield _corrupt(data, pos, body, nxt)
            pos = nxt
            continue
        try:
            block = _parse_block(data, pos, body, block_end)
        except (struct.error, ValueError, UnicodeDecodeError):
            # The framing agreed with itself but the inside did not parse: corrupt as well.
            block = _corrupt(data, pos, body, block_end)
        yield block
        pos = block_end


def _checked_block_end(data: bytes, body: int) -> int | None:
    """End offset of the block whose length field starts at `body`, or None if it is corrupt.

    Same test as Hudi's `isBlockCorrupted`: the length must stay inside the file, the trailing
    total length minus the magic must equal it, and a magic or the end of file must follow.
    """
    if len(data) - body < _LONG.size:
        return None
    (length,) = _LONG.unpack_from(data, body)
    block_end = body + _LONG.size + length
    if length < _LONG.size or block_end > len(data):
        return None
    (trailer,) = _LONG.unpack_from(data, block_end - _LONG.size)
    if trailer - len(MAGIC) != length:
        return None
    following = data[block_end : block_end + len(MAGIC)]
    if len(following) == len(MAGIC) and following != MAGIC:
        return None
    return block_end


def _next_magic(data: bytes, start: int) -> int:
    found = data.find(MAGIC, start)
    return len(data) if found < 0 else found


def _corrupt(data: bytes, offset: int, body: int, end: int | None = None) -> LogBlock:
    stop = _next_magic(data, body + 1) if end is None else end
    return LogBlock(BlockType.CORRUPT, content=data[body:stop], offset=offset, size=stop - offset)


def _parse_block(data: bytes, offset: int, body: int, block_end: int) -> LogBlock:
    stream = io.BytesIO(data[body + _LONG.size : block_end])
    version = _read_int(stream)
    if version != LOG_FORMAT_VERSION:
        raise UnsupportedTableError(
            f"log block at byte {offset} has log format version {version}; only version "
            f"{LOG_FORMAT_VERSION} (table versions 6 and later) is supported"
        )
    type_ordinal = _read_int(stream)
    try:
        block_type = BlockType(type_ordinal)
    except ValueError as exc:
        raise UnsupportedTableError(
            f"log block at byte {offset} has unknown block type {type_ordinal}"
        ) from exc
    header = _read_metadata(stream, offset)
    (content_length,) = _LONG.unpack(_read_exact(stream, _LONG.size))
    content = _read_exact(stream, content_length)
    footer = _read_metadata(stream, offset)
    _read_exact(stream, _LONG.size)  # the trailer, already checked
    if stream.read(1):
        raise ValueError("bytes after the block trailer")
    return LogBlock(
        block_type, header, footer, content, version, offset=offset, size=block_end - offset
    )


def _read_metadata(stream: IO[bytes], offset: int) -> dict[HeaderKey, str]:
    entries: dict[HeaderKey, str] = {}
    count = _read_int(stream)
    if count < 0:
        raise ValueError("negative header entry count")
    for _ in range(count):
        ordinal = _read_int(stream)
        length = _read_int(stream)
        if length < 0:
            raise ValueError("negative header value length")
        value = _read_exact(stream, length).decode("utf-8")
        try:
            key = HeaderKey(ordinal)
        except ValueError as exc:
            raise UnsupportedTableError(
                f"log block at byte {offset} has unknown header key {ordinal}"
            ) from exc
        entries[key] = value
    return entries


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    if size < 0:
        raise ValueError("negative length")
    chunk = stream.read(size)
    if len(chunk) != size:
        raise struct.error(f"needed {size} bytes, found {len(chunk)}")
    return chunk


def _read_int(stream: IO[bytes]) -> int:
    return _INT.unpack(_read_exact(stream, _INT.size))[0]


# -- writing -----------------------------------------------------------------------------------
def encode_block(
    block_type: BlockType,
    header: Mapping[HeaderKey, str],
    content: bytes,
    footer: Mapping[HeaderKey, str] | None = None,
) -> bytes:
    """Frame one block as `HoodieLogFormatWriter.appendBlock` does; append it to a log file.

    Header entries go out in the mapping's order: Hudi writes whatever order its HashMap has
    and readers accept any, so re-encoding a block read from a file gives the same bytes.
    """
    header_bytes = _metadata_bytes(header)
    footer_bytes = _metadata_bytes(footer or {})
    # Everything after the length field: version, type, header, content length, content,
    # footer and the trailing total length.
    length = (
        _INT.size
        + _INT.size
        + len(header_bytes)
        + _LONG.size
        + len(content)
        + len(footer_bytes)
        + _LONG.size
    )
    out = bytearray(MAGIC)
    out += _LONG.pack(length)
    out += _INT.pack(LOG_FORMAT_VERSION)
    out += _INT.pack(int(block_type))
    out += header_bytes
    out += _LONG.pack(len(content))
    out += content
    out += footer_bytes
    out += _LONG.pack(len(out))  # reverse pointer: all bytes of this block so far
    return bytes(out)


def _metadata_bytes(entries: Mapping[HeaderKey, str]) -> bytes:
    out = bytearray(_INT.pack(len(entries)))
    for key in entries:
        value = entries[key].encode("utf-8")
        out += _INT.pack(int(key)) + _INT.pack(len(value)) + value
    return bytes(out)


def _check_instant(instant_time: str, what: str) -> str:
    if not (isinstance(instant_time, str) and instant_time.isdigit()):
        raise ValueError(f"{what} must be a Hudi instant time (digits), got {instant_time!r}")
    return instant_time


def _check_columns(table: pa.Table, schema_avro_json: str) -> None:
    names = [f["name"] for f in json.loads(schema_avro_json)["fields"]]
    if names != table.column_names:
        raise SchemaError(
            "the log block's Avro schema and its rows disagree: schema fields "
            f"{names}, table columns {table.column_names}; pass add_meta_fields(schema) and "
            "rows with the five _hoodie_* meta columns first"
        )


def parquet_data_block(
    table: pa.Table,
    instant_time: str,
    schema_avro_json: str,
    *,
    compression: str = "gzip",
    partial: bool = False,
) -> bytes:
    """A parquet data block holding `table` (meta columns first, as Hudi writes them).

    `schema_avro_json` goes into the SCHEMA header and must name the same columns in the same
    order (use `add_meta_fields` on the table's schema). Gzip is the codec Hudi 0.14/0.15 used
    for the fixtures' log blocks (`hoodie.parquet.compression.codec`); readers take any codec.
    `partial`: a partial update block of table version 8 (`IS_PARTIAL` = "true"; `table` and
    the schema hold the meta columns and the changed columns only, as Apache Hudi 1.x's
    `HoodieAppendHandle` writes them for MERGE INTO).
    """
    _check_instant(instant_time, "instant_time")
    _check_columns(table, schema_avro_json)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression=compression, **parquet_write_options(table))
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_avro_json}
    if partial:
        header[HeaderKey.IS_PARTIAL] = "true"
    return encode_block(BlockType.PARQUET_DATA, header, sink.getvalue())


def avro_data_block(table: pa.Table, instant_time: str, schema_avro_json: str) -> bytes:
    """An Avro data block (`hoodie.logfile.data.block.format=avro`) holding `table`'s rows."""
    _check_instant(instant_time, "instant_time")
    _check_columns(table, schema_avro_json)
    content = avro_block_content(avro_rows(table), schema_avro_json)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_avro_json}
    return encode_block(BlockType.AVRO_DATA, header, content)


def avro_rows(table: pa.Table) -> list[dict[str, Any]]:
    """`table`'s rows as fastavro writes them (maps as dicts, recursively)."""
    if not any(_has_map(f.type) for f in table.schema):
        return table.to_pylist()  # already in fastavro's shape (a walk cost 3/4 of a block)
    types = {f.name: f.type for f in table.schema}
    return [
        {name: _avro_value(v, types[name]) for name, v in row.items()} for row in table.to_pylist()
    ]


def _has_map(dtype: pa.DataType) -> bool:
    if pa.types.is_map(dtype):
        return True
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _has_map(dtype.value_type)
    if pa.types.is_struct(dtype):
        return any(_has_map(f.type) for f in dtype)
    return False


def avro_block_content(rows: list[dict[str, Any]], schema_avro_json: str) -> bytes:
    """The content of an Avro (or CDC) data block: content version, record count, then each
    record's length and schemaless Avro binary in `schema_avro_json`."""
    parsed = fastavro.parse_schema(json.loads(schema_avro_json))
    out = bytearray(_INT.pack(BLOCK_CONTENT_VERSION) + _INT.pack(len(rows)))
    datum = io.BytesIO()
    for row in rows:
        datum.seek(0)
        datum.truncate()
        fastavro.schemaless_writer(datum, parsed, row)
        encoded = datum.getvalue()
        out += _INT.pack(len(encoded)) + encoded
    return bytes(out)


def hfile_data_block(
    entries: Iterable[tuple[bytes, bytes]],
    instant_time: str,
    schema_json: str,
    *,
    block_size: int = 1 << 20,
    hbase_keys: bool = False,
    deflate: Deflate = JAVA_DEFLATE,
) -> bytes:
    """An HFILE_DATA block, the metadata table's log block: a whole HFile of `entries` ((key,
    Avro-encoded `HoodieMetadataRecord`), strictly increasing by key) as `write_hfile` makes
    it, with the writer schema in its file info (`schema`) and in the SCHEMA header, and the
    INSTANT_TIME header first, as Apache Hudi 1.x frames it (no content version prefix).
    `hbase_keys`, `deflate`: see `write_hfile` (`hbase_keys`: tables of version 6, which
    Apache Hudi 0.15 reads)."""
    _check_instant(instant_time, "instant_time")
    content = write_hfile(
        entries,
        file_info={b"schema": schema_json.encode("utf-8")},
        block_size=block_size,
        hbase_keys=hbase_keys,
        deflate=deflate,
    )
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return encode_block(BlockType.HFILE_DATA, header, content)


def _avro_value(value: Any, dtype: pa.DataType) -> Any:
    """A `to_pylist` value in the shape fastavro wants: maps as dicts, recursively."""
    if value is None:
        return None
    if pa.types.is_map(dtype):
        return {k: _avro_value(v, dtype.item_type) for k, v in value}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [_avro_value(v, dtype.value_type) for v in value]
    if pa.types.is_struct(dtype):
        return {f.name: _avro_value(value.get(f.name), f.type) for f in dtype}
    return value


def delete_block(
    records: Iterable[DeleteRecord],
    instant_time: str,
    schema_avro_json: str | None = None,
    *,
    ordering_field: str | None = None,
    ordering_type: str | None = None,
) -> bytes:
    """A delete block (content version 3, Avro `HoodieDeleteRecordList`) removing `records`' keys.

    Version 3 is what Hudi 0.14/0.15 write and the only version hudi-rs reads. Each ordering
    value is wrapped the way Hudi's `wrapValueIntoAvro` does; readers compare it with the
    table's ordering (precombine) column, so its type should match that column's: pass
    `ordering_type` (an Avro primitive: "int", "long", "float", "double", "string", "bytes",
    "boolean") or `ordering_field` with the schema to look the type up. Otherwise a Python int
    is wrapped as long (0, Hudi's "no ordering value" default, as int like Hudi does) and a
    float as double; `date`, `datetime`, `time` and `Decimal` values
    use the date, timestamp-micros, time-micros and decimal(30,15) wrappers. The SCHEMA header
    (the table's writer schema, meta fields included) is what Hudi puts there; it is optional.
    """
    _check_instant(instant_time, "instant_time")
    primitive = ordering_type or _ordering_type_of(schema_avro_json, ordering_field)
    if primitive is not None and primitive not in _ORDERING_WRAPPERS:
        raise SchemaError(
            f"delete block ordering type {primitive!r} is not one of "
            f"{', '.join(_ORDERING_WRAPPERS)}"
        )
    items = [
        {
            "recordKey": r.record_key,
            "partitionPath": r.partition_path,
            "orderingVal": _wrap(r.ordering_value, primitive),
        }
        for r in records
    ]
    datum = io.BytesIO()
    fastavro.schemaless_writer(datum, _DELETE_WRITE_SCHEMA, {"deleteRecordList": items})
    payload = datum.getvalue()
    content = _INT.pack(BLOCK_CONTENT_VERSION) + _INT.pack(len(payload)) + payload
    header = {HeaderKey.INSTANT_TIME: instant_time}
    if schema_avro_json is not None:
        header[HeaderKey.SCHEMA] = schema_avro_json
    return encode_block(BlockType.DELETE, header, content)


def _ordering_type_of(schema_avro_json: str | None, ordering_field: str | None) -> str | None:
    """Avro primitive type of the ordering field, or None when the value's type decides."""
    if ordering_field is None:
        return None
    if schema_avro_json is None:
        raise SchemaError("delete_block: ordering_field needs the table schema to find its type")
    for f in json.loads(schema_avro_json)["fields"]:
        if f["name"] == ordering_field:
            avro = f["type"]
            if isinstance(avro, list):
                avro = next((b for b in avro if b != "null"), "null")
            if isinstance(avro, dict):
                if avro.get("logicalType") is not None:
                    return None  # dates, timestamps, decimals: chosen from the value's type
                avro = avro["type"]
            return avro if avro in _ORDERING_WRAPPERS else None
    raise SchemaError(f"delete_block: ordering field '{ordering_field}' is not in the schema")


def _wrap(value: Any, primitive: str | None) -> tuple[str, dict[str, Any]] | None:
    """The union branch (wrapper record name) and wrapper record of one ordering value."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return _wrapped("TimestampMicrosWrapper", (value - _EPOCH) // _MICROSECOND)
    if isinstance(value, datetime.date):
        return _wrapped("DateWrapper", (value - _EPOCH_DAY).days)
    if isinstance(value, datetime.time):
        return _wrapped("TimeMicrosWrapper", value)
    if isinstance(value, decimal.Decimal):
        return _wrapped("DecimalWrapper", value)
    if primitive is None:
        if isinstance(value, bool):
            primitive = "boolean"
        elif isinstance(value, int):
            # 0 is Hudi's DEFAULT_ORDERING_VALUE, a Java Integer: "no ordering, latest wins".
            primitive = "int" if value == 0 else "long"
        elif isinstance(value, float):
            primitive = "double"
        elif isinstance(value, str):
            primitive = "string"
        elif isinstance(value, (bytes, bytearray)):
            primitive = "bytes"
        else:
            raise SchemaError(
                f"ordering value {value!r} ({type(value).__name__}) has no wrapper in Hudi's "
                "delete record schema"
            )
    if primitive == "int" and not -(2**31) <= value < 2**31:
        raise SchemaError(f"ordering value {value} does not fit the int ordering type")
    if primitive in ("float", "double"):
        value = float(value)
    return _wrapped(_ORDERING_WRAPPERS[primitive], value)


def _wrapped(wrapper: str, value: Any) -> tuple[str, dict[str, Any]]:
    # fastavro's tuple notation selects the union branch by the record's full name.
    return (f"{_WRAPPER_NAMESPACE}.{wrapper}", {"value": value})


def rollback_command_block(instant_time: str, target_instant_time: str) -> bytes:
    """A command block telling readers to ignore every block written by `target_instant_time`.

    Hudi appends one to each log file an inflight or rolled-back delta commit touched, with the
    rollback's own instant as INSTANT_TIME.
    """
    header = {
        HeaderKey.INSTANT_TIME: _check_instant(instant_time, "instant_time"),
        HeaderKey.TARGET_INSTANT_TIME: _check_instant(target_instant_time, "target_instant_time"),
        HeaderKey.COMMAND_BLOCK_TYPE: str(int(CommandType.ROLLBACK_BLOCK)),
    }
    return encode_block(BlockType.COMMAND, header, b"")


__all__ = [
    "BLOCK_CONTENT_VERSION",
    "DELETE_RECORD_LIST_SCHEMA",
    "LOG_FORMAT_VERSION",
    "MAGIC",
    "ROLLBACK_BLOCK",
    "BlockType",
    "CommandType",
    "DeleteRecord",
    "HeaderKey",
    "LogBlock",
    "add_meta_fields",
    "arrow_schema_of",
    "avro_data_block",
    "delete_block",
    "encode_block",
    "parquet_data_block",
    "read_log_file",
    "rollback_command_block",
]

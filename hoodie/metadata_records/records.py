"""`HoodieMetadataRecord`s as typed values, and their Avro codec.

A metadata table stores one Avro datum per HFile cell (schemaless: no container, no framing),
written with the schema of `schema.py` and read with the schema the file carries. The record
kinds are told apart by the `type` field (`MetadataPartitionType.record_type`; partition list
records of `files` are 1). The key lives outside the value: Apache Hudi stores the `key` field
as the empty string and readers put the HFile row key back, so every record here carries the
HFile key and the codec writes `""`.

Five Hudi meta fields precede the record's own; they are null except in base files written by
the metadata table's compaction, whose records carry `_hoodie_file_name` (the base file's
name). `meta` keeps the non-null ones, so that a record re-encodes to the bytes it came from.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import functools
import io
import json
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar

import fastavro

from ..exceptions import PARSE_ERRORS, CorruptDataFileError, HoodieError, InvalidConfigError
from .keys import ALL_PARTITIONS_KEY
from .schema import (
    META_FIELDS,
    NAMESPACE,
    metadata_record_schema,
    parsed_schema,
    reader_schema,
    schema_version,
)

# HoodieMetadataPayload.METADATA_TYPE_*
PARTITION_LIST_TYPE = 1
FILE_LIST_TYPE = 2
COLUMN_STATS_TYPE = 3
BLOOM_FILTER_TYPE = 4
RECORD_INDEX_TYPE = 5
PARTITION_STATS_TYPE = 6
SECONDARY_INDEX_TYPE = 7

# HoodieRecordIndexInfo.fileIdEncoding: 0 = UUID-based (`<uuid>-<n>` split into two longs and
# an int), 1 = the file id as a string.
UUID_FILE_ID_ENCODING = 0
RAW_FILE_ID_ENCODING = 1
MISSING_FILE_INDEX = -1  # a bare `<uuid>` file id (Hudi before the `-<n>` suffix)

Meta = tuple[tuple[str, str], ...]


# -- column statistics values -------------------------------------------------------------------
class StatKind(enum.Enum):
    """Which wrapper record holds a column statistic (a union branch of `minValue`/`maxValue`),
    and so how its value reads: the Avro value as fastavro gives it."""

    BOOLEAN = "BooleanWrapper"  # bool
    INT = "IntWrapper"  # int
    LONG = "LongWrapper"  # int
    FLOAT = "FloatWrapper"  # float (a float32)
    DOUBLE = "DoubleWrapper"  # float
    BYTES = "BytesWrapper"  # bytes
    STRING = "StringWrapper"  # str
    DATE = "DateWrapper"  # int: days since 1970-01-01
    DECIMAL = "DecimalWrapper"  # decimal.Decimal, scale 15 (decimal(30,15))
    TIME_MICROS = "TimeMicrosWrapper"  # datetime.time
    TIMESTAMP_MICROS = "TimestampMicrosWrapper"  # int: microseconds since the epoch
    LOCAL_DATE = "LocalDateWrapper"  # int: days since 1970-01-01 (1.x)
    ARRAY = "ArrayWrapper"  # tuple[StatValue | None, ...] | None (1.x)

    @property
    def full_name(self) -> str:
        return f"{NAMESPACE}.{self.value}"


_KIND_OF_NAME = {kind.full_name: kind for kind in StatKind}
_V8_ONLY_KINDS = (StatKind.LOCAL_DATE, StatKind.ARRAY)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class StatValue:
    """A column's min or max as stored: its wrapper and the wrapped value."""

    kind: StatKind
    value: Any

    def to_python(self) -> Any:
        """The value as Python compares it: dates and timestamps as `date`/`datetime` (UTC),
        an array as a tuple of its elements' values; the rest as stored."""
        if self.kind in (StatKind.DATE, StatKind.LOCAL_DATE):
            return datetime.date(1970, 1, 1) + datetime.timedelta(days=self.value)
        if self.kind is StatKind.TIMESTAMP_MICROS:
            return _EPOCH + datetime.timedelta(microseconds=self.value)
        if self.kind is StatKind.ARRAY:
            if self.value is None:
                return None
            return tuple(None if v is None else v.to_python() for v in self.value)
        return self.value


def _stat_from_avro(wrapped: Any) -> StatValue | None:
    if wrapped is None:
        return None
    name, body = wrapped
    kind = _KIND_OF_NAME[name]
    value = body["wrappedValues"] if kind is StatKind.ARRAY else body["value"]
    if kind is StatKind.ARRAY and value is not None:
        value = tuple(_stat_from_avro(v) for v in value)
    return StatValue(kind, value)


_DECIMAL_SCALE = decimal.Decimal(1).scaleb(-15)  # DecimalWrapper: decimal(30, 15)
_DECIMAL_DIGITS = 30


def _stored_decimal(value: Any) -> decimal.Decimal:
    """A decimal statistic at DecimalWrapper's scale 15 (Apache Hudi upcasts likewise);
    one that does not fit decimal(30, 15) exactly is refused."""
    if isinstance(value, decimal.Decimal) and value.is_finite():
        scaled = value.quantize(_DECIMAL_SCALE, context=decimal.Context(prec=60))
        if scaled == value and len(scaled.as_tuple().digits) <= _DECIMAL_DIGITS:
            return scaled
    raise HoodieError(f"the decimal statistic {value!r} does not fit decimal(30, 15)")


def _stat_to_avro(stat: StatValue | None) -> Any:
    if stat is None:
        return None
    if stat.kind is StatKind.ARRAY:
        items = None if stat.value is None else [_stat_to_avro(v) for v in stat.value]
        return (stat.kind.full_name, {"wrappedValues": items})
    value = _stored_decimal(stat.value) if stat.kind is StatKind.DECIMAL else stat.value
    return (stat.kind.full_name, {"value": value})


# -- the records --------------------------------------------------------------------------------
@dataclass(frozen=True)
class FileEntry:
    """One file (or, in the partition list, one partition) of a `files` record: its size after
    the action (0 for partitions and deleted files) and whether the action removed it."""

    size: int
    is_deleted: bool = False


@dataclass(frozen=True)
class FilesRecord:
    """A `files` partition record: the list of partitions (key `__all_partitions__`, type 1)
    or a partition's files (key: the partition path, `.` unpartitioned; type 2), each name
    with its `FileEntry`, in stored order. Entries with `is_deleted` are tombstones."""

    key: str
    is_partition_list: bool
    files: dict[str, FileEntry]
    meta: Meta = ()

    @property
    def record_type(self) -> int:
        return PARTITION_LIST_TYPE if self.is_partition_list else FILE_LIST_TYPE

    def live_files(self) -> dict[str, int]:
        """The names present (tombstones dropped), with their sizes."""
        return {name: e.size for name, e in self.files.items() if not e.is_deleted}


@dataclass(frozen=True)
class ColumnStatsRecord:
    """A `column_stats` record: one column of one data file (base or log file, by name).
    `min_value`/`max_value` are None when every value is null or the file holds only deletes.
    `is_tight_bound` and `value_type` (`HoodieValueTypeInfo`: type ordinal, additional info)
    exist from table version 8 on."""

    record_type: ClassVar[int] = COLUMN_STATS_TYPE

    key: str
    file_name: str | None
    column_name: str | None
    min_value: StatValue | None
    max_value: StatValue | None
    value_count: int | None
    null_count: int | None
    total_size: int | None
    total_uncompressed_size: int | None
    is_deleted: bool = False
    is_tight_bound: bool = False
    value_type: tuple[int, str | None] | None = None
    meta: Meta = ()


@dataclass(frozen=True)
class PartitionStatsRecord(ColumnStatsRecord):
    """A `partition_stats` record (1.x, table version 8): a column's stats over a whole data
    partition, in the column stats layout with the partition path as `file_name`."""

    record_type: ClassVar[int] = PARTITION_STATS_TYPE


@dataclass(frozen=True)
class BloomFilterRecord:
    """A `bloom_filters` record: a base file's bloom filter, serialized as in its parquet
    footer; `filter_type` is its type code (`DYNAMIC_V0`), `timestamp` the instant that wrote
    the file."""

    record_type: ClassVar[int] = BLOOM_FILTER_TYPE

    key: str
    filter_type: str
    timestamp: str
    bloom_filter: bytes
    is_deleted: bool = False
    meta: Meta = ()


@dataclass(frozen=True)
class RecordIndexRecord:
    """A `record_index` record: where the data record `key` lives: `partition` is the data
    partition's path (`""` when unpartitioned, where `files` says `.`). `instant_time_ms` is the
    instant that wrote it there as epoch milliseconds (`instant_to_epoch_millis`); `position`
    (1.x) its row in the file group, when known; `file_id_encoding` how the file id is
    stored (0: as UUID bits and file index, 1: as a string)."""

    record_type: ClassVar[int] = RECORD_INDEX_TYPE

    key: str
    partition: str | None
    file_id: str
    instant_time_ms: int | None
    position: int | None = None
    file_id_encoding: int = UUID_FILE_ID_ENCODING
    meta: Meta = ()

    @classmethod
    def placing(
        cls,
        key: str,
        partition: str,
        file_id: str,
        instant: str,
        timeline_timezone: str = "UTC",
        position: int | None = None,
    ) -> RecordIndexRecord:
        """The entry of a record `instant` wrote into file group `file_id` of `partition`:
        encoding 0 for UUID-based file ids (Apache Hudi's default), 1 for any other (where
        Apache Hudi, told to use 0, fails)."""
        millis = instant_to_epoch_millis(instant, timeline_timezone)
        encoding = file_id_encoding_of(file_id)
        return cls(key, partition, file_id, millis, position, encoding)

    def instant_time(self, timeline_timezone: str = "UTC") -> str | None:
        """The instant time of `instant_time_ms` in the timeline's zone (None if not stored)."""
        if self.instant_time_ms is None:
            return None
        return epoch_millis_to_instant(self.instant_time_ms, timeline_timezone)


@dataclass(frozen=True)
class SecondaryIndexRecord:
    """A secondary index record (1.x): key `<secondary key>$<record key>`, and whether this
    entry was removed."""

    record_type: ClassVar[int] = SECONDARY_INDEX_TYPE

    key: str
    is_deleted: bool = False
    meta: Meta = ()


MetadataRecord = (
    FilesRecord
    | ColumnStatsRecord
    | PartitionStatsRecord
    | BloomFilterRecord
    | RecordIndexRecord
    | SecondaryIndexRecord
)


# -- record index locations ---------------------------------------------------------------------
def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def split_file_id(file_id: str) -> tuple[int, int, int]:
    """A UUID-based file id (`<uuid>-<n>`, or a bare `<uuid>`) as encoding 0 stores it: the
    UUID's most and least significant bits as signed longs, and n (-1 for a bare UUID).
    Ids that would not read back the same (not a lower-case canonical UUID, n not a plain
    int) are refused: they need encoding 1."""
    text, index = file_id, MISSING_FILE_INDEX
    if len(file_id) != 36:
        text, _, suffix = file_id.rpartition("-")
        if not suffix.isdigit() or not suffix.isascii() or str(int(suffix)) != suffix:
            raise HoodieError(f"file id {file_id!r} is not <uuid>-<n>: store it with encoding 1")
        index = int(suffix)
        if index >= 1 << 31:
            raise HoodieError(
                f"file id {file_id!r}: its file index does not fit an int; store it with encoding 1"
            )
    try:
        parsed = uuid.UUID(text)
    except ValueError:
        parsed = None
    if parsed is None or str(parsed) != text:
        raise HoodieError(f"file id {file_id!r} is not <uuid>-<n>: store it with encoding 1")
    return _signed64(parsed.int >> 64), _signed64(parsed.int & ((1 << 64) - 1)), index


def join_file_id(high_bits: int, low_bits: int, file_index: int) -> str:
    """The file id encoding 0 stands for (`HoodieMetadataPayload.getRecordGlobalLocation`)."""
    value = ((high_bits & ((1 << 64) - 1)) << 64) | (low_bits & ((1 << 64) - 1))
    text = str(uuid.UUID(int=value))
    return text if file_index == MISSING_FILE_INDEX else f"{text}-{file_index}"


def file_id_encoding_of(file_id: str) -> int:
    """The encoding a file id can be stored with: 0 for UUID-based ids, else 1."""
    try:
        split_file_id(file_id)
    except HoodieError:
        return RAW_FILE_ID_ENCODING
    return UUID_FILE_ID_ENCODING


def _zone(timeline_timezone: str) -> datetime.tzinfo | None:
    """`hoodie.table.timeline.timezone`: UTC, or LOCAL (None: this process's local zone)."""
    name = (timeline_timezone or "UTC").upper()
    if name == "UTC":
        return datetime.timezone.utc
    if name == "LOCAL":
        return None
    raise InvalidConfigError(
        f"hoodie.table.timeline.timezone is {timeline_timezone!r}: it must be UTC or LOCAL"
    )


_INSTANT_FORMAT = "%Y%m%d%H%M%S"


def instant_to_epoch_millis(instant: str, timeline_timezone: str = "UTC") -> int:
    """An instant time as the record index stores it: epoch milliseconds of the instant read in
    the timeline's time zone. As Apache Hudi's `parseDateFromInstantTime`: an instant in
    seconds gets `999` milliseconds, one longer than milliseconds (the metadata table's
    `<instant>001` service instants) is cut to them; an instant that is no date (the
    metadata table's `00000000000000xxx` initialization instants) is refused, as Apache Hudi
    refuses it.

    Apache Hudi reads the instant in the JVM's default zone whatever the table's zone; the two
    agree when the JVM's zone is the table's (UTC for tables we create)."""
    text = instant + "999" if len(instant) == 14 else instant[:17]
    if len(text) != 17 or not text.isdigit() or not text.isascii():
        raise HoodieError(f"{instant!r} is not an instant time (yyyyMMddHHmmss[SSS])")
    try:
        moment = datetime.datetime.strptime(text[:14], _INSTANT_FORMAT)
    except ValueError as error:
        raise HoodieError(f"{instant!r} is not an instant time: {error}") from error
    moment = moment.replace(microsecond=int(text[14:]) * 1000)
    zone = _zone(timeline_timezone)
    aware = moment.replace(tzinfo=zone) if zone is not None else moment.astimezone()
    delta = aware - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def epoch_millis_to_instant(millis: int, timeline_timezone: str = "UTC") -> str:
    """The instant time (milliseconds) a record index's `instantTime` stands for."""
    moment = _EPOCH + datetime.timedelta(milliseconds=millis)
    zone = _zone(timeline_timezone)
    local = moment.astimezone(zone) if zone is not None else moment.astimezone()
    return local.strftime(_INSTANT_FORMAT) + f"{local.microsecond // 1000:03d}"


# -- decoding -----------------------------------------------------------------------------------
def _damaged(key: str, source: str, problem: str) -> CorruptDataFileError:
    where = source or "a metadata table file"
    return CorruptDataFileError(
        f"{where}: the value of metadata record {key!r} {problem}. The metadata table is "
        "damaged: restore the file from a backup, or rebuild the metadata table (turn "
        "hoodie.metadata.enable off and on with Apache Hudi)",
        source,
    )


def _short(error: BaseException) -> str:
    text = str(error).replace("\n", " ")
    return f"{type(error).__name__}: {text[:200]}"


def _record_body(value: Any) -> Any:
    """A nullable record union's value as fastavro gives it with record names: (name, dict)."""
    return value[1] if isinstance(value, tuple) else value


def decode_metadata_record(
    key: str, value: bytes, writer_schema: str, *, source: str = ""
) -> MetadataRecord:
    """The record an HFile cell holds: `key` its row key (UTF-8 decoded), `value` its bytes,
    `writer_schema` the schema the file carries (0.15's, 1.2's, or another release's: fields
    are resolved by name to ours). `source` names the file (and block) for errors: a value
    that does not read as a `HoodieMetadataRecord` whole, or of a type this project does not
    know, raises `CorruptDataFileError`.

    A record index entry in 0.15's or 1.2's layout is read by hand (`_record_index_fast`, a
    few microseconds where fastavro's resolution takes 15 to 20): a lookup of every key of a
    large record index decodes one per key. Anything else, or anything unexpected in one,
    takes fastavro's way, which gives the same record or the error."""
    layout = _fast_layout(writer_schema)
    if layout is not None:
        fast = _record_index_fast(key, value, layout)
        if fast is not None:
            return fast
    try:
        writer = parsed_schema(writer_schema)
    except PARSE_ERRORS as error:
        problem = f"comes with a schema that does not parse ({_short(error)})"
        raise _damaged(key, source, problem) from error
    # Ours are read as they are (fields 0.15 lacks are read with 1.2's defaults below);
    # another release's are resolved to 1.2's by field name.
    known = writer_schema in (metadata_record_schema(6), metadata_record_schema(8))
    reader = None if known else reader_schema()
    buffer = io.BytesIO(value)
    try:
        datum = fastavro.schemaless_reader(buffer, writer, reader, return_record_name=True)
    except PARSE_ERRORS as error:
        problem = f"does not read as a HoodieMetadataRecord ({_short(error)})"
        raise _damaged(key, source, problem) from error
    except fastavro.read.SchemaResolutionError as error:
        name = writer.get("name") if isinstance(writer, dict) else writer
        problem = f"comes with the schema of {name!r}, which is not HoodieMetadataRecord's"
        raise _damaged(key, source, problem) from error
    if buffer.tell() != len(value):
        raise _damaged(key, source, f"has {len(value) - buffer.tell()} bytes after the record")
    if not isinstance(datum, dict):
        raise _damaged(key, source, "is not a record")
    try:
        return _from_avro(key, datum)
    except (KeyError, TypeError, ValueError) as error:
        problem = f"is malformed ({_short(error)})"
        raise _damaged(key, source, problem) from error
    except _Damaged as error:
        raise _damaged(key, source, str(error)) from error


@functools.lru_cache(maxsize=32)
def _fast_layout(writer_schema: str) -> int | None:
    """6 or 8 where `writer_schema` is, field for field and type for type, the schema Apache
    Hudi 0.15 or 1.2 writes (its parsing canonical form: docs, defaults and formatting
    aside), so that its record index entries lie in the bytes as `_record_index_fast` reads
    them; None for any other."""
    try:
        form = fastavro.schema.to_parsing_canonical_form(json.loads(writer_schema))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException):
        return None
    for version in (6, 8):
        ours = json.loads(metadata_record_schema(version))
        if form == fastavro.schema.to_parsing_canonical_form(ours):
            return version
    return None


def _record_index_fast(key: str, value: bytes, layout: int) -> RecordIndexRecord | None:
    """A record index entry read by hand from `value` in the layout of schema `layout` (6:
    0.15's, 8: 1.2's), or None where `value` is not a plain one (another type, a union
    branch other than expected, bytes left over): the caller then decodes it with fastavro.

    The datum: five nullable strings (the meta fields), `key` (a string), `type` (int 5), three
    null unions (files, bloom filter, column stats), then branch 1 of `recordIndexMetadata`:
    nullable partitionName, fileIdHighBits, fileIdLowBits, fileIndex, fileId, instantTime, the
    int fileIdEncoding and (1.2) a nullable position; (1.2) a null SecondaryIndexMetadata.
    The key is the HFile's (the stored one is empty), so the entries of one file group's
    records written by one instant are the same bytes: their reading is cached."""
    fields = _record_index_fields(value, layout)
    if fields is None:
        return None
    stored, partition, file_id, instant, position, encoding, meta = fields
    if stored not in ("", key):
        return None
    return RecordIndexRecord(key, partition, file_id, instant, position, encoding, meta)


_IndexFields = tuple[str, str | None, str, int | None, int | None, int, Meta]


@functools.lru_cache(maxsize=1 << 14)
def _record_index_fields(value: bytes, layout: int) -> _IndexFields | None:
    """What `_record_index_fast` reads of `value`: the stored key, then the entry's fields."""
    try:
        pos = 0
        meta: list[tuple[str, str]] = []
        for name in META_FIELDS:
            text, pos = _nullable_text(value, pos)
            if text is not None:
                meta.append((name, text))
        stored, pos = _avro_string(value, pos)
        if value[pos] != 2 * RECORD_INDEX_TYPE:
            return None
        if value[pos + 1 : pos + 5] != b"\x00\x00\x00\x02":
            return None
        pos += 5
        partition, pos = _nullable_text(value, pos)
        high, pos = _nullable_number(value, pos)
        low, pos = _nullable_number(value, pos)
        index, pos = _nullable_number(value, pos)
        raw, pos = _nullable_text(value, pos)
        instant, pos = _nullable_number(value, pos)
        encoding, pos = _avro_long(value, pos)
        position = None
        if layout == 8:
            position, pos = _nullable_number(value, pos)
            if value[pos] != 0:
                return None
            pos += 1
        if pos != len(value):
            return None
    except (IndexError, UnicodeDecodeError, _Damaged):
        return None
    if encoding == UUID_FILE_ID_ENCODING:
        if high is None or low is None or index is None:
            return None
        file_id = join_file_id(high, low, index)
    elif encoding == RAW_FILE_ID_ENCODING and raw is not None:
        file_id = raw
    else:
        return None
    return stored, partition, file_id, instant, position, encoding, tuple(meta)


def _avro_long(data: bytes, pos: int) -> tuple[int, int]:
    """An Avro int or long (zigzag varint) at `pos`: (value, next position)."""
    byte = data[pos]
    if byte < 0x80:  # one byte: most ints
        return (byte >> 1) ^ -(byte & 1), pos + 1
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise _Damaged("a varint longer than a long")


def _avro_string(data: bytes, pos: int) -> tuple[str, int]:
    size, pos = _avro_long(data, pos)
    if size < 0 or pos + size > len(data):
        raise _Damaged("a string runs past the value")
    return data[pos : pos + size].decode("utf-8"), pos + size


def _branch(data: bytes, pos: int) -> bool:
    """Whether the `[null, X]` union at `pos` holds its value (else null)."""
    branch = data[pos]
    if branch not in (0, 2):
        raise _Damaged("a union branch other than null or the value")
    return branch == 2


def _nullable_text(data: bytes, pos: int) -> tuple[str | None, int]:
    """A `[null, string]` union at `pos`."""
    return _avro_string(data, pos + 1) if _branch(data, pos) else (None, pos + 1)


def _nullable_number(data: bytes, pos: int) -> tuple[int | None, int]:
    """A `[null, long]` or `[null, int]` union at `pos`."""
    return _avro_long(data, pos + 1) if _branch(data, pos) else (None, pos + 1)


class _Damaged(Exception):
    """A problem with a decoded record, reported by `decode_metadata_record` with its key."""


def _from_avro(key: str, datum: dict[str, Any]) -> MetadataRecord:
    stored_key = datum.get("key")
    if stored_key not in ("", key):
        raise _Damaged(f"stores the key {stored_key!r}, not {key!r}")
    meta = tuple((name, datum[name]) for name in META_FIELDS if datum.get(name) is not None)
    kind = datum["type"]
    if kind in (PARTITION_LIST_TYPE, FILE_LIST_TYPE):
        entries = datum.get("filesystemMetadata")
        if entries is None:
            raise _Damaged(f"is a files record (type {kind}) without filesystemMetadata")
        files = {
            name: FileEntry(_record_body(info)["size"], _record_body(info)["isDeleted"])
            for name, info in entries.items()
        }
        return FilesRecord(key, kind == PARTITION_LIST_TYPE, files, meta)
    if kind in (COLUMN_STATS_TYPE, PARTITION_STATS_TYPE):
        stats = _record_body(_required(datum, "ColumnStatsMetadata", kind))
        value_type = _record_body(stats.get("valueType"))
        cls = ColumnStatsRecord if kind == COLUMN_STATS_TYPE else PartitionStatsRecord
        return cls(
            key,
            stats["fileName"],
            stats["columnName"],
            _stat_from_avro(stats["minValue"]),
            _stat_from_avro(stats["maxValue"]),
            stats["valueCount"],
            stats["nullCount"],
            stats["totalSize"],
            stats["totalUncompressedSize"],
            stats["isDeleted"],
            stats.get("isTightBound", False),
            None
            if value_type is None
            else (value_type["typeOrdinal"], value_type["additionalInfo"]),
            meta,
        )
    if kind == BLOOM_FILTER_TYPE:
        bloom = _record_body(_required(datum, "BloomFilterMetadata", kind))
        return BloomFilterRecord(
            key, bloom["type"], bloom["timestamp"], bloom["bloomFilter"], bloom["isDeleted"], meta
        )
    if kind == RECORD_INDEX_TYPE:
        info = _record_body(_required(datum, "recordIndexMetadata", kind))
        encoding = info["fileIdEncoding"]
        if encoding == UUID_FILE_ID_ENCODING:
            bits = (info["fileIdHighBits"], info["fileIdLowBits"], info["fileIndex"])
            if None in bits:
                raise _Damaged("is a record index entry of encoding 0 without its file id bits")
            file_id = join_file_id(*bits)
        elif encoding == RAW_FILE_ID_ENCODING:
            if info["fileId"] is None:
                raise _Damaged("is a record index entry of encoding 1 without its file id")
            file_id = info["fileId"]
        else:
            raise _Damaged(f"has the unknown file id encoding {encoding} (known: 0 and 1)")
        return RecordIndexRecord(
            key,
            info["partitionName"],
            file_id,
            info["instantTime"],
            info.get("position"),
            encoding,
            meta,
        )
    if kind == SECONDARY_INDEX_TYPE:
        secondary = _record_body(_required(datum, "SecondaryIndexMetadata", kind))
        return SecondaryIndexRecord(key, secondary["isDeleted"], meta)
    raise _Damaged(
        f"has the unknown record type {kind} (known: 1 partition list, 2 files, 3 column "
        "stats, 4 bloom filter, 5 record index, 6 partition stats, 7 secondary index)"
    )


def _required(datum: dict[str, Any], name: str, kind: int) -> Any:
    value = datum.get(name)
    if value is None:
        raise _Damaged(f"is of type {kind} but has no {name}")
    return value


# -- encoding -----------------------------------------------------------------------------------
def encode_metadata_record(record: MetadataRecord, table_version: int) -> bytes:
    """The value bytes Apache Hudi of `table_version` writes for `record` (one Avro datum in
    `metadata_record_schema(table_version)`, no framing; the key is the HFile's). What the
    version's schema cannot hold (1.x fields on version 6) is refused."""
    version = schema_version(table_version)
    datum = _to_avro(record, version)
    buffer = io.BytesIO()
    try:
        fastavro.schemaless_writer(buffer, parsed_schema(metadata_record_schema(version)), datum)
    except (ValueError, TypeError, OverflowError) as error:  # a value out of its type's range
        raise HoodieError(
            f"metadata record {record.key!r} ({type(record).__name__}) does not fit "
            f"HoodieMetadataRecord's schema: {_short(error)}"
        ) from error
    return buffer.getvalue()


def _base(record: MetadataRecord, kind: int) -> dict[str, Any]:
    datum: dict[str, Any] = dict.fromkeys(META_FIELDS)
    datum.update(record.meta)
    datum.update(key="", type=kind, filesystemMetadata=None)
    datum.update(BloomFilterMetadata=None, ColumnStatsMetadata=None, recordIndexMetadata=None)
    datum["SecondaryIndexMetadata"] = None
    return datum


def _too_new(record: MetadataRecord, what: str) -> HoodieError:
    return HoodieError(
        f"metadata record {record.key!r} has {what}, which table version 6 cannot store "
        "(its schema is Apache Hudi 0.15's)"
    )


def _to_avro(record: MetadataRecord, version: int) -> dict[str, Any]:
    datum = _base(record, record.record_type)
    if isinstance(record, FilesRecord):
        datum["filesystemMetadata"] = {
            name: {"size": entry.size, "isDeleted": entry.is_deleted}
            for name, entry in record.files.items()
        }
    elif isinstance(record, ColumnStatsRecord):
        if version < 8:
            if isinstance(record, PartitionStatsRecord):
                raise _too_new(record, "partition stats")
            if record.is_tight_bound or record.value_type is not None:
                raise _too_new(record, "a tight bound or value type")
            for stat in (record.min_value, record.max_value):
                if stat is not None and stat.kind in _V8_ONLY_KINDS:
                    raise _too_new(record, f"a {stat.kind.value}")
        stats: dict[str, Any] = {
            "fileName": record.file_name,
            "columnName": record.column_name,
            "minValue": _stat_to_avro(record.min_value),
            "maxValue": _stat_to_avro(record.max_value),
            "valueCount": record.value_count,
            "nullCount": record.null_count,
            "totalSize": record.total_size,
            "totalUncompressedSize": record.total_uncompressed_size,
            "isDeleted": record.is_deleted,
            "isTightBound": record.is_tight_bound,
            "valueType": None
            if record.value_type is None
            else {"typeOrdinal": record.value_type[0], "additionalInfo": record.value_type[1]},
        }
        datum["ColumnStatsMetadata"] = stats
    elif isinstance(record, BloomFilterRecord):
        datum["BloomFilterMetadata"] = {
            "type": record.filter_type,
            "timestamp": record.timestamp,
            "bloomFilter": record.bloom_filter,
            "isDeleted": record.is_deleted,
        }
    elif isinstance(record, RecordIndexRecord):
        if version < 8 and record.position is not None:
            raise _too_new(record, "a position")
        if record.file_id_encoding == UUID_FILE_ID_ENCODING:
            high, low, index = split_file_id(record.file_id)
            raw = ""
        elif record.file_id_encoding == RAW_FILE_ID_ENCODING:
            high, low, index, raw = -1, -1, MISSING_FILE_INDEX, record.file_id
        else:
            raise HoodieError(f"file id encoding {record.file_id_encoding}: it is 0 or 1")
        datum["recordIndexMetadata"] = {
            "partitionName": record.partition,
            "fileIdHighBits": high,
            "fileIdLowBits": low,
            "fileIndex": index,
            "fileId": raw,
            "instantTime": record.instant_time_ms,
            "fileIdEncoding": record.file_id_encoding,
            "position": record.position,
        }
    elif isinstance(record, SecondaryIndexRecord):
        if version < 8:
            raise _too_new(record, "a secondary index entry")
        datum["SecondaryIndexMetadata"] = {"isDeleted": record.is_deleted}
    return datum


def files_record(partition_path: str, files: dict[str, FileEntry]) -> FilesRecord:
    """A `files` record of one partition (keyed by its metadata table name)."""
    return FilesRecord(partition_path, False, dict(files))


def partition_list_record(partitions: dict[str, bool]) -> FilesRecord:
    """The `__all_partitions__` record: each partition, with whether it was deleted."""
    entries = {name: FileEntry(0, deleted) for name, deleted in partitions.items()}
    return FilesRecord(ALL_PARTITIONS_KEY, True, entries)

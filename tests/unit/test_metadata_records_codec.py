"""The metadata record codec beyond what Apache Hudi's samples hold: every record kind and
statistic wrapper round trips on both versions, the record index's file id encodings and
instant times, what version 6 cannot store, and hostile values."""

from __future__ import annotations

import datetime
import io
import json
import os
import time
from collections.abc import Iterator
from decimal import Decimal

import fastavro
import pytest

from hoodie.exceptions import (
    CorruptDataFileError,
    DamagedFileError,
    HoodieError,
    InvalidConfigError,
)
from hoodie.metadata_records import (
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
    metadata_record_schema,
    split_file_id,
)

V6, V8 = metadata_record_schema(6), metadata_record_schema(8)
FILE_ID = "46732c7d-27e4-4f2e-83a5-d07db8837ec3-0"


def stats(key: str, low: StatValue | None, high: StatValue | None) -> ColumnStatsRecord:
    return ColumnStatsRecord(key, "f.parquet", "c", low, high, 3, 1, 100, 120)


STATS_V6 = [
    StatValue(StatKind.BOOLEAN, True),
    StatValue(StatKind.INT, -(2**31)),
    StatValue(StatKind.LONG, 2**63 - 1),
    StatValue(StatKind.FLOAT, 1.5),
    StatValue(StatKind.DOUBLE, -0.1),
    StatValue(StatKind.BYTES, b"\x00\xff"),
    StatValue(StatKind.STRING, "ünïcode \U0001f600"),
    StatValue(StatKind.DATE, 19000),
    StatValue(StatKind.DECIMAL, Decimal("12.345000000000000")),
    StatValue(StatKind.TIME_MICROS, datetime.time(1, 2, 3, 456789)),
    StatValue(StatKind.TIMESTAMP_MICROS, 1_700_000_000_123_456),
]
STATS_V8 = [
    StatValue(StatKind.LOCAL_DATE, -5),
    StatValue(StatKind.ARRAY, (StatValue(StatKind.INT, 1), None, StatValue(StatKind.INT, 3))),
    StatValue(StatKind.ARRAY, None),
]

RECORDS: list[MetadataRecord] = [
    FilesRecord("__all_partitions__", True, {"a": FileEntry(0), "b": FileEntry(0, True)}),
    FilesRecord("dt=1", False, {"x.parquet": FileEntry(10), ".x.log.1_0-1-1": FileEntry(0, True)}),
    FilesRecord(".", False, {}, (("_hoodie_file_name", "files-0000-0_0-1-1_001.hfile"),)),
    stats("k1", None, None),
    *(stats(f"s{i}", v, v) for i, v in enumerate(STATS_V6)),
    ColumnStatsRecord("k2", None, None, None, None, None, None, None, None, is_deleted=True),
    BloomFilterRecord("k3", "DYNAMIC_V0", "20240101000000000", b"\x01" * 40),
    BloomFilterRecord("k4", "SIMPLE", "20240101000000000", b"", is_deleted=True),
    RecordIndexRecord("key", "dt=1", FILE_ID, 1795794472798),
    RecordIndexRecord("key", "", "46732c7d-27e4-4f2e-83a5-d07db8837ec3", 0),
    RecordIndexRecord("key", "p", "my-own-file-id", 5, file_id_encoding=1),
]
RECORDS_V8: list[MetadataRecord] = [
    *(stats(f"t{i}", v, v) for i, v in enumerate(STATS_V8)),
    ColumnStatsRecord("k5", "f", "c", None, None, 1, 1, 0, 0, False, True, (3, "info")),
    PartitionStatsRecord("k6", "dt=1", "c", STATS_V6[1], STATS_V6[1], 1, 0, 1, 1, False, True),
    RecordIndexRecord("key", "dt=1", FILE_ID, 1795794472798, position=42),
    SecondaryIndexRecord("city$key"),
    SecondaryIndexRecord("city$key", is_deleted=True),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
@pytest.mark.parametrize("version, schema", [(6, V6), (8, V8)])
def test_round_trip(record: MetadataRecord, version: int, schema: str) -> None:
    value = encode_metadata_record(record, version)
    assert decode_metadata_record(record.key, value, schema) == record


@pytest.mark.parametrize("record", RECORDS_V8, ids=lambda r: type(r).__name__)
def test_version_8_only_values_round_trip_there_and_are_refused_on_6(
    record: MetadataRecord,
) -> None:
    assert decode_metadata_record(record.key, encode_metadata_record(record, 8), V8) == record
    with pytest.raises(HoodieError, match="table version 6 cannot store"):
        encode_metadata_record(record, 6)


def test_a_version_6_record_reads_with_version_8s_defaults() -> None:
    """The writer's schema decides how bytes read; fields 0.15 lacks take 1.2's defaults."""
    record = stats("k", STATS_V6[1], STATS_V6[2])
    assert encode_metadata_record(record, 6) != encode_metadata_record(record, 8)
    decoded = decode_metadata_record("k", encode_metadata_record(record, 6), V6)
    assert decoded == record and decoded.is_tight_bound is False and decoded.value_type is None


def test_the_stored_key_is_empty() -> None:
    value = encode_metadata_record(RecordIndexRecord("key", "dt=1", FILE_ID, 7), 8)
    datum = fastavro.schemaless_reader(io.BytesIO(value), fastavro.parse_schema(json.loads(V8)))
    assert datum["key"] == "" and datum["type"] == 5
    assert decode_metadata_record("other", value, V8).key == "other"  # the HFile key wins


def test_stat_values_as_python() -> None:
    assert StatValue(StatKind.DATE, 1).to_python() == datetime.date(1970, 1, 2)
    assert StatValue(StatKind.TIMESTAMP_MICROS, 1_000_001).to_python() == datetime.datetime(
        1970, 1, 1, 0, 0, 1, 1, tzinfo=datetime.timezone.utc
    )
    assert STATS_V8[1].to_python() == (1, None, 3)


# -- record index locations -------------------------------------------------------------------
def test_file_id_encoding_0_splits_uuid_and_index() -> None:
    """Apache Hudi 1.2 stored this file id as these bits (the sample table's record_index)."""
    assert split_file_id(FILE_ID) == (5076450121028489006, -8960526645198618941, 0)
    assert join_file_id(5076450121028489006, -8960526645198618941, 0) == FILE_ID
    bare = FILE_ID[:-2]
    assert split_file_id(bare)[2] == -1 and join_file_id(*split_file_id(bare)) == bare
    many = "00000000-0000-0000-0000-000000000000-12345"
    assert split_file_id(many) == (0, 0, 12345) and join_file_id(0, 0, 12345) == many
    top = "ffffffff-ffff-ffff-ffff-ffffffffffff-0"
    assert split_file_id(top) == (-1, -1, 0) and join_file_id(-1, -1, 0) == top


@pytest.mark.parametrize(
    "file_id",
    [
        "my-own-file-id",
        "46732C7D-27E4-4F2E-83A5-D07DB8837EC3-0",  # upper case would read back lower case
        "46732c7d27e44f2e83a5d07db8837ec3-0",  # no dashes: not canonical
        "46732c7d-27e4-4f2e-83a5-d07db8837ec3-01",  # a leading zero
        "46732c7d-27e4-4f2e-83a5-d07db8837ec3-x",
        "46732c7d-27e4-4f2e-83a5-d07db8837ec3-99999999999",  # not an int
        "",
    ],
)
def test_file_ids_that_would_not_read_back_need_encoding_1(file_id: str) -> None:
    assert file_id_encoding_of(file_id) == 1
    with pytest.raises(HoodieError, match="encoding 1"):
        split_file_id(file_id)
    with pytest.raises(HoodieError):
        encode_metadata_record(RecordIndexRecord("k", "p", file_id, 0), 8)
    raw = RecordIndexRecord("k", "p", file_id, 0, file_id_encoding=1)
    assert decode_metadata_record("k", encode_metadata_record(raw, 8), V8) == raw


def test_uuid_file_ids_take_encoding_0() -> None:
    assert file_id_encoding_of(FILE_ID) == 0
    assert file_id_encoding_of(FILE_ID[:-2]) == 0


@pytest.mark.parametrize(
    "instant, millis",
    [
        ("20261127154752798", 1795794472798),  # [ran]: Apache Hudi 1.2's record index
        ("19700101000000000", 0),
        ("19700101000000001", 1),
        ("19691231235959999", -1),
        ("20240229235959", 1709251199999),  # seconds: 999 ms, as Apache Hudi
        ("20261127154752798001", 1795794472798),  # an MDT service instant: cut to ms
    ],
)
def test_instant_to_epoch_millis_in_utc(instant: str, millis: int) -> None:
    assert instant_to_epoch_millis(instant, "UTC") == millis
    if len(instant) == 17:
        assert epoch_millis_to_instant(millis, "utc") == instant


@pytest.fixture
def tokyo() -> Iterator[None]:
    """This process's local zone set to Asia/Tokyo (UTC+9, no daylight saving)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_instants_in_a_local_timeline(tokyo: None) -> None:
    """LOCAL: the instant is a wall clock time of this process's zone."""
    utc = instant_to_epoch_millis("20261127154752798", "UTC")
    local = instant_to_epoch_millis("20261127154752798", "LOCAL")
    assert utc - local == 9 * 3600 * 1000
    assert epoch_millis_to_instant(local, "LOCAL") == "20261127154752798"
    assert epoch_millis_to_instant(utc, "LOCAL") == "20261128004752798"


@pytest.mark.parametrize(
    "instant",
    ["2026112715475279", "2026112715475x798", "20261340000000000", "00000000000000010", ""],
)
def test_malformed_instants_are_refused(instant: str) -> None:
    with pytest.raises(HoodieError, match="instant time"):
        instant_to_epoch_millis(instant)


def test_an_unknown_timeline_zone_is_refused() -> None:
    with pytest.raises(InvalidConfigError, match="UTC or LOCAL"):
        instant_to_epoch_millis("20261127154752798", "Europe/Paris")


# -- hostile values ---------------------------------------------------------------------------
SOURCE = "/t/.hoodie/metadata/files/files-0000-0_0-1-1_001.hfile"


def raw_record(kind: int, **fields: object) -> bytes:
    datum = {"key": "", "type": kind, "filesystemMetadata": None, **fields}
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(json.loads(V8)), datum)
    return buffer.getvalue()


def damaged(value: bytes, schema: str = V8, key: str = "dt=1") -> DamagedFileError:
    with pytest.raises(DamagedFileError) as caught:
        decode_metadata_record(key, value, schema, source=SOURCE)
    error = caught.value
    assert isinstance(error, CorruptDataFileError)
    assert error.path == SOURCE and SOURCE in str(error) and repr(key) in str(error)
    return error


def test_a_truncated_value() -> None:
    value = encode_metadata_record(RECORDS[1], 8)
    for end in (0, 1, len(value) // 2, len(value) - 1):
        damaged(value[:end])


def test_bytes_after_the_record() -> None:
    assert "bytes after the record" in str(damaged(encode_metadata_record(RECORDS[1], 8) + b"\0"))


def test_a_value_that_is_no_metadata_record() -> None:
    parquet = b"PAR1\x15\x04\x15\x10\x15\x14L\x15\x02\x15\x00\x12\x00\x00"
    assert "does not read as a HoodieMetadataRecord" in str(damaged(parquet))
    other = json.dumps(
        {"type": "record", "name": "Other", "fields": [{"name": "x", "type": "long"}]}
    )
    assert "schema of 'Other'" in str(damaged(b"\x02", other))
    assert "does not parse" in str(damaged(b"\x02", "{not json"))


def test_an_unknown_type_code() -> None:
    assert "unknown record type 9" in str(damaged(raw_record(9)))
    assert "unknown record type 0" in str(damaged(raw_record(0)))


def test_a_record_without_its_payload() -> None:
    assert "no ColumnStatsMetadata" in str(damaged(raw_record(3)))
    assert "no recordIndexMetadata" in str(damaged(raw_record(5)))
    assert "without filesystemMetadata" in str(damaged(raw_record(2)))


def test_a_record_index_entry_with_an_unknown_encoding() -> None:
    info = {"partitionName": "p", "fileIdHighBits": 1, "fileIdLowBits": 2, "fileIndex": 0,
            "fileId": "", "instantTime": 0, "fileIdEncoding": 7}  # fmt: skip
    assert "file id encoding 7" in str(damaged(raw_record(5, recordIndexMetadata=info)))
    info.update(fileIdEncoding=0, fileIdHighBits=None)
    assert "without its file id bits" in str(damaged(raw_record(5, recordIndexMetadata=info)))


def test_a_value_storing_another_key() -> None:
    buffer = io.BytesIO()
    datum = {"key": "dt=2", "type": 2, "filesystemMetadata": {}}
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(json.loads(V8)), datum)
    assert "stores the key 'dt=2'" in str(damaged(buffer.getvalue()))
    assert decode_metadata_record("dt=2", buffer.getvalue(), V8) == FilesRecord("dt=2", False, {})


def test_an_entry_placing_a_record() -> None:
    entry = RecordIndexRecord.placing("k", "dt=1", FILE_ID, "20261127154752798")
    assert entry == RecordIndexRecord("k", "dt=1", FILE_ID, 1795794472798)
    assert entry.instant_time() == "20261127154752798"
    odd = RecordIndexRecord.placing("k", "", "bucket-7", "20261127154752798", position=3)
    assert (odd.file_id_encoding, odd.position) == (1, 3)
    assert RecordIndexRecord("k", "p", FILE_ID, None).instant_time() is None


def test_decimals_are_stored_at_scale_15() -> None:
    record = stats("k", StatValue(StatKind.DECIMAL, Decimal("-1.5")), None)
    decoded = decode_metadata_record("k", encode_metadata_record(record, 8), V8)
    assert isinstance(decoded, ColumnStatsRecord) and decoded.min_value is not None
    assert str(decoded.min_value.value) == "-1.500000000000000"


@pytest.mark.parametrize(
    "value",
    [
        StatValue(StatKind.DECIMAL, Decimal("1.1234567890123456")),  # scale 16
        StatValue(StatKind.DECIMAL, Decimal("1" * 16)),  # 31 digits at scale 15
        StatValue(StatKind.DECIMAL, Decimal("NaN")),
        StatValue(StatKind.INT, 2**31),
        StatValue(StatKind.LONG, 2**63),
        StatValue(StatKind.STRING, 5),
    ],
)
def test_a_statistic_its_wrapper_cannot_hold_is_refused(value: StatValue) -> None:
    with pytest.raises(HoodieError, match="does not fit"):
        encode_metadata_record(stats("k", value, None), 8)


def test_another_releases_schema_resolves_by_field_name() -> None:
    """A release with a field we lack (Apache Hudi's master has VectorIndexMetadata): its
    records read, the unknown field skipped."""
    schema = json.loads(V8)
    vector = {"type": "record", "name": "HoodieVectorIndexInfo",
              "fields": [{"name": "dimensions", "type": "int"}]}  # fmt: skip
    schema["fields"].append({"name": "VectorIndexMetadata", "type": ["null", vector],
                             "default": None})  # fmt: skip
    buffer = io.BytesIO()
    files = {"f.parquet": {"size": 9, "isDeleted": False}}
    datum = {"key": "", "type": 2, "filesystemMetadata": files,
             "VectorIndexMetadata": {"dimensions": 3}}  # fmt: skip
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), datum)
    decoded = decode_metadata_record("p", buffer.getvalue(), json.dumps(schema))
    assert decoded == FilesRecord("p", False, {"f.parquet": FileEntry(9)})


RECORD_INDEX_ENTRIES = [
    RecordIndexRecord("key", "dt=1", FILE_ID, 1795794472798),
    RecordIndexRecord("ключ 😀", "", "46732c7d-27e4-4f2e-83a5-d07db8837ec3", 0),
    RecordIndexRecord("k", "p/q=ü", "my-own-file-id", 5, file_id_encoding=1),
    RecordIndexRecord("k", None, FILE_ID, None),
    RecordIndexRecord("k", "p", FILE_ID, -1, meta=(("_hoodie_file_name", "x.hfile"),)),
    RecordIndexRecord("k", "p", "ffffffff-ffff-ffff-ffff-ffffffffffff-2147483647", 2**40),
]


@pytest.mark.parametrize("version, schema", [(6, V6), (8, V8)])
def test_record_index_entries_read_by_hand_as_fastavro_reads_them(version, schema) -> None:
    """`decode_metadata_record` reads record index entries of 0.15's and 1.2's layout by hand;
    what it gives is what fastavro's way gives, and the schema text may be formatted
    another way (Apache Hudi's own text)."""
    from hoodie.metadata_records import records

    entries = [*RECORD_INDEX_ENTRIES]
    if version == 8:
        entries.append(RecordIndexRecord("k", "p", FILE_ID, 7, position=123))
    pretty = json.dumps(json.loads(schema), indent=2)
    assert records._fast_layout(schema) == records._fast_layout(pretty) == version
    for record in entries:
        value = encode_metadata_record(record, version)
        fast = records._record_index_fast(record.key, value, version)
        assert fast == record
        assert decode_metadata_record(record.key, value, pretty) == record
        # fastavro's way, with the schema resolved as another release's would be
        slow = records._from_avro(record.key, fastavro.schemaless_reader(
            io.BytesIO(value), records.parsed_schema(schema), None, return_record_name=True))
        assert slow == record
        # anything unexpected goes fastavro's way: cut short, one byte more, another key
        assert records._record_index_fast(record.key, value[:-1], version) is None
        assert records._record_index_fast(record.key, value + b"\x00", version) is None
    other = encode_metadata_record(BloomFilterRecord("k", "SIMPLE", "1", b"x"), version)
    assert records._record_index_fast("k", other, version) is None
    assert records._fast_layout(json.dumps({"type": "record", "name": "X", "fields": []})) is None
    assert records._fast_layout("not json") is None

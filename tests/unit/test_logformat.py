"""Hudi log files: reading the blocks Apache Hudi 0.14/0.15 wrote, writing blocks they can read.

The fixtures are real merge-on-read tables (see tests/unit/conftest.py); what each log block must
hold follows from the `.sql` file that produced the table.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import posixpath
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hoodie.exceptions import HoodieError, SchemaError, UnsupportedTableError
from hoodie.logformat import (
    MAGIC,
    ROLLBACK_BLOCK,
    BlockType,
    CommandType,
    DeleteRecord,
    HeaderKey,
    LogBlock,
    add_meta_fields,
    arrow_schema_of,
    avro_data_block,
    delete_block,
    encode_block,
    parquet_data_block,
    read_log_file,
    rollback_command_block,
)
from hoodie.naming import parse_base_file_name, parse_log_file_name
from hoodie.schema import META_COLUMNS, to_avro_schema
from hoodie.storage import load_file_io

NONPARTITIONED = "sample_table/mor/parquet/v6_nonpartitioned"
SIMPLEKEYGEN = "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle"
ROLLBACK = "sample_table/mor/parquet/v6_nonpartitioned_rollback"
TRIPS = "quickstart_trips_table/mor/avro/v6_trips_8i1u"
MOR_FIXTURES = [NONPARTITIONED, SIMPLEKEYGEN, ROLLBACK, TRIPS]
SAMPLE_COLUMNS = [
    "id",
    "name",
    "isActive",
    "byteField",
    "shortField",
    "intField",
    "longField",
    "floatField",
    "doubleField",
    "decimalField",
    "dateField",
    "timestampField",
    "binaryField",
    "arrayField",
    "mapField",
    "structField",
]
TRIPS_COLUMNS = ["ts", "uuid", "rider", "driver", "fare", "city"]
UTC = datetime.timezone.utc


# -- fixture helpers -------------------------------------------------------------------------------
def _log_files(root: Path) -> list[Path]:
    """Log files of a table, in (partition, file id, version) order."""
    found = [p for p in root.rglob(".*") if p.is_file() and parse_log_file_name(p.name)]
    return sorted(
        found, key=lambda p: (str(p.parent), parse_log_file_name(p.name).file_id, _version(p))
    )


def _version(path: Path) -> int:
    return parse_log_file_name(path.name).version


def _completed(root: Path, action: str) -> list[str]:
    """Instants with a completed `<instant>.<action>` file in the timeline."""
    return sorted(p.name.split(".")[0] for p in (root / ".hoodie").glob(f"*.{action}"))


def _blocks(path: Path) -> list[LogBlock]:
    return list(read_log_file(path))


def _commit(root: Path, instant: str) -> dict:
    return json.loads((root / ".hoodie" / f"{instant}.deltacommit").read_text())


def _meta_and(columns: list[str]) -> list[str]:
    return list(META_COLUMNS) + columns


# -- enums: the ordinals are the format ------------------------------------------------------------
def test_ordinals_match_hudi():
    assert [(t.name, int(t)) for t in BlockType] == [
        ("COMMAND", 0),
        ("DELETE", 1),
        ("CORRUPT", 2),
        ("AVRO_DATA", 3),
        ("HFILE_DATA", 4),
        ("PARQUET_DATA", 5),
        ("CDC_DATA", 6),
    ]
    assert [int(k) for k in HeaderKey][:7] == list(range(7))
    assert HeaderKey.SCHEMA == 2 and HeaderKey.COMMAND_BLOCK_TYPE == 3
    assert HeaderKey.BLOCK_IDENTIFIER == 6
    assert ROLLBACK_BLOCK is CommandType.ROLLBACK_BLOCK and int(ROLLBACK_BLOCK) == 0


# -- reading the fixtures --------------------------------------------------------------------------
def test_nonpartitioned_log_holds_the_second_insert_update(sample_table):
    root = sample_table(NONPARTITIONED)
    (log,) = _log_files(root)
    name = parse_log_file_name(log.name)
    first, second = _completed(root, "deltacommit")
    assert name.instant == first and name.version == 1
    (block,) = _blocks(log)
    assert block.block_type == BlockType.PARQUET_DATA
    assert block.format_version == 1
    assert set(block.header) == {HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA}
    assert block.instant_time == second
    assert block.footer == {} and block.target_instant_time is None
    # The header schema is the commit's writer schema with the five meta fields in front.
    commit_schema = _commit(root, second)["extraMetadata"]["schema"]
    assert json.loads(block.schema) == json.loads(add_meta_fields(commit_schema))
    assert arrow_schema_of(block.schema).names == _meta_and(SAMPLE_COLUMNS)

    rows = block.records()
    assert rows.column_names == _meta_and(SAMPLE_COLUMNS)
    # The second INSERT re-inserted id 1 with isActive=false: an update, so a log block; the new
    # id 4 went to a new base file instead.
    (row,) = rows.to_pylist()
    assert row["_hoodie_record_key"] == "1"
    assert row["_hoodie_commit_time"] == second
    assert row["_hoodie_commit_seqno"] == f"{second}_0_1"
    assert row["_hoodie_partition_path"] == ""
    assert row["_hoodie_file_name"] == name.file_id  # the file id, not the log file's name
    assert (row["id"], row["name"], row["isActive"]) == (1, "Alice", False)
    assert (row["byteField"], row["shortField"], row["intField"]) == (1, 300, 15000)
    assert row["longField"] == 1234567890
    assert row["decimalField"] == decimal.Decimal("12345.67890")
    assert row["dateField"] == datetime.date(2023, 4, 1)
    assert row["timestampField"] == datetime.datetime(2023, 4, 1, 12, 1, tzinfo=UTC)
    assert row["binaryField"] == b"binary data"
    assert [e["arr_struct_f1"] for e in row["arrayField"]] == ["red", "blue", "green"]
    assert dict(row["mapField"])["key2"] == {
        "map_field_value_struct_f1": 789.012,
        "map_field_value_struct_f2": False,
    }
    assert row["structField"]["child_struct"]["child_field1"] == 123.456


def test_partitioned_log_is_in_its_partition_folder(sample_table):
    root = sample_table(SIMPLEKEYGEN)
    (log,) = _log_files(root)
    assert log.parent.name == "10"  # Alice's partition (byteField 10), not hive-style
    (block,) = _blocks(log)
    assert block.block_type == BlockType.PARQUET_DATA
    assert block.instant_time == _completed(root, "deltacommit")[1]
    rows = block.records()
    assert rows.column_names == _meta_and([c for c in SAMPLE_COLUMNS if c != "byteField"]) + [
        "byteField"
    ]
    (row,) = rows.to_pylist()
    assert (row["_hoodie_record_key"], row["_hoodie_partition_path"]) == ("1", "10")
    assert (row["name"], row["isActive"], row["byteField"]) == ("Alice", False, 10)


def test_rollback_fixture_has_a_rollback_command_block(sample_table):
    root = sample_table(ROLLBACK)
    logs = _log_files(root)
    assert [_version(p) for p in logs] == [1, 2, 3]
    [data], [cmd], [later] = (_blocks(p) for p in logs)
    (rollback_instant,) = _completed(root, "rollback")
    deltacommits = _completed(root, "deltacommit")

    # log.1: the second INSERT's update of Alice, by an instant the rollback removed.
    assert data.block_type == BlockType.PARQUET_DATA
    assert data.instant_time not in deltacommits
    assert data.records().column("_hoodie_record_key").to_pylist() == ["1"]
    # log.2: the rollback, appended by the rollback instant, naming the rolled-back instant.
    assert cmd.block_type == BlockType.COMMAND
    assert cmd.is_rollback and cmd.command_type == ROLLBACK_BLOCK
    assert cmd.instant_time == rollback_instant
    assert cmd.target_instant_time == data.instant_time
    assert cmd.schema is None and cmd.content == b""
    assert set(cmd.header) == {
        HeaderKey.INSTANT_TIME,
        HeaderKey.TARGET_INSTANT_TIME,
        HeaderKey.COMMAND_BLOCK_TYPE,
    }
    with pytest.raises(HoodieError):
        cmd.records()
    # log.3: the INSERT after the rollback, updating Bob to isActive=true.
    assert later.instant_time == deltacommits[-1]
    (row,) = later.records().to_pylist()
    assert (row["_hoodie_record_key"], row["name"], row["isActive"]) == ("2", "Bob", True)


def test_trips_avro_block_decodes_the_update(sample_table):
    root = sample_table(TRIPS)
    (log,) = _log_files(root)
    assert log.parent.name == "city=san_francisco"
    (block,) = _blocks(log)
    assert block.block_type == BlockType.AVRO_DATA
    assert block.instant_time == _completed(root, "deltacommit")[1]
    rows = block.records()
    assert rows.column_names == _meta_and(TRIPS_COLUMNS)
    assert rows.schema.field("ts").type == pa.int64()
    assert rows.schema.field("fare").type == pa.float64()
    # UPDATE ... SET fare = 25.0 WHERE rider = 'rider-D': one record, the whole row.
    assert rows.num_rows == 1
    (row,) = rows.to_pylist()
    assert row["_hoodie_record_key"] == row["uuid"] == "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"
    assert row["_hoodie_partition_path"] == "city=san_francisco"
    assert (row["rider"], row["driver"], row["fare"]) == ("rider-D", "driver-L", 25.0)
    assert (row["ts"], row["city"]) == (1695046462179, "san_francisco")
    # Avro block content: version 3, then the record count.
    assert struct.unpack(">ii", block.content[:8]) == (3, 1)


@pytest.mark.parametrize("fixture", MOR_FIXTURES, ids=lambda f: f.rsplit("/", 1)[-1])
def test_fixture_blocks_reencode_byte_for_byte(sample_table, fixture):
    root = sample_table(fixture)
    logs = _log_files(root)
    assert logs
    for log in logs:
        data = log.read_bytes()
        blocks = list(read_log_file(data))
        # No fixture holds delete or corrupt blocks: the trips table's UPDATE rewrote a row.
        assert {b.block_type for b in blocks} <= {
            BlockType.PARQUET_DATA,
            BlockType.AVRO_DATA,
            BlockType.COMMAND,
        }
        assert sum(b.size for b in blocks) == len(data)
        assert [b.offset for b in blocks] == [0] + [b.size for b in blocks][:-1]
        again = b"".join(encode_block(b.block_type, b.header, b.content, b.footer) for b in blocks)
        assert again == data


def test_read_log_file_accepts_storage_path_file_and_bytes(sample_table):
    root = sample_table(NONPARTITIONED)
    (log,) = _log_files(root)
    relative = log.relative_to(root).as_posix()
    via_storage = list(read_log_file(load_file_io(str(root)), relative))
    with open(log, "rb") as handle:
        via_file = list(read_log_file(handle))
    via_bytes = list(read_log_file(log.read_bytes()))
    via_path = list(read_log_file(str(log)))
    assert via_storage == via_file == via_bytes == via_path
    assert len(via_storage) == 1
    with pytest.raises(ValueError):
        list(read_log_file(load_file_io(str(root))))


# -- writing ---------------------------------------------------------------------------------------
def _sample_rows(instant: str, file_id: str = "fg-0") -> pa.Table:
    data = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "name": ["a", None],
            "amount": pa.array(
                [decimal.Decimal("1.50"), decimal.Decimal("-2.25")], pa.decimal128(10, 2)
            ),
            "ts": pa.array(
                [datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), None],
                pa.timestamp("us", "UTC"),
            ),
            "tags": pa.array([["x", "y"], []], pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        }
    )
    meta = {
        "_hoodie_commit_time": [instant] * 2,
        "_hoodie_commit_seqno": [f"{instant}_0_{i}" for i in (1, 2)],
        "_hoodie_record_key": ["1", "2"],
        "_hoodie_partition_path": ["", ""],
        "_hoodie_file_name": [file_id] * 2,
    }
    columns = [pa.array(v, pa.string()) for v in meta.values()] + list(data.columns)
    return pa.Table.from_arrays(columns, names=list(meta) + data.column_names)


def _schema_json(rows: pa.Table) -> str:
    return add_meta_fields(to_avro_schema(rows.schema, "t"))


def test_parquet_data_block_round_trip():
    rows = _sample_rows("20240102030405006")
    schema = _schema_json(rows)
    data = parquet_data_block(rows, "20240102030405006", schema)
    # Framing: magic, length of the rest, format version 1, type 5; trailer = size - 8.
    assert data[:6] == MAGIC
    (length,) = struct.unpack(">q", data[6:14])
    assert length == len(data) - 14
    assert struct.unpack(">ii", data[14:22]) == (1, int(BlockType.PARQUET_DATA))
    assert struct.unpack(">q", data[-8:])[0] == len(data) - 8
    (block,) = read_log_file(data)
    assert block.header == {HeaderKey.INSTANT_TIME: "20240102030405006", HeaderKey.SCHEMA: schema}
    assert block.content[:4] == b"PAR1" and block.content[-4:] == b"PAR1"
    got = block.records()
    assert got.column_names == rows.column_names
    assert got.to_pylist() == rows.to_pylist()


def test_parquet_data_block_rejects_a_schema_that_does_not_match():
    rows = _sample_rows("1")
    with pytest.raises(SchemaError, match="meta columns"):
        parquet_data_block(rows, "1", to_avro_schema(rows.schema, "t"))  # no meta fields
    with pytest.raises(ValueError):
        parquet_data_block(rows, "not-an-instant", _schema_json(rows))


def test_add_meta_fields_matches_hudi_header_schema(sample_table):
    root = sample_table(TRIPS)
    (block,) = _blocks(_log_files(root)[0])
    commit_schema = _commit(root, block.instant_time)["extraMetadata"]["schema"]
    assert add_meta_fields(commit_schema) == block.schema  # byte-identical to Hudi's
    assert add_meta_fields(block.schema) == block.schema


def test_avro_data_block_round_trip_of_nested_types(sample_table):
    root = sample_table(NONPARTITIONED)
    (source,) = _blocks(_log_files(root)[0])
    rows = source.records()
    (block,) = read_log_file(avro_data_block(rows, source.instant_time, source.schema))
    assert block.block_type == BlockType.AVRO_DATA
    got = block.records()
    assert got.schema.equals(rows.schema)
    assert got.to_pylist() == rows.to_pylist()


def test_delete_block_bytes_match_hudi_layout():
    data = delete_block([DeleteRecord("k", "p")], "20250101000000000")
    (block,) = read_log_file(data)
    assert block.block_type == BlockType.DELETE
    assert block.header == {HeaderKey.INSTANT_TIME: "20250101000000000"}
    # Content version 3, the Avro length, then HoodieDeleteRecordList: one item; recordKey and
    # partitionPath as union branch 1 (string); orderingVal as branch 2 (IntWrapper) holding 0,
    # Hudi's default ordering value (the same bytes Hudi wrote for Spark SQL's DELETE); end of
    # array.
    assert block.content == bytes.fromhex("000000030000000a0202026b020270040000")
    assert block.deleted_records() == [DeleteRecord("k", "p", 0)]


def test_delete_block_round_trip_of_ordering_values():
    values = [
        None,
        0,
        7,
        2**40,
        1.5,
        "v",
        b"b",
        True,
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 2, 29, 1, 2, 3, 4, tzinfo=UTC),
        decimal.Decimal("12.5"),
    ]
    records = [DeleteRecord(f"k{i}", "dt=2024-02-29", v) for i, v in enumerate(values)]
    schema = add_meta_fields(to_avro_schema(pa.schema([("ts", pa.int64())]), "t"))
    (block,) = read_log_file(delete_block(records, "20240229000000000", schema))
    assert block.schema == schema and block.instant_time == "20240229000000000"
    got = block.deleted_records()
    assert [(r.record_key, r.partition_path) for r in got] == [
        (r.record_key, r.partition_path) for r in records
    ]
    assert [r.ordering_value for r in got] == values
    assert type(got[7].ordering_value) is bool


def test_delete_block_ordering_type_follows_the_ordering_field():
    schema = add_meta_fields(
        to_avro_schema(pa.schema([("id", pa.int32()), ("seq", pa.int32())]), "t")
    )
    by_field = delete_block([DeleteRecord("1", "", 5)], "1", schema, ordering_field="seq")
    by_type = delete_block([DeleteRecord("1", "", 5)], "1", schema, ordering_type="int")
    default = delete_block([DeleteRecord("1", "", 5)], "1", schema)
    assert by_field == by_type != default
    # IntWrapper is union branch 2, LongWrapper branch 3 (zig-zag: 04 and 06), then 5 (0a).
    assert next(read_log_file(by_field)).content.endswith(bytes.fromhex("040a00"))
    assert next(read_log_file(default)).content.endswith(bytes.fromhex("060a00"))
    with pytest.raises(SchemaError, match="does not fit"):
        delete_block([DeleteRecord("1", "", 2**40)], "1", schema, ordering_field="seq")
    with pytest.raises(SchemaError, match="not in the schema"):
        delete_block([DeleteRecord("1", "")], "1", schema, ordering_field="nope")
    with pytest.raises(SchemaError):
        delete_block([DeleteRecord("1", "", object())], "1")


def test_rollback_command_block_matches_the_one_hudi_wrote(sample_table):
    root = sample_table(ROLLBACK)
    hudi_written = _log_files(root)[1].read_bytes()
    (theirs,) = read_log_file(hudi_written)
    ours_bytes = rollback_command_block(theirs.instant_time, theirs.target_instant_time)
    (ours,) = read_log_file(ours_bytes)
    assert ours.header == theirs.header  # same entries (Hudi's order is its HashMap's)
    assert list(ours.header) == sorted(ours.header)
    assert len(ours_bytes) == len(hudi_written) == 105
    reordered = encode_block(BlockType.COMMAND, theirs.header, b"")
    assert reordered == hudi_written
    assert ours.is_rollback and ours.target_instant_time == theirs.target_instant_time


# -- damaged files ---------------------------------------------------------------------------------
def _three_blocks() -> tuple[bytes, list[bytes]]:
    rows = _sample_rows("20240101000000001")
    parts = [
        parquet_data_block(rows, "20240101000000001", _schema_json(rows)),
        delete_block([DeleteRecord("1", "")], "20240101000000002"),
        rollback_command_block("20240101000000003", "20240101000000002"),
    ]
    return b"".join(parts), parts


@pytest.mark.parametrize(
    "cut_into_last",
    [3, 6, 10, 30, -9, -1],
    ids=["in-magic", "after-magic", "in-length", "in-header", "in-trailer", "last-byte"],
)
def test_truncated_last_block_leaves_the_earlier_blocks_readable(cut_into_last):
    data, parts = _three_blocks()
    start = len(parts[0]) + len(parts[1])
    cut = start + cut_into_last if cut_into_last > 0 else len(data) + cut_into_last
    blocks = list(read_log_file(data[:cut]))
    assert [b.block_type for b in blocks[:2]] == [BlockType.PARQUET_DATA, BlockType.DELETE]
    assert blocks[0].records().num_rows == 2
    assert blocks[1].deleted_records() == [DeleteRecord("1", "", 0)]
    if cut_into_last == 3:
        assert len(blocks) == 2  # a magic cut short ends the file, as in Hudi's reader
    else:
        assert len(blocks) == 3
        assert blocks[2].block_type == BlockType.CORRUPT
        assert blocks[2].offset == start and blocks[2].size == cut - start
        assert blocks[2].content == data[start + len(MAGIC) : cut]
    assert len(list(read_log_file(data[:cut], include_corrupt=False))) == 2


def test_corrupt_block_in_the_middle_is_skipped_up_to_the_next_magic():
    data, parts = _three_blocks()
    # A crash mid-append of a second block, then a later writer appending a good block.
    damaged = parts[0] + parts[1][:40] + parts[2]
    blocks = list(read_log_file(damaged))
    assert [b.block_type for b in blocks] == [
        BlockType.PARQUET_DATA,
        BlockType.CORRUPT,
        BlockType.COMMAND,
    ]
    assert blocks[1].size == 40 and blocks[2].is_rollback
    # A length field that disagrees with the trailer is corrupt too.
    bad_length = bytearray(parts[2])
    bad_length[13] += 1
    (block,) = read_log_file(bytes(bad_length))
    assert block.block_type == BlockType.CORRUPT
    # So is a trailer that disagrees with the length field, even where the rest parses.
    bad_trailer = parts[2][:-1] + bytes([parts[2][-1] ^ 1])
    assert [b.block_type for b in read_log_file(bad_trailer + parts[1])] == [
        BlockType.CORRUPT,
        BlockType.DELETE,
    ]
    # Garbage where a block should start.
    assert [b.block_type for b in read_log_file(b"junk" + parts[2])] == [
        BlockType.CORRUPT,
        BlockType.COMMAND,
    ]


def test_unsupported_blocks_fail_with_clear_errors():
    kryo = struct.pack(">ii", 2, 3) + b"\x01\x02\x03"
    (block,) = read_log_file(encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: "1"}, kryo))
    with pytest.raises(UnsupportedTableError, match="version 2.*Kryo"):
        block.deleted_records()
    (hfile,) = read_log_file(encode_block(BlockType.HFILE_DATA, {}, b"x"))
    with pytest.raises(UnsupportedTableError, match="HFILE_DATA"):
        hfile.records()
    unknown_type = bytearray(rollback_command_block("2", "1"))
    unknown_type[21] = 9
    with pytest.raises(UnsupportedTableError, match="block type 9"):
        list(read_log_file(bytes(unknown_type)))
    with pytest.raises(HoodieError, match="deleted_records"):
        block.records()


# -- hudi-rs reads what we write -------------------------------------------------------------------
def _set(rows: pa.Table, **values) -> pa.Table:
    for name, value in values.items():
        i = rows.column_names.index(name)
        column = pa.array([value] * rows.num_rows, rows.schema.field(i).type)
        rows = rows.set_column(i, rows.schema.field(i), column)
    return rows


def _next_instant(root: Path) -> str:
    """An instant one minute after the table's latest (instants are yyyyMMddHHmmssSSS times)."""
    latest = _completed(root, "deltacommit")[-1]
    moment = datetime.datetime.strptime(latest[:14], "%Y%m%d%H%M%S") + datetime.timedelta(minutes=1)
    return moment.strftime("%Y%m%d%H%M%S") + latest[14:]


def _base_file(root: Path, partition: str, file_id: str):
    (path,) = (root / partition).glob(f"{file_id}_*.parquet")
    return path, parse_base_file_name(path.name)


def _next_log_name(root: Path, partition: str, file_id: str) -> str:
    """`.<fileId>_<baseInstant>.log.<next version>_<writeToken>` for the file slice."""
    _, base = _base_file(root, partition, file_id)
    versions = [
        _version(p)
        for p in _log_files(root)
        if p.parent == root / partition and parse_log_file_name(p.name).file_id == file_id
    ]
    return f".{file_id}_{base.instant}.log.{max(versions, default=0) + 1}_0-1-0"


def _append_delta_commit(
    root: Path, partition: str, file_id: str, block: bytes, instant: str, *, deletes: int = 0
) -> str:
    """Write `block` as the next log file of a file slice and complete a delta commit for it.

    The commit copies the shape of the table's latest `.deltacommit` (Hudi's JSON), with one
    write stat for the new log file, plus the `.requested` and `.inflight` files.
    """
    _, base = _base_file(root, partition, file_id)
    name = _next_log_name(root, partition, file_id)
    (root / partition / name).write_bytes(block)

    template = _commit(root, _completed(root, "deltacommit")[-1])
    stat = dict(next(s for stats in template["partitionToWriteStats"].values() for s in stats))
    stat.update(
        fileId=file_id,
        path=posixpath.join(partition, name) if partition else name,
        prevCommit=base.instant,
        partitionPath=partition,
        numWrites=0 if deletes else 1,
        numDeletes=deletes,
        numUpdateWrites=0 if deletes else 1,
        numInserts=0,
        totalWriteBytes=len(block),
        fileSizeInBytes=len(block),
        logVersion=parse_log_file_name(name).version,
        logOffset=0,
        baseFile=f"{file_id}_{base.write_token}_{base.instant}.parquet",
        logFiles=[name],
    )
    commit = dict(template, partitionToWriteStats={partition: [stat]})
    commit["operationType"] = "DELETE" if deletes else "UPSERT"
    timeline = root / ".hoodie"
    (timeline / f"{instant}.deltacommit.requested").write_bytes(b"")
    inflight = dict(commit, extraMetadata={})
    (timeline / f"{instant}.deltacommit.inflight").write_text(json.dumps(inflight, indent=2))
    (timeline / f"{instant}.deltacommit").write_text(json.dumps(commit, indent=2))
    return name


def _hudi_rs_rows(root: Path) -> list[dict]:
    hudi = pytest.importorskip("hudi")
    table = pa.Table.from_batches(hudi.HudiTable(str(root)).read())
    return sorted(table.to_pylist(), key=lambda r: r["_hoodie_record_key"])


def _base_rows(root: Path, partition: str, file_id: str) -> pa.Table:
    path, _ = _base_file(root, partition, file_id)
    return pq.read_table(path).replace_schema_metadata(None)


NONPART_FILE_ID = "d206069c-22c8-4532-b9ea-3cf4282342c4-0"  # holds ids 1, 2, 3


def _header_schema(root: Path) -> str:
    latest = _completed(root, "deltacommit")[-1]
    return add_meta_fields(_commit(root, latest)["extraMetadata"]["schema"])


def test_hudi_rs_reads_our_parquet_update_block(sample_table):
    pytest.importorskip("hudi")
    root = sample_table(NONPARTITIONED)
    before = {r["_hoodie_record_key"]: r for r in _hudi_rs_rows(root)}
    instant = _next_instant(root)
    base = _base_rows(root, "", NONPART_FILE_ID)
    carol = base.filter(pc.equal(base["id"], 3))
    carol = _set(
        carol,
        _hoodie_commit_time=instant,
        _hoodie_commit_seqno=f"{instant}_0_1",
        _hoodie_file_name=NONPART_FILE_ID,
        name="Carol-updated",
        isActive=False,
    )
    block = parquet_data_block(carol, instant, _header_schema(root))
    name = _append_delta_commit(root, "", NONPART_FILE_ID, block, instant)
    assert name.startswith(f".{NONPART_FILE_ID}_") and ".log.2_" in name

    after = {r["_hoodie_record_key"]: r for r in _hudi_rs_rows(root)}
    assert sorted(after) == ["1", "2", "3", "4"]
    assert (after["3"]["name"], after["3"]["isActive"]) == ("Carol-updated", False)
    assert after["3"]["_hoodie_commit_time"] == instant
    assert after["3"]["decimalField"] == before["3"]["decimalField"]
    assert after["3"]["mapField"] == before["3"]["mapField"]
    for key in ("1", "2", "4"):
        assert after[key] == before[key]


def test_hudi_rs_applies_our_delete_block(sample_table):
    pytest.importorskip("hudi")
    root = sample_table(NONPARTITIONED)
    before = {r["_hoodie_record_key"]: r for r in _hudi_rs_rows(root)}
    instant = _next_instant(root)
    block = delete_block(
        [DeleteRecord("2", "")], instant, _header_schema(root), ordering_field="longField"
    )
    _append_delta_commit(root, "", NONPART_FILE_ID, block, instant, deletes=1)
    after = {r["_hoodie_record_key"]: r for r in _hudi_rs_rows(root)}
    assert sorted(after) == ["1", "3", "4"]
    assert all(after[k] == before[k] for k in after)


def test_hudi_rs_honours_our_rollback_block(sample_table):
    pytest.importorskip("hudi")
    root = sample_table(NONPARTITIONED)
    schema = _header_schema(root)
    bad = _next_instant(root)
    base = _base_rows(root, "", NONPART_FILE_ID)
    carol = _set(
        base.filter(pc.equal(base["id"], 3)),
        _hoodie_commit_time=bad,
        _hoodie_commit_seqno=f"{bad}_0_1",
        _hoodie_file_name=NONPART_FILE_ID,
        name="Carol-rolled-back",
    )
    _append_delta_commit(root, "", NONPART_FILE_ID, parquet_data_block(carol, bad, schema), bad)
    assert {r["_hoodie_record_key"]: r["name"] for r in _hudi_rs_rows(root)}["3"] == (
        "Carol-rolled-back"
    )
    # A rollback appends a command block to the file slice outside any delta commit.
    rollback = rollback_command_block(_next_instant(root), bad)
    (root / _next_log_name(root, "", NONPART_FILE_ID)).write_bytes(rollback)
    assert {r["_hoodie_record_key"]: r["name"] for r in _hudi_rs_rows(root)}["3"] == "Carol"


def test_hudi_rs_reads_our_avro_blocks(sample_table):
    pytest.importorskip("hudi")
    root = sample_table(TRIPS)
    partition = "city=san_francisco"
    (log,) = _log_files(root)
    file_id = parse_log_file_name(log.name).file_id
    (hudi_block,) = _blocks(log)
    update = _next_instant(root)
    rider_d = _set(
        hudi_block.records(),
        _hoodie_commit_time=update,
        _hoodie_commit_seqno=f"{update}_0_1",
        fare=99.0,
    )
    block = avro_data_block(rider_d, update, hudi_block.schema)
    _append_delta_commit(root, partition, file_id, block, update)
    delete = _next_instant(root)
    rider_a = DeleteRecord("334e26e9-8355-45cc-97c6-c31daf0df330", partition)
    block = delete_block([rider_a], delete, hudi_block.schema, ordering_field="ts")
    _append_delta_commit(root, partition, file_id, block, delete, deletes=1)

    rows = {r["rider"]: r for r in _hudi_rs_rows(root)}
    assert "rider-A" not in rows and len(rows) == 7
    assert (rows["rider-D"]["fare"], rows["rider-D"]["_hoodie_commit_time"]) == (99.0, update)
    assert rows["rider-C"]["fare"] == 27.7


def test_parquet_block_bytes_are_a_plain_parquet_file():
    rows = _sample_rows("5")
    (block,) = read_log_file(parquet_data_block(rows, "5", _schema_json(rows), compression="zstd"))
    meta = pq.ParquetFile(io.BytesIO(block.content)).metadata
    assert meta.num_rows == 2
    assert meta.row_group(0).column(0).compression == "ZSTD"


@pytest.mark.parametrize("encode", [parquet_data_block, avro_data_block], ids=["parquet", "avro"])
def test_a_data_block_read_for_keys_gives_their_rows_only(encode, monkeypatch):
    """`records_with_keys` (a read naming its keys): the rows of those keys, in block order;
    a parquet block holding none of them decodes its key column only."""
    rows = _sample_rows("20240102030405006")  # keys "1" and "2"
    (block,) = read_log_file(encode(rows, "20240102030405006", _schema_json(rows)))
    every = block.records().to_pylist()
    got = block.records_with_keys(pa.array(["2", "9"]))
    assert got.column_names == rows.column_names
    assert got.to_pylist() == [r for r in every if r["_hoodie_record_key"] == "2"]
    columns_read = []
    real_read = pq.ParquetFile.read

    def read(self, columns=None, **kwargs):
        columns_read.append(columns)
        return real_read(self, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", read)
    none = block.records_with_keys(pa.array(["9"]))
    assert none.num_rows == 0 and none.column_names == rows.column_names
    if encode is parquet_data_block:
        assert columns_read == [["_hoodie_record_key"]]

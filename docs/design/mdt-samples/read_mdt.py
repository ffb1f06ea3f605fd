"""Reads a metadata table as Apache Hudi wrote it: every HFile (base files) and every HFile
block of its log files, decoded to HoodieMetadataRecord; prints the HFile structure (trailer,
block headers, file info) and the records. A research tool for docs/design/metadata-table.md,
not product code: it is as small as a correct reader can be, and it is the reference the
first build step's reader is checked against.

    PYTHONPATH=. .venv/bin/python docs/design/mdt-samples/read_mdt.py TABLE [--records]
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import sys
from pathlib import Path

import fastavro

from hoodie.logformat import BlockType, read_log_file

BLOCK_HEADER = 33  # magic 8, on-disk size 4, uncompressed size 4, previous offset 8,
# checksum type 1, bytes per checksum 4, on-disk data size with header 4
TRAILER_SIZE = 4096


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at `pos`: (value, next position)."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def proto_fields(data: bytes) -> list[tuple[int, object]]:
    """A protobuf message's fields in order: (number, int or bytes)."""
    out, pos = [], 0
    while pos < len(data):
        tag, pos = varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 2:
            size, pos = varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ValueError(f"unexpected wire type {wire}")
        out.append((number, value))
    return out


def hadoop_vint(data: bytes, pos: int) -> tuple[int, int]:
    """Hadoop WritableUtils.readVInt/readVLong at `pos`."""
    first = struct.unpack_from(">b", data, pos)[0]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    value = 0
    for i in range(size - 1):
        value = (value << 8) | data[pos + 1 + i]
    return (~value if negative else value), pos + size


TRAILER_NAMES = {
    1: "file_info_offset", 2: "load_on_open_data_offset", 3: "uncompressed_data_index_size",
    4: "total_uncompressed_bytes", 5: "data_index_count", 6: "meta_index_count",
    7: "entry_count", 8: "num_data_index_levels", 9: "first_data_block_offset",
    10: "last_data_block_offset", 11: "comparator_class_name", 12: "compression_codec",
    13: "encryption_key",
}  # fmt: skip


def block(data: bytes, offset: int, codec: int) -> tuple[dict, bytes]:
    magic = data[offset : offset + 8]
    on_disk, uncompressed, previous = struct.unpack_from(">iiq", data, offset + 8)
    checksum_type, per_checksum, data_with_header = struct.unpack_from(">bii", data, offset + 24)
    header = {
        "magic": magic.decode("latin1"), "offset": offset, "on_disk_size_without_header": on_disk,
        "uncompressed_size_without_header": uncompressed, "previous_block_offset": previous,
        "checksum_type": checksum_type, "bytes_per_checksum": per_checksum,
        "on_disk_data_size_with_header": data_with_header,
    }  # fmt: skip
    payload = data[offset + BLOCK_HEADER : offset + data_with_header]
    if codec == 1:  # GZ: Hadoop's GzipCodec stream (gzip members)
        payload = gzip.decompress(payload)
    elif codec != 2:
        raise ValueError(f"compression codec {codec} not handled here")
    if len(payload) != uncompressed:
        raise ValueError(f"block at {offset}: {len(payload)} bytes, header says {uncompressed}")
    return header, payload


def read_hfile(data: bytes) -> dict:
    trailer = data[-TRAILER_SIZE:]
    assert trailer[:8] == b'TRABLK"$', trailer[:8]
    size, pos = varint(trailer, 8)
    fields = {TRAILER_NAMES[n]: v for n, v in proto_fields(trailer[pos : pos + size])}
    fields = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in fields.items()}
    version = trailer[-4:]
    fields["minor_version"], fields["major_version"] = version[0], int.from_bytes(version[1:])
    codec = fields.get("compression_codec", 2)
    out = {"trailer": fields, "blocks": [], "file_info": {}, "records": []}
    # load-on-open: root data index, meta index, file info
    offset = fields["load_on_open_data_offset"]
    index_header, index = block(data, offset, codec)
    out["blocks"].append(index_header)
    entries, pos = [], 0
    for _ in range(fields["data_index_count"]):
        block_offset, block_size = struct.unpack_from(">qi", index, pos)
        key_len, pos = hadoop_vint(index, pos + 12)
        entries.append((block_offset, block_size, index[pos : pos + key_len]))
        pos += key_len
    out["index"] = [(o, s, k[2 : 2 + struct.unpack_from(">h", k)[0]].decode("utf-8", "replace"))
                    for o, s, k in entries]  # fmt: skip
    meta_offset = offset + BLOCK_HEADER + index_header["on_disk_size_without_header"]
    meta_header, _ = block(data, meta_offset, codec)
    out["blocks"].append(meta_header)
    info_header, info = block(data, fields["file_info_offset"], codec)
    out["blocks"].append(info_header)
    assert info[:4] == b"PBUF"
    size, pos = varint(info, 4)
    for _, pair in proto_fields(info[pos : pos + size]):
        kv = dict(proto_fields(pair))
        out["file_info"][kv[1].decode("utf-8", "replace")] = kv[2]
    with_mvcc = out["file_info"].get("KEY_VALUE_VERSION") == struct.pack(">i", 1)
    for block_offset, _, _ in entries:
        header, payload = block(data, block_offset, codec)
        out["blocks"].append(header)
        pos = 0
        while pos < len(payload):
            key_len, value_len = struct.unpack_from(">ii", payload, pos)
            key = payload[pos + 8 : pos + 8 + key_len]
            value = payload[pos + 8 + key_len : pos + 8 + key_len + value_len]
            pos += 8 + key_len + value_len
            if with_mvcc:
                _, pos = hadoop_vint(payload, pos)
            row_len = struct.unpack_from(">h", key)[0]
            out["records"].append((key[2 : 2 + row_len].decode("utf-8"), key[2 + row_len :], value))
    return out


def decode(schema: dict, value: bytes) -> dict:
    return fastavro.schemaless_reader(io.BytesIO(value), schema)


def show_hfile(name: str, data: bytes, schema_json: str | None, records: bool) -> None:
    parsed = read_hfile(data)
    print(f"--- {name}: {len(data)} bytes")
    print("trailer:", json.dumps(parsed["trailer"]))
    for header in parsed["blocks"]:
        print("block:", json.dumps(header))
    print("index:", parsed["index"])
    info = {}
    for name, value in parsed["file_info"].items():
        if name == "schema":
            info[name] = f"<{len(value)} bytes>"
        elif name == "hfile.LASTKEY":
            info[name] = value.decode("utf-8", "replace")
        else:
            info[name] = value.hex()
    print("file info:", info)
    schema_text = parsed["file_info"].get("schema", b"").decode() or schema_json
    if parsed["records"]:
        print("first key-tail bytes:", parsed["records"][0][1].hex())
    if records and schema_text:
        schema = fastavro.parse_schema(json.loads(schema_text))
        for key, _, value in parsed["records"]:
            record = decode(schema, value) if value else None
            print(f"  {key!r}: {abbreviate(record)}")


def abbreviate(record):
    if isinstance(record, dict):
        return {k: abbreviate(v) for k, v in record.items() if v is not None}
    if isinstance(record, bytes):
        return f"<{len(record)} bytes>"
    return record


def main() -> None:
    root = Path(sys.argv[1]) / ".hoodie" / "metadata"
    records = "--records" in sys.argv
    for path in sorted(root.glob("*/*")):
        if path.name.endswith(".hfile"):
            show_hfile(str(path.relative_to(root)), path.read_bytes(), None, records)
        elif ".log." in path.name and not path.name.endswith(".crc"):
            for n, log_block in enumerate(read_log_file(path.read_bytes())):
                header = {
                    key.name: ("<schema>" if key.name == "SCHEMA" else value)
                    for key, value in log_block.header.items()
                }
                name = path.relative_to(root)
                print(f"--- {name} block {n}: {log_block.block_type.name} header={header}")
                if log_block.block_type == BlockType.HFILE_DATA:
                    show_hfile("(log block)", log_block.content, log_block.schema, records)
                elif log_block.block_type == BlockType.DELETE:
                    print("  deletes:", [d.record_key for d in log_block.deleted_records()])


if __name__ == "__main__":
    main()

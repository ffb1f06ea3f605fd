"""Avro binary records encoded a column at a time, with Arrow and numpy, not a record at a time.

A log block's Avro content is each record's schemaless binary encoding behind its length.
fastavro encodes one record per call (15 us for a CDC record with two five-column images,
three times the whole rewrite of a file group when most of its rows changed). Here each column
becomes a binary array of its values' encodings (varints, little-endian floats, length-prefixed
strings, union branch indexes), a record's fields are joined per row by Arrow, and the block
content is one buffer. Only the types below are encoded so; for any other (`encodable` says)
callers use fastavro. The output is byte for byte fastavro's (tests/unit/test_avro_columnar.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_PRIMITIVE = {"int", "long", "float", "double", "boolean", "string", "bytes"}


Named = dict[str, dict[str, Any]]  # the records declared so far, by name and full name


def encodable(schema: Any, dtype: pa.DataType, named: Named | None = None) -> bool:
    """Can `block_content` write Arrow values of `dtype` as the Avro `schema`? (`named`: the
    records declared before, which `schema` may refer to by name.)"""
    named = {} if named is None else named
    if isinstance(schema, list):  # a union: null and one type
        others = [s for s in schema if s != "null"]
        return len(schema) == 2 and len(others) == 1 and encodable(others[0], dtype, named)
    if isinstance(schema, dict):
        if schema.get("logicalType") is not None:
            return schema.get("logicalType") == "date" and pa.types.is_date32(dtype)
        if schema.get("type") == "record":
            _declare(schema, named)
            if not pa.types.is_struct(dtype) or dtype.num_fields != len(schema["fields"]):
                return False
            return all(
                dtype.field(i).name == f["name"]
                and encodable(f["type"], dtype.field(i).type, named)
                for i, f in enumerate(schema["fields"])
            )
        return encodable(schema["type"], dtype, named)
    if schema in named:
        return encodable(named[schema], dtype, named)
    if schema not in _PRIMITIVE:
        return False
    return _fits(schema, dtype)


def _declare(record: dict[str, Any], named: Named) -> None:
    named[record["name"]] = record
    if record.get("namespace"):
        named[f"{record['namespace']}.{record['name']}"] = record


def _fits(avro: str, dtype: pa.DataType) -> bool:
    if avro in ("int", "long"):
        return pa.types.is_integer(dtype) and not pa.types.is_uint64(dtype)
    if avro == "float":
        return pa.types.is_float32(dtype)
    if avro == "double":
        return pa.types.is_float64(dtype)
    if avro == "boolean":
        return pa.types.is_boolean(dtype)
    if avro == "string":
        return pa.types.is_string(dtype) or pa.types.is_large_string(dtype)
    return pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype)


def table_encodable(table: pa.Table, schema: dict[str, Any]) -> bool:
    """Can `block_content` write `table`'s rows as records of `schema`?"""
    fields = schema.get("fields") or []
    named: Named = {}
    return table.column_names == [f["name"] for f in fields] and all(
        encodable(f["type"], table.schema.field(i).type, named) for i, f in enumerate(fields)
    )


def block_content(table: pa.Table, schema: dict[str, Any], version: int) -> bytes:
    """An Avro data block's content of `table`'s rows as records of `schema` (a record whose
    fields are the table's columns, in order): the content version, the record count, then
    each record's length (4 bytes, big-endian) and encoding."""
    n = table.num_rows
    head = np.array([version, n], ">i4").tobytes()
    if n == 0:
        return head
    named: Named = {}
    fields = [
        _encode(f["type"], table.column(i).combine_chunks(), named)
        for i, f in enumerate(schema["fields"])
    ]
    records = _join(fields, n)
    lengths = pc.binary_length(records).to_numpy(zero_copy_only=False).astype(">i4")
    prefixes = _fixed(lengths.view(np.uint8), 4, n)
    whole = _join([prefixes, records], n)
    offsets = np.frombuffer(whole.buffers()[1], np.int64)[whole.offset : whole.offset + n + 1]
    data = whole.buffers()[2]
    assert data is not None
    return head + data.to_pybytes()[offsets[0] : offsets[-1]]


def _join(columns: list[pa.Array], n: int) -> pa.Array:
    """Per row, the concatenation of the columns' values (large binary)."""
    columns = [c.cast(pa.large_binary()) for c in columns]
    if not columns:
        return _fixed(np.zeros(0, np.uint8), 0, n)
    if len(columns) == 1:
        return columns[0]
    return pc.binary_join_element_wise(*columns, pa.scalar(b"", pa.large_binary()))


def _encode(schema: Any, values: pa.Array, named: Named) -> pa.Array:
    """Each value's Avro encoding as `schema`, a binary array as long as `values`."""
    n = len(values)
    if isinstance(schema, list):
        branch = 0 if schema[0] != "null" else 1
        other = schema[branch]
        present = _encode(other, _filled(values), named)
        tagged = _join([_fixed(np.full(n, branch * 2, np.uint8), 1, n), present], n)
        if values.null_count == 0:
            return tagged
        absent = _fixed(np.full(n, (1 - branch) * 2, np.uint8), 1, n).cast(pa.large_binary())
        return pc.if_else(pc.is_valid(values), tagged, absent)
    if isinstance(schema, dict):
        if schema.get("type") == "record":
            _declare(schema, named)
            children = [
                _encode(f["type"], pc.struct_field(values, [i]), named)
                for i, f in enumerate(schema["fields"])
            ]
            return _join(children, n)
        if schema.get("logicalType") == "date":
            return _varints(values.cast(pa.int32()).to_numpy(zero_copy_only=False))
        return _encode(schema["type"], values, named)
    if schema in named:
        return _encode(named[schema], values, named)
    if schema in ("int", "long"):
        return _varints(values.cast(pa.int64()).to_numpy(zero_copy_only=False))
    if schema in ("float", "double"):
        width = 4 if schema == "float" else 8
        raw = values.to_numpy(zero_copy_only=False).astype("<f4" if width == 4 else "<f8")
        return _fixed(raw.view(np.uint8), width, n)
    if schema == "boolean":
        raw = values.to_numpy(zero_copy_only=False).astype(np.uint8)
        return _fixed(raw, 1, n)
    data = values.cast(pa.large_binary())
    lengths = pc.binary_length(data).to_numpy(zero_copy_only=False)
    return _join([_varints(lengths), data], n)


def _filled(values: pa.Array) -> pa.Array:
    """`values` with nulls replaced by any value of their type (a union's null branch does not
    use them)."""
    if values.null_count == 0 or pa.types.is_struct(values.type):
        return values
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        return pc.fill_null(values, "")
    if pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        return pc.fill_null(values, pa.scalar(b"", values.type))
    if pa.types.is_boolean(values.type):
        return pc.fill_null(values, False)
    return pc.fill_null(values, pa.scalar(0, values.type).cast(values.type))


def _varints(values: np.ndarray) -> pa.Array:
    """Zig-zag varints of 64-bit integers (Avro's int and long)."""
    signed = values.astype(np.int64)
    zigzag = ((signed << 1) ^ (signed >> 63)).astype(np.uint64)
    n = len(zigzag)
    width = np.ones(n, np.int64)
    rest = zigzag >> np.uint64(7)
    while rest.any():
        width += rest != 0
        rest = rest >> np.uint64(7)
    shifts = np.arange(10, dtype=np.uint64) * np.uint64(7)
    groups = ((zigzag[:, None] >> shifts[None, :]) & np.uint64(0x7F)).astype(np.uint8)
    more = np.arange(10)[None, :] < (width[:, None] - 1)
    groups |= more.astype(np.uint8) << 7
    kept = np.arange(10)[None, :] < width[:, None]
    return _variable(groups[kept], width)


def _fixed(data: np.ndarray, width: int, n: int) -> pa.Array:
    """A binary array of `n` values of `width` bytes each, from their bytes in a row."""
    return _variable(data, np.full(n, width, np.int64))


def _variable(data: np.ndarray, lengths: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(
        pa.large_binary(),
        len(lengths),
        [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data, np.uint8))],
    )

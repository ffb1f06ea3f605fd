"""`hoodie.avro_columnar` encodes a block's records byte for byte as fastavro does, for every
type it takes (nulls, extreme integers, unicode, nested records, both union orders), and says
which it does not take."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from hoodie import avro_columnar, cdc
from hoodie.logformat import BLOCK_CONTENT_VERSION, avro_block_content, avro_rows
from hoodie.options.table import CdcSupplementalLoggingMode as Mode
from hoodie.schema import to_avro_schema


def _fastavro(table: pa.Table, schema: dict) -> bytes:
    return avro_block_content(avro_rows(table), json.dumps(schema))


def _random_table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random((8, n)) < 0.3
    longs = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    longs[: min(n, 6)] = [0, -1, 1, 2**63 - 1, -(2**63), 63][: min(n, 6)]
    words = ["", "a", "é€𝄞", "x" * 300, "tab\tnl\n"]
    return pa.table({
        "i8": pa.array(rng.integers(-128, 127, n).astype(np.int8), mask=nulls[0]),
        "i32": pa.array(rng.integers(-(2**31), 2**31 - 1, n).astype(np.int32), mask=nulls[1]),
        "i64": pa.array(longs, mask=nulls[2]),
        "f32": pa.array(rng.random(n).astype(np.float32), mask=nulls[3]),
        "f64": pa.array(rng.standard_normal(n), mask=nulls[4]),
        "b": pa.array(rng.random(n) < 0.5, mask=nulls[5]),
        "s": pa.array([words[i % len(words)] for i in range(n)], pa.string(), mask=nulls[6]),
        "bin": pa.array([w.encode() for w in (words[i % 5] for i in range(n))], pa.binary(),
                        mask=nulls[7]),
        "d": pa.array(rng.integers(-10000, 30000, n).astype(np.int32)).cast(pa.date32()),
    })  # fmt: skip


@pytest.mark.parametrize("n", [0, 1, 7, 500])
def test_flat_records_are_fastavros(n):
    table = _random_table(n, n)
    schema = json.loads(to_avro_schema(table.schema, "t"))
    assert avro_columnar.table_encodable(table, schema)
    ours = avro_columnar.block_content(table, schema, BLOCK_CONTENT_VERSION)
    assert ours == _fastavro(table, schema)


@pytest.mark.parametrize("mode", list(Mode))
def test_cdc_records_are_fastavros(mode):
    data = _random_table(200, 3)
    schema = cdc.cdc_schema(mode, "t", data.schema)
    rng = np.random.default_rng(5)
    columns: dict[str, pa.Array] = {"op": pa.array(rng.choice(["i", "u", "d"], 200))}
    for name in cdc.cdc_fields(mode)[1:]:
        if name in ("ts_ms", "record_key"):
            columns[name] = pa.array([str(i) for i in range(200)])
        else:  # an image: a struct of the data columns, null in some rows
            mask = pa.array(rng.random(200) < 0.3)
            columns[name] = pa.StructArray.from_arrays([c.combine_chunks() for c in data.columns],
                                                       fields=list(data.schema),
                                                       mask=mask)  # fmt: skip
    table = pa.table(columns)
    assert avro_columnar.table_encodable(table, schema)
    ours = avro_columnar.block_content(table, schema, BLOCK_CONTENT_VERSION)
    assert ours == _fastavro(table, schema)


def test_other_types_are_left_to_fastavro():
    table = pa.table({
        "ts": pa.array([1], pa.timestamp("us")),
        "dec": pa.array([1], pa.decimal128(5, 2)),
        "m": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int32())),
    })  # fmt: skip
    schema = json.loads(to_avro_schema(table.schema, "t"))
    for i, field in enumerate(schema["fields"]):
        assert not avro_columnar.encodable(field["type"], table.schema.field(i).type)
    assert not avro_columnar.table_encodable(table.select(["ts"]), schema)

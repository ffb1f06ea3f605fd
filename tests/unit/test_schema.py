"""Arrow <-> Avro schema mapping, against the schema Apache Hudi's Spark writer recorded."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.exceptions import SchemaError
from hoodie.metadata import CommitMetadata
from hoodie.schema import (
    META_COLUMNS,
    avro_name_problem,
    avro_type_of,
    data_schema,
    from_avro_schema,
    normalize_schema,
    normalize_type,
    to_avro_schema,
    with_meta_columns,
)

TABLE = "v6_simplekeygen_nonhivestyle"
COW_NONHIVE = f"sample_table/cow/{TABLE}"

# The Arrow schema of the fixture's CREATE TABLE (see v6_simplekeygen_nonhivestyle.sql).
ARRAY_STRUCT = pa.struct([("arr_struct_f1", pa.string()), ("arr_struct_f2", pa.int32())])
MAP_STRUCT = pa.struct(
    [("map_field_value_struct_f1", pa.float64()), ("map_field_value_struct_f2", pa.bool_())]
)
CHILD_STRUCT = pa.struct([("child_field1", pa.float64()), ("child_field2", pa.bool_())])
SQL_SCHEMA = pa.schema(
    [
        ("id", pa.int32()),
        ("name", pa.string()),
        ("isActive", pa.bool_()),
        ("shortField", pa.int16()),
        ("intField", pa.int32()),
        ("longField", pa.int64()),
        ("floatField", pa.float32()),
        ("doubleField", pa.float64()),
        ("decimalField", pa.decimal128(10, 5)),
        ("dateField", pa.date32()),
        ("timestampField", pa.timestamp("us", tz="UTC")),
        ("binaryField", pa.binary()),
        ("arrayField", pa.list_(ARRAY_STRUCT)),
        ("mapField", pa.map_(pa.string(), MAP_STRUCT)),
        (
            "structField",
            pa.struct(
                [("field1", pa.string()), ("field2", pa.int32()), ("child_struct", CHILD_STRUCT)]
            ),
        ),
        ("byteField", pa.int8()),
    ]
)


@pytest.fixture
def fixture_root(sample_table):
    return sample_table(COW_NONHIVE)


@pytest.fixture
def hudi_schema(fixture_root) -> dict:
    """The Avro writer schema Hudi recorded in the fixture's latest commit."""
    meta = CommitMetadata.from_json(
        (fixture_root / ".hoodie" / "20240418172804498.commit").read_text()
    )
    return json.loads(meta.schema)


def _fields(avro: dict) -> dict[str, dict]:
    return {f["name"]: f for f in avro["fields"]}


def test_to_avro_schema_primitives():
    schema = pa.schema(
        [
            ("i8", pa.int8()),
            ("i16", pa.int16()),
            ("i32", pa.int32()),
            ("i64", pa.int64()),
            ("f", pa.float32()),
            ("d", pa.float64()),
            ("s", pa.string()),
            ("ls", pa.large_string()),
            ("b", pa.binary()),
            ("flag", pa.bool_()),
            ("dec", pa.decimal128(10, 5)),
            ("dec38", pa.decimal128(38, 10)),
            ("day", pa.date32()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("ts_ntz", pa.timestamp("us")),
        ]
    )
    avro = json.loads(to_avro_schema(schema, "t"))
    assert avro["type"] == "record"
    assert avro["name"] == "t_record"
    assert avro["namespace"] == "hoodie.t"
    fields = _fields(avro)
    assert list(fields) == schema.names
    for field in fields.values():
        assert field["default"] is None
        assert field["type"][0] == "null" and len(field["type"]) == 2
    types = {name: f["type"][1] for name, f in fields.items()}
    assert types["i8"] == types["i16"] == types["i32"] == "int"
    assert types["i64"] == "long"
    assert types["f"] == "float"
    assert types["d"] == "double"
    assert types["s"] == types["ls"] == "string"
    assert types["b"] == "bytes"
    assert types["flag"] == "boolean"
    assert types["dec"] == {
        "type": "fixed",
        "name": "fixed",
        "namespace": "hoodie.t.t_record.dec",
        "size": 5,
        "logicalType": "decimal",
        "precision": 10,
        "scale": 5,
    }
    assert types["dec38"]["size"] == 16
    assert types["day"] == {"type": "int", "logicalType": "date"}
    assert types["ts"] == {"type": "long", "logicalType": "timestamp-micros"}
    assert types["ts_ntz"] == {"type": "long", "logicalType": "local-timestamp-micros"}


@pytest.mark.parametrize(
    "precision, size",
    # Spark's minBytesForPrecision.
    [(1, 1), (2, 1), (3, 2), (4, 2), (9, 4), (10, 5), (18, 8), (19, 9), (20, 9), (38, 16)],
)
def test_decimal_fixed_size(precision, size):
    avro = json.loads(to_avro_schema(pa.schema([("d", pa.decimal128(precision, 0))]), "t"))
    assert avro["fields"][0]["type"][1]["size"] == size


def test_to_avro_schema_matches_hudi_for_fixture_columns(hudi_schema):
    ours = json.loads(to_avro_schema(SQL_SCHEMA, TABLE))
    # Exactly the schema Hudi's Spark writer recorded: names, namespaces, types, defaults.
    assert ours == hudi_schema


def test_to_avro_schema_matches_hudi_per_field(hudi_schema):
    ours = _fields(json.loads(to_avro_schema(SQL_SCHEMA, TABLE)))
    theirs = _fields(hudi_schema)
    assert list(ours) == list(theirs)
    for name in theirs:
        assert ours[name]["type"] == theirs[name]["type"], name
    assert ours["decimalField"]["type"][1]["size"] == 5
    assert ours["arrayField"]["type"][1]["items"][1]["name"] == "arrayField"
    assert ours["mapField"]["type"][1]["values"][1]["namespace"] == f"hoodie.{TABLE}.{TABLE}_record"
    child = ours["structField"]["type"][1]["fields"][2]["type"][1]
    assert child["namespace"] == f"hoodie.{TABLE}.{TABLE}_record.structField"


def test_to_avro_schema_of_fixture_parquet_schema(fixture_root, hudi_schema):
    """The schema pyarrow reads from Hudi's own parquet file maps to the same Avro schema."""
    parquet = next((fixture_root / "10").glob("*_20240418172804498.parquet"))
    arrow = pq.read_schema(parquet)
    assert arrow.names[:5] == list(META_COLUMNS)
    assert json.loads(to_avro_schema(normalize_schema(arrow), TABLE)) == hudi_schema


def test_to_avro_schema_drops_meta_columns():
    schema = with_meta_columns(pa.schema([("id", pa.int64())]))
    assert schema.names == [*META_COLUMNS, "id"]
    avro = json.loads(to_avro_schema(schema, "t"))
    assert [f["name"] for f in avro["fields"]] == ["id"]
    assert data_schema(schema).names == ["id"]


def test_from_avro_schema_round_trip():
    back = from_avro_schema(to_avro_schema(SQL_SCHEMA, TABLE))
    assert back.names == SQL_SCHEMA.names
    expected = {
        "id": pa.int32(),
        "name": pa.string(),
        "isActive": pa.bool_(),
        "shortField": pa.int32(),  # Avro has no 16-bit int
        "intField": pa.int32(),
        "longField": pa.int64(),
        "floatField": pa.float32(),
        "doubleField": pa.float64(),
        "decimalField": pa.decimal128(10, 5),
        "dateField": pa.date32(),
        "timestampField": pa.timestamp("us", tz="UTC"),
        "binaryField": pa.binary(),
        "arrayField": pa.list_(ARRAY_STRUCT),
        "mapField": pa.map_(pa.string(), MAP_STRUCT),
        "structField": SQL_SCHEMA.field("structField").type,
        "byteField": pa.int32(),  # Avro has no 8-bit int
    }
    for field in back:
        assert field.type == expected[field.name], field.name
        assert field.nullable
        # Compatible: the original column casts to the type read back.
        original = SQL_SCHEMA.field(field.name).type
        assert pa.array([None], type=original).cast(field.type).type == field.type
    # And the round trip is a fixed point from there on.
    again = from_avro_schema(to_avro_schema(back, TABLE))
    assert again.equals(back)


def test_from_avro_schema_of_hudi_schema(hudi_schema, fixture_root):
    arrow = from_avro_schema(json.dumps(hudi_schema))
    parquet = next((fixture_root / "10").glob("*_20240418172804498.parquet"))
    data = normalize_schema(data_schema(pq.read_schema(parquet)))
    assert arrow.names == data.names
    for field in arrow:
        # Equal as Hudi sees types (the parquet file has 2-level lists with required elements).
        assert avro_type_of(field) == avro_type_of(data.field(field.name)), field.name


def test_from_avro_schema_other_types():
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "req", "type": "long"},
            {"name": "ms", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
            {"name": "lms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
            {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 3}},
            {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4}},
        ],
    }
    schema = from_avro_schema(json.dumps(avro))
    assert schema.field("req").type == pa.int64()
    assert not schema.field("req").nullable
    assert schema.field("ms").type == pa.timestamp("us", tz="UTC")
    assert schema.field("ms").nullable
    assert schema.field("lms").type == pa.timestamp("us")
    assert schema.field("e").type == pa.string()
    assert schema.field("fx").type == pa.binary(3)
    assert schema.field("u").type == pa.string()
    assert schema.field("dec").type == pa.decimal128(4, 0)


def test_from_avro_schema_rejects_multi_branch_union():
    avro = {"type": "record", "name": "r", "fields": [{"name": "x", "type": ["int", "string"]}]}
    with pytest.raises(SchemaError):
        from_avro_schema(json.dumps(avro))


def test_map_with_int_keys_raises_naming_column():
    schema = pa.schema([("id", pa.int32()), ("scores", pa.map_(pa.int32(), pa.string()))])
    with pytest.raises(SchemaError, match="'scores'") as err:
        to_avro_schema(schema, "t")
    assert "string keys" in str(err.value)


def test_nested_map_with_int_keys_raises_naming_column():
    inner = pa.struct([("lookup", pa.map_(pa.int64(), pa.int64()))])
    with pytest.raises(SchemaError, match="'lookup'"):
        to_avro_schema(pa.schema([("outer", inner)]), "t")


@pytest.mark.parametrize(
    "dtype",
    [
        pa.null(),
        pa.time64("us"),
        pa.duration("s"),
        pa.uint64(),
        pa.float16(),
        pa.dictionary(pa.int8(), pa.string()),
    ],
)
def test_unsupported_types_raise_naming_column(dtype):
    with pytest.raises(SchemaError, match="'odd'"):
        to_avro_schema(pa.schema([("id", pa.int32()), ("odd", dtype)]), "t")


def test_normalize_type():
    assert normalize_type(pa.large_string()) == pa.string()
    assert normalize_type(pa.large_binary()) == pa.binary()
    assert normalize_type(pa.timestamp("ns", tz="America/Chicago")) == pa.timestamp("us", tz="UTC")
    assert normalize_type(pa.timestamp("ms")) == pa.timestamp("us")
    assert normalize_type(pa.large_list(pa.large_string())) == pa.list_(pa.string())
    assert normalize_type(pa.map_(pa.large_string(), pa.timestamp("ns", tz="UTC"))) == pa.map_(
        pa.string(), pa.timestamp("us", tz="UTC")
    )
    nested = pa.struct([("a", pa.large_list(pa.struct([("b", pa.large_string())])))])
    assert normalize_type(nested) == pa.struct([("a", pa.list_(pa.struct([("b", pa.string())])))])


def test_normalize_schema_makes_all_nullable():
    schema = pa.schema([pa.field("a", pa.large_string(), nullable=False)])
    out = normalize_schema(schema)
    assert out.field("a").type == pa.string()
    assert out.field("a").nullable


def test_avro_type_of():
    assert avro_type_of(pa.field("a", pa.int16())) == "int"
    assert avro_type_of(pa.field("a", pa.int32())) == avro_type_of(pa.field("b", pa.int8()))
    assert avro_type_of(pa.field("a", pa.int64())) != avro_type_of(pa.field("a", pa.int32()))
    dec = json.loads(avro_type_of(pa.field("a", pa.decimal128(10, 5))))
    assert (dec["size"], dec["precision"], dec["scale"]) == (5, 10, 5)


@pytest.mark.parametrize(
    ("table", "name", "namespace"),
    [
        ("orders", "orders_record", "hoodie.orders"),
        ("daily-orders", "daily__orders_record", "hoodie.daily__orders"),
        ("2024_sales", "__024_sales_record", "hoodie.__024_sales"),
        ("stg.orders v2", "stg__orders__v2_record", "hoodie.stg__orders__v2"),
        ("é", "___record", "hoodie.__"),
    ],
)
def test_the_record_is_named_after_the_table_as_apache_hudi_names_it(table, name, namespace):
    """Apache Hudi makes an Avro name of the table's (HoodieAvroUtils.sanitizeName): an ASCII
    letter or `_` first, then those and digits, anything else `__`."""
    avro = json.loads(to_avro_schema(pa.schema([("id", pa.int64())]), table))
    assert (avro["name"], avro["namespace"]) == (name, namespace)
    assert all(avro_name_problem(part) is None for part in f"{namespace}.{name}".split("."))

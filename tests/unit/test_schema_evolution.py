"""The writer-schema decision for each schema-change policy (no Spark needed)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie.exceptions import SchemaEvolutionError
from hoodie.schema_evolution import SchemaChange, SchemaDiff, writer_schema

TABLE = pa.schema([("id", pa.int32()), ("name", pa.string()), ("amount", pa.float32())])


def names(schema: pa.Schema) -> list[str]:
    return schema.names


def test_same_columns_keep_the_table_schema_under_every_policy():
    incoming = pa.schema([("amount", pa.float32()), ("id", pa.int32()), ("name", pa.string())])
    for policy in SchemaChange:
        assert writer_schema("t", TABLE, incoming, policy) == TABLE, policy


def test_new_column_per_policy():
    incoming = TABLE.append(pa.field("extra", pa.string()))
    assert names(writer_schema("t", TABLE, incoming, SchemaChange.IGNORE)) == names(TABLE)
    for policy in (
        SchemaChange.EVOLVE,
        SchemaChange.APPEND_NEW_COLUMNS,
        SchemaChange.SYNC_ALL_COLUMNS,
    ):
        assert names(writer_schema("t", TABLE, incoming, policy)) == [*names(TABLE), "extra"]
    with pytest.raises(SchemaEvolutionError, match=r"new columns extra \(string\)"):
        writer_schema("t", TABLE, incoming, SchemaChange.FAIL)


def test_missing_column_per_policy():
    incoming = pa.schema([("id", pa.int32()), ("amount", pa.float32())])
    for policy in (SchemaChange.EVOLVE, SchemaChange.IGNORE):
        with pytest.raises(SchemaEvolutionError, match=r"lacks column\(s\) name \(string\)"):
            writer_schema("t", TABLE, incoming, policy)
    kept = writer_schema("t", TABLE, incoming, SchemaChange.APPEND_NEW_COLUMNS)
    assert kept == TABLE  # the column stays; new rows carry null
    synced = writer_schema("t", TABLE, incoming, SchemaChange.SYNC_ALL_COLUMNS)
    assert names(synced) == ["id", "amount"]
    with pytest.raises(SchemaEvolutionError, match="missing columns name"):
        writer_schema("t", TABLE, incoming, SchemaChange.FAIL)


def test_sync_keeps_table_order_then_new_columns():
    incoming = pa.schema([("extra", pa.bool_()), ("amount", pa.float32()), ("id", pa.int32())])
    synced = writer_schema("t", TABLE, incoming, SchemaChange.SYNC_ALL_COLUMNS)
    assert names(synced) == ["id", "amount", "extra"]


@pytest.mark.parametrize(
    "column, new_type, expected",
    [
        ("id", pa.int64(), pa.int64()),  # int -> bigint widens the table
        ("amount", pa.float64(), pa.float64()),  # float -> double widens the table
        ("id", pa.int16(), pa.int32()),  # smallint is Avro int too: no change
    ],
)
def test_widening_grows_the_stored_type(column, new_type, expected):
    incoming = pa.schema([pa.field(f.name, new_type if f.name == column else f.type)
                          for f in TABLE])  # fmt: skip
    for policy in (SchemaChange.IGNORE, SchemaChange.APPEND_NEW_COLUMNS):
        assert writer_schema("t", TABLE, incoming, policy).field(column).type == expected


def test_a_narrower_batch_never_narrows_the_table():
    wide = pa.schema([("id", pa.int64()), ("amount", pa.float64())])
    incoming = pa.schema([("id", pa.int32()), ("amount", pa.float32())])
    assert writer_schema("t", wide, incoming, SchemaChange.SYNC_ALL_COLUMNS) == wide
    diff = SchemaDiff.of(wide, incoming)
    assert [c.column for c in diff.narrowed] == ["id", "amount"]


@pytest.mark.parametrize("policy", list(SchemaChange))
def test_incompatible_type_change_names_column_and_both_types(policy):
    incoming = pa.schema([("id", pa.int32()), ("name", pa.int64()), ("amount", pa.float32())])
    with pytest.raises(SchemaEvolutionError) as err:
        writer_schema("orders", TABLE, incoming, policy)
    message = str(err.value)
    assert "table 'orders'" in message
    assert "column 'name' changes type from string to bigint" in message


def test_double_to_float_is_not_a_widening():
    incoming = pa.schema([("id", pa.int32()), ("name", pa.string()), ("amount", pa.float64())])
    wide = writer_schema("t", TABLE, incoming, SchemaChange.EVOLVE)
    back = pa.schema([("id", pa.int32()), ("name", pa.string()), ("amount", pa.string())])
    with pytest.raises(SchemaEvolutionError, match="from double to string"):
        writer_schema("t", wide, back, SchemaChange.EVOLVE)


def test_fail_lists_every_difference():
    incoming = pa.schema([("id", pa.int64()), ("amount", pa.float32()), ("extra", pa.string())])
    with pytest.raises(SchemaEvolutionError) as err:
        writer_schema("t", TABLE, incoming, SchemaChange.FAIL)
    message = str(err.value)
    for part in ("new columns extra (string)", "missing columns name (string)",
                 "type changes id int -> bigint", "on_schema_change is 'fail'"):  # fmt: skip
        assert part in message

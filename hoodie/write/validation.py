"""The batch's schema, checked against the write config before anything is written.

Everything here is decided from the DataFrame's schema alone (no Spark job), so a refused write
leaves no instant, marker or file behind, whoever calls the write client. The rules:

- Column names are unique, ignoring case: Spark resolves names without case by default, and so
  do Hive and Hudi's Spark reader, so two columns differing only in case could not be told
  apart once written (and `select a, a` cannot be written at all).
- The configured record key, partition and precombine columns are in the batch, spelled as
  configured (case included: Hudi looks fields up by exact name).
- Record key and partition columns have a type whose text is a stable identity. A Hudi key and
  a partition folder are the text of the value: a float's text is not (1.0 vs 1, 0.1 + 0.2,
  and widening an int column to double turns every "1" into "1.0", so every row would become a
  new record); a timestamp's text depends on the session time zone here, while Apache Hudi keys
  a timestamp by its epoch microseconds; maps, arrays and structs have no canonical text; binary
  values are not text. Such columns are refused with the allowed types and the cast to use.
- The precombine (ordering) column has an order both we and Apache Hudi apply the same way:
  numbers, strings, dates, timestamps and booleans. Maps, arrays and structs have none, and
  binary is compared as signed bytes by Hudi (Java's `ByteBuffer`) but as unsigned bytes here,
  so the two could keep different versions of a record.
- Column names, nested fields' too, are Avro names (letters of any script, digits and `_`, not
  a digit first): the table's schema is recorded as Avro, and Apache Hudi's parser refuses
  `a-b`, `a.b` or `order date` (it then can neither write nor read the table).
- `_hoodie_is_deleted`, when present, is boolean.
- Hudi's meta columns (`_hoodie_commit_time`, ...) are the writer's to fill in. A batch read
  from a Hudi table (`select *`) carries all five, as strings: they are dropped and
  recomputed, as Apache Hudi's writer does. Any other batch with a column named like one (a
  lone or partial set, another type, another spelling of the name) is refused: the column
  would be dropped without a word, or, spelled in another case, clash with the meta column.
- Every column has a type a Hudi table can store (Avro), e.g. not a column of nulls only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from ..config import WriteConfig
from ..exceptions import (
    ColumnNameError,
    ColumnTypeError,
    DuplicateColumnError,
    MetaColumnError,
    MissingColumnError,
    SchemaError,
)
from ..schema import (
    IS_DELETED,
    META_COLUMNS,
    avro_name_like,
    avro_name_problem,
    to_avro_schema,
)

log = logging.getLogger(__name__)

# Types whose text (Spark's cast to string) is the value's identity, and the same text Apache
# Hudi's key generators produce for them.
KEY_TYPES = (
    T.StringType,
    T.CharType,
    T.VarcharType,
    T.ByteType,
    T.ShortType,
    T.IntegerType,
    T.LongType,
    T.DecimalType,
    T.DateType,
    T.BooleanType,
)
KEY_TYPE_NAMES = "string, tinyint, smallint, int, bigint, decimal, date or boolean"
# Types Apache Hudi and this writer order the same way.
ORDERING_TYPES = (
    T.ByteType,
    T.ShortType,
    T.IntegerType,
    T.LongType,
    T.FloatType,
    T.DoubleType,
    T.DecimalType,
    T.StringType,
    T.CharType,
    T.VarcharType,
    T.DateType,
    T.TimestampType,
    T.TimestampNTZType,
    T.BooleanType,
)
ORDERING_TYPE_NAMES = (
    "tinyint, smallint, int, bigint, float, double, decimal, string, date, timestamp, "
    "timestamp_ntz or boolean"
)


def check_batch(
    table_name: str, config: WriteConfig, schema: T.StructType, with_ordering: bool = True
) -> None:
    """Refuse a batch whose schema cannot be written under `config` (see the module's rules).

    `with_ordering` is false for the delete operation, which needs no precombine column.
    """
    fields = {f.name: f for f in schema.fields}
    _check_meta_columns(table_name, schema)
    _check_unique_names(table_name, schema)
    _check_avro_names(table_name, schema)
    roles = [("record key", "record_key", name) for name in config.record_key_fields]
    # (a TIMESTAMP part's folder is a date made from the value: `keygen.timestamp` checks its
    # type, numbers of any kind as Apache Hudi takes them)
    dated = (
        set(config.partition_fields)
        if config.key_generator == "TIMESTAMP"
        else {
            f for f, t in zip(config.partition_fields, config.partition_types) if t == "TIMESTAMP"
        }
    )
    roles += [("partition", "partition_path", name) for name in config.partition_fields
              if name not in dated]  # fmt: skip
    if config.precombine_field and with_ordering:
        roles.append(("precombine", "precombine_field", config.precombine_field))
    for role, option, name in roles:
        if name not in fields:
            raise MissingColumnError(_missing(table_name, role, option, name, schema))
        dtype = fields[name].dataType
        allowed = ORDERING_TYPES if role == "precombine" else KEY_TYPES
        if not isinstance(dtype, allowed):
            raise ColumnTypeError(_bad_type(table_name, role, name, dtype))
    deleted = fields.get(IS_DELETED)
    if deleted is not None and not isinstance(deleted.dataType, T.BooleanType):
        raise ColumnTypeError(
            f"table '{table_name}': column '{IS_DELETED}' must be boolean (true deletes the "
            f"row's key), got {deleted.dataType.simpleString()}: cast it in the model, e.g. "
            f"cast(... as boolean) as {IS_DELETED}"
        )
    _check_storable(table_name, schema)


def _check_meta_columns(table_name: str, schema: T.StructType) -> None:
    """All five meta columns as a Hudi table's rows carry them, or none (see the module)."""
    named = [f for f in schema.fields if f.name.lower() in META_COLUMNS]
    if not named:
        return
    exact = {f.name for f in named if f.name in META_COLUMNS}
    # A join of Hudi tables carries each meta column once per table: the set counts.
    whole = exact == set(META_COLUMNS) and all(
        f.name in META_COLUMNS and isinstance(f.dataType, T.StringType) for f in named
    )
    if whole:
        log.debug(
            "table '%s': the batch carries Hudi's meta columns (read from a Hudi table); they "
            "are dropped and written anew",
            table_name,
        )
        return
    odd = [f for f in named if f.name not in META_COLUMNS]
    odd = odd or [f for f in named if not isinstance(f.dataType, T.StringType)] or named
    field = odd[0]
    if field.name not in META_COLUMNS:
        why = f"differs from Hudi's meta column '{field.name.lower()}' only in case"
    elif not isinstance(field.dataType, T.StringType):
        why = f"is a Hudi meta column name, but of type {field.dataType.simpleString()}"
    else:
        missing = [c for c in META_COLUMNS if c not in exact]
        why = f"is a Hudi meta column name, without the others ({', '.join(missing)})"
    raise MetaColumnError(
        f"table '{table_name}': column '{field.name}' {why}. The writer fills in Hudi's "
        f"meta columns ({', '.join(META_COLUMNS)}) itself, so this column's values would "
        f"be lost. Rename it in the model, e.g. `{field.name} as "
        f"{field.name.lstrip('_')}`. (Rows selected whole from a Hudi table, select *, "
        "carry all five meta columns; those are dropped and written anew.)",
        column=field.name,
    )


def _check_unique_names(table_name: str, schema: T.StructType) -> None:
    by_folded: dict[str, list[str]] = {}
    for name in schema.names:
        if name not in META_COLUMNS:  # meta columns are dropped and recomputed by the writer
            by_folded.setdefault(name.lower(), []).append(name)
    for spellings in by_folded.values():
        if len(spellings) > 1:
            shown = ", ".join(f"'{s}'" for s in spellings)
            if len(set(spellings)) > 1:
                how = "in spellings that differ only in case"
            else:
                how = "twice" if len(spellings) == 2 else f"{len(spellings)} times"
            raise DuplicateColumnError(
                f"table '{table_name}': the data has column '{spellings[0]}' {how} ({shown}); "
                "column names must be unique ignoring case (Spark and Hive resolve names "
                "without case, so readers could not tell them apart). Rename or drop one in "
                f"the model, e.g. `{spellings[-1]} as {spellings[-1]}_2`"
            )


def _check_avro_names(table_name: str, schema: T.StructType) -> None:
    """Every column and nested field name is an Avro name (`schema.avro_name_problem`)."""
    for path in _field_paths(schema, ()):
        name = path[-1]
        problem = avro_name_problem(name)
        if problem is None:
            continue
        shown = ".".join(path)
        where = f"column '{name}'" if len(path) == 1 else f"field '{shown}' (column '{path[0]}')"
        fix = avro_name_like(name)
        how = (
            f"e.g. `{name}` as {fix}"
            if len(path) == 1
            else f"e.g. rebuild the struct with named_struct('{fix}', ...)"
        )
        raise ColumnNameError(
            f"table '{table_name}': {where} {problem}. A Hudi table's schema is Avro, whose "
            "names take letters, digits and '_' and start with a letter or '_': Apache Hudi "
            f"could neither write nor read the table. Rename it in the model, {how}",
            column=shown,
        )


def _field_paths(dtype: T.DataType, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """The path of every field in `dtype`, nested ones included (through arrays and map
    values, as Avro records nest there too)."""
    if isinstance(dtype, T.StructType):
        for f in dtype.fields:
            yield (*path, f.name)
            yield from _field_paths(f.dataType, (*path, f.name))
    elif isinstance(dtype, T.ArrayType):
        yield from _field_paths(dtype.elementType, path)
    elif isinstance(dtype, T.MapType):
        yield from _field_paths(dtype.valueType, path)


def _missing(table_name: str, role: str, option: str, name: str, schema: T.StructType) -> str:
    text = (
        f"table '{table_name}': the {role} column '{name}' ({option}) is not in the data. "
        f"Columns: {', '.join(schema.names)}. "
    )
    near = [c for c in schema.names if c.lower() == name.lower()]
    if near:
        return text + (
            f"The data has '{near[0]}': names must match exactly, case included; fix "
            f"{option} or rename the column in the model"
        )
    return text + f"Output the column from the model, or fix {option}"


def _bad_type(table_name: str, role: str, name: str, dtype: T.DataType) -> str:
    shown = dtype.simpleString()
    if role == "precombine":
        if isinstance(dtype, T.BinaryType):
            why = (
                "Apache Hudi compares binary values as signed bytes and this writer as unsigned "
                "bytes, so the two could keep different versions of a record"
            )
        else:
            why = "its values have no order to pick the latest version of a record by"
        return (
            f"table '{table_name}': the precombine column '{name}' is {shown}: {why}. The "
            f"precombine column may be {ORDERING_TYPE_NAMES}: cast it in the model, or order "
            "by another column"
        )
    folder = role == "partition"
    uses = "a partition folder is named by" if folder else "a record key is"
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        why = (
            "the text of a floating-point value is not a stable identity (1.0 vs 1, "
            "0.1 + 0.2; widening an int column to double would change every one)"
        )
        fix = f"cast it in the model, e.g. cast({name} as decimal(p, s)), or as bigint"
    elif isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        why = (
            "its text depends on the session time zone here, while Apache Hudi uses the "
            "timestamp's epoch microseconds"
        )
        fix = "cast it in the model, e.g. " + (
            f"to_date({name})" if folder else f"unix_micros({name}) (Apache Hudi's key)"
        )
    elif isinstance(dtype, (T.MapType, T.ArrayType, T.StructType, T.VariantType)):
        kind = dtype.typeName()
        why = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} has no stable text"
        fix = "select the field(s) that identify the row as columns of their own in the model"
    elif isinstance(dtype, T.BinaryType):
        why = "binary values are not text"
        fix = f"cast it in the model, e.g. hex({name}), or cast({name} as string) if UTF-8 text"
    else:
        why = "values of this type have no stable text"
        fix = f"cast it in the model, e.g. cast({name} as string)"
    return (
        f"table '{table_name}': the {role} column '{name}' is {shown}, but {uses} the text of "
        f"the value, and {why}. {role.capitalize()} columns may be {KEY_TYPE_NAMES}: {fix}"
    )


def _check_storable(table_name: str, schema: T.StructType) -> None:
    """Every user column maps to Arrow and Avro, which is what the commit will record."""
    for field in schema.fields:
        if field.name in META_COLUMNS:
            continue
        shown = field.dataType.simpleString()
        hint = (
            f": it is null in every row; give it a type in the model, e.g. "
            f"cast(null as string) as {field.name}"
            if isinstance(field.dataType, T.NullType)
            else ""
        )
        try:
            arrow = to_arrow_schema(T.StructType([field]), timezone="UTC")
            to_avro_schema(arrow, table_name)
        except SchemaError as error:
            raise ColumnTypeError(f"table '{table_name}': {error}{hint}") from error
        except Exception as error:  # pyspark refuses the type's conversion to Arrow
            raise ColumnTypeError(
                f"table '{table_name}': column '{field.name}' has type {shown}, which Hudi "
                f"tables cannot store{hint}"
            ) from error


def missing_key_text(record_key_fields: tuple[str, ...]) -> str:
    """What a row without a record key lacks, and what to do, for the null-key errors.

    Hudi refuses a key only when it is missing entirely: a simple key that is null or empty, or
    a composite key whose every column is (a composite key with some parts present is written
    with Hudi's `__null__` / `__empty__` markers for the others).
    """
    if len(record_key_fields) == 1:
        what = f"a null or empty record key (column '{record_key_fields[0]}')"
    else:
        what = (
            "a null or empty record key (every one of its columns "
            f"{', '.join(record_key_fields)} is null or empty)"
        )
    return f"{what}; nothing was written. Filter such rows out or give them a key in the model"

"""Schema evolution on write: what a batch whose columns differ from the table's may do.

Hudi records a writer schema in every commit; the next reader (ours, hudi-rs, Hudi's) takes
the latest one and reads older files through it, a column a file lacks reading as null. So
evolving a table is only a matter of choosing the next writer schema, and that choice is a
policy (`SchemaChange`), the same four dbt names for `on_schema_change` plus Hudi's own
default:

- `evolve` (Hudi's default writer): new columns are added; a missing column is an error.
- `ignore`: the table keeps its columns; new ones are left out; a missing column is an error.
- `append_new_columns`: new columns are added; missing ones stay and are written as null.
- `sync_all_columns`: the table takes the batch's columns, dropping the missing ones.
- `fail`: any difference is an error listing them.

Whatever the policy, a type may only widen the way Hudi's Avro schema evolution allows
(int -> long -> float -> double); the stored type never narrows, and anything else is an
error naming the column and both types. Errors are raised before anything is written.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pyarrow as pa

from .exceptions import SchemaEvolutionError
from .schema import avro_type_of


class SchemaChange(enum.Enum):
    EVOLVE = "evolve"
    IGNORE = "ignore"
    APPEND_NEW_COLUMNS = "append_new_columns"
    SYNC_ALL_COLUMNS = "sync_all_columns"
    FAIL = "fail"


# Promotions Hudi's Avro schema evolution allows on write, as Avro type names.
_WIDENINGS = frozenset({("int", "long"), ("int", "float"), ("int", "double"),
                        ("long", "float"), ("long", "double"), ("float", "double")})  # fmt: skip


def sql_type(dtype: pa.DataType) -> str:
    """A type as users wrote it in SQL (`bigint`, not `int64`), for error messages."""
    try:
        from pyspark.sql.pandas.types import from_arrow_type

        return from_arrow_type(dtype).simpleString()
    except Exception:  # pragma: no cover - a type Spark has no name for
        return str(dtype)


@dataclass(frozen=True)
class TypeChange:
    column: str
    stored: pa.DataType
    incoming: pa.DataType

    def __str__(self) -> str:
        return f"{self.column} {sql_type(self.stored)} -> {sql_type(self.incoming)}"


@dataclass(frozen=True)
class SchemaDiff:
    """How a batch's columns differ from the table's (user columns only, no meta columns)."""

    added: tuple[pa.Field, ...]
    missing: tuple[pa.Field, ...]
    widened: tuple[TypeChange, ...]  # incoming is wider: the table's type grows
    narrowed: tuple[TypeChange, ...]  # incoming is narrower: its values fit the stored type
    incompatible: tuple[TypeChange, ...]

    @classmethod
    def of(cls, table: pa.Schema, incoming: pa.Schema) -> SchemaDiff:
        added = tuple(f for f in incoming if f.name not in table.names)
        missing = tuple(f for f in table if f.name not in incoming.names)
        widened, narrowed, incompatible = [], [], []
        for stored in table:
            if stored.name not in incoming.names:
                continue
            new = incoming.field(stored.name)
            old_avro, new_avro = avro_type_of(stored), avro_type_of(new)
            if old_avro == new_avro:
                continue
            change = TypeChange(stored.name, stored.type, new.type)
            if (old_avro, new_avro) in _WIDENINGS:
                widened.append(change)
            elif (new_avro, old_avro) in _WIDENINGS:
                narrowed.append(change)
            else:
                incompatible.append(change)
        return cls(added, missing, tuple(widened), tuple(narrowed), tuple(incompatible))

    @property
    def empty(self) -> bool:
        return not (self.added or self.missing or self.widened or self.narrowed
                    or self.incompatible)  # fmt: skip

    def describe(self) -> str:
        parts = []
        if self.added:
            parts.append("new columns " + _fields(self.added))
        if self.missing:
            parts.append("missing columns " + _fields(self.missing))
        changes = (*self.widened, *self.narrowed, *self.incompatible)
        if changes:
            parts.append("type changes " + ", ".join(str(c) for c in changes))
        return "; ".join(parts)


def _fields(fields: tuple[pa.Field, ...]) -> str:
    return ", ".join(f"{f.name} ({sql_type(f.type)})" for f in fields)


def writer_schema(
    table_name: str, table: pa.Schema, incoming: pa.Schema, policy: SchemaChange
) -> pa.Schema:
    """The schema the next commit writes with, or a SchemaEvolutionError if the policy refuses.

    Column order: the table's columns first, in their order, then new ones as they come, so
    a table never reshuffles its columns because a model's SELECT did.
    """
    diff = SchemaDiff.of(table, incoming)
    if diff.incompatible:
        change = diff.incompatible[0]
        raise SchemaEvolutionError(
            f"table '{table_name}': column '{change.column}' changes type from "
            f"{sql_type(change.stored)} to {sql_type(change.incoming)}; only widening "
            "(int -> bigint -> float -> double) is allowed. Cast it in the model, or rebuild "
            "the table with a full refresh"
        )
    if policy is SchemaChange.FAIL and not diff.empty:
        raise SchemaEvolutionError(
            f"table '{table_name}': the data's columns differ from the table's "
            f"({diff.describe()}) and on_schema_change is 'fail'. Change the model back, or "
            "set on_schema_change to 'append_new_columns' or 'sync_all_columns'"
        )
    if diff.missing and policy in (SchemaChange.EVOLVE, SchemaChange.IGNORE):
        raise SchemaEvolutionError(
            f"table '{table_name}': the data lacks column(s) {_fields(diff.missing)} that the "
            "table has; writing would set them to null in every updated row. Add them back to "
            "the model, or set on_schema_change to 'append_new_columns' (keep them, null in "
            "new rows) or 'sync_all_columns' (drop them from the table)"
        )
    widened = {c.column: c.incoming for c in diff.widened}
    fields = [
        pa.field(f.name, widened.get(f.name, f.type), True)
        for f in table
        if f.name in incoming.names or policy is not SchemaChange.SYNC_ALL_COLUMNS
    ]
    if policy is not SchemaChange.IGNORE:
        fields.extend(diff.added)
    return pa.schema(fields)

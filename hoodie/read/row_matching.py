"""A read's filter applied to rows in the read tasks, before they are merged or handed to Spark.

Spark evaluates every pushed filter again on the rows a read returns (`pushFilters` yields
them all back), so what a task does here only has to keep every row Spark would keep: it may
keep more, never fewer. Two things are done with that freedom:

- **The record keys a row must have** (`required_keys`: an equality or IN on the record key,
  see `KeyRule`) narrow a file slice before it is merged: only those keys' rows of the base
  file (row groups whose key statistics rule them out are not decoded) and of the log blocks
  are merged. Merging is per key, so the merged rows of those keys are the same either way.
  A point read of a merge-on-read table merged every row of every slice before.
- **The rows a filter rules out** (`arrow_filter`) are dropped in the task instead of being
  sent to the JVM for Spark to drop: a 1% filter sent every row across before.

What Arrow cannot be trusted to judge as Spark does is left out of the expression (it keeps
every row): comparisons with a value of another type than the column's (Spark casts first),
timestamps (time zones), NaN (Spark orders it above every double and equal to itself; Arrow
compares it false, so float comparisons keep NaN rows), -0.0 (equal to 0.0 in Spark, apart in
Arrow's set lookups), and any branch of an OR holding such a leaf.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from ..schema import RECORD_KEY
from .predicates import AllOf, Among, AnyOf, Compare, KeyIn, NullCheck, Predicate, Prefix

T = TypeVar("T", pa.RecordBatch, pa.Table)


def required_keys(predicate: Predicate) -> frozenset[str] | None:
    """The record keys every row matching `predicate` has one of (after `KeyRule.with_keys`
    added its `KeyIn`s), or None where it does not say."""
    if isinstance(predicate, KeyIn):
        return frozenset(predicate.keys)
    if isinstance(predicate, AllOf):
        found = [keys for part in predicate.parts if (keys := required_keys(part)) is not None]
        return frozenset.intersection(*found) if found else None
    if isinstance(predicate, AnyOf):
        branches = [required_keys(part) for part in predicate.parts]
        if not branches or any(keys is None for keys in branches):
            return None
        return frozenset().union(*[keys for keys in branches if keys is not None])
    return None


def arrow_filter(predicate: Predicate, schema: pa.Schema) -> pc.Expression | None:
    """An Arrow expression true for every row of `schema` that `predicate` may hold for in
    Spark (true for more rows where unsure), or None where it would keep every row."""
    if isinstance(predicate, AllOf):
        parts = [e for part in predicate.parts if (e := arrow_filter(part, schema)) is not None]
        if not parts:
            return None
        result = parts[0]
        for part in parts[1:]:
            result = result & part
        return result
    if isinstance(predicate, AnyOf):
        branches = [arrow_filter(part, schema) for part in predicate.parts]
        known = [b for b in branches if b is not None]
        if not known or len(known) != len(branches):
            return None
        result = known[0]
        for branch in known[1:]:
            result = result | branch
        return result
    if isinstance(predicate, KeyIn):
        if RECORD_KEY not in schema.names or not pa.types.is_string(schema.field(RECORD_KEY).type):
            return None
        return pc.field(RECORD_KEY).isin(pa.array(sorted(predicate.keys), pa.string()))
    column = predicate.column
    if column not in schema.names or schema.get_all_field_indices(column) != [
        schema.get_field_index(column)
    ]:
        return None
    dtype = schema.field(column).type
    field = pc.field(column)
    if isinstance(predicate, NullCheck):
        return field.is_null() if predicate.is_null else field.is_valid()
    if isinstance(predicate, Prefix):
        if not (pa.types.is_string(dtype) or pa.types.is_large_string(dtype)):
            return None
        starts = pc.starts_with(field, pattern=predicate.prefix)
        return ~starts if predicate.negated else starts
    if isinstance(predicate, Among):
        values = [_literal(v, dtype) for v in predicate.values if v is not None]
        if any(v is None for v in values):
            return None
        if predicate.negated and len(values) != len(predicate.values):
            return None  # NOT IN a list holding null: Spark keeps no row; leave it to Spark
        listed = [v.as_py() for v in values if v is not None]
        if pa.types.is_floating(dtype) and 0.0 in listed:
            listed += [0.0, -0.0]  # equal in Spark; Arrow's set lookup tells them apart
        chosen = field.isin(pa.array(listed, dtype))
        return _keeping_nan(~chosen if predicate.negated else chosen, field, dtype)
    if isinstance(predicate, Compare):
        literal = _literal(predicate.value, dtype)
        if literal is None:
            return None
        compared = {
            "=": field == literal,
            "!=": field != literal,
            "<": field < literal,
            "<=": field <= literal,
            ">": field > literal,
            ">=": field >= literal,
        }[predicate.op]
        return _keeping_nan(compared, field, dtype)
    return None


def _keeping_nan(
    expression: pc.Expression, field: pc.Expression, dtype: pa.DataType
) -> pc.Expression:
    """`expression`, also true for NaN in a float column (Spark's NaN compares unlike Arrow's)."""
    if pa.types.is_floating(dtype):
        return expression | pc.is_nan(field)
    return expression


def _literal(value: Any, dtype: pa.DataType) -> pa.Scalar | None:
    """`value` as a scalar of `dtype` where Spark compares it to the column without a cast of
    the column that Arrow would not make alike; None otherwise."""
    try:
        if isinstance(value, bool):
            return pa.scalar(value, dtype) if pa.types.is_boolean(dtype) else None
        if isinstance(value, int):
            if pa.types.is_integer(dtype):
                return pa.scalar(value, dtype)  # (out of range: OverflowError, kept below)
            if pa.types.is_floating(dtype):
                return pa.scalar(float(value), dtype)
            return None
        if isinstance(value, float):
            if pa.types.is_floating(dtype) and not math.isnan(value):
                return pa.scalar(value, dtype)
            return None
        if isinstance(value, str):
            if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
                return pa.scalar(value, dtype)
            return None
        if isinstance(value, datetime.datetime):
            return None  # time zones: Spark's session zone, the column's zone
        if isinstance(value, datetime.date):
            return pa.scalar(value, dtype) if pa.types.is_date(dtype) else None
        if isinstance(value, decimal.Decimal):
            if pa.types.is_decimal(dtype) and value.is_finite():
                scalar = pa.scalar(value, dtype)
                return scalar if scalar.as_py() == value else None  # (rounded: not the value)
            return None
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    return None


def matching_rows(batch: T, predicate: Predicate | None) -> T:
    """The rows of `batch` that `predicate` may hold for (all of them where it cannot tell)."""
    if predicate is None or not batch.num_rows:
        return batch
    expression = arrow_filter(predicate, batch.schema)
    return batch if expression is None else batch.filter(expression)

"""A read's row filter as a small predicate tree, the form data skipping evaluates.

Two kinds of filters reach a read: those Spark pushes into the `hoodie` data source
(`pyspark.sql.datasource.Filter`, a conjunction: Spark pushes no OR into a Python data source)
and those `HoodieTable.read(filters=...)` is given, in the disjunctive normal form hudi-rs,
delta-rs and pyarrow take: a list of `(column, op, value)` tuples is their AND, a list of such
lists the OR of those ANDs. Both become one tree of the nodes below, with every NOT pushed down
to the leaves (`!=`, NOT IN, IS NOT NULL, not starting with), which holds in Spark's semantics:
a comparison with null is never true either way, and Spark orders NaN above every other double
(so `NOT (x > v)` is `x <= v` for every non-null x). What no node expresses (`LIKE '%x'`, an
expression of two columns) is `ANYTHING`: it can match any row, so it never skips a file.

The record key gets a node of its own (`KeyIn`): an equality on `_hoodie_record_key`, or on
the single record key field of a table whose key is that field's text, names the keys a row
must have, which a base file's key range and bloom filter can rule out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)

from ..exceptions import InvalidConfigError
from ..properties import NON_PARTITIONED_KEYGEN, SIMPLE_KEYGEN, TIMESTAMP_KEYGEN
from ..schema import RECORD_KEY, quoted_name

# op -> the op of its negation (Spark's order is total: NaN is the largest double).
NEGATED = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_SPARK_COMPARISONS = {
    EqualTo: "=",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}


@dataclass(frozen=True)
class Compare:
    """`column op value`, op one of = != < <= > >=."""

    column: str
    op: str
    value: Any


@dataclass(frozen=True)
class Among:
    """`column IN values` (or NOT IN)."""

    column: str
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True)
class NullCheck:
    """`column IS NULL` (or IS NOT NULL)."""

    column: str
    is_null: bool


@dataclass(frozen=True)
class Prefix:
    """`column LIKE 'prefix%'` on a string column (or its negation)."""

    column: str
    prefix: str
    negated: bool = False


@dataclass(frozen=True)
class KeyIn:
    """The row's record key is one of `keys` (implied by an equality on the key)."""

    keys: tuple[str, ...]


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Predicate, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Predicate, ...]


Predicate: TypeAlias = Compare | Among | NullCheck | Prefix | KeyIn | AllOf | AnyOf
ANYTHING: Predicate = AllOf(())  # no condition: every row may match


def from_spark(filters: Sequence[Filter]) -> Predicate:
    """The conjunction of Spark's pushed filters."""
    return AllOf(tuple(_spark(item, negated=False) for item in filters))


def _spark(item: Filter, negated: bool) -> Predicate:
    if isinstance(item, Not):
        return _spark(item.child, not negated)
    attribute: tuple[str, ...] = getattr(item, "attribute", ())
    if len(attribute) != 1:
        return ANYTHING  # a nested field: not evaluated
    column = attribute[0]
    if isinstance(item, IsNull):
        return NullCheck(column, not negated)
    if isinstance(item, IsNotNull):
        return NullCheck(column, negated)
    if isinstance(item, EqualNullSafe):
        if item.value is None:
            return NullCheck(column, not negated)
        if negated:  # null, or another value
            return AnyOf((NullCheck(column, True), Compare(column, "!=", item.value)))
        return Compare(column, "=", item.value)
    if isinstance(item, In):
        return Among(column, tuple(item.value), negated)
    if isinstance(item, StringStartsWith):
        return Prefix(column, item.value, negated)
    op = _SPARK_COMPARISONS.get(type(item))
    if op is None:
        return ANYTHING  # StringEndsWith, StringContains, filters Spark adds later
    value: Any = getattr(item, "value", None)
    return Compare(column, NEGATED[op] if negated else op, value)


# -- filters in disjunctive normal form (`HoodieTable.read(filters=...)`) ----------------------

_DNF_OPS = ("=", "==", "!=", "<", "<=", ">", ">=", "in", "not in")


@dataclass(frozen=True)
class RowFilter:
    """Filters given to a read as hudi-rs and delta-rs take them: `[(column, op, value), ...]`
    (AND) or a list of such lists (OR of ANDs); op one of = == != < <= > >= in, not in."""

    terms: tuple[tuple[tuple[str, str, Any], ...], ...]  # OR of ANDs

    @classmethod
    def parse(cls, filters: Iterable[Any], columns: Sequence[str]) -> RowFilter:
        given = list(filters)
        groups = given if given and all(isinstance(g, list) for g in given) else [given]
        terms = []
        for group in groups:
            parsed = []
            for term in group:
                if not (isinstance(term, tuple) and len(term) == 3):
                    raise InvalidConfigError(
                        f"a read filter is a (column, op, value) tuple, got {term!r}"
                    )
                column, op, value = term
                op = str(op).strip().lower()
                if op not in _DNF_OPS:
                    raise InvalidConfigError(
                        f"read filter {term!r}: op must be one of {', '.join(_DNF_OPS)}"
                    )
                if column not in columns:
                    raise InvalidConfigError(
                        f"read filter {term!r}: no column {column!r}; the table's columns are: "
                        f"{', '.join(columns)}"
                    )
                if op in ("in", "not in"):
                    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                        raise InvalidConfigError(
                            f"read filter {term!r}: '{op}' takes a list of values"
                        )
                    value = tuple(value)
                elif value is None:
                    raise InvalidConfigError(
                        f"read filter {term!r}: a comparison with null matches no row "
                        "(SQL's rule); give the rows you want another way"
                    )
                parsed.append((str(column), "=" if op == "==" else op, value))
            terms.append(tuple(parsed))
        return cls(tuple(terms))

    @property
    def predicate(self) -> Predicate:
        branches = []
        for group in self.terms:
            parts: list[Predicate] = []
            for column, op, value in group:
                if op in ("in", "not in"):
                    parts.append(Among(column, value, negated=op == "not in"))
                else:
                    parts.append(Compare(column, op, value))
            branches.append(AllOf(tuple(parts)))
        return branches[0] if len(branches) == 1 else AnyOf(tuple(branches))

    def column(self) -> Column:
        """The same condition as a Spark column (SQL semantics: nulls never match)."""
        branches = []
        for group in self.terms:
            condition: Column | None = None
            for name, op, value in group:
                term = _spark_term(F.col(quoted_name(name)), op, value)
                condition = term if condition is None else condition & term
            branches.append(condition if condition is not None else F.lit(True))
        result = branches[0]
        for branch in branches[1:]:
            result = result | branch
        return result


def _spark_term(col: Column, op: str, value: Any) -> Column:
    if op == "in":
        return col.isin(list(value))
    if op == "not in":
        return ~col.isin(list(value))
    literal = F.lit(value)
    return {
        "=": col == literal,
        "!=": col != literal,
        "<": col < literal,
        "<=": col <= literal,
        ">": col > literal,
        ">=": col >= literal,
    }[op]


# -- the record key --------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyRule:
    """How a row's record key follows from its columns, where a filter can name it: the
    `_hoodie_record_key` column itself, or the one key field of a simple (or non-partitioned)
    key generator, whose key is the field's text. Only a string field given a string, or an
    integer field given an integer, is taken: other types' text is Spark's cast, which Python's
    `str` does not always spell the same, and a value of another type than its column is
    compared by Spark after a cast (`'05' = 5` holds)."""

    key_field: str | None = None  # the field whose text is the key, if there is one
    key_type: type = str  # the Python type of its values (str or int)

    @classmethod
    def of(
        cls, record_key_fields: tuple[str, ...], keygen_class: str | None, schema: pa.Schema
    ) -> KeyRule:
        # (TimestampBasedKeyGenerator's record key is SimpleKeyGenerator's: the field's text)
        simple = keygen_class in (SIMPLE_KEYGEN, NON_PARTITIONED_KEYGEN, TIMESTAMP_KEYGEN)
        if len(record_key_fields) != 1 or not simple or record_key_fields[0] not in schema.names:
            return cls()
        name = record_key_fields[0]
        dtype = schema.field(name).type
        if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
            return cls(name, str)
        if pa.types.is_integer(dtype):
            return cls(name, int)
        return cls()

    def keys(self, leaf: Predicate) -> tuple[str, ...] | None:
        """The record keys a row matching `leaf` must have, if `leaf` names them."""
        if isinstance(leaf, Compare) and leaf.op == "=":
            column, values = leaf.column, (leaf.value,)
        elif isinstance(leaf, Among) and not leaf.negated:
            column, values = leaf.column, leaf.values
        else:
            return None
        if column == RECORD_KEY:
            wanted: type = str
        elif column == self.key_field:
            wanted = self.key_type
        else:
            return None
        keys = []
        for value in values:
            if value is None:
                continue  # equal to nothing
            if type(value) is not wanted:  # (bool is an int subclass: refused too)
                return None
            keys.append(str(value))
        return tuple(keys)

    def with_keys(self, predicate: Predicate) -> Predicate:
        """`predicate` with a `KeyIn` beside each leaf that names record keys."""
        if isinstance(predicate, AllOf | AnyOf):
            parts = tuple(self.with_keys(part) for part in predicate.parts)
            return type(predicate)(parts)
        keys = self.keys(predicate)
        if keys is None:
            return predicate
        return AllOf((predicate, KeyIn(keys)))

"""Partition pruning: deciding from a partition's path alone whether a filter can match it.

A partition path holds the partition columns' values (`2026-11-01`, or `day=2026-11-01` when
hive-style), so a filter on partition columns is evaluated once per partition, and files of
partitions that cannot match are never opened. When in doubt (a value that does not parse, a
path of unexpected depth) the partition is kept: pruning may only ever skip what cannot match.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
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

from ..meta_client import HoodieTableMetaClient
from ..partition_paths import field_texts

_COMPARISONS = {
    GreaterThan: operator.gt,
    GreaterThanOrEqual: operator.ge,
    LessThan: operator.lt,
    LessThanOrEqual: operator.le,
}
# The filters a partition's values decide (`_COMPARISONS`' keys among them).
_SIMPLE = (
    EqualTo, EqualNullSafe, In, IsNull, IsNotNull, StringStartsWith,
    GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual,
)  # fmt: skip


# A string column's value in Hudi's default partition: null or '' (both are written there).
_NULL_OR_EMPTY = object()


class _Unknown(Exception):
    """The filter cannot be decided for this partition: keep it."""


@dataclass
class PartitionMatcher:
    fields: tuple[str, ...]
    types: dict[str, pa.DataType]
    hive_style: bool
    url_encoded: bool
    filters: list[Filter]

    @staticmethod
    def usable(item: Filter, partition_fields: tuple[str, ...]) -> bool:
        inner = item.child if isinstance(item, Not) else item
        attribute: tuple[str, ...] = getattr(inner, "attribute", ())
        return (
            isinstance(inner, _SIMPLE) and len(attribute) == 1 and attribute[0] in partition_fields
        )

    @classmethod
    def for_table(
        cls, meta_client: HoodieTableMetaClient, schema: pa.Schema, filters: list[Filter]
    ) -> PartitionMatcher | None:
        props = meta_client.properties
        if not filters or not props.value_partition_fields:
            return None
        # (a timestamp part's folder is a date made from its column: no filter on that column
        # is decided by the folder; `usable` lets none through, and its text is not read)
        types: dict[str, pa.DataType] = {name: pa.string() for name in props.value_partition_fields}
        types.update({f.name: f.type for f in schema if f.name in types})
        return cls(
            props.partition_fields,
            types,
            props.hive_style_partitioning,
            props.url_encode_partition_path,
            filters,
        )

    def values(self, partition_path: str) -> dict[str, Any]:
        texts = field_texts(partition_path, self.fields, self.hive_style, self.url_encoded)
        if texts is None:
            raise _Unknown
        out: dict[str, Any] = {}
        for name, text in texts.items():
            if name not in self.types:
                continue  # not a value the filters may ask about
            dtype = self.types[name]
            if text is None:
                # Hudi's folder for a null value, and for an empty string: a string column's
                # rows there may hold either.
                text_column = pa.types.is_string(dtype) or pa.types.is_large_string(dtype)
                out[name] = _NULL_OR_EMPTY if text_column else None
                continue
            try:
                out[name] = pa.scalar(text).cast(dtype).as_py()
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                raise _Unknown from error
        return out

    def __call__(self, partition_path: str) -> bool:
        try:
            values = self.values(partition_path)
            return any(
                all(_holds(item, candidate) for item in self.filters)
                for candidate in _candidates(values)
            )
        except _Unknown:
            return True


def _candidates(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The partition's possible values: null and '' for each `_NULL_OR_EMPTY` column."""
    out: list[dict[str, Any]] = [{}]
    for name, value in values.items():
        options = (None, "") if value is _NULL_OR_EMPTY else (value,)
        out = [{**partial, name: option} for partial in out for option in options]
    return out


def _holds(item: Filter, values: dict[str, Any]) -> bool:
    if isinstance(item, Not):
        return not _holds(item.child, values)
    if not isinstance(item, _SIMPLE):  # `usable` lets none other through
        raise _Unknown
    value = values[item.attribute[0]]
    if isinstance(item, IsNull):
        return value is None
    if isinstance(item, IsNotNull):
        return value is not None
    if isinstance(item, EqualNullSafe):
        return value == item.value
    if value is None:
        return False  # SQL: a comparison with null is not true
    if isinstance(item, EqualTo):
        return value == item.value
    if isinstance(item, In):
        return value in item.value
    if isinstance(item, StringStartsWith):
        return isinstance(value, str) and value.startswith(item.value)
    try:
        return _COMPARISONS[type(item)](value, item.value)
    except TypeError as error:
        raise _Unknown from error

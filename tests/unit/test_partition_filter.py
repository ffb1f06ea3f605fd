"""Partition pruning decides from the path alone, and keeps a partition whenever in doubt."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from pyspark.sql.datasource import (
    EqualTo,
    GreaterThan,
    In,
    IsNotNull,
    IsNull,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)

from hoodie.read.partition_filter import PartitionMatcher


def matcher(filters, hive_style=False, fields=("day", "region")):
    types = {"day": pa.date32(), "region": pa.string(), "n": pa.int32()}
    return PartitionMatcher(fields, types, hive_style, False, filters)


def test_equality_and_ranges_on_typed_values():
    keep = matcher([EqualTo(("day",), dt.date(2026, 11, 1))])
    assert keep("2026-11-01/eu") and not keep("2026-11-02/eu")
    later = matcher(
        [
            GreaterThan(("day",), dt.date(2026, 11, 1)),
            LessThanOrEqual(("day",), dt.date(2026, 11, 3)),
        ]
    )
    assert [later(f"2026-11-0{d}/eu") for d in range(1, 5)] == [False, True, True, False]


def test_hive_style_in_not_and_prefix():
    m = matcher(
        [In(("region",), ("eu", "us")), Not(StringStartsWith(("region",), "u"))], hive_style=True
    )
    assert m("day=2026-11-01/region=eu")
    assert not m("day=2026-11-01/region=us")
    assert not m("day=2026-11-01/region=ap")


def test_default_partition_is_null():
    assert matcher([IsNull(("region",))])("2026-11-01/__HIVE_DEFAULT_PARTITION__")
    assert not matcher([EqualTo(("region",), "eu")])("2026-11-01/__HIVE_DEFAULT_PARTITION__")
    n = matcher([IsNotNull(("n",))], fields=("day", "n"))
    assert not n("2026-11-01/__HIVE_DEFAULT_PARTITION__")  # an int is never ''


def test_default_partition_of_a_string_column_may_hold_empty_strings():
    """The writer sends '' to the default partition too: filters matching '' keep it."""
    default = "2026-11-01/__HIVE_DEFAULT_PARTITION__"
    assert matcher([EqualTo(("region",), "")])(default)
    assert matcher([IsNotNull(("region",))])(default)
    assert matcher([Not(EqualTo(("region",), "eu"))])(default)
    assert matcher([Not(IsNull(("region",))), StringStartsWith(("region",), "")])(default)
    assert not matcher([StringStartsWith(("region",), "e")])(default)
    assert not matcher([IsNotNull(("region",)), IsNull(("region",))])(default)


def test_doubtful_partitions_are_kept():
    m = matcher([EqualTo(("day",), dt.date(2026, 11, 1))])
    assert m("not-a-date/eu")  # does not parse as a date
    assert m("2026-11-02")  # unexpected depth


def test_usable_filters_are_on_partition_columns_only():
    fields = ("day", "region")
    assert PartitionMatcher.usable(EqualTo(("day",), 1), fields)
    assert PartitionMatcher.usable(Not(EqualTo(("region",), "x")), fields)
    assert not PartitionMatcher.usable(EqualTo(("amount",), 1), fields)
    assert not PartitionMatcher.usable(EqualTo(("s", "nested"), 1), fields)

"""Seed values as Spark SQL literals: the session connection's bindings."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from dbt.adapters.hoodie.connections import HoodieSessionConnectionWrapper


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (None, "NULL"),  # dbt-spark's own wrapper renders 'None', a four-letter string
        ("Boston", "'Boston'"),
        ("it's", "'it\\'s'"),
        ("C:\\data", "'C:\\\\data'"),
        (3, 3.0),
        (Decimal("1.5"), 1.5),
        (dt.date(2021, 6, 18), "'2021-06-18'"),
        (dt.datetime(2021, 6, 18, 1, 2, 3), "'2021-06-18 01:02:03.000'"),
    ],
)
def test_binding_literal(value, literal):
    assert HoodieSessionConnectionWrapper._fix_binding(value) == literal

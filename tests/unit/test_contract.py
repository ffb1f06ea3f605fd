"""Model contracts on lake tables: which declared constraints pass, and how a refusal reads.

The dbt runs are in tests/dbt/adapter/test_lake_constraints.py; these are the cases dbt's suite
has no fixture for (model-level not_null, custom constraints, several not_null columns).
"""

from __future__ import annotations

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.hoodie.contract import not_null_columns


def column(name, *constraints, **extra):
    return {"name": name, "data_type": "int", "constraints": list(constraints), **extra}


def test_not_null_columns_come_from_columns_and_model_level_constraints_once_each():
    columns = {
        "id": column("id", {"type": "not_null"}),
        "dt": column("dt"),
        "val": column("val", {"type": "not_null"}),
    }
    model_level = [{"type": "not_null", "columns": ["dt", "id"]}]
    assert not_null_columns("m", "cow_upsert", columns, model_level) == ["id", "val", "dt"]
    assert not_null_columns("m", "cow_upsert", {"id": column("id")}, []) == []


def test_a_custom_constraint_is_refused_naming_model_constraint_and_what_to_do():
    columns = {"id": column("id", {"type": "not_null"})}
    custom = [{"type": "custom", "expression": "distkey (id)", "columns": ["id"]}]
    with pytest.raises(CompilationError) as refused:
        not_null_columns("orders", "mor_upsert", columns, custom)
    message = str(refused.value)
    assert "Model 'orders' (materialized='mor_upsert')" in message
    assert "custom 'distkey (id)' on column id" in message
    assert "for custom, a data test" in message


def test_a_named_check_is_refused_even_beside_an_enforced_not_null():
    columns = {
        "amount": column(
            "amount",
            {"type": "not_null"},
            {"type": "check", "name": "positive", "expression": "amount > 0"},
        )
    }
    described = r"check 'amount > 0' named 'positive' on column amount"
    with pytest.raises(CompilationError, match=described):
        not_null_columns("orders", "cow_upsert", columns, [])

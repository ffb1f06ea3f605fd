"""The adapter talks to the core through `hoodie`'s public API, and maps its errors in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

import hoodie
from dbt.adapters.hoodie.errors import dbt_error, dbt_errors
from hoodie.exceptions import (
    CommitError,
    InvalidConfigError,
    SchemaEvolutionError,
    TableIdentityError,
)

ADAPTER = Path(__file__).resolve().parents[2] / "dbt" / "adapters" / "hoodie"


def _core_imports(path: Path) -> list[str]:
    """Every module of the core a file imports, as written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "hoodie":
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "hoodie"]
    return found


@pytest.mark.parametrize("path", sorted(ADAPTER.glob("*.py")), ids=lambda p: p.name)
def test_the_adapter_imports_only_the_public_api(path):
    deeper = [module for module in _core_imports(path) if module != "hoodie"]
    assert deeper == [], f"{path.name} imports {deeper}; import from `hoodie` (its __all__)"


def test_the_public_api_names_what_it_exports():
    missing = [name for name in hoodie.__all__ if not hasattr(hoodie, name)]
    assert missing == []


def test_config_errors_are_compilation_errors_naming_the_resource():
    error = dbt_error("Model", "orders", InvalidConfigError("option 'x' is unknown"))
    assert isinstance(error, CompilationError)
    assert "Model 'orders': option 'x' is unknown" in str(error)
    refused = dbt_error("Snapshot", "history", SchemaEvolutionError("column 'a' dropped"))
    assert isinstance(refused, CompilationError) and "Snapshot 'history'" in str(refused)


def test_other_errors_are_runtime_errors():
    error = dbt_error("Model", "orders", CommitError("write 1 failed"))
    assert isinstance(error, DbtRuntimeError) and not isinstance(error, CompilationError)
    assert "Model 'orders': write 1 failed" in str(error)


def test_a_table_identity_change_says_how_dbt_rebuilds_the_table():
    changed_type = TableIdentityError(
        "table 't' was created with table_type=MERGE_ON_READ",
        setting="table_type",
        stored="MERGE_ON_READ",
        wanted="COPY_ON_WRITE",
    )
    text = str(dbt_error("Model", "orders", changed_type))
    assert "keep materialized='mor_upsert'" in text and "--full-refresh" in text
    changed_key = TableIdentityError("...", setting="record_key", stored=("a",), wanted=("b",))
    text = str(dbt_error("Model", "orders", changed_key))
    assert "run the model once with --full-refresh" in text and "mor_upsert" not in text


def test_errors_outside_the_core_pass_through():
    with pytest.raises(ZeroDivisionError), dbt_errors("Model", "orders"):
        raise ZeroDivisionError
    with (
        pytest.raises(DbtRuntimeError, match="Model 'orders': failed"),
        dbt_errors("Model", "orders"),
    ):
        raise CommitError("failed")


def test_the_adapter_declares_the_model_configs_it_reads():
    from dbt.adapters.hoodie.impl import HoodieAdapter
    from dbt.adapters.hoodie.model_config import ALIASES

    declared = set(HoodieAdapter.AdapterSpecificConfigs.__dataclass_fields__)
    read = set(ALIASES) | {"hive_style_partitioning", "compaction", "compaction_delta_commits"}
    assert read <= declared, read - declared


def test_a_snapshot_config_error_names_the_snapshot():
    from dbt.adapters.hoodie.snapshot import snapshot_settings

    columns = {"dbt_scd_id": "dbt_scd_id", "dbt_valid_to": "dbt_valid_to"}
    with pytest.raises(
        CompilationError, match=r"Snapshot 'history': config 'options' must be a map"
    ):
        snapshot_settings(
            "history", {"options": "x"}, columns, schema="s", alias="history", warehouse_dir="/w"
        )

"""The adapter talks to the core through `hoodie`'s public API (and `hoodie.integration`'s
plumbing), and maps its errors in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

import hoodie
import hoodie.exceptions
import hoodie.integration
from dbt.adapters.hoodie.errors import UnnamedError, dbt_error, dbt_errors
from hoodie.exceptions import (
    CommitError,
    DuplicateRecordKeyError,
    HoodieError,
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
    deeper = [m for m in _core_imports(path) if m not in ("hoodie", "hoodie.integration")]
    assert deeper == [], f"{path.name} imports {deeper}; import from `hoodie` (its __all__)"


def test_the_public_api_names_what_it_exports():
    for module in (hoodie, hoodie.integration):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], module.__name__


def test_the_public_api_exports_every_error_and_the_table_properties():
    errors = {
        name
        for name, value in vars(hoodie.exceptions).items()
        if isinstance(value, type) and issubclass(value, HoodieError)
    }
    assert errors - set(hoodie.__all__) == set()
    assert "TableProperties" in hoodie.__all__ and "HoodieTable" in hoodie.__all__


def test_the_adapters_plumbing_is_not_in_the_public_api():
    assert set(hoodie.__all__) & set(hoodie.integration.__all__) == set()
    for name in ("PUSHDOWN_OPTION", "ship_core", "check_batch", "register_data_source"):
        assert name not in hoodie.__all__ and name in hoodie.integration.__all__


def _catches_core_errors_and_raises(path: Path) -> list[int]:
    """Lines of `except` clauses naming a core error class whose body raises: error mapping."""
    core = set(hoodie.__all__)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ExceptHandler) or node.type is None:
            continue
        types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        names = {t.id for t in types if isinstance(t, ast.Name)}
        if names & core and any(isinstance(n, ast.Raise) for b in node.body for n in ast.walk(b)):
            found.append(node.lineno)
    return found


@pytest.mark.parametrize("path", sorted(ADAPTER.glob("*.py")), ids=lambda p: p.name)
def test_core_errors_are_mapped_in_errors_py_only(path):
    if path.name != "errors.py":
        assert _catches_core_errors_and_raises(path) == [], "map them with errors.dbt_errors"


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


def test_a_resources_advice_replaces_the_cores_message_for_its_class():
    advice = {DuplicateRecordKeyError: lambda error: f"one key twice ({error})"}
    with pytest.raises(DbtRuntimeError) as raised, dbt_errors("Snapshot", "h", advice):
        raise DuplicateRecordKeyError("key 1")
    assert raised.value.msg == "Snapshot 'h': one key twice (key 1) [DuplicateRecordKeyError]"
    with pytest.raises(CompilationError, match="Snapshot 'h': option 'x' is unknown"):
        with dbt_errors("Snapshot", "h", advice):
            raise InvalidConfigError("option 'x' is unknown")


def test_an_adapter_error_raised_without_the_resource_gets_its_name():
    with pytest.raises(CompilationError) as raised, dbt_errors("Snapshot", "history"):
        raise UnnamedError("column 'dbt_valid_to' is missing")
    assert raised.value.msg == (
        "Snapshot 'history': column 'dbt_valid_to' is missing [UnnamedError]"
    )
    assert not isinstance(raised.value, UnnamedError)


def test_a_model_is_one_object_made_from_dbts_node():
    from dbt.adapters.hoodie.model_config import LakeModel

    class Relation:
        schema, identifier = "analytics", "orders_v2"

    node = {
        "name": "orders",
        "resource_type": "model",
        "config": {"record_key": "id", "materialized": "cow_upsert"},
        "description": "Orders",
        "columns": {"id": {"name": "id", "description": "the key"}},
    }
    model = LakeModel.of(node, Relation())
    assert (model.name, model.resource, model.description) == ("orders", "Model", "Orders")
    assert model.config == node["config"] and model.columns == node["columns"]
    settings = model.settings("COPY_ON_WRITE", "/warehouse")
    assert settings.base_uri == "/warehouse/analytics.db/orders_v2"
    assert settings.write_config.table_name == "orders_v2"
    assert settings.write_config.record_key_fields == ("id",)
    snapshot = LakeModel.of({**node, "resource_type": "snapshot"}, Relation())
    assert snapshot.resource == "Snapshot"

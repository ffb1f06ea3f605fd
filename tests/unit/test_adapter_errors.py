"""Every error a dbt user can meet ends with the name of its class, in brackets, and that class
has an entry on docs/errors.md: dbt shows only the message, so the class name in it is how a
user finds what happened and what to do."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.hoodie import error_reference, errors
from dbt.adapters.hoodie.credentials import HoodieCredentials
from dbt.adapters.hoodie.errors import (
    BY_NAME,
    ModelConfigError,
    ProfileError,
    UnnamedError,
    dbt_error,
    dbt_errors,
)
from dbt.adapters.hoodie.model_config import model_settings
from hoodie import NullRecordKeyError, TableIdentityError

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "dbt" / "adapters" / "hoodie"
MACROS = ROOT / "macros"
PAGE = (ROOT / "docs" / "errors.md").read_text()
TAG = re.compile(r" \[([A-Za-z]+)\]$")

# Raises of dbt's own classes the adapter keeps, each for a reason: the two that pass on a
# message already tagged (a core error's, an unnamed error's), and Spark's SQL errors, which
# are Spark's words and no class of ours.
UNTAGGED_RAISES = {
    ("errors.py", "CompilationError"): 1,  # dbt_errors: an UnnamedError's message, named
    ("connections.py", "DbtRuntimeError"): 1,  # HoodieCursor: Spark's AnalysisException
}


def _documented(name: str) -> bool:
    return f"### `{name}`" in PAGE


def _tag(message: str) -> str:
    found = TAG.search(message)
    assert found, f"no [ErrorClass] at the end of: {message!r}"
    return found.group(1)


def test_every_raise_of_the_adapter_is_of_a_documented_class_of_its_own():
    raised: dict[tuple[str, str], int] = {}
    for path in sorted(ADAPTER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name in ("CompilationError", "DbtRuntimeError"):
                    key = (path.name, name)
                    raised[key] = raised.get(key, 0) + 1
                elif name.endswith("Error") and name[0].isupper():
                    cls = getattr(errors, name, None)
                    if cls is not None:  # (else a core class, or Python's own)
                        assert _documented(name), f"{path.name} raises {name}, not on errors.md"
    assert raised == UNTAGGED_RAISES


def test_macros_raise_through_the_adapter_with_a_documented_class():
    macros = "\n".join(p.read_text() for p in sorted(MACROS.rglob("*.sql")))
    assert "raise_compiler_error" not in macros
    named = re.findall(r"adapter\.hoodie_raise\('([A-Za-z]+)'", macros)
    assert len(named) >= 3
    for name in named:
        assert name in BY_NAME and _documented(name), name


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_class_a_macro_names_is_raised_with_its_tag(name):
    with pytest.raises(BY_NAME[name]) as raised:
        raise BY_NAME[name]("Model 'm': what went wrong")
    assert _tag(raised.value.msg) == name


def test_every_adapter_error_class_tags_its_message_and_is_documented():
    for cls in error_reference.adapter_errors():
        error = cls("something")
        assert isinstance(error, (CompilationError, DbtRuntimeError)), cls
        assert _tag(error.msg) == cls.__name__
        assert _documented(cls.__name__)


def test_a_core_error_in_dbt_ends_with_its_class():
    shown = dbt_error("Model", "orders", NullRecordKeyError("record key 'id' is null in 3 rows"))
    assert isinstance(shown, DbtRuntimeError)
    assert str(shown.msg).startswith("Model 'orders': record key 'id' is null")
    assert _tag(shown.msg) == "NullRecordKeyError" and _documented("NullRecordKeyError")
    # after the rebuild hint, which belongs to the message
    identity = TableIdentityError("the table's record key is 'id'", "record_key", "id", "key")
    shown = dbt_error("Model", "orders", identity)
    assert "--full-refresh" in shown.msg and _tag(shown.msg) == "TableIdentityError"


def test_an_unnamed_error_gets_its_resource_and_keeps_its_class():
    class Unnamed(UnnamedError):
        """(a test's)"""

    with pytest.raises(CompilationError) as raised, dbt_errors("Snapshot", "history"):
        raise Unnamed("column 'dbt_scd_id' is missing")
    assert raised.value.msg == "Snapshot 'history': column 'dbt_scd_id' is missing [Unnamed]"


def test_config_and_profile_errors_say_their_class():
    with pytest.raises(ModelConfigError) as raised:
        model_settings("orders", {"materialized": "cow_upsert"}, table_type="COPY_ON_WRITE",
                       schema="s", alias="orders", warehouse_dir="/tmp/lake")  # fmt: skip
    assert "needs a record key" in raised.value.msg and _tag(raised.value.msg) == "ModelConfigError"
    with pytest.raises(ProfileError) as profile:
        HoodieCredentials.from_dict({"schema": "s", "master": "localhost"})
    assert _tag(profile.value.msg) == "ProfileError"

"""The error reference, `docs/errors.md`, generated from the error classes' docstrings.

Every class the core raises on purpose (`hoodie.HoodieError` and its subclasses, wherever in
`hoodie` they are declared) and the adapter's own error classes, each with its docstring,
which says what happened and what to do, so that the site lists every error a user can meet
and cannot disagree with the code. It lives in the adapter because it also says how dbt
reports each core error, which only the adapter knows (`errors.dbt_error`); the core must not
import dbt.

Regenerate it after changing an error class (a unit test fails while it is stale)::

    python -m dbt.adapters.hoodie.error_reference > docs/errors.md
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterator

import hoodie
from hoodie import HoodieError

from . import errors

COMMAND = "python -m dbt.adapters.hoodie.error_reference > docs/errors.md"
ADAPTER_PACKAGE = "dbt.adapters.hoodie"

_INTRO = f"""\
# Errors

Every error dbt-hoodie raises on purpose, with what to do about it. Generated from the error
classes' docstrings (do not edit by hand: `{COMMAND}`).

In `dbt run` an error shows as dbt's *Compilation Error* or *Runtime Error*, its message starting
with the resource (`Model 'orders': ...`); the message itself names the table, file, option,
column or instant, and says what to change. A compilation error comes before anything was
written. Spark's own tracebacks for a failure in Spark's work are in dbt's debug log
(`logs/dbt.log`, or the console with `--debug`). In Python the core's classes are importable
from `hoodie` (`from hoodie import HoodieError`); catch `HoodieError` for all of them.
For problems that are no error of ours (slow start-up, Spark's warnings, the metastore), see
[Troubleshooting](troubleshooting.md).
"""


def _import_all(package: str) -> None:
    """Import every module of `package`, so that every error class it declares exists."""
    root = importlib.import_module(package)
    for module in pkgutil.walk_packages(root.__path__, f"{package}."):
        importlib.import_module(module.name)


def _public(cls: type) -> bool:
    return not cls.__name__.startswith("_")


def _place(cls: type) -> tuple[int, str, int]:
    """Source order: hoodie.exceptions first, then by module and line."""
    line = inspect.getsourcelines(cls)[1]
    return (cls.__module__ != "hoodie.exceptions", cls.__module__, line)


def _tree(cls: type, prefix: str) -> Iterator[tuple[int, type]]:
    """`cls`'s subclasses declared under `prefix`, depth first, in source order, with depth."""

    def walk(parent: type, depth: int) -> Iterator[tuple[int, type]]:
        children = [
            c for c in parent.__subclasses__() if c.__module__.startswith(prefix) and _public(c)
        ]
        for child in sorted(children, key=_place):
            yield depth, child
            yield from walk(child, depth + 1)

    yield 0, cls
    yield from walk(cls, 1)


def core_errors() -> list[tuple[int, type]]:
    """Every public `HoodieError` class of the core, with its depth in the hierarchy."""
    _import_all(hoodie.__name__)
    return list(_tree(HoodieError, "hoodie."))


def adapter_errors() -> list[type]:
    """The adapter's own exception classes, in source order."""
    _import_all(ADAPTER_PACKAGE)
    found: dict[str, type] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith(ADAPTER_PACKAGE) or module is None:
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, BaseException)
                and cls.__module__ == name
                and _public(cls)
                and not issubclass(cls, HoodieError)
            ):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return sorted(found.values(), key=_place)


def _docstring(cls: type) -> str:
    doc = cls.__dict__.get("__doc__")
    if not doc or not doc.strip():
        raise ValueError(f"{cls.__module__}.{cls.__name__} has no docstring of its own")
    return inspect.cleandoc(doc)


def _in_dbt(cls: type[HoodieError]) -> str:
    """How dbt reports it: what `errors.dbt_error` turns an instance into."""
    shown = errors.dbt_error("Model", "m", cls("message"))
    return "Compilation Error" if isinstance(shown, errors.CompilationError) else "Runtime Error"


def _base(cls: type) -> str:
    base = cls.__bases__[0]
    return f"`{base.__name__}`"


def render() -> str:
    """The whole reference, as `docs/errors.md` holds it."""
    core = core_errors()
    adapter = adapter_errors()
    lines = [_INTRO, "## The core's errors", ""]
    lines.append("The hierarchy (a handler of a class also catches the classes indented under it):")
    lines.append("")
    for depth, cls in core:
        anchor = cls.__name__.lower()
        lines.append(f"{'    ' * depth}- [`{cls.__name__}`](#{anchor})")
    lines.append("")
    for _, cls in core:
        lines.append(f"### `{cls.__name__}`")
        lines.append("")
        lines.append(f"`{cls.__module__}` · subclass of {_base(cls)} · in dbt: {_in_dbt(cls)}")
        lines.append("")
        lines.append(_docstring(cls))
        lines.append("")
    lines.append("## The adapter's errors")
    lines.append("")
    lines.append(
        "Raised by the dbt adapter itself, as dbt's own error classes; most of the adapter's "
        "refusals (an unknown config key, a strategy or `file_format` a lake model does not "
        "take) are plain compilation errors whose message says what to write instead "
        "([Model configs](configs.md))."
    )
    lines.append("")
    for cls in adapter:
        lines.append(f"### `{cls.__name__}`")
        lines.append("")
        lines.append(f"`{cls.__module__}` · subclass of {_base(cls)}")
        lines.append("")
        lines.append(_docstring(cls))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()

"""The option reference, `docs/options.md`, generated from the declarations of every domain.

Regenerate it after changing a declaration (a unit test fails while it is stale)::

    python -m hoodie.options.reference > docs/options.md
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from . import read, storage, table, write
from .property import ConfigProperty, choice_values, show_default

COMMAND = "python -m hoodie.options.reference > docs/options.md"

_DOMAINS = (
    (
        "Write options",
        "What a write takes: a dbt model's `options`, `WriteConfig.build(options=...)`. An "
        "unknown key is refused, naming the closest known one (\"Did you mean ...?\"); one "
        "setting given under two of its keys must have one value. Declared in "
        "`hoodie/options/write.py`.",
        write.OPTIONS,
    ),
    (
        "Read options",
        "What a read takes: `spark.read.format(\"hoodie\").option(...)`, `HoodieTable.read`. "
        "An unknown key is refused, listing these. Declared in `hoodie/options/read.py`.",
        read.READ_OPTIONS,
    ),
    (
        "Table properties",
        "What `.hoodie/hoodie.properties` records, as Apache Hudi names it; the default is what "
        "a table dbt-hoodie creates gets. Keys Apache Hudi wrote that are not listed are kept "
        "as stored. Declared in `hoodie/options/table.py`.",
        table.TABLE_PROPERTIES,
    ),
    (
        "Storage options",
        "How the core reaches a table's object store: a dbt profile's `storage_options`, or "
        "`hoodie.storage.<name>` read options. These are the keyword arguments of the store's "
        "pyarrow file system (`S3FileSystem`, `GcsFileSystem`, `AzureFileSystem`); listed are "
        "those dbt-hoodie reads itself, and any other is passed to pyarrow, which refuses one "
        "it does not know. Declared in `hoodie/options/storage.py`.",
        storage.STORAGE_OPTIONS,
    ),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _keys(prop: ConfigProperty) -> str:
    names = [f"`{prop.key}`"]
    names += [f"`{a.key}` (deprecated)" if a.deprecated else f"`{a.key}`" for a in prop.aliases]
    return " / ".join(names)


def _values(prop: ConfigProperty) -> str:
    return ", ".join(f"`{value}`" for value in choice_values(prop.choices)) if prop.choices else ""


def _meaning(prop: ConfigProperty) -> str:
    return f"{prop.doc} (a credential: never stored)" if prop.secret else prop.doc


def _table(declarations: Iterable[ConfigProperty]) -> list[str]:
    lines = ["| option | default | values | meaning |", "| --- | --- | --- | --- |"]
    for prop in declarations:
        cells = (_keys(prop), show_default(prop.default), _values(prop), _meaning(prop))
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return lines


def render() -> str:
    """The whole reference, as `docs/options.md` holds it."""
    lines = [
        "# Options",
        "",
        "Every option dbt-hoodie knows, by domain, generated from the declarations in",
        f"`hoodie/options/` (do not edit by hand: `{COMMAND}`).",
        "Keys after the first are other names of the same option; a deprecated one still",
        "works. A value of a fixed set is accepted in any case, and taken as listed.",
    ]
    for title, intro, declarations in _DOMAINS:
        lines += ["", f"## {title}", "", intro, "", *_table(declarations)]
    return "\n".join(lines) + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()

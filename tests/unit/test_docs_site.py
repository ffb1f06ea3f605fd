"""The documentation site (mkdocs.yml, docs/): generated pages current, every page of the nav
present, every config a lake model takes documented, and the README short. `make docs` builds
the site itself (strict: a warning fails it)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from dbt.adapters.hoodie import config_keys, error_reference

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _nav_pages(entries: object) -> list[str]:
    """Every page file a mkdocs nav names (nested sections included)."""
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [page for entry in entries for page in _nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in _nav_pages(value)]
    return []


def test_the_error_reference_is_generated_from_the_error_classes():
    assert (DOCS / "errors.md").read_text() == error_reference.render(), (
        f"docs/errors.md is stale: regenerate it with `{error_reference.COMMAND}`"
    )


def test_the_error_reference_names_every_error_class():
    page = (DOCS / "errors.md").read_text()
    classes = [cls for _, cls in error_reference.core_errors()] + error_reference.adapter_errors()
    names = {cls.__name__ for cls in classes}
    # the core's public errors, the metadata table's and the checkpoints' included
    assert {"HoodieError", "LockLostError", "DamagedMetadataTableError"} <= names
    assert {"CheckpointConflictError", "MissingSnapshotColumn", "UnnamedError"} <= names
    for name in names:
        assert f"### `{name}`" in page, name


def test_every_page_of_the_nav_exists():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = _nav_pages(config["nav"])
    assert "options.md" in pages and "errors.md" in pages
    missing = [page for page in pages if not (DOCS / page).is_file()]
    assert not missing, f"mkdocs.yml's nav names pages docs/ lacks: {missing}"


def test_the_model_configs_page_names_every_config_a_lake_model_takes():
    """Every key config_keys honours, refuses or warns about is on docs/configs.md, so a key
    added there cannot be left undocumented."""
    page = (DOCS / "configs.md").read_text()
    documented = set(re.findall(r"`([A-Za-z_][\w-]*)`", page))
    keys = (
        config_keys.HONOURED
        | config_keys.MICROBATCH_KEYS
        | set(config_keys.RULES)
        | {key for key in config_keys.DBT_HANDLED if not key.startswith("__")}
    )
    keys -= {"pre-hook", "post-hook"}  # dbt's other spelling of pre_hook / post_hook
    assert not keys - documented, f"docs/configs.md lacks {sorted(keys - documented)}"


def test_the_readme_stays_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size < 10_000, f"README.md is {size} bytes: the details belong on the site (docs/)"

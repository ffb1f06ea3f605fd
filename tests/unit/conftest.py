"""Helpers for the unit tests: real Apache Hudi tables unzipped into a test's tmp_path."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

FIXTURES = Path(
    os.environ.get("HOODIE_SAMPLE_TABLES", "/work/shared/fixtures/hudi-rs-sample-tables")
)


def unzip_table(relative: str, dest: Path) -> Path:
    """Unzip `<FIXTURES>/<relative>.zip` (without `__MACOSX`) into dest; return the table root."""
    archive = FIXTURES / f"{relative}.zip"
    with zipfile.ZipFile(archive) as zf:
        members = [m for m in zf.namelist() if not m.startswith("__MACOSX")]
        zf.extractall(dest, members)
    roots = {m.split("/", 1)[0] for m in members}
    assert len(roots) == 1, f"{archive} should hold one table folder, found {roots}"
    return dest / roots.pop()


@pytest.fixture
def sample_table(tmp_path):
    """Factory: `sample_table("sample_table/cow/v6_simplekeygen_nonhivestyle")` -> table root."""

    def _unzip(relative: str) -> Path:
        return unzip_table(relative, tmp_path / relative.replace("/", "_"))

    return _unzip

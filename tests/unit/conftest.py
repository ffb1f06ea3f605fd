"""Helpers for the unit tests: real Apache Hudi tables unzipped into a test's tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from sample_tables import ROOT, unzip

FIXTURES = ROOT


def unzip_table(relative: str, dest: Path) -> Path:
    """Unzip `<FIXTURES>/<relative>.zip` into dest; return the table root."""
    return unzip(FIXTURES / f"{relative}.zip", dest)


@pytest.fixture
def sample_table(tmp_path):
    """Factory: `sample_table("sample_table/cow/v6_simplekeygen_nonhivestyle")` -> table root."""

    def _unzip(relative: str) -> Path:
        return unzip_table(relative, tmp_path / relative.replace("/", "_"))

    return _unzip

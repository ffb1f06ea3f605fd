"""Shipping the core to a cluster's Python workers, so they need no dbt-hoodie install.

Spark runs the core's tasks (file reads and writes, tagging) and the `hoodie` source's
planning in Python workers: on a cluster, on other machines, with that machine's Python.
`ship_core` puts the core's own code on those workers' path as one zip, through
`SparkSession.addArtifacts(..., pyfile=True)`, which classic sessions and Spark Connect
sessions both have (no SparkContext needed). The core's dependencies (pyarrow, fastavro,
obstore, ...) hold native code and are not shipped: the workers' Python must have them.

The zip is built once per process from the installed packages, deterministically, and named
by a digest of its contents: Spark refuses a second artifact of one name with other bytes,
and a new version of the core gets a new name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

# The packages the workers import: the core, and the module that registers its data source.
PACKAGES = ("hoodie", "pyspark_hoodie")
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed entry times: the same code gives the same bytes


def _package_dirs() -> list[Path]:
    dirs = [Path(__file__).resolve().parent]  # hoodie itself
    spec = importlib.util.find_spec("pyspark_hoodie")
    if spec is not None and spec.submodule_search_locations:
        dirs.append(Path(next(iter(spec.submodule_search_locations))))
    return dirs


@lru_cache(maxsize=1)
def core_zip() -> str:
    """The path of a zip of the core's packages (Python sources only)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in _package_dirs():
            for source in sorted(package.rglob("*.py")):
                name = f"{package.name}/{source.relative_to(package).as_posix()}"
                archive.writestr(zipfile.ZipInfo(name, _EPOCH), source.read_bytes())
    data = buffer.getvalue()
    folder = Path(tempfile.gettempdir()) / "dbt-hoodie"
    folder.mkdir(exist_ok=True)
    path = folder / f"hoodie-core-{hashlib.sha256(data).hexdigest()[:16]}.zip"
    if not path.exists():
        staged = path.with_name(f".{path.name}.{os.getpid()}")
        staged.write_bytes(data)
        staged.replace(path)  # whole or absent, for other processes building the same zip
    return str(path)


def ship_core(spark: Any) -> str:
    """Make the core importable in the Python workers of `spark`'s cluster; the zip's path.
    Safe to call again: a session adds an artifact it already has once."""
    path = core_zip()
    spark.addArtifacts(path, pyfile=True)
    return path

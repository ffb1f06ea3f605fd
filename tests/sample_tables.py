"""The Apache Hudi sample tables the tests read, and unzipping one for a test.

They live in the project's `shared/` folder beside the checkout (`../shared/fixtures/...`);
`HOODIE_SAMPLE_TABLES` points elsewhere when needed.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

_RELATIVE = Path("fixtures") / "hudi-rs-sample-tables"


def _root() -> Path:
    if os.environ.get("HOODIE_SAMPLE_TABLES"):
        return Path(os.environ["HOODIE_SAMPLE_TABLES"])
    checkout = Path(__file__).resolve().parents[1]
    candidates = [checkout.parent / "shared" / _RELATIVE, Path("/work/shared") / _RELATIVE]
    return next((c for c in candidates if c.is_dir()), candidates[0])


ROOT = _root()


def unzip(archive: Path, dest: Path) -> Path:
    """Unzip a sample table (without `__MACOSX`) into `dest`; return the table's folder."""
    with zipfile.ZipFile(archive) as zf:
        members = [m for m in zf.namelist() if not m.startswith("__MACOSX")]
        zf.extractall(dest, members)
    roots = {m.split("/", 1)[0] for m in members}
    assert len(roots) == 1, f"{archive} should hold one table folder, found {roots}"
    return dest / roots.pop()

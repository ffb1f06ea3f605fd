"""The built wheel is a working adapter, and PySpark finds the data source on its own."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
READER = Path(__file__).with_name("read_without_registration.py")

MODEL = """\
{{ config(materialized='cow_upsert', record_key='id', partition_path='part') }}
select id, concat('v', {{ var('batch') }}) as v, cast(id % 2 as string) as part
from range(0, {{ 2 + var('batch') }}) as r
"""


def _sh(*args: str, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(args), capture_output=True, text=True, timeout=900, **kwargs)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _env(python: str) -> dict[str, str]:
    env = dict(os.environ, PYSPARK_PYTHON=python)
    if python != sys.executable:
        # The clean venv imports its installed wheel, never a checkout put on PYTHONPATH.
        env.pop("PYTHONPATH", None)
    return env


def _count_without_registration(python: str, base: Path) -> int:
    proc = _sh(python, str(READER), str(base), env=_env(python))
    return int(proc.stdout.split("ROWS", 1)[1].split()[0])


def test_wheel_in_a_clean_venv(dbt_project, tmp_path):
    dist, venv = tmp_path / "dist", tmp_path / "venv"
    _sh(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist),
        str(ROOT))  # fmt: skip
    wheel = next(dist.glob("dbt_hoodie-*.whl"))
    # PEP 561's marker (users' type checkers read the core's annotations) and the license.
    shipped = zipfile.ZipFile(wheel).namelist()
    assert "hoodie/py.typed" in shipped
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in shipped), shipped
    _sh(sys.executable, "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    _sh(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel))
    # The dependencies come from this environment's site-packages (a plain path entry, so the
    # editable install's .pth there, which would put the checkout on sys.path, is not run):
    # installing pyspark and dbt afresh took minutes of CI, and `make test` itself checks that
    # the declared dependencies install.
    site_dir = _sh(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (Path(site_dir.stdout.strip()) / "_test_dependencies.pth").write_text("\n".join(ours) + "\n")
    # The installed package, not this checkout, is what the venv imports.
    where = _sh(python, "-c", "import hoodie, dbt.include.hoodie as i, dbt.adapters.hoodie as a; "
                "print(hoodie.__file__, i.PACKAGE_PATH, a.__file__)", cwd=tmp_path,
                env=_env(python)).stdout  # fmt: skip
    assert str(venv) in where and str(ROOT) not in where
    include, adapter = Path(where.split()[1]), Path(where.split()[2]).parent
    assert (include / "macros" / "materializations" / "cow_upsert.sql").is_file()
    assert (adapter / "spark_log.properties").is_file()  # the JVM's log configuration

    dbt_project.write("models/numbers.sql", MODEL)
    report = dbt_project.run(
        [["run", "--vars", "{batch: 1}"], ["run", "--vars", "{batch: 2}"]],
        tables=["numbers"],
        python=python,
    )
    assert [c["success"] for c in report["commands"]] == [True, True], report["commands"]
    rows = sorted((r["id"], r["v"]) for r in report["tables"]["numbers"]["rows"])
    assert rows == [(0, "v2"), (1, "v2"), (2, "v2"), (3, "v2")]

    base = dbt_project.lake / "numbers"
    assert _count_without_registration(python, base) == 4


@pytest.mark.deploy  # (make test-deploy; ~25 s of make test)
def test_editable_install_registers_the_source_statically(tmp_path, spark):
    from hoodie import HoodieTable, WriteConfig

    cfg = WriteConfig.build("static", record_key="id")
    table = HoodieTable.for_write(str(tmp_path / "static"), cfg)
    table.upsert(spark.createDataFrame([(1,), (2,), (3,)], "id int"), cfg)
    assert _count_without_registration(sys.executable, tmp_path / "static") == 3

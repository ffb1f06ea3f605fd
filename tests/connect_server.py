"""Fixtures for deployments: a Python for Spark's workers without dbt-hoodie, and a Spark
Connect server started from PySpark's own distribution (`sbin/start-connect-server.sh`).

A pytest plugin (tests/conftest.py loads it). The server is one JVM per test process, a
separate process from the tests' own, as a user's server is: its Python workers run a Python
that lacks dbt-hoodie (the adapter ships the core over Connect), it keeps its own warehouse
and Hive metastore, and a client reaches it only through `sc://127.0.0.1:<port>`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_START_SECONDS = 180


@pytest.fixture(scope="session")
def worker_python(tmp_path_factory) -> str:
    """A venv that sees this environment's packages except dbt-hoodie (a plain path entry to
    site-packages: the editable install's .pth there is not run)."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([python, "-c", where], capture_output=True, text=True,
                             check=True).stdout.strip()  # fmt: skip
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (Path(purelib) / "_test_dependencies.pth").write_text("\n".join(ours) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = (
        "import pyarrow, fastavro, obstore\ntry:\n import hoodie\nexcept ImportError: print('OK')"
    )
    probe = subprocess.run([python, "-c", check], capture_output=True, text=True, cwd=venv,
                           env=env)  # fmt: skip
    assert probe.stdout.strip() == "OK", probe.stdout + probe.stderr
    return python


@dataclass(frozen=True)
class ConnectServer:
    url: str  # sc://127.0.0.1:<port>
    warehouse: Path  # the server's spark.sql.warehouse.dir


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory, worker_python) -> ConnectServer:
    import pyspark

    root = tmp_path_factory.mktemp("connect-server")
    port = _free_port()
    warehouse = root / "warehouse"
    script = Path(pyspark.__file__).parent / "sbin" / "start-connect-server.sh"
    settings = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={root}",
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.enabled": "false",
    }  # fmt: skip
    command = ["bash", str(script), "--wait", "--master", "local[2]"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_REMOTE")}
    env.update(PYSPARK_PYTHON=worker_python, SPARK_LOG_DIR=str(root / "logs"),
               SPARK_PID_DIR=str(root / "pids"))  # fmt: skip
    log = root / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                  cwd=root, start_new_session=True)  # fmt: skip
    try:
        _wait_for(server, port, log)
        yield ConnectServer(f"sc://127.0.0.1:{port}", warehouse)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def _wait_for(server: subprocess.Popen, port: int, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited:\n{log.read_text()[-4000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"no Spark Connect server on port {port}:\n{log.read_text()[-4000:]}")

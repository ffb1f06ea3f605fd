"""Fixtures for tables on Azure Blob Storage: Azurite, Microsoft's emulator, on 127.0.0.1.

A pytest plugin (tests/conftest.py loads it): one emulator per test process, a container of
its own per test. Azurite comes from the npm registry (`make` installs it under
`.venv/azurite`, or `AZURITE_BLOB` names its `azurite-blob` command). Its account and key
are the emulator's published ones; a user's credentials come from the profile or the usual
Azure environment.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

ACCOUNT = "devstoreaccount1"
# Azurite's well-known development key (documented by Microsoft; no secret).
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
_INSTALLED = Path(__file__).resolve().parents[1] / ".venv/azurite/node_modules/.bin/azurite-blob"


@dataclass(frozen=True)
class AzureContainer:
    name: str
    host: str  # 127.0.0.1:port

    @property
    def storage_options(self) -> dict[str, str]:
        """What our core takes: pyarrow.fs.AzureFileSystem's keyword arguments."""
        return {"account_key": ACCOUNT_KEY,
                "blob_storage_authority": self.host, "blob_storage_scheme": "http",
                "dfs_storage_authority": self.host, "dfs_storage_scheme": "http"}  # fmt: skip

    @property
    def hudi_rs_options(self) -> dict[str, str]:
        """What hudi-rs (object_store) takes for the same container."""
        return {"azure_storage_account_name": ACCOUNT,
                "azure_storage_account_key": ACCOUNT_KEY,
                "azure_storage_endpoint": f"http://{self.host}/{ACCOUNT}",
                "azure_allow_http": "true"}  # fmt: skip

    def uri(self, path: str) -> str:
        """Hadoop's ABFS form, which Apache Hudi, hudi-rs and pyarrow all take."""
        return f"abfs://{self.name}@{ACCOUNT}.dfs.core.windows.net/{path}"


def _azurite_command() -> str:
    command = os.environ.get("AZURITE_BLOB") or (str(_INSTALLED) if _INSTALLED.exists() else None)
    command = command or shutil.which("azurite-blob")
    if command is None:
        pytest.fail("Azurite is not installed: `make .venv/.dev` installs it from npm "
                    "(or set AZURITE_BLOB to an azurite-blob command)")  # fmt: skip
    return command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def azurite(tmp_path_factory) -> str:
    """The emulator's blob endpoint, host:port. In memory: nothing outlives the tests.

    Idle connections stay open for ten minutes, as Azure's own front ends keep them for
    minutes: Azurite's default (Node's 5 s) closes a pooled connection just as the Azure
    SDK in pyarrow reuses it ("Connection was closed by the server while trying to read a
    response", seen on a listing between two writes).
    """
    port = _free_port()
    log = tmp_path_factory.mktemp("azurite") / "azurite.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [_azurite_command(), "--blobHost", "127.0.0.1", "--blobPort", str(port),
             "--inMemoryPersistence", "--skipApiVersionCheck", "--silent",
             "--disableTelemetry", "--blobKeepAliveTimeout", "600"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    host = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"Azurite did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    yield host
    process.terminate()
    process.wait(timeout=30)


_containers = itertools.count()


@pytest.fixture
def azure_container(azurite) -> AzureContainer:
    import pyarrow.fs as pafs

    name = f"lake-{next(_containers)}-{uuid.uuid4().hex[:6]}"
    container = AzureContainer(name, azurite)
    pafs.AzureFileSystem(ACCOUNT, **container.storage_options).create_dir(name)
    return container

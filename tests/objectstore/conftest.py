"""Every test here runs against each object store the tests can start: S3 (moto's server)
and Azure Blob Storage (Azurite)."""

from __future__ import annotations

import pytest

STORES = {"s3": "s3_bucket", "azure": "azure_container"}


@pytest.fixture(params=sorted(STORES))
def bucket(request):
    """A fresh bucket (S3) or container (Azure): `uri(path)`, `storage_options` (what the
    core takes) and `hudi_rs_options` (what hudi-rs takes)."""
    return request.getfixturevalue(STORES[request.param])

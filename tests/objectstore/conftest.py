"""Every test here runs against each object store the tests can start: S3 (moto's server)
and Azure Blob Storage (Azurite)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["azure", "s3"])
def bucket(request, bucket_on):
    """A fresh bucket of each store in turn (see `bucket_on`)."""
    return bucket_on(request.param)

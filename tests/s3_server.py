"""Fixtures for tables on object storage: a local S3-compatible server (moto's, on 127.0.0.1).

A pytest plugin (tests/conftest.py loads it): one server per test process, a bucket of its
own per test. Credentials travel as storage options (the `spark` fixture's Python workers
started before this server, so they would not see environment variables set here); a user's
usually come from the environment.
"""

from __future__ import annotations

import itertools
import os
import threading
import uuid
from dataclasses import dataclass

import pytest

KEY, SECRET, REGION = "testing", "testing", "us-east-1"


@dataclass(frozen=True)
class S3Bucket:
    name: str
    endpoint: str

    @property
    def storage_options(self) -> dict[str, str]:
        """What our core takes: pyarrow.fs.S3FileSystem's keyword arguments."""
        host = self.endpoint.split("://", 1)[1]
        return {"endpoint_override": host, "scheme": "http", "region": REGION,
                "access_key": KEY, "secret_key": SECRET}  # fmt: skip

    @property
    def hudi_rs_options(self) -> dict[str, str]:
        """What hudi-rs (object_store) takes for the same bucket."""
        return {"aws_endpoint_url": self.endpoint, "aws_allow_http": "true",
                "aws_region": REGION, "aws_access_key_id": KEY,
                "aws_secret_access_key": SECRET}  # fmt: skip

    def uri(self, path: str) -> str:
        return f"s3://{self.name}/{path}"


def _atomic_object_requests() -> None:
    """Make moto handle each object request whole, as S3 does.

    moto checks a PUT's `If-Match` / `If-None-Match` and then stores the object, with other
    requests' threads free to run in between, so two racing conditional writes could both
    succeed (seen: two holders of the storage-based lock at once); and a GET racing a DELETE
    of the same key can send a truncated body (seen: a heartbeat read failing with "Failed to
    flush response stream"). S3 itself admits exactly one conditional write and returns a
    whole object or none. Handling one object request at a time gives the tests that store.
    """
    from moto.s3.responses import S3Response

    handle = S3Response._key_response
    if getattr(handle, "one_at_a_time", False):
        return
    guard = threading.Lock()

    def _key_response(self, *args, **kwargs):
        with guard:
            return handle(self, *args, **kwargs)

    _key_response.one_at_a_time = True  # type: ignore[attr-defined]
    S3Response._key_response = _key_response  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def s3_endpoint():
    from moto.server import ThreadedMotoServer

    _atomic_object_requests()

    # A missing credential must not make the AWS SDK probe the EC2 metadata service, which
    # is minutes of timeouts on a machine that is no EC2 instance.
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


_buckets = itertools.count()


@pytest.fixture
def s3_bucket(s3_endpoint) -> S3Bucket:
    import boto3

    name = f"lake-{next(_buckets)}-{uuid.uuid4().hex[:6]}"
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name=REGION,
                          aws_access_key_id=KEY, aws_secret_access_key=SECRET)  # fmt: skip
    client.create_bucket(Bucket=name)
    return S3Bucket(name, s3_endpoint)

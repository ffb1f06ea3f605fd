"""How a table's storage options (pyarrow's keyword arguments) configure the object store
client of the conditional writes (obstore), for each store: the same endpoint, account and
credentials must reach both, or the commit protocol would write to another place than the
data files.

S3 and Azure are also exercised against servers (tests/objectstore); GCS has no emulator
with conditional writes that the tests can install, so its configuration is checked here.
"""

from __future__ import annotations

import pytest

from hoodie.exceptions import InvalidConfigError
from hoodie.storage import object_store
from hoodie.storage.object_store import Location, parse_uri

KEY = "a2V5"  # base64, as Azure account keys are


def test_uris_name_bucket_account_and_key():
    assert parse_uri("s3://bucket/t/.hoodie/x") == ("s3", Location("bucket", "t/.hoodie/x"))
    assert parse_uri("gs://bucket/t") == ("gs", Location("bucket", "t"))
    assert parse_uri("abfss://lake@acct.dfs.core.windows.net/t/x") == (
        "abfss", Location("lake", "t/x", "acct"),
    )  # fmt: skip


def test_s3_endpoint_and_credentials():
    store = object_store._s3(Location("b", ""), {
        "endpoint_override": "127.0.0.1:9000", "scheme": "http", "region": "eu-west-1",
        "access_key": "ak", "secret_key": "sk",
    })  # fmt: skip
    assert store.config["endpoint"] == "http://127.0.0.1:9000"
    assert (store.config["region"], store.config["access_key_id"]) == ("eu-west-1", "ak")
    assert store.client_options == {"allow_http": "true"}


def test_azure_authority_follows_pyarrows_rule():
    cloud = object_store._azure(Location("lake", "", "acct"), {
        "blob_storage_authority": ".blob.core.chinacloudapi.cn", "account_key": KEY,
    })  # fmt: skip
    assert cloud.config["endpoint"] == "https://acct.blob.core.chinacloudapi.cn"
    emulator = object_store._azure(Location("lake", "", "acct"), {
        "blob_storage_authority": "127.0.0.1:10000", "blob_storage_scheme": "http",
        "account_key": KEY,
    })  # fmt: skip
    assert emulator.config["endpoint"] == "http://127.0.0.1:10000/acct"
    assert emulator.config["account_name"] == "acct" and emulator.config["account_key"] == KEY
    assert emulator.client_options == {"allow_http": "true"}


def test_azure_credentials_come_from_the_environment_unless_given(monkeypatch):
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", "ZW52")
    assert object_store.azure_options({})["account_key"] == "ZW52"
    assert object_store.azure_options({"account_key": KEY})["account_key"] == KEY
    assert "account_key" not in object_store.azure_options({"sas_token": "sv=1"})
    monkeypatch.delenv("AZURE_STORAGE_ACCOUNT_KEY")
    assert object_store.azure_options({}) == {}


def test_gcs_endpoint_token_and_anonymous():
    store = object_store._gcs(Location("b", ""), {
        "endpoint_override": "127.0.0.1:4443", "scheme": "http", "access_token": "t",
    })  # fmt: skip
    assert store.config["base_url"] == "http://127.0.0.1:4443"
    assert store.config["bearer_token"] == "t"
    assert store.client_options == {"allow_http": "true"}
    anonymous = object_store._gcs(Location("b", ""), {"anonymous": "true"})
    assert anonymous.config["skip_signature"] in (True, "true")


def test_other_schemes_have_no_conditional_writes():
    with pytest.raises(InvalidConfigError, match="supported on abfs://, abfss://, gcs://"):
        object_store.create_if_absent("hdfs://nn/t/x", b"", {})

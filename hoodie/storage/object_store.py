"""Create-if-absent and compare-and-swap on object stores, by the store's conditional writes.

A timeline is safe for concurrent writers only if two of them can never both create the same
file: a requested instant, a marker, `hoodie.properties`, the lock. A local disk gives that
with an exclusive create; an object store has no such call through `pyarrow.fs`, and checking
for the file before writing it leaves a window in which both writers see no file. S3 (with
`If-None-Match: *`), Azure Blob Storage (the same header) and GCS (a generation-0
precondition) refuse the second write themselves; `obstore` (object_store, the Rust crate
hudi-rs and delta-rs use) exposes that as `put(mode="create")`. The storage-based lock also
replaces an object only if it is still the version it read (`If-Match: <etag>` on S3 and
Azure, `x-goog-if-generation-match: <generation>` on GCS), which is how a lock is renewed,
released or taken over from an expired holder without a second writer slipping in.

The store is configured from the same options as the table's `pyarrow.fs` file system (see
`hoodie.storage`: the keyword arguments of `S3FileSystem`, `AzureFileSystem` or
`GcsFileSystem`), and otherwise from the store's usual environment, as pyarrow is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import obstore
from obstore.exceptions import AlreadyExistsError, BaseError, NotFoundError, PreconditionError
from obstore.store import AzureStore, GCSStore, S3Store

from ..exceptions import InvalidConfigError
from ..options import storage as opt

if TYPE_CHECKING:  # typed dicts of the stubs only
    from obstore.store import ClientConfig

Store = S3Store | AzureStore | GCSStore


@dataclass(frozen=True)
class Location:
    """Where an object is: the bucket (S3, GCS) or container (Azure), the account (Azure
    only) and the key in it."""

    bucket: str
    key: str
    account: str = ""


def parse_uri(uri: str) -> tuple[str, Location]:
    """`s3://bucket/key`, `gs://bucket/key`, `abfs[s]://container@account.dfs.../key`."""
    scheme, _, rest = uri.partition("://")
    bucket, _, key = rest.partition("/")
    account = ""
    if scheme in AZURE_SCHEMES:
        bucket, _, host = bucket.partition("@")
        account = host.split(".", 1)[0]
    return scheme, Location(bucket, key, account)


def _plain_http(options: Mapping[str, str], scheme_option: str) -> dict[str, Any]:
    return {"allow_http": True} if options.get(scheme_option) == "http" else {}


def _endpoint_url(options: Mapping[str, str]) -> str | None:
    """S3's and GCS's `endpoint_override` (host[:port], or a URL) with `scheme`, as a URL."""
    endpoint = options.get(opt.ENDPOINT_OVERRIDE.key)
    if not endpoint:
        return None
    scheme = options.get(opt.SCHEME.key, str(opt.SCHEME.default))
    return endpoint if "://" in endpoint else f"{scheme}://{endpoint}"


# pyarrow.fs.S3FileSystem's option names -> object_store's S3 configuration keys.
_S3_KEYS = {
    opt.REGION.key: "region",
    opt.ACCESS_KEY.key: "access_key_id",
    opt.SECRET_KEY.key: "secret_access_key",
    opt.SESSION_TOKEN.key: "session_token",
}


def _s3(location: Location, options: Mapping[str, str]) -> S3Store:
    config = {_S3_KEYS[k]: v for k, v in options.items() if k in _S3_KEYS}
    client = _plain_http(options, opt.SCHEME.key)
    endpoint = _endpoint_url(options)
    if endpoint:
        config["endpoint"] = endpoint
        if endpoint.startswith("http://"):
            client = {"allow_http": True}
    return S3Store(location.bucket, config=cast(Any, config) or None,
                   client_options=cast("ClientConfig", client) or None)  # fmt: skip


# pyarrow.fs.AzureFileSystem's option names -> object_store's Azure configuration keys.
_AZURE_KEYS = {
    opt.ACCOUNT_NAME.key: "account_name",
    opt.ACCOUNT_KEY.key: "account_key",
    opt.SAS_TOKEN.key: "sas_key",
    opt.CLIENT_ID.key: "client_id",
    opt.CLIENT_SECRET.key: "client_secret",
    opt.TENANT_ID.key: "tenant_id",
}


# A credential in the options wins; else these, as object_store, hudi-rs and the Azure CLI
# name them. (Without either, pyarrow and obstore try Azure's default credentials: a service
# principal from AZURE_CLIENT_ID/AZURE_CLIENT_SECRET/AZURE_TENANT_ID, a managed identity.)
_AZURE_ENVIRONMENT = {
    opt.ACCOUNT_KEY.key: ("AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_KEY"),
    opt.SAS_TOKEN.key: ("AZURE_STORAGE_SAS_TOKEN",),
}
_AZURE_CREDENTIALS = (opt.ACCOUNT_KEY.key, opt.SAS_TOKEN.key, opt.CLIENT_SECRET.key)


def azure_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options, with an account key or SAS token from the environment when they name
    no credential: a catalog table's reader gets no credentials from Spark, only from its
    process's environment, as on S3."""
    resolved = dict(options)
    if not any(name in resolved for name in _AZURE_CREDENTIALS):
        for name, variables in _AZURE_ENVIRONMENT.items():
            value = next((os.environ[v] for v in variables if os.environ.get(v)), None)
            if value:
                resolved[name] = value
                break
    return resolved


def _azure(location: Location, options: Mapping[str, str]) -> AzureStore:
    options = azure_options(options)
    config = {_AZURE_KEYS[k]: v for k, v in options.items() if k in _AZURE_KEYS}
    account = config.setdefault("account_name", location.account)
    authority = options.get(opt.BLOB_STORAGE_AUTHORITY.key)
    if authority:
        # pyarrow's rule: `.blob.core.chinacloudapi.cn` follows the account name (a cloud's
        # domain); `127.0.0.1:10000` is an emulator's host, with the account in the path.
        scheme = options.get(opt.BLOB_STORAGE_SCHEME.key, str(opt.BLOB_STORAGE_SCHEME.default))
        if authority.startswith("."):
            config["endpoint"] = f"{scheme}://{account}{authority}"
        else:
            config["endpoint"] = f"{scheme}://{authority}/{account}"
    client = _plain_http(options, opt.BLOB_STORAGE_SCHEME.key)
    return AzureStore(location.bucket, config=cast(Any, config) or None,
                      client_options=cast("ClientConfig", client) or None)  # fmt: skip


def _gcs(location: Location, options: Mapping[str, str]) -> GCSStore:
    config: dict[str, Any] = {}
    endpoint = _endpoint_url(options)
    if endpoint:
        config["base_url"] = endpoint
    if options.get(opt.ACCESS_TOKEN.key):
        config["bearer_token"] = options[opt.ACCESS_TOKEN.key]
    if str(options.get(opt.ANONYMOUS.key, "")).lower() == "true":
        config["skip_signature"] = True
    client = {"allow_http": True} if endpoint and endpoint.startswith("http://") else {}
    return GCSStore(location.bucket, config=cast(Any, config) or None,
                    client_options=cast("ClientConfig", client) or None)  # fmt: skip


AZURE_SCHEMES = frozenset({"abfs", "abfss"})
_STORES: dict[str, Callable[[Location, Mapping[str, str]], Store]] = {
    "s3": _s3,
    "gs": _gcs,
    "gcs": _gcs,
    **{scheme: _azure for scheme in AZURE_SCHEMES},
}
SCHEMES = frozenset(_STORES)


@lru_cache(maxsize=64)
def _store(scheme: str, bucket: str, account: str, options: tuple[tuple[str, str], ...]) -> Store:
    """One client per bucket and options in a process (each holds a connection pool)."""
    return _STORES[scheme](Location(bucket, "", account), dict(options))


def _located(uri: str, options: Mapping[str, str]) -> tuple[Store, str]:
    scheme, location = parse_uri(uri)
    if scheme not in SCHEMES:
        supported = ", ".join(f"{name}://" for name in sorted(SCHEMES))
        raise InvalidConfigError(f"conditional writes are supported on {supported}, not on '{uri}'")
    store = _store(scheme, location.bucket, location.account, tuple(sorted(options.items())))
    return store, location.key


def _version(meta: Mapping[str, Any]) -> str:
    """An object's version as one opaque string: its ETag and the store's version (GCS's
    generation). Stores condition a replace on one or the other (S3 and Azure `If-Match` the
    ETag, GCS matches the generation), so both are kept, as object_store advises."""
    fields = {name: meta[name] for name in ("e_tag", "version") if meta.get(name) is not None}
    return json.dumps(fields, sort_keys=True)


def create_if_absent(uri: str, data: bytes, options: Mapping[str, str]) -> bool:
    """Write the object at `uri` only if none exists; False if one did.

    The store decides, atomically: of two writers racing for one name exactly one succeeds,
    and the object is whole or absent.
    """
    return replace_if(uri, data, options, None) is not None


def read_versioned(uri: str, options: Mapping[str, str]) -> tuple[bytes, str] | None:
    """The object's bytes and its version (see `_version`); None if there is none."""
    store, key = _located(uri, options)
    try:
        result = obstore.get(store, key)
    except (FileNotFoundError, NotFoundError):
        return None
    return bytes(result.bytes()), _version(result.meta)


def read_range(uri: str, options: Mapping[str, str], start: int, length: int) -> bytes:
    """Bytes [start, start + length) of the object, in one ranged GET: fewer where it ends
    first, none from past its end (the store answers that with an error, taken as no bytes
    once the object is known to exist)."""
    if start < 0 or length < 0:
        raise ValueError(f"a byte range starts at 0 or later, of 0 bytes or more: {start}, "
                         f"{length}")  # fmt: skip
    store, key = _located(uri, options)
    if length == 0:
        return b""
    try:
        return bytes(obstore.get_range(store, key, start=start, length=length))
    except (FileNotFoundError, NotFoundError):
        raise FileNotFoundError(uri) from None
    except BaseError:
        # a range starting past the end (HTTP 416): no bytes there, if the object exists
        try:
            size = obstore.head(store, key)["size"]
        except (FileNotFoundError, NotFoundError):
            raise FileNotFoundError(uri) from None
        if start >= size:
            return b""
        raise


def replace_if(
    uri: str, data: bytes, options: Mapping[str, str], version: str | None
) -> str | None:
    """Write the object only if it is still at `version` (None: only if there is none); its
    new version, or None when another writer changed, created or deleted it first."""
    store, key = _located(uri, options)
    mode: Any = "create" if version is None else json.loads(version)
    try:
        written = obstore.put(store, key, data, mode=mode)
    except (AlreadyExistsError, PreconditionError, NotFoundError, FileNotFoundError):
        return None
    return _version(written)


def delete(uri: str, options: Mapping[str, str]) -> None:
    """Delete the object if it exists: one request.

    pyarrow's Azure file system deletes a blob of an account without hierarchical namespace
    in four (lease the blob, write its folder's marker, delete, release the lease), and the
    release of a lease on a deleted blob is answered 404, which Azurite (and any server that
    closes such a connection) turns into a retried request: 7 s per delete, measured.
    Clean, rollback and archival delete many files, so every object store deletes here.
    """
    store, key = _located(uri, options)
    try:
        obstore.delete(store, key)
    except (FileNotFoundError, NotFoundError):
        pass

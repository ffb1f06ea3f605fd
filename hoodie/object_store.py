"""Create-if-absent and compare-and-swap on object stores, by the store's conditional writes.

A timeline is safe for concurrent writers only if two of them can never both create the same
file: a requested instant, a marker, `hoodie.properties`, the lock. A local disk gives that
with an exclusive create; an object store has no such call through `pyarrow.fs`, and checking
for the file before writing it leaves a window in which both writers see no file. S3 (with
`If-None-Match: *`) and GCS (a generation-0 precondition) refuse the second write
themselves; `obstore` (object_store, the Rust crate hudi-rs and delta-rs use) exposes that as
`put(mode="create")`. The storage-based lock also replaces an object only if it is still the
version it read (`If-Match: <etag>`, `put(mode={"e_tag": ...})`), which is how a lock is
renewed, released or taken over from an expired holder without a second writer slipping in.

The store is configured from the same options as the table's `pyarrow.fs` file system (see
`hoodie.storage`), and otherwise from the store's usual environment, as pyarrow is.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import obstore
from obstore.exceptions import AlreadyExistsError, NotFoundError, PreconditionError
from obstore.store import S3Store

from .exceptions import InvalidConfigError

if TYPE_CHECKING:  # typed dicts of the stubs only
    from obstore.store import ClientConfig, S3Config

# pyarrow.fs.S3FileSystem's option names -> object_store's S3 configuration keys.
_S3_KEYS = {
    "region": "region",
    "access_key": "access_key_id",
    "secret_key": "secret_access_key",
    "session_token": "session_token",
}
SCHEMES = frozenset({"s3"})


def _s3_config(options: Mapping[str, str]) -> tuple[S3Config, ClientConfig]:
    config = {_S3_KEYS[k]: v for k, v in options.items() if k in _S3_KEYS}
    endpoint = options.get("endpoint_override")
    scheme = options.get("scheme", "https")
    if endpoint:
        config["endpoint"] = endpoint if "://" in endpoint else f"{scheme}://{endpoint}"
    plain_http = scheme == "http" or config.get("endpoint", "").startswith("http://")
    client = {"allow_http": True} if plain_http else {}
    return cast("S3Config", config), cast("ClientConfig", client)


@lru_cache(maxsize=64)
def _store(bucket: str, options: tuple[tuple[str, str], ...]) -> S3Store:
    """One client per bucket and options in a process (each holds a connection pool)."""
    config, client = _s3_config(dict(options))
    return S3Store(bucket, config=config or None, client_options=client or None)


def _located(uri: str, options: Mapping[str, str]) -> tuple[S3Store, str]:
    scheme, _, rest = uri.partition("://")
    if scheme not in SCHEMES:
        raise InvalidConfigError(f"conditional writes are supported on s3://, not on '{uri}'")
    bucket, _, key = rest.partition("/")
    return _store(bucket, tuple(sorted(options.items()))), key


def create_if_absent(uri: str, data: bytes, options: Mapping[str, str]) -> bool:
    """Write the object at `uri` (`s3://bucket/key`) only if none exists; False if one did.

    The store decides, atomically: of two writers racing for one name exactly one succeeds,
    and the object is whole or absent.
    """
    return replace_if(uri, data, options, None) is not None


def read_versioned(uri: str, options: Mapping[str, str]) -> tuple[bytes, str] | None:
    """The object's bytes and its version (the store's ETag); None if there is none."""
    store, key = _located(uri, options)
    try:
        result = obstore.get(store, key)
    except (FileNotFoundError, NotFoundError):
        return None
    return bytes(result.bytes()), str(result.meta["e_tag"])


def replace_if(
    uri: str, data: bytes, options: Mapping[str, str], version: str | None
) -> str | None:
    """Write the object only if it is still at `version` (None: only if there is none); its
    new version, or None when another writer changed, created or deleted it first."""
    store, key = _located(uri, options)
    mode: Any = "create" if version is None else {"e_tag": version}
    try:
        written = obstore.put(store, key, data, mode=mode)
    except (AlreadyExistsError, PreconditionError, NotFoundError, FileNotFoundError):
        return None
    return str(written["e_tag"])

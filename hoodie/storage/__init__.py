"""All file access of the core: the `FileIO` interface, its implementations, and the loader.

Local disks, HDFS and object stores all come through one interface, so the rules that make a
commit safe (write whole, create only if absent, replace only if unchanged) and the rule that
no path leaves the table live in one place, and I/O can be counted, faulted or served by
another implementation (pyiceberg's `FileIO` and `load_file_io` are the model). The floors
above know `FileIO` only; `load_file_io` picks the implementation from the URI's scheme.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import object_store
from .file_io import SECRET_OPTIONS, Dictionary, FileInfo, FileIO
from .local import LocalFileIO
from .object_store_io import ObjectStoreFileIO
from .pyarrow_io import (
    VERIFY_CHECKSUMS,
    PyArrowFileIO,
    parquet_size,
    parquet_write_options,
)
from .tracing import TracingFileIO

__all__ = [
    "SECRET_OPTIONS",
    "VERIFY_CHECKSUMS",
    "Dictionary",
    "FileIO",
    "FileInfo",
    "LocalFileIO",
    "ObjectStoreFileIO",
    "PyArrowFileIO",
    "TracingFileIO",
    "load_file_io",
    "parquet_size",
    "parquet_write_options",
]


def load_file_io(base_uri: str, options: Mapping[str, str] | None = None) -> FileIO:
    """The `FileIO` of a table's base path: `file:` and plain paths a local disk; `s3://`,
    `gs://`, `gcs://`, `abfs://` and `abfss://` an object store; any other scheme pyarrow
    knows (`hdfs://`, ...) a plain file system. `options` configure an object store (the
    keyword arguments of the matching `pyarrow.fs` class)."""
    scheme = base_uri.split("://", 1)[0] if "://" in base_uri else "file"
    if scheme == "file":
        return LocalFileIO(base_uri, options)
    if scheme in object_store.SCHEMES:
        return ObjectStoreFileIO(base_uri, options)
    return PyArrowFileIO(base_uri, options)

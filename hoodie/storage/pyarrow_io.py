"""`PyArrowFileIO`: a `FileIO` on any `pyarrow.fs` file system (HDFS and the like).

The implementations for local disks (`hoodie.storage.local`) and object stores
(`hoodie.storage.object_store_io`) build on it and change what their store does better:
exclusive creates, conditional replaces, renames. Nothing else in the core imports
`pyarrow.fs` or reads or writes parquet files (ruff's banned-api rule in pyproject.toml holds
it).
"""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ..exceptions import InvalidConfigError, UnsafePathError
from ..options import storage as storage_options
from . import object_store
from .file_io import Dictionary, FileInfo, FileIO, check_range, normalize_uri

# Object stores whose pyarrow file system takes options (Hudi takes them from the Hadoop
# configuration; we take the keyword arguments of the pyarrow class, as strings).
_OPTION_FILE_SYSTEMS: dict[str, Callable[..., pafs.FileSystem]] = {
    "s3": pafs.S3FileSystem,
    "gs": pafs.GcsFileSystem,
    "gcs": pafs.GcsFileSystem,
    **{scheme: pafs.AzureFileSystem for scheme in object_store.AZURE_SCHEMES},
}
_EXAMPLE_OPTIONS = {
    "s3": "endpoint_override, region, scheme",
    "gs": "endpoint_override, scheme, anonymous",
    "gcs": "endpoint_override, scheme, anonymous",
    **{
        scheme: "account_name, blob_storage_authority, tenant_id"
        for scheme in object_store.AZURE_SCHEMES
    },
}

# Parquet's CRC32 page checksums: written into every parquet file of ours (base files, log
# data blocks) and verified on every read of one. Without them flipped bytes inside a data
# page decode to other values with no error; with them that is an error naming the file (see
# `hoodie.fs_view.damaged_data_file`). Files without checksums, such as Apache Hudi's, read as
# before: a reader checks the pages that carry one. Apache Hudi and hudi-rs read ours.
WRITE_CHECKSUMS: dict[str, bool] = {"write_page_checksum": True}
VERIFY_CHECKSUMS: dict[str, bool] = {"page_checksum_verification": True}


def parquet_write_options(table: pa.Table) -> dict[str, bool | list[str]]:
    """The writer options of every parquet file of ours holding `table`: page checksums, and
    statistics for every column but the floating-point ones holding a NaN.

    Parquet's C++ writer (pyarrow's) leaves NaN out of a column's min/max, and parquet-mr's
    row-group filter (Spark's parquet scan, Apache Hudi's readers) trusts min/max as bounds of
    every value: a `x > 5` over a row group of NaN and 1.0 (max 1.0) skips it, where Spark,
    which orders NaN above every number, matches the NaN row (measured with PySpark 4.3).
    parquet-mr itself writes no min/max for such a column; neither do we."""
    nan_columns = {path for path, array in _float_leaves(table) if _holds_nan(array)}
    statistics: bool | list[str] = True
    if nan_columns:
        statistics = [path for path in _leaf_paths(table.schema) if path not in nan_columns]
    return {**WRITE_CHECKSUMS, "write_statistics": statistics}


def _float_leaves(table: pa.Table) -> list[tuple[str, pa.ChunkedArray]]:
    """(parquet column path, values) of the floating-point leaves of `table`, however nested."""
    leaves: list[tuple[str, pa.ChunkedArray]] = []

    def visit(path: str, array: pa.ChunkedArray) -> None:
        kind = array.type
        if pa.types.is_floating(kind):
            leaves.append((path, array))
        elif pa.types.is_struct(kind):
            for i in range(kind.num_fields):
                parts = [chunk.field(i) for chunk in array.chunks]
                visit(f"{path}.{kind.field(i).name}", pa.chunked_array(parts, kind.field(i).type))
        elif pa.types.is_map(kind):
            keys = [chunk.keys for chunk in array.chunks]
            items = [chunk.items for chunk in array.chunks]
            visit(f"{path}.key_value.key", pa.chunked_array(keys, kind.key_type))
            visit(f"{path}.key_value.value", pa.chunked_array(items, kind.item_type))
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            values = [chunk.flatten() for chunk in array.chunks]
            visit(f"{path}.list.element", pa.chunked_array(values, kind.value_type))

    for name, column in zip(table.column_names, table.columns):
        visit(name, column)
    return leaves


def _leaf_paths(schema: pa.Schema) -> list[str]:
    """The parquet column paths of `schema`'s leaves, as pyarrow names them when writing."""
    paths: list[str] = []

    def visit(path: str, kind: pa.DataType) -> None:
        if pa.types.is_struct(kind):
            for i in range(kind.num_fields):
                visit(f"{path}.{kind.field(i).name}", kind.field(i).type)
        elif pa.types.is_map(kind):
            visit(f"{path}.key_value.key", kind.key_type)
            visit(f"{path}.key_value.value", kind.item_type)
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            visit(f"{path}.list.element", kind.value_type)
        else:
            paths.append(path)

    for field in schema:
        visit(field.name, field.type)
    return paths


def _holds_nan(array: pa.ChunkedArray) -> bool:
    return any(pc.any(pc.is_nan(chunk)).as_py() for chunk in array.chunks if len(chunk))


def parquet_size(table: pa.Table, compression: str, dictionary: Dictionary = True) -> int:
    """The bytes `table` takes as a parquet file written as `FileIO.write_parquet` writes
    it, written to memory (a writer learning what its records cost on disk)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression, use_dictionary=dictionary,
                   **parquet_write_options(table))  # fmt: skip
    return sink.getvalue().size


def _option_value(name: str, value: str) -> str | bool | float:
    """pyarrow wants flags and timeouts typed; profiles and Spark options give strings."""
    text = str(value).strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if name.endswith(storage_options.TIMEOUT_SUFFIX):
        try:
            return float(text)
        except ValueError:
            raise InvalidConfigError(
                f"storage option {name} must be a number of seconds, got '{value}'"
            ) from None
    return text


def file_system(base_uri: str, options: Mapping[str, str]) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system of `base_uri`, configured by `options`, and the path in it."""
    scheme, rest = base_uri.split("://", 1) if "://" in base_uri else ("file", base_uri)
    factory = _OPTION_FILE_SYSTEMS.get(scheme)
    if options and factory is None:
        schemes = ", ".join(f"{name}://" for name in sorted(_OPTION_FILE_SYSTEMS))
        raise InvalidConfigError(
            f"storage options apply to {schemes} paths, not to '{base_uri}'; configure that "
            "file system through its URI or environment"
        )
    if scheme == "file":
        return pafs.LocalFileSystem(), rest
    if scheme in object_store.AZURE_SCHEMES:
        options = object_store.azure_options(options)
    if factory is None or not options:
        return pafs.FileSystem.from_uri(base_uri)
    kwargs = {k: _option_value(k, v) for k, v in options.items()}
    if scheme in object_store.AZURE_SCHEMES:
        # Hadoop's form, `abfs://container@account.dfs.core.windows.net/path`: pyarrow's
        # Azure file system is the account, its paths start at the container.
        location = object_store.parse_uri(base_uri)[1]
        kwargs.setdefault("account_name", location.account)
        rest = posixpath.join(location.bucket, location.key)
    try:
        return factory(**kwargs), rest
    except TypeError as error:
        raise InvalidConfigError(
            f"unknown storage option for {scheme}:// paths ({error}); the options are the "
            f"keyword arguments of pyarrow.fs.{factory.__name__}, e.g. {_EXAMPLE_OPTIONS[scheme]}"
        ) from error


class PyArrowFileIO(FileIO):
    """A base path on a `pyarrow.fs` file system.

    What a file system without exclusive creates or conditional writes can promise: a create
    checks, then writes (safe for one writer, not for two racing for one name), and the
    storage-based lock is refused (`has_conditional_writes` is False).
    """

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None):
        super().__init__(base_uri, options)
        self.fs, base_path = file_system(self.base_uri, self.options)
        self.base_path = base_path.rstrip("/") or "/"

    def full_path(self, relative: str = "") -> str:
        """The path as `pyarrow.fs` wants it. Every file operation comes through here, so it
        refuses a path that would leave the base path (`FileIO.inside`)."""
        return posixpath.join(self.base_path, self.inside(relative)) if relative else self.base_path

    def uri(self, relative: str = "") -> str:
        return posixpath.join(self.base_uri, self.inside(relative)) if relative else self.base_uri

    def relative(self, path: str) -> str:
        if "://" not in path and not path.startswith("file:") and not path.startswith("/"):
            return self.inside(path)
        full = normalize_uri(path) if path.startswith(("file:", "/")) else path
        if "://" in full and "://" in self.base_uri:
            base = self.base_uri.rstrip("/") + "/"
        else:
            full = full.split("://", 1)[-1] if "://" in full else full
            base = self.base_path.rstrip("/") + "/"
        if not full.startswith(base):
            raise self._outside(path)
        return self.inside(full[len(base) :])

    # -- reading -------------------------------------------------------------------------------
    def exists(self, relative: str) -> bool:
        return self.fs.get_file_info(self.full_path(relative)).type != pafs.FileType.NotFound

    def read_bytes(self, relative: str) -> bytes:
        with self.fs.open_input_stream(self.full_path(relative)) as stream:
            return stream.read()

    def read_range(self, relative: str, start: int, length: int) -> bytes:
        check_range(start, length)
        if length == 0:
            return b""
        with self.fs.open_input_file(self.full_path(relative)) as handle:
            if start >= handle.size():
                return b""
            return handle.read_at(min(length, handle.size() - start), start).to_pybytes()

    def size(self, relative: str) -> int:
        return self.fs.get_file_info(self.full_path(relative)).size or 0

    def mtime(self, relative: str) -> datetime | None:
        return self.fs.get_file_info(self.full_path(relative)).mtime

    def read_parquet(self, relative: str, columns: list[str] | None = None) -> pa.Table:
        return pq.read_table(self.full_path(relative), columns=columns, filesystem=self.fs,
                             **VERIFY_CHECKSUMS)  # fmt: skip

    def parquet_file(self, relative: str, footer: pq.FileMetaData | None = None) -> pq.ParquetFile:
        return pq.ParquetFile(self.full_path(relative), filesystem=self.fs, metadata=footer,
                              **VERIFY_CHECKSUMS)  # fmt: skip

    def list_files(self, relative: str = "", *, recursive: bool = False) -> list[FileInfo]:
        selector = pafs.FileSelector(
            self.full_path(relative), allow_not_found=True, recursive=recursive
        )
        prefix = self.base_path.rstrip("/") + "/"
        out = []
        for info in self.fs.get_file_info(selector):
            if info.type == pafs.FileType.File:
                out.append(FileInfo(info.path[len(prefix) :], info.size or 0))
        return out

    def list_dirs(self, relative: str = "") -> list[str]:
        selector = pafs.FileSelector(self.full_path(relative), allow_not_found=True)
        prefix = self.base_path.rstrip("/") + "/"
        return [
            info.path[len(prefix) :]
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.Directory
        ]

    def read_versioned(self, relative: str) -> tuple[bytes, str] | None:
        raise self._no_conditional_writes(relative)

    # -- writing -------------------------------------------------------------------------------
    def makedirs(self, relative: str) -> None:
        self.fs.create_dir(self.full_path(relative), recursive=True)

    def write_bytes(self, relative: str, data: bytes) -> None:
        parent = posixpath.dirname(self.inside(relative))
        if parent:
            self.makedirs(parent)
        with self.fs.open_output_stream(self.full_path(relative)) as stream:
            stream.write(data)
        self._written(relative)

    def write_atomic(self, relative: str, data: bytes) -> None:
        """A temporary file beside it, then a rename."""
        parent = posixpath.dirname(self.inside(relative))
        tmp = posixpath.join(parent, f".{posixpath.basename(relative)}.{uuid.uuid4().hex}.tmp")
        self.write_bytes(tmp, data)
        try:
            self.fs.move(self.full_path(tmp), self.full_path(relative))
        except Exception:
            self.delete(tmp)
            raise
        self._written(relative)

    def create_if_absent(self, relative: str, data: bytes) -> bool:
        """A check, then the write: safe for one writer, not for two racing for one name."""
        if self.exists(relative):
            return False
        self.write_bytes(relative, data)
        return True

    def replace_if(self, relative: str, data: bytes, version: str | None) -> str | None:
        raise self._no_conditional_writes(relative)

    def write_parquet(
        self,
        relative: str,
        table: pa.Table,
        compression: str,
        dictionary: Dictionary = True,
        footer: Mapping[bytes, bytes] | None = None,
        written: list[Any] | None = None,
    ) -> int:
        parent = posixpath.dirname(self.inside(relative))
        if parent:
            self.makedirs(parent)
        with pq.ParquetWriter(self.full_path(relative), table.schema, filesystem=self.fs,
                              compression=compression, use_dictionary=dictionary,
                              **parquet_write_options(table)) as writer:  # fmt: skip
            writer.write_table(table)
            if footer:
                writer.add_key_value_metadata(dict(footer))
        if written is not None:
            written.append(writer.writer.metadata)
        return self.size(relative)

    def move(self, source: str, target: str) -> None:
        self.fs.move(self.full_path(source), self.full_path(target))
        self._written(source)
        self._written(target)

    def delete(self, relative: str) -> None:
        try:
            self.fs.delete_file(self.full_path(relative))
        except FileNotFoundError:
            pass
        self._written(relative)

    def delete_dir(self, relative: str = "") -> None:
        try:
            self.fs.delete_dir(self.full_path(relative))
        except FileNotFoundError:
            pass

    def swap_in(self, other: FileIO) -> None:
        """The old folder is moved aside first and deleted only after the new one is in place;
        on a file system each move is one rename."""
        if not isinstance(other, PyArrowFileIO) or other.scheme != self.scheme:
            raise InvalidConfigError(f"{other.base_uri} is not beside {self.base_uri}")
        aside = f"{self.base_path}.replaced-{uuid.uuid4().hex[:8]}"
        self._move_folder(self.base_path, aside)
        try:
            self._move_folder(other.base_path, self.base_path)
        except Exception:
            self._move_folder(aside, self.base_path)
            raise
        self.fs.delete_dir(aside)

    # -- what implementations change -------------------------------------------------------------
    def _move_folder(self, source: str, target: str) -> None:
        """Move a folder given as file-system paths (they may lie beside the base path)."""
        self.fs.move(source, target)

    def _written(self, relative: str) -> None:
        """Called after `relative` was written, replaced, moved or deleted."""

    def _no_conditional_writes(self, relative: str) -> InvalidConfigError:
        return InvalidConfigError(
            f"{self.uri(relative)}: {self.scheme}:// paths have no conditional writes, "
            "which the storage-based lock needs (object stores and local paths have them); use "
            "hoodie.write.lock.provider=filesystem there"
        )

    def _outside(self, path: str) -> UnsafePathError:
        return UnsafePathError(
            f"table at {self.base_uri}: the table's metadata names {path!r}, which is not "
            "under the table's base path; nothing was read, written or deleted there"
        )

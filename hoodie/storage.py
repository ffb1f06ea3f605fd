"""All file-system access of the core: the `FileIO` interface, and `Storage`, its pyarrow one.

Local disks, HDFS and object stores all come through one interface, so the rules that make a
commit safe (write a temporary file, then rename; create only if absent) live in one place,
and I/O can be counted, faulted or served by another implementation (pyiceberg's `FileIO`
is the model). Nothing else in the core imports `pyarrow.fs` or reads or writes parquet files
(ruff's banned-api rule in pyproject.toml holds it). `Storage` pickles by URI, so Spark tasks
rebuild it on the executors; `TracingStorage` also records every call, in any process.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import posixpath
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from . import object_store
from .exceptions import InvalidConfigError, UnsafePathError
from .faults import crash_point
from .options import storage as storage_options


def _normalize(base_uri: str) -> str:
    if "://" not in base_uri and not base_uri.startswith("file:"):
        return os.path.abspath(base_uri)
    if base_uri.startswith("file:"):
        path = base_uri[len("file:") :]
        while path.startswith("//"):
            path = path[1:]
        return os.path.abspath(path)
    return base_uri.rstrip("/")


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
# Options that are credentials: they travel to Spark tasks with the `Storage`, but are never
# written anywhere (a catalog table stores the others, see `Storage.shareable_options`).
SECRET_OPTIONS = storage_options.SECRETS


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


def _file_system(base_uri: str, options: Mapping[str, str]) -> tuple[pafs.FileSystem, str]:
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


def _create_exclusive(path: str, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return True


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class FileInfo:
    """One listed file: its path relative to the table base path, and its size."""

    relative_path: str
    size: int

    @property
    def name(self) -> str:
        return posixpath.basename(self.relative_path)

    @property
    def parent(self) -> str:
        return posixpath.dirname(self.relative_path)


class FileIO(Protocol):
    """What the core does with files, every path relative to the table's base path."""

    base_uri: str

    def uri(self, relative: str = "") -> str: ...
    def relative(self, path: str) -> str: ...
    def exists(self, relative: str) -> bool: ...
    def read_bytes(self, relative: str) -> bytes: ...
    def read_text(self, relative: str) -> str: ...
    def size(self, relative: str) -> int: ...
    def mtime(self, relative: str) -> datetime | None: ...
    def list_files(self, relative: str = "", *, recursive: bool = False) -> list[FileInfo]: ...
    def list_dirs(self, relative: str = "") -> list[str]: ...
    def read_parquet(self, relative: str, columns: list[str] | None = None) -> pa.Table: ...
    def parquet_file(self, relative: str) -> pq.ParquetFile: ...
    def makedirs(self, relative: str) -> None: ...
    def write_bytes(self, relative: str, data: bytes) -> None: ...
    def write_atomic(self, relative: str, data: bytes) -> None: ...
    def create_if_absent(self, relative: str, data: bytes) -> bool: ...
    def read_versioned(self, relative: str) -> tuple[bytes, str] | None: ...
    def replace_if(self, relative: str, data: bytes, version: str | None) -> str | None: ...
    def write_parquet(
        self,
        relative: str,
        table: pa.Table,
        compression: str,
        dictionary: Dictionary = True,
        footer: Mapping[bytes, bytes] | None = None,
    ) -> int: ...
    def move(self, source: str, target: str) -> None: ...
    def delete(self, relative: str) -> None: ...
    def delete_dir(self, relative: str = "") -> None: ...
    def swap_in(self, other_uri: str) -> None: ...


# Which columns a parquet file dictionary-encodes: all (True), or those named.
Dictionary = bool | list[str]

# Parquet's CRC32 page checksums: written into every parquet file of ours (base files, log
# data blocks) and verified on every read of one. Without them flipped bytes inside a data
# page decode to other values with no error; with them that is an error naming the file (see
# `hoodie.fs_view.damaged_data_file`). Files without checksums, such as Apache Hudi's, read as
# before: a reader checks the pages that carry one. Apache Hudi and hudi-rs read ours.
WRITE_CHECKSUMS: dict[str, bool] = {"write_page_checksum": True}
VERIFY_CHECKSUMS: dict[str, bool] = {"page_checksum_verification": True}


def parquet_size(table: pa.Table, compression: str, dictionary: Dictionary = True) -> int:
    """The bytes `table` takes as a parquet file written as `Storage.write_parquet` writes
    it, written to memory (a writer learning what its records cost on disk)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression, use_dictionary=dictionary,
                   **WRITE_CHECKSUMS)  # fmt: skip
    return sink.getvalue().size


class Storage:
    """A table's base path on a `pyarrow.fs` file system: the core's `FileIO`.

    `options` configure an object store's file system (the keyword arguments of
    `pyarrow.fs.S3FileSystem`, `AzureFileSystem` or `GcsFileSystem`: endpoint_override,
    region, account_name, ...);
    without them the URI and the store's usual environment and files decide, as for any
    pyarrow user.
    """

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None):
        self.base_uri = _normalize(base_uri)
        self.options = dict(options or {})
        self.fs, self.base_path = _file_system(self.base_uri, self.options)
        self.base_path = self.base_path.rstrip("/") or "/"

    def __reduce__(self) -> tuple[Callable[..., Storage], tuple[Any, ...]]:
        return (Storage, (self.base_uri, self.options))

    def __repr__(self) -> str:
        return f"Storage({self.base_uri!r})"  # never the options: they may hold credentials

    def at(self, base_uri: str) -> Storage:
        """Another base path on the same store, with the same options."""
        return Storage(base_uri, self.options)

    @property
    def shareable_options(self) -> dict[str, str]:
        """The options that are no credentials: what may be stored with a catalog table."""
        return {k: v for k, v in self.options.items() if k not in SECRET_OPTIONS}

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    @property
    def scheme(self) -> str:
        return self.base_uri.split("://", 1)[0] if "://" in self.base_uri else "file"

    @property
    def is_object_store(self) -> bool:
        """A store of objects written whole (S3, Azure, GCS), not a file system with renames."""
        return self.scheme in _OPTION_FILE_SYSTEMS

    def full_path(self, relative: str = "") -> str:
        """The path as `pyarrow.fs` wants it. Every file operation comes through here, so it
        refuses a path that would leave the base path (see `inside`)."""
        return posixpath.join(self.base_path, self.inside(relative)) if relative else self.base_path

    def inside(self, relative: str) -> str:
        """`relative`, checked to stay under the base path: not absolute, no `..` segment,
        no NUL. Paths come from data (partition values) and from the table's metadata
        (commit metadata, plans, markers), which a crafted table controls: this one check
        keeps every read, write and delete of the core inside the table."""
        if relative.startswith("/") or "\x00" in relative or ".." in relative.split("/"):
            raise UnsafePathError(
                f"table at {self.base_uri}: the path {relative!r} (from the table's metadata "
                "or data) would lead outside the table's base path; nothing was read, written "
                "or deleted there. The table's metadata names files it cannot hold: restore "
                "it from a copy, or roll back the instant that names them"
            )
        return relative

    def uri(self, relative: str = "") -> str:
        """The path as Spark and other engines want it (a URI with a scheme)."""
        if self.is_local:
            return "file://" + self.full_path(relative)
        return posixpath.join(self.base_uri, self.inside(relative)) if relative else self.base_uri

    def relative(self, path: str) -> str:
        """A path under the base path, given as a URI (`file:/...`, `s3://...`) or relative.

        Hudi's Avro metadata (rollback, clean) records absolute paths, with or without scheme.
        """
        if "://" not in path and not path.startswith("file:") and not path.startswith("/"):
            return self.inside(path)
        full = _normalize(path) if (path.startswith("file:") or path.startswith("/")) else path
        if "://" in full and "://" in self.base_uri:
            base = self.base_uri.rstrip("/") + "/"
        else:
            full = full.split("://", 1)[-1] if "://" in full else full
            base = self.base_path.rstrip("/") + "/"
        if not full.startswith(base):
            raise UnsafePathError(
                f"table at {self.base_uri}: the table's metadata names {path!r}, which is not "
                "under the table's base path; nothing was read, written or deleted there"
            )
        return self.inside(full[len(base) :])

    # -- reading -------------------------------------------------------------------------------
    def exists(self, relative: str) -> bool:
        return self.fs.get_file_info(self.full_path(relative)).type != pafs.FileType.NotFound

    def read_bytes(self, relative: str) -> bytes:
        """The whole file. On S3 one GET of one version of the object: pyarrow's stream asks
        for the size first and then for that many bytes, which fails (or cuts the object
        short) when a writer replaces it in between, as heartbeats are replaced."""
        if self.scheme in object_store.SCHEMES:
            current = object_store.read_versioned(self.uri(relative), self.options)
            if current is None:
                raise FileNotFoundError(self.uri(relative))
            return current[0]
        with self.fs.open_input_stream(self.full_path(relative)) as stream:
            return stream.read()

    def read_text(self, relative: str) -> str:
        return self.read_bytes(relative).decode("utf-8")

    def size(self, relative: str) -> int:
        return self.fs.get_file_info(self.full_path(relative)).size or 0

    def mtime(self, relative: str) -> datetime | None:
        """When the file was last modified (None when the file system does not say)."""
        return self.fs.get_file_info(self.full_path(relative)).mtime

    def read_parquet(self, relative: str, columns: list[str] | None = None) -> pa.Table:
        return pq.read_table(self.full_path(relative), columns=columns, filesystem=self.fs,
                             **VERIFY_CHECKSUMS)  # fmt: skip

    def parquet_file(self, relative: str) -> pq.ParquetFile:
        """A parquet file opened for reading its footer, columns or row groups in batches."""
        return pq.ParquetFile(self.full_path(relative), filesystem=self.fs, **VERIFY_CHECKSUMS)

    def list_files(self, relative: str = "", *, recursive: bool = False) -> list[FileInfo]:
        """Files (not folders) under a folder; empty when the folder does not exist."""
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

    # -- writing -------------------------------------------------------------------------------
    def makedirs(self, relative: str) -> None:
        self.fs.create_dir(self.full_path(relative), recursive=True)

    def write_bytes(self, relative: str, data: bytes) -> None:
        parent = posixpath.dirname(self.inside(relative))
        if parent:
            self.makedirs(parent)
        with self.fs.open_output_stream(self.full_path(relative)) as stream:
            stream.write(data)
        self._drop_checksum(relative)

    def _drop_checksum(self, relative: str) -> None:
        """Delete Hadoop's checksum file of `relative` on a local disk (`.name.crc` beside it).

        Apache Hudi writes local tables through Hadoop's checksummed local file system, which
        leaves one such file per file it writes and verifies it on every read: a file we
        replace (`hoodie.properties` above all) with its old checksum beside it is a file
        Apache Hudi can no longer read ("Could not load Hoodie properties"). Hadoop itself
        replaces or deletes the checksum with its file; so do we.
        """
        if not self.is_local:
            return
        folder, name = posixpath.split(self.inside(relative))
        try:
            os.unlink(self.full_path(posixpath.join(folder, f".{name}.crc")))
        except FileNotFoundError:
            pass

    def write_atomic(self, relative: str, data: bytes) -> None:
        """Write so that readers see either no file or the whole file, never a part of it.

        An object store's upload is that already (the object appears when it is complete);
        file systems get a temporary file and a rename.
        """
        if self.is_object_store:
            self.write_bytes(relative, data)
            return
        parent = posixpath.dirname(self.inside(relative))
        tmp = posixpath.join(parent, f".{posixpath.basename(relative)}.{uuid.uuid4().hex}.tmp")
        self.write_bytes(tmp, data)
        try:
            self.fs.move(self.full_path(tmp), self.full_path(relative))
        except Exception:
            self.delete(tmp)
            raise
        self._drop_checksum(relative)

    def create_if_absent(self, relative: str, data: bytes) -> bool:
        """Atomically create a file holding all of `data`, only if none exists; False when one
        already did.

        On local disks the bytes are first written under a temporary name, then hard-linked
        under their own (`link` fails when the name exists, as `O_EXCL` does). So a crash never
        leaves the file empty or half-written: a requested compaction, clean or rollback always
        holds its whole plan, and a torn one would stop every later write that reads the
        plans. S3, Azure and GCS refuse the second of two racing creates themselves (a conditional
        write, see `hoodie.object_store`). Other file systems (HDFS) get a check, then the
        write: safe for one writer, not for two racing for one name.
        """
        if self.scheme in object_store.SCHEMES:
            return object_store.create_if_absent(self.uri(relative), data, self.options)
        if not self.is_local:
            if self.exists(relative):
                return False
            self.write_bytes(relative, data)
            return True
        path = self.full_path(relative)
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        if not data:
            return _create_exclusive(path, data)  # nothing that could be torn
        # A name that no Hudi reader takes for a timeline, base or log file.
        staged = os.path.join(folder, f".staged-{uuid.uuid4().hex}.tmp")
        with open(staged, "wb") as handle:
            handle.write(data)
        try:
            crash_point("create.staged")
            os.link(staged, path)
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links
            return _create_exclusive(path, data)
        finally:
            os.unlink(staged)
        return True

    @property
    def has_conditional_writes(self) -> bool:
        """Can a file be replaced only if it is unchanged (`replace_if`): object stores by
        their conditional writes, a local disk under an advisory lock (one machine's writers)."""
        return self.is_local or self.scheme in object_store.SCHEMES

    def read_versioned(self, relative: str) -> tuple[bytes, str] | None:
        """The file's bytes and a version to pass to `replace_if`; None if there is none."""
        if self.scheme in object_store.SCHEMES:
            return object_store.read_versioned(self.uri(relative), self.options)
        self._refuse_without_conditional_writes(relative)
        try:
            data = self.read_bytes(relative)
        except FileNotFoundError:
            return None
        return data, _version(data)

    def replace_if(self, relative: str, data: bytes, version: str | None) -> str | None:
        """Write the file whole, only if it is still at `version` (None: only if it does not
        exist); its new version, or None when another writer changed it first.

        An object store decides this itself (`If-Match` / `If-None-Match`). On a local disk
        the check and the write happen under an exclusive `flock` of a guard file beside it,
        which every process of the machine takes for this file; a version is a digest of the
        bytes (the lock's records differ in holder and time, so a version never comes back).
        """
        if self.scheme in object_store.SCHEMES:
            return object_store.replace_if(self.uri(relative), data, self.options, version)
        self._refuse_without_conditional_writes(relative)
        path = self.full_path(relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(f"{path}.guard", "ab") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)  # released when the guard closes
            current = self.read_versioned(relative)
            if (current[1] if current is not None else None) != version:
                return None
            self.write_atomic(relative, data)
        return _version(data)

    def _refuse_without_conditional_writes(self, relative: str) -> None:
        if not self.has_conditional_writes:
            raise InvalidConfigError(
                f"{self.uri(relative)}: {self.scheme}:// paths have no conditional writes, "
                "which the storage-based lock needs (object stores and local paths have them); use "
                "hoodie.write.lock.provider=filesystem there"
            )

    def write_parquet(
        self,
        relative: str,
        table: pa.Table,
        compression: str,
        dictionary: Dictionary = True,
        footer: Mapping[bytes, bytes] | None = None,
    ) -> int:
        """Write `table` as the parquet file `relative` (its folder made if needed); its size.
        `dictionary`: the columns to dictionary-encode (True: all). `footer`: key-value
        metadata for the footer alone (a base file's bloom filter, hundreds of kilobytes),
        not also inside the Arrow schema pyarrow stores there, as `table`'s metadata is."""
        parent = posixpath.dirname(self.inside(relative))
        if parent:
            self.makedirs(parent)
        with pq.ParquetWriter(self.full_path(relative), table.schema, filesystem=self.fs,
                              compression=compression, use_dictionary=dictionary,
                              **WRITE_CHECKSUMS) as writer:  # fmt: skip
            writer.write_table(table)
            if footer:
                writer.add_key_value_metadata(dict(footer))
        return self.size(relative)

    def move(self, source: str, target: str) -> None:
        """Rename a file; an object store copies it and deletes the source (Azure accounts
        without a hierarchical namespace have no rename at all)."""
        if self.is_object_store:
            self._move_object(self.full_path(source), self.full_path(target))
        else:
            self.fs.move(self.full_path(source), self.full_path(target))
            self._drop_checksum(source)
            self._drop_checksum(target)

    def _move_object(self, path: str, destination: str) -> None:
        """Copy, then delete: paths are the file system's (`bucket/key`), and may lie
        outside the base path (a table moved aside)."""
        self.fs.copy_file(path, destination)
        authority = self.base_uri.split("://", 1)[1].split("/", 1)[0]
        object_store.delete(f"{self.scheme}://{authority}/{path.split('/', 1)[1]}", self.options)

    def delete(self, relative: str) -> None:
        if self.scheme in object_store.SCHEMES:
            object_store.delete(self.uri(relative), self.options)
            return
        try:
            self.fs.delete_file(self.full_path(relative))
        except FileNotFoundError:
            pass
        self._drop_checksum(relative)

    def delete_dir(self, relative: str = "") -> None:
        try:
            self.fs.delete_dir(self.full_path(relative))
        except FileNotFoundError:
            pass

    def swap_in(self, other_uri: str) -> None:
        """Replace this base path's contents with the folder at `other_uri` (same file system).

        The old folder is moved aside first and deleted only after the new one is in place, so
        a failure midway leaves one complete table under one of the two names. On a local disk
        each move is one rename; an object store moves file by file, and readers meanwhile
        find no table at this base path (never a mix of the two).
        """
        other = self.at(other_uri)
        aside = f"{self.base_path}.replaced-{uuid.uuid4().hex[:8]}"
        move = self._move_tree if self.is_object_store else self.fs.move
        move(self.base_path, aside)
        try:
            move(other.base_path, self.base_path)
        except Exception:
            move(aside, self.base_path)
            raise
        self.fs.delete_dir(aside)

    def _move_tree(self, source: str, target: str) -> None:
        """Move a folder on an object store, which has no folders to rename: file by file.

        `hoodie.properties` leaves the source first and reaches the target last, so while
        the files move, each place is either the whole table or no table at all.
        """
        selector = pafs.FileSelector(source, allow_not_found=True, recursive=True)
        files = [i.path for i in self.fs.get_file_info(selector) if i.type == pafs.FileType.File]
        properties = posixpath.join(source, ".hoodie", "hoodie.properties")
        first = [path for path in files if path == properties]
        for path in first + [path for path in files if path != properties]:
            destination = posixpath.join(target, posixpath.relpath(path, source))
            if path == properties:
                destination += ".moving"
            self._move_object(path, destination)
        if first:
            moved = posixpath.join(target, ".hoodie", "hoodie.properties")
            self._move_object(moved + ".moving", moved)
        try:
            self.fs.delete_dir(source)  # the folder markers left behind
        except FileNotFoundError:
            pass


class TracingStorage(Storage):
    """`Storage` that also appends every call (`<operation>[,<flag>=<value>]\t<path>`) to the
    file `trace`, from the driver and from Spark tasks alike: it pickles with its trace file.
    For tests, and for finding out what a write reads and writes."""

    def __init__(self, base_uri: str, trace: str, options: Mapping[str, str] | None = None):
        super().__init__(base_uri, options)
        self.trace = trace

    def __reduce__(self) -> tuple[Callable[..., Storage], tuple[Any, ...]]:
        return (TracingStorage, (self.base_uri, self.trace, self.options))

    def at(self, base_uri: str) -> Storage:
        return TracingStorage(base_uri, self.trace, self.options)

    def _record(self, operation: str, path: str) -> None:
        with open(self.trace, "a") as handle:  # one short line per call: appends stay whole
            handle.write(f"{operation}\t{path}\n")


def _traced(name: str) -> Callable[..., Any]:
    method = getattr(Storage, name)

    def traced(self: TracingStorage, *args: Any, **kwargs: Any) -> Any:
        flags = "".join(f",{k}={v}" for k, v in sorted(kwargs.items()))
        self._record(name + flags, str(args[0]) if args else "")
        return method(self, *args, **kwargs)

    traced.__name__ = traced.__qualname__ = name
    traced.__doc__ = method.__doc__
    return traced


# Every operation of the interface; calls Storage makes on itself are recorded too (a
# `write_atomic` also shows its temporary `write_bytes` and the `move`).
for _name in (
    "exists", "read_bytes", "size", "mtime", "list_files", "list_dirs", "read_parquet",
    "parquet_file", "makedirs", "write_bytes", "write_atomic", "create_if_absent",
    "read_versioned", "replace_if", "write_parquet", "move", "delete", "delete_dir", "swap_in",
):  # fmt: skip
    setattr(TracingStorage, _name, _traced(_name))

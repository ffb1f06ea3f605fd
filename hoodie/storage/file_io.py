"""`FileIO`: what the core does with a table's files, every path relative to its base path.

The floors above storage know this interface only; `hoodie.storage.load_file_io` picks the
implementation from the base URI (a local disk, an object store, any other `pyarrow.fs` file
system). The rules that keep a commit safe live behind it, one implementation per kind of
store: write whole or not at all (`write_atomic`), create only if absent (`create_if_absent`),
replace only if unchanged (`replace_if`). The one rule every implementation shares, that no
path leaves the base path, is here and is not theirs to change (`inside`).
"""

from __future__ import annotations

import os
import posixpath
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from ..exceptions import InvalidConfigError, UnsafePathError
from ..options import storage as storage_options

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

# Which columns a parquet file dictionary-encodes: all (True), or those named.
Dictionary = bool | list[str]

# Options that are credentials: they travel to Spark tasks with the `FileIO`, but are never
# written anywhere (a catalog table stores the others, see `FileIO.shareable_options`).
SECRET_OPTIONS = storage_options.SECRETS


def normalize_uri(base_uri: str) -> str:
    """A base URI in the form the core keeps: local paths absolute without `file:`, other URIs
    without a trailing slash."""
    if "://" not in base_uri and not base_uri.startswith("file:"):
        return os.path.abspath(base_uri)
    if base_uri.startswith("file:"):
        path = base_uri[len("file:") :]
        while path.startswith("//"):
            path = path[1:]
        return os.path.abspath(path)
    return base_uri.rstrip("/")


def check_range(start: int, length: int) -> None:
    """A byte range `read_range` takes: from 0 or later, of 0 or more bytes."""
    if start < 0 or length < 0:
        raise ValueError(f"a byte range starts at 0 or later, of 0 bytes or more: {start}, "
                         f"{length}")  # fmt: skip


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


class FileIO(ABC):
    """A table's base path on some store: every read, write, listing and delete of the core.

    `options` configure the store (for object stores the keyword arguments of the matching
    `pyarrow.fs` class: endpoint_override, region, account_name, ...); without them the URI and
    the store's usual environment decide. A `FileIO` pickles by its URI and options, so Spark
    tasks rebuild it on the executors.
    """

    # A store of objects written whole (S3, Azure, GCS), not a file system with renames.
    is_object_store: ClassVar[bool] = False
    # Can a file be replaced only if unchanged (`replace_if`), so the storage-based lock works.
    has_conditional_writes: ClassVar[bool] = False

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None):
        self.base_uri = normalize_uri(base_uri)
        self.options = dict(options or {})

    def __reduce__(self) -> tuple[Callable[..., FileIO], tuple[Any, ...]]:
        return (type(self), (self.base_uri, self.options))

    def __repr__(self) -> str:
        # never the options: they may hold credentials
        return f"{type(self).__name__}({self.base_uri!r})"

    @property
    def scheme(self) -> str:
        return self.base_uri.split("://", 1)[0] if "://" in self.base_uri else "file"

    @property
    def shareable_options(self) -> dict[str, str]:
        """The options that are no credentials: what may be stored with a catalog table."""
        return {k: v for k, v in self.options.items() if k not in SECRET_OPTIONS}

    def sibling(self, suffix: str) -> FileIO:
        """The base path `<this base path>.<suffix>` on the same store, with the same options:
        where a table is rebuilt before `swap_in` puts it in place."""
        if not suffix or "/" in suffix or "\x00" in suffix or suffix.strip(".") != suffix:
            raise InvalidConfigError(f"not a suffix for a base path beside {self.base_uri}: "
                                     f"{suffix!r}")  # fmt: skip
        return type(self)(f"{self.base_uri}.{suffix}", self.options)

    def subfolder(self, relative: str) -> FileIO:
        """The base path `<this base path>/<relative>` on the same store, with the same options:
        a table nested in this one (the metadata table, `.hoodie/metadata`), read as a table of
        its own. `relative` is checked by `inside` first."""
        relative = self.inside(relative).strip("/")
        if not relative:
            raise UnsafePathError(f"table at {self.base_uri}: no sub-folder named")
        return type(self)(posixpath.join(self.base_uri, relative), self.options)

    def inside(self, relative: str) -> str:
        """`relative`, checked to stay under the base path: not absolute, no `..` segment,
        no NUL. Paths come from data (partition values) and from the table's metadata
        (commit metadata, plans, markers), which a crafted table controls: this one check,
        made by every implementation before it touches a file, keeps every read, write and
        delete of the core inside the table."""
        if relative.startswith("/") or "\x00" in relative or ".." in relative.split("/"):
            raise UnsafePathError(
                f"table at {self.base_uri}: the path {relative!r} (from the table's metadata "
                "or data) would lead outside the table's base path; nothing was read, written "
                "or deleted there. The table's metadata names files it cannot hold: restore "
                "it from a copy, or roll back the instant that names them"
            )
        return relative

    def read_text(self, relative: str) -> str:
        return self.read_bytes(relative).decode("utf-8")

    # -- paths ---------------------------------------------------------------------------------
    @abstractmethod
    def uri(self, relative: str = "") -> str:
        """The path as Spark and other engines want it (a URI with a scheme)."""

    @abstractmethod
    def relative(self, path: str) -> str:
        """A path under the base path, given as a URI (`file:/...`, `s3://...`) or relative;
        refused (`UnsafePathError`) when it is not under the base path. Hudi's Avro metadata
        (rollback, clean) records absolute paths, with or without scheme."""

    # -- reading -------------------------------------------------------------------------------
    @abstractmethod
    def exists(self, relative: str) -> bool: ...

    @abstractmethod
    def read_bytes(self, relative: str) -> bytes:
        """The whole file, as one version of it (`FileNotFoundError` when there is none)."""

    @abstractmethod
    def read_range(self, relative: str, start: int, length: int) -> bytes:
        """The file's bytes from `start` (>= 0), `length` of them, in one request where the store
        takes ranged reads (object stores' ranged GET): fewer where the file ends first, none
        from past its end (`FileNotFoundError` when there is no file). How a reader takes a few
        blocks of a large file (an HFile's index, then the blocks its keys fall in) without
        reading the rest."""

    @abstractmethod
    def size(self, relative: str) -> int: ...

    @abstractmethod
    def mtime(self, relative: str) -> datetime | None:
        """When the file was last modified (None when the store does not say)."""

    @abstractmethod
    def list_files(self, relative: str = "", *, recursive: bool = False) -> list[FileInfo]:
        """Files (not folders) under a folder; empty when the folder does not exist."""

    @abstractmethod
    def list_dirs(self, relative: str = "") -> list[str]: ...

    @abstractmethod
    def read_parquet(self, relative: str, columns: list[str] | None = None) -> pa.Table:
        """A parquet file's rows (its page checksums verified where it has them)."""

    @abstractmethod
    def parquet_file(self, relative: str, footer: pq.FileMetaData | None = None) -> pq.ParquetFile:
        """A parquet file opened for reading its footer, columns or row groups in batches.
        `footer`: the file's footer as an earlier open of it parsed it (`.metadata`), not
        parsed again: a base file's footer holds a bloom filter of ~431 KB, ~1-2 ms to parse,
        which a write task rewriting thousands of small files paid twice for each."""

    @abstractmethod
    def read_versioned(self, relative: str) -> tuple[bytes, str] | None:
        """The file's bytes and a version to pass to `replace_if`; None if there is none."""

    # -- writing -------------------------------------------------------------------------------
    @abstractmethod
    def makedirs(self, relative: str) -> None: ...

    @abstractmethod
    def write_bytes(self, relative: str, data: bytes) -> None:
        """Write the file (its folder made if needed); readers may see it partly written."""

    @abstractmethod
    def write_atomic(self, relative: str, data: bytes) -> None:
        """Write so that readers see either no file or the whole file, never a part of it."""

    @abstractmethod
    def create_if_absent(self, relative: str, data: bytes) -> bool:
        """Atomically create a file holding all of `data`, only if none exists; False when one
        already did. Of two writers racing for one name, exactly one creates it where the
        store can tell (see each implementation)."""

    @abstractmethod
    def replace_if(self, relative: str, data: bytes, version: str | None) -> str | None:
        """Write the file whole, only if it is still at `version` (None: only if it does not
        exist); its new version, or None when another writer changed it first."""

    @abstractmethod
    def write_parquet(
        self,
        relative: str,
        table: pa.Table,
        compression: str,
        dictionary: Dictionary = True,
        footer: Mapping[bytes, bytes] | None = None,
        written: list[Any] | None = None,
    ) -> int:
        """Write `table` as the parquet file `relative` (its folder made if needed); its size.
        `dictionary`: the columns to dictionary-encode (True: all). `footer`: key-value
        metadata for the footer alone (a base file's bloom filter, hundreds of kilobytes),
        not also inside the Arrow schema pyarrow stores there, as `table`'s metadata is.
        `written`: gets the file's footer (pyarrow's `FileMetaData`) appended, for the
        column statistics the metadata table keeps, without reading the file back."""

    @abstractmethod
    def move(self, source: str, target: str) -> None: ...

    @abstractmethod
    def delete(self, relative: str) -> None:
        """Delete the file; nothing happens when there is none."""

    @abstractmethod
    def delete_dir(self, relative: str = "") -> None: ...

    @abstractmethod
    def swap_in(self, other: FileIO) -> None:
        """Replace this base path's contents with `other`'s (a `sibling` of this one): a
        failure midway leaves one complete table under one of the two names."""

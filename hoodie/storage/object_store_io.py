"""`ObjectStoreFileIO`: a table on S3, Azure Blob Storage / ADLS or GCS.

Objects are written whole and appear when complete, so a plain upload is already atomic;
there are no renames (a move copies, then deletes) and no folders. Exclusive creates and
compare-and-swap come from the store's conditional writes (`hoodie.storage.object_store`,
through obstore); bulk reads, listings and parquet go through the store's `pyarrow.fs` file
system, configured from the same options.
"""

from __future__ import annotations

import posixpath

import pyarrow.fs as pafs

from . import object_store
from .pyarrow_io import PyArrowFileIO


class ObjectStoreFileIO(PyArrowFileIO):
    """A base path in an object store's bucket or container."""

    is_object_store = True
    has_conditional_writes = True

    def read_bytes(self, relative: str) -> bytes:
        """One GET of one version of the object: pyarrow's stream asks for the size first and
        then for that many bytes, which fails (or cuts the object short) when a writer
        replaces it in between, as heartbeats are replaced."""
        current = object_store.read_versioned(self.uri(relative), self.options)
        if current is None:
            raise FileNotFoundError(self.uri(relative))
        return current[0]

    def read_range(self, relative: str, start: int, length: int) -> bytes:
        """One ranged GET (obstore's `get_range`), no size asked first."""
        return object_store.read_range(self.uri(relative), self.options, start, length)

    def read_versioned(self, relative: str) -> tuple[bytes, str] | None:
        return object_store.read_versioned(self.uri(relative), self.options)

    def write_atomic(self, relative: str, data: bytes) -> None:
        """An upload is atomic already: the object appears when it is complete."""
        self.write_bytes(relative, data)

    def create_if_absent(self, relative: str, data: bytes) -> bool:
        """The store refuses the second of two racing creates itself (`If-None-Match: *`,
        GCS's generation-0 precondition)."""
        return object_store.create_if_absent(self.uri(relative), data, self.options)

    def replace_if(self, relative: str, data: bytes, version: str | None) -> str | None:
        """The store decides (`If-Match` / `If-None-Match`, GCS's generation match)."""
        return object_store.replace_if(self.uri(relative), data, self.options, version)

    def move(self, source: str, target: str) -> None:
        """Copy, then delete (Azure accounts without a hierarchical namespace have no rename)."""
        self._move_object(self.full_path(source), self.full_path(target))

    def delete(self, relative: str) -> None:
        object_store.delete(self.uri(relative), self.options)

    def _move_object(self, path: str, destination: str) -> None:
        """Copy, then delete: paths are the file system's (`bucket/key`), and may lie
        outside the base path (a table moved aside)."""
        self.fs.copy_file(path, destination)
        authority = self.base_uri.split("://", 1)[1].split("/", 1)[0]
        object_store.delete(f"{self.scheme}://{authority}/{path.split('/', 1)[1]}", self.options)

    def _move_folder(self, source: str, target: str) -> None:
        """File by file, as a store has no folders to rename. `hoodie.properties` leaves the
        source first and reaches the target last, so while the files move, each place is
        either the whole table or no table at all; readers meanwhile find no table at this
        base path (never a mix of the two)."""
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

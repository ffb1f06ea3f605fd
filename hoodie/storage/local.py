"""`LocalFileIO`: a table on a local disk (or a shared file system mounted as one).

A local disk has what an object store gives by conditional writes: an exclusive create (a
hard link fails when the name exists) and an advisory lock (`flock`) for compare-and-swap
among one machine's processes. It also carries Hadoop's checksum files beside the files
Apache Hudi wrote, which must go when we replace or delete a file.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import posixpath
import uuid
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from ..faults import crash_point
from .file_io import check_range
from .pyarrow_io import PyArrowFileIO


def _create_exclusive(path: str, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return True


# Threads deleting a folder's files (`LocalFileIO.delete_dir`): each mostly waits on the disk.
_DELETING_THREADS = 8


def _shares(paths: list[str]) -> list[list[str]]:
    """`paths` in one share per deleting thread."""
    return [paths[i::_DELETING_THREADS] for i in range(_DELETING_THREADS)]


def _delete_files(paths: list[str]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _delete_folders(paths: list[str]) -> None:
    for path in paths:
        try:
            os.rmdir(path)
        except OSError:
            pass  # gone, or something was written into it meanwhile: the last pass deletes it


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class LocalFileIO(PyArrowFileIO):
    """A base path on the local file system."""

    has_conditional_writes = True

    def uri(self, relative: str = "") -> str:
        return "file://" + self.full_path(relative)

    def create_if_absent(self, relative: str, data: bytes) -> bool:
        """The bytes are first written under a temporary name, then hard-linked under their
        own (`link` fails when the name exists, as `O_EXCL` does). So a crash never leaves the
        file empty or half-written: a requested compaction, clean or rollback always holds its
        whole plan, and a torn one would stop every later write that reads the plans."""
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

    def read_range(self, relative: str, start: int, length: int) -> bytes:
        """`pread` on the file: one system call, no file system object in between."""
        check_range(start, length)
        fd = os.open(self.full_path(relative), os.O_RDONLY)
        try:
            out = bytearray()
            while len(out) < length:
                chunk = os.pread(fd, length - len(out), start + len(out))
                if not chunk:
                    break
                out += chunk
            return bytes(out)
        finally:
            os.close(fd)

    def delete_dir(self, relative: str = "") -> None:
        """The folder and everything in it; its files, then its folders deepest first, are
        deleted by several threads. Each deletion waits on the disk (on a virtual machine's
        disk about a millisecond), so one thread took 84 s for the marker folder of a write
        into 50,000 partitions (a marker in a folder per partition), eight about a tenth."""
        top = self.full_path(relative)
        files: list[str] = []
        folders: dict[int, list[str]] = defaultdict(list)  # depth -> folders
        for folder, _, names in os.walk(top):
            files += [os.path.join(folder, name) for name in names]
            folders[folder.count(os.sep)].append(folder)
        if not folders:
            return  # no such folder
        with ThreadPoolExecutor(max_workers=_DELETING_THREADS) as pool:
            list(pool.map(_delete_files, _shares(files)))
            for depth in sorted(folders, reverse=True):
                list(pool.map(_delete_folders, _shares(folders[depth])))
        super().delete_dir(relative)  # whatever appeared meanwhile

    def read_versioned(self, relative: str) -> tuple[bytes, str] | None:
        """A version is a digest of the bytes (the lock's records differ in holder and time,
        so a version never comes back)."""
        try:
            data = self.read_bytes(relative)
        except FileNotFoundError:
            return None
        return data, _version(data)

    def replace_if(self, relative: str, data: bytes, version: str | None) -> str | None:
        """The check and the write happen under an exclusive `flock` of a guard file beside
        it, which every process of the machine takes for this file."""
        path = self.full_path(relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(f"{path}.guard", "ab") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)  # released when the guard closes
            current = self.read_versioned(relative)
            if (current[1] if current is not None else None) != version:
                return None
            self.write_atomic(relative, data)
        return _version(data)

    def _written(self, relative: str) -> None:
        """Delete Hadoop's checksum file of `relative` (`.name.crc` beside it).

        Apache Hudi writes local tables through Hadoop's checksummed local file system, which
        leaves one such file per file it writes and verifies it on every read: a file we
        replace (`hoodie.properties` above all) with its old checksum beside it is a file
        Apache Hudi can no longer read ("Could not load Hoodie properties"). Hadoop itself
        replaces or deletes the checksum with its file; so do we.
        """
        folder, name = posixpath.split(self.inside(relative))
        try:
            os.unlink(self.full_path(posixpath.join(folder, f".{name}.crc")))
        except FileNotFoundError:
            pass

"""`TracingFileIO`: any `FileIO` that also appends every call to a trace file.

For tests, and for finding out what a write reads and writes: each call of the interface is
one line, `<operation>[,<flag>=<value>]\t<path>`, from the driver and from Spark tasks alike
(it pickles with its trace file). Calls an implementation makes on itself are not recorded:
a `write_atomic` is one line, whatever temporary file and rename it takes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .file_io import FileIO

# The operations recorded: every method of the interface that takes a path.
TRACED = frozenset({
    "exists", "read_bytes", "read_range", "read_text", "size", "mtime", "list_files", "list_dirs",
    "read_parquet", "parquet_file", "read_versioned", "makedirs", "write_bytes",
    "write_atomic", "create_if_absent", "replace_if", "write_parquet", "move", "delete",
    "delete_dir", "swap_in",
})  # fmt: skip


class TracingFileIO:
    """Wraps `inner`: attributes read through, calls of `TRACED` operations recorded first."""

    def __init__(self, inner: FileIO, trace: str):
        self._inner = inner
        self._trace = trace

    def __reduce__(self) -> tuple[Callable[..., TracingFileIO], tuple[Any, ...]]:
        return (TracingFileIO, (self._inner, self._trace))

    def __repr__(self) -> str:
        return f"TracingFileIO({self._inner!r})"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_inner", "_trace"):
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if name not in TRACED:
            return value

        def traced(*args: Any, **kwargs: Any) -> Any:
            flags = "".join(f",{k}={v}" for k, v in sorted(kwargs.items()))
            with open(self._trace, "a") as handle:  # one short line per call: appends stay whole
                handle.write(f"{name}{flags}\t{args[0] if args else ''}\n")
            return value(*args, **kwargs)

        return traced


FileIO.register(TracingFileIO)

"""`CountingFileIO`: a local `FileIO` that counts what is read, for tests that assert how much
of a file a reader takes (ranged HFile reads, record index lookups)."""

from __future__ import annotations

from hoodie.storage import LocalFileIO


class CountingFileIO(LocalFileIO):
    """Counts `read_range` requests and bytes, and whole-file reads (`read_bytes`), per file
    (relative path) and in all."""

    def __init__(self, base_uri: str, options=None):
        super().__init__(base_uri, options)
        self.reset()

    def reset(self) -> None:
        """Forget what was read (in place: nested tables' `FileIO`s share the lists)."""
        if not hasattr(self, "ranges"):
            self.ranges: list[tuple[str, int, int]] = []  # (relative, start, bytes returned)
            self.whole: list[tuple[str, int]] = []  # (relative, bytes)
        self.ranges.clear()
        self.whole.clear()

    def read_range(self, relative: str, start: int, length: int) -> bytes:
        data = super().read_range(relative, start, length)
        self.ranges.append((relative, start, len(data)))
        return data

    def read_bytes(self, relative: str) -> bytes:
        data = super().read_bytes(relative)
        self.whole.append((relative, len(data)))
        return data

    def subfolder(self, relative: str) -> CountingFileIO:
        """A nested table's `FileIO` that counts into this one's lists."""
        nested = super().subfolder(relative)
        assert isinstance(nested, CountingFileIO)
        nested.ranges, nested.whole = self.ranges, self.whole
        return nested

    def bytes_read(self, relative: str | None = None) -> int:
        """Bytes read by ranges and whole (of one file, or of all)."""
        ranges = sum(n for path, _, n in self.ranges if relative in (None, path))
        return ranges + sum(n for path, n in self.whole if relative in (None, path))

    def requests(self, relative: str | None = None) -> int:
        return sum(1 for path, _, _ in self.ranges if relative in (None, path)) + sum(
            1 for path, _ in self.whole if relative in (None, path)
        )

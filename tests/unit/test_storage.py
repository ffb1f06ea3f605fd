"""Local storage: atomic writes, exclusive creates, listings, pickling."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.exceptions import InvalidConfigError, UnsafePathError
from hoodie.storage import (
    FileInfo,
    FileIO,
    LocalFileIO,
    ObjectStoreFileIO,
    PyArrowFileIO,
    TracingFileIO,
    load_file_io,
)


@pytest.fixture
def storage(tmp_path):
    return load_file_io(str(tmp_path))


def test_base_uri_forms(tmp_path):
    for uri in (str(tmp_path), f"file://{tmp_path}", f"file:{tmp_path}", f"{tmp_path}/"):
        storage = load_file_io(uri)
        assert storage.base_uri == str(tmp_path)
        assert storage.base_path == str(tmp_path)
        assert isinstance(storage, LocalFileIO)
        assert storage.uri("a/b") == f"file://{tmp_path}/a/b"
        assert storage.full_path() == str(tmp_path)


def test_write_atomic_creates_and_replaces(storage, tmp_path):
    storage.write_atomic("a/b/file.txt", b"one")
    assert (tmp_path / "a" / "b" / "file.txt").read_bytes() == b"one"
    storage.write_atomic("a/b/file.txt", b"two")
    assert storage.read_bytes("a/b/file.txt") == b"two"
    assert storage.read_text("a/b/file.txt") == "two"
    # No temporary file is left behind.
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["file.txt"]


def test_write_atomic_top_level(storage, tmp_path):
    storage.write_atomic("top.json", b"{}")
    assert [p.name for p in tmp_path.iterdir()] == ["top.json"]


def test_create_if_absent(storage, tmp_path):
    assert storage.create_if_absent(".hoodie/1.commit.requested", b"first") is True
    assert storage.create_if_absent(".hoodie/1.commit.requested", b"second") is False
    assert (tmp_path / ".hoodie" / "1.commit.requested").read_bytes() == b"first"
    assert storage.exists(".hoodie/1.commit.requested")
    # The bytes were staged under another name, which is gone (test_service_crashes kills a
    # writer between staging and creating).
    assert [p.name for p in (tmp_path / ".hoodie").iterdir()] == ["1.commit.requested"]


def test_create_if_absent_without_hard_links(storage, tmp_path, monkeypatch):
    def no_links(*_):
        raise PermissionError("hard links not supported")

    monkeypatch.setattr("os.link", no_links)
    assert storage.create_if_absent("a/f", b"first") is True
    assert storage.create_if_absent("a/f", b"second") is False
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["f"]
    assert storage.read_bytes("a/f") == b"first"


def test_create_if_absent_after_write(storage):
    storage.write_bytes("x", b"data")
    assert storage.create_if_absent("x", b"other") is False
    assert storage.read_bytes("x") == b"data"


def test_exists_size_delete(storage):
    assert not storage.exists("nope")
    storage.write_bytes("d/f.bin", b"12345")
    assert storage.exists("d/f.bin")
    assert storage.exists("d")
    assert storage.size("d/f.bin") == 5
    storage.delete("d/f.bin")
    assert not storage.exists("d/f.bin")
    storage.delete("d/f.bin")  # deleting a missing file is fine
    storage.delete_dir("d")
    assert not storage.exists("d")
    storage.delete_dir("d")


def test_list_files_relative_paths(storage):
    storage.write_bytes("top.txt", b"1")
    storage.write_bytes("p1/a.parquet", b"22")
    storage.write_bytes("p1/sub/b.parquet", b"333")
    storage.write_bytes(".hoodie/hoodie.properties", b"4444")
    storage.makedirs("empty/dir")

    top = storage.list_files()
    assert top == [FileInfo("top.txt", 1)]
    assert sorted(storage.list_files("p1"), key=lambda f: f.relative_path) == [
        FileInfo("p1/a.parquet", 2)
    ]
    everything = sorted(storage.list_files("", recursive=True), key=lambda f: f.relative_path)
    assert everything == [
        FileInfo(".hoodie/hoodie.properties", 4),
        FileInfo("p1/a.parquet", 2),
        FileInfo("p1/sub/b.parquet", 3),
        FileInfo("top.txt", 1),
    ]
    sub = storage.list_files("p1/sub")[0]
    assert (sub.name, sub.parent, sub.size) == ("b.parquet", "p1/sub", 3)
    assert storage.list_files("missing") == []
    assert sorted(storage.list_dirs()) == [".hoodie", "empty", "p1"]
    assert storage.list_dirs("p1") == ["p1/sub"]
    assert storage.list_dirs("missing") == []


def test_storage_pickles(storage, tmp_path):
    storage.write_bytes("f", b"x")
    clone = pickle.loads(pickle.dumps(storage))
    assert isinstance(clone, FileIO)
    assert clone.base_uri == storage.base_uri == str(tmp_path)
    assert clone.base_path == storage.base_path
    assert clone.read_bytes("f") == b"x"
    assert type(clone) is LocalFileIO
    assert repr(clone) == f"LocalFileIO({str(tmp_path)!r})"


def test_storage_pickles_from_file_uri(tmp_path):
    storage = load_file_io(f"file://{tmp_path}")
    clone = pickle.loads(pickle.dumps(storage))
    assert clone.base_uri == str(tmp_path)


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("/tmp/t", LocalFileIO),
        ("file:///tmp/t", LocalFileIO),
        ("s3://bucket/t", ObjectStoreFileIO),  # (a region: no lookup over the network)
        ("gs://bucket/t", ObjectStoreFileIO),
        ("abfss://container@account.dfs.core.windows.net/t", ObjectStoreFileIO),
        ("mock:///bucket/t", PyArrowFileIO),
    ],
)
def test_the_loader_picks_the_implementation_by_scheme(uri, kind):
    io = load_file_io(uri, {"region": "us-east-1"} if uri.startswith("s3") else None)
    assert type(io) is kind
    assert io.is_object_store is (kind is ObjectStoreFileIO)
    assert io.has_conditional_writes is (kind is not PyArrowFileIO)
    assert type(pickle.loads(pickle.dumps(io))) is kind


def test_a_file_system_without_conditional_writes_refuses_them_and_creates_by_checking():
    io = load_file_io("mock:///bucket/t")
    assert io.create_if_absent("d/a", b"1") and not io.create_if_absent("d/a", b"2")
    assert io.read_bytes("d/a") == b"1"
    with pytest.raises(InvalidConfigError, match="no conditional writes.*lock.provider"):
        io.replace_if("d/a", b"3", None)
    with pytest.raises(InvalidConfigError, match="no conditional writes"):
        io.read_versioned("d/a")


def test_a_local_replace_if_is_compare_and_swap(storage):
    first = storage.replace_if("lock", b"one", None)
    assert first is not None and storage.replace_if("lock", b"x", None) is None
    second = storage.replace_if("lock", b"two", first)
    assert second is not None and storage.replace_if("lock", b"x", first) is None
    assert storage.read_versioned("lock") == (b"two", second)


def test_a_table_rebuilt_beside_is_swapped_in_whole(storage, tmp_path):
    storage.write_bytes("old/data", b"old")
    beside = storage.sibling("rebuild-1")
    assert beside.base_uri == f"{tmp_path}.rebuild-1" and type(beside) is LocalFileIO
    beside.write_bytes("new/data", b"new")
    storage.swap_in(beside)
    assert [f.relative_path for f in storage.list_files(recursive=True)] == ["new/data"]
    assert not beside.exists("") and not any(
        p.name.startswith(f"{tmp_path.name}.") for p in tmp_path.parent.iterdir()
    )


@pytest.mark.parametrize("suffix", ["", "a/b", "..", ".hidden", "x\x00"])
def test_a_sibling_stays_beside_the_base_path(storage, suffix):
    with pytest.raises(InvalidConfigError, match="not a suffix"):
        storage.sibling(suffix)


def test_every_implementation_keeps_paths_inside(tmp_path):
    for io in (load_file_io(str(tmp_path)), load_file_io("mock:///bucket/t")):
        for path in ("../x", "/etc/passwd", "a/../../x"):
            with pytest.raises(UnsafePathError):
                io.write_bytes(path, b"x")
            with pytest.raises(UnsafePathError):
                io.uri(path)
        with pytest.raises(UnsafePathError):
            io.relative("file:///etc/passwd" if isinstance(io, LocalFileIO) else "mock:///other/x")


def test_a_subfolder_is_a_table_nested_inside(tmp_path):
    """The metadata table (`.hoodie/metadata`) opens as a table of its own: a FileIO whose
    base path is a sub-folder of the table's, the same store and options; a path leading
    out of the table is refused as every path is."""
    for io in (load_file_io(str(tmp_path)), load_file_io("mock:///bucket/t")):
        nested = io.subfolder(".hoodie/metadata")
        assert type(nested) is type(io) and nested.options == io.options
        assert nested.uri("files/x.hfile") == io.uri(".hoodie/metadata/files/x.hfile")
        for path in ("../x", "/etc", "a/../../x", "", "/"):
            with pytest.raises(UnsafePathError):
                io.subfolder(path)
    local = load_file_io(str(tmp_path))
    local.write_bytes(".hoodie/metadata/files/f", b"abc")
    assert local.subfolder(".hoodie/metadata").read_bytes("files/f") == b"abc"


def test_tracing_records_each_call_and_is_a_file_io(tmp_path):
    trace = tmp_path / "io.trace"
    io = TracingFileIO(load_file_io(str(tmp_path / "t")), str(trace))
    assert isinstance(io, FileIO)
    io.write_atomic("d/a", b"1")
    assert io.read_bytes("d/a") == b"1" and io.base_uri == str(tmp_path / "t")
    clone = pickle.loads(pickle.dumps(io))
    clone.list_files(recursive=True)
    assert trace.read_text().splitlines() == ["write_atomic\td/a", "read_bytes\td/a",
                                              "list_files,recursive=True\t"]  # fmt: skip


def _statistics(path) -> dict[str, bool]:
    """Parquet column path -> whether its (only) row group carries min/max."""
    metadata = pq.ParquetFile(path).metadata.row_group(0)
    return {
        metadata.column(i).path_in_schema: bool(
            metadata.column(i).statistics and metadata.column(i).statistics.has_min_max
        )
        for i in range(metadata.num_columns)
    }


def test_parquet_files_carry_no_min_max_for_a_float_column_holding_nan(storage, tmp_path):
    """pyarrow leaves NaN out of min/max, which Spark's parquet row-group filter takes as the
    bounds of every value (a `x > 5` would skip a NaN row Spark matches): columns holding a
    NaN, however nested, are written without statistics; every other column keeps them."""
    nan = float("nan")
    table = pa.table(
        {
            "id": ["a", "b"],
            "x": [nan, 1.0],
            "y": pa.array([1.5, 2.5], pa.float32()),
            "s": pa.array([{"f": 1.0, "g": nan}, {"f": 2.0, "g": 0.0}]),
            "l": pa.array([[1.0, nan], []], pa.list_(pa.float64())),
            "m": pa.array([[("k", nan)], [("j", 1.0)]], pa.map_(pa.string(), pa.float64())),
        }
    )
    storage.write_parquet("nan.parquet", table, "snappy")
    assert _statistics(tmp_path / "nan.parquet") == {
        "id": True,
        "x": False,
        "y": True,
        "s.f": True,
        "s.g": False,
        "l.list.element": False,
        "m.key_value.key": True,
        "m.key_value.value": False,
    }
    clean = pa.table({name: table[name] for name in ("id", "y")}).append_column(
        "l", pa.array([[1.0, 2.0], []], pa.list_(pa.float64()))
    )
    storage.write_parquet("clean.parquet", clean, "snappy")
    written = _statistics(tmp_path / "clean.parquet")
    assert written == dict.fromkeys(("id", "y", "l.list.element"), True)

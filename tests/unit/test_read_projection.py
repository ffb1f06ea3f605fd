"""Reads that name their columns open only those columns' chunks of the files."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hoodie.merge import MergeMode
from hoodie.read.planner import FileSplit
from hoodie.read.slice_reader import SliceReadSpec, read_slice
from hoodie.schema import COMMIT_TIME, META_SCHEMA, RECORD_KEY
from hoodie.storage import FileIO, load_file_io


def _data(rows: int) -> pa.Table:
    keys = [f"k{i:06d}" for i in range(rows)]
    meta = {f.name: pa.array([None] * rows, f.type) for f in META_SCHEMA}
    meta[RECORD_KEY] = pa.array(keys)
    meta[COMMIT_TIME] = pa.array(["20260101000000000" if i % 2 else "20260102000000000"
                                  for i in range(rows)])  # fmt: skip
    return pa.table(
        {
            **meta,
            "id": pa.array(range(rows), pa.int64()),
            "wide": pa.array([f"{i:08d}" * 40 for i in range(rows)]),
            "amount": pa.array([i / 4 for i in range(rows)], pa.float64()),
        }
    )


def _spec(storage: FileIO, schema: pa.Schema, full: pa.Schema | None = None, **kw):
    return SliceReadSpec(
        storage=storage,
        schema=schema,
        record_key_fields=("id",),
        merge_mode=MergeMode.commit_time(),
        valid_instants=frozenset(),
        merge_schema=full,
        **kw,
    )


def _rows(batches) -> pa.Table:
    batches = list(batches)
    return pa.Table.from_batches(batches) if batches else None


class _CountingHandler(pafs.FileSystemHandler):
    """A local file system that counts the bytes read through it."""

    def __init__(self):
        self.local = pafs.LocalFileSystem()
        self.bytes_read = 0

    def open_input_file(self, path):
        handler = self

        class Counting(io.FileIO):
            def read(self, size=-1):
                data = super().read(size)
                handler.bytes_read += len(data)
                return data

            def readinto(self, buffer):
                count = super().readinto(buffer)
                handler.bytes_read += count or 0
                return count

        return pa.PythonFile(Counting(path, "r"), mode="r")

    # The rest of the interface, delegated.
    def get_type_name(self):
        return "counting"

    def equals(self, other):
        return other is self

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.local.get_file_info(selector)

    def normalize_path(self, path):
        return self.local.normalize_path(path)

    def open_input_stream(self, path):
        return self.open_input_file(path)

    def create_dir(self, path, recursive):
        self.local.create_dir(path, recursive=recursive)

    def delete_dir(self, path):
        self.local.delete_dir(path)

    def delete_dir_contents(self, path, missing_dir_ok=False):
        self.local.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self):
        raise NotImplementedError

    def delete_file(self, path):
        self.local.delete_file(path)

    def move(self, src, dest):
        self.local.move(src, dest)

    def copy_file(self, src, dest):
        self.local.copy_file(src, dest)

    def open_output_stream(self, path, metadata):
        return self.local.open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path, metadata):
        return self.local.open_append_stream(path, metadata=metadata)


def _counting_storage(tmp_path) -> tuple[FileIO, _CountingHandler]:
    storage = load_file_io(str(tmp_path))
    handler = _CountingHandler()
    storage.fs = pafs.PyFileSystem(handler)
    return storage, handler


def test_a_projection_reads_only_its_columns_from_the_file(tmp_path):
    data = _data(5000)
    pq.write_table(data, tmp_path / "f.parquet", compression="none")
    size = (tmp_path / "f.parquet").stat().st_size
    split = FileSplit("", "f", "f.parquet")

    storage, counted = _counting_storage(tmp_path)
    everything = _rows(read_slice(_spec(storage, data.schema), split))
    assert counted.bytes_read >= size * 0.9

    storage, counted = _counting_storage(tmp_path)
    wanted = pa.schema([data.schema.field("amount"), data.schema.field("id")])
    projected = _rows(read_slice(_spec(storage, wanted, data.schema), split))
    assert projected.schema == wanted
    assert projected.to_pydict() == everything.select(["amount", "id"]).to_pydict()
    # The wide string column is ~90% of the file; amount and id are a small share.
    assert counted.bytes_read < size * 0.2, (counted.bytes_read, size)


def test_an_incremental_projection_filters_on_commit_time_it_does_not_return(tmp_path):
    data = _data(100)
    pq.write_table(data, tmp_path / "f.parquet")
    storage = load_file_io(str(tmp_path))
    wanted = pa.schema([data.schema.field("id")])
    spec = _spec(
        storage,
        wanted,
        data.schema,
        commit_time_range=("20260101000000000", "20260102000000000"),
    )
    got = _rows(read_slice(spec, FileSplit("", "f", "f.parquet")))
    assert got.column_names == ["id"]
    assert got.column("id").to_pylist() == list(range(0, 100, 2))

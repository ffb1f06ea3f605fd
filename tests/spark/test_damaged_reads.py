"""Reads that once went wrong in silence: a partition without its metadata file, and a read
whose schema and files came from two timelines."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hoodie import HoodieTable, WriteConfig
from hoodie.read.datasource import HoodieDataSource, register
from hoodie.timeline import Action, Instant, State

SCHEMA = "id int, value string, p string, ts bigint"


def _config(table_type: str) -> WriteConfig:
    return WriteConfig.build("damaged", record_key="id", partition_path="p",
                             precombine_field="ts", table_type=table_type)  # fmt: skip


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_write_into_a_partition_without_its_metadata_file_is_read_and_recreates_it(
    spark, tmp_path, table_type
):
    """The partition's metadata file went missing: its rows are still read (they were hidden
    for good, and every later write into it too), and the next write there creates it again."""
    register(spark)
    path = tmp_path / "t"
    cfg = _config(table_type)
    table = HoodieTable.for_write(str(path), cfg)
    table.upsert(spark.createDataFrame([(1, "one", "a", 1), (2, "two", "b", 1)], SCHEMA), cfg)
    marker = path / "a" / ".hoodie_partition_metadata"
    marker.unlink()

    def rows() -> list[tuple]:
        read = spark.read.format("hoodie").load(str(path)).select("id", "value").collect()
        return sorted((r.id, r.value) for r in read)

    assert rows() == [(1, "one"), (2, "two")]
    table.upsert(spark.createDataFrame([(1, "uno", "a", 2), (3, "three", "a", 2)], SCHEMA), cfg)
    assert marker.exists()
    assert rows() == [(1, "uno"), (2, "two"), (3, "three")]
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(str(path)).read())
    assert sorted(zip(theirs["id"].to_pylist(), theirs["value"].to_pylist())) == rows()


def test_a_read_takes_its_schema_and_its_files_from_one_timeline(spark, tmp_path):
    """Spark asks the data source for the schema, then plans: the table's first commit
    completing in between made the read take the files after it with the schema before it
    (the meta columns only), so it returned rows without the user's columns. Here the commit
    is held back while the schema is taken and completes before the plan."""
    path = tmp_path / "t"
    cfg = _config("COPY_ON_WRITE")
    table = HoodieTable.for_write(str(path), cfg)
    instant = table.upsert(spark.createDataFrame([(1, "one", "a", 1)], SCHEMA), cfg).instant
    completed = path / table.meta_client.instant_path(
        Instant(instant, Action.COMMIT, State.COMPLETED)
    )
    held = Path(f"{completed}.held")
    completed.rename(held)  # the first commit is still running when the schema is taken
    source = HoodieDataSource({"path": str(path)})
    schema = source.schema()
    held.rename(completed)  # ... and completes before the read plans
    reader = source.reader(schema)
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    assert sum(b.num_rows for b in batches) == 0  # the snapshot the schema is of: empty
    # A schema taken after the commit reads it whole.
    source = HoodieDataSource({"path": str(path)})
    reader = source.reader(source.schema())
    rows = pa.Table.from_batches([b for p in reader.partitions() for b in reader.read(p)])
    assert rows.select(["id", "value"]).to_pylist() == [{"id": 1, "value": "one"}]


def test_a_flipped_byte_in_a_base_file_page_fails_both_read_paths(spark, tmp_path):
    """Our base files carry parquet page checksums: a flipped bit inside a data page decoded
    to another value with no error, in our reader and in Spark's parquet scan (`native`)."""
    register(spark)
    path = tmp_path / "t"
    uncompressed = {"hoodie.parquet.compression.codec": "uncompressed"}
    cfg = WriteConfig.build("damaged", record_key="id", partition_path="p",
                            precombine_field="ts", options=uncompressed)  # fmt: skip
    table = HoodieTable.for_write(str(path), cfg)
    rows = [(i, f"value-{i:05d}", "a", 1) for i in range(2000)]
    table.upsert(spark.createDataFrame(rows, SCHEMA), cfg)
    (base,) = path.glob("a/*.parquet")
    data = base.read_bytes()
    assert data.count(b"value-01000") == 1  # uncompressed: the value's bytes in its page
    base.write_bytes(data.replace(b"value-01000", b"value-01004"))
    # (through Spark, the worker's error arrives inside Spark's)
    with pytest.raises(Exception, match=rf"CorruptDataFileError: \S*{base.name}.*is damaged.*CRC"):
        spark.read.format("hoodie").load(str(path)).collect()
    with pytest.raises(Exception, match=rf"(?s){base.name}.*CRC checksum verification failed"):
        table.read(spark, native=True).collect()

"""The `hoodie` Spark data source: `spark.read.format("hoodie").load(path)` and catalog tables.

Planning (which files make up the snapshot) happens once, in the reader's constructor on the
driver; each Spark task then reads its base files with pyarrow and hands Arrow batches to
Spark. PySpark finds this source without registration through the top-level
`pyspark_hoodie` module; `register()` covers sessions whose workers cannot see it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from ..exceptions import InvalidConfigError
from ..schema import META_SCHEMA, normalize_schema
from ..storage import Storage
from ..table import HoodieTable

SOURCE_NAME = "hoodie"
# Spark hands a catalog table's Python data source no options, only the stored schema: the
# table's base path travels as metadata of its first (meta) column.
BASE_PATH_METADATA = "hoodie.base.path"


def _path(options, schema: StructType | None = None) -> str:
    path = options.get("path")
    if not path and schema is not None:
        for struct_field in schema.fields:
            path = (struct_field.metadata or {}).get(BASE_PATH_METADATA)
            if path:
                break
    if not path:
        raise InvalidConfigError(
            "the hoodie data source needs the table's base path: "
            "spark.read.format('hoodie').load('<path>') or CREATE TABLE ... LOCATION '<path>'"
        )
    return path


def snapshot_arrow_schema(table: HoodieTable) -> pa.Schema:
    data = table.schema() or pa.schema([])
    return pa.schema(list(META_SCHEMA) + list(normalize_schema(data)))


@dataclass
class BaseFileSplit(InputPartition):
    """A Spark input partition: base files read by one task."""

    paths: list[str]

    def __init__(self, paths: list[str]):
        super().__init__(paths)
        self.paths = paths


class HoodieDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        return from_arrow_schema(snapshot_arrow_schema(HoodieTable.open(_path(self.options))))

    def reader(self, schema: StructType) -> DataSourceReader:
        return SnapshotReader(_path(self.options, schema), schema)


class SnapshotReader(DataSourceReader):
    """Reads the latest committed base file of every file group (copy-on-write snapshot)."""

    def __init__(self, path: str, schema: StructType):
        table = HoodieTable.open(path)
        self.storage = table.storage
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")
        self.files = [f.relative_path for f in table.file_system_view().latest_base_files()]

    def partitions(self) -> list[InputPartition]:
        if not self.files:
            return [BaseFileSplit([])]
        return [BaseFileSplit([path]) for path in self.files]

    def read(self, partition: BaseFileSplit):
        for relative in partition.paths:
            yield from read_base_file(self.storage, relative, self.arrow_schema)


def read_base_file(storage: Storage, relative: str, schema: pa.Schema):
    """Arrow batches of one base file, conformed to `schema` (missing columns read as null)."""
    parquet = pq.ParquetFile(storage.full_path(relative), filesystem=storage.fs)
    present = set(parquet.schema_arrow.names)
    columns = [f.name for f in schema if f.name in present]
    for batch in parquet.iter_batches(columns=columns, batch_size=65536):
        arrays = []
        for field in schema:
            if field.name in present:
                arrays.append(batch.column(field.name).cast(field.type))
            else:
                arrays.append(pa.nulls(batch.num_rows, field.type))
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def catalog_schema(table: HoodieTable) -> StructType:
    """The schema to store with a catalog table: the snapshot's, carrying the base path."""
    schema = from_arrow_schema(snapshot_arrow_schema(table))
    first = schema.fields[0]
    first.metadata = {**(first.metadata or {}), BASE_PATH_METADATA: table.storage.uri()}
    return schema


def register(spark) -> None:
    """Register the source in `spark` (harmless when static registration already did)."""
    spark.dataSource.register(HoodieDataSource)

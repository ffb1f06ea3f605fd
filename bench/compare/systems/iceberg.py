"""Apache Iceberg through pyiceberg: pure Python + pyarrow, a local SQL catalog (sqlite).

The table is partitioned by identity(event_date). Upserts are `Table.upsert(batch,
join_cols=["id"])`; deletes are `Table.delete(In("id", keys))`, both copy-on-write (pyiceberg
writes no delete files). pyiceberg finds the matching rows by scanning with a filter of every
key in the batch, so it may be slow at scale: the runner caps each step's time and records
"did not finish" rather than failing the run.
"""

from __future__ import annotations

import pyarrow as pa

from . import System, read_inputs

IDENTIFIER = ("bench", "fact")


class PyIceberg(System):
    name = "pyiceberg"
    description = "pyiceberg upsert, sqlite catalog (Python)"

    def open(self) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        self.table_dir.mkdir(parents=True, exist_ok=True)
        self.catalog = SqlCatalog(
            "bench",
            uri=f"sqlite:///{self.root / 'catalog.db'}",
            warehouse=self.table_dir.as_uri(),
        )
        self.table = None

    def versions(self) -> dict:
        import pyiceberg

        return {"pyiceberg": pyiceberg.__version__}

    def create(self, files: list[str]) -> None:
        data = read_inputs(files)
        self.catalog.create_namespace_if_not_exists(IDENTIFIER[0])
        table = self.catalog.create_table(IDENTIFIER, schema=data.schema)
        with table.update_spec() as spec:
            spec.add_identity("event_date")
        self.table = self.catalog.load_table(IDENTIFIER)
        self.table.append(data)

    def upsert(self, files: list[str]) -> None:
        self.result = self.table.upsert(read_inputs(files), join_cols=["id"])

    def delete(self, files: list[str]) -> None:
        from pyiceberg.expressions import In

        keys = read_inputs(files)["id"].to_pylist()
        self.table.delete(In("id", keys))

    def details(self, step: str, before: dict[str, int]) -> dict:
        result, self.result = getattr(self, "result", None), None
        if result is None:
            return {}
        return {"updates": result.rows_updated, "inserts": result.rows_inserted}

    def _scan(self, date: str | None = None, row_filter=None):
        from pyiceberg.expressions import EqualTo

        self.table = self.catalog.load_table(IDENTIFIER)
        if date is not None:
            row_filter = EqualTo("event_date", date)
        if row_filter is None:
            return self.table.scan()
        return self.table.scan(row_filter=row_filter)

    def point_read(self, key: int) -> None:
        from pyiceberg.expressions import EqualTo

        self._scan(row_filter=EqualTo("id", int(key))).to_arrow()

    def point_read_rows(self, key: int, columns: list[str]) -> pa.Table:
        from pyiceberg.expressions import EqualTo

        return self._scan(row_filter=EqualTo("id", int(key))).select(*columns).to_arrow()

    def filter_rows(self, column: str, above: float) -> None:
        from pyiceberg.expressions import GreaterThan

        self._scan(row_filter=GreaterThan(column, float(above))).to_arrow()

    def filter_result(self, column: str, above: float, columns: list[str]) -> pa.Table:
        from pyiceberg.expressions import GreaterThan

        scan = self._scan(row_filter=GreaterThan(column, float(above)))
        return scan.select(*columns).to_arrow()

    def scan(self) -> None:
        self._scan().to_arrow()

    def scan_partition(self, date: str) -> None:
        self._scan(date).to_arrow()

    def count_partition(self, date: str) -> int:
        return self._scan(date).to_arrow().num_rows

    def read_check(self, columns: list[str]) -> pa.Table:
        return self._scan().select(*columns).to_arrow()

"""Delta Lake through delta-rs (`deltalake` on PyPI): Rust, no JVM, in this process.

Upserts are one `MERGE` (`when_matched_update_all` + `when_not_matched_insert_all`) and the
deletes one `MERGE ... when_matched_delete`. The merge predicate names the partition column
as well as the key: delta-rs then reads only the partitions the batch touches, which is what a
user of a date-partitioned Delta table writes (and what Hudi's partitioned key gives us too).
Default writer settings; no OPTIMIZE or VACUUM between batches.
"""

from __future__ import annotations

import pyarrow as pa

from . import System, read_inputs

PREDICATE = "t.id = s.id AND t.event_date = s.event_date"


class DeltaLake(System):
    name = "deltalake"
    description = "delta-rs MERGE (Rust, no Spark)"

    def versions(self) -> dict:
        import deltalake

        return {"deltalake": deltalake.__version__}

    def _table(self):
        from deltalake import DeltaTable

        return DeltaTable(str(self.table_dir))

    def _merge(self, source: pa.Table):
        return self._table().merge(
            source=source, predicate=PREDICATE, source_alias="s", target_alias="t"
        )

    def create(self, files: list[str]) -> None:
        from deltalake import write_deltalake

        write_deltalake(str(self.table_dir), read_inputs(files), partition_by=["event_date"])

    def upsert(self, files: list[str]) -> None:
        self.metrics = (
            self._merge(read_inputs(files))
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute()
        )

    def delete(self, files: list[str]) -> None:
        self.metrics = self._merge(read_inputs(files)).when_matched_delete().execute()

    def details(self, step: str, before: dict[str, int]) -> dict:
        metrics = getattr(self, "metrics", None) or {}
        keep = (
            "num_target_rows_inserted",
            "num_target_rows_updated",
            "num_target_rows_deleted",
            "num_target_files_added",
            "num_target_files_removed",
        )
        self.metrics = None
        return {k: metrics[k] for k in keep if k in metrics}

    def scan(self) -> None:
        self._table().to_pyarrow_table()

    def scan_partition(self, date: str) -> None:
        self._table().to_pyarrow_table(partitions=[("event_date", "=", date)])

    def count_partition(self, date: str) -> int:
        return self._table().to_pyarrow_table(partitions=[("event_date", "=", date)]).num_rows

    def _where(self, expression, columns: list[str] | None = None) -> pa.Table:
        """The rows matching a pyarrow expression: delta-rs's dataset skips files by their
        statistics in the Delta log."""
        return self._table().to_pyarrow_dataset().to_table(columns=columns, filter=expression)

    def point_read(self, key: int) -> None:
        import pyarrow.compute as pc

        self._where(pc.field("id") == int(key))

    def point_read_rows(self, key: int, columns: list[str]) -> pa.Table:
        import pyarrow.compute as pc

        return self._where(pc.field("id") == int(key), columns)

    def filter_rows(self, column: str, above: float) -> None:
        import pyarrow.compute as pc

        self._where(pc.field(column) > float(above))

    def filter_result(self, column: str, above: float, columns: list[str]) -> pa.Table:
        import pyarrow.compute as pc

        return self._where(pc.field(column) > float(above), columns)

    def read_check(self, columns: list[str]) -> pa.Table:
        return self._table().to_pyarrow_table(columns=columns)

"""`HoodieAdapter`: dbt-spark's adapter plus the few hooks the lake materializations call.

The Jinja materializations do no data work themselves: they pass the model's SQL and config
here, and these hooks hand a DataFrame to the core (`hoodie`), then register the table in the
Spark catalog so `ref()` and plain Spark SQL read the latest snapshot.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from typing import Any

from dbt.adapters.base import available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from hoodie import HoodieTable
from hoodie.exceptions import HoodieError, InvalidConfigError, TimelineError
from hoodie.properties import COPY_ON_WRITE, MERGE_ON_READ
from hoodie.read.datasource import (
    BASE_PATH_METADATA,
    PUSHDOWN_OPTION,
    SOURCE_NAME,
    catalog_schema,
)
from hoodie.read.options import ReadOptions
from hoodie.schema import META_COLUMNS
from hoodie.storage import Storage
from hoodie.table_services.savepoint import savepoints

from .connections import HoodieConnectionManager
from .model_config import model_settings

LAKE_MATERIALIZATIONS = ("cow_upsert", "mor_upsert")


class HoodieAdapter(SparkAdapter):
    ConnectionManager = HoodieConnectionManager

    @classmethod
    def type(cls) -> str:
        return "hoodie"

    # -- introspection: Hudi's meta columns are the table's business, not the model's --------
    def parse_columns_from_information(self, relation) -> list[SparkColumn]:
        columns = super().parse_columns_from_information(relation)
        return [c for c in columns if c.name not in META_COLUMNS]

    def parse_describe_extended(self, relation, raw_rows) -> list[SparkColumn]:
        columns = super().parse_describe_extended(relation, raw_rows)
        return [c for c in columns if c.name not in META_COLUMNS]

    # -- hooks for the materializations --------------------------------------------------------
    def _spark(self):
        return HoodieConnectionManager.spark(self.connections.get_thread_connection())

    @available
    def hoodie_is_lake_table(self, relation) -> bool:
        """Is this catalog relation a table of our `hoodie` data source?"""
        information = getattr(relation, "information", None) or ""
        return f"Provider: {SOURCE_NAME}" in information

    @available
    def hoodie_upsert(
        self,
        relation,
        sql: str,
        model_name: str,
        config: dict[str, Any],
        table_type: str = COPY_ON_WRITE,
        full_refresh: bool = False,
    ) -> AdapterResponse:
        """Upsert the model's rows into its lake table, then (re)register it in the catalog."""
        spark = self._spark()
        warehouse = spark.conf.get("spark.sql.warehouse.dir")
        settings = model_settings(
            model_name,
            config,
            table_type=table_type,
            schema=relation.schema,
            alias=relation.identifier,
            warehouse_dir=warehouse,
        )
        cfg = settings.write_config
        try:
            df = spark.sql(sql)
            exists = HoodieTable.exists(settings.base_uri)
            if exists and full_refresh:
                result = HoodieTable.open(settings.base_uri).overwrite(df, cfg)
            else:
                result = HoodieTable.for_write(settings.base_uri, cfg).upsert(df, cfg)
        except InvalidConfigError as exc:
            raise CompilationError(f"Model '{model_name}': {exc}") from exc
        except HoodieError as exc:
            raise DbtRuntimeError(f"Model '{model_name}': {exc}") from exc
        self._register(relation, settings.base_uri)
        rows = result.num_inserts + result.num_updates + result.num_deletes
        return AdapterResponse(_message=result.summary(), code=result.operation, rows_affected=rows)

    def _register(self, relation, base_uri: str) -> None:
        """Point a catalog table at the lake table; recreate it when schema or path moved on.

        The catalog table is external (it has a path), so dropping it never touches the files.
        """
        spark = self._spark()
        wanted = catalog_schema(HoodieTable.open(base_uri))
        name = f"{relation.schema}.{relation.identifier}"
        quoted = f"`{relation.schema}`.`{relation.identifier}`"
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{relation.schema}`")
        if spark.catalog.tableExists(name):
            current = spark.table(quoted).schema
            if current.fieldNames() == wanted.fieldNames() and (
                current.fields[0].metadata.get(BASE_PATH_METADATA)
                == wanted.fields[0].metadata[BASE_PATH_METADATA]
            ):
                return
            spark.sql(f"DROP TABLE {quoted}")
        spark.catalog.createTable(
            name, path=Storage(base_uri).uri(), source=SOURCE_NAME, schema=wanted
        )

    @available
    def hoodie_read_view(self, relation, options: dict[str, Any]) -> str:
        """A temporary view of a lake table read with Hudi read options (time travel, changes).

        Models select from the returned name; the view lives in the run's Spark session.
        """
        spark = self._spark()
        quoted = f"`{relation.schema}`.`{relation.identifier}`"
        if not spark.catalog.tableExists(f"{relation.schema}.{relation.identifier}"):
            raise DbtRuntimeError(f"{relation} does not exist: build it before reading it")
        base_path = spark.table(quoted).schema.fields[0].metadata.get(BASE_PATH_METADATA)
        if not base_path:
            raise DbtRuntimeError(
                f"{relation} is not a hoodie lake table (materialized='cow_upsert' or "
                "'mor_upsert'), so it has no instants to read at"
            )
        text_options = {str(k): str(v) for k, v in options.items() if v is not None}
        try:
            ReadOptions.parse(text_options)
        except HoodieError as exc:
            raise DbtRuntimeError(f"reading {relation}: {exc}") from exc
        digest = hashlib.sha1(json.dumps(text_options, sort_keys=True).encode()).hexdigest()
        name = f"hoodie__{relation.schema}__{relation.identifier}__{digest[:12]}"
        reader = spark.read.format(SOURCE_NAME).option(PUSHDOWN_OPTION, "true")
        for key, value in text_options.items():
            reader = reader.option(key, value)
        reader.load(base_path).createOrReplaceTempView(name)
        return name

    def _settings(self, relation, model_name: str, config: dict[str, Any]):
        table_type = MERGE_ON_READ if config.get("materialized") == "mor_upsert" else COPY_ON_WRITE
        return model_settings(
            model_name,
            config,
            table_type=table_type,
            schema=relation.schema,
            alias=relation.identifier,
            warehouse_dir=self._spark().conf.get("spark.sql.warehouse.dir"),
        )

    @available
    def hoodie_table_path(self, relation, model_name: str, config: dict[str, Any]) -> str:
        return self._settings(relation, model_name, config).base_uri

    @available
    def hoodie_timeline(self, relation, model_name: str, config: dict[str, Any]) -> list[dict]:
        """The table's instants, newest last (the `hoodie_timeline` operation prints them)."""
        table = HoodieTable.open(self.hoodie_table_path(relation, model_name, config))
        return table.history()

    def _lake_table(self, relation, model_name: str, config: dict[str, Any]):
        """The model's table and write config, for operations on an existing lake table."""
        settings = self._settings(relation, model_name, config)
        if not HoodieTable.exists(settings.base_uri):
            raise DbtRuntimeError(
                f"Model '{model_name}': no lake table at {settings.base_uri} yet; run the "
                "model first"
            )
        return HoodieTable.open(settings.base_uri), settings.write_config

    @contextmanager
    def _operation(self, model_name: str):
        try:
            yield
        except InvalidConfigError as exc:
            raise CompilationError(f"Model '{model_name}': {exc}") from exc
        except HoodieError as exc:
            raise DbtRuntimeError(f"Model '{model_name}': {exc}") from exc

    @available
    def hoodie_clean(self, relation, model_name: str, config: dict[str, Any]) -> dict:
        """Clean a lake table now with the model's cleaning options (`hoodie_clean`)."""
        table, write_config = self._lake_table(relation, model_name, config)
        with self._operation(model_name):
            metadata = table.clean(write_config)
        if metadata is None:
            return {"instant": "", "files_deleted": 0, "earliest_retained": ""}
        return {
            "instant": metadata.start_clean_time,
            "files_deleted": metadata.total_files_deleted,
            "earliest_retained": metadata.earliest_commit_to_retain,
        }

    @available
    def hoodie_rollback(
        self, relation, model_name: str, config: dict[str, Any], instant: str | None = None
    ) -> dict:
        """Roll back the latest completed commit of a lake table (`hoodie_rollback`)."""
        table, _ = self._lake_table(relation, model_name, config)
        with self._operation(model_name):
            metadata = table.rollback(str(instant) if instant is not None else None)
        return {
            "instant": metadata.start_rollback_time,
            "rolled_back": ", ".join(metadata.commits_rolled_back),
            "files_deleted": metadata.total_files_deleted,
        }

    @available
    def hoodie_savepoint(
        self, relation, model_name: str, config: dict[str, Any], instant: str | None = None
    ) -> dict:
        """Savepoint a commit of a lake table (default: the latest) (`hoodie_savepoint`)."""
        table, _ = self._lake_table(relation, model_name, config)
        with self._operation(model_name):
            if instant is None:
                writes = table.timeline().completed.write_timeline.instants
                instant = writes[-1].timestamp if writes else None
            metadata = table.savepoint(str(instant) if instant else None, comment="dbt")
        files = sum(len(m.savepoint_data_file) for m in metadata.partition_metadata.values())
        return {"instant": instant, "files": files}

    @available
    def hoodie_restore(
        self, relation, model_name: str, config: dict[str, Any], instant: str | None = None
    ) -> dict:
        """Restore a lake table to a savepoint, by default the latest (`hoodie_restore`)."""
        table, _ = self._lake_table(relation, model_name, config)
        with self._operation(model_name):
            if instant is None:
                pinned = savepoints(table)
                if not pinned:
                    raise TimelineError(f"table '{table.name}' has no savepoint to restore")
                instant = pinned[-1]
            metadata = table.restore(str(instant))
        self._register(relation, table.base_uri)  # the schema may be the older one again
        return {
            "instant": metadata.start_restore_time,
            "rolled_back": ", ".join(metadata.instants_to_rollback) or "(nothing)",
        }

    @available
    def hoodie_compact(self, relation, model_name: str, config: dict[str, Any]) -> list[dict]:
        """Compact a merge-on-read lake table now (the `hoodie_compact` operation)."""
        table, write_config = self._lake_table(relation, model_name, config)
        with self._operation(model_name):
            results = table.compact(self._spark(), write_config)
        return [
            {
                "instant": r.instant,
                "file_groups": r.files_written,
                "records": r.metadata.total("num_writes"),
                "log_files_compacted": r.metadata.total("total_log_files_compacted"),
                "seconds": round(r.seconds, 1),
            }
            for r in results
        ]

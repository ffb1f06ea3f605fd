"""`HoodieAdapter`: dbt-spark's adapter plus the few hooks the lake materializations call.

The Jinja materializations do no data work themselves: they pass the model's SQL and config
here, and these hooks hand a DataFrame to the core (`hoodie`), then register the table in the
Spark catalog so `ref()` and plain Spark SQL read the latest snapshot.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from dbt.adapters.base import available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig

from hoodie import COPY_ON_WRITE, MERGE_ON_READ, HoodieTable, WriteResult
from hoodie.integration import BASE_PATH_METADATA, META_COLUMNS, SOURCE_NAME, check_batch

from . import contract
from .catalog import (
    catalog_facts,
    catalog_write_options,
    error_facts,
    table_comment,
    table_properties,
)
from .config_keys import CATALOG_PLACE, LAKE_FORMATS, lake_materialization
from .connections import HoodieConnectionManager
from .environment import start_session_early
from .errors import (
    BY_NAME,
    ModelConfigError,
    NotALakeTableError,
    OperationArgumentError,
    ReadMacroError,
    TableLocationError,
    dbt_errors,
)
from .incremental_predicates import check_rows as check_predicate_rows
from .incremental_predicates import predicates_of
from .incremental_reads import (
    FORMATS,
    ON_CHECKPOINT_LOST,
    PendingCheckpoint,
    PendingCheckpoints,
    checkpoint_arguments,
    consumed_gone,
    lost_because,
)
from .microbatch import BatchWindow, run_metadata
from .model_config import LakeModel, ModelSettings, model_settings
from .progress import model_step, named, node_name, reports_progress
from .snapshot import snapshot_batch, snapshot_errors, snapshot_settings

LAKE_MATERIALIZATIONS = ("cow_upsert", "mor_upsert")
# Lake tables whose facts `dbt docs generate` reads at once (each a few small reads; on an
# object store, round trips).
CATALOG_THREADS = 8
COMPACTION_MODES = ("all", "run_pending", "schedule")
_LOCATION = re.compile(r"^Location: (.+)$", re.MULTILINE)
logger = AdapterLogger("Hoodie")


def _columns(schema) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in schema.fields]


def _sql_string(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _model_columns(columns: list[SparkColumn]) -> list[SparkColumn]:
    """A table's columns without Hudi's meta columns, numbered from 0 again: the model's
    first column is column 0 (catalog.json's `index`), as in any other table."""
    kept = [c for c in columns if c.name not in META_COLUMNS]
    for index, column in enumerate(kept):
        column.column_index = index
    return kept


def _is_temporary_view(row) -> bool:
    """A `SHOW TABLE(S)` row (namespace, tableName, isTemporary[, information]) of a temp view."""
    return len(row) >= 3 and str(row[2]).lower() == "true"


@dataclass(frozen=True)
class CatalogDocs:
    """The docs a catalog table carries: its comment and its columns' comments."""

    description: str | None = None
    column_comments: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, config: dict[str, Any], description: str | None, columns: dict | None):
        """The docs `persist_docs` asks to keep (dbt's `relation` and `columns` switches)."""
        persist = config.get("persist_docs") or {}
        comments = []
        if persist.get("columns"):
            for column_name, column in (columns or {}).items():
                text = column.get("description") if isinstance(column, dict) else None
                if text:
                    comments.append((column.get("name") or column_name, text))
        return cls(
            description=(description or None) if persist.get("relation") else None,
            column_comments=tuple(sorted(comments)),
        )

    @classmethod
    def current(cls, information: str, schema) -> CatalogDocs:
        """The docs of a catalog table, from its listing (`_listing`: spark.catalog.getTable()
        reports no description for data source tables) and its schema."""
        return cls(table_comment(information)).with_comments_of(schema)

    def with_comments_of(self, schema) -> CatalogDocs:
        comments = [(f.name, f.metadata["comment"]) for f in schema.fields
                    if f.metadata.get("comment")]  # fmt: skip
        return CatalogDocs(self.description, tuple(sorted(comments)))

    def apply(self, schema):
        """The schema with these column comments (columns are matched case-insensitively)."""
        from pyspark.sql.types import StructField, StructType

        comments = {column.lower(): text for column, text in self.column_comments}
        fields = []
        for f in schema.fields:
            metadata = dict(f.metadata)
            if f.name.lower() in comments:
                metadata["comment"] = comments[f.name.lower()]
            fields.append(StructField(f.name, f.dataType, f.nullable, metadata))
        return StructType(fields)


@dataclass
class HoodieConfig(SparkConfig):
    """The model configs the lake materializations read, besides dbt-spark's (`options`,
    `location_root`, `partition_by`, ...). Aliases (`unique_key`, `partition_by`, Hudi's
    `hoodie.datasource.write.*` keys in `options`) are resolved by `model_config`; every other
    key of a lake model's config is honoured, refused or warned about by `config_keys`."""

    record_key: str | list[str] | None = None
    partition_path: str | list[str] | None = None
    precombine_field: str | None = None
    hive_style_partitioning: bool | None = None
    compaction: str | None = None  # mor_upsert: 'inline' (default) or 'off'
    compaction_delta_commits: int | None = None
    table_type: str | None = None  # materialized='incremental', file_format='hudi': cow | mor


class HoodieAdapter(SparkAdapter):
    ConnectionManager = HoodieConnectionManager
    AdapterSpecificConfigs = HoodieConfig
    # Model contracts (see .contract): not_null is checked, other kinds are refused.
    CONSTRAINT_SUPPORT = contract.CONSTRAINT_SUPPORT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # hoodie_incremental's reads, committed by the reading model's write
        self._checkpoints = PendingCheckpoints()
        # (model, options) whose catalog write options the log named already
        self._told: set[tuple[str, str]] = set()
        # `_get_one_catalog`'s lake table facts, by (schema, identifier), read beforehand
        self._facts: dict[tuple[str, str], dict[str, Any]] = {}
        # The session starts while dbt parses the project (made before the parse).
        start_session_early(self.config.credentials)

    @classmethod
    def type(cls) -> str:
        return "hoodie"

    # -- introspection: Hudi's meta columns are the table's business, not the model's --------
    def parse_columns_from_information(self, relation) -> list[SparkColumn]:
        return _model_columns(super().parse_columns_from_information(relation))

    def parse_describe_extended(self, relation, raw_rows) -> list[SparkColumn]:
        return _model_columns(super().parse_describe_extended(relation, raw_rows))

    def _build_spark_relation_list(self, row_list, relation_info_func):
        """The schema's relations, without the session's temporary views.

        `SHOW TABLE(S) ... IN schema` also lists every temporary view of the Spark session
        (isTemporary, no namespace), such as dbt-spark's `<model>__dbt_tmp` views and the
        `hoodie_as_of` read views. They belong to no schema: listed, they came back with schema
        None, and `dbt docs generate` in a process that had built an incremental model failed on
        them.
        """
        rows = [row for row in row_list if not _is_temporary_view(row)]
        return super()._build_spark_relation_list(rows, relation_info_func)

    def _get_one_catalog(self, information_schema, schemas, used_schemas):
        """dbt-spark's catalog of one schema, with its lake tables' facts read beforehand, at
        once (`CATALOG_THREADS`): `_get_columns_for_catalog` takes each relation in turn."""
        # Those dbt listed with their information (the facts need no session then; a pool
        # thread has no connection of its own); any other is read in turn.
        relations = [r for schema in schemas
                     for r in self.list_relations(information_schema.database, schema)
                     if getattr(r, "information", None)]  # fmt: skip
        keys = [(r.schema, r.identifier) for r in relations]
        if relations:
            with ThreadPoolExecutor(max_workers=min(CATALOG_THREADS, len(relations))) as pool:
                self._facts.update(zip(keys, pool.map(self._lake_stats, relations)))
        try:
            return super()._get_one_catalog(information_schema, schemas, used_schemas)
        finally:
            for key in keys:
                self._facts.pop(key, None)

    def _get_columns_for_catalog(self, relation):
        """Catalog columns, plus a lake table's comment, column comments and Hudi facts
        (`catalog_facts`, as the table's stats in the docs). dbt-spark reads no comment: the
        listing it parses has the table's comment but not its columns' (a schema tree), so
        those are read from the catalog table's schema, where `persist_docs` put them (one
        catalog lookup per lake table)."""
        key = (relation.schema, relation.identifier)
        facts = self._facts[key] if key in self._facts else self._lake_stats(relation)
        comment = table_comment(getattr(relation, "information", None) or "") if facts else None
        comments = self._column_comments(relation) if facts else {}
        for column in super()._get_columns_for_catalog(relation):
            column.update(facts)
            if comment is not None:
                column["table_comment"] = comment
            if facts:
                column["column_comment"] = comments.get(column["column_name"])
            yield column

    def _column_comments(self, relation) -> dict[str, str]:
        """The column comments of a lake table's catalog entry (none where its schema does
        not read: the log says why, and the catalog goes on)."""
        try:
            fields = self._spark().table(f"`{relation.schema}`.`{relation.identifier}`").schema
        except Exception as error:  # noqa: BLE001 - one table's docs never stop the catalog
            logger.warning(f"{relation}: its column comments could not be read: "
                           f"{type(error).__name__}: {error}")  # fmt: skip
            return {}
        return {f.name: f.metadata["comment"] for f in fields if f.metadata.get("comment")}

    def _lake_stats(self, relation) -> dict[str, Any]:
        """The facts of a lake table, reading its metadata once. A table whose metadata does
        not read shows the error as a fact (and the log says it): `dbt docs generate` goes on
        with the other tables."""
        information = getattr(relation, "information", None) or ""
        location = _LOCATION.search(information)
        if not self.hoodie_is_lake_table(relation) or location is None:
            return {}
        base_uri = location.group(1).strip()
        try:
            return catalog_facts(HoodieTable.open(base_uri, self._storage_options))
        except Exception as error:  # noqa: BLE001 - one table's facts never stop the catalog
            message = f"{type(error).__name__}: {error}"
            logger.warning(f"{relation}: its Hudi facts could not be read: {message}")
            return error_facts(message)

    # -- the catalog entries of lake tables --------------------------------------------------
    def _listing(self, relation) -> str | None:
        """The `SHOW TABLE EXTENDED` listing of a catalog table (None: there is none), the one
        place that has its comment and its table properties (`.catalog`)."""
        spark = self._spark()
        if not spark.catalog.tableExists(f"{relation.schema}.{relation.identifier}"):
            return None
        rows = spark.sql(
            f"SHOW TABLE EXTENDED IN `{relation.schema}` LIKE '{relation.identifier}'"
        ).collect()
        for row in rows:
            if not _is_temporary_view(row):
                return str(row["information"])
        return None

    def _catalog_write_options(self, resource: str, name: str, relation) -> dict[str, str]:
        """The write options set on a lake table's catalog entry (`ALTER TABLE ... SET
        TBLPROPERTIES`), which its writes take as Apache Hudi's Spark SQL writes do; a Hudi
        setting there that is no write option is refused (`catalog_write_options`), naming
        the dbt `resource` `name` whose run or read met it."""
        information = self._listing(relation)
        if information is None or f"Provider: {SOURCE_NAME}" not in information:
            return {}
        table = f"{relation.schema}.{relation.identifier}"
        options = catalog_write_options(resource, name, table, table_properties(information))
        listed = ", ".join(f"{k}={v!r}" for k, v in options.items())
        told = (f"{resource} '{name}'", listed)
        if listed and told not in self._told:  # once per model and options
            self._told.add(told)
            # (an info line about a model starts with its name, as its progress lines do;
            # errors and warnings say "Model 'name'")
            logger.info(f"{name}: write options from {CATALOG_PLACE} of {table}: {listed}")
        return options

    # -- hooks for the materializations --------------------------------------------------------
    def _spark(self):
        return HoodieConnectionManager.spark(self.connections.get_thread_connection())

    @property
    def _storage_options(self) -> dict[str, str]:
        """The profile's `storage_options`: how the core reaches tables on object storage."""
        return self.config.credentials.storage_options

    @available
    def hoodie_raise(self, error_class: str, message: str) -> None:
        """Raise the adapter's error class named `error_class` (`errors.BY_NAME`) from a
        macro, so that its message ends with the class's name as every other of ours does."""
        raise BY_NAME[error_class](message)

    @available
    def hoodie_is_lake_table(self, relation) -> bool:
        """Is this catalog relation a table of our `hoodie` data source?

        A relation dbt listed carries `DESCRIBE`'s information; one dbt put in its cache
        itself (after a microbatch model's first batch built the table) carries none, and
        then the catalog is asked: a lake table's first column holds its base path."""
        information = getattr(relation, "information", None) or ""
        if information:
            return f"Provider: {SOURCE_NAME}" in information
        spark = self._spark()
        if not spark.catalog.tableExists(f"{relation.schema}.{relation.identifier}"):
            return False
        fields = spark.table(f"`{relation.schema}`.`{relation.identifier}`").schema.fields
        return bool(fields) and BASE_PATH_METADATA in fields[0].metadata

    @available
    def hoodie_contract_not_null(
        self,
        model_name: str,
        materialized: str,
        columns: dict[str, Any] | None,
        constraints: list[dict[str, Any]] | None,
    ) -> list[str]:
        """The not_null columns of an enforced contract; refuses every kind it cannot enforce."""
        return contract.not_null_columns(model_name, materialized, columns, constraints)

    @available
    @reports_progress(node_name)
    def hoodie_upsert(
        self,
        model: dict[str, Any],
        relation,
        sql: str,
        *,
        table_type: str = COPY_ON_WRITE,
        full_refresh: bool = False,
        not_null: list[str] | None = None,
        replacing=None,
    ) -> AdapterResponse:
        """Upsert the model's rows into its lake table, then (re)register it in the catalog.

        `model` is dbt's node of the model (its name, config and docs, see `LakeModel`) and
        `relation` the catalog table it builds; `sql` the rows (the compiled code, wrapped by
        an enforced contract). With `persist_docs` the model's docs become the catalog table's
        comment and column comments. `not_null` are the columns the model's contract declares
        not null: the rows are checked first and kept (cached), so the rows written are the
        rows checked, even when the model's sources change meanwhile. `replacing` is an
        object of another kind under the model's name: it is dropped only once the checks
        passed, right before the write.
        """
        target = LakeModel.of(model, relation)
        spark = self._spark()
        catalog = self._catalog_write_options(target.resource, target.name, relation)
        df = spark.sql(sql)
        settings = target.settings(table_type, spark.conf.get("spark.sql.warehouse.dir"),
                                   df.columns, catalog)  # fmt: skip
        window = BatchWindow.of(target.name, target.config, model.get("batch"))
        predicates = predicates_of(target.name, target.config.get("incremental_predicates"))
        # Rows read twice (checked, a batch's keys against its window) are read once.
        cached = bool(not_null) or window is not None or bool(predicates)
        if cached:
            df = df.persist()
        # The checks are Spark jobs over the model's rows (the first computes them, kept for
        # the write): steps of their own.
        checking = "checking the model's rows: "
        try:
            if not_null:
                with model_step(f"{checking}the contract's not_null columns"):
                    contract.check_not_null(df, target.name, not_null)
            if window is not None:
                with model_step(f"{checking}{window.event_time} within the batch"):
                    outside = window.check_rows(target.name, df)
                if outside:
                    logger.warning(outside)
            if replacing is not None:
                logger.info(f"{target.name}: replacing {replacing}, which is not a hoodie "
                            "lake table, with one")  # fmt: skip
                self.drop_relation(replacing)

            def check_incremental() -> None:
                with model_step(f"{checking}incremental_predicates"):
                    check_predicate_rows(target.name, predicates, df, settings.write_config)

            with dbt_errors(target.resource, target.name):
                result = self._write_model(
                    settings, df, full_refresh, window, run_metadata(model.get("unique_id")),
                    check_incremental if predicates else None,
                    self._pending_checkpoints().take(model.get("unique_id") or ""),
                )  # fmt: skip
        finally:
            if cached:
                df.unpersist()
        docs = CatalogDocs.of(target.config, target.description, target.columns)
        with dbt_errors(target.resource, target.name):
            self._register(relation, settings.base_uri, docs)
        rows = result.num_inserts + result.num_updates + result.num_deletes
        return AdapterResponse(_message=result.summary(), code=result.operation, rows_affected=rows)

    def _write_model(
        self,
        settings: ModelSettings,
        df,
        full_refresh: bool,
        window: BatchWindow | None = None,
        extra_metadata: dict[str, str] | None = None,
        check_incremental: Callable[[], None] | None = None,
        checkpoints: dict[str, PendingCheckpoint] | None = None,
    ) -> WriteResult:
        """The model's write: an overwrite on a full refresh of an existing table, else an
        upsert (or what the model's hoodie.datasource.write.operation says). A microbatch
        batch's upsert also deletes the rows of its window the batch no longer has.
        `check_incremental` runs before an incremental write into an existing table (the
        model's incremental_predicates, which dbt applies to such runs only). `checkpoints`:
        the upstream positions the model's hoodie_incremental reads went up to, committed
        with the data (and every checkpoint the table holds carried forward)."""
        storage_options = self._storage_options
        cfg = settings.write_config
        extra = {**(extra_metadata or {}), **(window.commit_metadata() if window else {})}
        pending = checkpoints or {}
        if HoodieTable.exists(settings.base_uri, storage_options):
            table = HoodieTable.open(settings.base_uri, storage_options, cfg)
            if full_refresh:
                entry, _ = checkpoint_arguments(pending, {}, incremental=False)
                return table.overwrite(df, extra_metadata={**extra, **entry})
            if check_incremental is not None:
                check_incremental()
            entry, precommit = checkpoint_arguments(pending, table.checkpoints(), True)
            extra.update(entry)
            if window is not None:
                deletes = window.deletes(table.read(df.sparkSession), df, cfg)
                return table.write(df, deletes=deletes, extra_metadata=extra,
                                   precommit=precommit)  # fmt: skip
            return table.write(df, extra_metadata=extra, precommit=precommit)
        else:
            # Before the table is created: a refused first run must not leave a table
            # whose stored keys the corrected config would then conflict with.
            check_batch(cfg.table_name, cfg, df.schema)
        # A first run refused anywhere in its write leaves no table behind.
        table = HoodieTable.for_write(settings.base_uri, cfg, storage_options,
                                      remove_if_first_write_fails=True)  # fmt: skip
        entry, _ = checkpoint_arguments(pending, {}, incremental=False)
        return table.write(df, extra_metadata={**extra, **entry})

    def _register(self, relation, base_uri: str, docs: CatalogDocs | None = None) -> None:
        """Point a catalog table at the lake table; recreate it when schema, path or docs moved on.

        The catalog table is external (it has a path), so dropping and recreating it is a
        metadata change that never touches the files. Docs go in with the schema (column
        comments are field metadata) because Spark's ALTER TABLE ... CHANGE COLUMN on a
        data source table first fails in the Hive metastore and logs an error before it
        falls back. Without `docs` the current comments are kept. In a model's hook it is a
        step of the model's progress (the catalog's round trips take seconds on a busy
        machine, after the commit's line).
        """
        name = f"{relation.schema}.{relation.identifier}"
        with model_step(f"registering {name} in the catalog") as step:
            step.outcome = self._register_entry(relation, base_uri, docs)

    def _register_entry(self, relation, base_uri: str, docs: CatalogDocs | None) -> str:
        """`_register`'s work; what it did: unchanged, created or recreated."""
        spark = self._spark()
        name = f"{relation.schema}.{relation.identifier}"
        quoted = f"`{relation.schema}`.`{relation.identifier}`"
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{relation.schema}`")
        information = self._listing(relation)
        current = spark.table(quoted).schema if information is not None else None
        registered = CatalogDocs()
        kept: dict[str, str] = {}  # the entry's table properties, carried over to a new one
        if current is not None and information is not None:
            registered = CatalogDocs.current(information, current)
            kept = table_properties(information)
        docs = registered if docs is None else docs
        wanted = docs.apply(HoodieTable.open(base_uri, self._storage_options).catalog_schema())
        if current is not None:
            # Names and types: a widened column (int -> bigint) needs the new type too.
            if (
                _columns(current) == _columns(wanted)
                and current.fields[0].metadata.get(BASE_PATH_METADATA)
                == wanted.fields[0].metadata[BASE_PATH_METADATA]
                and registered == docs.with_comments_of(wanted)
            ):
                return "unchanged"
            spark.sql(f"DROP TABLE {quoted}")
        spark.catalog.createTable(
            name,
            path=HoodieTable.location(base_uri, self._storage_options),
            source=SOURCE_NAME,
            schema=wanted,
            description=docs.description,
        )
        if kept:
            # Setting properties drops the table comment (Spark's ALTER TABLE on these
            # tables), so the comment is set with them.
            comment = {"comment": docs.description} if docs.description else {}
            pairs = ", ".join(f"{_sql_string(k)} = {_sql_string(v)}"
                              for k, v in {**kept, **comment}.items())  # fmt: skip
            spark.sql(f"ALTER TABLE {quoted} SET TBLPROPERTIES ({pairs})")
        return "created" if current is None else "recreated (its schema, location or docs changed)"

    # -- snapshots (macros/materializations/snapshot.sql; the logic is in .snapshot) ------------
    def _snapshot_settings(self, target: LakeModel, columns: dict):
        return snapshot_settings(
            target.name,
            target.config,
            columns,
            schema=target.relation.schema,
            alias=target.relation.identifier,
            warehouse_dir=self._spark().conf.get("spark.sql.warehouse.dir"),
            catalog_options=self._catalog_write_options(
                target.resource, target.name, target.relation
            ),  # fmt: skip
        )

    @available
    def hoodie_snapshot_prepare(
        self, model: dict[str, Any], relation, columns: dict[str, str]
    ) -> bool:
        """Does the snapshot's table exist? Judged by its lake files, not by the catalog.

        `model` is dbt's node of the snapshot, `relation` its catalog table, `columns` its meta
        column names. The files are the snapshot's history and the catalog only points at
        them: a table whose catalog entry was lost (a new metastore, a dropped schema) is
        registered again and merged into, where rebuilding it from the source would start the
        history over. For the same reason a catalog entry pointing somewhere else is an
        error, not a new table.
        """
        target = LakeModel.of(model, relation)
        settings = self._snapshot_settings(target, columns)
        spark = self._spark()
        with dbt_errors("Snapshot", target.name):
            wanted = HoodieTable.location(settings.base_uri, self._storage_options)
            if spark.catalog.tableExists(f"{relation.schema}.{relation.identifier}"):
                fields = spark.table(f"`{relation.schema}`.`{relation.identifier}`").schema.fields
                registered = fields[0].metadata.get(BASE_PATH_METADATA) if fields else None
                if registered and registered != wanted:
                    raise TableLocationError(
                        f"Snapshot '{target.name}': {relation} is the table at {registered}, "
                        f"but the snapshot's config puts its table at {wanted} (was "
                        "location_root changed?). Its history is at the old place: restore "
                        f"location_root, or move the table's folder to the new place and drop "
                        f"{relation}"
                    )
            if not HoodieTable.exists(settings.base_uri, self._storage_options):
                return False
            if HoodieTable.open(settings.base_uri, self._storage_options).schema() is None:
                return False  # created by a first run that failed before its commit: build it
            self._register(relation, settings.base_uri)
        return True

    @available
    @reports_progress(node_name)
    def hoodie_snapshot_create(
        self, model: dict[str, Any], relation, sql: str, columns: dict[str, str]
    ) -> AdapterResponse:
        """First run: the table from `build_snapshot_table`'s query, every version current.

        `model` is dbt's node of the snapshot (its name, config and docs: the docs are
        registered with the catalog table under `persist_docs` as for models), `columns` its
        meta column names.
        """
        target = LakeModel.of(model, relation)
        return self._snapshot_write(target, columns, lambda spark: spark.sql(sql))

    @available
    @reports_progress(node_name)
    def hoodie_snapshot_merge(
        self, model: dict[str, Any], relation, staging_sql: str, columns: dict[str, str]
    ) -> AdapterResponse:
        """Later runs: dbt's MERGE of the staging query, done as an upsert keyed by scd id."""
        target = LakeModel.of(model, relation)

        def batch(spark):
            stored = spark.table(f"`{relation.schema}`.`{relation.identifier}`")
            valid_to_current = target.config.get("dbt_valid_to_current")
            return snapshot_batch(spark.sql(staging_sql), stored, columns, valid_to_current)

        return self._snapshot_write(target, columns, batch)

    def _snapshot_write(self, target: LakeModel, columns, batch) -> AdapterResponse:
        settings = self._snapshot_settings(target, columns)
        cfg = settings.write_config
        with snapshot_errors(target.name, target.config, columns):
            df = batch(self._spark())
            table = HoodieTable.for_write(settings.base_uri, cfg, self._storage_options,
                                          remove_if_first_write_fails=True)  # fmt: skip
            result = table.upsert(df)
            docs = CatalogDocs.of(target.config, target.description, target.columns)
            self._register(target.relation, settings.base_uri, docs)
        closed = result.num_updates  # a version changes only when it is closed
        message = f"{result.num_inserts} new version(s), {closed} closed; {result.summary()}"
        rows = result.num_inserts + closed
        return AdapterResponse(_message=message, code=result.operation, rows_affected=rows)

    @available
    def hoodie_read_view(self, relation, options: dict[str, Any]) -> str:
        """A temporary view of a lake table read with Hudi read options (time travel, changes,
        or none: the latest snapshot), read as `HoodieTable.read` reads: where nothing needs
        merging, by Spark's parquet scan of the planned base files (column pruning and filter
        pushdown, which the catalog table's Python data source cannot do).

        Models select from the returned name; the view lives in the run's Spark session.
        """
        return self._read_view(relation, self._lake_base_path(relation), options)

    @available
    def hoodie_cdc_view(self, relation, begin: str, end: str | None = None) -> str:
        """`hoodie_cdc`: a temporary view of every change the writes in (begin, end] made to a
        lake table created with `hoodie.table.cdc.enabled` (`HoodieTable.read_changes`): op,
        ts_ms, record_key, partition_path, and before / after as structs of its columns."""
        base_path = self._lake_base_path(relation)
        with dbt_errors("Relation", str(relation)):
            table = HoodieTable.open(base_path, self._storage_options)
        if not table.properties.cdc_enabled:
            raise ReadMacroError(
                f"hoodie_cdc({relation}): the table logs no changes (it was not created with "
                "hoodie.table.cdc.enabled=true). Create it so (options={'hoodie.table.cdc."
                "enabled': 'true'}, then --full-refresh), or read the latest version of each "
                "changed row with hoodie_changes"
            )
        return self._changes_view(relation, table, str(begin), None if end is None else str(end))

    def _lake_base_path(self, relation) -> str:
        """The base path of the lake table a catalog relation stands for."""
        spark = self._spark()
        quoted = f"`{relation.schema}`.`{relation.identifier}`"
        if not spark.catalog.tableExists(f"{relation.schema}.{relation.identifier}"):
            raise NotALakeTableError(f"{relation} does not exist: build it before reading it")
        base_path = spark.table(quoted).schema.fields[0].metadata.get(BASE_PATH_METADATA)
        if not base_path:
            raise NotALakeTableError(
                f"{relation} is not a hoodie lake table (materialized='cow_upsert' or "
                "'mor_upsert'): hoodie_as_of, hoodie_changes, hoodie_snapshot and "
                "hoodie_incremental read lake tables only"
            )
        # A Hudi setting on the catalog entry that no write takes is refused on reads too.
        self._catalog_write_options("Relation", str(relation), relation)
        return str(base_path)

    def _read_view(
        self, relation, base_path: str, options: dict[str, Any], empty: bool = False
    ) -> str:
        """The view of `relation` read with `options`; `empty`: its columns, no row."""
        spark = self._spark()
        text_options = {str(k): str(v) for k, v in options.items() if v is not None}
        key = json.dumps({**text_options, "empty": empty}, sort_keys=True)
        digest = hashlib.sha1(key.encode()).hexdigest()
        name = f"hoodie__{relation.schema}__{relation.identifier}__{digest[:12]}"
        # Planned now (options checked, instants resolved): the view reads the files of the
        # table as it is when the model runs.
        with dbt_errors("Relation", str(relation)):
            read = HoodieTable.open(base_path, self._storage_options).read(spark, text_options)
        (read.limit(0) if empty else read).createOrReplaceTempView(name)
        return name

    @available
    def hoodie_incremental_view(
        self, model: dict[str, Any], this, relation, format: str, full_refresh: bool
    ) -> str:
        """`hoodie_incremental`: a view of what `relation` changed since this model last read
        it (see `incremental_reads`); the position read up to is committed with the model's
        next write."""
        name, config = model["name"], model.get("config") or {}
        where = f"Model '{name}'"
        if format not in FORMATS:
            raise ReadMacroError(
                f"{where}: hoodie_incremental format={format!r} is not one of "
                f"{', '.join(map(repr, FORMATS))}: 'latest_state' gives the latest version of "
                "each row changed since the last run (deletes are not seen), 'cdc' every change "
                "(op, before, after; the upstream must log them: hoodie.table.cdc.enabled)"
            )
        if not self._is_lake_model(config):
            raise ReadMacroError(
                f"{where}: hoodie_incremental keeps how far it read in the model's own lake "
                "table, so the model must be one (materialized='cow_upsert' or 'mor_upsert', "
                "or 'incremental' with file_format='hudi'); other models can read changes "
                "between instants they choose with hoodie_changes or hoodie_cdc"
            )
        base_path = self._lake_base_path(relation)
        source = base_path.rstrip("/")
        storage = self._storage_options
        with dbt_errors("Relation", str(relation)):
            upstream = HoodieTable.open(base_path, storage)
            new = upstream.incremental_position(format)
        if format == "cdc" and not upstream.properties.cdc_enabled:
            raise ReadMacroError(
                f"{where}: hoodie_incremental(format='cdc') reads the changes {relation} "
                f"logged, and it logs none: create it with hoodie.table.cdc.enabled=true "
                "(options={'hoodie.table.cdc.enabled': 'true'}, then --full-refresh), or read "
                "it with format='latest_state'"
            )
        read = None
        if not full_refresh:
            settings = self._settings(this, name, config)
            if HoodieTable.exists(settings.base_uri, storage):
                with dbt_errors("Model", name):
                    read = HoodieTable.open(settings.base_uri, storage).checkpoints().get(source)
        if read is not None and read.format != format:
            raise ReadMacroError(
                f"{where}: its last run read {relation} with format='{read.format}', this one "
                f"asks for '{format}', whose positions differ. Run it with --full-refresh"
            )
        if new is None:  # nothing written upstream yet: its (empty) snapshot, no checkpoint
            if format == "cdc":
                return self._changes_view(relation, upstream, None, None)
            return self._read_view(relation, base_path, {})
        if read is not None:
            consumed_gone(where, relation, upstream, read)
        self._pending_checkpoints().register(model["unique_id"], source,
                                             PendingCheckpoint(read, new))  # fmt: skip
        if format == "cdc":
            if read is None or read.position == new.position:  # all of it, or nothing new
                return self._changes_view(relation, upstream, None, new.instant,
                                          empty=read is not None)  # fmt: skip
            return self._changes_view(relation, upstream, read.position, new.position)
        if read is None or read.position == new.position:  # all of it, or nothing new
            return self._read_view(relation, base_path, {"as.of.instant": new.instant},
                                   empty=read is not None)  # fmt: skip
        return self._read_view(relation, base_path, {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": read.position,
            "hoodie.datasource.read.end.instanttime": new.position,
        })  # fmt: skip

    def _changes_view(
        self, relation, upstream: HoodieTable, begin: str | None, end: str | None,
        empty: bool = False,
    ) -> str:  # fmt: skip
        """A view of `upstream`'s changes in (begin, end] (`read_changes`); with no `begin`,
        its snapshot at `end` as inserts; `empty`: the columns, no row."""
        spark = self._spark()
        key = json.dumps({"cdc": [begin, end], "empty": empty})
        digest = hashlib.sha1(key.encode()).hexdigest()
        name = f"hoodie__{relation.schema}__{relation.identifier}__changes_{digest[:12]}"
        with dbt_errors("Relation", str(relation)):
            if begin is None:
                changes = upstream.read_snapshot_as_changes(spark, end)
            else:
                changes = upstream.read_changes(spark, begin, end)
        (changes.limit(0) if empty else changes).createOrReplaceTempView(name)
        return name

    def _pending_checkpoints(self) -> PendingCheckpoints:
        return self._checkpoints

    @available
    def hoodie_checkpoints_lost(self, model: dict[str, Any], this) -> bool:
        """on_checkpoint_lost='full_refresh': is a checkpoint of this model's table lost (its
        upstream restored past it; for a `cdc` read, its history cleaned)? Then the run is a
        full refresh (`hoodie_full_refresh()`: is_incremental() false, the table overwritten,
        every upstream read whole). The answer is kept for the model's run: the macros ask
        several times, and must agree."""
        name, config = model["name"], model.get("config") or {}
        policy = config.get("on_checkpoint_lost") or ON_CHECKPOINT_LOST[0]
        if policy not in ON_CHECKPOINT_LOST:
            raise ModelConfigError(
                f"Model '{name}': on_checkpoint_lost={policy!r} is not one of "
                f"{', '.join(map(repr, ON_CHECKPOINT_LOST))}"
            )
        if policy == "error" or not self._is_lake_model(config):
            return False
        return self._checkpoints.lost(model["unique_id"], lambda: self._lost(name, config, this))

    def _lost(self, name: str, config: dict[str, Any], this) -> bool:
        storage = self._storage_options
        settings = self._settings(this, name, config)
        if not HoodieTable.exists(settings.base_uri, storage):
            return False
        with dbt_errors("Model", name):
            checkpoints = HoodieTable.open(settings.base_uri, storage).checkpoints()
        for source, read in sorted(checkpoints.items()):
            reason = "the upstream table is gone"
            if HoodieTable.exists(source, storage):
                with dbt_errors("Relation", source):
                    reason = lost_because(HoodieTable.open(source, storage), read)
            if reason is not None:
                logger.warning(f"Model '{name}': its checkpoint of {source} is lost: "
                               f"{reason.replace('it read', 'the model read', 1)}. "
                               "on_checkpoint_lost='full_refresh': the model is rebuilt "
                               "from its upstreams now")  # fmt: skip
                return True
        return False

    @staticmethod
    def _is_lake_model(config: dict[str, Any]) -> bool:
        materialized = config.get("materialized")
        if materialized in LAKE_MATERIALIZATIONS:
            return True
        file_format = str(config.get("file_format") or "").lower()
        return materialized == "incremental" and file_format in LAKE_FORMATS

    @available
    def hoodie_table_type(self, model: dict[str, Any]) -> str:
        """The table type a lake model writes: its lake materialization's, or for
        materialized='incremental' (file_format='hudi') its `table_type`."""
        return self._table_type(model["name"], model.get("config") or {})

    @staticmethod
    def _table_type(model_name: str, config: dict[str, Any]) -> str:
        lake = lake_materialization(f"Model '{model_name}'", config)
        return MERGE_ON_READ if lake == "mor_upsert" else COPY_ON_WRITE

    def _settings(self, relation, model_name: str, config: dict[str, Any]):
        table_type = self._table_type(model_name, config)
        catalog = self._catalog_write_options("Model", model_name, relation)
        return model_settings(
            model_name,
            config,
            table_type=table_type,
            schema=relation.schema,
            alias=relation.identifier,
            warehouse_dir=self._spark().conf.get("spark.sql.warehouse.dir"),
            catalog_options=catalog,
        )

    @available
    def hoodie_table_path(self, relation, model_name: str, config: dict[str, Any]) -> str:
        return self._settings(relation, model_name, config).base_uri

    @available
    def hoodie_timeline(self, relation, model_name: str, config: dict[str, Any]) -> list[dict]:
        """The table's instants, newest last (the `hoodie_timeline` operation prints them)."""
        base_uri = self.hoodie_table_path(relation, model_name, config)
        with dbt_errors("Model", model_name):
            return HoodieTable.open(base_uri, self._storage_options).history()

    def _lake_table(self, relation, model_name: str, config: dict[str, Any]) -> HoodieTable:
        """The model's table, opened with its write config, for operations on an existing
        lake table."""
        settings = self._settings(relation, model_name, config)
        with dbt_errors("Model", model_name):
            if not HoodieTable.exists(settings.base_uri, self._storage_options):
                raise NotALakeTableError(
                    f"Model '{model_name}': no lake table at {settings.base_uri} yet; run the "
                    "model first"
                )
            return HoodieTable.open(settings.base_uri, self._storage_options, settings.write_config)

    @available
    @reports_progress(named)
    def hoodie_clean(self, relation, model_name: str, config: dict[str, Any]) -> dict:
        """Clean a lake table now with the model's cleaning options (`hoodie_clean`)."""
        table = self._lake_table(relation, model_name, config)
        with dbt_errors("Model", model_name):
            metadata = table.services.clean()
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
        table = self._lake_table(relation, model_name, config)
        with dbt_errors("Model", model_name):
            metadata = table.services.rollback(str(instant) if instant is not None else None)
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
        table = self._lake_table(relation, model_name, config)
        with dbt_errors("Model", model_name):
            saved = table.services.savepoint(str(instant) if instant else None, comment="dbt")
        return {"instant": saved.instant, "files": saved.files}

    @available
    def hoodie_restore(
        self, relation, model_name: str, config: dict[str, Any], instant: str | None = None
    ) -> dict:
        """Restore a lake table to a savepoint, by default the latest (`hoodie_restore`)."""
        table = self._lake_table(relation, model_name, config)
        with dbt_errors("Model", model_name):
            metadata = table.services.restore(str(instant) if instant is not None else None)
            self._register(relation, table.base_uri)  # the schema may be the older one again
        return {
            "instant": metadata.start_restore_time,
            "rolled_back": ", ".join(metadata.instants_to_rollback) or "(nothing)",
        }

    @available
    def hoodie_upgrade(
        self, relation, model_name: str, config: dict[str, Any], version: int | None = None
    ) -> dict:
        """Upgrade a lake table from Hudi table version 6 to 8 (`hoodie_upgrade`)."""
        if version is not None and str(version) != "8":
            raise OperationArgumentError(
                f"Model '{model_name}': hoodie_upgrade upgrades to table version 8 only, not "
                f"{version!r}; run it without `version` or with version: 8"
            )
        table = self._lake_table(relation, model_name, config)
        with dbt_errors("Model", model_name):
            result = table.services.upgrade(self._spark())
        return {
            "from_version": result.from_version,
            "to_version": result.to_version,
            "timeline_files": result.timeline_files,
            "archived_instants": result.archived_instants,
        }

    @available
    @reports_progress(named)
    def hoodie_cluster(
        self, relation, model_name: str, config: dict[str, Any], mode: str = "all"
    ) -> list[dict]:
        """Cluster a lake table now (the `hoodie_cluster` operation): `mode` 'all' executes
        pending plans then plans and executes a new one, 'schedule' only plans."""
        if mode not in ("all", "schedule"):
            raise OperationArgumentError(
                f"Model '{model_name}': hoodie_cluster mode must be 'all' or 'schedule', not "
                f"{mode!r}"
            )
        table = self._lake_table(relation, model_name, config)
        with dbt_errors("Model", model_name):
            if mode == "schedule":
                instant = table.services.schedule_clustering()
                if instant is None:
                    return []
                return [{"instant": instant, "scheduled": True}]
            results = table.services.cluster(self._spark())
        return [
            {
                "instant": r.instant,
                "scheduled": False,
                "file_groups": sum(
                    len(ids) for ids in (r.metadata.partition_to_replace_file_ids or {}).values()
                ),
                "files_written": r.files_written,
                "records": r.metadata.total("num_writes"),
                "seconds": round(r.seconds, 1),
            }
            for r in results
        ]

    @available
    @reports_progress(named)
    def hoodie_compact(
        self, relation, model_name: str, config: dict[str, Any], mode: str = "all"
    ) -> list[dict]:
        """Compact a merge-on-read lake table now (the `hoodie_compact` operation): `all`
        (pending plans, then a new one), `run_pending` (the plans scheduled before, as Apache
        Hudi's async compaction) or `schedule` (a new plan only, left pending)."""
        if mode not in COMPACTION_MODES:
            raise OperationArgumentError(
                f"Model '{model_name}': hoodie_compact mode={mode!r}: one of "
                f"{', '.join(COMPACTION_MODES)}"
            )
        table = self._lake_table(relation, model_name, config)
        with dbt_errors("Model", model_name):
            if mode == "schedule":
                instant = table.services.schedule_compaction()
                return [] if instant is None else [{"instant": instant, "scheduled": True}]
            results = table.services.compact(self._spark(), pending_only=mode == "run_pending")
        return [
            {
                "instant": r.instant,
                "file_groups": r.files_written,
                "records": r.metadata.total("num_writes"),
                "log_files_compacted": r.metadata.total("total_log_files_compacted"),
                "seconds": round(r.seconds, 1),
                "scheduled": False,
            }
            for r in results
        ]

"""`dbt snapshot` into a Hudi copy-on-write table: dbt's MERGE step as one upsert.

dbt's snapshot machinery (strategies, `build_snapshot_table`, the staging query) is plain
SQL and runs on Spark as it is; only its last step, `MERGE INTO` the snapshot table, needs a
table format Spark SQL can write, and our lake tables are read-only from SQL. That MERGE closes
current versions and inserts new ones, matched on `dbt_scd_id` (each version's id), so it is
an upsert keyed by `dbt_scd_id`:

- a staged 'update' or 'delete' row names a current version by its scd id. It carries the NEW
  source values and the time the version ends, but the MERGE only sets `dbt_valid_to` of the
  stored version; so the upsert takes the stored row itself with `dbt_valid_to` replaced.
- a staged 'insert' row is a new version (or, with hard_deletes='new_record', a deletion
  marker); the MERGE inserts it only when no stored version has its scd id, and so do we (an
  upsert of a stored scd id would reopen that version instead).

A snapshot's table is always copy-on-write, unpartitioned and keyed by the scd id: its rows
are versions, not records, so Hudi's record-level settings (partitioning, precombine) have
nothing to act on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hoodie import COPY_ON_WRITE, DuplicateRecordKeyError
from hoodie.integration import META_COLUMNS

from .config_keys import gather_options
from .errors import ModelConfigError, UnnamedError, dbt_errors
from .model_config import ALIASES, ModelSettings, model_settings

LAKE_FORMATS = ("hoodie", "hudi")
# Columns of dbt's staging query that only steer the MERGE and never reach the table.
_STAGING_ONLY = re.compile(r"dbt_change_type|dbt_unique_key(_\d+)?", re.IGNORECASE)
_SCD, _ENDS = "__dbt_hoodie_scd_id", "__dbt_hoodie_valid_to"


def snapshot_settings(
    snapshot: str,
    config: Mapping[str, Any],
    columns: Mapping[str, str],
    *,
    schema: str,
    alias: str,
    warehouse_dir: str,
    catalog_options: Mapping[str, Any] | None = None,
) -> ModelSettings:
    """The write config and path of a snapshot's table, from the snapshot's own config (and
    `catalog_options`, the write options set on its table's catalog entry).

    Only `location_root` and `options` carry over: the snapshot's `unique_key` is its business
    key, not the table's record key (that is the scd id), and partitioning or a precombine
    field would be silently meaningless, so they are refused rather than ignored.
    """
    file_format = config.get("file_format")
    if file_format is not None and str(file_format).lower() not in LAKE_FORMATS:
        raise ModelConfigError(
            f"Snapshot '{snapshot}': file_format={file_format!r} is not supported. On the "
            "hoodie adapter a snapshot's table is always a Hudi copy-on-write table, the only "
            "format its MERGE can be done on; remove file_format or set it to 'hudi'"
        )
    for name in ("partition_path", "precombine_field"):
        given = [alias for alias in ALIASES[name] if config.get(alias) is not None]
        if given:
            raise ModelConfigError(
                f"Snapshot '{snapshot}': {given[0]}={config[given[0]]!r} does not apply to "
                "snapshots. Their table is keyed by the scd id column and unpartitioned (each "
                f"row is one version, which only ever changes its {columns['dbt_valid_to']}); "
                f"remove {given[0]} from the snapshot's config"
            )
    lake_config = {
        "materialized": "snapshot",
        "record_key": columns["dbt_scd_id"],
        "location_root": config.get("location_root"),
        # hoodie.* keys set at the top level and dbt-glue's hudi_options count as options.
        "options": gather_options(f"Snapshot '{snapshot}'", config, catalog=catalog_options),
        # dbt's snapshot semantics: new source columns are added, dropped ones stay (as null).
        "on_schema_change": "append_new_columns",
    }
    return model_settings(
        snapshot,
        lake_config,
        table_type=COPY_ON_WRITE,
        schema=schema,
        alias=alias,
        warehouse_dir=warehouse_dir,
        resource="Snapshot",
    )


class MissingSnapshotColumn(UnnamedError):
    """The snapshot's table or dbt's staging query lacks a column the snapshot's merge needs
    (`dbt_scd_id`, `dbt_valid_to`, `dbt_change_type`, or the names `snapshot_meta_column_names`
    gives them); the message names it and lists the columns there are (`snapshot_errors` adds the
    snapshot's name).

    If `snapshot_meta_column_names` changed since the table was built, restore the old names (or
    rebuild the snapshot's table under a new name)."""


def _column(df: DataFrame, name: str, where: str) -> str:
    """`name` as `df` spells it: Spark resolves columns case-insensitively, dicts do not."""
    for column in df.columns:
        if column.lower() == name.lower():
            return column
    raise MissingSnapshotColumn(
        f"column '{name}' is missing from {where} (columns: {', '.join(df.columns)}); if "
        "snapshot_meta_column_names changed since the table was built, restore them"
    )


def snapshot_batch(
    staged: DataFrame,
    stored: DataFrame,
    columns: Mapping[str, str],
    valid_to_current: str | None = None,
) -> DataFrame:
    """The rows to upsert for dbt's staging query `staged` against the table's rows `stored`.

    Closed versions (stored rows named by 'update' or 'delete' staging rows, with their
    `dbt_valid_to` set) followed by new versions ('insert' rows whose scd id is not stored).
    `valid_to_current` is the `dbt_valid_to_current` SQL expression, if the snapshot has one:
    like dbt's MERGE, a stored row counts as current when its end is null or that value.
    """
    stored = stored.drop(*[c for c in META_COLUMNS if c in stored.columns])
    scd = _column(stored, columns["dbt_scd_id"], "the snapshot's table")
    valid_to = _column(stored, columns["dbt_valid_to"], "the snapshot's table")
    change = _column(staged, "dbt_change_type", "dbt's staging query")
    staged_scd = _column(staged, columns["dbt_scd_id"], "dbt's staging query")
    staged_valid_to = _column(staged, columns["dbt_valid_to"], "dbt's staging query")

    closing = staged.where(F.col(change).isin("update", "delete")).select(
        F.col(staged_scd).alias(_SCD), F.col(staged_valid_to).alias(_ENDS)
    )
    current = F.col(valid_to).isNull()
    if valid_to_current:
        current = current | (F.col(valid_to) == F.expr(str(valid_to_current)))
    closed = (
        stored.where(current)
        .join(closing, F.col(scd) == F.col(_SCD))
        .withColumn(valid_to, F.col(_ENDS).cast(stored.schema[valid_to].dataType))
        .drop(_SCD, _ENDS)
    )
    helpers = [c for c in staged.columns if _STAGING_ONLY.fullmatch(c)]
    known = stored.select(F.col(scd).alias(_SCD))
    new = (
        staged.where(F.col(change) == "insert")
        .drop(*helpers)
        .join(known, F.col(staged_scd) == F.col(_SCD), "left_anti")
    )
    # By name: the staging query's columns come in another order, and a source column dropped
    # since the last run stays in the table (null in new versions), as with dbt's MERGE.
    return closed.unionByName(new, allowMissingColumns=True)


def snapshot_errors(
    snapshot: str, config: Mapping[str, Any], columns: Mapping[str, str]
) -> AbstractContextManager[None]:
    """Core errors as dbt errors that name the snapshot (`errors.dbt_errors`).

    Two rows with one scd id mean the query returned a unique_key more than once (the scd id
    hashes the key with the version's time): the core's advice for models (set a precombine
    field) does not apply, so this says what does.
    """
    duplicates = (
        f"its query returns more than one row for some unique_key={config.get('unique_key')!r} "
        f"value, so two versions got the same {columns['dbt_scd_id']}. Make the query return "
        "one row per unique_key (or widen unique_key to a list of columns that is unique)"
    )
    return dbt_errors("Snapshot", snapshot, {DuplicateRecordKeyError: lambda _: duplicates})

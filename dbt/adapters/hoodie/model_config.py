"""From a model's `config(...)` to a core `WriteConfig`: aliases, checks and the table path.

Users arrive from dbt (`unique_key`, `partition_by`) and from Hudi (`recordKey`,
`preCombineField`); each config accepts all its spellings, and two spellings that disagree are
an error rather than a silent pick.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from hoodie import MERGE_ON_READ, ConflictingSettingsError, WriteConfig
from hoodie.integration import as_field_tuple, option_keys

from .config_keys import check_keys
from .errors import ModelConfigError, dbt_errors
from .partial_update import OPTION as PARTIAL_OPTION
from .partial_update import partial_update_option

# tblproperties.<name>: Apache Hudi's Spark SQL table properties (see config_keys).
ALIASES = {
    "record_key": ("record_key", "unique_key", "recordKey", "primaryKey",
                   "tblproperties.primaryKey", "tblproperties.recordKey"),
    "partition_path": ("partition_path", "partition_by", "partitionPath"),
    "precombine_field": ("precombine_field", "preCombineField", "tblproperties.preCombineField"),
}  # fmt: skip
logger = AdapterLogger("Hoodie")


@dataclass(frozen=True)
class ModelSettings:
    """What a model's config comes to in the core's terms: its table's write config and path."""

    write_config: WriteConfig
    base_uri: str


@dataclass(frozen=True)
class LakeModel:
    """One lake model (or snapshot) as a materialization hands it to the adapter, in one object
    (dbt-duckdb's `TargetConfig`): the catalog relation it builds, and what dbt's node says of
    it (name, config, docs). The table's settings come from it (`settings`)."""

    relation: Any
    name: str
    config: dict[str, Any]
    description: str | None = None
    columns: dict[str, Any] | None = None
    resource: str = "Model"  # as errors name it: "Model" or "Snapshot"

    @classmethod
    def of(cls, node: Mapping[str, Any], relation: Any) -> LakeModel:
        """From dbt's node (`model` in a materialization) and the relation it builds."""
        resource = "Snapshot" if node.get("resource_type") == "snapshot" else "Model"
        return cls(
            relation=relation,
            name=node["name"],
            config=node.get("config") or {},
            description=node.get("description"),
            columns=node.get("columns"),
            resource=resource,
        )

    def settings(
        self,
        table_type: str,
        warehouse_dir: str,
        columns: Sequence[str] | None = None,
        catalog_options: Mapping[str, Any] | None = None,
    ) -> ModelSettings:
        """The model's write config and table path (`model_settings`); `columns`, the model's
        columns, for a partial update (merge_update_columns / merge_exclude_columns);
        `catalog_options`, the write options set on its table's catalog entry."""
        return model_settings(
            self.name,
            self.config,
            table_type=table_type,
            schema=self.relation.schema,
            alias=self.relation.identifier,
            warehouse_dir=warehouse_dir,
            columns=columns,
            catalog_options=catalog_options,
        )


def _pick(model: str, config: dict[str, Any], name: str, resource: str = "Model") -> Any:
    given = {alias: config.get(alias) for alias in ALIASES[name] if config.get(alias) is not None}
    if not given:
        return None
    normalized = {
        alias: as_field_tuple(value) if name != "precombine_field" else str(value)
        for alias, value in given.items()
    }
    distinct = set(normalized.values())
    if len(distinct) > 1:
        listed = " and ".join(f"{alias}={given[alias]!r}" for alias in given)
        raise ModelConfigError(
            f"{resource} '{model}': {listed} are aliases of '{name}' with different values; "
            "set only one of them"
        )
    return next(iter(given.values()))


# dbt's on_schema_change values; each is also a core SchemaChange policy of the same name.
_ON_SCHEMA_CHANGE = ("ignore", "append_new_columns", "sync_all_columns", "fail")

# compaction: the inline switches it sets ('schedule': plans only, a compaction run executes
# them, as Apache Hudi's hoodie.compact.schedule.inline).
_COMPACTION_SWITCH = {
    "on": ("true", "false"), "inline": ("true", "false"), True: ("true", "false"),
    "off": ("false", "false"), False: ("false", "false"), "schedule": ("false", "true"),
}  # fmt: skip


def _compaction_options(
    model: str,
    config: dict[str, Any],
    options: dict[str, Any],
    table_type: str,
    resource: str = "Model",
) -> dict[str, str]:
    """`compaction` ('inline' / 'on' or 'off') and `compaction_delta_commits` as Hudi options."""
    out: dict[str, str] = {}
    switch = config.get("compaction")
    commits = config.get("compaction_delta_commits")
    if (switch is not None or commits is not None) and table_type != MERGE_ON_READ:
        raise ModelConfigError(
            f"{resource} '{model}': compaction and compaction_delta_commits apply to "
            "materialized='mor_upsert' only (copy-on-write tables have no log files)"
        )
    if switch is not None:
        key = switch.lower() if isinstance(switch, str) else switch
        if key not in _COMPACTION_SWITCH:
            raise ModelConfigError(
                f"{resource} '{model}': compaction must be 'inline' (the default), 'schedule' "
                f"(plans only, executed by hoodie_compact) or 'off', got {switch!r}"
            )
        inline, schedule = _COMPACTION_SWITCH[key]
        out["hoodie.compact.inline"] = inline
        if schedule == "true" or "hoodie.compact.schedule.inline" in options:
            out["hoodie.compact.schedule.inline"] = schedule
    if commits is not None:
        if isinstance(commits, bool) or not isinstance(commits, int) or commits <= 0:
            raise ModelConfigError(
                f"{resource} '{model}': compaction_delta_commits must be a positive integer (delta "
                f"commits between compactions), got {commits!r}"
            )
        out["hoodie.compact.inline.max.delta.commits"] = str(commits)
    for key, value in out.items():
        if key in options and str(options[key]).lower() != value:
            raise ModelConfigError(
                f"{resource} '{model}': option '{key}'={options[key]!r} disagrees with the model's "
                "compaction settings; set only one of them"
            )
    return out


def model_settings(
    model: str,
    config: dict[str, Any],
    *,
    table_type: str,
    schema: str,
    alias: str,
    warehouse_dir: str,
    resource: str = "Model",
    columns: Sequence[str] | None = None,
    catalog_options: Mapping[str, Any] | None = None,
) -> ModelSettings:
    """The write config and path of a model's table (`resource` names what it is in errors:
    a "Model", or a "Snapshot", whose config `snapshot_settings` made from the snapshot's).
    `columns`, the model's columns, resolve merge_update_columns / merge_exclude_columns
    (`partial_update`); without them those configs are not resolved.

    A model's every config key is checked first (`config_keys`): its `hoodie.*` keys, from
    wherever they were set (`catalog_options`: on its table's catalog entry), become its
    options, and keys it cannot honour stop it. A snapshot's config came through
    `snapshot_settings`, which gathered its options."""
    if resource == "Model":
        checked = check_keys(model, config, resource, catalog_options)
        for warning in checked.warnings:
            logger.warning(warning)
        config = checked.config
    materialized = config.get("materialized")
    options = config.get("options") or {}
    if not isinstance(options, dict):
        raise ModelConfigError(
            f"{resource} '{model}': config 'options' must be a map of hoodie.* settings, "
            f"got {options!r}"
        )
    record_key = _pick(model, config, "record_key", resource)
    if record_key is not None:
        # dbt treats ['state', 'state'] as the key 'state'; so must the table's record keys.
        record_key = list(dict.fromkeys(as_field_tuple(record_key)))
    hudi_key = any(options.get(key) for key in option_keys("record_key_fields"))
    if (record_key is None or as_field_tuple(record_key) == ()) and not hudi_key:
        raise ModelConfigError(
            f"{resource} '{model}' (materialized='{materialized}') needs a record key: add "
            "record_key='<column>' (or a list of columns) to its config"
        )
    # The table is named after the model's alias, unless Hudi's own key names it.
    named = any(options.get(key) for key in option_keys("table_name"))
    hive_style = config.get("hive_style_partitioning")
    if hive_style is not None and not isinstance(hive_style, bool):
        raise ModelConfigError(
            f"{resource} '{model}': hive_style_partitioning must be true or false, "
            f"got {hive_style!r}"
        )
    options = {**options, **_compaction_options(model, config, options, table_type, resource)}
    on_schema_change = config.get("on_schema_change") or "ignore"
    if on_schema_change not in _ON_SCHEMA_CHANGE:
        raise ModelConfigError(
            f"{resource} '{model}': on_schema_change must be one of "
            f"{', '.join(_ON_SCHEMA_CHANGE)}, got {on_schema_change!r}"
        )
    conflict = {ConflictingSettingsError: lambda error: _conflict(error, materialized)}
    with dbt_errors(resource, model, conflict):

        def build(options: dict[str, Any]) -> WriteConfig:
            return WriteConfig.build(
                table_name=None if named else alias,
                record_key=record_key,
                partition_path=_pick(model, config, "partition_path", resource),
                precombine_field=_pick(model, config, "precombine_field", resource),
                table_type=table_type,
                hive_style_partitioning=hive_style,
                options=options,
                database=schema,
                schema_change=on_schema_change,
            )

        write_config = build(options)
        if columns is not None:
            never_kept = (*write_config.record_key_fields, *write_config.partition_fields)
            partial = partial_update_option(model, config, columns, never_kept)
            if partial:
                if options.get(PARTIAL_OPTION) is not None:
                    raise ModelConfigError(
                        f"{resource} '{model}': option '{PARTIAL_OPTION}' and "
                        "merge_update_columns / merge_exclude_columns set the same thing; "
                        "set only one of them"
                    )
                write_config = build({**options, **partial})
    location_root = config.get("location_root")
    if location_root:
        base_uri = posixpath.join(str(location_root).rstrip("/"), alias)
    else:
        base_uri = posixpath.join(warehouse_dir.rstrip("/"), f"{schema}.db", alias)
    return ModelSettings(write_config, base_uri)


def _conflict(error: ConflictingSettingsError, materialized: object) -> str:
    """A setting given both as a dbt config and as a Hudi option, in dbt's words. The table
    type comes from the materialization, which the model's config names instead."""
    if error.setting == "table_type":
        wanted = "mor_upsert" if error.option_value == MERGE_ON_READ else "cow_upsert"
        return (
            f"materialized='{materialized}' writes a {error.given} table, but option "
            f"'{error.option_key}' asks for {error.option_value}; remove the option, or use "
            f"materialized='{wanted}'"
        )
    return str(error)

"""Every key of a lake model's config: honoured, refused with what to write instead, or warned.

dbt hands a materialization the whole config: dbt's own keys (with their defaults), the
adapter's, `hoodie.*` keys set at the top level (a `config({...})` dict, `+hoodie...` in
dbt_project.yml, schema.yml) and any key a user made up. A key nobody reads is a setting the
user believes in and the table does not have (a precombine field given at the top level was
dropped, and a stale row won), so each key is one of:

- honoured: by dbt itself (`tags`, `docs`, hooks, ...) or by the lake materializations;
- refused while set, naming the key and what to write instead (dbt-spark's Spark-table
  settings, a made-up key, probably a typo);
- warned about once per model when set: dbt settings of other resource kinds that have no
  meaning for a lake table and change nothing (`column_types` of seeds, ...).

`hoodie.*` keys, from wherever they came, and dbt-glue's `hudi_options` all become the
model's `options`; one key with two values is an error naming both places.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hoodie.integration import closest_key

from .errors import ModelConfigError

# Read by dbt itself for every model; nothing for the adapter to do.
DBT_HANDLED = frozenset({
    "enabled", "alias", "schema", "database", "tags", "meta", "group", "static_analysis",
    "materialized", "pre-hook", "post-hook", "pre_hook", "post_hook", "quoting", "full_refresh",
    "docs", "contract", "access", "freshness", "event_time", "packages",
    # set by dbt on each batch of a microbatch model (dbt-core 1.9-1.11's legacy keys)
    "__dbt_internal_microbatch_event_time_start", "__dbt_internal_microbatch_event_time_end",
})  # fmt: skip
# Read by the lake materializations (model_config, impl, the macros).
HONOURED = frozenset({
    "record_key", "unique_key", "recordKey", "primaryKey", "partition_path", "partition_by",
    "partitionPath", "precombine_field", "preCombineField", "hive_style_partitioning",
    "location_root", "on_schema_change", "persist_docs", "options", "hudi_options",
    "tblproperties", "file_format", "compaction", "compaction_delta_commits",
    "incremental_strategy", "table_type", "incremental_predicates", "on_checkpoint_lost",
    "merge_update_columns", "merge_exclude_columns",
})  # fmt: skip
# Read by dbt-core's batching of materialized='incremental', incremental_strategy='microbatch'.
MICROBATCH_KEYS = frozenset({"batch_size", "begin", "lookback", "concurrent_batches"})
LAKE_FORMATS = ("hudi", "hoodie")
# incremental_strategy values that are what a lake upsert does.
UPSERT_STRATEGIES = ("merge",)
MICROBATCH = "microbatch"
# tblproperties of Apache Hudi's Spark SQL tables (`create table ... using hudi
# tblproperties (primaryKey = 'id', ...)`), as the model config aliases they are.
TBLPROPERTY_ALIASES = frozenset({"primaryKey", "recordKey", "preCombineField"})
# Where `hoodie.*` properties set on a lake table's catalog entry come from (see .catalog).
CATALOG_PLACE = "the catalog table's properties (ALTER TABLE ... SET TBLPROPERTIES)"
_TABLE_TYPES = {"cow": "cow_upsert", "mor": "mor_upsert"}


def _unset(value: object) -> bool:
    return value is None or value == {} or value == [] or value == ""


@dataclass(frozen=True)
class Rule:
    """What a key set to a value other than its default (`default` says which values are)
    means for a lake model: `message` ends an error (`refuse`) or a warning."""

    message: str
    refuse: bool = True
    default: Callable[[object], bool] = _unset


RULES: dict[str, Rule] = {
    "grants": Rule(
        "cannot be applied: Spark's catalog has no GRANT for these tables, and access to a "
        "lake table is its files' and metastore's. Remove grants for lake models (in "
        "dbt_project.yml: +grants: {} on their folder) and grant access on the storage"
    ),
    "sql_header": Rule(
        "is not run by the lake materializations (a Spark session runs one statement at a "
        "time). Move the statements to pre_hook, which runs before the model's query"
    ),
    "clustered_by": Rule(
        "(Spark's bucketing) does not apply to Hudi tables. For Hudi's bucket index use "
        "options={'hoodie.index.type': 'BUCKET', 'hoodie.bucket.index.num.buckets': '<n>'} "
        "(it hashes the record key)"
    ),
    "buckets": Rule(
        "(Spark's bucketing) does not apply to Hudi tables. For Hudi's bucket index use "
        "options={'hoodie.index.type': 'BUCKET', 'hoodie.bucket.index.num.buckets': '<n>'}"
    ),
    "column_types": Rule("applies to seeds only; ignored for this model", refuse=False),
    "on_configuration_change": Rule(
        "applies to materialized views only; ignored for this model",
        refuse=False, default=lambda v: v in (None, "apply"),
    ),
    "lookback": Rule(
        "applies to incremental_strategy='microbatch' only; ignored for this model",
        refuse=False, default=lambda v: v in (None, 1),
    ),
}  # fmt: skip
for _key in ("batch_size", "begin", "concurrent_batches"):
    RULES[_key] = Rule(
        "applies to incremental_strategy='microbatch' only; ignored for this model",
        refuse=False,
    )

_KNOWN = DBT_HANDLED | HONOURED | set(RULES) | MICROBATCH_KEYS
_warned: set[tuple[str, str]] = set()  # (model, key): warned once per process


@dataclass(frozen=True)
class CheckedConfig:
    """A lake model's config after its keys were checked: `config` with `options` holding
    every `hoodie.*` key of the model and tblproperties' aliases as top-level keys;
    `warnings` are the messages of keys that change nothing, each given once per model."""

    config: dict[str, Any]
    warnings: tuple[str, ...]


def check_keys(
    model: str,
    config: Mapping[str, Any],
    resource: str = "Model",
    catalog: Mapping[str, Any] | None = None,
) -> CheckedConfig:
    """Refuse every key a lake model cannot honour; gather its `hoodie.*` options, with the
    write options of its table's catalog entry (`catalog`, see `.catalog`)."""
    materialized = str(config.get("materialized"))
    where = f"{resource} '{model}'"
    microbatch = str(config.get("incremental_strategy")).lower() == MICROBATCH
    warnings = []
    for key, value in config.items():
        if key.startswith("hoodie.") or key in DBT_HANDLED or key in HONOURED:
            continue
        rule = RULES.get(key)
        if microbatch and key in MICROBATCH_KEYS:
            continue  # dbt's (it runs our batches one after another, and says so)
        if rule is None:
            raise ModelConfigError(f"{where}: {_unknown(key, materialized)}")
        if rule.default(value):
            continue
        text = f"{where}: config {key}={value!r} {rule.message}"
        if rule.refuse:
            raise ModelConfigError(text)
        if (model, key) not in _warned:
            _warned.add((model, key))
            warnings.append(text)
    _check_strategy(where, config.get("incremental_strategy"), materialized)
    _check_file_format(where, config.get("file_format"), materialized)
    lake = lake_materialization(where, config)
    out = dict(config)
    properties = _tblproperties(where, config.get("tblproperties"), lake)
    for name, value in properties.items():
        if not name.startswith("hoodie."):
            out[f"tblproperties.{name}"] = value
    out["options"] = gather_options(where, config, properties, catalog)
    return CheckedConfig(out, tuple(warnings))


def _unknown(key: str, materialized: str) -> str:
    close = closest_key(key, sorted(_KNOWN))
    hint = f"Did you mean '{close}'? " if close else ""
    return (
        f"config '{key}' means nothing to materialized='{materialized}', so it would change "
        f"nothing. {hint}Hudi settings are hoodie.* keys (or options={{...}}); keys for your "
        "own macros belong under meta"
    )


def _check_strategy(where: str, strategy: object, materialized: str) -> None:
    if strategy is None or str(strategy).lower() in UPSERT_STRATEGIES:
        return
    if str(strategy).lower() == MICROBATCH:
        if materialized == "incremental":
            return
        kind = "mor" if materialized == "mor_upsert" else "cow"
        raise ModelConfigError(
            f"{where}: incremental_strategy='microbatch' runs batch by batch only for "
            f"materialized='incremental' (dbt-core batches no other materialization). Write "
            f"materialized='incremental', file_format='hudi', table_type='{kind}' instead of "
            f"materialized='{materialized}'; the table is the same lake table"
        )
    hint = (
        " For insert-only runs, set options={'hoodie.datasource.write.operation': 'insert'}"
        if str(strategy).lower() == "append"
        else " To replace the table's contents, run the model with --full-refresh"
        if str(strategy).lower() == "insert_overwrite"
        else ""
    )
    raise ModelConfigError(
        f"{where}: incremental_strategy={strategy!r} is not what materialized='{materialized}' "
        f"does: it upserts by record key (incremental_strategy 'merge'). Remove it, or set "
        f"'merge'.{hint}"
    )


def _check_file_format(where: str, file_format: object, materialized: str) -> None:
    if file_format is None or str(file_format).lower() in LAKE_FORMATS:
        return
    raise ModelConfigError(
        f"{where}: file_format={file_format!r} is not what materialized='{materialized}' "
        "writes: its table is always an Apache Hudi table. Remove file_format or set 'hudi' "
        "(for a plain Spark table use materialized='table' or 'incremental')"
    )


def lake_materialization(where: str, config: Mapping[str, Any]) -> str:
    """'cow_upsert' or 'mor_upsert': how a lake model's table is written. A lake model of
    materialized='incremental' (file_format='hudi') names its table type by `table_type`
    ('cow', the default, or 'mor', as Apache Hudi's Spark SQL `type`) or tblproperties'
    `type`; the lake materializations are their own type, and a `table_type` that disagrees
    is refused."""
    materialized = str(config.get("materialized"))
    given = config.get("table_type")
    if given is not None and str(given).lower() not in _TABLE_TYPES:
        raise ModelConfigError(
            f"{where}: table_type must be 'cow' (copy-on-write) or 'mor' (merge-on-read), "
            f"got {given!r}"
        )
    if materialized in _TABLE_TYPES.values():
        if given is not None and _TABLE_TYPES[str(given).lower()] != materialized:
            raise ModelConfigError(
                f"{where}: table_type={given!r} disagrees with materialized='{materialized}'; "
                "remove table_type (the materialization is the table type)"
            )
        return materialized
    if given is None:
        properties = config.get("tblproperties")
        if isinstance(properties, Mapping) and properties.get("type") is not None:
            given = properties["type"]
    return _TABLE_TYPES.get(str(given or "cow").lower(), "cow_upsert")


def _tblproperties(where: str, given: object, materialized: str) -> dict[str, Any]:
    """Apache Hudi's Spark SQL table properties: `primaryKey`, `preCombineField`, `type`
    (checked against the materialization) and `hoodie.*` keys; any other is refused."""
    if _unset(given):
        return {}
    if not isinstance(given, Mapping):
        raise ModelConfigError(f"{where}: tblproperties must be a map, got {given!r}")
    out: dict[str, Any] = {}
    for key, value in given.items():
        key = str(key)
        if key == "type":
            wanted = _TABLE_TYPES.get(str(value).lower())
            if wanted is None or wanted != materialized:
                raise ModelConfigError(
                    f"{where}: tblproperties type={value!r} disagrees with the table type "
                    f"{materialized} asks for (type 'cow' is cow_upsert, 'mor' is "
                    "mor_upsert); remove it, or change the materialization (table_type)"
                )
        elif key in TBLPROPERTY_ALIASES or key.startswith("hoodie."):
            out[key] = value
        else:
            raise ModelConfigError(
                f"{where}: tblproperties key '{key}' is not a Hudi table setting we write "
                "(tblproperties takes primaryKey, preCombineField, type and hoodie.* keys), "
                "so it would change nothing; remove it"
            )
    return out


def _same(first: object, second: object) -> bool:
    """One setting's two values mean the same: equal as text, booleans in any case (YAML's
    `true` and an option's `'true'` or `'True'`)."""
    a, b = str(first).strip(), str(second).strip()
    return a == b or (a.lower() in ("true", "false") and a.lower() == b.lower())


def gather_options(
    where: str,
    config: Mapping[str, Any],
    properties: Mapping[str, Any] | None = None,
    catalog: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every `hoodie.*` key of the model, by the place it was set (`catalog`: the write
    options set on its table's catalog entry); one key, one value."""
    places: list[tuple[str, Any]] = []
    for name in ("options", "hudi_options"):
        given = config.get(name)
        if _unset(given):
            continue
        if not isinstance(given, Mapping):
            raise ModelConfigError(
                f"{where}: config '{name}' must be a map of hoodie.* settings, got {given!r}"
            )
        places.append((name, given))
    top = {k: v for k, v in config.items() if k.startswith("hoodie.")}
    places.append(("the config's top level", top))
    hoodie_properties = {k: v for k, v in (properties or {}).items() if k.startswith("hoodie.")}
    places.append(("tblproperties", hoodie_properties))
    places.append((CATALOG_PLACE, dict(catalog or {})))
    merged: dict[str, Any] = {}
    came_from: dict[str, str] = {}
    for place, given in places:
        for key, value in given.items():
            key = str(key)
            if value is None:  # null in yml: not set here
                continue
            if key in merged and not _same(merged[key], value):
                raise ModelConfigError(
                    f"{where}: option '{key}' is set twice with different values: "
                    f"{merged[key]!r} in {came_from[key]} and {value!r} in {place}; set it once"
                )
            merged[key] = value
            came_from[key] = place
    return merged

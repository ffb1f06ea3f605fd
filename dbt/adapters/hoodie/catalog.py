"""What a lake table's catalog entry carries, and what dbt's catalog shows of it.

- The facts `dbt docs generate` shows (`catalog_facts`): Hudi's table type, version, keys,
  and `HoodieTable.stats` (rows, size, files, latest commit, pending services), as dbt-spark's
  `stats:<id>:<label|value|description|include>` columns. Rows and size use the ids dbt docs
  formats as a number and as a size (`rows`, `bytes`); a row count that is not exact (log
  files pending compaction) is shown as text under another id, never as a number.
- The catalog entry's table properties (`ALTER TABLE ... SET TBLPROPERTIES`), read from
  `SHOW TABLE EXTENDED` (the only listing that has them: `SHOW TBLPROPERTIES` and `DESCRIBE
  TABLE EXTENDED` describe the data source's table, which carries none). Apache Hudi's Spark
  SQL writes take a catalog table's properties as write options; so do our writes
  (`catalog_write_options`), and a Hudi setting that is no write option is refused, never
  ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hoodie import HoodieError, HoodieTable, InvalidConfigError
from hoodie.integration import parse_options

from .config_keys import TBLPROPERTY_ALIASES
from .errors import TablePropertyError, dbt_errors

_COMMENT = re.compile(r"^Comment: (.*)$", re.MULTILINE)
_PROPERTIES = re.compile(r"^Table Properties: \[(.*)\]$", re.MULTILINE)
# `k1=v1, k2=v2`: a property starts after ", " where a key and "=" follow (a value holding
# ", x=" is cut there: the listing does not quote values).
_NEXT_PROPERTY = re.compile(r", (?=[^\s,=]+=)")
# What Spark and the metastore put in every entry's listing: not the user's properties.
_RESERVED = frozenset({
    "comment", "external", "is_managed_location", "location", "owner", "path", "provider",
    "transient_lastDdlTime", "collation",
})  # fmt: skip
_RESERVED_PREFIXES = ("option.", "spark.")


def table_comment(information: str) -> str | None:
    """The table comment in a `SHOW TABLE EXTENDED` listing."""
    found = _COMMENT.search(information or "")
    return found.group(1) if found else None


def table_properties(information: str) -> dict[str, str]:
    """The properties users set on a catalog entry (`ALTER TABLE ... SET TBLPROPERTIES`), from
    a `SHOW TABLE EXTENDED` listing, without those Spark and the metastore keep there."""
    found = _PROPERTIES.search(information or "")
    if found is None or not found.group(1):
        return {}
    out = {}
    for item in _NEXT_PROPERTY.split(found.group(1)):
        key, _, value = item.partition("=")
        if key in _RESERVED or key.startswith(_RESERVED_PREFIXES):
            continue
        out[key] = value
    return out


def catalog_write_options(
    resource: str, name: str, relation: str, properties: Mapping[str, str]
) -> dict[str, str]:
    """The `hoodie.*` properties of a lake table's catalog entry, as write options of its next
    write (as Apache Hudi's Spark SQL writes take them); `resource` `name` is the dbt resource
    whose run or read meets them. A Hudi setting there that is no write option (a read
    option, an unknown key, a bad value, Hudi SQL's primaryKey / type, which the model's
    config says) is refused, naming it and what to do. Other properties are the catalog's
    own (a team, an owner): kept, not read."""
    options = {}
    for key, value in sorted(properties.items()):
        unset = f"Remove it: ALTER TABLE {relation} UNSET TBLPROPERTIES ('{key}')"
        found = f"{relation} has table property {key}={value!r} in the catalog"
        if key in TBLPROPERTY_ALIASES or key == "type":
            raise TablePropertyError(
                f"{resource} '{name}': {found}, but the table's keys and type are the model's "
                "config (record_key, precombine_field, the materialization). "
                f"{unset}, and set it in the model's config"
            )
        if not key.startswith("hoodie."):
            continue

        def refused(error: Exception, found: str = found, unset: str = unset) -> str:
            # the core's first line, without its list of every supported option
            reason = str(error).splitlines()[0].split(" Supported options")[0]
            return (
                f"{found}, which the lake table's writes cannot take ({reason}). Catalog "
                "properties are write options; read options go to the read (hoodie_as_of, "
                f"hoodie_changes, ...). {unset}, and set it in the model's config "
                "(options={...}) if it is one"
            )

        with dbt_errors(resource, name, {InvalidConfigError: refused}):
            parse_options({key: value})
        options[key] = value
    return options


def _fact(key: str, label: str, value: Any, description: str = "") -> dict[str, Any]:
    return {
        f"stats:{key}:label": label,
        f"stats:{key}:value": value,
        f"stats:{key}:description": description,
        f"stats:{key}:include": True,
    }


def error_facts(message: str) -> dict[str, Any]:
    """The fact a table whose facts cannot be read shows instead of them."""
    return _fact("hoodie_error", "Hudi table error", message,
                 "reading the table's metadata for these facts failed")  # fmt: skip


def catalog_facts(table: HoodieTable) -> dict[str, Any]:
    """A lake table's facts as dbt-spark's catalog stats columns (see the module docstring).

    The identity facts come from `hoodie.properties`; the rest from `HoodieTable.stats`. A
    table whose metadata or latest files do not read shows its identity and the error (as a
    fact named "Hudi table error"), so `dbt docs generate` goes on with the other tables.
    """
    properties = table.properties
    facts = {
        **_fact("hoodie_table_type", "Hudi table type", properties.table_type),
        **_fact("hoodie_table_version", "Hudi table version", properties.table_version),
        **_fact("hoodie_record_key", "Record key", ", ".join(properties.record_key_fields)),
        **_fact("hoodie_partition_path", "Partition path",
                ", ".join(properties.partition_fields) or "(not partitioned)"),
    }  # fmt: skip
    try:
        stats = table.stats()
    except (HoodieError, OSError) as error:
        return {**facts, **error_facts(f"{type(error).__name__}: {error}")}
    if stats.rows_exact:
        facts.update(_fact("rows", "Rows", stats.rows, "rows of the latest snapshot"))
    else:
        merged = "the log files' changes are merged only by a read or a compaction"
        facts.update(_fact("hoodie_rows_estimate", "Rows (estimate)", stats.rows_text(),
                           f"rows of the latest base files; {merged}"))  # fmt: skip
    files = "the latest snapshot's files (older file versions are not counted)"
    facts.update(_fact("bytes", "Size", stats.size_bytes, f"bytes of {files}"))
    facts.update(_fact("hoodie_files", "Files", stats.files_text(), files))
    latest = "the latest completed write: commit, delta commit, compaction or clustering"
    facts.update(_fact("hoodie_latest_commit", "Latest commit", stats.latest_commit_text(),
                       latest))  # fmt: skip
    if properties.is_merge_on_read:
        facts.update(_fact("hoodie_pending_compactions", "Pending compactions",
                           stats.pending_compactions))  # fmt: skip
    facts.update(_fact("hoodie_pending_clustering", "Pending clustering",
                       stats.pending_clusterings))  # fmt: skip
    return facts

"""dbt's `merge_update_columns` / `merge_exclude_columns` on a lake upsert: a partial update.

Resolved as dbt-spark's MERGE resolves them (`get_merge_update_columns`): both set is an error;
`merge_update_columns` names the columns a matched row updates; `merge_exclude_columns` names
those it keeps, the others updated, compared without case. Where dbt-spark lets a name that
is not a column fail in Spark's SQL (or, excluded, pass unnoticed), a lake model's is an error
listing the model's columns. The record key and partition columns are always updated (they
are what the row is matched and placed by), so excluding one is an error too; the ordering
(precombine) column is always taken with the update, as it decides that the row wins.

The result is the core's option `hoodie.write.partial.update.columns` (`WriteConfig`):
copy-on-write and merge-on-read tables, every index but a global one that moves records
between partitions (refused there, naming the option to set).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import ModelConfigError

OPTION = "hoodie.write.partial.update.columns"
UPDATE, EXCLUDE = "merge_update_columns", "merge_exclude_columns"


def _names(model: str, key: str, given: object) -> list[str]:
    """A config's column list (dbt takes a list; a single name is taken as one)."""
    if given is None or given == [] or given == "":
        return []
    listed = [given] if isinstance(given, str) else given
    if not isinstance(listed, Sequence) or not all(
        isinstance(name, str) and name.strip() for name in listed
    ):
        raise ModelConfigError(f"Model '{model}': {key} must be a list of column names, "
                               f"got {given!r}")  # fmt: skip
    return [name.strip() for name in listed]


def partial_update_option(
    model: str,
    config: Mapping[str, Any],
    columns: Sequence[str],
    never_kept: Sequence[str],
) -> dict[str, str]:
    """The core option a model's merge_update_columns / merge_exclude_columns come to ({} when
    neither is set: whole rows). `columns` are the model's columns; `never_kept` the record
    key and partition columns."""
    update = _names(model, UPDATE, config.get(UPDATE))
    exclude = _names(model, EXCLUDE, config.get(EXCLUDE))
    if update and exclude:
        raise ModelConfigError(
            f"Model '{model}' cannot specify merge_update_columns and merge_exclude_columns. "
            "Please update model to use only one config"
        )
    if not update and not exclude:
        return {}
    by_lower = {c.lower(): c for c in columns}
    key = UPDATE if update else EXCLUDE
    unknown = [name for name in (update or exclude) if name.lower() not in by_lower]
    if unknown:
        raise ModelConfigError(
            f"Model '{model}': {key} names {', '.join(unknown)}, which "
            f"{'is' if len(unknown) == 1 else 'are'} not a column of the model (its columns: "
            f"{', '.join(columns)})"
        )
    if update:
        chosen = list(dict.fromkeys(by_lower[name.lower()] for name in update))
    else:
        excluded = {name.lower() for name in exclude}
        fixed = [c for c in never_kept if c.lower() in excluded]
        if fixed:
            raise ModelConfigError(
                f"Model '{model}': merge_exclude_columns names {', '.join(fixed)}, the record "
                "key or partition column(s), which a matched row always takes (it is matched "
                "and placed by them); remove them from merge_exclude_columns"
            )
        chosen = [c for c in columns if c.lower() not in excluded]
    # (a list of key columns only still means a partial update: the ordering column is taken)
    return {OPTION: ",".join(chosen or list(never_kept))}

"""The core's errors as dbt errors, in one place: every hook of the adapter raises what it
meets through `dbt_errors`.

The core's messages name the table, option, column or instant and say how to fix it in the
core's own terms. Here they get the dbt resource they came from ("Model 'orders'",
"Snapshot 'orders_history'") and the dbt way to act on them: config errors become compilation
errors (as dbt reports `on_schema_change` refusals), everything else a runtime error, and a
change the table cannot take in place (its keys, partitioning or type) says which `--full-refresh`
rebuilds it.

A failure of Spark work (a worker's error that is none of the core's) reaches the user as one
line naming its cause; Spark's whole error, the Python and Java tracebacks, goes to dbt's debug
log (logs/dbt.log, or the console with --debug).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from hoodie import (
    HoodieError,
    InvalidConfigError,
    SchemaEvolutionError,
    TableIdentityError,
    TaskFailedError,
)

MATERIALIZATIONS = {"COPY_ON_WRITE": "cow_upsert", "MERGE_ON_READ": "mor_upsert"}
logger = AdapterLogger("Hoodie")


class UnnamedError(CompilationError):
    """A config error the adapter raises where it does not know the dbt resource (a helper of a
    snapshot's merge that is handed only DataFrames): `dbt_errors` names the resource. It reaches
    the user as a compilation error of its subclasses' kind.

    Fix the config the message names."""


# A resource's own words for core errors it knows better than the core: for each class, the
# message in the resource's terms (a snapshot's duplicate scd ids, a model's table type).
Advice = Mapping[type[HoodieError], Callable[[Any], str]]


def dbt_error(
    resource: str, name: str, error: HoodieError, advice: Advice | None = None
) -> Exception:
    """The dbt error for a core error raised while building `resource` `name`; `advice`
    replaces the core's message for the classes it names."""
    said = next((say(error) for cls, say in (advice or {}).items() if isinstance(error, cls)), None)
    message = f"{resource} '{name}': {error if said is None else said}"
    if isinstance(error, TaskFailedError):
        logger.debug(f"{resource} '{name}': Spark's error ({error.instant}):\n{error.detail}")
    if isinstance(error, TableIdentityError):
        message += _rebuild_hint(resource, error)
    if isinstance(error, (InvalidConfigError, SchemaEvolutionError)):
        return CompilationError(message)
    return DbtRuntimeError(message)


@contextmanager
def dbt_errors(resource: str, name: str, advice: Advice | None = None) -> Iterator[None]:
    """Raise the core's errors in the block, and the adapter's unnamed ones, as dbt errors
    naming the resource."""
    try:
        yield
    except UnnamedError as error:
        raise CompilationError(f"{resource} '{name}': {error.msg}") from error
    except HoodieError as error:
        raise dbt_error(resource, name, error, advice) from error


def _rebuild_hint(resource: str, error: TableIdentityError) -> str:
    if error.setting == "table_type" and error.stored in MATERIALIZATIONS:
        keep = MATERIALIZATIONS[str(error.stored)]
        return (
            f". In dbt: keep materialized='{keep}', or run the {resource.lower()} once with "
            "--full-refresh to rebuild the table with the new materialization"
        )
    return f". In dbt: run the {resource.lower()} once with --full-refresh to rebuild the table"

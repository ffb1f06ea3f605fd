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


def tagged(message: str, cls: type[BaseException]) -> str:
    """`message` ending with the name of its error class, in brackets: the key of its entry on
    docs/errors.md (dbt shows only the message, never the class)."""
    return f"{message} [{cls.__name__}]"


class _TaggedCompilationError(CompilationError):
    """A compilation error whose message ends with its class's name (`tagged`)."""

    def __init__(self, msg: str, node: Any = None) -> None:
        super().__init__(tagged(msg, type(self)), node)


class _TaggedRuntimeError(DbtRuntimeError):
    """A runtime error whose message ends with its class's name (`tagged`)."""

    def __init__(self, msg: str, node: Any = None) -> None:
        super().__init__(tagged(msg, type(self)), node)


class ModelConfigError(_TaggedCompilationError):
    """A model's or snapshot's config is one the adapter cannot honour: a key it does not know,
    a value out of range, two settings that say different things (`options` and a config, two
    aliases of one option), a dbt-spark or dbt-glue setting that means "use this adapter's
    materialization" (`file_format='hudi'` with `table`, an `incremental_strategy` other than
    merge), or `incremental_predicates` / `event_time` that do not fit the model's columns.
    Nothing was written.

    The message names the model, the config key and what to write instead; the keys are on
    [Model configs](configs.md), the `hoodie.*` options on [Options](options.md)."""


class ProfileError(_TaggedRuntimeError):
    """The `hoodie` target in profiles.yml is one the adapter cannot start: an unsupported
    `method`, both `master` and `remote`, a value that is no Spark master or Spark Connect URL,
    a setting a Spark Connect server keeps for itself, or one setting given twice.

    Fix the key the message names in profiles.yml ([The profile](profile.md))."""


class SparkStartError(_TaggedRuntimeError):
    """The Spark session did not start: the JVM (Java 17 or 21, `JAVA_HOME`), the Spark
    master or Spark Connect server the profile names, or a `spark_conf` value Spark refuses.
    The message carries Spark's own reason.

    Check Java and the profile's `master`/`remote`/`spark_conf`; `logs/spark.log` has the JVM's
    log ([Troubleshooting](troubleshooting.md))."""


class UnenforceableConstraintError(_TaggedCompilationError):
    """A model's enforced contract declares constraints a lake table cannot enforce (primary
    key, foreign key, unique, check): only `not_null` is enforced. Nothing was written.

    Remove the others from the model's yml, or set `warn_unenforced: false` on them."""


class ContractViolationError(_TaggedRuntimeError):
    """A run's rows break the model's `not_null` contract: the message names the columns and
    how many rows. The check runs before anything is written, so the table is as it was.

    Filter or fill the nulls in the model's SQL, or remove the constraint."""


class NotALakeTableError(_TaggedRuntimeError):
    """A relation a hoodie macro or operation reads or maintains is not a hoodie lake table: it
    does not exist yet, or it is a table of another format or a view (a snapshot never replaces
    one). Nothing was changed.

    Build the model first (`dbt run -s <model>`), or point the macro at a `cow_upsert` /
    `mor_upsert` model; for a snapshot, drop the other object or give the snapshot another
    alias."""


class ReadMacroError(_TaggedCompilationError):
    """A table-reading macro (`hoodie_incremental`, `hoodie_cdc`, `hoodie_changes`) was asked
    for something the table or the model cannot give: a `format` it does not know, change data
    (CDC) of a table that logs none, `hoodie_incremental` in a model that is no lake table
    (its checkpoint lives in the model's own table), or another `format` than its last run's.

    Do what the message says: create the upstream with `hoodie.table.cdc.enabled`, use a lake
    model, or run the model once with `--full-refresh` ([Reading](reading.md))."""


class CheckpointLostError(_TaggedRuntimeError):
    """An incremental read (`hoodie_incremental`) cannot continue from where the model's last
    run stopped: the upstream's commits after it were archived or cleaned, or the upstream was
    rebuilt. Reading on would miss changes, so the run stops before writing.

    Rebuild the model with `--full-refresh`, or set `on_checkpoint_lost='full_refresh'` to have
    it rebuilt when this happens ([Reading](reading.md))."""


class TableLocationError(_TaggedRuntimeError):
    """A snapshot's table is registered at another place than its config now puts it
    (`location_root` changed): writing at the new place would start its history over.

    Restore the old `location_root`, or move the table's files and register them anew, as the
    message says."""


class TablePropertyError(_TaggedCompilationError):
    """`ALTER TABLE ... SET TBLPROPERTIES` set a property on a hoodie table that the model's
    config owns (its keys, its type) or that is no write option: the next run stops rather
    than ignore it. Nothing was written.

    Run the `ALTER TABLE ... UNSET TBLPROPERTIES` the message gives, and set the value in the
    model's config ([The catalog](catalog.md))."""


class OperationArgumentError(_TaggedCompilationError):
    """A hoodie operation (`dbt run-operation hoodie_compact`, `hoodie_cluster`, `hoodie_upgrade`,
    `hoodie_timeline`, ...) got an argument it does not take or a model name not in the
    project. Nothing was changed.

    Fix the `--args` the message names ([Operations](operations.md))."""


# The classes a macro raises by name (`HoodieAdapter.hoodie_raise`).
BY_NAME: dict[str, type[_TaggedCompilationError] | type[_TaggedRuntimeError]] = {
    cls.__name__: cls
    for cls in (ModelConfigError, NotALakeTableError, OperationArgumentError, ReadMacroError)
}


class UnnamedError(_TaggedCompilationError):
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
    message = tagged(message, type(error))
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

"""dbt's `incremental_predicates` on a lake upsert: honoured where they cannot change which rows
exist, refused where they could.

In dbt-spark's MERGE a predicate narrows the target rows a source row may match; a row of a
key stored outside the predicates is inserted again, a duplicate. A lake upsert never inserts
a key it did not look up, so it takes the predicates as what they are for, a bound on the
stored data a run may touch:
- each predicate may name only partition columns (as `DBT_INTERNAL_DEST.<column>`, dbt's
  alias for the target, or bare) and literals: Spark resolves it against those columns alone;
- every row of the run must lie in partitions the predicates allow. Under a non-global index
  an upsert looks up, rewrites and fills small files only in its rows' partitions, so the run
  then touches no stored partition outside them; a row outside is an error, never a silent
  insert;
- a global index (GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX) looks a key up in every partition,
  which no predicate can narrow: refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hoodie import WriteConfig
from hoodie.integration import quoted_name

from .errors import ModelConfigError

TARGET_ALIAS = "DBT_INTERNAL_DEST"


def predicates_of(model: str, given: object) -> list[str]:
    """The config's predicates as a list of SQL texts (dbt takes a string or a list)."""
    if given is None or given == [] or given == "":
        return []
    listed = [given] if isinstance(given, str) else given
    if not isinstance(listed, Sequence) or not all(
        isinstance(p, str) and p.strip() for p in listed
    ):
        raise ModelConfigError(
            f"Model '{model}': incremental_predicates must be a list of SQL conditions, "
            f"got {given!r}"
        )
    return [p.strip() for p in listed]


def check_rows(model: str, predicates: list[str], rows: DataFrame, config: WriteConfig) -> None:
    """Refuse predicates the upsert cannot honour, and a run with rows outside them."""
    if not predicates:
        return
    if config.global_index:
        raise ModelConfigError(
            f"Model '{model}': incremental_predicates cannot bound a {config.index_type} "
            "upsert: a global index looks each key up in every partition. Remove them, or "
            "use a partition-local index (SIMPLE, BLOOM, BUCKET)"
        )
    partitions = list(config.partition_fields)
    if not partitions:
        raise ModelConfigError(
            f"Model '{model}': incremental_predicates bound the partitions an upsert touches, "
            "and this table has no partition columns; remove them (the record key alone "
            "decides which row is replaced)"
        )
    target = rows.select([F.col(quoted_name(c)) for c in partitions]).alias(TARGET_ALIAS)
    conditions = []
    for predicate in predicates:
        try:
            condition = F.expr(predicate)
            _ = target.where(condition).schema  # resolved now, also over Spark Connect
        except AnalysisException as error:
            raise ModelConfigError(
                f"Model '{model}': incremental_predicates entry {predicate!r} may name only "
                f"the partition columns ({', '.join(partitions)}) of {TARGET_ALIAS}, and "
                f"literals: {str(error).splitlines()[0]}"
            ) from None
        conditions.append(condition)
    allowed = conditions[0]
    for condition in conditions[1:]:
        allowed = allowed & condition
    outside = target.where(~F.coalesce(allowed, F.lit(False))).count()
    if outside:
        raise ModelConfigError(
            f"Model '{model}': {outside} row(s) of this run lie in partitions "
            f"incremental_predicates exclude ({' and '.join(predicates)}); a lake upsert "
            "looks keys up only where the predicates allow, so it would insert them blind. "
            "Filter the model's rows by the same condition, or widen the predicates"
        )

"""Model contracts on lake tables: which constraints hold, and the not_null check.

dbt checks a contract's column names and data types itself (`get_assert_columns_equivalent`,
called by the lake materializations before anything runs). The constraints are the adapter's
business. Warehouses enforce them in the table's DDL, and for those they cannot enforce dbt
only warns, because the declaration still lands in the catalog for tools to read. A Hudi table
has no DDL to hold a constraint and Spark enforces none on a data source table, so a warned
constraint would be a promise nobody keeps or even records. So: `not_null` is checked on the
model's rows before anything is written, and every other kind is refused, with what to use
instead (the data test that checks the same thing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.base import ConstraintSupport
from dbt_common.contracts.constraints import ConstraintType
from pyspark.sql import functions as F

from hoodie.integration import quoted_name

from .errors import ContractViolationError, UnenforceableConstraintError

# What dbt is told (dbt reads it when comparing contracts across states). `not_null` is checked
# on every run; the others are refused by the lake materializations, never stored anywhere.
CONSTRAINT_SUPPORT = {
    ConstraintType.check: ConstraintSupport.NOT_SUPPORTED,
    ConstraintType.not_null: ConstraintSupport.ENFORCED,
    ConstraintType.unique: ConstraintSupport.NOT_SUPPORTED,
    ConstraintType.primary_key: ConstraintSupport.NOT_SUPPORTED,
    ConstraintType.foreign_key: ConstraintSupport.NOT_SUPPORTED,
}

_INSTEAD = {
    "check": "a data test of the expression (e.g. dbt_utils.expression_is_true)",
    "unique": "the `unique` data test",
    "primary_key": (
        "the `unique` data test and a not_null constraint (the record_key already keeps one "
        "row per key and partition)"
    ),
    "foreign_key": "the `relationships` data test",
    "custom": "a data test (a custom constraint is DDL, and a lake table has no DDL)",
}


@dataclass(frozen=True)
class Constraint:
    """One declared constraint, column-level or model-level, as the error messages show it."""

    kind: str
    columns: tuple[str, ...]
    name: str | None = None
    detail: str = ""

    def describe(self) -> str:
        detail = f" {self.detail}" if self.detail else ""
        named = f" named '{self.name}'" if self.name else ""
        where = "column" if len(self.columns) == 1 else "columns"
        on = f" on {where} {', '.join(self.columns)}" if self.columns else ""
        return f"{self.kind}{detail}{named}{on}"


def _constraint(raw: dict[str, Any], columns: tuple[str, ...]) -> Constraint:
    kind = str(raw.get("type"))
    if kind == "foreign_key" and raw.get("to"):
        to_columns = ", ".join(raw.get("to_columns") or [])
        detail = f"to {raw['to']} ({to_columns})"
    elif kind == "foreign_key" and raw.get("expression"):
        detail = f"to {raw['expression']}"
    elif raw.get("expression"):
        detail = f"'{raw['expression']}'"
    else:
        detail = ""
    return Constraint(kind, columns, raw.get("name"), detail)


def declared_constraints(
    columns: dict[str, Any] | None, constraints: list[dict[str, Any]] | None
) -> list[Constraint]:
    """Every constraint of a model: those under its columns, then its model-level ones."""
    found = []
    for key, column in (columns or {}).items():
        name = column.get("name") or key
        found.extend(_constraint(raw, (name,)) for raw in column.get("constraints") or [])
    for raw in constraints or []:
        found.append(_constraint(raw, tuple(raw.get("columns") or ())))
    return found


def not_null_columns(
    model: str,
    materialized: str,
    columns: dict[str, Any] | None,
    constraints: list[dict[str, Any]] | None,
) -> list[str]:
    """The columns a contract declares not null; any other constraint stops the run."""
    declared = declared_constraints(columns, constraints)
    refused = [c for c in declared if c.kind != ConstraintType.not_null.value]
    if refused:
        listed = "; ".join(c.describe() for c in refused)
        instead = "; ".join(
            f"for {kind}, {_INSTEAD.get(kind, 'a data test')}"
            for kind in dict.fromkeys(c.kind for c in refused)
        )
        raise UnenforceableConstraintError(
            f"Model '{model}' (materialized='{materialized}'): its contract declares "
            f"constraints a lake table cannot enforce: {listed}. Only not_null is enforced "
            "(a run whose rows break it stops before writing). Remove the others from the "
            f"model's yml and check the same with data tests instead: {instead}"
        )
    return list(dict.fromkeys(col for c in declared for col in c.columns))


def check_not_null(df, model: str, columns: list[str]) -> None:
    """Stop the run if any of `columns` holds a null in the model's rows (one Spark job)."""
    nulls = [
        F.count_if(F.col(quoted_name(column)).isNull()).alias(f"nulls_{i}")
        for i, column in enumerate(columns)
    ]
    counts = df.agg(F.count(F.lit(1)).alias("rows"), *nulls).first()
    broken = [(c, counts[f"nulls_{i}"]) for i, c in enumerate(columns) if counts[f"nulls_{i}"]]
    if broken:
        rows = counts["rows"]
        found = "; ".join(
            f'null value in column "{c}" violates not-null constraint ({n} of {rows} rows)'
            for c, n in broken
        )
        raise ContractViolationError(
            f"Model '{model}': its contract is broken, nothing was written: {found}. Filter or "
            "fill the nulls in the model's SQL, or remove the not_null constraint from its yml"
        )

"""dbt's incremental adapter tests with their incremental models built as lake tables.

Each upstream scenario runs twice, once per lake materialization (`cow_upsert`, `mor_upsert`):
the models keep their SQL, and only their `config(...)` changes, from
`materialized='incremental', unique_key=K` to `materialized='<lake>', record_key=K`. A lake
table always has a record key, so the upstream models without one (or with an empty one) get
the key that makes their rows distinct.

`make test` runs each upstream test on one of the two (a class's tests split between them):
both materializations are one macro (`hoodie__lake_upsert`) and one adapter call with
the table type as argument, and what the table type changes (log files, their merge on read,
schema changes in them) is the core's tests' (tests/spark/test_evolving_tables.py runs every
schema change policy on both types). A test's other run carries the marker `dbt_full`
(`make test-dbt` runs it), named in the class's `dbt_full`.

Where a lake table's contract differs from dbt's incremental one, the affected test is
overridden below with the lake behaviour and says why; none is skipped.
"""

from __future__ import annotations

import ast
import re

import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.adapter.basic import files as basic_files
from dbt.tests.adapter.basic.test_incremental import (
    BaseIncremental,
    BaseIncrementalNotSchemaChange,
)
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
)
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import run_dbt

_MATERIALIZED = re.compile(r"""materialized\s*=\s*(['"])incremental\1""")
# Upstream configs name `materialized` first, so the key always follows a comma.
_UNIQUE_KEY = re.compile(r"""\s*,\s*unique_key\s*=\s*(\[[^\]]*\]|'[^']*'|"[^"]*")""")

# The seed of the unique-key tests is one row per (state, county, city): the key its
# key-less models get, so that they append new rows exactly as an incremental model does.
SEED_ROW_KEY = ["state", "county", "city"]


def as_lake_model(sql: str, materialized: str, fallback_key: list[str] | None = None) -> str:
    """An upstream incremental model's SQL, configured as a lake model.

    `unique_key=K` becomes `record_key=K`; a model without a usable key (none, '' or [])
    gets `fallback_key`, since a lake table cannot be written without a record key.
    """
    if not _MATERIALIZED.search(sql):
        return sql
    match = _UNIQUE_KEY.search(sql)
    key = ast.literal_eval(match.group(1)) if match else None
    if match:
        sql = sql[: match.start()] + sql[match.end() :]
    if not key:
        if fallback_key is None:
            raise ValueError("this model has no unique_key: give it a fallback record key")
        key = fallback_key
    return _MATERIALIZED.sub(f"materialized='{materialized}', record_key={key!r}", sql)


def lake_models(models: dict, materialized: str, fallback_key: list[str] | None = None) -> dict:
    """The upstream `models` fixture with every incremental model switched to `materialized`."""
    out = {}
    for name, value in models.items():
        if isinstance(value, dict):
            out[name] = lake_models(value, materialized, fallback_key)
        elif name.endswith(".sql"):
            out[name] = as_lake_model(value, materialized, fallback_key)
        else:
            out[name] = value
    return out


def upstream(fixture, instance):
    """The value an upstream class's fixture returns (pytest forbids calling fixtures)."""
    return fixture.__wrapped__(instance)


# The unique-key tests insert rows into their seed with string literals for a date column;
# Spark's (ANSI) store assignment does not cast a string into a DATE column, so the
# inserts spell the dates as DATE literals.
_DATE_STRING = re.compile(r"'(\d{4}-\d{2}-\d{2})'")


def spark_insert(sql: str) -> str:
    return _DATE_STRING.sub(r"DATE'\1'", sql)


class Lake:
    """The lake materialization a test class builds its incremental models with; `dbt_full`:
    the tests of the class that run on the other materialization in `make test`, and on this
    one with the marker `dbt_full` (tests/dbt/adapter/conftest.py marks them)."""

    materialized: str = ""
    dbt_full: frozenset[str] = frozenset()


class CowUpsert(Lake):
    materialized = "cow_upsert"


class MorUpsert(Lake):
    materialized = "mor_upsert"


# -- BaseIncremental: the source-backed model, keyed by id --------------------------------------
class LakeIncremental(Lake, BaseIncremental):
    """Both seeds are keyed by `id`; `added` repeats `base`'s ten rows and adds ten more."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "incremental.sql": as_lake_model(
                basic_files.incremental_sql, self.materialized, fallback_key=["id"]
            ),
            "schema.yml": basic_files.schema_base_yml,
        }


class TestCowUpsertIncremental(CowUpsert, LakeIncremental):
    dbt_full = frozenset({"test_incremental"})


class TestMorUpsertIncremental(MorUpsert, LakeIncremental):
    pass


class LakeIncrementalNotSchemaChange(Lake, BaseIncrementalNotSchemaChange):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "incremental_not_schema_change.sql": as_lake_model(
                basic_files.incremental_not_schema_change_sql, self.materialized
            )
        }


class TestCowUpsertIncrementalNotSchemaChange(CowUpsert, LakeIncrementalNotSchemaChange):
    pass


class TestMorUpsertIncrementalNotSchemaChange(MorUpsert, LakeIncrementalNotSchemaChange):
    dbt_full = frozenset({"test_incremental_not_schema_change"})


# -- BaseIncrementalUniqueKey -------------------------------------------------------------------
class LakeIncrementalUniqueKey(Lake, BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def seeds(self):
        seeds = upstream(BaseIncrementalUniqueKey.seeds, self)
        return {
            name: spark_insert(text) if name.endswith(".sql") else text
            for name, text in seeds.items()
        }

    @pytest.fixture(scope="class")
    def models(self):
        return lake_models(
            upstream(BaseIncrementalUniqueKey.models, self),
            self.materialized,
            fallback_key=SEED_ROW_KEY,
        )

    def fail_to_build_inc_missing_unique_key_column(self, incremental_model_name):
        """A record key that is not a column fails the first build, not the second.

        dbt's incremental models ignore `unique_key` until they merge (the second run); a lake
        table stores its record key in the table's properties at the first write, which is
        where the missing column is reported.
        """
        run_dbt(["seed", "--select", "seed", "--full-refresh"])
        result = run_dbt(
            ["run", "--select", incremental_model_name, "--full-refresh"], expect_pass=False
        ).results[0]
        return result.status, result.message

    def assert_refuses_duplicate_states(self, model: str) -> None:
        """Keyed by `state` alone, the seed's two NY rows are one record twice: an error.

        dbt's incremental model keeps both rows, because its first run ignores `unique_key`.
        A record key is a uniqueness guarantee from the first write, and without a
        `precombine_field` nothing says which NY row wins, so the write fails rather than
        keep one of them at random. (The trinary-key tests cover the upsert itself.)
        """
        run_dbt(["seed", "--select", "seed", "--full-refresh"])
        result = run_dbt(["run", "--select", model, "--full-refresh"], expect_pass=False)
        assert result.results[0].status == RunStatus.Error
        message = result.results[0].message
        assert "more than once" in message and "NY" in message, message

    def test__one_unique_key(self, project):
        self.assert_refuses_duplicate_states("str_unique_key")

    def test__unary_unique_key_list(self, project):
        self.assert_refuses_duplicate_states("unary_unique_key_list")

    def test__duplicated_unary_unique_key_list(self, project):
        self.assert_refuses_duplicate_states("duplicated_unary_unique_key_list")


class TestCowUpsertIncrementalUniqueKey(CowUpsert, LakeIncrementalUniqueKey):
    # `make test` runs the upsert (trinary keys) on merge-on-read: its updates go to log files
    dbt_full = frozenset(
        {
            "test__trinary_unique_key_list",
            "test__no_unique_keys",
            "test__empty_unique_key_list",
            "test__unary_unique_key_list",
            "test__bad_unique_key_list",
        }
    )


class TestMorUpsertIncrementalUniqueKey(MorUpsert, LakeIncrementalUniqueKey):
    dbt_full = frozenset(
        {
            "test__trinary_unique_key_list_no_update",
            "test__empty_str_unique_key",
            "test__one_unique_key",
            "test__duplicated_unary_unique_key_list",
            "test__bad_unique_key",
        }
    )


# -- BaseIncrementalOnSchemaChange --------------------------------------------------------------
class LakeIncrementalOnSchemaChange(Lake, BaseIncrementalOnSchemaChange):
    @pytest.fixture(scope="class")
    def models(self):
        return lake_models(upstream(BaseIncrementalOnSchemaChange.models, self), self.materialized)


class TestCowUpsertIncrementalOnSchemaChange(CowUpsert, LakeIncrementalOnSchemaChange):
    # `make test` runs sync_all_columns (dropped columns) on merge-on-read
    dbt_full = frozenset(
        {"test_run_incremental_sync_all_columns", "test_run_incremental_fail_on_schema_change"}
    )


class TestMorUpsertIncrementalOnSchemaChange(MorUpsert, LakeIncrementalOnSchemaChange):
    dbt_full = frozenset({"test_run_incremental_append_new_columns", "test_run_incremental_ignore"})

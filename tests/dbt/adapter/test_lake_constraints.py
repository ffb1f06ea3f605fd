"""dbt's model contract tests (`dbt.tests.adapter.constraints`) on the lake materializations.

Each chosen upstream class runs once per lake materialization (`cow_upsert`, `mor_upsert`):
its models keep their SQL, and only their config changes, from `materialized="table"` or
`"incremental"` to the lake materialization with `record_key` set. They cover what a contract
promises on this adapter: column names and data types (dbt's own check and message), not_null
(checked on the model's rows, nothing written when it fails) and the refusal of every other
constraint kind.

The adaptations, each for the reason given where it is made:
- Spark has no `text` type: the upstream ymls' `text` columns are `string` here, and the
  data-type cases are Spark's (dbt-spark's own contract tests do the same).
- Upstream ymls declare `primary_key` and `check` next to `not_null`; the lake materializations
  refuse those (the refusal classes below test it), so the classes that test names, types and
  not_null keep only the `not_null` constraints.
- The upstream DDL tests compare the generated `create table` statement with constraints in
  it. A lake table has no DDL: those classes test instead that the constraints they declare
  are refused, naming each one, before anything is written.
- A lake table's rows start with Hudi's five meta columns, so reads name their columns rather
  than indexing `select *`.

Upstream classes not run here add nothing for lake tables: the `table` and `incremental`
variants of one test become the same lake model, and views have no rows to check.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintQuotedColumn,
    BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual,
    BaseIncrementalConstraintsRollback,
    BaseModelConstraintsRuntimeEnforcement,
)
from dbt.tests.util import (
    get_manifest,
    read_file,
    relation_from_name,
    run_dbt,
    run_dbt_and_capture,
    write_file,
)

from hoodie import HoodieTable

_MATERIALIZED = re.compile(r"""materialized\s*=\s*(['"])(table|incremental)\1""")
_SCHEMA = "__test_schema__"


def lake_sql(sql: str, materialized: str, record_key: str = "id") -> str:
    """An upstream model's SQL built by a lake materialization, keyed by `record_key`."""
    return _MATERIALIZED.sub(
        f"materialized = '{materialized}', record_key = '{record_key}'", sql, count=1
    )


def lake_yml(text: str, materialized: str, keep_only_not_null: bool) -> str:
    """An upstream constraints yml in Spark's types, its models' materializations lake ones.

    `keep_only_not_null` drops every other constraint (see the module docstring). A
    `{schema}` placeholder (formatted by the tests) stays one.
    """
    document = yaml.safe_load(text.replace("{schema}", _SCHEMA))
    for model in document["models"]:
        config = model.get("config") or {}
        if config.get("materialized") in ("table", "incremental"):
            config.update(materialized=materialized, record_key="id")
        for column in model.get("columns") or []:
            if column.get("data_type") == "text":
                column["data_type"] = "string"
            if keep_only_not_null and "constraints" in column:
                column["constraints"] = [
                    c for c in column["constraints"] if c["type"] == "not_null"
                ]
        if keep_only_not_null and "constraints" in model:
            model["constraints"] = [c for c in model["constraints"] if c["type"] == "not_null"]
    return yaml.safe_dump(document, sort_keys=False).replace(_SCHEMA, "{schema}")


def lake_table(project, hoodie_spark_root, name: str) -> Path:
    """Where the model `name` of this class's schema keeps its Hudi table."""
    return hoodie_spark_root / "warehouse" / f"{project.test_schema}.db" / name


def assert_nothing_written(project, hoodie_spark_root, name: str) -> None:
    assert not lake_table(project, hoodie_spark_root, name).exists()
    tables = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
    assert name not in [row[1] for row in tables]


class Lake:
    """The lake materialization a test class builds its models with."""

    materialized: str = ""


class CowUpsert(Lake):
    materialized = "cow_upsert"


class MorUpsert(Lake):
    materialized = "mor_upsert"


# -- names and data types -----------------------------------------------------------------------
class LakeConstraintsColumnsEqual(Lake, BaseIncrementalConstraintsColumnsEqual):
    """Wrong names and types fail with dbt's contract error; the yml's column order wins.

    The data-type model is keyed by its only column. Its correct-type runs change that
    column's type from one run to the next: upstream's `table` rebuilds the table each time,
    and a lake model does that with a full refresh (`full_refresh: true` on that model; an
    upsert refuses a column type change, as `on_schema_change` says).
    """

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": lake_sql(
                fixtures.my_model_incremental_wrong_order_sql, self.materialized
            ),
            "my_model_wrong_name.sql": lake_sql(
                fixtures.my_model_incremental_wrong_name_sql, self.materialized
            ),
            "constraints_schema.yml": lake_yml(
                fixtures.model_schema_yml, self.materialized, keep_only_not_null=True
            ),
        }

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"test": {"my_model_data_type": {"+full_refresh": True}}}}

    @pytest.fixture(autouse=True)
    def _lake_data_type_model(self, monkeypatch):
        # The upstream tests write this model from the fixtures module themselves.
        sql = lake_sql(
            fixtures.my_model_data_type_sql, self.materialized, "wrong_data_type_column_name"
        )
        monkeypatch.setattr(fixtures, "my_model_data_type_sql", sql)

    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self):
        # sql_column_value, schema_data_type, error_data_type (Spark's names, as dbt shows them).
        # The model's one column is its record key, so upstream's timestamp case is a date
        # here: a timestamp record key is refused (hoodie.write.validation), whatever the
        # contract says.
        return [
            ["1", "int", "int"],
            ["'1'", "string", "string"],
            ["cast('2019-01-01' as date)", "date", "date"],
            ["cast(6.45 as decimal(4,2))", "decimal(4,2)", "decimal(4,2)"],
        ]


class TestCowUpsertConstraintsColumnsEqual(CowUpsert, LakeConstraintsColumnsEqual):
    pass


class TestMorUpsertConstraintsColumnsEqual(MorUpsert, LakeConstraintsColumnsEqual):
    """Only the int case (against a `string` yml, then an `int` one): the type check is dbt's
    and runs before the table type matters (the shared lake_upsert macro); cow_upsert runs
    every case, and each correct case costs a lake write."""

    @pytest.fixture
    def data_types(self):
        return [["1", "int", "int"]]


# -- not_null: the run stops and the table keeps its rows ---------------------------------------
class LakeConstraintsRollback(Lake, BaseIncrementalConstraintsRollback):
    """A second run with a null `id` fails with the not-null error; the first run's row stays.

    Upstream's messages are Postgres's words, which ours use too. The read names its columns
    (the table's rows start with Hudi's meta columns), and the table's timeline is checked
    too: the failing run started no instant.
    """

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": lake_sql(fixtures.my_incremental_model_sql, self.materialized),
            "constraints_schema.yml": lake_yml(
                fixtures.model_schema_yml, self.materialized, keep_only_not_null=True
            ),
        }

    @pytest.fixture(scope="class")
    def null_model_sql(self):
        return lake_sql(fixtures.my_model_incremental_with_nulls_sql, self.materialized)

    def test__constraints_enforcement_rollback(
        self, project, hoodie_spark_root, expected_color, expected_error_messages, null_model_sql
    ):
        assert len(run_dbt(["run", "-s", "my_model"])) == 1
        table = HoodieTable.open(str(lake_table(project, hoodie_spark_root, "my_model")))
        history = table.history()

        write_file(null_model_sql, "models", "my_model.sql")
        failing = run_dbt(["run", "-s", "my_model"], expect_pass=False)
        assert len(failing) == 1 and failing[0].status == RunStatus.Error

        relation = relation_from_name(project.adapter, "my_model")
        rows = project.run_sql(f"select id, color, date_day from {relation}", fetch="all")
        assert [tuple(r) for r in rows] == [(1, expected_color, "2019-01-01")]
        assert table.history() == history
        manifest = get_manifest(project.project_root)
        assert manifest.nodes["model.test.my_model"].config.contract.enforced is True
        self.assert_expected_error_messages(failing[0].message, expected_error_messages)
        assert "my_model" in failing[0].message


class TestCowUpsertConstraintsRollback(CowUpsert, LakeConstraintsRollback):
    pass


class TestMorUpsertConstraintsRollback(MorUpsert, LakeConstraintsRollback):
    pass


# -- other constraint kinds are refused ---------------------------------------------------------
class RefusesConstraints(Lake):
    """Runs `my_model`, whose yml declares constraints a lake table cannot enforce.

    The run must fail naming the model, each such constraint and what to use instead, and
    leave neither a lake table nor a catalog entry. (`my_model` alone is run: the refusal
    comes before the model's SQL runs, so `foreign_key_model` is not needed.)
    """

    refused: tuple[str, ...] = ()

    def assert_refused(self, project, hoodie_spark_root):
        text = read_file("models", "constraints_schema.yml")
        write_file(text.format(schema=project.test_schema), "models", "constraints_schema.yml")
        results, log = run_dbt_and_capture(["run", "-s", "my_model"], expect_pass=False)
        message = results.results[0].message
        assert results.results[0].status == RunStatus.Error
        assert f"Model 'my_model' (materialized='{self.materialized}')" in message, message
        for constraint in self.refused:
            constraint = constraint.format(schema=project.test_schema)  # a ref, as dbt renders it
            assert constraint in message, (constraint, message)
        assert "Only not_null is enforced" in message
        assert "relationships" in message and "`unique` data test" in message
        assert_nothing_written(project, hoodie_spark_root, "my_model")


class LakeConstraintsRuntimeDdlEnforcement(
    RefusesConstraints, BaseConstraintsRuntimeDdlEnforcement
):
    """Column-level primary_key, check, foreign_key and unique constraints are refused."""

    refused = (
        "primary_key on column id",
        "check '(id > 0)' on column id",
        "check 'id >= 1' on column id",
        "foreign_key to {schema}.foreign_key_model (id) on column id",
        "unique on column id",
    )

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": lake_sql(
                fixtures.my_model_wrong_order_depends_on_fk_sql, self.materialized
            ),
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": lake_yml(
                fixtures.model_fk_constraint_schema_yml, self.materialized, False
            ),
        }

    def test__constraints_ddl(self, project, hoodie_spark_root):
        self.assert_refused(project, hoodie_spark_root)


class TestCowUpsertConstraintsRuntimeDdlEnforcement(
    CowUpsert, LakeConstraintsRuntimeDdlEnforcement
):
    pass


class TestMorUpsertConstraintsRuntimeDdlEnforcement(
    MorUpsert, LakeConstraintsRuntimeDdlEnforcement
):
    pass


class LakeModelConstraintsRuntimeEnforcement(
    RefusesConstraints, BaseModelConstraintsRuntimeEnforcement
):
    """Model-level check, primary_key, unique and foreign_key constraints are refused."""

    refused = (
        "check '(id > 0)'",
        "check 'id >= 1'",
        "primary_key on column id",
        "unique named 'strange_uniqueness_requirement' on columns color, date_day",
        "foreign_key to {schema}.foreign_key_model (id) on column id",
    )

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": lake_sql(
                fixtures.my_model_wrong_order_depends_on_fk_sql, self.materialized
            ),
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": lake_yml(
                fixtures.constrained_model_schema_yml, self.materialized, False
            ),
        }

    def test__model_constraints_ddl(self, project, hoodie_spark_root):
        self.assert_refused(project, hoodie_spark_root)


class TestCowUpsertModelConstraintsRuntimeEnforcement(
    CowUpsert, LakeModelConstraintsRuntimeEnforcement
):
    pass


class TestMorUpsertModelConstraintsRuntimeEnforcement(
    MorUpsert, LakeModelConstraintsRuntimeEnforcement
):
    pass


# -- a quoted (reserved-word) column ------------------------------------------------------------
class TestCowUpsertConstraintQuotedColumn(CowUpsert, BaseConstraintQuotedColumn):
    """not_null on a column named `from` (quoted in the yml) holds and the model builds.

    Upstream also declares a check on it (refused here, see above) and compares the DDL; this
    checks the built table's rows instead. Once, for cow_upsert: the column list and the null
    check are the same code for both lake materializations.
    """

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_with_quoted_column_name_sql,
            "constraints_schema.yml": lake_yml(
                fixtures.model_quoted_column_schema_yml, self.materialized, True
            ),
        }

    def test__constraints_ddl(self, project):
        run_dbt(["run", "-s", "my_model"])
        relation = relation_from_name(project.adapter, "my_model")
        rows = project.run_sql(f"select id, `from`, date_day from {relation}", fetch="all")
        assert [tuple(r) for r in rows] == [(1, "blue", "2019-01-01")]


# -- regressions: contracts used to be ignored by the lake materializations ---------------------
contracted_sql = """
{{{{ config(materialized='cow_upsert', record_key='id') }}}}
select 1 as id, {val} as val
"""

contracted_yml = """
version: 2
models:
  - name: contracted
    config:
      contract: {{enforced: true}}
    columns:
      - name: id
        data_type: int
      - name: val
        data_type: {data_type}
        constraints: [{{type: not_null}}]
"""


class TestCowUpsertContractRegressions:
    """Issue 14: a contract `int` column fed a string, and a null in a not_null column that is
    not the record key, were written without a word."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "contracted.sql": contracted_sql.format(val="'1'"),
            "schema.yml": contracted_yml.format(data_type="int"),
        }

    def test_string_into_int_column_is_refused(self, project, hoodie_spark_root):
        results, log = run_dbt_and_capture(["run", "-s", "contracted"], expect_pass=False)
        message = results.results[0].message
        assert "data type mismatch" in log and "val" in message, log
        assert re.search(r"val\s*\|\s*string\s*\|\s*int", log), log
        assert_nothing_written(project, hoodie_spark_root, "contracted")

    def test_null_in_not_null_column_is_refused(self, project, hoodie_spark_root):
        """...and a view under the model's name, which the lake table replaces, stays until the
        rows keep the contract."""
        view = f"{project.test_schema}.contracted"
        project.run_sql(f"create view {view} as select 1 as id, 'kept' as val")
        write_file(contracted_sql.format(val="cast(null as string)"), "models", "contracted.sql")
        write_file(contracted_yml.format(data_type="string"), "models", "schema.yml")
        results = run_dbt(["run", "-s", "contracted"], expect_pass=False)
        message = results.results[0].message
        assert "Model 'contracted'" in message, message
        assert 'null value in column "val" violates not-null constraint (1 of 1 rows)' in message
        assert "nothing was written" in message
        assert not lake_table(project, hoodie_spark_root, "contracted").exists()
        rows = project.run_sql(f"select id, val from {view}", fetch="all")
        assert [tuple(r) for r in rows] == [(1, "kept")]

        # Once the rows keep the contract, the lake table replaces the view.
        write_file(contracted_sql.format(val="'fixed'"), "models", "contracted.sql")
        run_dbt(["run", "-s", "contracted"])
        assert lake_table(project, hoodie_spark_root, "contracted").exists()
        rows = project.run_sql(f"select id, val from {view}", fetch="all")
        assert [tuple(r) for r in rows] == [(1, "fixed")]

"""dbt's basic adapter tests on the hoodie profile.

They cover what every hoodie project uses next to its lake models (seeds, views, tables,
incremental models, tests, snapshots, the catalog), with the adapter's overrides in place.
The tests and their models are upstream's; only two pieces of scaffolding are adapted to
Spark, each documented where it is: the snapshot tests' seed UPDATE and the catalog's names.
"""

from __future__ import annotations

import getpass

import pytest
from dbt.tests.adapter.basic import expected_catalog as catalogs
from dbt.tests.adapter.basic import test_snapshot_check_cols, test_snapshot_timestamp
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import (
    BaseIncremental,
    BaseIncrementalNotSchemaChange,
)
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection
from dbt.tests.util import generate_update_clause, get_connection, relation_from_name
from pyspark.sql import functions as F

from dbt.adapters.hoodie.connections import HoodieConnectionManager


def update_rows_without_update_statement(adapter, update_rows_config):
    """`dbt.tests.util.update_rows`, rewriting the table instead of running UPDATE.

    The snapshot tests change rows of a seed between snapshots with an UPDATE statement, and
    Spark runs UPDATE on v2 tables (Delta, Iceberg) only: a seed here is a Parquet table.
    This applies the same SET expression (the adapter's `timestamp_add_sql` /
    `string_add_sql`) to the rows the WHERE clause selects and writes the table back; the
    snapshots under test then see exactly the change the upstream test intends.
    """
    relation = relation_from_name(adapter, update_rows_config["name"])
    column = update_rows_config["dst_col"]
    value = generate_update_clause(adapter, update_rows_config["clause"])
    where = update_rows_config.get("where")
    if where is not None:
        value = f"case when {where} then {value} else {column} end"
    with get_connection(adapter):
        spark = HoodieConnectionManager.spark(adapter.connections.get_thread_connection())
        table = spark.table(str(relation))
        changed = table.select(
            *[F.expr(value).alias(c) if c == column else F.col(c) for c in table.columns]
        )
        # Materialized first: Spark refuses to overwrite files the same query reads.
        rows = spark.createDataFrame(changed.collect(), changed.schema)
        rows.write.insertInto(str(relation), overwrite=True)


class SeedUpdatesWithoutUpdateStatement:
    """Runs an upstream snapshot test with `update_rows_without_update_statement`."""

    upstream_module = None

    @pytest.fixture(autouse=True)
    def _seed_updates(self, monkeypatch):
        monkeypatch.setattr(
            self.upstream_module, "update_rows", update_rows_without_update_statement
        )


class TestSimpleMaterializations(BaseSimpleMaterializations):
    pass


class TestSingularTests(BaseSingularTests):
    pass


class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    pass


class TestEmpty(BaseEmpty):
    pass


class TestEphemeral(BaseEphemeral):
    pass


class TestGenericTests(BaseGenericTests):
    pass


class TestIncremental(BaseIncremental):
    pass


class TestIncrementalNotSchemaChange(BaseIncrementalNotSchemaChange):
    pass


# make test checks both strategies in our snapshot scenario (tests/dbt/scenarios/test_snapshot.py:
# timestamp, check, hard deletes, renamed meta columns); dbt's own two run in make test-dbt
# (session 40: TestSnapshotTimestamp's 42 s, for the 20-minute CI target).
@pytest.mark.dbt_full
class TestSnapshotCheckCols(SeedUpdatesWithoutUpdateStatement, BaseSnapshotCheckCols):
    upstream_module = test_snapshot_check_cols


@pytest.mark.dbt_full
class TestSnapshotTimestamp(SeedUpdatesWithoutUpdateStatement, BaseSnapshotTimestamp):
    upstream_module = test_snapshot_timestamp


class TestAdapterMethod(BaseAdapterMethod):
    pass


class TestValidateConnection(BaseValidateConnection):
    pass


class TestDocsGenerate(BaseDocsGenerate):
    """The catalog in Spark's words, with a session temporary view lying around.

    The catalog's types come from Spark's schema tree (`long`, not `bigint`), as in
    dbt-spark, and the owner is the JVM's user. dbt-spark's incremental models leave
    temporary views in the session, and `SHOW TABLE EXTENDED` lists them in every schema:
    the view made here must stay out of the catalog.
    """

    @pytest.fixture(scope="class", autouse=True)
    def leftover_temp_view(self, project):
        project.run_sql("create or replace temporary view model__dbt_tmp as select 1 as id")
        yield
        project.run_sql("drop view if exists model__dbt_tmp")

    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        return catalogs.base_expected_catalog(
            project,
            role=getpass.getuser(),
            id_type="long",
            text_type="string",
            time_type="timestamp",
            view_type="view",
            table_type="table",
            model_stats=catalogs.no_stats(),
        )

"""The facts `dbt docs generate` shows of a lake table (`HoodieTable.stats`, the adapter's
`catalog_facts`): exact row counts where the metadata gives them, honest ones where log files
wait for compaction, on both table versions and types, and a damaged table's error."""

from __future__ import annotations

import os
import re
import shutil
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.hoodie.catalog import (
    catalog_facts,
    catalog_write_options,
    error_facts,
    table_comment,
    table_properties,
)
from dbt.adapters.hoodie.config_keys import CATALOG_PLACE, gather_options
from dbt.adapters.hoodie.impl import HoodieAdapter
from hoodie import HoodieTable, MalformedMetadataError, WriteConfig
from hoodie.integration import META_COLUMNS
from hoodie.table_stats import _base_file_rows

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint"
FIRST = [(1, "a", "d1", 1), (2, "b", "d1", 1), (3, "c", "d2", 1)]
# an update of 1 and an insert of 4: four rows
SECOND = [(1, "a2", "d1", 2), (4, "d", "d2", 2)]


def _config(name: str, table_type: str, version: int) -> WriteConfig:
    return WriteConfig.build(
        name, record_key="id", partition_path="dt", precombine_field="ts",
        table_type=table_type,
        options={"hoodie.write.table.version": str(version), "hoodie.compact.inline": "false"},
    )  # fmt: skip


def _write(spark, path: str, cfg: WriteConfig, *batches) -> HoodieTable:
    table = HoodieTable.for_write(path, cfg)
    for rows in batches:
        table.upsert(spark.createDataFrame(rows, SCHEMA))
    return table


@pytest.fixture(scope="module", params=[6, 8])
def tables(request, spark, tmp_path_factory):
    """A copy-on-write and a merge-on-read table of one table version, two upserts each (the
    merge-on-read one's update in a log file)."""
    version = request.param
    root = tmp_path_factory.mktemp(f"stats_v{version}")
    cow = _write(spark, str(root / "cow"), _config("cow", "COPY_ON_WRITE", version), FIRST,
                 SECOND)  # fmt: skip
    mor = _write(spark, str(root / "mor"), _config("mor", "MERGE_ON_READ", version), FIRST,
                 SECOND)  # fmt: skip
    return version, cow, mor


def _data_files(table: HoodieTable) -> tuple[int, int]:
    """Bytes and number of the files a snapshot read reads, as storage lists them."""
    view = table.file_system_view()
    files = [f for g in view.file_groups() if (s := g.latest_slice)
             for f in ([s.base_file] if s.base_file else []) + s.log_files]  # fmt: skip
    return sum(os.path.getsize(os.path.join(table.base_uri, f.relative_path)) for f in files), len(
        files
    )


def test_copy_on_write_rows_are_exact(tables, spark):
    version, cow, _ = tables
    stats = cow.stats()
    assert (stats.table_type, stats.table_version) == ("COPY_ON_WRITE", version)
    assert stats.rows == cow.read(spark).count() == 4 and stats.rows_exact
    assert stats.rows_text() == "4"
    assert (stats.size_bytes, stats.files) == _data_files(cow)
    assert stats.log_files == 0 and stats.pending_compactions == stats.pending_clusterings == 0
    latest = cow.timeline().completed.write_timeline.latest()
    assert stats.latest_commit == latest and latest is not None
    text = stats.latest_commit_text()
    assert text.endswith(f"(commit {latest.timestamp})") and " UTC " in text, text


def test_footer_counts_a_base_file_whose_commit_is_gone(tables):
    """A base file whose commit was archived (no write stat on the timeline) is counted from
    its parquet footer."""
    _, cow, _ = tables
    base = cow.file_system_view().latest_base_files()[0]
    written = cow.file_system_view().written_files
    from_stat = _base_file_rows(cow.meta_client, written, base.relative_path, base.instant)
    assert _base_file_rows(cow.meta_client, {}, base.relative_path, base.instant) == from_stat


def test_catalog_facts_as_dbt_docs_shows_them(tables):
    """The facts go through dbt's own catalog building (agate's type inference over the rows
    of every table, then `format_stats`) and come out as dbt docs shows them: rows and bytes
    under the ids dbt docs formats as numbers and sizes."""
    agate = pytest.importorskip("agate")
    from dbt.task.docs.generate import Catalog
    from dbt_common.clients.agate_helper import DEFAULT_TYPE_TESTER

    _, cow, mor = tables
    rows = []
    for name, table in (("cow", cow), ("mor", mor)):
        facts = catalog_facts(table)
        rows.append({"table_database": None, "table_schema": "s", "table_name": name,
                     "table_type": "table", "table_comment": f"{name} doc",
                     "column_name": "id", "column_index": 0, "column_type": "int",
                     **facts})  # fmt: skip
    rows.append({"table_database": None, "table_schema": "s", "table_name": "plain",
                 "table_type": "table", "column_name": "x", "column_index": 0,
                 "column_type": "int"})  # fmt: skip
    typed = agate.Table.from_object(rows, column_types=DEFAULT_TYPE_TESTER)
    catalog = Catalog([dict(zip(typed.column_names, row)) for row in typed])
    tables_by_name = {key.name: table for key, table in catalog.items()}
    cow_stats = tables_by_name["cow"].stats
    assert cow_stats["rows"].value == 4 and cow_stats["rows"].label == "Rows"
    assert cow_stats["bytes"].value == cow.stats().size_bytes
    assert cow_stats["hoodie_table_type"].value == "COPY_ON_WRITE"
    assert cow_stats["hoodie_files"].value.endswith("base files")
    assert cow_stats["hoodie_latest_commit"].value.endswith(")")
    assert cow_stats["has_stats"].value is True
    assert tables_by_name["cow"].metadata.comment == "cow doc"
    mor_stats = tables_by_name["mor"].stats
    assert "rows" not in mor_stats
    assert mor_stats["hoodie_rows_estimate"].value.startswith("~4 (base files; ")
    assert mor_stats["hoodie_pending_compactions"].value == 0
    plain = tables_by_name["plain"].stats
    assert list(plain) == ["has_stats"] and plain["has_stats"].value is False


def test_a_damaged_table_shows_its_error(tables, tmp_path):
    """The latest commit's metadata damaged (in a copy of the table): `stats` raises an error
    naming the file, and the catalog facts carry it as an error fact, with the identity facts
    `hoodie.properties` still gives (docs generate goes on with the other tables)."""
    _, cow, _ = tables
    path = str(tmp_path / "damaged")
    shutil.copytree(cow.base_uri, path)
    table = HoodieTable.open(path)
    latest = table.timeline().completed.write_timeline.latest()
    assert latest is not None
    relative = table.meta_client.instant_path(latest)
    table.storage.write_bytes(relative, b"{not json")
    name = os.path.basename(relative)
    with pytest.raises(MalformedMetadataError, match=re.escape(name)):
        table.stats()
    facts = catalog_facts(table)
    assert facts["stats:hoodie_table_type:value"] == "COPY_ON_WRITE"
    assert "stats:rows:value" not in facts
    error = facts["stats:hoodie_error:value"]
    assert name in error and error.startswith("MalformedMetadataError: "), error
    assert error_facts("gone")["stats:hoodie_error:value"] == "gone"


def test_merge_on_read_rows_with_logs_then_compacted(tables, spark):
    """(Last: it compacts the shared table.) With the update in a log file the count is of
    the base files and says so; a pending compaction is counted; once compacted the count is
    exact."""
    version, _, mor = tables
    stats = mor.stats()
    assert stats.table_type == "MERGE_ON_READ" and stats.table_version == version
    assert stats.log_files >= 1 and not stats.rows_exact
    # the base files hold 1, 2, 3 and the insert 4 (inserts go to base files)
    assert stats.rows == 4
    logs = f"{stats.log_files} log file{'s' if stats.log_files > 1 else ''}"
    assert stats.rows_text() == f"~4 (base files; {logs} pending compaction)"
    assert (stats.size_bytes, stats.files) == _data_files(mor)
    assert stats.latest_commit is not None and stats.latest_commit.action.value == "deltacommit"

    planned = mor.services.schedule_compaction()
    assert planned is not None and mor.stats().pending_compactions == 1
    mor.services.compact(spark, pending_only=True)
    compacted = mor.stats()
    assert compacted.rows_exact and compacted.rows == mor.read(spark).count() == 4
    assert compacted.log_files == 0 and compacted.pending_compactions == 0
    assert compacted.latest_commit is not None and compacted.latest_commit.timestamp == planned


# -- table properties of the catalog entry (ALTER TABLE ... SET TBLPROPERTIES) --------------
LISTING = """\
Database: s
Table: t
Provider: hoodie
Comment: Payments by day
Table Properties: [external=true, hoodie.cleaner.commits.retained=3, location=file:/w/t, \
option.path=file:///w/t, owner=root, path=file:///w/t, provider=hoodie, team=a=b, c]
Location: file:/w/t
"""


def test_a_lake_tables_catalog_columns_are_the_models_numbered_from_0():
    """dbt-spark numbers the columns of the listing's schema, where Hudi's meta columns come
    first: without them, the model's columns are numbered from 0 (catalog.json's `index`)."""
    adapter = HoodieAdapter.__new__(HoodieAdapter)  # parsing a listing needs no connection
    tree = "".join(f" |-- {name}: string (nullable = true)\n"
                   for name in (*META_COLUMNS, "id", "amount"))  # fmt: skip
    relation = SimpleNamespace(schema="s", table="t", type="table",
                               information=f"{LISTING}Schema: root\n{tree}")  # fmt: skip
    columns = adapter.parse_columns_from_information(relation)
    assert [(c.name, c.column_index) for c in columns] == [("id", 0), ("amount", 1)]


def test_the_listing_gives_the_comment_and_the_users_properties():
    assert table_comment(LISTING) == "Payments by day"
    assert table_properties(LISTING) == {"hoodie.cleaner.commits.retained": "3", "team": "a=b, c"}
    assert table_properties("Table Properties: []") == {} and table_comment("") is None


def test_catalog_properties_are_write_options_or_refused():
    """A write option is taken (as Apache Hudi's SQL writes take catalog properties); a Hudi
    setting no write takes is refused, naming it and how to remove it; others are kept."""
    where, name = "Model 'm'", "s.t"
    given = {"hoodie.cleaner.commits.retained": "3", "team": "x"}
    expected = {"hoodie.cleaner.commits.retained": "3"}
    assert catalog_write_options("Model", "m", name, given) == expected
    for key, value, reason in (
        ("hoodie.datasource.query.type", "read_optimized", "unknown option"),
        ("hoodie.cleaner.commits.retained", "many", "hoodie.cleaner.commits.retained"),
        ("primaryKey", "id", "the model's config"),
    ):
        with pytest.raises(CompilationError) as refused:
            catalog_write_options("Model", "m", name, {key: value})
        text = str(refused.value)
        assert f"{where}: s.t has table property {key}={value!r}" in text, text
        assert f"ALTER TABLE s.t UNSET TBLPROPERTIES ('{key}')" in text and reason in text, text
        assert "Supported options" not in text


def test_a_catalog_option_and_the_models_disagreeing_is_an_error_naming_both():
    config = {"materialized": "cow_upsert", "options": {"hoodie.cleaner.commits.retained": "5"}}
    catalog = {"hoodie.cleaner.commits.retained": "3"}
    with pytest.raises(
        CompilationError, match=re.escape(f"'5' in options and '3' in {CATALOG_PLACE}")
    ):
        gather_options("Model 'm'", config, catalog=catalog)
    merged = gather_options("Model 'm'", {"options": {"hoodie.parquet.max.file.size": "1"}},
                            catalog=catalog)  # fmt: skip
    assert merged == {"hoodie.parquet.max.file.size": "1", **catalog}

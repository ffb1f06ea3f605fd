"""Schema evolution end to end: each policy on copy-on-write and merge-on-read tables, read back
by our reader and by hudi-rs, and refusals that leave the table untouched."""

from __future__ import annotations

import pyarrow as pa
import pytest
from _spark_helpers import META, all_files, completed

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import SchemaEvolutionError
from hoodie.properties import COPY_ON_WRITE, MERGE_ON_READ

hudi = pytest.importorskip("hudi")
pytestmark = pytest.mark.spark

V1 = "id int, name string, amount float, qty int, dt string"


def config(table_type: str, policy: str) -> WriteConfig:
    return WriteConfig.build(
        "evolving",
        record_key="id",
        partition_path="dt",
        table_type=table_type,
        schema_change=policy,
        # one file group per partition, so later batches update (and, for MOR, log) into it
        options={"hoodie.compact.inline": "false"} if table_type == MERGE_ON_READ else {},
    )


def rows_by_id(rows) -> dict[int, dict]:
    return {r["id"]: {k: v for k, v in r.items() if k not in META} for r in rows}


def hudi_rs_rows(path: str) -> dict[int, dict]:
    batches = hudi.HudiTable(path).read()
    tables = [pa.Table.from_batches([b]) for b in batches]
    merged = pa.concat_tables(tables, promote_options="permissive")
    return rows_by_id(merged.to_pylist())


@pytest.mark.parametrize("table_type", [COPY_ON_WRITE, MERGE_ON_READ])
def test_policies_in_sequence(spark, tmp_path, table_type):
    path = str(tmp_path / "t")

    def write(rows, ddl, policy):
        cfg = config(table_type, policy)
        table = HoodieTable.for_write(path, cfg)
        return table.upsert(spark.createDataFrame(rows, ddl), cfg)

    write([(1, "a", 1.5, 10, "x"), (2, "b", 2.5, 20, "y")], V1, "evolve")

    # append_new_columns: a new column arrives, `name` is left out of the batch.
    write(
        [(1, 1.25, 11, "x", "e1"), (3, 3.5, 30, "y", "e3")],
        "id int, amount float, qty int, dt string, extra string",
        "append_new_columns",
    )
    table = HoodieTable.open(path)
    expected = {
        1: {"id": 1, "name": None, "amount": 1.25, "qty": 11, "dt": "x", "extra": "e1"},
        2: {"id": 2, "name": "b", "amount": 2.5, "qty": 20, "dt": "y", "extra": None},
        3: {"id": 3, "name": None, "amount": 3.5, "qty": 30, "dt": "y", "extra": "e3"},
    }
    assert table.schema().names == ["id", "name", "amount", "qty", "dt", "extra"]
    assert rows_by_id(r.asDict() for r in table.read(spark).collect()) == expected

    # Widening: float -> double and int -> bigint; `ignore` leaves the new column out.
    write(
        [(2, "b2", 2.0625, 2**40, "y", "e2", "dropped")],
        "id int, name string, amount double, qty bigint, dt string, extra string, more string",
        "ignore",
    )
    table = HoodieTable.open(path)
    assert str(table.schema().field("amount").type) == "double"
    assert str(table.schema().field("qty").type) == "int64"
    assert "more" not in table.schema().names
    expected[2] = {"id": 2, "name": "b2", "amount": 2.0625, "qty": 2**40, "dt": "y", "extra": "e2"}
    assert rows_by_id(r.asDict() for r in table.read(spark).collect()) == expected

    # Refusals leave the table untouched: `fail` on a difference, an incompatible type change.
    before_files, before_timeline = all_files(path), completed(table)
    with pytest.raises(SchemaEvolutionError, match="new columns more"):
        write(
            [(4, "d", 4.0, 40, "x", "e4", "m")],
            "id int, name string, amount double, qty bigint, dt string, extra string, more string",
            "fail",
        )
    with pytest.raises(SchemaEvolutionError, match="'qty' changes type from bigint to string"):
        write(
            [(4, "d", 4.0, "40", "x", "e4")],
            "id int, name string, amount double, qty string, dt string, extra string",
            "append_new_columns",
        )
    assert all_files(path) == before_files
    assert completed(HoodieTable.open(path)) == before_timeline

    # sync_all_columns: `name` leaves the table's schema, older files still hold it.
    write([(4, 4.0, 40, "x", "e4")], "id int, amount double, qty bigint, dt string, extra string",
          "sync_all_columns")  # fmt: skip
    table = HoodieTable.open(path)
    assert table.schema().names == ["id", "amount", "qty", "dt", "extra"]
    for row in expected.values():
        row.pop("name")
    expected[4] = {"id": 4, "amount": 4.0, "qty": 40, "dt": "x", "extra": "e4"}
    ours = rows_by_id(r.asDict() for r in table.read(spark).collect())
    assert ours == expected

    # hudi-rs reads the evolved table: same rows in the columns every file version agrees on
    # (it reads each file with its own schema, so a dropped column may still show up).
    theirs = hudi_rs_rows(path)
    assert set(theirs) == set(expected)
    for key, row in expected.items():
        assert {k: theirs[key].get(k) for k in row} == row, key

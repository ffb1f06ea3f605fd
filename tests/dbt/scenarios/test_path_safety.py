"""A dbt model whose partition column carries a path that would leave the table."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.slow


def _files(root) -> set[str]:
    return {
        os.path.relpath(os.path.join(folder, name), root)
        for folder, _, names in os.walk(root)
        for name in names
    }


def test_partition_value_leaving_the_table_is_refused(dbt_project):
    """`../x` as a partition value is refused naming the model, the column and the value;
    nothing is written, inside the model's table (a refused first run leaves no folder) or
    beside it (the schema's folder that every model shares). With urlencode it is written
    escaped (tests/spark/test_path_safety.py)."""
    dbt_project.write(
        "models/escaping.sql",
        "{{ config(materialized='cow_upsert', record_key='id', partition_by='region') }} "
        "select 1 as id, 'eu' as region union all select 2 as id, '../x' as region",
    )
    report = dbt_project.run([["run"]])
    messages = " ".join(report["commands"][0]["messages"])
    assert "Model 'escaping'" in messages, messages
    assert "partition column region" in messages and '"../x"' in messages, messages
    assert "hoodie.datasource.write.partitionpath.urlencode=true" in messages
    lake = dbt_project.lake
    outside = {f for f in _files(lake) if not f.startswith("escaping/")}
    assert outside == set(), outside
    assert not (lake / "x").exists() and not (lake.parent / "x").exists()
    assert not (lake / "escaping").exists()  # a refused first run leaves no folder

"""A CDC write killed after its `.cdc` file is written (`task.cdc_file.written`, a SIGKILL in
the Spark task) leaves that file and its marker; the next write rolls the instant back and the
`.cdc` file goes with it, as its base file does: every `.cdc` file left is one that a completed
commit's `cdcStats` names. (Marker `full`: the child costs a JVM start; the default suite's
CDC cleaning case is tests/integration/test_cdc_write.py.)"""

from __future__ import annotations

import shutil

import pytest
from crash_support import COW, CRASHED, FIRST, RECOVERY, SECOND, apply, assert_killed, run_child
from crash_support import snapshot as read_snapshot
from tests_support import SCHEMA, write_config

from hoodie import HoodieTable
from hoodie.naming import is_cdc_log_file

pytestmark = [pytest.mark.slow, pytest.mark.full]

CDC = {"hoodie.table.cdc.enabled": "true"}


def _cdc_files(table: HoodieTable) -> set[str]:
    return {
        info.relative_path
        for info in table.storage.list_files("", recursive=True)
        if is_cdc_log_file(info.name)
    }


def _named(table: HoodieTable) -> set[str]:
    named: set[str] = set()
    for instant in table.timeline().completed:
        for stat in table.commit_metadata(instant).write_stats():
            named.update(stat.cdc_stats or {})
    return named


def test_a_killed_cdc_write_is_rolled_back_with_its_cdc_files(spark, tmp_path):
    path = str(tmp_path / "t")
    config = write_config(COW, options=CDC)
    table = HoodieTable.for_write(path, config)
    for rows in (FIRST, SECOND):
        table.upsert(spark.createDataFrame(rows, SCHEMA), config)
    before = _cdc_files(table)
    assert before and before == _named(table)

    workdir = tmp_path / "child"
    workdir.mkdir()
    plan = {"action": "upsert", "table_type": COW, "rows": [list(r) for r in CRASHED],
            "options": CDC}  # fmt: skip
    assert_killed(run_child(path, plan, "task.cdc_file.written", workdir), "task.cdc_file.written")
    left = _cdc_files(HoodieTable.open(path)) - before
    assert left, "the killed write left no .cdc file"
    expected = apply(apply({}, FIRST), SECOND)
    assert read_snapshot(spark, path) == expected

    table = HoodieTable.open(path)
    table.upsert(spark.createDataFrame(RECOVERY, SCHEMA), config)
    expected = apply(expected, RECOVERY)
    assert read_snapshot(spark, path) == expected
    after = _cdc_files(table)
    assert not after & left  # the rollback deleted them
    assert after == _named(table)

    shutil.rmtree(workdir, ignore_errors=True)

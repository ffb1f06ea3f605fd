"""Two `dbt run`s of one mor_upsert model at the same time, with the default settings.

Running a model twice at once (a schedule and a manual run) is ordinary, so the model states
no concurrency option: the default (optimistic concurrency control) must keep both runs'
committed rows (issue 38: the former single-writer default rolled back the first run's write,
which then completed anyway, its rows gone).

Each run is its own dbt project and process with its own Derby metastore (embedded Derby
takes one JVM per metastore), and the model's `location_root` puts both at one lake table.
Both upsert the same five keys (and one key of their own) into a table neither has created
yet. Either both commit (one after the other), or one fails with the conflict error naming
the other's commit, and the other's rows are all in the table; never a mix, a duplicate key
or a pending write.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest
from listing_compare import (
    assert_indexes_whole,
    assert_metadata_table_whole,
    assert_reads_list_alike,
)

from hoodie import HoodieTable
from hoodie.timeline import WRITE_ACTIONS, Action

pytestmark = pytest.mark.slow

MODEL = """\
{{{{ config(materialized='mor_upsert', record_key='id', partition_path='p', precombine_field='ts',
          location_root='{root}',
          options={{'hoodie.index.type': 'BUCKET', 'hoodie.bucket.index.num.buckets': '2'
                   {more}}}) }}}}
select id, 'run{run}' as value, 'p0' as p, cast({run} as bigint) as ts
from (select explode(array(0, 1, 2, 3, 4, {run}00)) as id)
"""
SHARED = [0, 1, 2, 3, 4]
# The metadata table: None, the table version 6 default (none); 6 or 8, that table version with
# hoodie.metadata.enable=true (version 8's default), which both runs build and write at once;
# "8-indexes": with its column_stats and bloom_filters partitions too.
# A case is two dbt processes (~100 s on a loaded 2-core machine): make test runs the first,
# make test-writers the metadata table's (make test has concurrent writers with the metadata
# table and its indexes on in tests/faults).
VERSIONS = [None, pytest.param(8, marks=pytest.mark.writers),
            pytest.param(6, marks=pytest.mark.writers),
            pytest.param("8-indexes", marks=pytest.mark.writers)]  # fmt: skip
INDEXES = (", 'hoodie.metadata.index.column.stats.enable': 'true', "
           "'hoodie.metadata.index.bloom.filter.enable': 'true'")  # fmt: skip


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: f"mdt{v}" if v else "no-mdt")
def test_two_dbt_runs_of_one_model_at_once(make_dbt_project, tmp_path, version):
    lake = tmp_path / "lake"
    more = "" if version is None else (f", 'hoodie.write.table.version': '{str(version)[0]}', "
                                       "'hoodie.metadata.enable': 'true'")  # fmt: skip
    if "indexes" in str(version):
        more += INDEXES
    projects = []
    for run in (1, 2):
        project = make_dbt_project(f"project{run}")
        project.write("models/events.sql", MODEL.format(root=lake, run=run, more=more))
        projects.append(project)
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda p: p.run([["run"]]), projects))
    outcomes = [r["commands"][0] for r in reports]

    table = HoodieTable.open(str(lake / "events"))
    timeline = table.timeline()
    commits = [i.timestamp for i in timeline.completed if i.action is Action.DELTA_COMMIT]
    assert not [i for i in timeline.pending if i.action in WRITE_ACTIONS]
    hudi = pytest.importorskip("hudi")
    rows = pa.Table.from_batches(hudi.HudiTable(str(lake / "events")).read()).to_pylist()
    got = {r["id"]: r["value"] for r in rows}
    assert len(got) == len(rows), "a key appears twice"
    if version is not None:
        assert_metadata_table_whole(table.meta_client)
        assert_reads_list_alike(table.meta_client)
    if "indexes" in str(version):
        assert_indexes_whole(table.meta_client)

    if all(o["success"] for o in outcomes):
        assert len(commits) == 2
        # The larger ts (run 2's) wins on the shared keys, whichever committed last.
        assert got == {**{k: "run2" for k in SHARED}, 100: "run1", 200: "run2"}
        print("\nthe two runs committed one after the other")
        return
    assert [o["success"] for o in outcomes].count(True) == 1, outcomes
    winner = 1 if outcomes[0]["success"] else 2
    error = outcomes[2 - winner]["error"]
    assert len(commits) == 1
    match = re.search(r"Model 'events': write (\d{17}) to table 'events' conflicts with "
                      r"(\d{17}) \(deltacommit\)", error)  # fmt: skip
    assert match, error
    assert match.group(2) == commits[0] and match.group(1) != commits[0]
    assert got == {**{k: f"run{winner}" for k in SHARED}, winner * 100: f"run{winner}"}
    print(f"\nrun {3 - winner} failed with the conflict: {error}")

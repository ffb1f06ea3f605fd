"""Nothing a model's config says is ignored, and a refused model says why in one line.

One project, two runs: `hoodie.*` keys set at a config's top level, in dbt_project.yml and in
schema.yml order the rows (a stale row loses), a model selecting `*` from a lake model is
written, and the models that cannot be honoured stop with one line naming the model and the
cause, leaving no table folder behind.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbt_runs import PROJECT_YML

pytestmark = pytest.mark.slow

SEED = """\
id,ts,v,batch
1,2,new,1
2,1,old,1
1,1,stale,2
2,2,newer,2
"""

PROJECT = (
    PROJECT_YML
    + """\
models:
  functional:
    stale_project:
      +hoodie.datasource.write.precombine.field: ts
"""
)

ROWS = "select id, ts, v from {{ ref('raw') }} where batch = {{ var('batch') }}"
LAKE = "{{ config(materialized='cow_upsert', record_key='id') }}\n"
MODELS = {
    # The precombine field set at the top level of the config (a dict), in dbt_project.yml and
    # in schema.yml: each used to be dropped, and run 2's stale row for id 1 won.
    "stale_top": LAKE + "{{ config({'hoodie.datasource.write.precombine.field': 'ts'}) }}\n" + ROWS,
    "stale_project": LAKE + ROWS,
    "stale_yml": LAKE + ROWS,
    # A lake model of a lake model's rows, meta columns and all.
    "chained": LAKE + "select * from {{ ref('stale_top') }}",
    # Warned once (a seed's setting), and built.
    "warned": "{{ config(materialized='cow_upsert', record_key='id', "
    "column_types={'id': 'bigint'}) }}\n" + ROWS,
    "refused_merge_columns": "{{ config(materialized='cow_upsert', record_key='id', "
    "merge_update_columns=['v'], merge_exclude_columns=['ts']) }}\n" + ROWS,
    "meta_column": LAKE + "select 1 as id, 'k' as _hoodie_record_key",
    # dbt-spark's own Hudi table: refused with what to write instead, not Spark's
    # DATA_SOURCE_NOT_FOUND.
    "spark_hudi_table": "{{ config(materialized='table', file_format='hudi') }}\nselect 1 as id",
    # Refused in the write's Spark job, after the table was created.
    "null_keys": "{{ config(materialized='cow_upsert', record_key='id', partition_path='p') }}\n"
    "select cast(null as int) as id, 'a' as p union all select 1, 'b'",
    "long_partition": "{{ config(materialized='cow_upsert', record_key='id', "
    "partition_path='p') }}\nselect 1 as id, repeat('x', 5000) as p",
    "worker_error": LAKE + "select id, case when id = 2 then cast(raise_error('bad row 2') as "
    "string) else v end as v from {{ ref('raw') }} where batch = 1",
}
SCHEMA = """\
models:
  - name: stale_yml
    config:
      hoodie.datasource.write.precombine.field: ts
"""
ERRORS_PAGE = (Path(__file__).resolve().parents[3] / "docs" / "errors.md").read_text()
# The error class each refusal's message ends with (the rest: any class the page documents).
CLASSES = {
    "refused_merge_columns": "ModelConfigError",
    "spark_hudi_table": "ModelConfigError",
    "worker_error": "TaskFailedError",
}
BUILT = ["stale_top", "stale_project", "stale_yml", "chained"]
REFUSED_BEFORE_WRITING = ["refused_merge_columns", "meta_column", "spark_hudi_table"]
FAILED_WRITING = ["null_keys", "long_partition", "worker_error"]


def test_configs_are_honoured_or_refused(dbt_project):
    dbt_project.write("dbt_project.yml", PROJECT)
    dbt_project.write("seeds/raw.csv", SEED)
    dbt_project.write("models/schema.yml", SCHEMA)
    for name, sql in MODELS.items():
        dbt_project.write(f"models/{name}.sql", sql)
    report = dbt_project.run(
        [
            ["seed"],
            ["run"],
            ["run", "--vars", "{batch: 2}", "--select", " ".join(BUILT)],
        ],
        tables=[*BUILT, "warned"],
    )
    seed, first, second = report["commands"]
    assert seed["success"], seed
    assert second["success"], second
    for name in BUILT:
        rows = sorted((r["id"], r["ts"], r["v"]) for r in report["tables"][name]["rows"])
        # id 1: run 2's row has the smaller ts and loses; id 2: run 2's row wins.
        assert rows == [(1, 2, "new"), (2, 2, "newer")], name
    assert [r["id"] for r in report["tables"]["warned"]["rows"]] == [1, 2]

    messages = first["messages"]
    by_model = {name: next((m for m in messages if f"'{name}'" in m), "") for name in MODELS}
    assert (
        "cannot specify merge_update_columns and merge_exclude_columns"
        in (by_model["refused_merge_columns"])
    )
    assert "column '_hoodie_record_key' is a Hudi meta column name" in by_model["meta_column"]
    assert "use materialized='cow_upsert'" in by_model["spark_hudi_table"]
    assert "null or empty record key (column 'id')" in by_model["null_keys"]
    assert "bad row 2" in by_model["worker_error"]
    for name in REFUSED_BEFORE_WRITING + FAILED_WRITING:
        message = by_model[name]
        assert f"Model '{name}'" in message, (name, messages)
        # One line (between dbt's own "... Error in model" header and, for a config, dbt's
        # "> in macro" trail), no traceback.
        assert "Traceback" not in message and "JVM" not in message, message
        cause = message[message.index(f"Model '{name}'") :].split("\n")[0]
        assert len(cause) < 1000, cause
        # It ends with its error class, whose entry on docs/errors.md says what to do.
        tag = re.search(r" \[([A-Za-z]+)\]$", cause)
        assert tag and f"### `{tag.group(1)}`" in ERRORS_PAGE, cause
        assert CLASSES.get(name, tag.group(1)) == tag.group(1), cause
        # Nothing left behind: not even the table the failed first write created.
        assert not (dbt_project.lake / name).exists(), name

    log = (dbt_project.root / "logs" / "dbt.log").read_text()
    assert log.count("config column_types={'id': 'bigint'} applies to seeds only") == 1
    # Spark's whole error of the worker failure is in the debug log.
    assert "Model 'worker_error': Spark's error" in log and "bad row 2" in log

"""CDC write with Apache Hudi as the judge (design: incremental-pipelines.md 1.3-1.5, 7): the
tables we write with `hoodie.table.cdc.enabled` give, through Apache Hudi's CDC query
(`hoodie.datasource.query.incremental.format=cdc`), the changes of a model of the writes.

The writes: an upsert of keys 1-4 over partitions a and b (new file groups: Apache Hudi infers
BASE_FILE_INSERT), an upsert updating 2 and inserting 5 (a rewrite of both groups on
copy-on-write, `.cdc` files; a log append and a small-file rewrite on merge-on-read), a delete
of 3, and an upsert with a stale update of 2 (it loses: no change) and an insert of 6.
Merge-on-read tables compact inline after the third, so the last write updates a compacted
slice and the compaction's own `.cdc` files (which the query skips) are on the table too.
Images are compared as parsed JSON of the data columns; the string "null" and SQL NULL both
mean no image (decision D1), as Apache Hudi encodes them differently by case.

hudi-rs 0.5 reads the same tables as we do with the `.cdc` files present. The default suite
runs one case (copy-on-write, DATA_BEFORE_AFTER, version 8); the matrix is `hudi_full`.
"""

from __future__ import annotations

import json
import posixpath

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1
from rs_compare import assert_table_read_agrees

from hoodie import HoodieTable, WriteConfig
from hoodie.cdc import read_cdc_block
from hoodie.logformat import read_log_file
from hoodie.naming import is_cdc_log_file
from hoodie.read.datasource import register

pytestmark = [pytest.mark.spark]

SCHEMA = "id bigint, dt string, ts bigint, name string"
COLUMNS = ("id", "dt", "ts", "name")
WRITES: list[tuple[str, list[tuple]]] = [
    ("upsert", [(1, "a", 1, "w"), (2, "a", 1, "x"), (3, "b", 1, "y"), (4, "b", 1, "z")]),
    ("upsert", [(2, "a", 2, "x2"), (5, "b", 2, "v")]),
    ("delete", [(3, "b", 1, "y")]),
    ("upsert", [(2, "a", 0, "stale"), (6, "a", 4, "u")]),
]
MODES = ("DATA_BEFORE_AFTER", "DATA_BEFORE", "OP_KEY_ONLY")
TABLE_TYPE = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
Change = tuple[str, str, "tuple | None", "tuple | None"]


def model_changes(instants: list[str]) -> set[Change]:
    """What each write changed: (op, instant, before, after), images as data-column tuples.
    The larger `ts` wins (DefaultHoodieRecordPayload), an update that loses changes nothing."""
    state: dict[int, tuple] = {}
    out: set[Change] = set()
    for (operation, rows), instant in zip(WRITES, instants):
        for row in rows:
            key, stored = row[0], state.get(row[0])
            if operation == "delete":
                if stored is not None:
                    out.add(("d", instant, stored, None))
                    del state[key]
            elif stored is None:
                out.add(("i", instant, None, row))
                state[key] = row
            elif row[2] >= stored[2]:
                out.add(("u", instant, stored, row))
                state[key] = row
    return out


def _image(text: str | None) -> tuple | None:
    if text is None or text == "null":
        return None
    value = json.loads(text)
    return tuple(value[c] for c in COLUMNS)


def apache_hudi_changes(judge, path: str) -> set[Change]:
    rows = judge.read(
        path,
        **{
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.query.incremental.format": "cdc",
            "hoodie.datasource.read.begin.instanttime": "0",
        },
    ).to_pylist()
    changes = {(r["op"], r["ts_ms"], _image(r["before"]), _image(r["after"])) for r in rows}
    assert len(changes) == len(rows), rows  # no change twice
    return changes


def write_ours(spark, path: str, kind: str, mode: str, version: int) -> list[str]:
    """The writes, through our writer; their instants."""
    config = WriteConfig.build(
        "cdc_t", record_key="id", partition_path="dt", precombine_field="ts",
        table_type=TABLE_TYPE[kind],
        options={"hoodie.write.table.version": str(version),
                 "hoodie.table.cdc.enabled": "true",
                 "hoodie.table.cdc.supplemental.logging.mode": mode.lower(),
                 "hoodie.compact.inline": "true",
                 "hoodie.compact.inline.max.delta.commits": "3"},
    )  # fmt: skip
    table = HoodieTable.for_write(path, config)
    instants = []
    for operation, rows in WRITES:
        df = spark.createDataFrame(rows, SCHEMA).coalesce(1)
        write = table.delete if operation == "delete" else table.upsert
        instants.append(write(df, config).instant)
    return instants


def cdc_files(path: str) -> dict[str, list[dict]]:
    """Our `.cdc` files (relative path -> records), read with `hoodie.cdc`."""
    table = HoodieTable.open(path)
    out = {}
    for info in table.storage.list_files("", recursive=True):
        if is_cdc_log_file(info.name):
            blocks = read_log_file(table.storage, info.relative_path)
            out[info.relative_path] = [r for b in blocks for r in read_cdc_block(b).to_pylist()]
    return out


FULL = pytest.mark.hudi_full
CASES = [
    pytest.param("cow", "DATA_BEFORE_AFTER", 8, id="cow-data_before_after-v8"),
    *[
        pytest.param(kind, mode, version, id=f"{kind}-{mode.lower()}-v{version}", marks=FULL)
        for kind in ("cow", "mor")
        for mode in MODES
        for version in (6, 8)
        if (kind, mode, version) != ("cow", "DATA_BEFORE_AFTER", 8)
    ],
]


@pytest.mark.parametrize(("kind", "mode", "version"), CASES)
def test_apache_hudi_reads_our_changes(spark, apache_hudi, tmp_path, kind, mode, version):
    register(spark)
    path = str(tmp_path / "t")
    instants = write_ours(spark, path, kind, mode, version)
    table = HoodieTable.open(path)
    assert table.properties.cdc_enabled
    assert table.properties.cdc_supplemental_logging_mode == mode
    # Every `.cdc` file is named by a write stat's cdcStats with its size, beside the base
    # file of the same instant and token.
    files = cdc_files(path)
    named: dict[str, int] = {}
    for instant in table.timeline().completed:
        for stat in table.commit_metadata(instant).write_stats():
            named.update(stat.cdc_stats or {})
            for cdc in stat.cdc_stats or {}:
                assert stat.path is not None and stat.path.endswith(".parquet")
                base = posixpath.basename(stat.path).removesuffix(".parquet")
                file_id, token, written = base.rsplit("_", 2)
                assert posixpath.basename(cdc) == f".{file_id}_{written}.log.1_{token}.cdc"
    assert set(named) == set(files) and files
    assert all(named[p] == table.storage.size(p) for p in files)
    judges = [HUDI_1] + ([HUDI_0] if version == 6 else [])
    if kind == "mor" and version == 6:
        judges = [HUDI_0]  # Apache Hudi 1.2 fails on every version 6 table's log (below)
    expected = model_changes(instants)
    for judge in judges:
        assert apache_hudi_changes(apache_hudi(judge), path) == expected, judge
    assert_table_read_agrees(spark, path, "id")
    _assert_hudi_rs_reads(spark, path)


def _assert_hudi_rs_reads(spark, path: str) -> None:
    import hudi
    from rs_compare import read_ours, rows_of

    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    ours = read_ours(spark, path)
    assert rows_of(theirs, list(COLUMNS), "id") == rows_of(ours, list(COLUMNS), "id")


@pytest.mark.hudi_full
def test_apache_hudi_1_2_cdc_query_fails_on_version_6_logs(apache_hudi, tmp_path):
    """Why the version 6 merge-on-read cases are judged by 0.15 alone: Apache Hudi 1.2's CDC
    query reads a delta commit's metadata as Avro (`HoodieCommitMetadata.
    getFileSliceForFileGroupFromDeltaCommit`), and version 6 commit metadata is JSON, its own
    included. (If this starts passing, judge those cases with 1.2 too.)"""
    from apache_hudi import ApacheHudiError, datasource_options

    judge = apache_hudi(HUDI_1)
    path = str(tmp_path / "theirs")
    options = {**datasource_options("cdc_v6", "mor"), "hoodie.write.table.version": "6",
               "hoodie.table.cdc.enabled": "true", "hoodie.metadata.enable": "false"}  # fmt: skip
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("ts", pa.int64()),
                        ("name", pa.string())])  # fmt: skip
    for rows in ([(1, "a", 1, "w"), (2, "a", 1, "x")], [(2, "a", 2, "x2")]):
        table = pa.Table.from_pylist([dict(zip(COLUMNS, r)) for r in rows], schema=schema)
        judge.write(path, table, options)
    with pytest.raises(ApacheHudiError, match="Not an Avro data file"):
        apache_hudi_changes(judge, path)


@pytest.mark.hudi_full
@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_we_log_changes_on_apache_hudis_cdc_table(spark, apache_hudi, tmp_path, kind):
    """A table Apache Hudi 1.2 created with CDC on (OP_KEY_ONLY, version 8): our writes log
    their changes too (its hoodie.properties says so), and its CDC query sees them."""
    from apache_hudi import datasource_options

    register(spark)
    judge = apache_hudi(HUDI_1)
    path = str(tmp_path / "theirs")
    options = {**datasource_options("cdc_t", kind), "hoodie.write.table.version": "8",
               "hoodie.table.cdc.enabled": "true", "hoodie.metadata.enable": "false",
               "hoodie.table.cdc.supplemental.logging.mode": "OP_KEY_ONLY"}  # fmt: skip
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("ts", pa.int64()),
                        ("name", pa.string())])  # fmt: skip
    first = WRITES[0][1]
    judge.write(path, pa.Table.from_pylist([dict(zip(COLUMNS, r)) for r in first], schema=schema),
                options)  # fmt: skip
    table = HoodieTable.open(path)
    instants = [table.timeline().completed.instants[-1].timestamp]
    config = WriteConfig.build("cdc_t", record_key="id", partition_path="dt",
                               precombine_field="ts", table_type=TABLE_TYPE[kind])  # fmt: skip
    for operation, rows in WRITES[1:]:
        df = spark.createDataFrame(rows, SCHEMA).coalesce(1)
        write = table.delete if operation == "delete" else table.upsert
        instants.append(write(df, config).instant)
    if kind == "cow":
        assert cdc_files(path)  # ours: they had none after their insert
    assert apache_hudi_changes(judge, path) == model_changes(instants)


@pytest.mark.hudi_full
@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_apache_hudi_reads_our_overwrite_as_changes(spark, apache_hudi, tmp_path, kind):
    """An overwrite (dbt's full refresh: `insert_overwrite_table`, a replace commit) writes no
    `.cdc` file: Apache Hudi's CDC query reads every row of the replaced file groups as `d`
    (REPLACE_COMMIT) and the new file groups' rows as `i` (BASE_FILE_INSERT)."""
    register(spark)
    path = str(tmp_path / "t")
    instants = write_ours(spark, path, kind, "DATA_BEFORE_AFTER", 8)
    table = HoodieTable.open(path)
    before = {r["id"]: tuple(r[c] for c in COLUMNS) for r in read_rows(spark, path)}
    rows = [(7, "a", 5, "o"), (2, "b", 5, "moved")]
    config = WriteConfig.build("cdc_t", record_key="id", partition_path="dt",
                               precombine_field="ts", table_type=TABLE_TYPE[kind])  # fmt: skip
    result = table.overwrite(spark.createDataFrame(rows, SCHEMA).coalesce(1), config)
    assert not any(s.cdc_stats for s in result.metadata.write_stats())
    expected = model_changes(instants)
    expected |= {("d", result.instant, row, None) for row in before.values()}
    expected |= {("i", result.instant, None, row) for row in rows}
    assert apache_hudi_changes(apache_hudi(HUDI_1), path) == expected


def read_rows(spark, path: str) -> list[dict]:
    from rs_compare import read_ours

    return read_ours(spark, path).select(list(COLUMNS)).to_pylist()


@pytest.mark.hudi_full
@pytest.mark.parametrize("kind", ["cow", "mor"])
@pytest.mark.parametrize("index", ["BUCKET", "GLOBAL_SIMPLE"])
def test_apache_hudi_reads_our_changes_under_other_indexes(
    spark, apache_hudi, tmp_path, kind, index
):
    """The bucket writer's and the placed writer's rewrites log changes too; under a global
    index a record moved to another partition is a `d` in its old file group and an `i` in
    the new one, at the same instant (as Apache Hudi's own move, runs/cdc-1.2.0-v8.txt)."""
    register(spark)
    path = str(tmp_path / "t")
    options = {"hoodie.write.table.version": "8", "hoodie.table.cdc.enabled": "true",
               "hoodie.index.type": index}  # fmt: skip
    if index == "BUCKET":
        options["hoodie.bucket.index.num.buckets"] = "2"
    else:
        options["hoodie.simple.index.update.partition.path"] = "true"
    config = WriteConfig.build("cdc_t", record_key="id", partition_path="dt",
                               precombine_field="ts", table_type=TABLE_TYPE[kind],
                               options=options)  # fmt: skip
    table = HoodieTable.for_write(path, config)
    instants = []
    for operation, rows in WRITES:
        df = spark.createDataFrame(rows, SCHEMA).coalesce(1)
        write = table.delete if operation == "delete" else table.upsert
        instants.append(write(df, config).instant)
    expected = model_changes(instants)
    if index == "GLOBAL_SIMPLE":
        moved = (1, "b", 9, "w9")
        result = table.upsert(spark.createDataFrame([moved], SCHEMA).coalesce(1), config)
        expected |= {("d", result.instant, (1, "a", 1, "w"), None),
                     ("i", result.instant, None, moved)}  # fmt: skip
    assert apache_hudi_changes(apache_hudi(HUDI_1), path) == expected
    assert_table_read_agrees(spark, path, "id")


@pytest.mark.hudi_full
def test_a_rewrite_that_changed_nothing_logs_an_empty_cdc_file(spark, apache_hudi, tmp_path):
    """A batch of stale updates only still rewrites the file group: its `.cdc` file has no
    record, and Apache Hudi's CDC query, which asks for one of every rewrite that is not all
    inserts, reads no change from it."""
    register(spark)
    path = str(tmp_path / "t")
    config = WriteConfig.build(
        "cdc_t", record_key="id", partition_path="dt", precombine_field="ts",
        options={"hoodie.write.table.version": "8", "hoodie.table.cdc.enabled": "true"},
    )  # fmt: skip
    table = HoodieTable.for_write(path, config)
    first = table.upsert(spark.createDataFrame(WRITES[0][1], SCHEMA).coalesce(1), config)
    stale = table.upsert(spark.createDataFrame([(2, "a", 0, "stale")], SCHEMA), config)
    ((cdc_path, _),) = stale.metadata.write_stats()[0].cdc_stats.items()  # fmt: skip
    (block,) = read_log_file(table.storage, cdc_path)
    assert read_cdc_block(block).num_rows == 0
    expected = {("i", first.instant, None, row) for row in WRITES[0][1]}
    assert apache_hudi_changes(apache_hudi(HUDI_1), path) == expected

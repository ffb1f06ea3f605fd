"""The CDC read's extractor (`hoodie.read.cdc`) on hand-built commit metadata and files: which
inference case each write stat gets, what each case reads, and the refusals. (Tables Apache
Hudi wrote: tests/judge/test_cdc_with_apache_hudi.py.)"""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.archived_timeline import ArchivedInstant
from hoodie.cdc import cdc_data_block, cdc_schema
from hoodie.exceptions import InvalidConfigError, TimelineError, UnsupportedTableError
from hoodie.fs_view import CommittedInstants
from hoodie.logformat import DeleteRecord, add_meta_fields, avro_data_block, delete_block
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata import CommitMetadata, WriteStat
from hoodie.properties import TableProperties
from hoodie.read.cdc import (
    CdcCase,
    WrittenBefore,
    cdc_files_of,
    cdc_read_spec,
    infer_case,
    plan_cdc,
    read_cdc_split,
)
from hoodie.read.options import ReadOptions
from hoodie.schema import META_SCHEMA, to_avro_schema
from hoodie.timeline import Action, Instant, State

T1, T2, T3, T4 = (f"2026120701000000{n}" for n in (1, 2, 3, 4))
DATA = pa.schema([("id", pa.int64()), ("name", pa.string())])
BASE = "a/f1_0-1-{n}_{t}.parquet"
CDC_FILE = f"a/.f1_{T2}.log.1_0-1-2.cdc"


def _stat(path: str, **counts) -> WriteStat:
    return WriteStat(file_id="f1", partition_path="a", path=path, **counts)


def test_cases_from_write_stats():
    with_cdc = _stat(BASE.format(n=2, t=T2), num_writes=2, num_update_writes=1, num_inserts=1)
    with_cdc.extra["cdcStats"] = {CDC_FILE: 100}
    assert infer_case(with_cdc, "UPSERT") is CdcCase.AS_IS
    assert cdc_files_of(with_cdc) == (CDC_FILE,)
    inserts = _stat(BASE.format(n=1, t=T1), num_writes=2, num_inserts=2)
    assert infer_case(inserts, "INSERT") is CdcCase.BASE_FILE_INSERT
    emptied = _stat(BASE.format(n=3, t=T3), num_writes=0, num_deletes=3)
    assert infer_case(emptied, "DELETE") is CdcCase.BASE_FILE_DELETE
    # the same counts in an upsert (Apache Hudi only takes deletes for BASE_FILE_DELETE)
    assert infer_case(emptied, "UPSERT") is CdcCase.BASE_FILE_INSERT
    log = _stat(f"a/.f1_{T1}.log.1_0-1-1", num_writes=1, num_update_writes=1)
    assert infer_case(log, "UPSERT") is CdcCase.LOG_FILE
    rewritten = _stat(BASE.format(n=2, t=T2), num_writes=2, num_update_writes=1, num_inserts=1)
    with pytest.raises(UnsupportedTableError, match="There should be a cdc log file"):
        infer_case(rewritten, "UPSERT")


def test_cdc_stats_read_from_commit_metadata():
    text = json.dumps(
        {
            "partitionToWriteStats": {
                "a": [{"fileId": "f1", "path": BASE.format(n=2, t=T2), "cdcStats": {CDC_FILE: 7}}]
            },
            "operationType": "UPSERT",
        }
    )
    (stat,) = CommitMetadata.from_json(text).write_stats()
    assert cdc_files_of(stat) == (CDC_FILE,)


def test_log_blocks_counted_before_and_after_a_write():
    committed = CommittedInstants(frozenset({T1, T2, T3}), timeline_start=T1)
    # layout 2: T3 completed before T2 did
    completion = {T1: T1, T2: "20261207010000009", T3: "20261207010000005"}
    before = WrittenBefore(committed, completion, T2)
    assert T1 in before and T3 in before and T2 not in before
    assert T2 in WrittenBefore(committed, completion, T2, including=True)
    assert T4 not in WrittenBefore(committed, {}, T4, including=False)
    assert "20261201000000000" in before  # archived before the timeline starts


def _parquet(rows: list[tuple[int, str]], instant: str, name: str) -> bytes:
    columns = {f.name: [] for f in META_SCHEMA}
    for i, (key, _) in enumerate(rows):
        columns["_hoodie_commit_time"].append(instant)
        columns["_hoodie_commit_seqno"].append(f"{instant}_0_{i}")
        columns["_hoodie_record_key"].append(str(key))
        columns["_hoodie_partition_path"].append("a")
        columns["_hoodie_file_name"].append(name)
    table = pa.table(
        {
            **{k: pa.array(v, pa.string()) for k, v in columns.items()},
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "name": [r[1] for r in rows],
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _commit(table: HoodieTableMetaClient, instant: str, operation: str, stat: WriteStat) -> None:
    metadata = CommitMetadata(operation_type=operation)
    metadata.extra_metadata["schema"] = to_avro_schema(DATA, "t")
    metadata.add(stat)
    pending = Instant(instant, Action.COMMIT, State.REQUESTED)
    table.save_instant(pending)
    table.save_instant(pending.with_state(State.INFLIGHT))
    table.save_instant(pending.with_state(State.COMPLETED), table.commit_content(metadata))


def _base(table, n: int, instant: str, rows) -> str:
    relative = BASE.format(n=n, t=instant)
    table.storage.write_bytes(relative, _parquet(rows, instant, relative.split("/")[1]))
    return relative


@pytest.fixture
def op_key_only(tmp_path) -> HoodieTableMetaClient:
    """Copy-on-write, OP_KEY_ONLY: T1 inserts 1, 2; T2 updates 1, inserts 3 (a .cdc file);
    T3 deletes everything; T4 is a compaction-like commit (no data change)."""
    props = TableProperties(
        name="t", table_type="COPY_ON_WRITE", record_key_fields=("id",), cdc_enabled=True,
        cdc_supplemental_logging_mode="OP_KEY_ONLY",
    )  # fmt: skip
    table = HoodieTableMetaClient.create(str(tmp_path / "t"), props)
    path = _base(table, 1, T1, [(1, "w"), (2, "x")])
    _commit(table, T1, "INSERT", _stat(path, num_writes=2, num_inserts=2))
    path = _base(table, 2, T2, [(1, "w2"), (2, "x"), (3, "y")])
    records = [{"op": "u", "record_key": "1"}, {"op": "i", "record_key": "3"}]
    schema = cdc_schema("OP_KEY_ONLY", "t", DATA)
    table.storage.write_bytes(CDC_FILE, cdc_data_block(records, T2, schema))
    stat = _stat(path, num_writes=3, num_update_writes=1, num_inserts=1, prev_commit=T1)
    stat.extra["cdcStats"] = {CDC_FILE: 1}
    _commit(table, T2, "UPSERT", stat)
    _commit(table, T3, "DELETE", _stat(BASE.format(n=3, t=T3), num_deletes=3, prev_commit=T2))
    _commit(table, T4, "COMPACT", _stat(path, num_writes=3))
    return table


def _options(begin: str, end: str | None = None, **more: str) -> ReadOptions:
    given = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.query.incremental.format": "cdc",
        "hoodie.datasource.read.begin.instanttime": begin,
        **more,
    }
    if end is not None:
        given["hoodie.datasource.read.end.instanttime"] = end
    return ReadOptions.parse(given)


def _read(table: HoodieTableMetaClient, options: ReadOptions) -> list[tuple]:
    plan = plan_cdc(table, options)
    spec = cdc_read_spec(table)
    spec = type(spec)(spec.slices, spec.data_columns, spec.mode, plan.committed, plan.completion)
    rows = []
    for split in plan.splits:
        batch = read_cdc_split(spec, split)
        rows += [(split.case.name, *r.values()) for r in batch.to_pylist()]
    return rows


def test_each_case_reads_its_files(op_key_only):
    plan = plan_cdc(op_key_only, _options("0"))
    assert plan.instants == [T1, T2, T3]  # the compaction is no data change
    assert [(s.instant, s.case) for s in plan.splits] == [
        (T1, CdcCase.BASE_FILE_INSERT),
        (T2, CdcCase.AS_IS),
        (T3, CdcCase.BASE_FILE_DELETE),
    ]
    assert _read(op_key_only, _options("0")) == [
        ("BASE_FILE_INSERT", "i", T1, None, '{"id":1,"name":"w"}'),
        ("BASE_FILE_INSERT", "i", T1, None, '{"id":2,"name":"x"}'),
        ("AS_IS", "u", T2, '{"id":1,"name":"w"}', '{"id":1,"name":"w2"}'),
        ("AS_IS", "i", T2, None, '{"id":3,"name":"y"}'),
        ("BASE_FILE_DELETE", "d", T3, '{"id":1,"name":"w2"}', None),
        ("BASE_FILE_DELETE", "d", T3, '{"id":2,"name":"x"}', None),
        ("BASE_FILE_DELETE", "d", T3, '{"id":3,"name":"y"}', None),
    ]
    # (begin, end] by requested time
    assert [r[2] for r in _read(op_key_only, _options(T1, T2))] == [T2, T2]


def test_a_table_without_cdc_is_refused(tmp_path):
    props = TableProperties(name="t", table_type="COPY_ON_WRITE", record_key_fields=("id",))
    table = HoodieTableMetaClient.create(str(tmp_path / "t"), props)
    with pytest.raises(InvalidConfigError, match="hoodie.table.cdc.enabled=true"):
        plan_cdc(table, _options("0"))


def test_the_previous_base_file_gone_is_named(op_key_only):
    op_key_only.storage.delete(BASE.format(n=1, t=T1))
    with pytest.raises(TimelineError, match=f"commit {T1} wrote"):
        plan_cdc(op_key_only, _options(T1))


def test_format_option():
    assert ReadOptions.parse({}).incremental_format == "latest_state"
    with pytest.raises(InvalidConfigError, match="must be one of latest_state, cdc"):
        _options("0", **{"hoodie.datasource.query.incremental.format": "changes"})
    with pytest.raises(InvalidConfigError, match="incremental reads only"):
        ReadOptions.parse({"hoodie.datasource.query.incremental.format": "cdc"})


def test_a_range_cleaning_may_have_emptied_is_refused(op_key_only, monkeypatch):
    monkeypatch.setattr(op_key_only, "earliest_commit_to_retain", lambda: T2)
    with pytest.raises(TimelineError, match=rf"\({T1}, {T3}\].*older than {T2}"):
        plan_cdc(op_key_only, _options(T1, T3))
    assert [s.instant for s in plan_cdc(op_key_only, _options(T2)).splits] == [T3]


def test_a_range_reaching_archived_commits_is_refused(op_key_only, monkeypatch):
    archived = [ArchivedInstant("20261207000000000", "commit", "COMPLETED")]
    monkeypatch.setattr(op_key_only, "archived_instants", lambda: archived)
    with pytest.raises(TimelineError, match=rf"\(0{{17}}, latest\].*starts at {T1}"):
        plan_cdc(op_key_only, _options("0"))
    assert len(plan_cdc(op_key_only, _options(T1)).splits) == 2


def test_images_are_json_spark_reads_back():
    from datetime import date, datetime, timezone
    from decimal import Decimal

    from hoodie.read.cdc import _encode

    row = {
        "d": date(2026, 1, 2),
        "t": datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc),
        "x": Decimal("12345678901234567.89"),
        "b": b"\x01\x02",
        "s": 'a"é',
        "m": [("k", 1)],
        "l": [1, None],
        "st": {"f": True},
        "n": None,
    }
    assert _encode(row) == (
        '{"d":"2026-01-02","t":"2026-01-02T03:04:05.123456+00:00","x":12345678901234567.89,'
        '"b":"AQI=","s":"a\\"é","m":{"k":1},"l":[1,null],"st":{"f":true},"n":null}'
    )
    assert json.loads(_encode(row))["x"] == 12345678901234567.89


MODEL = "org.apache.hudi.common.model."
MOR_DATA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("ts", pa.int64())])
LOG = f"a/.f1_{T1}.log.1_0-1-2"


def _mor_rows(rows: list[tuple[int, str, int]], instant: str) -> pa.Table:
    n = len(rows)
    return pa.table(
        {
            "_hoodie_commit_time": [instant] * n,
            "_hoodie_commit_seqno": [f"{instant}_0_{i}" for i in range(n)],
            "_hoodie_record_key": [str(r[0]) for r in rows],
            "_hoodie_partition_path": ["a"] * n,
            "_hoodie_file_name": ["f1"] * n,
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "name": [r[1] for r in rows],
            "ts": pa.array([r[2] for r in rows], pa.int64()),
        }
    )


def _delta(table, instant: str, operation: str, stat: WriteStat) -> None:
    metadata = CommitMetadata(operation_type=operation)
    metadata.extra_metadata["schema"] = to_avro_schema(MOR_DATA, "t")
    metadata.add(stat)
    pending = Instant(instant, Action.DELTA_COMMIT, State.REQUESTED)
    table.save_instant(pending)
    table.save_instant(pending.with_state(State.INFLIGHT))
    table.save_instant(pending.with_state(State.COMPLETED), table.commit_content(metadata))


def test_log_appends_merge_by_the_tables_rule(tmp_path):
    """Merge-on-read, layout 1 (one log file the writes append to), DefaultHoodieRecordPayload:
    T2 logs a stale update of 1 (it loses by ordering value: no change), a newer one of 2, an
    insert of 3 and a delete of 4, which was never there (no change); T3 deletes 1."""
    payload = {"hoodie.compaction.payload.class": MODEL + "DefaultHoodieRecordPayload"}
    props = TableProperties(
        name="t", table_type="MERGE_ON_READ", record_key_fields=("id",), precombine_field="ts",
        cdc_enabled=True, table_version=6, timeline_layout_version=1, extra=payload,
    )  # fmt: skip
    table = HoodieTableMetaClient.create(str(tmp_path / "t"), props)
    base = f"a/f1_0-1-1_{T1}.parquet"
    out = io.BytesIO()
    pq.write_table(_mor_rows([(1, "w", 5), (2, "x", 5)], T1), out)
    table.storage.write_bytes(base, out.getvalue())
    _delta(table, T1, "INSERT", WriteStat("f1", "a", base, num_writes=2, num_inserts=2))
    schema = add_meta_fields(to_avro_schema(MOR_DATA, "t"))
    data = avro_data_block(_mor_rows([(1, "stale", 3), (2, "x7", 7), (3, "y", 1)], T2), T2, schema)
    gone = delete_block([DeleteRecord("4", "a", 9)], T2, schema, ordering_field="ts")
    table.storage.write_bytes(LOG, data + gone)
    logged = dict(base_file=base.split("/")[1], log_files=[LOG.split("/")[1]], prev_commit=T1)
    size = len(data + gone)
    _delta(table, T2, "UPSERT", WriteStat("f1", "a", LOG, num_writes=3, log_offset=0,
                                          file_size_in_bytes=size, **logged))  # fmt: skip
    deleted = delete_block([DeleteRecord("1", "a", 9)], T3, schema, ordering_field="ts")
    table.storage.write_bytes(LOG, data + gone + deleted)
    _delta(table, T3, "DELETE", WriteStat("f1", "a", LOG, num_deletes=1, log_offset=size,
                                          file_size_in_bytes=len(deleted), **logged))  # fmt: skip
    assert [(s.instant, s.case) for s in plan_cdc(table, _options(T1)).splits] == [
        (T2, CdcCase.LOG_FILE),
        (T3, CdcCase.LOG_FILE),
    ]
    assert sorted(_read(table, _options(T1))) == [
        ("LOG_FILE", "d", T3, '{"id":1,"name":"w","ts":5}', None),
        ("LOG_FILE", "i", T2, None, '{"id":3,"name":"y","ts":1}'),
        ("LOG_FILE", "u", T2, '{"id":2,"name":"x","ts":5}', '{"id":2,"name":"x7","ts":7}'),
    ]


def test_a_cdc_file_outside_what_a_data_file_can_be_is_refused_naming_the_commit():
    """cdcStats comes from commit metadata, which a crafted table controls."""
    from hoodie.exceptions import UnsafePathError
    from hoodie.options.table import CdcSupplementalLoggingMode
    from hoodie.read.cdc import CdcCase, _split

    class View:
        class storage:  # noqa: N801 - stands in for the view's FileIO
            @staticmethod
            def uri():
                return "file:///t"

    for bad in ("../outside.cdc", "/abs.cdc", ".hoodie/hoodie.properties", "a/\x00.cdc"):
        stat = WriteStat(partition_path="a", file_id="f1", path="a/f1_1-0-1_2.parquet")
        stat.cdc_stats = {bad: 1}
        with pytest.raises(UnsafePathError, match="commit 2"):
            _split(
                View(), {}, "2", stat, CdcCase.AS_IS, CdcSupplementalLoggingMode.DATA_BEFORE_AFTER
            )

"""Apache Hudi and the metadata table's `record_index` partition we write (issue 41 step 8,
`hoodie/transaction/record_index.py`).

- Our records are Apache Hudi's: Apache Hudi (1.2 for table version 8, 0.15 for 6) and we each
  write the same rows into a table of our own; each table's record index holds every key once,
  in its row's partition and file group, at the instant of the row's commit, with the file id
  encoding Apache Hudi chose (0: UUID bits), and our checker of the record index passes on
  Apache Hudi's table as on ours.
- Apache Hudi writes on our table by our record index (`hoodie.index.type=RECORD_INDEX`), after
  our inserts, upserts, deletes and a move by a global index: its upserts update each key in
  the file group our index names (no key in two file groups, none lost), its deletes delete;
  its reads agree with ours, the record index it leaves is whole, and we write on after it.
  This is the proof our index is right: a key missing from it would be inserted twice, a
  stale one would update a file group that no longer holds it.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, assert_same_as_apache_hudi, datasource_options
from listing_compare import assert_record_index_whole, record_index_locations, table_locations
from rs_compare import read_ours

from hoodie import HoodieTable, WriteConfig
from hoodie import properties as props
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import RecordIndexRecord
from hoodie.read.datasource import register
from hoodie.table_metadata import TableMetadata

pytestmark = pytest.mark.spark

KEY = "_hoodie_record_key"
VERSIONS = {HUDI_1: 8, HUDI_0: 6}
RECORD_INDEX = {"hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "true"}


def rows(ids, step: int, moved=frozenset()) -> pa.Table:
    return pa.table({
        "id": pa.array(list(ids), pa.int32()),
        "dt": pa.array(["ab"[(i + (i in moved)) % 2] for i in ids]),
        "ts": pa.array([step] * len(ids), pa.int64()),
        "name": pa.array([f"n{i}-{step}" for i in ids]),
    })  # fmt: skip


def hudi_options(version: str, kind: str, operation: str = "upsert", **extra) -> dict[str, str]:
    options = {**datasource_options("ri", kind, operation), **RECORD_INDEX,
               "hoodie.compact.inline": "false", **extra}  # fmt: skip
    if version == HUDI_1:
        options["hoodie.write.table.version"] = "8"
        options["hoodie.metadata.index.partition.stats.enable"] = "false"
    return options


def our_config(version: str, kind: str, **extra: str) -> WriteConfig:
    options = {**RECORD_INDEX, "hoodie.write.table.version": str(VERSIONS[version]),
               "hoodie.compact.inline": "false", **extra}  # fmt: skip
    table_type = props.MERGE_ON_READ if kind == "mor" else props.COPY_ON_WRITE
    return WriteConfig.build("ri", "id", "dt", "ts", table_type=table_type, options=options)


def our_write(spark, path: str, table: pa.Table, config: WriteConfig, delete: bool = False):
    frame = spark.createDataFrame(table.to_pandas())
    writer = HoodieTable.for_write(path, config)
    return writer.delete(frame, config) if delete else writer.upsert(frame, config)


def index_shape(spark, path: str) -> dict[str, tuple]:
    """Per key: its partition, whether its file group is its row's, its file id encoding, and
    which write (1, 2, ... of the table's completed writes) its instant is."""
    meta = HoodieTableMetaClient.open(path)
    assert_record_index_whole(spark, meta, path)
    writes = [i.timestamp for i in meta.timeline().completed.write_timeline]
    metadata = TableMetadata.open(meta)
    assert metadata is not None
    zone = metadata.data_timezone
    out = {}
    located = table_locations(spark, meta)
    for key, record in metadata.read_partition("record_index").items():
        assert isinstance(record, RecordIndexRecord)
        out[key] = (record.partition, record.file_id == located[key][1], record.file_id_encoding,
                    writes.index(record.instant_time(zone)) + 1)  # fmt: skip
    return out


# (all hudi_full: make test has Apache Hudi write by our record index, below)
@pytest.mark.parametrize(
    "version", [pytest.param(v, marks=pytest.mark.hudi_full) for v in (HUDI_1, HUDI_0)]
)
def test_our_records_are_apache_hudis(spark, apache_hudi, tmp_path, version):
    """The same insert, upsert (10 updates, 10 inserts) and delete by Apache Hudi and by us
    (copy-on-write: on merge-on-read our log files locate their updated keys again, at the
    update's instant, where Apache Hudi keeps the insert's)."""
    register(spark)
    judge = apache_hudi(version)
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    config = our_config(version, "cow")
    for table, delete in ((rows(range(30), 1), False), (rows(range(20, 40), 2), False),
                          (rows(range(0, 5), 0), True)):  # fmt: skip
        operation = "delete" if delete else "upsert"
        judge.write(theirs, table, hudi_options(version, "cow", operation))
        our_write(spark, ours, table, config, delete=delete)
    expected = index_shape(spark, theirs)
    assert len(expected) == 35 and all(v[1:3] == (True, 0) for v in expected.values())
    assert {v[3] for v in expected.values()} == {1, 2}  # inserts of the first and second
    assert index_shape(spark, ours) == expected


CASES = [
    (HUDI_1, "mor"),
    pytest.param(HUDI_0, "cow", marks=pytest.mark.hudi_full),
    pytest.param(HUDI_1, "cow", marks=pytest.mark.hudi_full),
    pytest.param(HUDI_0, "mor", marks=pytest.mark.hudi_full),
]


@pytest.mark.parametrize(("version", "kind"), CASES)
def test_apache_hudi_writes_by_our_record_index(spark, apache_hudi, tmp_path, version, kind):
    register(spark)
    judge = apache_hudi(version)
    path = str(tmp_path / "t")
    config = our_config(version, kind)
    moving = our_config(
        version,
        kind,
        **{
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.simple.index.update.partition.path": "true",
        },
    )
    our_write(spark, path, rows(range(0, 60), 1), config)
    our_write(spark, path, rows(range(50, 80), 2), config)
    our_write(spark, path, rows(range(0, 6), 0), config, delete=True)
    moved = frozenset(range(20, 26))
    our_write(spark, path, rows(moved, 3, moved), moving)
    meta = HoodieTableMetaClient.open(path)
    assert_record_index_whole(spark, meta, "our writes")
    before = table_locations(spark, meta)
    assert {before[f"{i}"][0] for i in moved} == {"ab"[(i + 1) % 2] for i in moved}
    # Apache Hudi reads it: a key's filter skips by our record index (every other file group
    # pruned; a key it lacked or misplaced would read nothing)
    skipping = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true",
                "hoodie.metadata.record.index.enable": "true"}  # fmt: skip
    for where, want in (("id = 33", ["33"]), ("id IN (7, 22, 999)", ["22", "7"])):
        assert sorted(judge.read(path, where=where, **skipping)[KEY].to_pylist()) == want

    # Apache Hudi tags by our record index: updates (moved keys among them), inserts, deletes
    updated = [*range(10, 30), *range(70, 80)]
    judge.write(path, rows([*updated, *range(100, 110)], 4, moved),
                hudi_options(version, kind, **{"hoodie.index.type": "RECORD_INDEX"}))  # fmt: skip
    judge.write(
        path,
        rows(range(40, 45), 5),
        hudi_options(version, kind, "delete", **{"hoodie.index.type": "RECORD_INDEX"}),
    )
    theirs = judge.read(path)
    keys = theirs[KEY].to_pylist()
    assert len(keys) == len(set(keys)), "Apache Hudi wrote a key twice: our index missed it"
    expected = {str(i) for i in range(6, 110) if not 40 <= i < 45 and not 80 <= i < 100}
    assert set(keys) == expected
    names = dict(zip(keys, theirs["name"].to_pylist(), strict=True))
    assert all(names[str(i)] == f"n{i}-4" for i in updated)
    after = table_locations(spark, HoodieTableMetaClient.open(path))
    # each update went to the file group our index named
    assert all(after[str(i)] == before[str(i)] for i in updated), "updates moved"
    assert_same_as_apache_hudi(f"{version} {kind}", read_ours(spark, path), theirs, KEY)
    assert_record_index_whole(spark, HoodieTableMetaClient.open(path), "Apache Hudi's writes")

    our_write(spark, path, rows([*range(100, 105), *range(200, 205)], 6), config)
    our_write(spark, path, rows(range(60, 65), 0), config, delete=True)
    meta = HoodieTableMetaClient.open(path)
    assert_record_index_whole(spark, meta, "our writes on top")
    assert_same_as_apache_hudi(f"{version} {kind} after", read_ours(spark, path),
                               judge.read(path), KEY)  # fmt: skip
    assert "record_index" in props.metadata_partitions(meta.properties.extra)
    assert len(record_index_locations(meta)) == len(expected)  # 5 keys in, 5 out

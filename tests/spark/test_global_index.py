"""GLOBAL_SIMPLE and GLOBAL_BLOOM: a record key is unique across the table, whatever its
partition value.

Each case on copy-on-write and merge-on-read, table versions 6 and 8; hudi-rs reads the same.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import pyarrow as pa
import pytest
from _spark_helpers import all_files, id_dt_ts_config, snapshot

from hoodie import HoodieTable, WriteConfig
from hoodie.exceptions import DuplicateRecordKeyError, RecordKeyExistsError
from hoodie.logformat import BlockType, read_log_file
from hoodie.merge import merge_mode_of

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
A, B, C = "2024-01-01", "2024-01-02", "2024-01-03"
LAYOUTS = [
    pytest.param(table_type, version, id=f"{table_type.split('_')[0].lower()}-v{version}")
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ")
    for version in (6, 8)
]
# The behaviour of both global indexes: every layout with GLOBAL_SIMPLE (`make test` runs two,
# `make test-full` the others), two with GLOBAL_BLOOM (its lookup reads footers and bloom filters
# first; what it finds is the same).
SAMPLED = ("cow-v6", "mor-v8")
INDEXED = [
    *(
        pytest.param(
            *p.values, "GLOBAL_SIMPLE", id=p.id, marks=() if p.id in SAMPLED else pytest.mark.full
        )
        for p in LAYOUTS
    ),
    pytest.param("COPY_ON_WRITE", 6, "GLOBAL_BLOOM", id="cow-v6-bloom"),
    pytest.param("MERGE_ON_READ", 8, "GLOBAL_BLOOM", id="mor-v8-bloom"),
]
# The other cases: each layout once, both indexes on both table types (`make test` runs
# the GLOBAL_SIMPLE pair; INDEXED's cases run GLOBAL_BLOOM there).
COVERED = [
    pytest.param("COPY_ON_WRITE", 6, "GLOBAL_SIMPLE", id="cow-v6"),
    pytest.param("MERGE_ON_READ", 8, "GLOBAL_SIMPLE", id="mor-v8"),
    pytest.param("COPY_ON_WRITE", 8, "GLOBAL_BLOOM", id="cow-v8-bloom", marks=pytest.mark.full),
    pytest.param("MERGE_ON_READ", 6, "GLOBAL_BLOOM", id="mor-v6-bloom", marks=pytest.mark.full),
]
FLAG = {"GLOBAL_SIMPLE": "hoodie.simple.index.update.partition.path",
        "GLOBAL_BLOOM": "hoodie.bloom.index.update.partition.path"}  # fmt: skip


def global_config(
    table_type: str, version: int, index: str = "GLOBAL_SIMPLE", **options: str
) -> WriteConfig:
    return id_dt_ts_config(
        "global",
        table_type,
        {
            "hoodie.index.type": index,
            "hoodie.write.table.version": str(version),
            "hoodie.compact.inline": "false",
            **options,
        },
    )


def rows_of(spark, data) -> object:
    return spark.createDataFrame(data, SCHEMA)


def view(table: HoodieTable, spark) -> dict[int, tuple[str, str, str, int]]:
    """key -> (name, dt column, _hoodie_partition_path, ts); one row per key (`snapshot`)."""
    return {
        int(k): (r["name"], r["dt"], r["_hoodie_partition_path"], r["ts"])
        for k, r in snapshot(table, spark).items()
    }


def hudi_rs_rows(path: str) -> dict[int, tuple[str, str]]:
    """What hudi-rs reads: key -> (name, _hoodie_partition_path), one row per key."""
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read()).to_pylist()
    assert len({r["id"] for r in theirs}) == len(theirs), "hudi-rs reads a key twice"
    return {r["id"]: (r["name"], r["_hoodie_partition_path"]) for r in theirs}


def data_files_in(path: str, partition: str) -> list[str]:
    return sorted(
        f for f in all_files(path) if f.startswith(partition + os.sep) and ".hoodie" not in f
    )


@pytest.fixture(scope="module")
def first_write(spark, tmp_path_factory) -> Callable[[str, WriteConfig], HoodieTable]:
    """`first_write(path, cfg)`: the table at `path` after the cases' first write (keys 1 and
    2 in A, 3 in B) by `cfg`. The module's cases share a few configs: each config's first
    write is made once, and every case gets a copy of it."""
    written: dict[str, str] = {}

    def write(path: str, cfg: WriteConfig) -> HoodieTable:
        template = written.get(repr(cfg))
        if template is None:
            template = str(tmp_path_factory.mktemp("first-write") / "t")
            rows = [(1, "one", A, 1, False), (2, "two", A, 1, False), (3, "three", B, 1, False)]
            HoodieTable.for_write(template, cfg).upsert(rows_of(spark, rows), cfg)
            written[repr(cfg)] = template
        shutil.copytree(template, path)
        return HoodieTable.for_write(path, cfg)

    return write


@pytest.mark.parametrize(("table_type", "version", "index"), INDEXED)
def test_a_record_whose_partition_changed_moves(
    spark, tmp_path, first_write, table_type, version, index
):
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version, index)
    table = first_write(path, cfg)
    before = set(table.timeline().completed.instants)
    a_files = data_files_in(path, A)
    table.upsert(rows_of(spark, [(1, "one-moved", B, 2, False)]), cfg)
    # One commit: deleted from A, inserted into B.
    assert len(set(table.timeline().completed.instants) - before) == 1
    assert view(table, spark) == {
        1: ("one-moved", B, B, 2), 2: ("two", A, A, 1), 3: ("three", B, B, 1),
    }  # fmt: skip
    assert hudi_rs_rows(path) == {1: ("one-moved", B), 2: ("two", A), 3: ("three", B)}
    new_in_a = sorted(set(data_files_in(path, A)) - set(a_files))
    assert len(new_in_a) == 1, new_in_a
    if table_type == "MERGE_ON_READ":
        # The old group got a delete block in a new log file, as Hudi writes the move.
        assert ".log." in new_in_a[0]
        blocks = [b.block_type for b in read_log_file(os.path.join(path, new_in_a[0]))]
        assert blocks == [BlockType.DELETE]
        table.services.compact(spark, cfg)
        assert view(table, spark)[1] == ("one-moved", B, B, 2)
        assert len(view(table, spark)) == 3
    else:
        assert new_in_a[0].endswith(".parquet")  # the old group rewritten without the key


@pytest.mark.parametrize(("table_type", "version", "index"), COVERED)
def test_update_partition_path_false_updates_in_place(
    spark, tmp_path, first_write, table_type, version, index
):
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version, index, **{FLAG[index]: "false"})
    table = first_write(path, cfg)
    table.upsert(rows_of(spark, [(1, "one-v2", B, 2, False), (9, "new", C, 2, False)]), cfg)
    # Updated where it is: its partition path stays A, and so does its dt column (the one value
    # every reader shows: Apache Hudi's takes it from the folder).
    assert view(table, spark) == {
        1: ("one-v2", A, A, 2), 2: ("two", A, A, 1), 3: ("three", B, B, 1), 9: ("new", C, C, 2),
    }  # fmt: skip
    assert data_files_in(path, B)  # (B was not touched for key 1)
    assert hudi_rs_rows(path)[1] == ("one-v2", A)
    # Partition pruning decides by the folder: a filter on dt finds the row by its dt.
    found = table.read(spark, filters=[("dt", "=", A)]).collect()
    assert sorted((r["id"], r["dt"]) for r in found) == [(1, A), (2, A)]


def test_in_place_updates_read_their_partition_values_back_from_encoded_paths(
    spark, tmp_path, first_write
):
    """Hive-style, urlencoded partition folders (`dt=a%2Fb%3Ac`) and the default partition
    (a null dt) give the stored partition's values back to a record updated in place."""
    path = str(tmp_path / "t")
    odd = "a/b:c"
    cfg = global_config("COPY_ON_WRITE", 8, **{
        FLAG["GLOBAL_SIMPLE"]: "false",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.urlencode": "true",
    })  # fmt: skip
    table = HoodieTable.for_write(path, cfg)
    table.upsert(rows_of(spark, [(1, "one", odd, 1, False), (2, "two", None, 1, False)]), cfg)
    table.upsert(rows_of(spark, [(1, "one-v2", A, 2, False), (2, "two-v2", B, 2, False)]), cfg)
    assert view(table, spark) == {
        1: ("one-v2", odd, "dt=a%2Fb%3Ac", 2),
        2: ("two-v2", None, "dt=__HIVE_DEFAULT_PARTITION__", 2),
    }  # fmt: skip


@pytest.mark.parametrize(("table_type", "version", "index"), COVERED)
def test_a_stale_record_does_not_move(spark, tmp_path, first_write, table_type, version, index):
    """A record whose ordering value is below the stored one's loses the merge: the stored
    version stays where it is (Hudi merges the incoming record with the stored one)."""
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version, index)
    table = first_write(path, cfg)
    table.upsert(rows_of(spark, [(1, "one-v5", A, 5, False)]), cfg)
    table.upsert(rows_of(spark, [(1, "stale", B, 4, False), (2, "tie", B, 1, False)]), cfg)
    expected = {1: ("one-v5", A, A, 5), 2: ("tie", B, B, 1), 3: ("three", B, B, 1)}
    if not merge_mode_of(table.properties).by_event_time:
        # A table merging by commit time (version 6, Hudi 0.x's default payload): the later
        # write wins, and moves.
        expected[1] = ("stale", B, B, 4)
    assert view(table, spark) == expected
    assert hudi_rs_rows(path) == {k: (v[0], v[2]) for k, v in expected.items()}


@pytest.mark.parametrize(("table_type", "version", "index"), INDEXED)
def test_deletes_find_the_record_anywhere(spark, tmp_path, first_write, table_type, version, index):
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version, index)
    table = first_write(path, cfg)
    # Hudi's delete operation, naming the wrong partition.
    table.delete(rows_of(spark, [(1, None, C, 0, False)]), cfg)
    # A _hoodie_is_deleted row in an upsert, naming the wrong partition.
    table.upsert(rows_of(spark, [(3, None, A, 2, True)]), cfg)
    assert view(table, spark) == {2: ("two", A, A, 1)}
    assert hudi_rs_rows(path) == {2: ("two", A)}
    assert not data_files_in(path, C)  # nothing written where the delete pointed


@pytest.mark.parametrize(("table_type", "version", "index"), COVERED)
def test_one_key_twice_in_a_batch_keeps_one_record(spark, tmp_path, table_type, version, index):
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version, index)
    table = HoodieTable.for_write(path, cfg)
    # A first write (a bulk insert): one record per key, the larger ordering value.
    table.upsert(rows_of(spark, [(1, "a", A, 1, False), (1, "b", B, 2, False),
                                 (2, "c", A, 3, False), (2, "d", C, 2, False)]), cfg)  # fmt: skip
    assert view(table, spark) == {1: ("b", B, B, 2), 2: ("c", A, A, 3)}
    # Then an upsert: a stored key and a new key, each twice.
    table.upsert(rows_of(spark, [(1, "e", C, 3, False), (1, "f", A, 4, False),
                                 (5, "g", A, 1, False), (5, "h", B, 2, False)]), cfg)  # fmt: skip
    assert view(table, spark) == {1: ("f", A, A, 4), 2: ("c", A, A, 3), 5: ("h", B, B, 2)}
    assert hudi_rs_rows(path) == {1: ("f", A), 2: ("c", A), 5: ("h", B)}


def test_one_key_twice_without_a_precombine_field_is_refused(spark, tmp_path):
    cfg = WriteConfig.build("global", record_key="id", partition_path="dt",
                            options={"hoodie.index.type": "GLOBAL_SIMPLE"})  # fmt: skip
    table = HoodieTable.for_write(str(tmp_path / "t"), cfg)
    with pytest.raises(DuplicateRecordKeyError, match="appears more than once"):
        table.upsert(rows_of(spark, [(1, "a", A, 1, False), (1, "b", B, 2, False)]), cfg)


@pytest.mark.parametrize(("table_type", "version"), LAYOUTS[:2])
def test_an_insert_of_a_key_stored_elsewhere(spark, tmp_path, first_write, table_type, version):
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version)
    table = first_write(path, cfg)
    insert = global_config(table_type, version, **{"hoodie.datasource.write.operation": "insert"})
    with pytest.raises(RecordKeyExistsError, match="'1' in partition '2024-01-01'"):
        table.write(rows_of(spark, [(1, "x", B, 2, False), (7, "y", B, 2, False)]), insert)
    drop = global_config(
        table_type,
        version,
        **{
            "hoodie.datasource.write.operation": "insert",
            "hoodie.datasource.insert.dup.policy": "drop",
        },
    )
    table.write(rows_of(spark, [(1, "x", B, 2, False), (7, "y", B, 2, False)]), drop)
    assert view(table, spark)[1] == ("one", A, A, 1)
    assert view(table, spark)[7] == ("y", B, B, 2)


@pytest.mark.parametrize(("table_type", "version"), LAYOUTS[:2])
def test_a_key_in_two_partitions_is_refused(spark, tmp_path, first_write, table_type, version):
    """A table whose SIMPLE writes left one key in two partitions cannot be tagged by key
    alone: the write names the key, both partitions and the option."""
    path = str(tmp_path / "t")
    simple = id_dt_ts_config("global", table_type, {"hoodie.write.table.version": str(version)})
    table = first_write(path, simple)
    table.upsert(rows_of(spark, [(1, "one-in-b", B, 2, False)]), simple)
    cfg = global_config(table_type, version)
    with pytest.raises(DuplicateRecordKeyError, match=r"'1' \(in '2024-01-01', '2024-01-02'\)"
                       r".*hoodie.index.type=GLOBAL_SIMPLE"):  # fmt: skip
        table.upsert(rows_of(spark, [(1, "x", C, 3, False)]), cfg)
    # Keys stored once are still found: a table without duplicates switches freely.
    other = str(tmp_path / "u")
    clean = first_write(other, simple)
    clean.upsert(rows_of(spark, [(2, "two-moved", C, 2, False)]), cfg)
    assert view(clean, spark)[2] == ("two-moved", C, C, 2) and len(view(clean, spark)) == 3


# (`make test` runs merge-on-read v8; copy-on-write v6 is `full`)
@pytest.mark.parametrize(
    ("table_type", "version"),
    [pytest.param(*LAYOUTS[0].values, id=LAYOUTS[0].id, marks=pytest.mark.full), LAYOUTS[3]],
)
def test_moves_there_and_back(spark, tmp_path, first_write, table_type, version):
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version)
    table = first_write(path, cfg)
    for ts, dt in ((2, C), (3, A), (4, B)):
        table.upsert(rows_of(spark, [(1, f"at-{dt}", dt, ts, False)]), cfg)
        assert view(table, spark)[1] == (f"at-{dt}", dt, dt, ts)
        assert len(view(table, spark)) == 3
    assert hudi_rs_rows(path)[1] == (f"at-{B}", B)
    metadata = table.commit_metadata(table.timeline().completed.instants[-1])
    assert (metadata.extra_metadata or {})["hoodie.index.type"] == "GLOBAL_SIMPLE"


@pytest.mark.parametrize(("table_type", "version"), LAYOUTS[2:])
def test_a_move_and_a_delete_from_one_file_group(spark, tmp_path, first_write, table_type, version):
    """One delete block holds a moved key's old copy (no ordering value) and a
    `_hoodie_is_deleted` row (its ts): hudi-rs reads it (it refuses a block mixing Hudi's
    Integer 0 with long values, which Apache Hudi writes there)."""
    path = str(tmp_path / "t")
    cfg = global_config(table_type, version)
    table = first_write(path, cfg)
    table.upsert(rows_of(spark, [(1, "one-moved", B, 2, False), (2, None, C, 2, True)]), cfg)
    assert view(table, spark) == {1: ("one-moved", B, B, 2), 3: ("three", B, B, 1)}
    assert hudi_rs_rows(path) == {1: ("one-moved", B), 3: ("three", B)}

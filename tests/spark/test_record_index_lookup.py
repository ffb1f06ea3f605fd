"""Record index lookups in Spark tasks (`hoodie.index.record_index.locate_in_record_index`).

- The sample tables Apache Hudi wrote with a record index (hudi-rs's version 8 trips table,
  Apache Hudi 0.15's version 6 table, Apache Hudi 1.2's version 8 table after a rollback):
  every live key is found at the partition and file group that hold it, as the data files
  say (`live_keys`), and nothing else.
- Tables of ours given a record index of a few thousand keys by hand (`add_record_index`:
  several file groups, small HFile blocks; on version 6 log files of moves and deletes on
  top), keys hostile included (quotes, slashes, separators, non-ASCII, characters beyond the
  BMP, whose Java hash runs over surrogate pairs): the lookup returns each live key's
  location, none for deleted or unknown keys, whatever partitioning of the input.
- The driver's `TableMetadata.lookup` reads the base files by ranges: one key costs a few
  blocks of a file many times larger.
"""

from __future__ import annotations

import random
import uuid

import pytest
from counting_io import CountingFileIO
from record_index_tables import add_record_index, live_keys
from sample_tables import unzip

from hoodie import HoodieTable, WriteConfig
from hoodie.index.record_index import RecordIndexLookup, locate_in_record_index
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import file_group_index
from hoodie.table_metadata import TableMetadata

pytestmark = pytest.mark.spark

FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"
SAMPLES = {
    "v8-trips": FIXTURES / "hudi-rs/quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "v6-hudi-0.15": FIXTURES / "mdt-tables/hudi-0.15.0-mor-v6.zip",
    "v8-hudi-1.2-rollback": FIXTURES / "mdt-tables/hudi-1.2.0-mor-v8-rollback.zip",
}
HOSTILE = [
    "it's", 'say "hi"', "a/b/../c", "back\\slash", "tab\there", "line\nbreak", "ça", "東京",
    "emoji 😀", "𝄞 clef", "dt=2024/01/01", "%2F", "", " ", "0", "-1", "null", "NULL",
    "\u0000nul", "x" * 3000, "polygenelubricants",  # (Java hash Integer.MIN_VALUE)
]  # fmt: skip


def located(spark, metadata: TableMetadata, keys: list[str], partitions: int = 3) -> dict:
    lookup = RecordIndexLookup.of(metadata)
    assert lookup is not None
    frame = spark.createDataFrame([(k,) for k in keys], "k string").repartition(partitions)
    rows = locate_in_record_index(frame, lookup, "k").toArrow().to_pylist()
    out = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], r["__hoodie_location"])
           for r in rows}  # fmt: skip
    assert len(out) == len(rows), "a key found twice"
    return out


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_apache_hudis_sample_record_indexes(spark, tmp_path, name):
    root = unzip(SAMPLES[name], tmp_path)
    meta = HoodieTableMetaClient.open(str(root))
    metadata = TableMetadata.open(meta)
    assert metadata is not None
    expected = live_keys(meta)
    assert expected
    keys = [*expected, "no-such-key", *HOSTILE]
    assert located(spark, metadata, keys) == expected
    assert located(spark, metadata, [*expected][:1], 1) == dict([*expected.items()][:1])


def ours(spark, tmp_path, version: int) -> str:
    """A small table of ours with a metadata table (its record index comes by hand)."""
    path = str(tmp_path / f"t{version}")
    config = WriteConfig.build("ri", record_key="id", partition_path="dt",
                               options={"hoodie.write.table.version": str(version),
                                        "hoodie.metadata.enable": "true"})  # fmt: skip
    frame = spark.createDataFrame([(1, "a"), (2, "b")], "id int, dt string")
    HoodieTable.for_write(path, config).upsert(frame)
    return path


def synthetic(count: int, seed: int) -> dict[str, tuple[str, str]]:
    """`count` keys (HOSTILE among them) at random partitions and file groups."""
    rng = random.Random(seed)
    groups = [(p, f"{uuid.UUID(int=rng.getrandbits(128))}-0") for p in ("a", "b/c", "")]
    groups += [("ü/x=1", "not-a-uuid-file-id")]  # stored with file id encoding 1
    keys = {f"{rng.getrandbits(40):x}-{i}" for i in range(count)} | set(HOSTILE)
    return {key: rng.choice(groups) for key in sorted(keys)}


@pytest.mark.parametrize("version", [6, 8])
def test_a_record_index_of_ours_with_hostile_keys(spark, tmp_path, version):
    path = ours(spark, tmp_path, version)
    placed = synthetic(3000, version)
    keys = sorted(placed)
    moved, deleted = {}, set()
    if version == 6:  # log files of moves and deletes on top of the base files
        moved = {k: ("b/c", placed[k][1]) for k in keys[::7]}
        deleted = set(keys[3::11]) | {"it's", "東京"}
    add_record_index(path, placed, 4, block_size=2048, logged=moved, deleted=deleted)
    expected = {**placed, **moved}
    for key in deleted:
        expected.pop(key)
    metadata = TableMetadata.open(HoodieTableMetaClient.open(path))
    assert metadata is not None
    assert {file_group_index(k, 4) for k in expected} == {0, 1, 2, 3}
    wanted = [*keys, *keys[:50], "no-such-key", "ça!", "😀"]  # repeats and unknowns
    assert located(spark, metadata, wanted) == expected
    some = keys[::97]
    assert located(spark, metadata, some, 1) == {k: expected[k] for k in some if k in expected}
    driver = metadata.read_record_index(wanted)
    assert {k: (loc.partition_path, loc.file_id) for k, loc in driver.items()} == expected


def test_the_driver_lookup_reads_the_blocks_of_its_keys(spark, tmp_path):
    path = ours(spark, tmp_path, 8)
    placed = synthetic(60_000, 3)
    add_record_index(path, placed, 2, block_size=4096)
    storage = CountingFileIO(path)
    metadata = TableMetadata.open(HoodieTableMetaClient.load(storage))
    assert metadata is not None
    bases = {s.base_file.relative_path: s.base_file.size
             for s in metadata.file_slices("record_index") if s.base_file}  # fmt: skip
    assert len(bases) == 2 and min(bases.values()) > 300_000
    storage.reset()
    key = sorted(placed)[1234]
    found = metadata.read_record_index([key])
    assert (found[key].partition_path, found[key].file_id) == placed[key]
    hfile_bytes = sum(n for rel, _, n in storage.ranges if rel.endswith(".hfile"))
    assert 0 < hfile_bytes < 100_000  # the tail, the index, one block: not the file
    assert not [rel for rel, _ in storage.whole if rel.endswith(".hfile")]


def test_entries_of_file_groups_the_write_does_not_see_are_left_out(spark, tmp_path):
    path = ours(spark, tmp_path, 6)
    placed = synthetic(300, 5)
    add_record_index(path, placed, 3)
    metadata = TableMetadata.open(HoodieTableMetaClient.open(path))
    assert metadata is not None
    seen = sorted({place for place in placed.values()})[:2]
    live = {file_id: partition for partition, file_id in seen}
    lookup = RecordIndexLookup.of(metadata, live)
    assert lookup is not None and lookup.file_groups == 3
    frame = spark.createDataFrame([(k,) for k in placed], "_hoodie_record_key string")
    rows = locate_in_record_index(frame, lookup).toArrow().to_pylist()
    got = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], r["__hoodie_location"])
           for r in rows}  # fmt: skip
    assert got == {k: place for k, place in placed.items() if place in seen}
    # a file id seen in another partition than the entry says is no place either
    moved = {file_id: partition + "-elsewhere" for partition, file_id in seen}
    lookup = RecordIndexLookup.of(metadata, moved)
    assert lookup is not None and locate_in_record_index(frame, lookup).count() == 0

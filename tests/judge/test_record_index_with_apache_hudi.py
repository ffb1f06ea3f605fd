"""Our record index lookup (`locate_in_record_index`, in Spark tasks) on tables Apache Hudi wrote
with its record index, and our RECORD_INDEX writes tagged by it.

Apache Hudi 1.2 (table version 8) and 0.15 (table version 6) write a partitioned table with the
metadata table's record index on, in 4 file groups (`hoodie.metadata.record.index.min.filegroup
.count`, under 0.15's key, which 1.2 takes as an alias), `hoodie.index.type=RECORD_INDEX` and
`hoodie.record.index.update.partition.path=true`: inserts of string keys (hostile ones among
them: quotes, slashes, backslashes, separators, non-ASCII, characters beyond the BMP), updates,
deletes, records moving partitions, and enough delta commits that the metadata table compacts
(every 3). After each write our lookup of every live key, every deleted key and unknown keys
returns exactly the (key, partition, file id) of the rows Apache Hudi's reader returns
(`_hoodie_record_key`, `_hoodie_partition_path`, `_hoodie_file_name`), and nothing for the
others.

Then we write with RECORD_INDEX (an update in place, a move, a delete and an insert), tagged by
Apache Hudi's record index: Apache Hudi reads one row per key where our write put it. Our write
keeps the record index (a metadata table holding partitions we do not write, as 1.2's
`partition_stats`, is built again with those we do, the record index among them, sized by the
same min file group count as Apache Hudi's writes: 4 file groups again); Apache Hudi's next
write goes on from it, and our lookup agrees with its read again.

All `hudi_full` (`make test-hudi`): our lookup checked after every write, on both versions
and table types. `make test` reads Apache Hudi's record indexes in
tests/spark/test_record_index_lookup.py (tables it wrote, kept as fixtures) and has Apache Hudi
write by ours in tests/judge/test_hudi_uses_our_record_index.py.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, TABLE_TYPES, datasource_options

from hoodie import HoodieTable, WriteConfig
from hoodie.index.record_index import RecordIndexLookup, locate_in_record_index
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.naming import parse_base_file_name, parse_log_file_name
from hoodie.table_metadata import TableMetadata
from hoodie.timeline import Action

pytestmark = pytest.mark.spark

FULL = pytest.mark.hudi_full
# (Apache Hudi, table version, table type, whether our lookup is checked after every write)
CASES = [
    pytest.param(HUDI_1, 8, "mor", True, id="v8-mor", marks=FULL),
    pytest.param(HUDI_0, 6, "mor", True, id="v6-mor", marks=FULL),
    pytest.param(HUDI_1, 8, "cow", True, id="v8-cow", marks=FULL),
    pytest.param(HUDI_0, 6, "cow", True, id="v6-cow", marks=FULL),
]
MIN_FILE_GROUPS = "hoodie.metadata.record.index.min.filegroup.count"  # 1.2: an alternative key
RECORD_INDEX = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    MIN_FILE_GROUPS: "4",
    "hoodie.index.type": "RECORD_INDEX",
    "hoodie.record.index.update.partition.path": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
}
HOSTILE = [
    "it's", 'say "hi"', "a/b/../c", "back\\slash", "tab\there", "ça", "東京", "emoji 😀",
    "𝄞 clef", "dt=2024/01/01", "%2F", " ", "0", "-1", "null", "comma,key", "colon:key",
    "x" * 500, "polygenelubricants",
]  # fmt: skip
PARTITIONS = ("a", "b", "c")


def rows(keys: list[str], dts: list[str], ts: int) -> pa.Table:
    return pa.table({
        "id": pa.array(keys, pa.string()),
        "dt": pa.array(dts, pa.string()),
        "ts": pa.array([ts] * len(keys), pa.int64()),
        "name": pa.array([f"{k[:20]}@{ts}" for k in keys], pa.string()),
        "_hoodie_is_deleted": pa.array([False] * len(keys), pa.bool_()),  # (our deletes use it)
    })  # fmt: skip


def file_id_of(name: str) -> str:
    """The file group of a row's `_hoodie_file_name`: a base file's name, or (a merge-on-read
    row from a log record) the file id itself, as Apache Hudi writes it there."""
    parsed = parse_base_file_name(name) or parse_log_file_name(name)
    return parsed.file_id if parsed is not None else name


def theirs(judge, path: str) -> dict[str, tuple[str, str]]:
    """key -> (partition, file id) of every row Apache Hudi's reader returns."""
    read = judge.read(path, **{"hoodie.metadata.enable": "false"})
    keys = read.column("_hoodie_record_key").to_pylist()
    out = {
        key: (partition, file_id_of(name))
        for key, partition, name in zip(
            keys,
            read.column("_hoodie_partition_path").to_pylist(),
            read.column("_hoodie_file_name").to_pylist(),
        )
    }
    assert len(out) == len(keys), "Apache Hudi reads a key twice"
    return out


def ours(spark, path: str, keys: list[str]) -> dict[str, tuple[str, str]]:
    metadata = TableMetadata.open(HoodieTableMetaClient.open(path))
    assert metadata is not None
    lookup = RecordIndexLookup.of(metadata)
    assert lookup is not None and lookup.file_groups == 4
    frame = spark.createDataFrame([(k,) for k in keys], "k string").repartition(3)
    found = locate_in_record_index(frame, lookup, "k").toArrow().to_pylist()
    out = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], r["__hoodie_location"])
           for r in found}  # fmt: skip
    assert len(out) == len(found), "our lookup finds a key twice"
    return out


@pytest.mark.parametrize("hudi, version, kind, every_step", CASES)
def test_our_record_index_lookup_on_apache_hudis_tables(
    spark, apache_hudi, tmp_path, hudi, version, kind, every_step
):
    judge = apache_hudi(hudi)
    path = str(tmp_path / "t")
    options = {**datasource_options(f"ri_{kind}", kind), **RECORD_INDEX}
    if kind == "mor":
        options.update({"hoodie.compact.inline": "true",
                        "hoodie.compact.inline.max.delta.commits": "3"})  # fmt: skip
    if hudi == HUDI_1:
        options["hoodie.write.table.version"] = str(version)
    keys = [f"k{i:03d}" for i in range(120)] + HOSTILE
    place = {k: PARTITIONS[i % 3] for i, k in enumerate(keys)}
    gone: set[str] = set()

    def write(some: list[str], ts: int, operation: str = "upsert") -> None:
        data = rows(some, [place[k] for k in some], ts)
        judge.write(path, data, {**options, "hoodie.datasource.write.operation": operation})

    def check(step: str, last: bool = False) -> None:
        if not (every_step or last):
            return
        expected = theirs(judge, path)
        assert set(expected) == set(keys) - gone, step
        asked = [*keys, "no-such-key", "k1000", "東京!"]
        assert ours(spark, path, asked) == expected, step

    write(keys, 1, "insert")
    check("inserts")
    place.update({f"n{i}": "a" for i in range(10)})
    write(keys[::5] + [f"n{i}" for i in range(10)], 2)  # updates and inserts
    keys += [f"n{i}" for i in range(10)]
    check("upsert")
    deleted = keys[1::9] + ["it's", "東京"]
    write(deleted, 3, "delete")
    gone |= set(deleted)
    check("delete")
    movers = [k for k in {*keys[2::7], "emoji 😀", "a/b/../c", "𝄞 clef"} if k not in gone]
    for k in movers:
        place[k] = PARTITIONS[(PARTITIONS.index(place[k]) + 1) % 3]
    write(movers, 4)  # partition moves (update partition path on)
    check("moves")
    for ts in (5, 6) if every_step else ():
        write([k for k in keys[ts::11] if k not in gone], ts)
    check("more upserts, services", last=True)
    meta = HoodieTableMetaClient.open(path)
    metadata = TableMetadata.open(meta)
    assert metadata is not None
    assert any(i.action is Action.COMMIT for i in metadata.timeline.completed), "no MDT compaction"
    if kind == "mor":
        assert any(i.action is Action.COMMIT for i in meta.timeline().completed), "no compaction"

    # our RECORD_INDEX write, tagged by Apache Hudi's record index, sized as Apache Hudi's
    # writes size it: where our write builds the metadata table again (1.2's partition_stats),
    # the record index is estimated afresh from the min file group count (default 10), as
    # Apache Hudi's initialization estimates it, and Apache Hudi's next write goes on from it
    cfg = WriteConfig.build(
        f"ri_{kind}", record_key="id", partition_path="dt", precombine_field="ts",
        table_type=TABLE_TYPES[kind],
        options={"hoodie.index.type": "RECORD_INDEX", "hoodie.write.table.version": str(version),
                 "hoodie.record.index.update.partition.path": "true",
                 MIN_FILE_GROUPS: RECORD_INDEX[MIN_FILE_GROUPS],
                 "hoodie.compact.inline": "false"},
    )  # fmt: skip
    live = [k for k in keys if k not in gone]
    stay, move, drop = live[0], 'say "hi"', live[3]
    place[move] = PARTITIONS[(PARTITIONS.index(place[move]) + 1) % 3]
    batch = spark.createDataFrame(
        [(stay, place[stay], 7, "stayed", False), (move, place[move], 7, "moved", False),
         (drop, place[drop], 7, None, True), ("ours", "b", 7, "new", False)],
        "id string, dt string, ts bigint, name string, _hoodie_is_deleted boolean",
    )  # fmt: skip
    HoodieTable.for_write(path, cfg).upsert(batch, cfg)
    ours_built = TableMetadata.open(HoodieTableMetaClient.open(path))
    assert ours_built is not None
    lookup = RecordIndexLookup.of(ours_built)
    assert lookup is not None and lookup.file_groups == 4, "our write's record index"
    gone.add(drop)
    keys.append("ours")
    place["ours"] = "b"
    read = judge.read(path, **{"hoodie.metadata.enable": "false"}).to_pylist()
    by_key = {r["_hoodie_record_key"]: r for r in read}
    assert len(by_key) == len(read) and set(by_key) == set(keys) - gone
    assert {k: by_key[k]["_hoodie_partition_path"] for k in by_key} == {k: place[k] for k in by_key}
    assert (by_key[stay]["name"], by_key[move]["name"], by_key["ours"]["name"]) == (
        "stayed", "moved", "new"
    )  # fmt: skip
    # Apache Hudi's next write goes on from the record index our write built
    write([k for k in keys[4::13] if k not in gone], 8)
    check("Apache Hudi after our write", last=True)

"""Taking turns on one table with Apache Hudi (issue 39, item 4): Apache Hudi and we write the
same table one after the other, upserting, deleting, compacting and cleaning, and after every
turn our reader and Apache Hudi's give the same rows, and those are the rows the writes so far
mean (no key lost, none duplicated, none resurrected).

Apache Hudi writes with its defaults (the metadata table on; the SIMPLE index, its default in
0.15 and 1.2 alike) and with `hoodie.index.type=BLOOM`, whose lookups read the bloom filters and
key ranges in the footers of the base files we wrote (without them its write failed: "Error
checking bloom filter index"). Our writes keep its `files` partition (by default on version 8
tables and on version 6 tables that have one; one holding other partitions is built again with
`files` alone); Apache Hudi's next write goes on with it (or re-creates its other partitions),
and its reads through it must still see every file of ours.

Copy-on-write and merge-on-read; table version 6 (Apache Hudi 0.15, and 1.2 writing version 6)
and 8 (Apache Hudi 1.2 writing version 8).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_hudi import HUDI_0, HUDI_1, TABLE_TYPES, assert_same_as_apache_hudi, datasource_options
from listing_compare import assert_reads_list_alike
from rs_compare import read_ours

from hoodie import HoodieTable, WriteConfig
from hoodie.bloom_filter import (
    BLOOM_FILTER_FOOTER,
    BloomFilterSpec,
    bloom_filter_footer,
    java_min_max,
)
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.schema import MAX_KEY_FOOTER, MIN_KEY_FOOTER, RECORD_KEY

pytestmark = pytest.mark.hudi_full

SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
NAMES = ["id", "name", "dt", "ts", "_hoodie_is_deleted"]
# (Apache Hudi's version, the table version): 0.15 writes 6, 1.2 is told to write 6 or 8
SETUPS = {"v6-hudi0.15": (HUDI_0, 6), "v6-hudi1.2": (HUDI_1, 6), "v8-hudi1.2": (HUDI_1, 8)}
DEFAULT_INDEX: dict[str, str] = {}  # Apache Hudi's own default index
BLOOM = {"hoodie.index.type": "BLOOM"}


def row(key: int, name: str, ts: int, deleted: bool = False) -> tuple:
    """A record of key `key`; its partition follows from the key, so no key ever moves."""
    return (key, name, "xyz"[key % 3], ts, deleted)


def arrow(rows) -> pa.Table:
    kinds = [pa.int32(), pa.string(), pa.string(), pa.int64(), pa.bool_()]
    return pa.table({n: pa.array(v, k) for n, k, v in zip(NAMES, kinds, zip(*rows))})


@dataclass
class Turns:
    """One table both write, the rows its writes so far mean, and the judge."""

    spark: object
    judge: object
    path: str
    kind: str
    table_version: int
    expected: dict[int, tuple] = field(default_factory=dict)
    turn: int = 0

    @property
    def name(self) -> str:
        return f"turns_{self.kind}_{self.table_version}"

    def hudi_options(self, **more: str) -> dict[str, str]:
        options = datasource_options(self.name, self.kind)
        if self.judge.version == HUDI_1:
            options["hoodie.write.table.version"] = str(self.table_version)
        return {**options, **more}

    def our_config(self, **more: str) -> WriteConfig:
        options = {"hoodie.write.table.version": str(self.table_version), **more}
        return WriteConfig.build(
            self.name, record_key="id", partition_path="dt", precombine_field="ts",
            table_type=TABLE_TYPES[self.kind], options=options,
        )  # fmt: skip

    def remember(self, rows, deletes: bool = False) -> None:
        for record in rows:
            if deletes or record[4]:
                self.expected.pop(record[0], None)
            else:
                self.expected[record[0]] = record[:4]

    def we_upsert(self, rows, index: dict[str, str] | None = None) -> None:
        cfg = self.our_config(**(index or {}))
        HoodieTable.for_write(self.path, cfg).upsert(self.spark.createDataFrame(rows, SCHEMA), cfg)
        self.remember(rows)
        self.check(f"we upserted ({index or 'SIMPLE'})")
        # We keep a metadata table of `files` only (built again if Apache Hudi's has others),
        # by default on version 8 and on version 6 tables that have one; its listing is
        # storage's.
        listed = self.metadata_partitions()
        assert listed in ("", "files"), f"our write leaves metadata partitions {listed!r}"
        if listed:
            assert_reads_list_alike(HoodieTableMetaClient.open(self.path), "we upserted")

    def they_write(self, rows, index: dict[str, str], operation: str = "upsert", **more) -> None:
        options = self.hudi_options(**index, **more)
        options["hoodie.datasource.write.operation"] = operation
        self.judge.write(self.path, arrow(rows), options)
        self.remember(rows, deletes=operation == "delete")
        self.check(f"Apache Hudi {operation} ({index or 'default index'})")

    def they_compact(self) -> None:
        # its default schedules a compaction only after 5 delta commits: here after any
        self.judge.sql(
            f"CALL run_compaction(op => 'scheduleAndExecute', path => '{self.path}', "
            "options => 'hoodie.compact.inline.max.delta.commits=1')"
        )
        assert self.completed("commit"), "no compaction completed"
        self.check("Apache Hudi compacted")

    def completed(self, action: str) -> list[str]:
        """The data table's completed instants of `action` (not its metadata table's)."""
        timeline = Path(self.path, ".hoodie")
        return [p.name for p in timeline.rglob(f"*.{action}") if "metadata" not in p.parts]

    def metadata_partitions(self) -> str:
        """`hoodie.table.metadata.partitions` as stored: the metadata table's, if any."""
        text = Path(self.path, ".hoodie", "hoodie.properties").read_text()
        found = [line.split("=", 1)[1] for line in text.splitlines()
                 if line.startswith("hoodie.table.metadata.partitions=")]  # fmt: skip
        return found[0] if found else ""

    def check(self, what: str) -> None:
        """Both readers give the expected rows; read-optimized ones agree for merge-on-read."""
        self.turn += 1
        label = f"turn {self.turn}, {what}"
        queries = {
            "snapshot": {},
            # Apache Hudi's reader through the metadata table (1.x lists files by it anyway)
            "snapshot (metadata table)": {"hoodie.metadata.enable": "true"},
        }
        if self.kind == "mor":
            queries["read_optimized"] = {"hoodie.datasource.query.type": "read_optimized"}
        for query, options in queries.items():
            theirs = self.judge.read(self.path, **options)
            ours = read_ours(
                self.spark, self.path,
                **{k: v for k, v in options.items() if k != "hoodie.metadata.enable"},
            )  # fmt: skip
            assert_same_as_apache_hudi(f"{label}: {query}", ours, theirs, "_hoodie_record_key")
            if query != "read_optimized":
                got = sorted(zip(*(theirs.column(n).to_pylist() for n in NAMES[:4])))
                assert got == sorted(self.expected.values()), f"{label}: {query}"


def start(spark, apache_hudi, tmp_path, kind: str, setup: str) -> Turns:
    version, table_version = SETUPS[setup]
    path = str(tmp_path / kind)
    return Turns(spark, apache_hudi(version), path, kind, table_version)


@pytest.mark.parametrize("kind", sorted(TABLE_TYPES))
@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_apache_hudi_starts(spark, apache_hudi, tmp_path, kind, setup):
    """Apache Hudi creates and writes (its metadata table on); we upsert; it upserts with its
    default index and with BLOOM (over the base files we wrote) and compacts; we upsert; it
    upserts again; both read alike after each turn."""
    turns = start(spark, apache_hudi, tmp_path, kind, setup)
    turns.they_write([row(k, f"a{k}", 1) for k in range(1, 13)], DEFAULT_INDEX)
    assert turns.metadata_partitions(), "Apache Hudi wrote no metadata table"
    turns.we_upsert([row(1, "b1", 2), row(2, "b2", 2, True), row(3, "b3", 2), row(13, "b13", 2),
                     row(14, "b14", 2)])  # fmt: skip
    turns.they_write([row(13, "c13", 3), row(4, "c4", 3), row(15, "c15", 3),
                      row(14, "c14", 3, True)], DEFAULT_INDEX)  # fmt: skip
    assert turns.metadata_partitions(), "Apache Hudi did not re-create its metadata table"
    turns.they_write([row(13, "d13", 4), row(1, "d1", 4), row(2, "d2", 4), row(16, "d16", 4),
                      row(3, "d3", 4, True), row(5, "d5", 4)], BLOOM)  # fmt: skip
    if kind == "mor":
        turns.they_compact()
    turns.we_upsert([row(15, "e15", 5), row(16, "e16", 5), row(4, "e4", 5, True),
                     row(17, "e17", 5), row(6, "e6", 5)])  # fmt: skip
    turns.they_write([row(17, "f17", 6), row(6, "f6", 6), row(1, "f1", 6), row(18, "f18", 6),
                      row(7, "f7", 6, True)], BLOOM)  # fmt: skip


@pytest.mark.parametrize("kind", sorted(TABLE_TYPES))
@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_we_start(spark, apache_hudi, tmp_path, kind, setup):
    """We create and write; Apache Hudi upserts (default index), deletes (BLOOM) and cleans,
    compacts; we upsert; it upserts with BLOOM; both read alike after each turn."""
    turns = start(spark, apache_hudi, tmp_path, kind, setup)
    turns.we_upsert([row(k, f"a{k}", 1) for k in range(1, 13)])
    assert HoodieTable.open(turns.path).properties.table_version == turns.table_version
    turns.they_write([row(1, "b1", 2), row(2, "b2", 2), row(13, "b13", 2)], DEFAULT_INDEX)
    turns.they_write([row(3, "", 3), row(13, "", 3)], BLOOM, operation="delete",
                     **{"hoodie.clean.commits.retained": "1",
                        "hoodie.cleaner.commits.retained": "1"})  # fmt: skip
    if kind == "cow":  # the file versions our first write left are cleaned
        assert turns.completed("clean"), "Apache Hudi cleaned nothing"
    if kind == "mor":
        turns.they_compact()
    turns.we_upsert([row(2, "d2", 4), row(4, "d4", 4), row(14, "d14", 4), row(5, "d5", 4, True)])
    turns.they_write([row(14, "e14", 5), row(4, "e4", 5), row(15, "e15", 5), row(6, "e6", 5),
                      row(8, "e8", 5, True)], BLOOM)  # fmt: skip
    turns.we_upsert([row(15, "f15", 6), row(9, "f9", 6)])


@pytest.mark.parametrize("kind", sorted(TABLE_TYPES))
@pytest.mark.parametrize("setup", ["v6-hudi0.15", "v8-hudi1.2"])
def test_both_tag_with_bloom(spark, apache_hudi, tmp_path, kind, setup):
    """Apache Hudi bulk-inserts and upserts with its BLOOM index (several file groups per
    partition); we upsert with our BLOOM index, updating and deleting keys of its files and
    adding new ones; it upserts with BLOOM over our files; we upsert again: both read alike
    after each turn, and no key is duplicated (an update our lookup missed would be)."""
    turns = start(spark, apache_hudi, tmp_path, kind, setup)
    many = {"hoodie.bulkinsert.shuffle.parallelism": "2"}
    turns.they_write([row(k, f"a{k}", 1) for k in range(1, 31)], BLOOM, "bulk_insert", **many)
    turns.they_write([row(k, f"b{k}", 2) for k in (2, 5, 31, 32)], BLOOM)
    turns.we_upsert([row(1, "c1", 3), row(5, "c5", 3), row(9, "c9", 3, True), row(31, "c31", 3),
                     row(33, "c33", 3), row(34, "c34", 3, True)], BLOOM)  # fmt: skip
    if kind == "mor":
        turns.they_compact()
    turns.they_write([row(33, "d33", 4), row(1, "d1", 4), row(10, "d10", 4, True),
                      row(35, "d35", 4)], BLOOM)  # fmt: skip
    turns.we_upsert([row(33, "e33", 5), row(35, "e35", 5), row(2, "e2", 5, True),
                     row(36, "e36", 5)], BLOOM)  # fmt: skip


# Keys of every UTF-8 length and tail (1 to 3 bytes past a 4-byte block, bytes above 0x7f that
# Java's MurmurHash takes as negative), and characters Java orders otherwise than code points.
ODD_KEYS = ["é", "日本", "ab日", "\U0001f600", "x\U0001f600yz", "\uffff", "\U00010000", "k\x80"]


@pytest.mark.parametrize("version", [HUDI_0, HUDI_1])
def test_our_bloom_filters_are_apache_hudis(apache_hudi, tmp_path, version):
    """Apache Hudi's base files of 130,000 keys (past its filter's two vectors of 60,000, so
    the keys go round them) and of odd keys: our filter of each file's keys, in its order, is
    the bytes of Apache Hudi's, and our key range its."""
    judge = apache_hudi(version)
    keys = [f"{i}-{ODD_KEYS[i % len(ODD_KEYS)]}" if i % 3 else str(i) for i in range(130_000)]
    rows = pa.table({"id": keys, "ts": pa.array(range(len(keys)), pa.int64())})
    path = tmp_path / "bloom"
    options = {
        "hoodie.table.name": "bloom", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "bulk_insert",
        "hoodie.bulkinsert.shuffle.parallelism": "1",
        "hoodie.datasource.write.keygenerator.class":
            "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    }  # fmt: skip
    if version == HUDI_1:
        options["hoodie.write.table.version"] = "8"
    judge.write(path, rows, options)
    judge.write(path, pa.table({"id": ODD_KEYS, "ts": pa.array([1] * len(ODD_KEYS), pa.int64())}),
                {**options, "hoodie.datasource.write.operation": "insert"})  # fmt: skip
    files = sorted(path.glob("*.parquet"))
    assert files and max(pq.ParquetFile(f).metadata.num_rows for f in files) > 120_000
    for file in files:
        parquet = pq.ParquetFile(file)
        footer = parquet.metadata.metadata
        stored = parquet.read(columns=[RECORD_KEY]).column(0)
        ours = bloom_filter_footer(stored, BloomFilterSpec())
        theirs = base64.b64decode(footer[BLOOM_FILTER_FOOTER])
        assert base64.b64decode(ours[BLOOM_FILTER_FOOTER]) == theirs, file.name
        low, high = java_min_max(stored)
        assert (low.encode(), high.encode()) == (footer[MIN_KEY_FOOTER], footer[MAX_KEY_FOOTER])

"""We read what Apache Hudi writes: tables its Spark datasource writes during the test, read by
our `hoodie` data source and by `HoodieTable.read`, row for row against Apache Hudi's own read.

Each table (a `Case`) is written once per module by Apache Hudi (module-scoped fixture) in four
writes: an insert, an upsert (an update, a later write with a smaller ordering value, a soft
delete by `_hoodie_is_deleted`, an insert), a delete operation, and a write that evolves the
schema (a column added, `score` widened from int to bigint). Partition values carry a space,
`%`, `=`, unicode and `/`, with and without `partitionpath.urlencode`, hive-style or not.

It is then read in every query type: snapshot, read-optimized (merge-on-read), time travel to
every completed write before the last, incremental between consecutive writes (by requested
time on table version 6, by completion time on 8 and 9, as Apache Hudi 1.x reads them).

Tables: Apache Hudi's defaults (metadata table on, its default index, merge mode and payload)
on table versions 6 (Hudi 0.15; Hudi 1.2 with `hoodie.write.table.version=6`), 8 and 9 (Hudi
1.2's default), copy-on-write and merge-on-read with uncompacted logs and after inline
compaction; and with the BLOOM, record-level and BUCKET indexes, inline clustering, inline log
compaction and CDC.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import SimpleNamespace

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, assert_same_as_apache_hudi, datasource_options
from rs_compare import read_ours, rows_of

from hoodie import HoodieTable
from hoodie.partition_paths import escape_path_name
from hoodie.read.datasource import register

pytestmark = [pytest.mark.spark, pytest.mark.hudi_full]

KEY = "_hoodie_record_key"
QUERY_TYPE = "hoodie.datasource.query.type"
AS_OF = "as.of.instant"
BEGIN = "hoodie.datasource.read.begin.instanttime"
END = "hoodie.datasource.read.end.instanttime"

PARTS = ["a b", "50%", "k=v", "ü日", "x/y"]
COLUMNS = ["id", "name", "dt", "ts", "score", "_hoodie_is_deleted"]
TYPES_V1 = [pa.int32(), pa.string(), pa.string(), pa.int64(), pa.int32(), pa.bool_()]
# The schema evolves in the fourth write: `score` int -> bigint, `note` added.
COLUMNS_V2 = [*COLUMNS, "note"]
TYPES_V2 = [pa.int32(), pa.string(), pa.string(), pa.int64(), pa.int64(), pa.bool_(), pa.string()]

INSERT = [(i, f"n{i}", PARTS[i % len(PARTS)], 1, i * 10, False) for i in range(1, 11)]
UPSERT = [
    (1, "n1-upd", PARTS[1], 2, 11, False),  # an update
    (3, "n3-old", PARTS[3], 0, 33, False),  # later, but a smaller ordering value
    (2, "n2", PARTS[2], 2, 20, True),  # a soft delete
    (11, "n11", PARTS[0], 2, 110, False),  # an insert
]
DELETE = [(4, "n4", PARTS[4], 3, 40, False), (5, "n5", PARTS[0], 3, 50, False)]
EVOLVE = [
    (6, "n6-upd", PARTS[1], 4, 6_000_000_000, False, "widened"),
    (12, "n12", PARTS[2], 4, 120, False, "added"),
]


def arrow(rows, columns=COLUMNS, types=TYPES_V1) -> pa.Table:
    return pa.table(
        {name: pa.array(values, kind) for name, kind, values in zip(columns, types, zip(*rows))}
    )


WRITES = [
    ("upsert", arrow(INSERT)),
    ("upsert", arrow(UPSERT)),
    ("delete", arrow(DELETE)),
    ("upsert", arrow(EVOLVE, COLUMNS_V2, TYPES_V2)),
]


@dataclass(frozen=True)
class Case:
    name: str
    hudi: str  # the Apache Hudi version that writes it
    kind: str  # cow | mor
    table_version: int
    options: dict[str, str] = field(default_factory=dict)
    urlencode: bool = False
    hive_style: bool = False

    def write_options(self, operation: str) -> dict[str, str]:
        options = {
            **datasource_options(self.name, self.kind, operation),
            "hoodie.datasource.write.partitionpath.urlencode": str(self.urlencode).lower(),
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
        }
        if self.hudi == HUDI_1 and self.table_version != 9:
            options["hoodie.write.table.version"] = str(self.table_version)
        return {**options, **self.options}


BLOOM = {"hoodie.index.type": "BLOOM"}
RECORD_INDEX = {"hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"}
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
CLUSTERING = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "2"}
COMPACTION = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
LOG_COMPACTION = {
    "hoodie.log.compaction.inline": "true",
    "hoodie.log.compaction.blocks.threshold": "2",
}
CDC = {"hoodie.table.cdc.enabled": "true"}

CASES = [
    # Apache Hudi 1.2: its default table version 9, and 8 and 6
    Case("v9_cow", HUDI_1, "cow", 9),
    Case("v9_mor", HUDI_1, "mor", 9, urlencode=True),
    Case("v9_mor_compacted_cdc", HUDI_1, "mor", 9, {**COMPACTION, **CDC}, hive_style=True),
    Case("v8_cow_bloom", HUDI_1, "cow", 8, BLOOM, urlencode=True, hive_style=True),
    Case("v8_mor_compacted", HUDI_1, "mor", 8, COMPACTION),
    Case("v6_by_1_mor", HUDI_1, "mor", 6, hive_style=True),
    Case("v9_record_index", HUDI_1, "mor", 9, RECORD_INDEX),
    Case("v9_bucket", HUDI_1, "mor", 9, BUCKET, urlencode=True),
    Case("v9_clustering", HUDI_1, "cow", 9, CLUSTERING),
    Case("v9_log_compaction", HUDI_1, "mor", 9, LOG_COMPACTION),
    # Apache Hudi 0.15: table version 6
    Case("v6_cow", HUDI_0, "cow", 6),
    Case("v6_mor", HUDI_0, "mor", 6, urlencode=True, hive_style=True),
    Case("v6_mor_compacted_cdc", HUDI_0, "mor", 6, {**COMPACTION, **CDC}),
    Case("v6_bloom", HUDI_0, "mor", 6, BLOOM, hive_style=True),
    Case("v6_record_index", HUDI_0, "cow", 6, RECORD_INDEX),
    Case("v6_bucket", HUDI_0, "cow", 6, BUCKET, urlencode=True),
    # (not hive-style: Hudi 0.15's clustering rewrites `x/y` in folder `dt=x/y` as `x`)
    Case("v6_clustering", HUDI_0, "cow", 6, CLUSTERING),
    Case("v6_log_compaction", HUDI_0, "mor", 6, LOG_COMPACTION),
]


def assert_features_present(case: Case, path: str) -> None:
    """The table has what its case is about (a service that did not run would leave the case
    a plain table): the metadata table, compactions, clustering, log compactions, CDC logs,
    the record index, bucket file ids."""
    files = [
        os.path.relpath(os.path.join(folder, name), path)
        for folder, _, names in os.walk(path)
        for name in names
    ]
    meta = [f for f in files if f.startswith(".hoodie")]
    data = [f for f in files if not f.startswith(".hoodie")]
    assert any(f.startswith(".hoodie/metadata/") for f in meta), "no metadata table"
    timeline = [os.path.basename(f) for f in meta if not f.startswith(".hoodie/metadata/")]
    wanted = {
        "compact.inline": ".compaction.requested",
        "clustering.inline": (".clustering.requested", ".replacecommit.requested"),
        "log.compaction.inline": ".logcompaction.requested",
    }
    for option, suffixes in wanted.items():
        if f"hoodie.{option}" in case.options:
            assert any(n.endswith(suffixes) for n in timeline), (case.name, option, timeline)
    if CDC.keys() <= case.options.keys():
        assert any("-cdc" in f or f.endswith(".cdc") for f in data), (case.name, data)
    if RECORD_INDEX.keys() <= case.options.keys():
        assert any(f.startswith(".hoodie/metadata/record_index/") for f in meta), case.name
    if BUCKET.keys() <= case.options.keys():
        ids = {os.path.basename(f).split("_")[0].lstrip(".") for f in data if ".parquet" in f}
        assert ids and all(i.startswith("0000000") for i in ids), (case.name, ids)


@pytest.fixture(scope="module", params=CASES, ids=lambda case: case.name)
def table(request, spark, apache_hudi, tmp_path_factory):
    """One table Apache Hudi wrote (the four writes), with its completed writes."""
    case: Case = request.param
    judge = apache_hudi(case.hudi)
    path = str(tmp_path_factory.mktemp(case.name) / case.name)
    for operation, rows in WRITES:
        judge.write(path, rows, case.write_options(operation))
    assert_features_present(case, path)
    register(spark)
    ours = HoodieTable.open(path)
    assert ours.properties.table_version == case.table_version
    writes = ours.timeline().completed.write_timeline.instants
    return SimpleNamespace(case=case, judge=judge, path=path, spark=spark, writes=writes)


def differences(ours: pa.Table, theirs: pa.Table) -> list[str]:
    """The rows that differ, by record key and partition, each with the values that differ
    (what a failure shows: pytest's own diff of two lists of dicts cuts the values off)."""
    columns = [c for c in theirs.column_names if c in ours.column_names]

    def keyed(rows):
        return {(r[KEY], r["_hoodie_partition_path"]): r for r in rows_of(rows, columns, KEY)}

    got, expected = keyed(ours), keyed(theirs)
    found = []
    for key in sorted(set(got) | set(expected)):
        mine, hudi = got.get(key), expected.get(key)
        if mine is None or hudi is None:
            found.append(f"{key}: ours {mine}, Apache Hudi's {hudi}")
        elif mine != hudi:
            changed = {c: (mine[c], hudi[c]) for c in columns if mine[c] != hudi[c]}
            found.append(f"{key}: (ours, Apache Hudi's) {changed}")
    return found


def folder_parses(value: str) -> set[str]:
    """What Apache Hudi's readers may give for a partition value stored as `value`: they take
    the partition column from the partition folder's name rather than from the file, and
    parse it their own way (seen here: Hudi 1.2 and Hudi 0.15's copy-on-write and
    read-optimized reads parse a folder `k=v` that is not hive-style as hive-style, giving
    `v`; Hudi 1.2's incremental query of a urlencoded table gives the escaped name, `50%25`
    for `50%`, `x%2Fy` for `x/y`)."""
    return {value, value.rsplit("=", 1)[-1], escape_path_name(value)}


def as_apache_hudi_gives(case: Case, options: dict[str, str], ours, theirs) -> tuple:
    """Our rows and Apache Hudi's, each difference of its readers we keep on purpose taken
    out, after asserting it is exactly that difference:

    - the partition column: ours is the value the writer stored (asserted: one of the values
      written), Apache Hudi's a parse of the folder name (`folder_parses`); the comparison
      takes Apache Hudi's where it is one;
    - Hudi 1.2's incremental query of a merge-on-read table gives a log record of the range
      that lost to the stored row by ordering value (`n3-old`, `ts` 0 < 1), which its own
      snapshot does not show (nor its incremental query of a copy-on-write table, where the
      writer merged). We give the changes to the table's rows: what the range's writes made
      the snapshot at its end.
    """
    stored = ours.column("dt").to_pylist()
    assert set(stored) <= set(PARTS), f"{case.name}: partition values {set(stored) - set(PARTS)}"
    theirs_dt = {
        (r[KEY], r["_hoodie_partition_path"]): r["dt"]
        for r in theirs.select([KEY, "_hoodie_partition_path", "dt"]).to_pylist()
    }
    keys = zip(ours.column(KEY).to_pylist(), ours.column("_hoodie_partition_path").to_pylist())
    parsed = []
    for key, value in zip(keys, stored):
        given = theirs_dt.get(key, value)
        parsed.append(given if given in folder_parses(value) else value)
    ours = ours.set_column(ours.schema.get_field_index("dt"), "dt", pa.array(parsed, pa.string()))
    if case.hudi == HUDI_1 and case.kind == "mor" and options.get(QUERY_TYPE) == "incremental":
        ours_keys = set(ours.column(KEY).to_pylist())
        rows = theirs.to_pylist()
        lost = [r for r in rows if r[KEY] not in ours_keys and r["name"] == "n3-old"]
        assert all(r["ts"] == 0 for r in lost), lost
        kept = [r for r in rows if r not in lost]
        theirs = pa.Table.from_pylist(kept, schema=theirs.schema)
    return ours, theirs


def assert_reads_agree(table, name: str, options: dict[str, str]) -> None:
    """Apache Hudi's rows == ours, through the data source and through `HoodieTable.read`."""
    judged = table.judge.read(table.path, **options)
    ours = read_ours(table.spark, table.path, **options)
    facade = HoodieTable.open(table.path).read(table.spark, options).toArrow()
    for reader, read in (("data source", ours), ("HoodieTable.read", facade)):
        rows, theirs = as_apache_hudi_gives(table.case, options, read, judged)
        assert not differences(rows, theirs), (f"{name} ({reader})", differences(rows, theirs))
        assert_same_as_apache_hudi(f"{name} ({reader})", rows, theirs, KEY)


def test_snapshot(table):
    assert_reads_agree(table, "snapshot", {})


def test_read_optimized(table):
    if table.case.kind == "cow":
        pytest.skip("copy-on-write: read-optimized is the snapshot")
    assert_reads_agree(table, "read_optimized", {QUERY_TYPE: "read_optimized"})


def test_time_travel(table):
    for instant in table.writes[:-1]:  # (as of the last write: the snapshot)
        assert_reads_agree(table, f"as of {instant.timestamp}", {AS_OF: instant.timestamp})


def _moment(table, instant) -> str:
    """The time an incremental range is given in: requested time (table version 6),
    completion time (8 and 9)."""
    if table.case.table_version >= 8:
        assert instant.completion_time is not None
        return instant.completion_time
    return instant.timestamp


def test_incremental(table):
    moments = ["000", *(_moment(table, i) for i in table.writes)]
    for begin, end in zip(moments, moments[1:]):
        options = {QUERY_TYPE: "incremental", BEGIN: begin, END: end}
        assert_reads_agree(table, f"incremental ({begin}, {end}]", options)


def test_hudi_0_15_clustering_stores_a_hive_style_value_with_a_slash_cut(
    spark, apache_hudi, tmp_path
):
    """Apache Hudi 0.15's inline clustering of a hive-style table rewrites the value `x/y`,
    in folder `dt=x/y`, as `x` in the new base file (its row writer reads the files with
    Spark's partition discovery); Hudi 0.15's reader gives `x/y`, from the folder's name. We
    give what the file holds: our readers never take a column from a folder's name (a value
    with `/` spans folders), so this table is left out of the matrix above."""
    judge = apache_hudi(HUDI_0)
    case = Case("clustered", HUDI_0, "cow", 6, CLUSTERING, hive_style=True)
    path = str(tmp_path / "clustered")
    for ts in (1, 2):
        rows = arrow([(1, "n1", "x/y", ts, 1, False), (2, "n2", "a b", ts, 2, False)])
        judge.write(path, rows, case.write_options("upsert"))
    assert_features_present(case, path)
    theirs = {r["id"]: r["dt"] for r in judge.read(path).to_pylist()}
    register(spark)
    ours = {r["id"]: r["dt"] for r in read_ours(spark, path).to_pylist()}
    assert theirs == {1: "x/y", 2: "a b"}
    assert ours == {1: "x", 2: "a b"}  # what Apache Hudi's clustering stored

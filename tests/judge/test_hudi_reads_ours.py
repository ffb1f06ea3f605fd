"""Apache Hudi reads every layout we write (issue 39, item 2): its Spark datasource gives our
reader's rows in snapshot, read-optimized, time travel and incremental queries.

One module-scoped table per layout, written once and read many ways: Apache Hudi 0.15 and 1.2
read the version 6 tables, 1.2 the version 8 ones. The layouts are a pairwise cover, not the
cross product: every table type meets both indexes, every partitioning (one field, two fields,
hive-style, values with `/`, none), both table versions, and with and without a precombine
field; each table service runs on at least one table of each type where it applies:

layout        type index  partitions    precombine version history
cow_one_v6    COW  SIMPLE one field     ts         6       savepoint, restore, clean, archival
mor_multi_v8  MOR  BUCKET two fields    ts         8       inline compaction, clean, archival,
                                                            logs with deletes left
mor_slash_v6  MOR  SIMPLE values with / none       6       on-demand compaction, rollback,
                                                            logs with deletes left
cow_hive_v8   COW  BUCKET hive-style    none       8       savepoint, rollback, restore
cow_none_v6   COW  BUCKET none          none       6       rollback, clean
mor_none_v8   MOR  SIMPLE none          ts         8       savepoint, restore, on-demand
                                                            compaction, archival
mor_one_up    MOR  BUCKET one field     ts         6 -> 8  inline compaction, the upgrade
cow_multi_up  COW  SIMPLE two fields    none       6 -> 8  the upgrade, archival after it

Not covered as pairs: hive-style and values with `/` on the other table type (the partition
folders are the type's same files), BUCKET on a table upgraded with archival.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from apache_hudi import HUDI_0, HUDI_1, ApacheHudiError, assert_same_as_apache_hudi
from pyspark.sql import DataFrame
from rs_compare import read_ours

from hoodie import HoodieTable, WriteConfig
from hoodie.read.datasource import register
from hoodie.read.planner import readable_range
from hoodie.timeline import Action

pytestmark = [pytest.mark.spark, pytest.mark.hudi_full]

SCHEMA = "id int, a string, b string, ts bigint, name string"
KEY = "_hoodie_record_key"
QUERY_TYPE = "hoodie.datasource.query.type"
TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


@dataclass(frozen=True)
class Layout:
    name: str
    kind: str  # cow / mor
    index: str  # SIMPLE / BUCKET
    partitions: str  # one / multi / hive / slash / none
    precombine: bool
    version: int  # the version the table is created with
    steps: tuple[tuple, ...]
    options: dict[str, str] = field(default_factory=dict)

    @property
    def upgraded(self) -> bool:
        return any(step[0] == "upgrade" for step in self.steps)

    @property
    def final_version(self) -> int:
        return 8 if self.upgraded else self.version


def upsert(ids, ts: int, tag: str) -> tuple:
    return ("upsert", tuple(ids), ts, tag)


def delete(ids, ts: int) -> tuple:
    return ("delete", tuple(ids), ts, "deleted")


HISTORY_START = (
    upsert(range(10), 1, "a"),
    upsert(range(6, 14), 2, "b"),
    delete([1, 7], 3),
)
# Archival past the first writes, cleaning that leaves several instants to travel to; on
# version 8 (the metadata table kept by default) archival waits for the metadata table's
# compaction, after every 2 of its delta commits here.
ARCHIVE = {"hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5",
           "hoodie.cleaner.commits.retained": "3",
           "hoodie.metadata.compact.max.delta.commits": "2"}  # fmt: skip
LAYOUTS = (
    Layout("cow_one_v6", "cow", "SIMPLE", "one", True, 6, HISTORY_START + (
        upsert(range(12, 16), 4, "c"), ("savepoint",), upsert(range(3), 5, "d"),
        delete([12], 6), ("restore",), upsert([2, 20], 7, "e"), ("clean",),
        upsert([4, 21], 8, "f"),
    ), ARCHIVE),
    Layout("mor_multi_v8", "mor", "BUCKET", "multi", True, 8, HISTORY_START + (
        upsert(range(12, 16), 4, "c"), upsert(range(3), 5, "d"), ("clean",),
        upsert([5, 22], 6, "e"), delete([13, 2], 7),
    ), {**ARCHIVE, "hoodie.compact.inline.max.delta.commits": "3"}),
    Layout("mor_slash_v6", "mor", "SIMPLE", "slash", False, 6, HISTORY_START + (
        ("compact",), upsert(range(12, 16), 4, "c"), upsert([3, 30], 5, "x"), ("rollback",),
        delete([12, 0], 6), upsert([9, 31], 7, "d"),
    ), {"hoodie.compact.inline": "false"}),
    Layout("cow_hive_v8", "cow", "BUCKET", "hive", False, 8, HISTORY_START + (
        ("savepoint",), upsert(range(12, 16), 4, "c"), upsert([3, 30], 5, "x"), ("rollback",),
        delete([12], 6), ("restore",), upsert([9, 31], 7, "d"),
    )),
    Layout("cow_none_v6", "cow", "BUCKET", "none", False, 6, HISTORY_START + (
        upsert(range(12, 16), 4, "c"), upsert([3, 30], 5, "x"), ("rollback",), ("clean",),
        upsert([9, 31], 7, "d"),
    ), {"hoodie.cleaner.commits.retained": "2"}),
    Layout("mor_none_v8", "mor", "SIMPLE", "none", True, 8, HISTORY_START + (
        ("savepoint",), upsert(range(12, 16), 4, "c"), delete([0], 5), ("restore",),
        upsert([3, 9], 6, "d"), ("compact",), upsert([4, 32], 7, "e"), delete([5], 8),
    ), {**ARCHIVE, "hoodie.compact.inline": "false"}),
    Layout("mor_one_up", "mor", "BUCKET", "one", True, 6, HISTORY_START + (
        upsert(range(12, 16), 4, "c"), ("upgrade",), upsert([3, 33], 5, "d"), delete([4], 6),
    ), {"hoodie.compact.inline.max.delta.commits": "3"}),
    Layout("cow_multi_up", "cow", "SIMPLE", "multi", False, 6, HISTORY_START + (
        upsert(range(12, 16), 4, "c"), upsert([2, 25], 5, "d"), ("upgrade",),
        upsert([3, 33], 6, "e"), delete([4], 7),
    ), ARCHIVE),
)  # fmt: skip


def partition_values(layout: Layout, i: int) -> tuple[str, str]:
    """Columns a and b of row `i`: what the layout partitions by."""
    if layout.partitions == "slash":
        return f"x/{i % 2}", f"b{i % 3}"
    return f"p{i % 2}", f"b{i % 3}"


def config(layout: Layout) -> WriteConfig:
    fields = {"one": ["a"], "multi": ["a", "b"], "hive": ["a"], "slash": ["a"], "none": []}
    options = dict(layout.options)
    options["hoodie.index.type"] = layout.index
    if layout.index == "BUCKET":
        options["hoodie.bucket.index.num.buckets"] = "2"
    if not layout.upgraded:
        options["hoodie.write.table.version"] = str(layout.version)
    return WriteConfig.build(
        layout.name,
        record_key="id",
        partition_path=fields[layout.partitions],
        precombine_field="ts" if layout.precombine else None,
        table_type=TYPES[layout.kind],
        hive_style_partitioning=layout.partitions == "hive",
        options=options,
    )


@pytest.fixture(scope="module", params=LAYOUTS, ids=lambda layout: layout.name)
def written(request, spark, tmp_path_factory):
    """The layout's table after its history; `writes`: every write's instant time."""
    layout: Layout = request.param
    register(spark)
    path = str(tmp_path_factory.mktemp(layout.name) / layout.name)
    cfg = config(layout)
    table = HoodieTable.for_write(path, cfg)
    savepoint = None
    for step in layout.steps:
        action = step[0]
        if action in ("upsert", "delete"):
            _, ids, ts, tag = step
            rows = [(i, *partition_values(layout, i), ts, f"{tag}{i}") for i in ids]
            frame = spark.createDataFrame(rows, SCHEMA)
            (table.upsert if action == "upsert" else table.delete)(frame, cfg)
        elif action == "compact":
            assert table.services.compact(spark, cfg), "the history leaves log files to compact"
        elif action == "clean":
            table.services.clean(cfg)
        elif action == "rollback":
            table.services.rollback(config=cfg)
        elif action == "savepoint":
            savepoint = table.timeline().completed.write_timeline.instants[-1].timestamp
            table.services.savepoint(savepoint)
        elif action == "restore":
            assert savepoint is not None
            table.services.restore(savepoint, cfg)
        elif action == "upgrade":
            table.services.upgrade(spark, cfg)
        else:
            raise AssertionError(action)
    table = HoodieTable.open(path)
    assert table.properties.table_version == layout.final_version
    return SimpleNamespace(layout=layout, path=path, table=table, spark=spark)


def judges(written, apache_hudi):
    """Apache Hudi 0.15 reads version 6 tables, 1.2 both versions."""
    versions = (HUDI_0, HUDI_1) if written.layout.final_version == 6 else (HUDI_1,)
    return [apache_hudi(version) for version in versions]


def assert_read_agrees(written, apache_hudi, name: str, **options: str) -> int:
    ours = read_ours(written.spark, written.path, **options)
    for judge in judges(written, apache_hudi):
        theirs = judge.read(written.path, **options)
        label = f"{written.layout.name} {name}: Apache Hudi {judge.version}"
        assert_same_as_apache_hudi(label, ours, theirs, KEY)
    return ours.num_rows


def retained_writes(written):
    """The completed writes time travel can reach: on the active timeline, not cleaned."""
    bounds = readable_range(written.table.meta_client)
    assert bounds is not None
    writes = written.table.timeline().completed.write_timeline.instants
    return [i for i in writes if i.timestamp >= bounds[0]]


def test_the_history_left_what_the_layout_names(written):
    """Each table service of the layout's history ran and left its instant (archival: the
    first writes are off the active timeline), so the reads below meet what they should."""
    layout, table = written.layout, written.table
    steps = {step[0] for step in layout.steps}
    actions = {i.action for i in table.timeline().completed}
    for step, action in (("clean", Action.CLEAN), ("rollback", Action.ROLLBACK),
                         ("restore", Action.RESTORE)):  # fmt: skip
        assert action in actions or step not in steps, (layout.name, action)  # clean: also auto
    if "savepoint" in steps:
        assert table.savepoints()
    compacts = "compact" in steps or (layout.kind == "mor" and "hoodie.compact.inline" not in
                                      layout.options)  # fmt: skip
    if layout.kind == "mor":
        assert (Action.COMMIT in actions) == compacts, layout.name
    if layout.options.get("hoodie.keep.max.commits"):
        archived = [a for a in table.meta_client.archived_instants() if a.state == "COMPLETED"]
        assert archived, f"{layout.name}: nothing was archived"
    if layout.kind == "mor":
        latest = [g.latest_slice for g in table.file_system_view().file_groups()]
        assert any(s is not None and s.log_files for s in latest), "logs left to merge"


def test_snapshot(written, apache_hudi):
    assert assert_read_agrees(written, apache_hudi, "snapshot") > 0


def test_read_optimized(written, apache_hudi):
    if written.layout.kind == "cow":
        pytest.skip("read-optimized is the snapshot on copy-on-write")
    assert_read_agrees(written, apache_hudi, "read-optimized", **{QUERY_TYPE: "read_optimized"})


def test_time_travel_at_every_retained_instant(written, apache_hudi):
    writes = retained_writes(written)
    assert len(writes) >= 2
    for instant in writes:
        name = f"as of {instant.timestamp} ({instant.action})"
        assert_read_agrees(written, apache_hudi, name, **{"as.of.instant": instant.timestamp})


def test_incremental_between_instants(written, apache_hudi):
    """Between each two retained writes, and over all of them: by requested instant time on
    version 6 (both Apache Hudi versions), by completion time on version 8."""
    writes = retained_writes(written)
    if written.layout.final_version == 6:
        times = [i.timestamp for i in writes]
    else:
        times = [i.completion_time or i.timestamp for i in writes]
    ranges = list(zip(times, times[1:])) + [(times[0], times[-1])]
    seen = 0
    for begin, end in ranges:
        seen += assert_read_agrees(
            written, apache_hudi, f"incremental ({begin}, {end}]", **{
                QUERY_TYPE: "incremental",
                "hoodie.datasource.read.begin.instanttime": begin,
                "hoodie.datasource.read.end.instanttime": end,
            },
        )  # fmt: skip
    assert seen > 0


# -- the format list of issue 39: each difference fixed, or shown accepted by Apache Hudi -------


def small_table(spark, path: str, partitions, version: int = 6, **options: str) -> WriteConfig:
    """A copy-on-write table keyed by id, ordered by ts, with `options`."""
    cfg = WriteConfig.build(
        "small", record_key="id", partition_path=partitions, precombine_field="ts",
        options={"hoodie.write.table.version": str(version), **options},
    )  # fmt: skip
    HoodieTable.for_write(path, cfg)
    return cfg


def rows(spark, items) -> DataFrame:
    return spark.createDataFrame(list(items), SCHEMA)


def test_a_partition_folder_leads_apache_hudi_to_its_table(spark, apache_hudi, tmp_path):
    """`partitionDepth` is the partition folder's depth, as Apache Hudi writes it: with a value
    `x/0` (two folders) it was the number of partition fields (1), and Apache Hudi, which goes
    up that many folders from a partition folder to find the table, said "Hoodie table not
    found" when given the folder."""
    path = str(tmp_path / "slash")
    cfg = small_table(spark, path, "a")
    data = [(1, "x/0", "b", 1, "n1"), (2, "x/1", "b", 1, "n2"), (3, "x/0", "b", 1, "n3")]
    HoodieTable.open(path).upsert(rows(spark, data), cfg)
    everything = read_ours(spark, path)
    ours = everything.filter(pc.equal(everything["_hoodie_partition_path"], "x/0"))
    assert ours.num_rows == 2
    for version in (HUDI_0, HUDI_1):
        theirs = apache_hudi(version).read(f"{path}/x/0")
        assert_same_as_apache_hudi(f"folder x/0, Apache Hudi {version}", ours, theirs, KEY)


def test_apache_hudi_lists_our_archived_commits(spark, apache_hudi, tmp_path):
    """v6 archive entries carry their commit metadata, as Apache Hudi's archiver writes them:
    without it `CALL show_archived_commits` failed in Apache Hudi 0.15 and 1.2. An incremental
    read from an archived instant gives Apache Hudi 1.2's rows, and 0.15's with its fallback to
    a full table scan; 0.15 by default reads only the active timeline's commits and misses
    the archived commits' rows (its own tables' too), which we do not copy."""
    path = str(tmp_path / "archived")
    archival = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                "hoodie.cleaner.commits.retained": "1"}  # fmt: skip
    cfg = small_table(spark, path, "a", **archival)
    table = HoodieTable.open(path)
    writes = [
        table.upsert(rows(spark, [(n, f"p{n % 2}", "b", n, f"n{n}")]), cfg).instant
        for n in range(6)
    ]
    archived = {a.timestamp for a in table.meta_client.archived_instants()} & set(writes)
    assert archived
    everything = "start_ts => '00000000000000000', end_ts => '99991231235959999'"
    incremental = {
        QUERY_TYPE: "incremental",
        "hoodie.datasource.read.begin.instanttime": writes[0],
        "hoodie.datasource.read.end.instanttime": writes[-1],
    }
    ours = read_ours(spark, path, **incremental)
    assert ours.num_rows == 5
    for version in (HUDI_0, HUDI_1):
        judge = apache_hudi(version)
        listed = judge.sql(
            f"CREATE TABLE IF NOT EXISTS archived_v6 USING hudi LOCATION '{path}'",
            f"CALL show_archived_commits(table => 'archived_v6', limit => 100, {everything})",
        )
        assert listed is not None
        got = {r["commit_time"]: r["total_records_written"] for r in listed.to_pylist()}
        assert set(got) == archived, version
        assert all(written >= 1 for written in got.values()), got
        files = judge.sql(f"CALL show_archived_commits_metadata(table => 'archived_v6', "
                          f"limit => 100, {everything})")  # fmt: skip
        assert files is not None
        assert {r["commit_time"] for r in files.to_pylist()} == archived, version
        fallback = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}
        theirs = judge.read(path, **incremental, **(fallback if version == HUDI_0 else {}))
        assert_same_as_apache_hudi(f"incremental, Apache Hudi {version}", ours, theirs, KEY)
    by_default = apache_hudi(HUDI_0).read(path, **incremental)
    assert by_default.num_rows < ours.num_rows  # 0.15 without the fallback: active commits only


def arrow(items) -> pa.Table:
    """Rows of SCHEMA as Apache Hudi's job takes them."""
    columns = list(zip(*items))
    types = [pa.int32(), pa.string(), pa.string(), pa.int64(), pa.string()]
    names = ["id", "a", "b", "ts", "name"]
    return pa.table({n: pa.array(c, t) for n, c, t in zip(names, columns, types)})


def hudi_options(name: str, partitions: str, version: str, **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": name,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": partitions,
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.metadata.enable": "false",
        "hoodie.index.type": "SIMPLE",
        **extra,
    }


def footer(path) -> tuple[int, dict[str, bytes]]:
    meta = pq.read_metadata(path)
    keys = {k.decode(): v for k, v in (meta.metadata or {}).items()}
    return meta.num_rows, {k: v for k, v in keys.items() if k.startswith("hoodie_m")}


def test_a_delete_that_empties_a_file_group_leaves_what_apache_hudi_leaves(
    spark, apache_hudi, tmp_path
):
    """A delete of every key of a copy-on-write file group writes a 0-row base file without
    min/max record keys: so does Apache Hudi (0.15 and 1.2; its footer has a bloom filter,
    which the `turns` work covers). Apache Hudi reads ours in every query and upserts into
    the emptied file group."""
    first = [(1, "p0", "b", 1, "n1"), (2, "p0", "b", 1, "n2"), (3, "p1", "b", 1, "n3")]
    gone = [(1, "p0", "b", 2, "x"), (2, "p0", "b", 2, "x")]
    for version in (HUDI_0, HUDI_1):
        theirs = str(tmp_path / f"theirs-{version}")
        options = hudi_options("emptied", "a", version, **{"hoodie.write.table.version": "6"})
        apache_hudi(version).write(theirs, arrow(first), options)
        apache_hudi(version).write(
            theirs, arrow(gone), {**options, "hoodie.datasource.write.operation": "delete"}
        )
        latest = max((tmp_path / f"theirs-{version}" / "p0").glob("*.parquet"),
                     key=lambda p: p.name.rsplit("_", 1)[1])  # fmt: skip
        assert footer(latest) == (0, {}), version
    path = str(tmp_path / "ours")
    cfg = small_table(spark, path, "a")
    table = HoodieTable.open(path)
    before = table.upsert(rows(spark, first), cfg).instant
    emptied = table.delete(rows(spark, gone), cfg).instant
    files = sorted((tmp_path / "ours" / "p0").glob("*.parquet"), key=lambda p: p.name)
    assert [footer(f)[0] for f in files if emptied in f.name] == [0]
    assert footer(next(f for f in files if emptied in f.name))[1] == {}
    reads = {
        "snapshot": {},
        "before the delete": {"as.of.instant": before},
        "across the delete": {
            QUERY_TYPE: "incremental",
            "hoodie.datasource.read.begin.instanttime": "000",
            "hoodie.datasource.read.end.instanttime": emptied,
        },
    }
    for version in (HUDI_0, HUDI_1):
        for name, options in reads.items():
            ours = read_ours(spark, path, **options)
            theirs = apache_hudi(version).read(path, **options)
            assert_same_as_apache_hudi(f"{name}, Apache Hudi {version}", ours, theirs, KEY)
    apache_hudi(HUDI_0).write(path, arrow([(1, "p0", "b", 3, "back")]),
                              hudi_options("small", "a", HUDI_0))  # fmt: skip
    ours = read_ours(spark, path)
    assert sorted(ours.column(KEY).to_pylist()) == ["1", "3"]
    assert_same_as_apache_hudi("after its upsert", ours, apache_hudi(HUDI_1).read(path), KEY)


COMPLEX_KEYGEN = "org.apache.hudi.keygen.ComplexKeyGenerator"
COMPLEX = {"hoodie.datasource.write.keygenerator.class": COMPLEX_KEYGEN}
NO_KEY_CHECK = {"hoodie.write.complex.keygen.validation.enable": "false"}


def test_a_single_record_key_under_complex_key_generator(spark, apache_hudi, tmp_path):
    """One record key field and two partition fields: Hudi's ComplexKeyGenerator. Apache Hudi
    0.15 (0.14.1 to 1.0.2) stores the plain value, as we do at both table versions; Apache
    Hudi 1.1 and later store `id:1` again (HUDI-9666) at versions 6 and 8, and refuse every
    write to such a table below version 9, theirs as ours, until told which encoding it holds.
    We keep the plain value: the table versions do not tell the encodings apart, 0.15 writes
    version 6 so, and a change would duplicate the keys of tables we already wrote. Apache
    Hudi 1.2 told the table's encoding (`hoodie.write.complex.keygen.new.encoding=true`)
    updates our rows in place."""
    one = [(1, "p", "q", 1, "n")]
    keys = {}
    for version, table_version in ((HUDI_0, "6"), (HUDI_1, "6"), (HUDI_1, "8")):
        theirs = str(tmp_path / f"theirs-{version}-{table_version}")
        options = hudi_options("complex", "a,b", version, **COMPLEX,
                               **{"hoodie.write.table.version": table_version})  # fmt: skip
        if version == HUDI_1:
            with pytest.raises(ApacheHudiError, match="complex key generator with a single"):
                apache_hudi(version).write(theirs, arrow(one), options)
            options.update(NO_KEY_CHECK)
        apache_hudi(version).write(theirs, arrow(one), options)
        keys[version, table_version] = apache_hudi(version).read(theirs).column(KEY).to_pylist()
    assert keys == {(HUDI_0, "6"): ["1"], (HUDI_1, "6"): ["id:1"], (HUDI_1, "8"): ["id:1"]}
    for table_version in (6, 8):
        path = str(tmp_path / f"ours-{table_version}")
        cfg = small_table(spark, path, ["a", "b"], table_version)
        HoodieTable.open(path).upsert(rows(spark, one), cfg)
        props = (tmp_path / f"ours-{table_version}" / ".hoodie" / "hoodie.properties").read_text()
        assert f"hoodie.table.keygenerator.class={COMPLEX_KEYGEN}" in props
        assert read_ours(spark, path).column(KEY).to_pylist() == ["1"]
        judge = apache_hudi(HUDI_0 if table_version == 6 else HUDI_1)
        options = hudi_options("small", "a,b", judge.version, **COMPLEX)
        if judge.version == HUDI_1:
            options.update(NO_KEY_CHECK, **{"hoodie.write.complex.keygen.new.encoding": "true",
                                            "hoodie.write.table.version": "8"})
        judge.write(path, arrow([(1, "p", "q", 2, "again")]), options)
        ours = read_ours(spark, path)
        assert ours.column("name").to_pylist() == ["again"], table_version  # one row, updated
        assert_same_as_apache_hudi(f"v{table_version}", ours, judge.read(path), KEY)


def test_no_create_schema_as_apache_hudis_datasource_writes(spark, apache_hudi, tmp_path):
    """`hoodie.table.create.schema` is not written by Apache Hudi's datasource writes either
    (only its SQL CREATE TABLE writes it); a table with no completed commit reads as empty in
    Apache Hudi, and after archival the schema comes from the commits kept (the layouts
    above), so Apache Hudi does not need it."""
    for version in (HUDI_0, HUDI_1):
        theirs = tmp_path / f"theirs-{version}"
        options = hudi_options("noschema", "a", version, **{"hoodie.write.table.version": "6"})
        apache_hudi(version).write(str(theirs), arrow([(1, "p", "q", 1, "n")]), options)
        props = (theirs / ".hoodie" / "hoodie.properties").read_text()
        assert "hoodie.table.create.schema" not in props
    path = str(tmp_path / "ours")
    small_table(spark, path, "a")  # created, nothing committed
    assert "create.schema" not in (tmp_path / "ours" / ".hoodie/hoodie.properties").read_text()
    for version in (HUDI_0, HUDI_1):
        assert apache_hudi(version).count(path) == (0, []), version

"""Our CDC query on tables Apache Hudi wrote with CDC on equals Apache Hudi's own CDC query on
the same table and range (design: incremental-pipelines.md 1.4, 7; issue 42 step 5).

The writes are the probe's (docs/design/incremental-samples/cdc_probe.py): keys 1-4 in two
partitions; an update of 2 and an insert of 5; a delete of 3; key 1 moved from `a` to `b`
(GLOBAL_SIMPLE with update.partition.path) and 6 inserted; on merge-on-read an inline
compaction after the 4th delta commit (skipped by both queries). The matrix then adds, on
merge-on-read, an update of 4 and a delete of 2 (log appends on the compacted slices:
LOG_FILE), and ends with an `insert_overwrite` of partition `a` (REPLACE_COMMIT).

Where Apache Hudi is wrong, the test says so: 0.15 gives a replaced file group's last row
for each of its rows (a reused row object), so those deletes are compared apart (as many,
and ours are the rows partition `a` held); 1.2 fails its own CDC query of a version 6
merge-on-read table (it asserts that), and 0.15 judges that table instead.

Rows are compared as decision D1 says: op, ts_ms, and the images parsed as JSON restricted to
the data columns, with Apache Hudi's string `null` and SQL NULL both meaning "no image" (its
encoding differs by case and version; ours is compact JSON of the data columns).

The default suite runs one table Apache Hudi 1.2 wrote (version 8, merge-on-read,
OP_KEY_ONLY: every inference case but REPLACE_COMMIT), several ranges; the matrix (1.2
writing versions 8 and 6, 0.15 writing 6; both table types; the three modes) is `hudi_full`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, ApacheHudiError, datasource_options
from rs_compare import assert_same_rows, read_theirs

from hoodie import HoodieTable
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.read.datasource import register

pytestmark = [pytest.mark.spark]

DATA = ("id", "dt", "ts", "name")
MODES = ("DATA_BEFORE_AFTER", "DATA_BEFORE", "OP_KEY_ONLY")


def rows(ids, dts, ts, names) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "dt": dts,
            "ts": pa.array(ts, pa.int64()),
            "name": names,
        }
    )


def write_table(
    judge, path: Path, kind: str, table_version: str, mode: str, overwrite: bool, more: bool = True
):
    """Apache Hudi writes the probe's table (`more`: and, on merge-on-read, the two log appends
    after the compaction); returns the completed instants (requested times)."""

    def write(data, op):
        options = datasource_options("cdc_" + kind, kind, op)
        options.update(
            {
                "hoodie.table.cdc.enabled": "true",
                "hoodie.table.cdc.supplemental.logging.mode": mode,
                "hoodie.index.type": "GLOBAL_SIMPLE",
                "hoodie.simple.index.update.partition.path": "true",
                "hoodie.metadata.enable": "false",
                "hoodie.compact.inline": "true" if kind == "mor" else "false",
                "hoodie.compact.inline.max.delta.commits": "4",
            }
        )
        if judge.version.startswith("1."):
            options["hoodie.write.table.version"] = table_version
        judge.write(str(path), data, options)

    write(rows([1, 2, 3, 4], ["a", "a", "b", "b"], [1, 1, 1, 1], ["w", "x", "y", "z"]), "upsert")
    write(rows([2, 5], ["a", "b"], [2, 2], ["x2", "v"]), "upsert")
    write(rows([3], ["b"], [3], ["y"]), "delete")
    write(rows([1, 6], ["b", "a"], [4, 4], ["w4", "u"]), "upsert")
    if kind == "mor" and more:  # log appends on the slices compaction made
        write(rows([4], ["b"], [5], ["z5"]), "upsert")
        write(rows([2], ["a"], [6], ["x2"]), "delete")
    if overwrite:
        write(rows([7], ["a"], [7], ["t"]), "insert_overwrite")
    timeline = HoodieTableMetaClient.open(str(path)).timeline()
    return [i.timestamp for i in timeline.completed]


def image(text: str | None) -> tuple | None:
    """An image as D1 compares it: its data columns, or None for no image."""
    if text is None:
        return None
    parsed = json.loads(text)
    if parsed is None:
        return None
    return tuple(parsed.get(c) for c in DATA)


def changes(table: pa.Table) -> list[tuple]:
    out = [(r["op"], r["ts_ms"], image(r["before"]), image(r["after"])) for r in table.to_pylist()]
    return sorted(out, key=repr)


def cdc_options(begin: str, end: str | None) -> dict[str, str]:
    options = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.query.incremental.format": "cdc",
        "hoodie.datasource.read.begin.instanttime": begin,
    }
    if end is not None:
        options["hoodie.datasource.read.end.instanttime"] = end
    return options


def ours(spark, path: Path, begin: str, end: str | None) -> pa.Table:
    register(spark)
    frame = spark.read.format("hoodie").options(**cdc_options(begin, end)).load(str(path))
    assert frame.columns == ["op", "ts_ms", "before", "after"]
    return pa.Table.from_pylist(
        [r.asDict() for r in frame.collect()],
        schema=pa.schema([(c, pa.string()) for c in frame.columns]),
    )


def check(spark, judge, path: Path, ranges: list[tuple[str, str | None]],
          overwrite: str | None = None) -> None:  # fmt: skip
    """Ours == Apache Hudi's on each range. `overwrite`: the instant of an insert_overwrite
    whose deletes Apache Hudi 0.15 gets wrong (below), compared apart."""
    for begin, end in ranges:
        theirs = changes(judge.read(str(path), **cdc_options(begin, end)))
        got = changes(ours(spark, path, begin, end))
        if overwrite is not None and judge.version == HUDI_0:
            got, got_replaced = _apart(got, overwrite)
            theirs, their_replaced = _apart(theirs, overwrite)
            # Apache Hudi 0.15's REPLACE_COMMIT rows repeat the last row of a replaced group
            # in place of the others (a reused row object): as many rows, its values wrong
            assert len(got_replaced) == len(their_replaced)
            assert set(their_replaced) <= set(got_replaced)
        assert got == theirs, f"({begin}, {end}]: ours {got}, Apache Hudi {theirs}"


def _apart(rows: list[tuple], instant: str) -> tuple[list[tuple], list[tuple]]:
    """Rows but the deletes of `instant`, and those deletes."""
    replaced = [r for r in rows if r[0] == "d" and r[1] == instant]
    return [r for r in rows if r not in replaced], replaced


def every_range(instants: list[str]) -> list[tuple[str, str | None]]:
    bounds = ["0", *instants]
    return [("0", None)] + list(zip(bounds, instants, strict=False)) + [(instants[0], instants[2])]


def test_merge_on_read_op_key_only(spark, apache_hudi, tmp_path):
    """A base file rewrite (AS_IS: images looked up by key), log appends (LOG_FILE), the move,
    new file groups (BASE_FILE_INSERT), a compaction skipped; through HoodieTable.read too."""
    judge = apache_hudi(HUDI_1)
    path = tmp_path / "mor"
    instants = write_table(judge, path, "mor", "8", "OP_KEY_ONLY", overwrite=False, more=False)
    assert len(instants) == 5  # four delta commits and the compaction
    check(spark, judge, path, [("0", None)])  # every range: test_cdc_matrix (hudi_full)
    # hudi-rs 0.5 reads a snapshot of a table with .cdc files as we do (it skips them)
    import hudi

    ours_now = spark.read.format("hoodie").load(str(path)).toArrow()
    assert_same_rows("hudi-rs", "id", ours_now, read_theirs(hudi.HudiTable(str(path))))
    # the move alone: a delete in `a` by log, an insert in a new group
    read = HoodieTable.open(str(path)).read(spark, cdc_options(instants[2], instants[3]))
    moved = sorted((r["op"], image(r["before"]), image(r["after"])) for r in read.collect())
    assert moved == [
        ("d", (1, "a", 1, "w"), None),
        ("i", None, (1, "b", 4, "w4")),
        ("i", None, (6, "a", 4, "u")),
    ]


@pytest.mark.hudi_full
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["cow", "mor"])
@pytest.mark.parametrize("version,table_version", [(HUDI_1, "8"), (HUDI_1, "6"), (HUDI_0, "6")])
def test_cdc_matrix(spark, apache_hudi, tmp_path, version, table_version, kind, mode):
    judge = apache_hudi(version)
    path = tmp_path / "t"
    instants = write_table(judge, path, kind, table_version, mode, overwrite=True)
    if (version, table_version, kind) == (HUDI_1, "6", "mor"):
        # Apache Hudi 1.2 fails its own CDC query of a version 6 merge-on-read table (it looks
        # for a version 8 delta commit's slice in the log files' write stats): 0.15 judges
        with pytest.raises(ApacheHudiError, match="Fail to parse the base file and log files"):
            judge.read(str(path), **cdc_options("0", None))
        judge = apache_hudi(HUDI_0)
    check(spark, judge, path, every_range(instants), overwrite=instants[-1])
    # our rows of the insert_overwrite: the replaced groups' rows as deletes, the new row
    replaced = changes(ours(spark, path, instants[-2], None))
    assert replaced == sorted(
        [("d", instants[-1], row, None) for row in _partition_a(kind)]
        + [("i", instants[-1], None, (7, "a", 7, "t"))],
        key=repr,
    )


def _partition_a(kind: str) -> list[tuple]:
    """The rows of partition `a` the insert_overwrite replaced."""
    return [(6, "a", 4, "u")] if kind == "mor" else [(2, "a", 2, "x2"), (6, "a", 4, "u")]

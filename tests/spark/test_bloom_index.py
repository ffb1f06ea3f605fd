"""BLOOM index writes: stored keys read only from the files whose footer may hold them."""

from __future__ import annotations

import shutil
from collections import Counter

import pyarrow as pa
import pytest
from _spark_helpers import id_dt_ts_config, snapshot

from hoodie import HoodieTable
from hoodie.bloom_filter import BLOOM_TYPE_FOOTER, bloom_filter_footer
from hoodie.exceptions import RecordKeyExistsError
from hoodie.index import simple
from hoodie.index.bloom import locate_by_bloom
from hoodie.index.keys import KeySource
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.storage import TracingFileIO, load_file_io

pytestmark = pytest.mark.spark

SCHEMA = "id string, name string, dt string, ts bigint, _hoodie_is_deleted boolean"
A, B = "2024-01-01", "2024-01-02"
# Small filters (the default one is 431 KB of footer per file) with Apache Hudi's fpp.
BLOOM = {
    "hoodie.index.type": "BLOOM",
    "hoodie.index.bloom.num_entries": "200",
    "hoodie.compact.inline": "false",
}
KEY_READ = "read_parquet,columns=['_hoodie_record_key']"


def _config(table_type: str, version: int = 6, **options: str):
    return id_dt_ts_config(
        "bloomed", table_type, {**BLOOM, "hoodie.write.table.version": str(version), **options}
    )


def _rows(keys, dt, ts, name="v", deleted=False):
    return [(k, f"{name}{k}", dt, ts, deleted) for k in keys]


@pytest.mark.parametrize(
    "table_type, version",
    [
        ("COPY_ON_WRITE", 6),
        ("MERGE_ON_READ", 8),
        pytest.param("COPY_ON_WRITE", 8, marks=pytest.mark.full),
        pytest.param("MERGE_ON_READ", 6, marks=pytest.mark.full),
    ],
)
def test_upserts_and_deletes_under_bloom(spark, tmp_path, table_type, version):
    """Updates find their file groups (a duplicate key would show in the snapshot), stale
    versions lose, deletes remove, a delete of an unknown key does nothing, new keys insert;
    every commit names the BLOOM index; hudi-rs reads the same rows."""
    path = str(tmp_path / "t")
    cfg = _config(table_type, version)
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame(_rows([str(i) for i in range(0, 40, 2)], A, 1), SCHEMA),
                 cfg)  # fmt: skip
    table.upsert(spark.createDataFrame(_rows([str(i) for i in range(1, 40, 2)], B, 1), SCHEMA),
                 cfg)  # fmt: skip
    second = [
        ("0", "new0", A, 2, False),
        ("2", "stale", A, 0, False),
        ("1", None, B, 2, True),
        ("7", "new7", B, 2, False),
        ("900", "fresh", A, 2, False),
        ("901", None, B, 2, True),  # a delete of a key the table does not hold
    ]
    result = table.upsert(spark.createDataFrame(second, SCHEMA), cfg)
    assert result.metadata.extra_metadata["hoodie.index.type"] == "BLOOM"
    expected = {str(i): f"v{i}" for i in range(40) if i != 1}
    expected |= {"0": "new0", "7": "new7", "900": "fresh"}
    assert {k: v["name"] for k, v in snapshot(table, spark).items()} == expected

    table.delete(spark.createDataFrame([("7", B), ("2", A), ("404", A)], "id string, dt string"),
                 cfg)  # fmt: skip
    del expected["7"], expected["2"]
    assert {k: v["name"] for k, v in snapshot(table, spark).items()} == expected
    if table_type == "MERGE_ON_READ":
        table.services.compact(spark, cfg)
        assert {k: v["name"] for k, v in snapshot(table, spark).items()} == expected
    hudi = pytest.importorskip("hudi")
    theirs = pa.Table.from_batches(hudi.HudiTable(path).read())
    assert dict(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist(), strict=True)) == expected


def _traced_table(path: str, trace: str) -> HoodieTable:
    """The table at `path`, every call its storage takes appended to `trace`."""
    properties = HoodieTableMetaClient.open(path).properties
    return HoodieTable(HoodieTableMetaClient(TracingFileIO(load_file_io(path), trace), properties))


def _key_reads(trace, since: int) -> Counter[str]:
    lines = trace.read_text().splitlines()[since:] if trace.exists() else []
    return Counter(line.split("\t", 1)[1] for line in lines if line.startswith(KEY_READ + "\t"))


def _trace_length(trace) -> int:
    return len(trace.read_text().splitlines()) if trace.exists() else 0


def _candidates_config(prune_by_ranges: bool = True):
    return _config("MERGE_ON_READ", **{
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.bloom.index.prune.by.ranges": str(prune_by_ranges).lower(),
    })  # fmt: skip


@pytest.fixture(scope="module")
def ten_file_groups(spark, tmp_path_factory) -> str:
    """Ten file groups in one partition (ten bulk inserts: no tagging, ~0.3 s less a write
    than upserts), made once for the module's tests to copy: five of disjoint key ranges, five
    whose ranges all overlap (interleaved keys)."""
    path = str(tmp_path_factory.mktemp("bloom") / "t")
    cfg = _candidates_config()
    table = HoodieTable.for_write(path, cfg)
    for block in range(5):  # disjoint: a000..a019, a100..a119, ...
        keys = [f"a{block}{i:02d}" for i in range(20)]
        table.bulk_insert(spark.createDataFrame(_rows(keys, A, 1), SCHEMA), cfg)
    for group in range(5):  # overlapping: b000, b005, b010, ... in group 0; b001, ... in 1
        keys = [f"b{i:03d}" for i in range(group, 100, 5)]
        table.bulk_insert(spark.createDataFrame(_rows(keys, A, 1), SCHEMA), cfg)
    return path


@pytest.mark.parametrize("prune_by_ranges, lookup", [(True, "driver"), (False, "join")])
def test_an_upsert_reads_the_keys_of_only_its_candidate_files(
    spark, tmp_path, monkeypatch, ten_file_groups, prune_by_ranges, lookup
):
    """Ten file groups in one partition: five of disjoint key ranges, five whose ranges all
    overlap (interleaved keys). An upsert of keys of one file of each kind reads the key column
    of those two files only: range pruning rules out the disjoint ones (or, with
    hoodie.bloom.index.prune.by.ranges=false, their bloom filters do), bloom filters rule out
    the overlapping ones. A batch of new keys reads no key column at all. The same whether the
    batch's keys go to the tasks from the driver or are joined with the files in Spark."""
    if lookup == "join":
        monkeypatch.setattr(simple, "KEY_FILTER_MAX_ROWS", 0)
    path, trace = str(tmp_path / "t"), tmp_path / "trace"
    shutil.copytree(ten_file_groups, path)
    cfg = _candidates_config(prune_by_ranges)
    table = _traced_table(path, str(trace))
    base_of = {f.file_id: f.relative_path for f in table.file_system_view().latest_base_files()}
    assert len(base_of) == 10
    holding = {k["_hoodie_record_key"]: k["_hoodie_file_name"].split("_")[0]
               for k in snapshot(table, spark).values()}  # fmt: skip

    since = _trace_length(trace)
    table.upsert(spark.createDataFrame(_rows(["a201", "a215", "b013"], A, 2, "u"), SCHEMA), cfg)
    reads = _key_reads(trace, since)
    assert set(reads) == {base_of[holding["a201"]], base_of[holding["b013"]]}, reads
    rows = snapshot(table, spark)
    assert len(rows) == 200 and rows["a215"]["name"] == "ua215" and rows["b013"]["name"] == "ub013"

    since = _trace_length(trace)
    table.upsert(spark.createDataFrame(_rows(["c1", "c2", "zz"], A, 2), SCHEMA), cfg)
    assert not _key_reads(trace, since)
    assert len(snapshot(table, spark)) == 203


def test_keys_living_only_in_log_files_are_found(spark, tmp_path):
    """A merge-on-read table whose BUCKET-index writes sent new keys to log files: those file
    groups have no footer that speaks for all their keys, so BLOOM reads their keys (base and
    logs) as SIMPLE does, and updates the key there rather than inserting it again."""
    path = str(tmp_path / "t")
    bucket = id_dt_ts_config("bloomed", "MERGE_ON_READ", {
        "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
        "hoodie.compact.inline": "false",
    })  # fmt: skip
    table = HoodieTable.for_write(path, bucket)
    table.upsert(spark.createDataFrame(_rows([str(i) for i in range(10)], A, 1), SCHEMA), bucket)
    table.upsert(spark.createDataFrame(_rows(["100", "101"], A, 1), SCHEMA), bucket)
    table.upsert(spark.createDataFrame(_rows(["100", "5"], A, 2, "b"), SCHEMA),
                 _config("MERGE_ON_READ"))  # fmt: skip
    rows = snapshot(table, spark)
    assert len(rows) == 12
    assert rows["100"]["name"] == "b100" and rows["5"]["name"] == "b5"
    assert rows["101"]["name"] == "v101"


def test_inserts_check_existing_keys_under_bloom(spark, tmp_path):
    """insert with dup policy drop skips stored keys, fail stops naming them: BLOOM can tell
    which keys exist."""
    path = str(tmp_path / "t")
    cfg = _config("COPY_ON_WRITE")
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame(_rows(["1", "2"], A, 1), SCHEMA), cfg)
    drop = _config("COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "insert",
                                        "hoodie.datasource.insert.dup.policy": "drop"})  # fmt: skip
    result = table.write(spark.createDataFrame(_rows(["1", "3"], A, 5, "x"), SCHEMA), drop)
    assert result.num_inserts == 1 and result.num_updates == 0
    assert {k: v["name"] for k, v in snapshot(table, spark).items()} == {
        "1": "v1",
        "2": "v2",
        "3": "x3",
    }
    fail = _config("COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "bulk_insert"})
    with pytest.raises(RecordKeyExistsError, match="'2'"):
        table.write(spark.createDataFrame(_rows(["2", "4"], A, 5, "x"), SCHEMA), fail)
    assert len(snapshot(table, spark)) == 3


def test_batches_too_large_for_the_driver_join_the_bloom_lookup(spark, tmp_path, monkeypatch):
    """Above KEY_FILTER_MAX_ROWS the batch joins the lookup's result in Spark (no keys on the
    driver): updates, deletes of stored and unknown keys, inserts, on merge-on-read."""
    monkeypatch.setattr(simple, "KEY_FILTER_MAX_ROWS", 0)
    path = str(tmp_path / "t")
    cfg = _config("MERGE_ON_READ", **{"hoodie.parquet.small.file.limit": "0"})
    table = HoodieTable.for_write(path, cfg)
    table.upsert(spark.createDataFrame(_rows([str(i) for i in range(10)], A, 1), SCHEMA), cfg)
    table.upsert(spark.createDataFrame(_rows([str(i) for i in range(10, 20)], B, 1), SCHEMA), cfg)
    batch = _rows(["3"], A, 2, "u") + _rows(["15"], B, 2, "u") + _rows(["4"], A, 2, "", True)
    table.upsert(spark.createDataFrame(batch + _rows(["99"], B, 2, "n"), SCHEMA), cfg)
    table.delete(spark.createDataFrame([("5", A), ("77", A)], "id string, dt string"), cfg)
    expected = {str(i): f"v{i}" for i in range(20) if i not in (4, 5)}
    expected |= {"3": "u3", "15": "u15", "99": "n99"}
    assert {k: v["name"] for k, v in snapshot(table, spark).items()} == expected


def test_a_global_lookup_finds_keys_in_every_partition(spark, tmp_path):
    """locate_by_bloom with global_lookup: a key is found in whichever partition stores it,
    reported with that (stored) partition; without it only in the key's own partition."""
    path = str(tmp_path / "t")
    cfg = _config("MERGE_ON_READ")
    table = HoodieTable.for_write(path, cfg)
    table.upsert(
        spark.createDataFrame(_rows(["a1", "a2"], A, 1) + _rows(["b1"], B, 1), SCHEMA), cfg
    )
    view = table.file_system_view()
    sources = [
        KeySource.of(g.latest_slice, with_logs=False)
        for g in view.file_groups()
        if g.latest_slice is not None
    ]
    file_of = {s.partition_path: s.file_id for s in sources}
    keys = spark.createDataFrame(
        [("a1", B), ("b1", B), ("zz", A), ("a2", "elsewhere")],
        "_hoodie_record_key string, _hoodie_partition_path string",
    )

    def located(global_lookup: bool) -> set[tuple[str, str, str]]:
        frame = locate_by_bloom(spark, keys, table.storage, sources, view.committed, 2,
                                global_lookup=global_lookup)  # fmt: skip
        return {tuple(r) for r in frame.collect()}

    assert located(True) == {("a1", A, file_of[A]), ("a2", A, file_of[A]), ("b1", B, file_of[B])}
    assert located(False) == {("b1", B, file_of[B])}


@pytest.mark.parametrize("kind", ["DYNAMIC_V0", pytest.param("SIMPLE", marks=pytest.mark.full)])
def test_a_rewritten_files_filter_grows_from_the_previous_ones(spark, tmp_path, kind):
    """A copy-on-write upsert keeps a file's stored rows in their order, updated in place, and
    adds its new keys after them, so the new file's filter is the old one's with the new keys'
    bits set (`grown_filter_footer`) rather than every key hashed again; after every write,
    growing past a vector, past the dynamic filter's bound, and a delete (made anew), each
    base file's filter is the one made of its keys in its order."""
    path = str(tmp_path / "t")
    cfg = id_dt_ts_config("grown", "COPY_ON_WRITE", {
        "hoodie.index.bloom.num_entries": "50",
        "hoodie.bloom.index.filter.dynamic.max.entries": "120",
        "hoodie.bloom.index.filter.type": kind,
    })  # fmt: skip
    spec = cfg.bloom_filter
    table = HoodieTable.for_write(path, cfg)
    storage = load_file_io(path)

    def files() -> dict[str, list[str]]:
        """Each latest base file's keys in its order, checking its filter on the way."""
        out = {}
        for f in table.file_system_view().latest_base_files():
            parquet = storage.parquet_file(f.relative_path)
            keys = parquet.read(columns=["_hoodie_record_key"]).column(0)
            footer = parquet.metadata.metadata
            made = bloom_filter_footer(keys, spec)
            assert {k: footer.get(k) for k in made} == made, f.relative_path
            assert (BLOOM_TYPE_FOOTER in footer) == (kind == "DYNAMIC_V0")
            out[f.file_id] = keys.to_pylist()
        return out

    table.upsert(spark.createDataFrame(_rows([f"{i:03}" for i in range(100)], A, 1), SCHEMA), cfg)
    (first,) = files().values()
    batches = [
        [*range(0, 60, 2), *range(100, 170)],  # 30 updates, 70 new keys: 170 > the bound
        [*range(1, 20, 2), *range(170, 175)],  # 10 updates, 5 new keys
    ]
    for n, batch in enumerate(batches, start=2):
        keys = [f"{i:03}" for i in batch]
        table.upsert(spark.createDataFrame(_rows(keys, A, n, name=f"v{n}"), SCHEMA), cfg)
        (now,) = files().values()
        assert now[: len(first)] == first  # stored keys in place, new ones after them
        assert sorted(now[len(first) :]) == sorted(set(keys) - set(first))
        first = now
    assert snapshot(table, spark)["011"]["name"] == "v3011"
    table.delete(spark.createDataFrame([("005", A), ("120", A)], "id string, dt string"), cfg)
    (now,) = files().values()
    assert now == [k for k in first if k not in ("005", "120")]

"""Read plans through a table's metadata table against plans by listing storage.

`assert_reads_list_alike(meta)`: for a snapshot, a read-optimized read, a time-travel read at
every completed write and an incremental read from before every write, the plan through the
metadata table (the readers' default, `hoodie.metadata.enable`) is the plan by listing
storage: the same file slices, files, sizes and recorded blocks. Plans need no Spark.

`assert_metadata_table_whole(meta)`: for a table whose writers kept its metadata table from its
first write on, after they are done: its `files` partition lists what storage holds of completed
instants, no metadata table instant is pending, and every completed data instant has its
completed delta commit there.
"""

from __future__ import annotations

import datetime
import zlib
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodie.exceptions import HoodieError
from hoodie.fs_view import CommittedInstants, FileSystemView
from hoodie.hfile import BLOCK_HEADER_SIZE, Deflate, HFileReader
from hoodie.logformat import read_log_file
from hoodie.markers import WriteMarkers
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata_records import bloom_filter_key
from hoodie.naming import parse_base_file_name, parse_log_file_name
from hoodie.read.options import ReadOptions
from hoodie.read.planner import ReadPlan, plan_read
from hoodie.table_metadata import MetadataListing, TableMetadata
from hoodie.timeline import Action

OFF = {"hoodie.metadata.enable": "false"}
QUERY_TYPE = "hoodie.datasource.query.type"
BEGIN = "hoodie.datasource.read.begin.instanttime"


def plan(meta: HoodieTableMetaClient, **options: str) -> ReadPlan:
    return plan_read(meta, ReadOptions.parse(options))


def settled(plan: ReadPlan) -> ReadPlan:
    """The plan less the log files no completed write recorded blocks in (and sizes, which
    count them). One known difference: in table version 6 a write that failed after its
    metadata table commit leaves a log file named by its slice's (committed) base instant,
    holding only its blocks and, once rolled back, the rollback's command block; storage
    lists it, the metadata table (as our writer keeps it) does not. Its blocks count for
    nothing either way."""
    return replace(
        plan,
        splits=[
            replace(
                split,
                log_files=tuple(f for f, w in zip(split.log_files, split.log_writes) if w),
                log_writes=tuple(w for w in split.log_writes if w),
                size=0,
            )
            for split in plan.splits
        ],
    )


def assert_same_plans(meta: HoodieTableMetaClient, **options: str) -> ReadPlan | None:
    """The plan through the metadata table is the plan by listing storage (or both fail
    alike: a time-travel read to a file version a clean deleted is refused either way)."""
    try:
        listed = plan(meta, **options, **OFF)
    except HoodieError as error:
        with pytest.raises(type(error)) as through_error:
            plan(meta, **options)
        assert str(through_error.value) == str(error), options
        return None
    through = plan(meta, **options)
    if through != listed and settled(through) != settled(listed):
        only_through = [s for s in through.splits if s not in listed.splits]
        only_listed = [s for s in listed.splits if s not in through.splits]
        raise AssertionError(f"{options}: through the metadata table {only_through}, by "
                             f"listing {only_listed}")  # fmt: skip
    return through


def assert_reads_list_alike(meta: HoodieTableMetaClient, step: str = "") -> None:
    timeline = meta.timeline()
    assert isinstance(meta.file_listing(timeline, True), MetadataListing), step
    assert_same_plans(meta)
    assert_same_plans(meta, **{QUERY_TYPE: "read_optimized"})
    writes = timeline.completed.write_timeline.timestamps()
    for instant in writes:
        assert_same_plans(meta, **{"as.of.instant": instant})
    for begin in ["0", *writes[:-1]]:
        assert_same_plans(meta, **{QUERY_TYPE: "incremental", BEGIN: begin})


def storage_listing(meta: HoodieTableMetaClient) -> dict[str, dict[str, int]]:
    """Every partition's base and log files of completed instants on storage, name -> size
    (less files pending instants' markers name: a version 6 log file names its slice's base
    instant, not the pending write that wrote it)."""
    timeline = meta.timeline()
    committed = CommittedInstants.of(timeline)
    pending = {m.data_file for i in timeline.pending
               for m in WriteMarkers(meta.storage, i.timestamp).all()}  # fmt: skip
    out: dict[str, dict[str, int]] = {}
    for partition in FileSystemView(meta.storage, timeline).partitions():
        for info in meta.storage.list_files(partition):
            parsed = parse_base_file_name(info.name) or parse_log_file_name(info.name)
            if parsed and parsed.instant in committed and info.relative_path not in pending:
                out.setdefault(partition, {})[info.name] = info.size
    return out


def assert_metadata_table_whole(meta: HoodieTableMetaClient, step: str = "") -> TableMetadata:
    """The metadata table of a table written with it on from the first write, once its writers
    are done: `files` lists what storage holds; none of its instants is pending; every
    completed data instant but a savepoint (which changes no file) has its completed delta
    commit, at the data instant's time."""
    metadata = TableMetadata.open(meta)
    assert metadata is not None, f"{step}: no metadata table"
    listed = {p: metadata.files_in_partition(p) for p in metadata.all_partition_paths()}
    assert {p: f for p, f in listed.items() if f} == storage_listing(meta), step
    pending = [str(i) for i in metadata.timeline.pending]
    assert not pending, f"{step}: metadata table instants left pending: {pending}"
    deltas = {i.timestamp for i in metadata.timeline.completed if i.action is Action.DELTA_COMMIT}
    missing = [str(i) for i in metadata.data_timeline.completed
               if i.action is not Action.SAVEPOINT and i.timestamp not in deltas]  # fmt: skip
    assert not missing, f"{step}: completed without their metadata table delta commit: {missing}"
    return metadata


def _expected_ranges(meta: HoodieTableMetaClient, partition: str, name: str) -> dict:
    """Each column's (min, max, value count, null count) of one data file, worked out here
    with pyarrow's compute functions on its rows (not the writer's path: footers), as
    Apache Hudi's column stats hold them: value counts with nulls; a log file's rows are its
    data blocks' (deletes only: none)."""
    relative = f"{partition}/{name}" if partition else name
    if parse_base_file_name(name) is not None:
        with meta.storage.parquet_file(relative) as parquet:
            rows = parquet.read()
    else:
        tables = [b.records() for b in read_log_file(meta.storage, relative) if b.is_data_block]
        rows = pa.concat_tables(tables) if tables else None
    if rows is None:
        return {}
    out = {}
    for column in rows.column_names:
        values = rows.column(column)
        if pa.types.is_timestamp(values.type):
            values = values.cast(pa.int64())
        bounds = pc.min_max(values).as_py() if values.null_count < len(values) else None
        low, high = (bounds["min"], bounds["max"]) if bounds else (None, None)
        out[column] = (low, high, len(values), values.null_count)
    return out


def deflated_with(hfile: bytes, deflate: Deflate) -> bool:
    """Is each data block of an HFile the gzip stream `deflate` makes of its bytes? (zlib's
    output for a level and strategy is deterministic; other settings may give the same
    stream for a small block.)"""
    reader = HFileReader(hfile, "deflated.hfile")
    for entry in reader.data_index:
        header = reader.block_header(entry.offset)
        stored = hfile[entry.offset + BLOCK_HEADER_SIZE : entry.offset
                       + header.on_disk_data_size_with_header]  # fmt: skip
        raw = zlib.decompress(stored, 16 + zlib.MAX_WBITS)
        deflater = zlib.compressobj(deflate.level, zlib.DEFLATED, -zlib.MAX_WBITS,
                                    zlib.DEF_MEM_LEVEL, deflate.strategy)  # fmt: skip
        if deflater.compress(raw) + deflater.flush() != stored[10:-8]:  # less gzip's frame
            return False
    return True


def _stored(value):
    return None if value is None else value.value


def assert_indexes_whole(meta: HoodieTableMetaClient, step: str = "") -> None:
    """The `column_stats` and `bloom_filters` partitions of a table written with them on from
    its first write: every base and log file storage holds of completed instants has a record
    for each indexed column, whose bounds and counts are the file's rows' (`_expected_ranges`),
    and every base file its footer's bloom filter; no file storage lacks has any left. At least
    one of the two must be built (a check of neither would pass any table)."""
    metadata = TableMetadata.open(meta)
    assert metadata is not None, f"{step}: no metadata table"
    built = {"column_stats", "bloom_filters"} & set(metadata.partitions())
    assert built, f"{step}: neither index is built: {metadata.partitions()}"
    listing = storage_listing(meta)
    if "column_stats" in built:
        stored = {}
        for record in metadata.read_partition("column_stats").values():
            if not record.is_deleted:
                stored[(record.file_name, record.column_name)] = record
        files = {name for names in listing.values() for name in names}
        stray = sorted({f for f, _ in stored} - files)
        assert not stray, f"{step}: column stats of files storage lacks: {stray}"
        for partition, names in listing.items():
            for name in names:
                expected = _expected_ranges(meta, partition, name)
                columns = {c for f, c in stored if f == name}
                assert columns, f"{step}: no column stats for {partition}/{name}"
                assert columns <= set(expected) or not expected, (step, name, columns)
                for column in columns:
                    record = stored[(name, column)]
                    got = (_stored(record.min_value), _stored(record.max_value),
                           record.value_count, record.null_count)  # fmt: skip
                    want = expected.get(column, (None, None, 0, 0))
                    if isinstance(want[0], datetime.date):
                        got = (
                            *(datetime.date(1970, 1, 1) + datetime.timedelta(days=v)
                              if isinstance(v, int) else v for v in got[:2]),
                            *got[2:],
                        )  # fmt: skip
                    assert got == want, f"{step}: {partition}/{name} {column}: {got} != {want}"
    if "bloom_filters" in built:
        blooms = {}
        for record in metadata.read_partition("bloom_filters").values():
            if not record.is_deleted:
                blooms[record.key] = record
        base_files = [(p, n) for p, names in listing.items() for n in names
                      if parse_base_file_name(n) is not None]  # fmt: skip
        assert len(blooms) == len(base_files), f"{step}: {len(blooms)} filters, {base_files}"
        for partition, name in base_files:
            key = bloom_filter_key(partition or ".", name)
            assert key in blooms, f"{step}: no bloom filter for {partition}/{name}"
            with meta.storage.parquet_file(f"{partition}/{name}" if partition else name) as pf:
                footer = pf.metadata.metadata
            assert blooms[key].bloom_filter == footer[b"org.apache.hudi.bloomfilter"], name
            kind = footer.get(b"hoodie_bloom_filter_type_code", b"SIMPLE").decode()
            assert blooms[key].filter_type == kind, name
            assert blooms[key].timestamp == parse_base_file_name(name).instant, name


def _file_id_of(file_name: str) -> str:
    """The file group of a row by its `_hoodie_file_name`: a base file's name, or (a log
    record's, as Apache Hudi and we stamp them) the file id itself."""
    parsed = parse_base_file_name(file_name)
    return parsed.file_id if parsed is not None else file_name


def table_locations(spark, meta: HoodieTableMetaClient) -> dict[str, tuple[str, str]]:
    """{key: (partition path, file id)} of the table as a snapshot read gives it; a key read
    twice is an error (the table's own trouble, which no record index can mirror)."""
    frame = spark.read.format("hoodie").load(meta.base_uri)
    rows = frame.select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")
    out: dict[str, tuple[str, str]] = {}
    read = rows.toArrow()
    for key, partition, name in zip(
        read.column("_hoodie_record_key").to_pylist(),
        read.column("_hoodie_partition_path").to_pylist(),
        read.column("_hoodie_file_name").to_pylist(),
        strict=True,
    ):
        assert key not in out, f"key {key!r} read twice: {out[key]} and {(partition, name)}"
        out[key] = (partition or "", _file_id_of(name))
    return out


def record_index_locations(meta: HoodieTableMetaClient) -> dict[str, tuple[str, str]]:
    """{key: (partition path, file id)} as the metadata table's `record_index` holds them."""
    metadata = TableMetadata.open(meta)
    assert metadata is not None, "no metadata table"
    assert "record_index" in metadata.partitions(), f"no record index: {metadata.partitions()}"
    out = {}
    for key, record in metadata.read_partition("record_index").items():
        out[key] = ("" if record.partition in (None, ".") else record.partition, record.file_id)
    return out


def assert_record_index_whole(spark, meta: HoodieTableMetaClient, step: str = "") -> int:
    """The `record_index` partition equals {key: (partition, file id)} of the table as read,
    and every entry's instant time is an instant of the table at or before its latest; the
    number of keys."""
    meta = HoodieTableMetaClient.load(meta.storage)
    stored = record_index_locations(meta)
    expected = table_locations(spark, meta)
    missing = sorted(set(expected) - set(stored))
    stray = sorted(set(stored) - set(expected))
    assert not missing, f"{step}: {len(missing)} key(s) not in the record index: {missing[:5]}"
    assert not stray, f"{step}: {len(stray)} key(s) the table lacks: {stray[:5]}"
    wrong = {k: (stored[k], expected[k]) for k in expected if stored[k] != expected[k]}
    shown = list(wrong.items())[:5]
    assert not wrong, f"{step}: {len(wrong)} key(s) misplaced (index, table): {shown}"
    metadata = TableMetadata.open(meta)
    # and readers find each key where they look: in the file group its hash names
    found = metadata.read_record_index([*expected, "no-such-key"])
    looked_up = {k: (v.partition_path, v.file_id) for k, v in found.items()}
    assert looked_up == expected, f"{step}: a key looked up is not where the table holds it"
    zone = metadata.data_timezone
    latest = meta.timeline().completed.last_timestamp()
    for key, record in metadata.read_partition("record_index").items():
        when = record.instant_time(zone)
        assert when is not None and when <= latest, f"{step}: {key}: instant {when} > {latest}"
    return len(stored)

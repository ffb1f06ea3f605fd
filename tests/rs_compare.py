"""Comparing our rows with hudi-rs's: both sides read as pyarrow tables, normalised and sorted.

Normalisation, all lossless for equal data:
- timestamps: compared as UTC-aware datetimes (a naive value is taken as UTC, Spark's session
  time zone in the tests);
- maps: pyarrow gives a list of (key, value) pairs; compared as dicts (entry order carries no
  meaning);
- decimals: compared as normalised `Decimal` (12345.67890 == 12345.6789), floats exactly;
- nullability flags are ignored (hudi-rs marks meta columns non-null).
"""

from __future__ import annotations

import datetime
import decimal
import posixpath

import pyarrow as pa


def normalise(value, dtype: pa.DataType):
    if value is None:
        return None
    if pa.types.is_map(dtype):
        return {k: normalise(v, dtype.item_type) for k, v in value}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [normalise(v, dtype.value_type) for v in value]
    if pa.types.is_struct(dtype):
        return {f.name: normalise(value[f.name], f.type) for f in dtype}
    if pa.types.is_timestamp(dtype):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.astimezone(datetime.timezone.utc)
    if isinstance(value, decimal.Decimal):
        return value.normalize()
    return value


def rows_of(table: pa.Table | None, columns: list[str], key: str) -> list[dict]:
    """Rows as normalised dicts of `columns`, sorted by `key`, then by the whole row (a key
    may be in several partitions: a non-global index keeps one row per partition)."""
    if table is None or table.num_rows == 0:
        return []
    picked = table.select(columns)
    types = {f.name: f.type for f in picked.schema}
    rows = [{c: normalise(v, types[c]) for c, v in row.items()} for row in picked.to_pylist()]
    return sorted(rows, key=lambda r: (str(r[key]), repr(sorted(r.items(), key=lambda kv: kv[0]))))


def assert_same_rows(name: str, key: str, ours: pa.Table, theirs: pa.Table | None) -> list[dict]:
    """Assert ours == hudi-rs's on every column hudi-rs returns; gives the rows compared."""
    columns = theirs.column_names if theirs is not None else list(ours.column_names)
    missing = [c for c in columns if c not in ours.column_names]
    assert not missing, f"{name}: we lack columns {missing}"
    expected = rows_of(theirs, columns, key)
    got = rows_of(ours, columns, key)
    assert len(got) == len(expected), f"{name}: {len(got)} rows, hudi-rs {len(expected)}"
    assert got == expected
    return got


def read_ours(spark, path: str, **options) -> pa.Table:
    """The table read through the `hoodie` Spark data source with these read options."""
    return spark.read.format("hoodie").options(**options).load(path).toArrow()


def assert_table_read_agrees(spark, path: str, key: str, **options) -> None:
    """`HoodieTable.read` gives the data source's rows and schema, and Spark's parquet reader
    scans exactly the latest base files with nothing to merge (every one for read-optimized
    queries; those of slices without log files for snapshots), the data source the others."""
    from hoodie import HoodieTable
    from hoodie.read.options import QUERY_TYPE, READ_OPTIMIZED

    table = HoodieTable.open(path)
    read = table.read(spark, options)
    ours = read_ours(spark, path, **options)
    got = read.toArrow()
    assert got.schema == ours.schema, (path, options)
    assert rows_of(got, got.column_names, key) == rows_of(ours, ours.column_names, key)
    merges = options.get(QUERY_TYPE) != READ_OPTIMIZED
    unmerged = {
        group.latest_slice.base_file.name
        for group in table.file_system_view().file_groups()
        if group.latest_slice is not None
        and group.latest_slice.base_file is not None
        and not (merges and group.latest_slice.log_files)
    }
    assert {posixpath.basename(uri) for uri in read.inputFiles()} == unmerged, (path, options)


def read_theirs(table, options=None) -> pa.Table | None:
    """hudi-rs's rows (`table`: a `hudi.HudiTable`), or None when it returns no batch at all
    (it then gives no schema)."""
    batches = table.read(options) if options is not None else table.read()
    return pa.Table.from_batches(batches) if batches else None


def assert_history_agrees(spark, path: str, writes, key: str = "_hoodie_record_key") -> None:
    """Ours == hudi-rs's at every write (time travel to its instant) and for the incremental
    range between each two consecutive writes (by completion time: table version 8).
    `writes`: the table's completed write instants, oldest first."""
    import hudi

    table = hudi.HudiTable(path)
    for instant in writes:
        ours = read_ours(spark, path, **{"as.of.instant": instant.timestamp})
        theirs = read_theirs(table, hudi.HudiReadOptions().with_as_of_timestamp(instant.timestamp))
        assert_same_rows(f"as of {instant.timestamp}", key, ours, theirs)
    ends = [i.completion_time for i in writes]
    for begin, end in zip(ends, ends[1:]):
        options = (
            hudi.HudiReadOptions()
            .with_query_type(hudi.HudiQueryType.Incremental)
            .with_start_timestamp(begin)
            .with_end_timestamp(end)
        )
        ours = read_ours(spark, path, **{
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": begin,
            "hoodie.datasource.read.end.instanttime": end,
        })  # fmt: skip
        assert_same_rows(f"incremental ({begin}, {end}]", key, ours, read_theirs(table, options))

"""Data skipping: the file slices of a read's plan no row of which can match its filters.

Apache Hudi skips files by the `column_stats` partition of its metadata table (per file and
column: min, max, null and value counts) and, for record key equalities, by its
`bloom_filters` partition. Where the read lists through the metadata table and the table lists
those partitions as completed, so do we: one lookup for all candidate base files
(`TableMetadata.column_stats_of`, `bloom_filters_of`), no footer read for a file they decide.
Everything else comes from where those partitions take it, the base files' parquet footers:
per row group, each column's min, max and null count, and the record key range and bloom
filter Hudi's writers (and ours) keep in the footer. A footer is read for a file the metadata
table has no usable statistics of (a table without the partitions, a file written by a writer
that does not keep them, a column not indexed, a value not compared exactly: see
`indexed_column_stats`) when the metadata table alone could not rule it out. The footers are
read on the driver, a thread per file up to `FOOTER_THREADS` at once (a footer is one small
read, two with the bloom filter's few hundred KB; the native path reads them anyway to check
the files' types): a Spark job of footer tasks costs more in scheduling than the reads take
(`bench/read_skipping.py`).

Soundness first, so a slice is skipped only when no row of it can match:
- a row group can match unless its statistics rule the predicate out; a file can match if
  one of its row groups can, or its key range and bloom filter allow one of the keys an
  equality on the record key names (a bloom filter has no false negatives);
- a slice whose log files the read merges is never skipped by its base file alone: a log may
  hold a newer version of a row, which the base file's statistics do not describe. It is
  decided by the statistics of all its files combined per column (the base file's and every
  log file's: min of mins, max of maxes, null counts summed; `combine`), where the metadata
  table's `column_stats` holds every log file's (as our writers and Apache Hudi's keep them:
  from the rows of its data blocks; a log of deletes only has none, and deletes only remove
  rows, so it bounds nothing). Per column, not file by file, so that it stays sound under
  partial updates, where a merged row takes one column from a log and another from the base
  file. A log file the metadata table has no usable statistics of (not indexed, a column not
  indexed, a read not listing through it) keeps the slice unchecked: log files are not read
  for statistics. The stats are looked up for exactly the log files the read merges (the
  plan's: those of completed instants; a rolled-back or failed write's log file is not
  listed, and its blocks in a shared log file, which the reader skips, only widen that file's
  statistics, as the metadata table merges a file's records of several writes). A record key
  filter on such a slice uses the combined range of `_hoodie_record_key` (bloom filters cover
  base files only), only where every file has it and the table keeps its meta columns;
- a record key filter (equality or IN on the key) on a snapshot read as of the table's latest
  instant, listed through the metadata table with a completed `record_index`, keeps only the
  slices of the file groups the index puts its keys in (up to `RECORD_INDEX_MAX_KEYS` keys,
  looked up on the driver by `TableMetadata.read_record_index`), slices with logs too; never
  for time travel, incremental or read-optimized reads (the index describes the latest state
  only), nor where the metadata table counts a commit the plan did not see
  (`_index_is_of`);
- a column the base file lacks (added by schema evolution) is null in all its rows, as the
  reader reads it;
- only types whose order in parquet statistics is Spark's are compared: integers, dates,
  booleans, strings and binary (both ordered by their unsigned bytes in parquet and by
  Spark; Python orders `str` by code point, which is UTF-8's byte order); floats and doubles
  only by `<`, `<=`, `=` and IN (parquet statistics leave NaN out, and Spark orders NaN above
  every number, so `>` or `!=` may match a NaN the statistics do not show); decimals,
  timestamps and the rest by IS [NOT] NULL only. A statistic of a column whose type schema
  evolution widened is cast to the table's type first (Spark compares the widened value);
- the record key range is Java's order (UTF-16 units, as Hudi's writers take it), so a key is
  compared with it in that order;
- the metadata table's statistics are of whole files (Apache Hudi merges its row groups' in
  Java's orders), so only bounds every order agrees on are taken: strings and binary values
  of ASCII only (else the footer decides), and a wrapper of the type the table's column has
  (or one schema evolution widens to it); NaN bounds, decimals and timestamps give null
  counts only, as in footers.
"""

from __future__ import annotations

import logging
import math
import posixpath
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

from ..bloom_filter import BLOOM_FILTER_FOOTER, BLOOM_TYPE_FOOTER, StoredFilter
from ..exceptions import MalformedMetadataError
from ..fs_view import CommittedInstants, damaged_data_file
from ..metadata_records import BloomFilterRecord, ColumnStatsRecord, StatKind
from ..schema import MAX_KEY_FOOTER, MIN_KEY_FOOTER, RECORD_KEY
from ..storage import FileIO
from ..table_metadata import (
    BLOOM_FILTERS,
    COLUMN_STATS,
    RECORD_INDEX,
    SOLO_COMMIT_TIMESTAMP,
    TableMetadata,
)
from ..timeline import Action
from .planner import FileSplit
from .predicates import AllOf, Among, AnyOf, Compare, KeyIn, NullCheck, Predicate, Prefix

log = logging.getLogger(__name__)

FOOTER_THREADS = 16  # footers read at once on the driver
# The most record keys a read looks up in the record index on the driver; a filter naming more
# is left to the statistics (each key is a lookup in the metadata table's HFiles).
RECORD_INDEX_MAX_KEYS = 1000

# How a column's statistics may be used, by the table's type of it.
ORDERED, FLOATING, NULLS_ONLY = "ordered", "floating", "nulls only"


def kind_of(dtype: pa.DataType) -> str:
    if (
        pa.types.is_integer(dtype)
        or pa.types.is_date32(dtype)
        or pa.types.is_boolean(dtype)
        or pa.types.is_string(dtype)
        or pa.types.is_large_string(dtype)
        or pa.types.is_binary(dtype)
        or pa.types.is_large_binary(dtype)
    ):
        return ORDERED
    if pa.types.is_floating(dtype):
        return FLOATING
    return NULLS_ONLY


@dataclass(frozen=True)
class ColumnStats:
    """One column of one row group: rows, nulls (None: unknown) and the bounds of its non-null
    values (`bounded` False: none known; with `nulls == rows` the column is all null)."""

    rows: int
    nulls: int | None
    low: Any = None
    high: Any = None
    bounded: bool = False

    @property
    def all_null(self) -> bool:
        return self.nulls is not None and self.nulls == self.rows


@dataclass
class Footer:
    """What a base file's footer tells: its Arrow schema, each row group's column statistics
    (a column absent from a row group's map has none usable), the key range and the bloom
    filter (the last three worked out from the footer when first asked: the native path reads
    footers for their schema alone)."""

    path: str
    schema: pa.Schema
    metadata: Any  # pyarrow's FileMetaData, from `FileIO.parquet_file`
    _bloom: StoredFilter | None = None
    _bloom_read: bool = False

    @classmethod
    def read(cls, storage: FileIO, relative: str) -> Footer:
        with damaged_data_file(storage, relative, "a parquet base file"):
            with storage.parquet_file(relative) as parquet:
                return cls(relative, parquet.schema_arrow, parquet.metadata)

    @cached_property
    def rows(self) -> list[int]:
        return [self.metadata.row_group(g).num_rows for g in range(self.metadata.num_row_groups)]

    @cached_property
    def groups(self) -> list[dict[str, ColumnStats]]:
        metadata = self.metadata
        leaves = {}  # top-level primitive column -> its leaf index
        for index in range(metadata.num_columns):
            name = metadata.schema.column(index).path
            if "." not in name and name in self.schema.names:
                leaves[name] = index
        groups = []
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            stats = {}
            for name, index in leaves.items():
                found = _column_stats(group.column(index).statistics, group.num_rows)
                if found is not None:
                    stats[name] = found
            groups.append(stats)
        return groups

    @cached_property
    def key_values(self) -> dict[bytes, bytes]:
        return dict(self.metadata.metadata or {})

    @cached_property
    def key_range(self) -> tuple[str, str] | None:
        """The footer's record key range (Java's order), if it has one."""
        low, high = self.key_values.get(MIN_KEY_FOOTER), self.key_values.get(MAX_KEY_FOOTER)
        if low is None or high is None:
            return None
        try:
            return low.decode(), high.decode()
        except UnicodeDecodeError:
            return None

    def bloom(self) -> StoredFilter | None:
        """The footer's bloom filter; None where it has none or one we do not read (a read
        stays right without it: the file is kept)."""
        if not self._bloom_read:
            self._bloom_read = True
            try:
                self._bloom = StoredFilter.of(self.key_values)
            except MalformedMetadataError as error:
                if BLOOM_FILTER_FOOTER in self.key_values:
                    log.warning(
                        "data skipping ignores the bloom filter of %s: %s", self.path, error
                    )
                self._bloom = None
        return self._bloom


def _column_stats(stats: Any, rows: int) -> ColumnStats | None:
    if stats is None:
        return None
    nulls = stats.null_count if stats.has_null_count else None
    if not stats.has_min_max:
        return ColumnStats(rows, nulls)
    try:
        low, high = stats.min, stats.max
    except (ValueError, TypeError, pa.ArrowException):
        return ColumnStats(rows, nulls)
    return ColumnStats(rows, nulls, low, high, bounded=True)


def read_footers(storage: FileIO, paths: Iterable[str]) -> dict[str, Footer]:
    """The footers of `paths`, read by threads on the driver."""
    files = sorted(set(paths))
    if not files:
        return {}
    with ThreadPoolExecutor(max_workers=min(FOOTER_THREADS, len(files))) as pool:
        return dict(zip(files, pool.map(lambda path: Footer.read(storage, path), files)))


def read_schemas(storage: FileIO, paths: Iterable[str]) -> dict[str, pa.Schema]:
    """The Arrow schemas of the base files `paths`, read by threads on the driver; their
    footers are let go as soon as read."""
    files = sorted(set(paths))
    if not files:
        return {}
    with ThreadPoolExecutor(max_workers=min(FOOTER_THREADS, len(files))) as pool:
        return dict(zip(files, pool.map(lambda path: Footer.read(storage, path).schema, files)))


# -- the metadata table's statistics -----------------------------------------------------------

# The Arrow type of each column stats wrapper whose values compare as Spark compares the column.
_WRAPPED_TYPES = {
    StatKind.BOOLEAN: pa.bool_(),
    StatKind.INT: pa.int32(),
    StatKind.LONG: pa.int64(),
    StatKind.FLOAT: pa.float32(),
    StatKind.DOUBLE: pa.float64(),
    StatKind.BYTES: pa.binary(),
    StatKind.STRING: pa.string(),
    StatKind.DATE: pa.date32(),
    StatKind.LOCAL_DATE: pa.date32(),
}


def _same_order(stored: pa.DataType, wanted: pa.DataType) -> bool:
    """Whether values of `stored` compare, as they are or widened, as Spark compares the
    table's `wanted` type."""
    if pa.types.is_integer(stored):
        return pa.types.is_integer(wanted) or pa.types.is_floating(wanted)
    if pa.types.is_floating(stored):
        return pa.types.is_floating(wanted) and stored.bit_width <= wanted.bit_width
    if pa.types.is_string(stored):
        return pa.types.is_string(wanted) or pa.types.is_large_string(wanted)
    if pa.types.is_binary(stored):
        return pa.types.is_binary(wanted) or pa.types.is_large_binary(wanted)
    return bool(stored == wanted)  # booleans, dates


def indexed_column_stats(record: ColumnStatsRecord, wanted: pa.DataType) -> ColumnStats | None:
    """A `column_stats` record of a base file as the evaluator's statistics of the whole file,
    in terms of the table's type `wanted` of the column; None where the record cannot be used
    (the footer decides then): no value count, counts that do not add up, a nested column, a
    wrapper of another type, bounds on one side only or out of order, strings or binary
    values beyond ASCII (Apache Hudi merges row groups' bounds in Java's order: UTF-16 units
    for strings, signed bytes for binary; on ASCII every order agrees). Value counts include
    nulls (Apache Hudi's, as parquet's column chunks count them). NaN bounds, and types
    compared by null counts only (`NULLS_ONLY`), keep the counts."""
    rows, nulls = record.value_count, record.null_count
    if rows is None or rows < 0 or (nulls is not None and not 0 <= nulls <= rows):
        return None
    if pa.types.is_nested(wanted) or pa.types.is_dictionary(wanted):
        return None
    counts = ColumnStats(rows, nulls)
    kind = kind_of(wanted)
    low, high = record.min_value, record.max_value
    if kind == NULLS_ONLY or (low is None and high is None):
        return counts
    if low is None or high is None or low.kind is not high.kind:
        return None
    stored = _WRAPPED_TYPES.get(low.kind)
    if stored is None or not _same_order(stored, wanted):
        return None
    lowest, highest = low.to_python(), high.to_python()
    if pa.types.is_string(stored) or pa.types.is_binary(stored):
        expected = str if pa.types.is_string(stored) else bytes
        if not all(isinstance(v, expected) and v.isascii() for v in (lowest, highest)):
            return None
    if stored != wanted and pa.types.is_integer(stored) and pa.types.is_floating(wanted):
        try:  # as Spark casts: round to nearest, still bounds
            lowest = pa.scalar(lowest, stored).cast(wanted, safe=False).as_py()
            highest = pa.scalar(highest, stored).cast(wanted, safe=False).as_py()
        except (pa.ArrowException, TypeError, ValueError):
            return None
    if kind == FLOATING and (_is_nan(lowest) or _is_nan(highest)):
        return counts
    try:
        if lowest > highest:
            return None
    except TypeError:
        return None
    return ColumnStats(rows, nulls, lowest, highest, bounded=True)


@dataclass(frozen=True)
class IndexedStats:
    """What the metadata table holds of one base file: its columns' statistics in the table's
    terms (`indexed_column_stats`; a column not here is the footer's to tell) and its bloom
    filter (None: the footer's)."""

    columns: dict[str, ColumnStats] = field(default_factory=dict)
    bloom: StoredFilter | None = None


def _bloom_of(record: BloomFilterRecord, where: str) -> StoredFilter | None:
    """A `bloom_filters` record's filter (stored as the footer stores it), None where it is
    one we do not read (the footer's is used then)."""
    footer = {
        BLOOM_FILTER_FOOTER: record.bloom_filter,
        BLOOM_TYPE_FOOTER: record.filter_type.encode(),
    }
    try:
        return StoredFilter.of(footer)
    except (MalformedMetadataError, ValueError) as error:
        log.warning(
            "data skipping ignores the metadata table's bloom filter of %s: %s", where, error
        )
        return None


def _leaves(predicate: Predicate) -> Iterator[Compare | Among | NullCheck | Prefix | KeyIn]:
    if isinstance(predicate, AllOf | AnyOf):
        for part in predicate.parts:
            yield from _leaves(part)
    else:
        yield predicate


def indexed_stats(
    metadata: TableMetadata | None,
    splits: list[FileSplit],
    predicate: Predicate,
    table: pa.Schema,
) -> dict[str, IndexedStats]:
    """The metadata table's statistics of the base files of `splits` (relative path ->
    `IndexedStats`) for the columns `predicate` names, and their bloom filters where it names
    record keys: one lookup in each of `column_stats` and `bloom_filters`, where the table
    lists them as completed. Files it knows nothing usable of are left out."""
    if metadata is None:
        return {}
    completed = metadata.partitions()
    leaves = list(_leaves(predicate))
    columns = sorted(
        {leaf.column for leaf in leaves if not isinstance(leaf, KeyIn)} & set(table.names)
    )
    with_stats = COLUMN_STATS in completed and bool(columns)
    with_blooms = BLOOM_FILTERS in completed and any(isinstance(x, KeyIn) for x in leaves)
    if not (with_stats or with_blooms):
        return {}
    files: dict[str, list[str]] = {}
    for split in splits:
        if split.base_file is not None:
            files.setdefault(split.partition_path, []).append(posixpath.basename(split.base_file))
    stats = metadata.column_stats_of(files, columns) if with_stats else {}
    blooms = metadata.bloom_filters_of(files) if with_blooms else {}
    out: dict[str, IndexedStats] = {}
    for split in splits:
        if split.base_file is None:
            continue
        path, name = split.partition_path, posixpath.basename(split.base_file)
        found: dict[str, ColumnStats] = {}
        for column in columns:
            record = stats.get((path, name, column))
            converted = indexed_column_stats(record, table.field(column).type) if record else None
            if converted is not None:
                found[column] = converted
        bloom_record = blooms.get((path, name))
        bloom = _bloom_of(bloom_record, split.base_file) if bloom_record is not None else None
        if found or bloom is not None:
            out[split.base_file] = IndexedStats(found, bloom)
    return out


def _needs_footer(predicate: Predicate, indexed: IndexedStats, table: pa.Schema) -> bool:
    """Whether a file the metadata table could not rule out may be by its footer: the
    predicate names a column the metadata table has no usable statistics of, or record keys
    and it has no bloom filter of the file."""
    for leaf in _leaves(predicate):
        if isinstance(leaf, KeyIn):
            if indexed.bloom is None:
                return True
        elif leaf.column in table.names and leaf.column not in indexed.columns:
            return True
    return False


# -- evaluation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatsEvaluator:
    """Whether a row group may hold a row matching a predicate, given the table's schema (the
    types Spark compares in) and the file's schema (the types the statistics are in)."""

    table: pa.Schema
    use_keys: bool = True

    def file_may_match(
        self, predicate: Predicate, footer: Footer | None, indexed: IndexedStats | None = None
    ) -> bool:
        """Whether the file may hold a matching row, by its footer (its row groups' statistics
        decide the columns) and what the metadata table holds of it (its bloom filter first;
        without a footer, its statistics of the whole file; a column neither has may match)."""
        if footer is None:
            return self._may(predicate, None, {}, 0, indexed)
        if not footer.groups:
            return False  # a file of no rows
        return any(
            self._may(predicate, footer, group, rows, indexed)
            for group, rows in zip(footer.groups, footer.rows)
        )

    def _may(
        self,
        predicate: Predicate,
        footer: Footer | None,
        group: dict[str, ColumnStats],
        rows: int,
        indexed: IndexedStats | None = None,
    ) -> bool:
        if isinstance(predicate, AllOf):
            return all(self._may(p, footer, group, rows, indexed) for p in predicate.parts)
        if isinstance(predicate, AnyOf):
            return any(self._may(p, footer, group, rows, indexed) for p in predicate.parts)
        if isinstance(predicate, KeyIn):
            return not self.use_keys or _keys_may_be_in(predicate.keys, footer, indexed)
        column = predicate.column
        if column not in self.table.names:
            return True
        if footer is not None:
            stats = self._stats(column, footer, group, rows)
        elif indexed is not None:
            stats = indexed.columns.get(column)
        else:
            stats = None
        if stats is None:
            return True
        try:
            return _leaf_may(predicate, stats, kind_of(self.table.field(column).type))
        except (TypeError, ValueError, ArithmeticError):
            return True  # a value that does not compare with the statistics

    def _stats(
        self, column: str, footer: Footer, group: dict[str, ColumnStats], rows: int
    ) -> ColumnStats | None:
        if column not in footer.schema.names:
            return ColumnStats(rows, rows)  # added after this file: null in every row
        stats = group.get(column)
        if stats is None or not stats.bounded:
            return stats
        wanted = self.table.field(column).type
        stored = footer.schema.field(column).type
        kind = kind_of(wanted)
        if kind == NULLS_ONLY:
            return ColumnStats(stats.rows, stats.nulls)
        low, high = stats.low, stats.high
        if stored != wanted:  # widened by schema evolution: compare as Spark reads it
            # (integer to floating point rounds to nearest, as Spark's cast: still bounds)
            safe = not (pa.types.is_integer(stored) and pa.types.is_floating(wanted))
            try:
                low = pa.scalar(low, stored).cast(wanted, safe=safe).as_py()
                high = pa.scalar(high, stored).cast(wanted, safe=safe).as_py()
            except (pa.ArrowException, TypeError, ValueError):
                return ColumnStats(stats.rows, stats.nulls)
        textual = pa.types.is_string(wanted) or pa.types.is_large_string(wanted)
        if textual and not (isinstance(low, str) and isinstance(high, str)):
            return ColumnStats(stats.rows, stats.nulls)  # not text: no bounds to trust
        if kind == FLOATING and (math.isnan(low) or math.isnan(high)):
            return ColumnStats(stats.rows, stats.nulls)
        return ColumnStats(stats.rows, stats.nulls, low, high, bounded=True)


def _leaf_may(leaf: Predicate, stats: ColumnStats, kind: str) -> bool:
    if isinstance(leaf, NullCheck):
        if stats.nulls is None:
            return True
        return stats.nulls > 0 if leaf.is_null else stats.nulls < stats.rows
    # Every other leaf is false on null: an all-null row group holds no match.
    if stats.all_null:
        return False
    if not stats.bounded or kind == NULLS_ONLY:
        return True
    low, high = stats.low, stats.high
    if isinstance(leaf, Compare):
        value = leaf.value
        if value is None:
            return True
        if kind == FLOATING and (leaf.op in (">", ">=", "!=") or _is_nan(value)):
            return True  # a NaN, which statistics leave out, may match
        if leaf.op == "=":
            return bool(low <= value <= high)
        if leaf.op == "!=":
            return not (low == high == value)
        if leaf.op == "<":
            return bool(low < value)
        if leaf.op == "<=":
            return bool(low <= value)
        if leaf.op == ">":
            return bool(high > value)
        if leaf.op == ">=":
            return bool(high >= value)
        return True
    if isinstance(leaf, Among):
        values = [v for v in leaf.values if v is not None]
        if kind == FLOATING and (leaf.negated or any(_is_nan(v) for v in values)):
            return True
        if leaf.negated:
            # NOT IN a list holding null is never true; otherwise skip only a constant group
            if len(values) != len(leaf.values):
                return True
            return not (low == high and low in values)
        return any(low <= v <= high for v in values)
    if isinstance(leaf, Prefix):
        if not (isinstance(low, str) and isinstance(high, str)):
            return True
        if leaf.negated:
            return not (low.startswith(leaf.prefix) and high.startswith(leaf.prefix))
        # The strings starting with the prefix lie from it up to the first that does not.
        if high < leaf.prefix:
            return False
        return low.startswith(leaf.prefix) or low <= leaf.prefix
    return True


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _java_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _keys_may_be_in(
    keys: tuple[str, ...], footer: Footer | None, indexed: IndexedStats | None = None
) -> bool:
    """Whether the file may hold one of `keys`: in its footer's key range (Java's order), then
    in its bloom filter (the metadata table's, else the footer's); a file without them may
    hold any."""
    candidates = list(keys)
    if footer is not None and footer.key_range is not None:
        low, high = (_java_order(k) for k in footer.key_range)
        candidates = [k for k in candidates if low <= _java_order(k) <= high]
    if not candidates:
        return False
    bloom = indexed.bloom if indexed is not None else None
    if bloom is None and footer is not None:
        bloom = footer.bloom()
    if bloom is None:
        return True
    return any(bloom.might_contain(candidates))


# -- slices with log files: their files' statistics combined ---------------------------------


def combine(parts: Iterable[ColumnStats | None]) -> ColumnStats | None:
    """One column's statistics of a file slice from those of its files (the base file and
    every log file the read merges): rows and nulls summed, the smallest low and the largest
    high over the files with values (a file whose column is all null, or that holds no rows,
    such as a log of deletes only, bounds nothing). None where a file's are unknown.

    A merged row takes each column's value from one of the slice's files (a newer version of
    the row, or, with partial updates, some columns from a log and the rest from the base
    file), and a delete only removes rows: so the merged rows' values lie within these bounds,
    and a column all null in every file is null in every merged row. The counts are not the
    merged rows' (a row and its newer version count twice): only the bounds, `nulls == 0`
    (no null anywhere) and `nulls == rows` (nothing but nulls) are read from them."""
    rows = 0
    nulls_known: int | None = 0
    low: Any = None
    high: Any = None
    bounded = True
    for part in parts:
        if part is None:
            return None
        rows += part.rows
        if nulls_known is not None:
            nulls_known = None if part.nulls is None else nulls_known + part.nulls
        if part.all_null or part.rows == 0:
            continue  # no value to bound
        if not part.bounded:
            bounded = False
            continue
        try:
            low = part.low if low is None or part.low < low else low
            high = part.high if high is None or part.high > high else high
        except TypeError:
            bounded = False
    if bounded and low is not None and high is not None:
        return ColumnStats(rows, nulls_known, low, high, bounded=True)
    return ColumnStats(rows, nulls_known)


def slice_may_match(
    predicate: Predicate, stats: dict[str, ColumnStats], table: pa.Schema, keys_by_stats: bool
) -> bool:
    """Whether a file slice may hold a merged row matching `predicate`, by its files'
    statistics combined per column (`combine`; a column not in `stats` may match). A record
    key filter (`KeyIn`) is held to the combined range of `_hoodie_record_key` where
    `keys_by_stats` (the table keeps its meta columns) and no file has a null key there."""
    if isinstance(predicate, AllOf):
        return all(slice_may_match(p, stats, table, keys_by_stats) for p in predicate.parts)
    if isinstance(predicate, AnyOf):
        return any(slice_may_match(p, stats, table, keys_by_stats) for p in predicate.parts)
    if isinstance(predicate, KeyIn):
        held = stats.get(RECORD_KEY)
        if not keys_by_stats or held is None or not held.bounded or held.nulls != 0:
            return True
        return _leaf_may(Among(RECORD_KEY, predicate.keys), held, ORDERED)
    column = predicate.column
    if column not in table.names or column not in stats:
        return True
    try:
        return _leaf_may(predicate, stats[column], kind_of(table.field(column).type))
    except (TypeError, ValueError, ArithmeticError):
        return True


def _stats_columns(predicate: Predicate, table: pa.Schema) -> list[str]:
    """The columns whose statistics decide `predicate` (a record key filter's: the key's)."""
    columns = set()
    for leaf in _leaves(predicate):
        columns.add(RECORD_KEY if isinstance(leaf, KeyIn) else leaf.column)
    return sorted(columns & set(table.names))


def whole_file_stats(evaluator: StatsEvaluator, footer: Footer, column: str) -> ColumnStats | None:
    """A column's statistics of a whole base file from its footer's row groups."""
    if not footer.groups:
        return ColumnStats(0, 0)
    return combine(
        evaluator._stats(column, footer, group, rows)
        for group, rows in zip(footer.groups, footer.rows)
    )


# -- the record index --------------------------------------------------------------------------


def _record_keys(predicate: Predicate) -> set[str]:
    return {key for leaf in _leaves(predicate) if isinstance(leaf, KeyIn) for key in leaf.keys}


_MOVES_NO_WRITE = frozenset({Action.ROLLBACK, Action.RESTORE, Action.SAVEPOINT})


def _index_is_of(metadata: TableMetadata, snapshot: CommittedInstants) -> bool:
    """Whether the metadata table's record index describes the snapshot a read planned (its
    completed writes `snapshot`, as of the table's latest): no MDT delta commit counts (is a
    valid instant) of a data write the plan did not see, as a write that completed after the
    plan was listed, or a rollback or restore after it. The data table's cleans and the
    MDT's initialization move no key; a plan's own instants and those before them are known."""
    data = {i.timestamp: i.action for i in metadata.data_timeline}
    valid = metadata.valid_instants
    for instant in metadata.timeline.completed:
        time = instant.timestamp
        if instant.action is not Action.DELTA_COMMIT or time not in valid:
            continue
        if time in snapshot or time.startswith(SOLO_COMMIT_TIMESTAMP):
            continue
        action = data.get(time)
        if action is Action.CLEAN:
            continue
        # An instant before the plan's last write that is no data write (an indexing commit,
        # a rollback or restore) completed before that write did: the plan saw its result.
        before = snapshot.as_of is not None and time <= snapshot.as_of
        if before and (action is None or action in _MOVES_NO_WRITE):
            continue
        return False
    return True


def record_index_locations(
    metadata: TableMetadata | None,
    snapshot: CommittedInstants | None,
    predicate: Predicate,
) -> dict[str, tuple[str, str]] | None:
    """Where the record keys `predicate` names live ((partition path, file id) by key; a key
    the table does not hold is absent), by the metadata table's `record_index`; None where it
    cannot tell: not a snapshot read as of the table's latest instant listed through the
    metadata table (`snapshot` None: time travel and incremental reads, whose rows the index,
    of the latest state only, does not describe), no completed `record_index` partition, no
    key or more than `RECORD_INDEX_MAX_KEYS`, or an index newer than the plan."""
    if metadata is None or snapshot is None or RECORD_INDEX not in metadata.partitions():
        return None
    keys = _record_keys(predicate)
    if not keys or len(keys) > RECORD_INDEX_MAX_KEYS:
        return None
    if not _index_is_of(metadata, snapshot):
        log.info("data skipping: the record index is newer than the read's plan; not used")
        return None
    found = metadata.read_record_index(keys)
    return {key: (where.partition_path, where.file_id) for key, where in found.items()}


def _located_may(
    predicate: Predicate, located: dict[str, tuple[str, str]], group: tuple[str, str]
) -> bool:
    """Whether the file group `group` may hold a row matching `predicate`, by where the record
    index puts its record keys (every other condition may hold)."""
    if isinstance(predicate, AllOf):
        return all(_located_may(p, located, group) for p in predicate.parts)
    if isinstance(predicate, AnyOf):
        return any(_located_may(p, located, group) for p in predicate.parts)
    if isinstance(predicate, KeyIn):
        return any(located.get(key) == group for key in predicate.keys)
    return True


# -- pruning a plan ----------------------------------------------------------------------------


@dataclass
class SkippingReport:
    """What data skipping did to one read: slices considered, skipped (slices without logs by
    column statistics, or by record key range and bloom filter, of those how many the
    metadata table's `column_stats` and `bloom_filters` decided without a footer; slices with
    logs by their files' combined statistics; any slice by the record index) and kept
    unchecked (their logs are merged and the metadata table lacks statistics of one); base
    files the metadata table had statistics of, footers read."""

    considered: int = 0
    by_stats: int = 0
    by_key: int = 0
    with_logs: int = 0
    footers_read: int = 0
    by_metadata: int = 0
    indexed: int = 0
    by_combined: int = 0  # slices with logs skipped by their files' combined statistics
    combined: int = 0  # slices with logs whose combined statistics were checked
    by_record_index: int = 0
    skipped_files: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        return self.by_stats + self.by_key + self.by_combined + self.by_record_index

    @property
    def by_footers(self) -> int:
        return self.by_stats + self.by_key + self.by_combined - self.by_metadata

    def describe(self, table: str) -> str:
        return (
            f"data skipping on table '{table}': {self.considered - self.skipped} of "
            f"{self.considered} file slices read, {self.skipped} skipped ({self.by_stats} by "
            f"column statistics, {self.by_key} by record key range and bloom filter, "
            f"{self.by_combined} slices with logs skipped by combined statistics, "
            f"{self.by_record_index} by the record index; "
            f"{self.by_metadata} by the metadata table's column_stats and bloom_filters, "
            f"{self.by_footers} by footers); "
            f"{self.with_logs} kept unchecked as their log files are merged; "
            f"{self.indexed} base files' statistics from the metadata table, "
            f"{self.footers_read} footers read"
        )


def may_skip(predicate: Predicate, table: pa.Schema) -> bool:
    """Whether `predicate` can rule any file out (a condition on a column the table has, on
    every branch of an OR): where it cannot, reading footers would be for nothing."""
    if isinstance(predicate, AllOf):
        return any(may_skip(part, table) for part in predicate.parts)
    if isinstance(predicate, AnyOf):
        return bool(predicate.parts) and all(may_skip(part, table) for part in predicate.parts)
    if isinstance(predicate, KeyIn):
        return True
    return predicate.column in table.names


def skip_slices(
    storage: FileIO,
    splits: list[FileSplit],
    merge_logs: bool,
    predicate: Predicate,
    table_schema: pa.Schema,
    footers: dict[str, Footer] | None = None,
    metadata: TableMetadata | None = None,
    snapshot: CommittedInstants | None = None,
) -> tuple[list[FileSplit], SkippingReport]:
    """The slices of `splits` a row matching `predicate` may be in, and what was skipped.

    `footers` holds footers already read (path -> footer) and gets those read here.
    `metadata`: the table's metadata table, where the read lists through it: its
    `column_stats` and `bloom_filters` decide first, footers are read only for the files they
    do not (see the module's docstring); slices with logs are decided by their files'
    statistics there, combined, or kept. `snapshot`: the plan's completed writes, given only
    for a snapshot read as of the table's latest instant (never time travel or an incremental
    read: the record index describes the latest state only); a record key filter then keeps
    only the slices of the file groups the record index puts its keys in."""
    report = SkippingReport(considered=len(splits))
    if not may_skip(predicate, table_schema):
        return splits, report  # no footer could rule a row out: none is read
    skipped: set[FileSplit] = set()

    def skipped_by(split: FileSplit) -> None:
        skipped.add(split)
        name = split.base_file or (split.log_files[0] if split.log_files else split.file_id)
        report.skipped_files.append(posixpath.basename(name))

    located = record_index_locations(metadata, snapshot, predicate) if merge_logs else None
    if located is not None:
        for split in splits:
            if not _located_may(predicate, located, (split.partition_path, split.file_id)):
                report.by_record_index += 1
                skipped_by(split)
    checkable, logged = [], []
    for split in splits:
        if split in skipped:
            continue
        if merge_logs and split.log_files:
            logged.append(split)
        elif split.base_file is not None:
            checkable.append(split)
    by_stats = StatsEvaluator(table_schema, use_keys=False)
    with_keys = StatsEvaluator(table_schema)

    def skip(split: FileSplit, footer: Footer | None, indexed: IndexedStats | None) -> bool:
        assert split.base_file is not None
        if not by_stats.file_may_match(predicate, footer, indexed):
            report.by_stats += 1
        elif not with_keys.file_may_match(predicate, footer, indexed):
            report.by_key += 1
        else:
            return False
        skipped_by(split)
        return True

    indexed = indexed_stats(metadata, checkable, predicate, table_schema)
    report.indexed = len(indexed)
    unsettled = []  # the slices whose footers decide
    for split in checkable:
        assert split.base_file is not None
        held = indexed.get(split.base_file)
        if held is None:
            unsettled.append(split)
        elif skip(split, None, held):
            report.by_metadata += 1
        elif _needs_footer(predicate, held, table_schema):
            unsettled.append(split)
    known = footers if footers is not None else {}
    combining = _combined_candidates(metadata, logged, predicate, table_schema)
    report.with_logs = len(logged) - len(combining)
    wanted = [s.base_file for s in unsettled if s.base_file and s.base_file not in known]
    wanted += [
        c.split.base_file
        for c in combining
        if c.split.base_file and c.needs_footer and c.split.base_file not in known
    ]
    read = read_footers(storage, wanted)
    known.update(read)
    report.footers_read = len(read)
    for split in unsettled:
        assert split.base_file is not None
        skip(split, known[split.base_file], indexed.get(split.base_file))
    keys_by_stats = bool(combining) and bool(_record_keys(predicate)) and _keys_by_stats(metadata)
    for candidate in combining:
        report.combined += 1
        split = candidate.split
        footer = known.get(split.base_file) if split.base_file and candidate.needs_footer else None
        stats = candidate.stats(by_stats, footer)
        if not slice_may_match(predicate, stats, table_schema, keys_by_stats):
            report.by_combined += 1
            if footer is None:
                report.by_metadata += 1
            skipped_by(split)
    return [s for s in splits if s not in skipped], report


@dataclass
class _Combining:
    """A slice with logs whose files the metadata table has statistics of: per column, the
    log files' (every one of them) and the base file's (None: its footer's)."""

    split: FileSplit
    logs: dict[str, list[ColumnStats]]
    base: dict[str, ColumnStats | None]

    @property
    def needs_footer(self) -> bool:
        return any(stats is None for stats in self.base.values())

    def stats(self, evaluator: StatsEvaluator, footer: Footer | None) -> dict[str, ColumnStats]:
        out = {}
        for column, logs in self.logs.items():
            base: list[ColumnStats | None] = []
            if self.split.base_file is not None:
                held = self.base.get(column)
                if held is None and footer is not None:
                    held = whole_file_stats(evaluator, footer, column)
                base.append(held)
            combined = combine([*base, *logs])
            if combined is not None:
                out[column] = combined
        return out


def _combined_candidates(
    metadata: TableMetadata | None,
    logged: list[FileSplit],
    predicate: Predicate,
    table: pa.Schema,
) -> list[_Combining]:
    """The slices of `logged` whose log files all have statistics in the metadata table's
    `column_stats` of some column `predicate` names (one lookup for all their files); the
    others stay unchecked. Log files are never read for statistics."""
    if metadata is None or not logged or COLUMN_STATS not in metadata.partitions():
        return []
    columns = _stats_columns(predicate, table)
    if not columns:
        return []
    files: dict[str, list[str]] = {}
    for split in logged:
        names = files.setdefault(split.partition_path, [])
        names.extend(posixpath.basename(f) for f in split.log_files)
        if split.base_file is not None:
            names.append(posixpath.basename(split.base_file))
    found = metadata.column_stats_of(files, columns)
    out = []
    for split in logged:
        path = split.partition_path
        logs: dict[str, list[ColumnStats]] = {}
        for column in columns:
            wanted = table.field(column).type
            held = []
            for log_file in split.log_files:
                record = found.get((path, posixpath.basename(log_file), column))
                stats = indexed_column_stats(record, wanted) if record is not None else None
                if stats is None:
                    break
                held.append(stats)
            else:
                logs[column] = held
        if not logs:
            continue
        base: dict[str, ColumnStats | None] = {}
        if split.base_file is not None:
            name = posixpath.basename(split.base_file)
            for column in logs:
                record = found.get((path, name, column))
                wanted = table.field(column).type
                base[column] = indexed_column_stats(record, wanted) if record else None
        out.append(_Combining(split, logs, base))
    return out


def _keys_by_stats(metadata: TableMetadata | None) -> bool:
    """Whether `_hoodie_record_key`'s statistics bound the record keys: the table keeps its
    meta columns (without, the column holds no key)."""
    return metadata is not None and metadata.data.properties.populate_meta_fields

"""Data skipping: the file slices of a read's plan no row of which can match its filters.

Apache Hudi skips files by the `column_stats` partition of its metadata table; until ours
exists, the statistics come from where that partition takes them, the base files' parquet
footers: per row group, each column's min, max and null count, and the record key range and
bloom filter Hudi's writers (and ours) keep in the footer. The footers are read on the driver,
a thread per file up to `FOOTER_THREADS` at once (a footer is one small read, two with the
bloom filter's few hundred KB; the native path reads them anyway to check the files' types):
a Spark job of footer tasks costs more in scheduling than the reads take
(`bench/read_skipping.py`).

Soundness first, so a slice is skipped only when no row of it can match:
- a row group can match unless its statistics rule the predicate out; a file can match if
  one of its row groups can, or its key range and bloom filter allow one of the keys an
  equality on the record key names (a bloom filter has no false negatives);
- a slice whose log files the read merges is never skipped: a log may hold a newer version of
  a row, which the base file's statistics do not describe, or a delete;
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
  compared with it in that order.
"""

from __future__ import annotations

import logging
import math
import posixpath
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

from ..bloom_filter import BLOOM_FILTER_FOOTER, StoredFilter
from ..exceptions import MalformedMetadataError
from ..fs_view import damaged_data_file
from ..schema import MAX_KEY_FOOTER, MIN_KEY_FOOTER
from ..storage import FileIO
from .planner import FileSplit
from .predicates import AllOf, Among, AnyOf, Compare, KeyIn, NullCheck, Predicate, Prefix

log = logging.getLogger(__name__)

FOOTER_THREADS = 16  # footers read at once on the driver

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


# -- evaluation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatsEvaluator:
    """Whether a row group may hold a row matching a predicate, given the table's schema (the
    types Spark compares in) and the file's schema (the types the statistics are in)."""

    table: pa.Schema
    use_keys: bool = True

    def file_may_match(self, predicate: Predicate, footer: Footer) -> bool:
        if not footer.groups:
            return False  # a file of no rows
        return any(
            self._may(predicate, footer, group, rows)
            for group, rows in zip(footer.groups, footer.rows)
        )

    def _may(
        self, predicate: Predicate, footer: Footer, group: dict[str, ColumnStats], rows: int
    ) -> bool:
        if isinstance(predicate, AllOf):
            return all(self._may(part, footer, group, rows) for part in predicate.parts)
        if isinstance(predicate, AnyOf):
            return any(self._may(part, footer, group, rows) for part in predicate.parts)
        if isinstance(predicate, KeyIn):
            return not self.use_keys or _keys_may_be_in(predicate.keys, footer)
        column = predicate.column
        if column not in self.table.names:
            return True
        stats = self._stats(column, footer, group, rows)
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


def _keys_may_be_in(keys: tuple[str, ...], footer: Footer) -> bool:
    """Whether the file may hold one of `keys`: in its key range (Java's order), then in its
    bloom filter; a file without them may hold any."""
    candidates = list(keys)
    if footer.key_range is not None:
        low, high = (_java_order(k) for k in footer.key_range)
        candidates = [k for k in candidates if low <= _java_order(k) <= high]
    if not candidates:
        return False
    bloom = footer.bloom()
    if bloom is None:
        return True
    return any(bloom.might_contain(candidates))


# -- pruning a plan ----------------------------------------------------------------------------


@dataclass
class SkippingReport:
    """What data skipping did to one read: slices considered, skipped (by column statistics,
    or by record key range and bloom filter) and kept unchecked (their logs are merged)."""

    considered: int = 0
    by_stats: int = 0
    by_key: int = 0
    with_logs: int = 0
    footers_read: int = 0
    skipped_files: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        return self.by_stats + self.by_key

    def describe(self, table: str) -> str:
        return (
            f"data skipping on table '{table}': {self.considered - self.skipped} of "
            f"{self.considered} file slices read, {self.skipped} skipped ({self.by_stats} by "
            f"column statistics, {self.by_key} by record key range and bloom filter); "
            f"{self.with_logs} kept unchecked as their log files are merged; "
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
) -> tuple[list[FileSplit], SkippingReport]:
    """The slices of `splits` a row matching `predicate` may be in, and what was skipped.

    `footers` holds footers already read (path -> footer) and gets those read here."""
    report = SkippingReport(considered=len(splits))
    if not may_skip(predicate, table_schema):
        return splits, report  # no footer could rule a row out: none is read
    checkable = []
    for split in splits:
        if split.base_file is None:
            continue
        if merge_logs and split.log_files:
            report.with_logs += 1
            continue
        checkable.append(split)
    known = footers if footers is not None else {}
    wanted = [s.base_file for s in checkable if s.base_file and s.base_file not in known]
    read = read_footers(storage, wanted)
    known.update(read)
    report.footers_read = len(read)
    by_stats = StatsEvaluator(table_schema, use_keys=False)
    with_keys = StatsEvaluator(table_schema)
    skipped: set[FileSplit] = set()
    for split in checkable:
        assert split.base_file is not None
        footer = known[split.base_file]
        if not by_stats.file_may_match(predicate, footer):
            report.by_stats += 1
        elif not with_keys.file_may_match(predicate, footer):
            report.by_key += 1
        else:
            continue
        skipped.add(split)
        report.skipped_files.append(posixpath.basename(split.base_file))
    return [s for s in splits if s not in skipped], report

"""The BLOOM index: tagging by reading stored keys only from the files that may hold them.

Apache Hudi's `HoodieBloomIndex`: every base file carries, in its parquet footer, its least and
greatest record key and a bloom filter of its keys (`bloom_filter.py`). Tagging a batch:

1. *ranges*: the footers' key ranges are read in Spark tasks (`routing.py`'s footer reader;
   a footer holds the filter too, 431 KB per 60,000 keys at the defaults) and each incoming
   key is paired, by a broadcast join, with the base files of its partition (of every
   partition for a global lookup) whose range holds it (`hoodie.bloom.index.prune.by.ranges`;
   off, or a range that is absent or not ASCII, makes the file a candidate for every key);
2. *bloom*: the pairs are shuffled by file, and each task reads its files' footers again for
   their bloom filters and keeps the keys a filter may hold;
3. *confirm*: for the keys left, and only where some are left, the task reads the file's key
   column and keeps the keys it really holds; bloom false positives drop out here.

That is `locate_by_bloom`, for a batch of any size. A batch whose keys the driver holds (up to
`KEY_FILTER_MAX_ROWS`, as SIMPLE's tagging does) takes `locate_keys_by_bloom`, the same three
checks in one job: the keys go to the tasks once, and each task reads a file's footer once,
for its range and filter, before the key column of the files left.

A file slice whose keys may live in log files alone (a merge-on-read slice without a base file,
or a file group some delta commit sent inserts to, `groups_with_inserts_in_logs`) has no footer
that speaks for all its keys: it is a candidate for every key of its partition, and its keys
are read as the SIMPLE index reads them (`keys.stored_keys`). Stored keys never go to the
driver; only the footers' ranges do.

Placement (small files, next versions, the merge-on-read rules) is SIMPLE's: `BloomIndex` is a
`SimpleIndex` whose stored-key lookup is one of these two. It always tags in a job of its own:
a routing unit's write task (SIMPLE's tagging inside the write) reads every key of its unit,
which is the read this index exists to avoid. Both lookups are also what a global bloom index
builds on (`global_lookup`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..bloom_filter import BLOOM_FILTER_FOOTER, StoredFilter
from ..config import BLOOM_INDEX
from ..exceptions import MalformedMetadataError
from ..fs_view import CommittedInstants, damaged_data_file
from ..schema import MAX_KEY_FOOTER, MIN_KEY_FOOTER, PARTITION_PATH, RECORD_KEY, constant_column
from ..storage import FileIO
from .base import LOCATION, TaggingContext
from .keys import KeySource, stored_keys
from .routing import KeyRange, read_footer_ranges
from .simple import SimpleIndex

_SOURCE = "__hoodie_bloom_source"  # index of the candidate file slice in the sources
_PARTITION, _LOW, _HIGH = "__hoodie_bloom_partition", "__hoodie_bloom_low", "__hoodie_bloom_high"
_CANDIDATES_SCHEMA = f"{_SOURCE} int, {_PARTITION} string, {_LOW} string, {_HIGH} string"
_LOCATED_SCHEMA = f"{RECORD_KEY} string, {PARTITION_PATH} string, {LOCATION} string"
_BASE_FILE = "a parquet base file"


def footer_speaks_for(source: KeySource) -> bool:
    """Whether the source's base file footer (range, bloom filter) covers all its keys: it has
    a base file and no log file whose keys must be read too."""
    return source.base_file is not None and not source.log_files


def candidate_files(
    sources: list[KeySource], ranges: dict[str, KeyRange]
) -> list[tuple[int, str, str | None, str | None]]:
    """Per source: (its index, its partition, the least and greatest key a key must lie
    between to be looked up in it; None: no bound). Only a footer that covers every key of
    its slice bounds it (`ranges`, by base file)."""
    rows: list[tuple[int, str, str | None, str | None]] = []
    for index, source in enumerate(sources):
        bounds = None
        if footer_speaks_for(source) and source.base_file is not None:
            bounds = ranges.get(source.base_file)
        low, high = (bounds.min_key, bounds.max_key) if bounds else (None, None)
        rows.append((index, source.partition_path, low, high))
    return rows


def bloom_candidates(
    storage: FileIO, relative: str, footer: dict[bytes, bytes], keys: pa.Array
) -> pa.Array:
    """Those of `keys` the bloom filter in base file `relative`'s `footer` may hold; all of
    them where the footer has no filter (nothing to prune by: the keys are read). A filter
    that does not read is a damaged footer."""
    if BLOOM_FILTER_FOOTER not in footer or len(keys) == 0:
        return keys
    try:
        stored_filter = StoredFilter.of(footer)
    except MalformedMetadataError as error:
        path = storage.uri(relative)
        raise MalformedMetadataError(f"{path} ({_BASE_FILE}): {error}", path) from error
    return keys.filter(pa.array(stored_filter.might_contain(keys.to_pylist()), pa.bool_()))


def in_key_range(footer: dict[bytes, bytes], keys: pa.Array) -> pa.Array:
    """Those of `keys` between the least and greatest key in a base file's `footer`; all of
    them where it has no range, or one outside ASCII (Java, which orders Apache Hudi's bounds,
    and Arrow and Spark, which compare UTF-8 bytes, agree only around ASCII bounds)."""
    low, high = footer.get(MIN_KEY_FOOTER), footer.get(MAX_KEY_FOOTER)
    if low is None or high is None or not (low.isascii() and high.isascii()) or not len(keys):
        return keys
    above = pc.greater_equal(keys, pa.scalar(low.decode(), pa.string()))
    below = pc.less_equal(keys, pa.scalar(high.decode(), pa.string()))
    return keys.filter(pc.and_(above, below))


def confirmed_keys(
    storage: FileIO,
    source: KeySource,
    keys: pa.Array,
    committed: CommittedInstants,
    *,
    prune_by_ranges: bool = False,
) -> pa.Array:
    """Which of `keys` (distinct candidates of the source's partition) the slice really holds:
    a base file whose footer speaks for the slice is checked by its footer's key range (with
    `prune_by_ranges`: a caller that paired keys with files by range already has not) and its
    bloom filter, and its key column read only for the keys left; any other slice's keys are
    read as the SIMPLE index reads them. A key in a base file and a log file may come twice."""
    wanted = keys.cast(pa.string())
    if not footer_speaks_for(source) or source.base_file is None:
        found = [chunk.cast(pa.string()) for chunk in stored_keys(storage, source, committed)]
        found = [chunk.filter(pc.is_in(chunk, value_set=wanted)) for chunk in found]
        return pa.concat_arrays(found) if found else pa.array([], pa.string())
    base = source.base_file
    with damaged_data_file(storage, base, _BASE_FILE):
        footer = storage.parquet_file(base).metadata.metadata or {}
    if prune_by_ranges:
        wanted = in_key_range(footer, wanted)
    wanted = bloom_candidates(storage, base, footer, wanted)
    if len(wanted) == 0:
        return wanted
    with damaged_data_file(storage, base, _BASE_FILE):
        stored = storage.read_parquet(base, columns=[RECORD_KEY]).column(0)
    stored = stored.cast(pa.string()).combine_chunks()
    return stored.filter(pc.is_in(stored, value_set=wanted))


@dataclass
class _BloomChecker:
    """Runs in Spark tasks: (source index, key) candidate pairs in, the confirmed (key,
    stored partition, file id) rows out, one source at a time."""

    storage: FileIO
    sources: list[KeySource]
    committed: CommittedInstants

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pairs = [batch for batch in batches if batch.num_rows]
        if not pairs:
            return
        table = pa.Table.from_batches(pairs)
        per_source = table.group_by(_SOURCE).aggregate([(RECORD_KEY, "distinct")])
        for index, keys in zip(
            per_source.column(_SOURCE).to_pylist(),
            per_source.column(f"{RECORD_KEY}_distinct").to_pylist(),
            strict=True,
        ):
            source = self.sources[index]
            found = confirmed_keys(self.storage, source, pa.array(keys, pa.string()),
                                   self.committed)  # fmt: skip
            n = len(found)
            if n:
                yield pa.RecordBatch.from_arrays(
                    [
                        found,
                        constant_column(source.partition_path, n),
                        constant_column(source.file_id, n),
                    ],
                    names=[RECORD_KEY, PARTITION_PATH, LOCATION],
                )


@dataclass
class _DriverKeysChecker:
    """Runs in Spark tasks: the confirmed (key, stored partition, file id) rows of the sources
    whose indexes come in, for the keys the driver sent (per partition, or one set for all)."""

    storage: FileIO
    sources: list[KeySource]
    committed: CommittedInstants
    wanted: dict[str, pa.Array]  # partition -> distinct keys
    every_partition: pa.Array | None  # a global lookup's keys, whatever their partition
    prune_by_ranges: bool

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                source = self.sources[index]
                keys = self.every_partition
                if keys is None:
                    keys = self.wanted[source.partition_path]
                found = confirmed_keys(self.storage, source, keys, self.committed,
                                       prune_by_ranges=self.prune_by_ranges)  # fmt: skip
                n = len(found)
                if n:
                    yield pa.RecordBatch.from_arrays(
                        [
                            found,
                            constant_column(source.partition_path, n),
                            constant_column(source.file_id, n),
                        ],
                        names=[RECORD_KEY, PARTITION_PATH, LOCATION],
                    )


def locate_keys_by_bloom(
    spark: SparkSession,
    batch_keys: pa.Table,
    storage: FileIO,
    sources: list[KeySource],
    committed: CommittedInstants,
    parallelism: int,
    *,
    global_lookup: bool,
    prune_by_ranges: bool = True,
) -> DataFrame:
    """`locate_by_bloom` for keys held on the driver (`batch_keys`: a table with the same two
    columns), in one Spark job: the keys travel to the tasks once, per partition, and each
    task reads a file's footer once for its key range and bloom filter, then its key column
    for the keys left; slices of partitions without keys get no task. A batch small enough
    to tag on the driver (`KEY_FILTER_MAX_ROWS`) takes this way: no broadcast join, no
    shuffle of (key, file) pairs, no job of its own for the ranges."""
    if global_lookup:
        every = pc.unique(batch_keys.column(RECORD_KEY)).cast(pa.string())
        wanted: dict[str, pa.Array] = {}
        chosen = list(range(len(sources)))
    else:
        every = None
        grouped = batch_keys.group_by(PARTITION_PATH).aggregate([(RECORD_KEY, "distinct")])
        wanted = {
            partition: pa.array(keys, pa.string())
            for partition, keys in zip(
                grouped.column(PARTITION_PATH).to_pylist(),
                grouped.column(f"{RECORD_KEY}_distinct").to_pylist(),
                strict=True,
            )
        }
        chosen = [i for i, s in enumerate(sources) if s.partition_path in wanted]
    if not chosen:
        return spark.createDataFrame([], _LOCATED_SCHEMA)
    picked = [sources[i] for i in chosen]
    checker = _DriverKeysChecker(storage, picked, committed, wanted, every, prune_by_ranges)
    slots = max(1, min(len(picked), parallelism))
    indexes = spark.range(0, len(picked), 1, slots).select(F.col("id").cast("int"))
    return indexes.mapInArrow(checker, _LOCATED_SCHEMA)


def locate_by_bloom(
    spark: SparkSession,
    keys: DataFrame,
    storage: FileIO,
    sources: list[KeySource],
    committed: CommittedInstants,
    parallelism: int,
    *,
    global_lookup: bool,
    prune_by_ranges: bool = True,
) -> DataFrame:
    """Where the stored records of `keys` are, by Apache Hudi's bloom index lookup.

    `keys` has the columns `_hoodie_record_key` and `_hoodie_partition_path` (the incoming
    partition; other columns are ignored, duplicates allowed). `sources` are the latest file
    slices to look in (`KeySource.of`, their log files given where keys may live in logs
    alone), `committed` the instants whose log blocks count. With `global_lookup` a key is
    looked up in the slices of every partition, otherwise only in those of its own.

    Returns a DataFrame of (`_hoodie_record_key`, `_hoodie_partition_path`, LOCATION): each
    stored key among `keys` with the partition that STORES it and the file id of its file
    group; keys stored nowhere are absent. A key in a slice's base file and its log files comes
    once per file. At most `parallelism` tasks check filters and read keys.
    """
    if not sources:
        return spark.createDataFrame([], _LOCATED_SCHEMA)
    footed = [s.base_file for s in sources if footer_speaks_for(s) and s.base_file is not None]
    ranges = read_footer_ranges(spark, storage, footed) if prune_by_ranges else {}
    candidates = spark.createDataFrame(candidate_files(sources, ranges), _CANDIDATES_SCHEMA)
    key, low, high = F.col(RECORD_KEY), F.col(_LOW), F.col(_HIGH)
    condition = (low.isNull() | (key >= low)) & (high.isNull() | (key <= high))
    if not global_lookup:
        condition = (F.col(PARTITION_PATH) == F.col(_PARTITION)) & condition
    pairs = keys.select(RECORD_KEY, PARTITION_PATH).join(F.broadcast(candidates), condition)
    slots = max(1, min(len(sources), parallelism))
    checker = _BloomChecker(storage, sources, committed)
    return (
        pairs.select(_SOURCE, RECORD_KEY)
        .repartition(slots, _SOURCE)
        .mapInArrow(checker, _LOCATED_SCHEMA)
    )


class BloomIndex(SimpleIndex):
    """Tagging by `locate_by_bloom` in a job of its own; placement as SIMPLE places."""

    name = BLOOM_INDEX

    def tags_in_write_tasks(self) -> bool:
        # A routing unit's task would read every key of its unit: tag in a job, by footers.
        return False

    def stored_locations(
        self,
        batch: DataFrame,
        context: TaggingContext,
        sources: list[KeySource],
        parallelism: int,
        batch_keys: pa.Table | None,
    ) -> DataFrame:
        config = context.config
        storage, committed = context.meta_client.storage, context.view.committed
        parallelism = config.bloom_parallelism or parallelism
        if batch_keys is not None:
            return locate_keys_by_bloom(batch.sparkSession, batch_keys, storage, sources,
                                        committed, parallelism, global_lookup=False,
                                        prune_by_ranges=config.bloom_prune_by_ranges)  # fmt: skip
        return locate_by_bloom(
            batch.sparkSession,
            batch,
            storage,
            sources,
            committed,
            parallelism,
            global_lookup=False,
            prune_by_ranges=config.bloom_prune_by_ranges,
        )

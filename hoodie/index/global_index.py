"""Global indexes: a record key is unique across the table, whatever its partition value.

Hudi's GLOBAL_SIMPLE and GLOBAL_BLOOM (the BLOOM index's lookup): tagging looks each incoming key
up in the latest slices of every partition, by the key alone, so a record whose partition
value changed between two writes still finds its stored version. What happens then is
`hoodie.simple.index.update.partition.path`'s choice (`hoodie.bloom.index.update.partition.path`
for GLOBAL_BLOOM), as Apache Hudi makes it
(`HoodieIndexUtils.mergeForPartitionUpdatesIfNeeded`):

- true (Hudi's default): the record moves. A delete of the key goes to the old partition's
  file group (copy-on-write: rewritten without it; merge-on-read: a delete block in a new log
  file, with no ordering value, as Hudi writes the delete of a move) and the record is inserted
  into its new partition, in the same commit. Where the table orders versions by a precombine
  field and the stored version's value is larger, the stored version wins the merge and stays
  where it is: the incoming record is routed there as an update, which loses.
- false: the record is updated where it is stored; its `_hoodie_partition_path` stays the old
  one, and so do its partition columns (`_stored_partition_values`: Apache Hudi's writer
  stores the new value there, which its Spark reader replaces by the folder's).
- Deletes (Hudi's delete operation, `_hoodie_is_deleted` rows) go to the partition that holds
  the key, whatever partition value they carry.

The key lookup is a part of its own (`KeyLookup`: the batch in, (key, stored partition,
location) out), so an index that finds keys another way (bloom filters and key ranges) uses
the same rules; `SimpleKeyLookup` reads every slice's key column, as SIMPLE does. A table whose
non-global writes left one key in two partitions cannot be tagged by key alone: it is refused,
naming the keys and `hoodie.index.type`.

A global index tags in a job of its own (its lookup spans every partition, so no routing unit
of the write tasks sees it all). The batch reaches it already holding one record per key
(`write/prepare.py`); a first write may still go untagged as a bulk insert.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .. import partition_paths as paths
from ..config import FAIL_ON_EXISTING, GLOBAL_BLOOM_INDEX, GLOBAL_SIMPLE_INDEX, WriteConfig
from ..exceptions import DuplicateRecordKeyError
from ..fs_view import CommittedInstants
from ..merge import MergeMode, merge_mode_of
from ..schema import IS_DELETED, PARTITION_PATH, RECORD_KEY
from ..storage import FileIO
from .base import LOCATION, HoodieIndex, Placement, TaggingContext, profile_of
from .bloom import locate_by_bloom, locate_keys_by_bloom
from .keys import KeySource, live_versions
from .simple import (
    KEY_FILTER_MAX_ROWS,
    drop_unknown_deletes,
    existing_keys,
    key_sources,
    keys_exist_error,
    place,
    summary_profile,
    tagging_parallelism,
)

STORED_PARTITION = "__hoodie_stored_partition"  # the partition holding the key today
_STORED_ORDERING = "__hoodie_stored_ordering"
_MOVES = "__hoodie_moves"  # the record moves: deleted where it was, inserted where it goes
_IN_PLACE = "__hoodie_in_place"  # the record is updated in its stored partition, not its own
_BATCH_ROWS = 65536
# A stored partition's path and its fields' texts (`_stored_partition_values`).
_STORED_PATH, _STORED_TEXT = "__hoodie_stored_path", "__hoodie_stored_text_"


class KeyLookup(Protocol):
    """Where the batch's keys are stored: one row (RECORD_KEY, STORED_PARTITION, LOCATION) per
    stored key and partition, of every slice of `context.slices`. Only the keys the batch
    names need be returned."""

    def locate(self, batch: DataFrame, context: TaggingContext) -> DataFrame: ...


@dataclass(frozen=True)
class SimpleKeyLookup:
    """GLOBAL_SIMPLE's lookup: the key column of every latest slice, read in Spark tasks (the
    SIMPLE index's key reading). A batch of up to `KEY_FILTER_MAX_ROWS` rows sends its keys to
    the readers, which return only those; a larger one gets every stored key to join."""

    def locate(self, batch: DataFrame, context: TaggingContext) -> DataFrame:
        spark, storage = batch.sparkSession, context.meta_client.storage
        sources = key_sources(context)
        parallelism = tagging_parallelism(spark, context.config)
        wanted = None
        if context.incoming_rows <= KEY_FILTER_MAX_ROWS:
            keys = batch.select(RECORD_KEY).distinct().toArrow().column(RECORD_KEY)
            wanted = keys.combine_chunks().cast(pa.string())
        stored = existing_keys(spark, storage, sources, context.view.committed, parallelism,
                               wanted)  # fmt: skip
        # A key may be in a base file and in log files of its slice: one row per key and file
        # group (two file groups of a partition may hold it on merge-on-read: one removed it
        # by a log's delete, `_one_place_per_key`).
        stored = stored.dropDuplicates([RECORD_KEY, PARTITION_PATH, LOCATION])
        return stored.withColumnRenamed(PARTITION_PATH, STORED_PARTITION)


@dataclass(frozen=True)
class BloomKeyLookup:
    """GLOBAL_BLOOM's lookup: the BLOOM index's (`bloom.py`) over every partition's latest
    slices: key ranges and bloom filters from the base files' footers pick the candidate files,
    whose key columns confirm the keys. A batch of up to `KEY_FILTER_MAX_ROWS` rows is looked
    up in one job from keys the driver holds."""

    prune_by_ranges: bool
    parallelism: int  # 0: the tagging parallelism

    def locate(self, batch: DataFrame, context: TaggingContext) -> DataFrame:
        spark, storage = batch.sparkSession, context.meta_client.storage
        sources, committed = key_sources(context), context.view.committed
        parallelism = self.parallelism or tagging_parallelism(spark, context.config)
        if context.incoming_rows <= KEY_FILTER_MAX_ROWS:
            keys = batch.select(RECORD_KEY, PARTITION_PATH).distinct().toArrow()
            stored = locate_keys_by_bloom(spark, keys, storage, sources, committed, parallelism,
                                          global_lookup=True,
                                          prune_by_ranges=self.prune_by_ranges)  # fmt: skip
        else:
            stored = locate_by_bloom(spark, batch, storage, sources, committed, parallelism,
                                     global_lookup=True,
                                     prune_by_ranges=self.prune_by_ranges)  # fmt: skip
        stored = stored.dropDuplicates([RECORD_KEY, PARTITION_PATH, LOCATION])
        return stored.withColumnRenamed(PARTITION_PATH, STORED_PARTITION)


class GlobalIndex(HoodieIndex):
    """A key is looked up in every partition (`lookup`), then moved, updated in place or
    deleted where it is stored, by Hudi's rules (the module's docstring)."""

    def __init__(self, name: str, lookup: KeyLookup, update_partition_path: bool):
        self.name = name
        self.lookup = lookup
        self.update_partition_path = update_partition_path

    @classmethod
    def simple(cls, config: WriteConfig) -> GlobalIndex:
        """GLOBAL_SIMPLE, with `hoodie.simple.index.update.partition.path`."""
        return cls(GLOBAL_SIMPLE_INDEX, SimpleKeyLookup(),
                   config.simple_index_update_partition_path)  # fmt: skip

    @classmethod
    def bloom(cls, config: WriteConfig) -> GlobalIndex:
        """GLOBAL_BLOOM, with `hoodie.bloom.index.update.partition.path`."""
        lookup = BloomKeyLookup(config.bloom_prune_by_ranges, config.bloom_parallelism)
        return cls(GLOBAL_BLOOM_INDEX, lookup, config.bloom_index_update_partition_path)

    def is_global(self) -> bool:
        return True

    def tag_and_place(self, batch: DataFrame, context: TaggingContext) -> Placement:
        if not context.slices:
            # Nothing stored: every record is an insert, as the summary counts it.
            tagged = batch.withColumn(LOCATION, F.lit(None).cast("string"))
            tagged = drop_unknown_deletes(tagged, context)
            profile = summary_profile(context)
            buckets, targets = place(profile, context)
            return Placement(tagged, profile, buckets, targets)
        # The stored keys are read once: the checks below (keys in two places, stale moves)
        # and the tagged batch all read them.
        located = self.lookup.locate(batch, context).persist()
        try:
            stored = _one_place_per_key(located, context)
            joined = batch.join(stored, on=RECORD_KEY, how="left")
            if context.on_existing is not None:
                tagged = self._only_new_keys(joined, context)
            else:
                tagged = self._route(joined, context)
            tagged = tagged.persist()
            profile = profile_of(tagged)  # (fills the cache of the tagged batch)
        finally:
            located.unpersist()
        buckets, targets = place(profile, context)
        return Placement(tagged, profile, buckets, targets, cached=True)

    def _only_new_keys(self, joined: DataFrame, context: TaggingContext) -> DataFrame:
        """An insert's records: a key stored in any partition stops the write or is skipped
        (`hoodie.datasource.insert.dup.policy`)."""
        stored = F.col(LOCATION).isNotNull()
        if context.on_existing == FAIL_ON_EXISTING:
            existing = joined.filter(stored).select(RECORD_KEY, STORED_PARTITION)
            examples = existing.limit(3).collect()
            if examples:
                shown = [{RECORD_KEY: r[RECORD_KEY], PARTITION_PATH: r[STORED_PARTITION]}
                         for r in examples]  # fmt: skip
                raise keys_exist_error(context, existing.count(), shown)
        return joined.filter(~stored).drop(STORED_PARTITION)

    def _route(self, joined: DataFrame, context: TaggingContext) -> DataFrame:
        """Each record's partition path and location by the rules of a global index: inserts
        as they are, updates in their stored partition or moved (a delete where they were and
        an insert where they go)."""
        located = F.col(LOCATION).isNotNull()
        elsewhere = located & (F.col(STORED_PARTITION) != F.col(PARTITION_PATH))
        if context.delete_operation:
            joined = joined.filter(located)
        moves, gone = F.lit(False), F.lit(False)
        if self.update_partition_path and not context.delete_operation:
            live = ~F.coalesce(F.col(IS_DELETED), F.lit(False))
            stale, removed = _verdicts(joined.filter(elsewhere & live), context)
            moves = elsewhere & live & ~F.col(RECORD_KEY).isin(stale)
            gone = F.col(RECORD_KEY).isin(removed)
        marked = joined.withColumn(_MOVES, moves).withColumn(_IN_PLACE, elsewhere & ~moves)
        in_place = F.col(_IN_PLACE)
        kept = marked.withColumns({
            PARTITION_PATH: F.when(in_place, F.col(STORED_PARTITION))
                             .otherwise(F.col(PARTITION_PATH)),
            LOCATION: F.when(F.col(_MOVES), F.lit(None).cast("string"))
                       .otherwise(F.col(LOCATION)),
        })  # fmt: skip
        kept = _stored_partition_values(kept, in_place, context)
        columns = [c for c in joined.columns if c != STORED_PARTITION]
        # (a key whose stored copy a log already removed is only inserted, as Hudi does)
        moved_out = marked.filter(F.col(_MOVES) & ~gone).select(*_delete_of_move(marked, columns))
        return kept.select(*columns).unionByName(moved_out)


def _stored_partition_values(
    kept: DataFrame, in_place: Column, context: TaggingContext
) -> DataFrame:
    """`kept` with the partition columns of the records updated in place holding the values of
    the partition that stores them (read back from its path), instead of their new values.

    A row's partition columns must agree with its partition path: Apache Hudi's Spark reader
    takes them from the path, hudi-rs and ours from the file, and partition pruning decides
    by the path. Apache Hudi's writer leaves the new value in the file, so its readers
    disagree about such a row; we keep the one value every reader shows. A value the path
    cannot give back (a path of more segments than fields, a text the column's type does not
    parse) is left as the batch has it."""
    fields = context.config.partition_fields
    props = context.meta_client.properties
    if not fields or props.value_partition_fields != fields:
        return kept  # (a timestamp part's folder is a date, not the column's value)
    types = dict(kept.dtypes)
    rows = []
    for path in sorted({s.partition_path for s in context.slices}):
        found = paths.field_texts(path, fields, props.hive_style_partitioning,
                                  props.url_encode_partition_path)  # fmt: skip
        if found is not None:
            rows.append((path, *(found[f] for f in fields)))
    if not rows:
        return kept
    texts = [f"{_STORED_TEXT}{i}" for i in range(len(fields))]
    known = kept.sparkSession.createDataFrame(
        rows, ", ".join(f"`{c}` string" for c in (_STORED_PATH, *texts))
    )
    joined = kept.join(F.broadcast(known), F.col(STORED_PARTITION) == F.col(_STORED_PATH), "left")
    restored = {}
    for field, text in zip(fields, texts):
        value = F.col(text).try_cast(types[field])
        parsed = F.col(_STORED_PATH).isNotNull() & (F.col(text).isNull() | value.isNotNull())
        restored[field] = F.when(in_place & parsed, value).otherwise(F.col(f"`{field}`"))
    return joined.withColumns(restored).drop(_STORED_PATH, *texts)


def _delete_of_move(marked: DataFrame, columns: list[str]) -> list[Column]:
    """The columns of the delete a move leaves in the old partition: the key, its stored
    partition and file group, no data and no ordering value (so that it removes the stored
    version whatever its value, as Hudi's delete of a move does)."""
    types = dict(marked.dtypes)
    kept = {RECORD_KEY: F.col(RECORD_KEY), PARTITION_PATH: F.col(STORED_PARTITION),
            LOCATION: F.col(LOCATION), IS_DELETED: F.lit(True)}  # fmt: skip
    return [kept[c].alias(c) if c in kept else F.lit(None).cast(types[c]).alias(c) for c in columns]


def _one_place_per_key(stored: DataFrame, context: TaggingContext) -> DataFrame:
    """`stored` with one location per key, or the write refused.

    On merge-on-read a record moved out of a file group stays in its base file, removed by a
    delete in a log file, until compaction: a key found in two places is looked up again in
    those slices, merged as a read merges them (`keys.live_keys`), and its removed copies are
    dropped. A key still stored in two file groups (a table written with a non-global index,
    whose keys are unique per partition only) has no one location to update: refused, as a
    global index cannot tell which copy is the record.
    """
    located = F.struct(F.col(STORED_PARTITION).alias("p"), F.col(LOCATION).alias("f"))
    twice = (
        stored.groupBy(RECORD_KEY)
        .agg(F.count(F.lit(1)).alias("n"), F.collect_list(located).alias("at"))
        .filter(F.col("n") > 1)
        .collect()
    )
    if not twice:
        return stored
    places = {(r[RECORD_KEY], at["p"], at["f"]) for r in twice for at in r["at"]}
    if context.meta_client.merge_on_read:
        dead = _removed_copies(places, context)
        if dead:
            places -= dead
            gone = stored.sparkSession.createDataFrame(
                sorted(dead), f"{RECORD_KEY} string, {STORED_PARTITION} string, {LOCATION} string"
            )
            stored = stored.join(gone, on=[RECORD_KEY, STORED_PARTITION, LOCATION], how="left_anti")
    by_key: dict[str, list[str]] = {}
    for key, partition, _file_id in places:
        by_key.setdefault(key, []).append(partition)
    still = sorted((k, sorted(p)) for k, p in by_key.items() if len(p) > 1)
    if still:
        shown = ", ".join(f"'{k}' (in {', '.join(repr(p) for p in ps)})" for k, ps in still[:3])
        name = context.config.index_type
        raise DuplicateRecordKeyError(
            f"table '{context.meta_client.name}' holds {len(still)} record key(s) in more than "
            f"one file group, e.g. {shown}: it was written with a non-global index, which keeps "
            f"keys unique per partition only, so hoodie.index.type={name} cannot tell which "
            "copy to update. Write it with hoodie.index.type=SIMPLE, or delete the extra copies "
            "first"
        )
    return stored


def _removed_copies(
    places: set[tuple[str, str, str]], context: TaggingContext
) -> set[tuple[str, str, str]]:
    """The (key, partition, file id) among `places` whose slice no longer holds the key."""
    by_group: dict[tuple[str, str], set[str]] = {}
    for key, partition, file_id in places:
        by_group.setdefault((partition, file_id), set()).add(key)
    slices = {(s.partition_path, s.file_id): s for s in context.slices}
    storage, committed = context.meta_client.storage, context.view.committed
    mode = merge_mode_of(context.meta_client.properties)
    dead = set()
    for (partition, file_id), keys in sorted(by_group.items()):
        source = KeySource.of(slices[(partition, file_id)], with_logs=True, view=context.view)
        wanted = pa.array(sorted(keys), pa.string())
        live = live_versions(storage, source, committed, wanted, mode)
        dead |= {(k, partition, file_id) for k in keys - set(live.column(RECORD_KEY).to_pylist())}
    return dead


def _verdicts(moving: DataFrame, context: TaggingContext) -> tuple[list[str], list[str]]:
    """Of the records that would move (key, stored partition, location, ordering value): the
    keys whose stored version has a larger ordering value, which wins the merge so the key
    stays (only where the table orders versions by a precombine field; a null loses to any
    value), and the keys whose stored copy a merge-on-read log already removed (Hudi finds no
    stored record to merge with: the record is inserted). The slices of their file groups are
    merged in Spark tasks."""
    mode = merge_mode_of(context.meta_client.properties)
    field = mode.ordering_field if mode.by_event_time else None
    merge_on_read = context.meta_client.merge_on_read
    if field is None and not merge_on_read:
        return [], []
    rows = moving.select(RECORD_KEY, STORED_PARTITION, LOCATION, *([field] if field else []))
    wanted = rows.toArrow()
    if wanted.num_rows == 0:
        return [], []
    groups = set(zip(wanted.column(STORED_PARTITION).to_pylist(),
                     wanted.column(LOCATION).to_pylist()))  # fmt: skip
    sources = [KeySource.of(s, with_logs=merge_on_read, view=context.view)
               for s in context.slices if (s.partition_path, s.file_id) in groups]  # fmt: skip
    spark = moving.sparkSession
    schema = f"{RECORD_KEY} string"
    ordering_type = None
    if field is not None:
        ordering_type = wanted.schema.field(field).type
        schema += f", {_STORED_ORDERING} {dict(rows.dtypes)[field]}"
    reader = _LiveReader(context.meta_client.storage, sources, context.view.committed,
                         wanted.column(RECORD_KEY).combine_chunks().cast(pa.string()), mode,
                         ordering_type)  # fmt: skip
    slots = max(1, min(len(sources), tagging_parallelism(spark, context.config)))
    indexes = spark.range(0, len(sources), 1, slots).select(F.col("id").cast("int"))
    stored = indexes.mapInArrow(reader, schema).toArrow()
    found = pc.is_in(wanted.column(RECORD_KEY), value_set=stored.column(RECORD_KEY))
    removed = wanted.column(RECORD_KEY).filter(pc.invert(found)).to_pylist()
    if field is None or stored.num_rows == 0:
        return [], removed
    pairs = wanted.select([RECORD_KEY, field]).join(stored, keys=RECORD_KEY, join_type="inner")
    incoming = pairs.column(field)
    kept = pairs.column(_STORED_ORDERING).cast(incoming.type)
    loses = pc.and_(pc.is_valid(kept),
                    pc.or_kleene(pc.is_null(incoming), pc.less(incoming, kept)))  # fmt: skip
    stale = pairs.column(RECORD_KEY).filter(pc.fill_null(loses, False)).to_pylist()
    return stale, removed


@dataclass(frozen=True)
class _LiveReader:
    """Runs in Spark tasks: the versions of `keys` each slice of `sources` holds after merging
    (`keys.live_versions`), with their ordering values; only the file groups of records that
    would move are read."""

    storage: FileIO
    sources: list[KeySource]
    committed: CommittedInstants
    keys: pa.Array
    mode: MergeMode  # the table's: by event time, stored versions carry their ordering value
    ordering_type: pa.DataType | None

    @property
    def field(self) -> str | None:
        return self.mode.ordering_field if self.mode.by_event_time else None

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                source = self.sources[index]
                rows = live_versions(self.storage, source, self.committed, self.keys, self.mode)
                if rows.num_rows == 0:
                    continue
                columns = [rows.column(RECORD_KEY).combine_chunks()]
                names = [RECORD_KEY]
                if self.field is not None and self.ordering_type is not None:
                    values = rows.column(self.field).combine_chunks()
                    columns.append(values.cast(self.ordering_type))
                    names.append(_STORED_ORDERING)
                yield pa.RecordBatch.from_arrays(columns, names=names)

"""The SIMPLE index: tagging by joining incoming keys with the keys stored in the table.

Only the latest file slices of the partitions the batch touches are read, and only their key
column, inside Spark tasks. The join result tells each incoming record which file group holds
its key today (its *location*), or that it is new. This costs a scan of the touched
partitions' keys but needs no extra metadata, which is why Hudi makes it the default.
A batch of up to `KEY_FILTER_MAX_ROWS` rows sends its keys to the readers, which return only
the stored keys it names; those few are joined to the batch as a local relation, and the
write needs no cached join and no profiling job.

For merge-on-read the keys of a slice are those of its base file and of the data blocks in its
log files (of completed instants, not rolled back): a key whose only version sits in a log
file (a table whose inserts went to logs) still has a location, so an update of it cannot
become a duplicate in another file group.

Upserts and deletes usually tag inside their write tasks instead (`plan_routing`, `routing.py`,
`write/routed_writer.py`), reading the same keys; the join here is for inserts (their dup
policy needs the whole batch's verdict before anything is written) and for tables whose
overlapping key ranges would make a routing unit too big for one task.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..config import BUCKET_INDEX, DROP_EXISTING, FAIL_ON_EXISTING, SIMPLE_INDEX, WriteConfig
from ..exceptions import RecordKeyExistsError
from ..fs_view import CommittedInstants, FileSystemView
from ..meta_client import HoodieTableMetaClient
from ..metadata import WriteStat
from ..naming import parse_base_file_name, parse_log_file_name
from ..schema import PARTITION_PATH, RECORD_KEY, constant_column
from ..storage import FileIO
from ..timeline import Action, Timeline
from .base import (
    INDEX_TYPE_KEY,
    LOCATION,
    HoodieIndex,
    InTaskTagging,
    InTaskWriter,
    Placement,
    TaggingContext,
    next_versions,
    profile_of,
)
from .keys import KeySource, stored_keys
from .placement import FileGroupTarget, InsertBucket, WorkloadProfile, plan_inserts
from .routing import RoutingPlan, plan_routing

KEY_FILTER_MAX_ROWS = 1_000_000  # batches up to this size filter stored keys in the readers
_KEYS_SCHEMA = f"{RECORD_KEY} string, {PARTITION_PATH} string, {LOCATION} string"


class _KeyReader:
    """Runs in Spark tasks: yields (record key, partition path, file id) of file slices."""

    def __init__(
        self,
        storage: FileIO,
        sources: list[KeySource],
        committed: CommittedInstants,
        wanted: pa.Array | None = None,
    ):
        self.storage = storage
        self.sources = sources
        self.committed = committed
        self.wanted = wanted

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                source = self.sources[index]
                for keys in stored_keys(self.storage, source, self.committed):
                    if self.wanted is not None:
                        keys = keys.filter(pc.is_in(keys, value_set=self.wanted))
                    n = len(keys)
                    if n == 0:
                        continue
                    yield pa.RecordBatch.from_arrays(
                        [
                            keys.cast(pa.string()),
                            constant_column(source.partition_path, n),
                            constant_column(source.file_id, n),
                        ],
                        names=[RECORD_KEY, PARTITION_PATH, LOCATION],
                    )


def existing_keys(
    spark: SparkSession,
    storage: FileIO,
    sources: list[KeySource],
    committed: CommittedInstants,
    parallelism: int,
    wanted: pa.Array | None = None,
) -> DataFrame:
    """A DataFrame of the keys stored in `sources` (only those in `wanted`, if given), read in
    parallel by Spark tasks."""
    slots = max(1, min(len(sources), parallelism))
    reader = _KeyReader(storage, sources, committed, wanted)
    # A range is split into `slots` partitions as it is made: no shuffle to spread the sources.
    indexes = spark.range(0, len(sources), 1, slots).select(F.col("id").cast("int"))
    return indexes.mapInArrow(reader, _KEYS_SCHEMA)


# The stored keys a batch may name, as (key, partition, LOCATION) rows: given the batch's
# (key, partition) pairs where it holds them on the driver, None for a batch too large to.
StoredLookup = Callable[[pa.Table | None], DataFrame]


def tag_location(records: DataFrame, stored: DataFrame, sources: list[KeySource]) -> DataFrame:
    """`records` plus a LOCATION column: the file id already holding each key, or null, by a
    join of the batch with the `stored` keys of `sources` (for batches too large to hold
    their keys on the driver)."""
    if any(s.log_files for s in sources):
        # A key may be in a base file and in log files of its slice: one row per key.
        stored = stored.dropDuplicates([RECORD_KEY, PARTITION_PATH])
    return records.join(stored, on=[RECORD_KEY, PARTITION_PATH], how="left")


def locate_batch_keys(records: DataFrame, lookup: StoredLookup) -> tuple[pa.Table, pa.Table]:
    """Tagging of a batch small enough (up to `KEY_FILTER_MAX_ROWS`) to hold its keys on the
    driver: (each key and partition of the batch with its record count and location; the
    stored keys the batch names, one row per key and partition, with their location).

    The batch's keys travel to the key-reading tasks, which hand back only the stored keys
    the batch names: an upsert touching 1% of a table neither moves nor joins every stored
    key, and the workload profile is counted here instead of by a Spark job over a cached
    join.
    """
    batch_keys = records.groupBy(RECORD_KEY, PARTITION_PATH).count().toArrow()
    stored = lookup(batch_keys).toArrow()
    # A key may be in a base file and in log files of its slice: one row per key.
    stored = stored.group_by([RECORD_KEY, PARTITION_PATH]).aggregate([(LOCATION, "min")])
    stored = stored.select([RECORD_KEY, PARTITION_PATH, f"{LOCATION}_min"])
    stored = stored.rename_columns([RECORD_KEY, PARTITION_PATH, LOCATION])
    located = batch_keys.join(stored, keys=[RECORD_KEY, PARTITION_PATH], join_type="left outer")
    return located, stored


def located_profile(located: pa.Table) -> WorkloadProfile:
    """Records per partition and file group (None: inserts) from `locate_batch_keys`."""
    profile = WorkloadProfile()
    counts = located.group_by([PARTITION_PATH, LOCATION]).aggregate([("count", "sum")])
    for row in counts.to_pylist():
        profile.add(row[PARTITION_PATH], row[LOCATION], row["count_sum"])
    return profile


def summary_profile(context: TaggingContext) -> WorkloadProfile:
    """The profile of a batch that only inserts (no stored slice to tag against), from the
    summary the write already has: no job of its own."""
    profile = WorkloadProfile()
    if not context.delete_operation:
        for row in context.summary:
            profile.add(row[PARTITION_PATH], None, row["rows"])
    return profile


class SimpleIndex(HoodieIndex):
    """Tagging by a join of the batch's keys with the keys stored in the touched slices, or,
    where routing units allow, inside the write tasks (`routing.py`)."""

    name = SIMPLE_INDEX

    def tags_in_write_tasks(self) -> bool:
        # Upserts and deletes route their records to units of file groups with the key
        # ranges their keys fall in, and each unit's task reads those keys as it writes.
        return True

    def in_task_tagging(
        self,
        spark: SparkSession,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig,
        view: FileSystemView,
        partitions: list[str] | None = None,
    ) -> InTaskTagging | None:
        routing = self.plan_routing(spark, meta_client, config, view, partitions)
        return None if routing is None else RoutedTagging(routing, meta_client, config)

    def plan_routing(
        self,
        spark: SparkSession,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig,
        view: FileSystemView,
        partitions: list[str] | None = None,
    ) -> RoutingPlan | None:
        """Routing units for an upsert that tags in its write tasks (of `partitions`, or of
        every partition), or None where a unit of overlapping file groups would be too big for
        one task, more than two full files (then `tag_and_place`)."""
        return plan_routing(
            spark,
            view,
            partitions,
            merge_on_read=meta_client.merge_on_read,
            logged_inserts=groups_with_inserts_in_logs(meta_client, view.timeline),
            max_unit_size=2 * config.max_file_size,
        )

    def tag_and_place(self, batch: DataFrame, context: TaggingContext) -> Placement:
        parallelism = tagging_parallelism(batch.sparkSession, context.config)
        sources = key_sources(context)
        tagged, profile, cached = self._tag(batch, context, sources, parallelism)
        buckets, targets = place(profile, context)
        return Placement(tagged, profile, buckets, targets, cached=cached)

    def stored_locations(
        self,
        batch: DataFrame,
        context: TaggingContext,
        sources: list[KeySource],
        parallelism: int,
        batch_keys: pa.Table | None,
    ) -> DataFrame:
        """The stored keys of `sources` that `batch` may name, with their file ids (only
        those `batch_keys` names, where the batch's keys and partitions are on the driver):
        SIMPLE reads the key column of every source. The one step another index that
        confirms keys against stored ones (BLOOM) does its own way."""
        wanted = None
        if batch_keys is not None:
            wanted = pc.unique(batch_keys.column(RECORD_KEY)).cast(pa.string())
        return existing_keys(batch.sparkSession, context.meta_client.storage, sources,
                             context.view.committed, parallelism, wanted)  # fmt: skip

    def _tag(
        self,
        batch: DataFrame,
        context: TaggingContext,
        sources: list[KeySource],
        parallelism: int,
    ) -> tuple[DataFrame, WorkloadProfile, bool]:
        """The batch with each record's LOCATION, its workload profile, and whether the tagged
        batch is a cache of its own.

        With no stored slice to tag against, every record is an insert, as the summary counts
        it. A batch small enough to hold its keys on the driver gets its stored keys there
        and joins them as a local relation. A larger one joins every stored key in Spark, and
        caches the join, which the profile and the write both read.
        """
        spark = batch.sparkSession
        lookup: StoredLookup = partial(self.stored_locations, batch, context, sources, parallelism)
        if not sources:
            tagged = batch.withColumn(LOCATION, F.lit(None).cast("string"))
            return drop_unknown_deletes(tagged, context), summary_profile(context), False
        if context.incoming_rows <= KEY_FILTER_MAX_ROWS:
            located, stored = locate_batch_keys(batch, lookup)
            if context.delete_operation:
                located = located.filter(pc.is_valid(located.column(LOCATION)))
            stored_keys = spark.createDataFrame(stored)
            if context.on_existing is None:
                tagged = batch.join(stored_keys, on=[RECORD_KEY, PARTITION_PATH], how="left")
                return drop_unknown_deletes(tagged, context), located_profile(located), False
            existing = located.filter(pc.is_valid(located.column(LOCATION)))
            if context.on_existing == FAIL_ON_EXISTING and existing.num_rows:
                raise keys_exist_error(context, pc.sum(existing.column("count")).as_py(),
                                       existing.slice(0, 3).to_pylist())  # fmt: skip
            located = located.filter(pc.is_null(located.column(LOCATION)))
            tagged = batch.join(stored_keys, on=[RECORD_KEY, PARTITION_PATH], how="left_anti")
            tagged = tagged.withColumn(LOCATION, F.lit(None).cast("string"))
            return tagged, located_profile(located), False
        tagged = tag_location(batch, lookup(None), sources)
        if context.on_existing == DROP_EXISTING:
            tagged = tagged.filter(F.col(LOCATION).isNull())
        tagged = drop_unknown_deletes(tagged, context).persist()
        profile = profile_of(tagged)
        if context.on_existing == FAIL_ON_EXISTING and profile.updates:
            rows = sum(n for groups in profile.updates.values() for n in groups.values())
            examples = tagged.filter(F.col(LOCATION).isNotNull()).limit(3).collect()
            tagged.unpersist()
            raise keys_exist_error(context, rows, [r.asDict() for r in examples])
        return tagged, profile, True


def tagging_parallelism(spark: SparkSession, config: WriteConfig) -> int:
    """Spark tasks for reading stored keys: the write's parallelism, or Spark's shuffle
    partitions."""
    return config.parallelism or int(
        # pyspark types get() as Optional even when given a default
        spark.conf.get("spark.sql.shuffle.partitions", "200")  # type: ignore[arg-type]
    )


def key_sources(context: TaggingContext) -> list[KeySource]:
    """The files of `context.slices` whose keys tagging reads: base files, and on merge-on-read
    the logs where keys may live alone (`groups_with_inserts_in_logs`)."""
    meta_client = context.meta_client
    merge_on_read = meta_client.merge_on_read
    logged_inserts = (
        groups_with_inserts_in_logs(meta_client, context.timeline) if context.slices else set()
    )
    return [
        KeySource.of(
            s,
            with_logs=merge_on_read
            and (s.base_file is None or (s.partition_path, s.file_id) in logged_inserts),
            view=context.view,
        )
        for s in context.slices
    ]


def place(
    profile: WorkloadProfile, context: TaggingContext
) -> tuple[list[InsertBucket], dict[str, FileGroupTarget]]:
    """Insert buckets, and where every record's file group gets its new version.

    Inserts fill small file groups first. In a merge-on-read table only slices without log
    files and outside pending compactions count as small (Hudi's rule when the index cannot
    see log files): such a group is rewritten with its inserts and updates as a new base
    file. Updates and deletes of every other existing group go to a new log file (merge-on-
    read) or a new base file version (copy-on-write).
    """
    config, pending = context.config, context.pending_compactions
    merge_on_read = context.meta_client.merge_on_read
    small = [
        s.base_file
        for s in context.slices
        if s.base_file is not None
        and not (merge_on_read and (s.log_files or (s.partition_path, s.file_id) in pending))
        and (s.partition_path, s.file_id) not in context.pending_clusterings
    ]
    buckets = plan_inserts(
        profile,
        {p: [f for f in small if f.partition_path == p] for p in context.partitions},
        max_file_size=config.max_file_size,
        small_file_limit=config.small_file_limit,
        average_record_size=average_record_size(context.meta_client, config),
    )
    targets: dict[str, FileGroupTarget] = {}
    for bucket in buckets:
        base = bucket.base_file
        targets[bucket.file_id] = FileGroupTarget(
            bucket.partition_path,
            bucket.file_id,
            base.relative_path if base else None,
            base.instant if base else None,
        )
    # A small file group taking inserts is rewritten, its updates included.
    targets.update(next_versions(profile, context.slices, pending, merge_on_read, targets))
    return buckets, targets


def keys_exist_error(
    context: TaggingContext, rows: int, examples: list[dict[str, Any]]
) -> RecordKeyExistsError:
    """The error of an insert (dup policy fail) that brings keys the table holds."""
    shown = ", ".join(
        f"'{e[RECORD_KEY]}'" + (f" in partition '{e[PARTITION_PATH]}'" if e[PARTITION_PATH] else "")
        for e in examples
    )
    return RecordKeyExistsError(
        f"table '{context.meta_client.name}': {rows} incoming row(s) carry record keys the table "
        f"already holds (e.g. {shown}); nothing was written. An insert or bulk_insert only adds "
        "new keys: write with hoodie.datasource.write.operation=upsert to update stored "
        "records, or set hoodie.datasource.insert.dup.policy=drop to keep them and skip these "
        "rows"
    )


def drop_unknown_deletes(tagged: DataFrame, context: TaggingContext) -> DataFrame:
    """A delete of a key the table does not hold has nothing to do. (In an upsert such a
    delete stays: it may be the batch's latest version of a key that another of its rows
    would insert; the write task combines them and writes neither.)"""
    if context.delete_operation:
        return tagged.filter(F.col(LOCATION).isNotNull())
    return tagged


@dataclass(frozen=True)
class RoutedTagging(InTaskTagging):
    """Tagging in the write tasks, one task per routing unit (`routing.py`); new file groups
    are sized by the table's average record size, which the write tasks cannot know."""

    routing: RoutingPlan
    meta_client: HoodieTableMetaClient
    config: WriteConfig

    def write(self, writer: InTaskWriter) -> list[WriteStat]:
        return writer.write_routed(self.routing, average_record_size(self.meta_client,
                                                                     self.config))  # fmt: skip

    def describe(self) -> str:
        units, groups = self.routing.unit_count, self.routing.file_group_count
        return (
            f"{units:,} routing unit{'' if units == 1 else 's'} over {groups:,} file "
            f"group{'' if groups == 1 else 's'}, {self.config.index_type} index"
        )


def average_record_size(meta_client: HoodieTableMetaClient, config: WriteConfig) -> int:
    """Bytes per record of the latest commit that wrote base files, as Hudi estimates it.

    Only base files count: a log file of a few records is mostly block headers and schema,
    and would make every new file group look full far too early. For the same reason a base
    file's bloom filter (hundreds of kilobytes in its footer, whatever its records) is not
    counted; a file too small to hold one (written before base files carried them) is left out.
    """
    timeline = meta_client.timeline().completed.write_timeline
    bloom_filter = config.bloom_filter
    for instant in reversed(timeline.instants[-10:]):
        stats = [
            s
            for s in meta_client.completed_commit(instant).write_stats()
            if s.path
            and parse_base_file_name(posixpath.basename(s.path)) is not None
            and s.total_write_bytes > bloom_filter.footer_size(s.num_writes)
        ]
        records = sum(s.num_writes for s in stats)
        written = sum(s.total_write_bytes - bloom_filter.footer_size(s.num_writes) for s in stats)
        if records > 0 and written > 0:
            return max(1, written // records)
    return config.record_size_estimate


def groups_with_inserts_in_logs(
    meta_client: HoodieTableMetaClient, timeline: Timeline
) -> set[tuple[str, str]]:
    """File groups where some delta commit put new keys into a log file.

    Only there (and in slices without a base file) can a key live in a log file alone:
    this writer sends inserts to base files, as Hudi does unless its index can see log
    files. Everywhere else the base file already holds every key, so tagging skips the
    logs, which would otherwise make each delta commit's tagging slower than the last.
    """
    if not meta_client.merge_on_read:
        return set()
    groups = set()
    for instant in timeline.completed:
        if instant.action is not Action.DELTA_COMMIT:
            continue
        metadata = meta_client.completed_commit(instant)
        # A bucket-index write sends new keys to logs without counting them as inserts.
        by_bucket = (metadata.extra_metadata or {}).get(INDEX_TYPE_KEY) == BUCKET_INDEX
        for stat in metadata.write_stats():
            is_log = stat.path and parse_log_file_name(posixpath.basename(stat.path))
            if is_log and (stat.num_inserts or by_bucket):
                groups.add((stat.partition_path, stat.file_id))
    return groups

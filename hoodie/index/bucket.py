"""The BUCKET index: a record's file group follows from a hash of its key, so tagging reads nothing.

Each partition is cut into a fixed number of buckets (`hoodie.bucket.index.num.buckets`); a
bucket is one file group whose file id starts with the bucket number (`00000003-...-0`). A
record goes to bucket `(hash(key values) & 0x7fffffff) % buckets`, with the hash of Hudi's
`BucketIdentifier`: Java's `List<String>.hashCode()` over the values of the hash fields
(default: the record key fields). Using Java's hash rather than a faster one is what lets
Apache Hudi and this writer take turns on one table without sending a key to two file groups.

Tagging is then a lookup of (partition, bucket) among the file groups that exist, with no scan
of stored keys: the point of the index for upserts that touch a small part of a large table.
The price is Hudi's: the bucket count is fixed when the table is created, file groups grow
without a size limit, and on merge-on-read tables inserts into an existing bucket go to its
log files (the writer does not know whether a key is new), as Hudi does.

The hash is a Spark SQL expression, so it runs in the JVM next to the data: the key's UTF-16
code units folded with `h * 31 + unit` modulo 2^32, which is Java's `String.hashCode` read as
an unsigned number (about 2 s per million keys on 2 cores).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..config import BUCKET_INDEX, WriteConfig
from ..exceptions import InvalidConfigError, TableIdentityError
from ..fs_view import FileSlice, FileSystemView
from ..meta_client import HoodieTableMetaClient
from ..metadata import WriteStat
from ..naming import bucket_of_file_id, new_bucket_file_id
from ..schema import IS_DELETED, PARTITION_PATH, quoted_name
from ..timeline import Timeline
from .base import (
    INDEX_TYPE_KEY,
    LOCATION,
    HoodieIndex,
    InTaskTagging,
    InTaskWriter,
    Placement,
    TaggingContext,
    next_versions,
)
from .placement import FileGroupTarget, WorkloadProfile

BUCKET_COUNT_KEY = "hoodie.bucket.index.num.buckets"
BUCKET = "__hoodie_bucket"
EXISTS = "__hoodie_bucket_exists"
_TWO_TO_32 = 1 << 32


def java_string_hash(value: str | None) -> int:
    """Java's `String.hashCode` (signed 32-bit); null hashes to 0 as in `List.hashCode`."""
    if value is None:
        return 0
    h = 0
    units = value.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i : i + 2], "big")) % _TWO_TO_32
    return h - _TWO_TO_32 if h >= 1 << 31 else h


def bucket_id(values: Iterable[str | None], num_buckets: int) -> int:
    """Hudi's `BucketIdentifier.getBucketId` for the hash fields' values."""
    h = 1
    for value in values:
        h = (31 * h + java_string_hash(value)) % _TWO_TO_32
    return (h & 0x7FFFFFFF) % num_buckets


def _hash_text(text: Column) -> Column:
    """`String.hashCode` of a string column as an unsigned 32-bit bigint; null and '' give 0.

    Spark splits a string into code points; Java hashes UTF-16 units, so a code point beyond
    the BMP counts as its surrogate pair.
    """

    def step(h: Column, char: Column) -> Column:
        point = F.ascii(char).cast("bigint")
        offset = point - 0x10000
        high = F.shiftright(offset, 10) + 0xD800
        low = offset.bitwiseAND(0x3FF) + 0xDC00
        return F.when(point <= 0xFFFF, F.pmod(h * 31 + point, F.lit(_TWO_TO_32))).otherwise(
            F.pmod((F.pmod(h * 31 + high, F.lit(_TWO_TO_32))) * 31 + low, F.lit(_TWO_TO_32))
        )

    folded = F.aggregate(F.split(text, ""), F.lit(0).cast("bigint"), step)
    return F.coalesce(folded, F.lit(0).cast("bigint"))


@dataclass(frozen=True)
class BucketIndex(HoodieIndex):
    num_buckets: int
    hash_fields: tuple[str, ...]
    name = BUCKET_INDEX

    @classmethod
    def of(cls, config: WriteConfig) -> BucketIndex:
        return cls(config.bucket_count, config.bucket_hash_fields or config.record_key_fields)

    # -- HoodieIndex ---------------------------------------------------------------------------
    def columns(self) -> dict[str, Column]:
        return {BUCKET: self.bucket_column()}

    def summary_keys(self) -> list[str]:
        return [BUCKET]

    def summary_aggregates(self) -> list[Column]:
        deleted = F.coalesce(F.col(IS_DELETED), F.lit(False))
        return [F.count_if(deleted).alias("deletes")]

    def commit_metadata(self) -> dict[str, str]:
        return {INDEX_TYPE_KEY: self.name, BUCKET_COUNT_KEY: str(self.num_buckets)}

    def check_insert(self, table_name: str, operation: str) -> None:
        raise InvalidConfigError(
            f"table '{table_name}': operation {operation.lower()} needs the SIMPLE "
            "index (the BUCKET index places records without looking up which keys exist); "
            "use upsert, or the SIMPLE index"
        )

    def bulk_inserts(self) -> bool:
        # A bucket's file id follows from its keys: no batch goes to file groups of any id.
        return False

    def tags_in_write_tasks(self) -> bool:
        # A bucket is one file group: a task can find its bucket's slice and write at once.
        return True

    def in_task_tagging(
        self,
        spark: SparkSession,
        meta_client: HoodieTableMetaClient,
        config: WriteConfig,
        view: FileSystemView,
        partitions: list[str] | None = None,
    ) -> InTaskTagging:
        return BucketTagging(self)

    def check_table(self, meta_client: HoodieTableMetaClient, timeline: Timeline) -> None:
        """A bucket count different from the one the table was written with would send keys
        to other buckets than their stored versions (duplicates after more buckets): refused,
        using the count the latest bucket-index commit recorded. (Fewer buckets than the
        table has are also caught by the file group checks, for tables other writers made.)"""
        for done in reversed(timeline.completed.write_timeline.instants):
            extra = meta_client.commit_metadata(done).extra_metadata or {}
            if extra.get(INDEX_TYPE_KEY) != BUCKET_INDEX or BUCKET_COUNT_KEY not in extra:
                continue
            stored = int(extra[BUCKET_COUNT_KEY])
            if stored != self.num_buckets:
                raise TableIdentityError(
                    f"table '{meta_client.name}' was written with {BUCKET_COUNT_KEY}={stored} "
                    f"(commit {done.timestamp}), but this write asks for {self.num_buckets}: "
                    f"the bucket count cannot change after the table is created; set it back "
                    f"to {stored}, or rebuild the table",
                    setting=BUCKET_COUNT_KEY,
                    stored=stored,
                    wanted=self.num_buckets,
                )
            return

    def tag_and_place(self, batch: DataFrame, context: TaggingContext) -> Placement:
        """Every record's location is its bucket's file group, new or not; each bucket's file
        group takes all its records: a new base file for a new bucket, otherwise a new base
        file version (copy-on-write) or a log file (merge-on-read: new keys included, since
        the writer never learns whether a key is stored)."""
        counts = [BucketCount(r[PARTITION_PATH], r[BUCKET], r["rows"], r["deletes"])
                  for r in context.summary]  # fmt: skip
        tagged, per_group = self.tag(batch, counts, context.slices, context.meta_client.name,
                                     LOCATION, context.delete_operation)  # fmt: skip
        profile = WorkloadProfile()
        for (partition, file_id), count in per_group.items():
            profile.add(partition, file_id, count)
        merge_on_read = context.meta_client.merge_on_read
        targets = next_versions(profile, context.slices, context.pending_compactions,
                                merge_on_read)  # fmt: skip
        for partition, groups in profile.updates.items():
            for file_id in groups:
                targets.setdefault(file_id, FileGroupTarget(partition, file_id, None, None))
        return Placement(tagged, profile, [], targets)

    def bucket_column(self) -> Column:
        """The bucket of every row, computed from its hash fields as Hudi does.

        Hudi hashes the values it parses back out of the record key: a simple key is one
        value, a complex key's `__null__` / `__empty__` parts become null / '' (both hash to
        0). (Hudi splits the key text on ',' and ':', so values containing those characters
        may land in other buckets under Apache Hudi: keep such keys out of bucket tables
        that both write.)
        """
        h = F.lit(1).cast("bigint")
        for name in self.hash_fields:
            text = F.col(quoted_name(name)).cast("string")
            h = F.pmod(h * 31 + _hash_text(text), F.lit(_TWO_TO_32))
        return (F.pmod(h, F.lit(1 << 31)) % F.lit(self.num_buckets)).cast("int")

    def file_groups(self, slices: list[FileSlice], table_name: str) -> dict[tuple[str, int], str]:
        """(partition, bucket) -> file id of the table's bucket file groups, checked."""
        found: dict[tuple[str, int], str] = {}
        for file_slice in slices:
            bucket = bucket_of_file_id(file_slice.file_id)
            if bucket is None:
                raise TableIdentityError(
                    f"table '{table_name}' has file group {file_slice.file_id} in partition "
                    f"'{file_slice.partition_path}', which is not a bucket file group: the table "
                    "was written with another index. hoodie.index.type=BUCKET needs a table "
                    "built with it from the start (rebuild the table)",
                    setting="hoodie.index.type",
                    stored="not BUCKET",
                    wanted="BUCKET",
                )
            if bucket >= self.num_buckets:
                # A random file id whose first 8 characters happen to be digits (one in 43)
                # reads as a bucket too: the message names both causes.
                raise TableIdentityError(
                    f"table '{table_name}' has file group {file_slice.file_id} in partition "
                    f"'{file_slice.partition_path}', which names bucket {bucket}, but "
                    f"hoodie.bucket.index.num.buckets is {self.num_buckets}: the table was "
                    "written with more buckets (the bucket count cannot change after the table "
                    "is created; set it back) or with another index (rebuild the table)",
                    setting=BUCKET_COUNT_KEY,
                    stored=f"more than {bucket}",
                    wanted=self.num_buckets,
                )
            other = found.setdefault((file_slice.partition_path, bucket), file_slice.file_id)
            if other != file_slice.file_id:
                raise InvalidConfigError(
                    f"table '{table_name}' has two file groups for bucket {bucket} in partition "
                    f"'{file_slice.partition_path}' ({other}, {file_slice.file_id}); was it "
                    "written with another bucket count or index?"
                )
        return found

    def tag(
        self,
        records: DataFrame,
        groups: list[BucketCount],
        slices: list[FileSlice],
        table_name: str,
        location: str,
        delete_operation: bool = False,
    ) -> tuple[DataFrame, dict[tuple[str, str], int]]:
        """`records` (which carry BUCKET, from `bucket_column`) plus `location`: the file id of
        each record's bucket, new buckets getting a fresh one; and the records per file group.

        `groups` are the batch's (partition, bucket) counts. A delete operation's keys in a
        bucket the table does not have yet are dropped: they have nothing to delete. An
        upsert's deletes stay, since one may be the latest version of a key that another row
        of the batch would insert (the write task combines them).
        """
        existing = self.file_groups(slices, table_name)
        lookup_rows, counts = [], {}
        for group in groups:
            file_id = existing.get((group.partition_path, group.bucket))
            exists = file_id is not None
            file_id = file_id or new_bucket_file_id(group.bucket)
            lookup_rows.append((group.partition_path, group.bucket, file_id, exists))
            kept = group.rows if exists or not delete_operation else group.rows - group.deletes
            if kept:
                counts[(group.partition_path, file_id)] = kept
        lookup = records.sparkSession.createDataFrame(
            lookup_rows,
            f"{PARTITION_PATH} string, {BUCKET} int, {location} string, {EXISTS} boolean",
        )
        tagged = records.join(F.broadcast(lookup), on=[PARTITION_PATH, BUCKET])
        if delete_operation:
            tagged = tagged.filter(F.col(EXISTS))
        tagged = tagged.drop(BUCKET, EXISTS)
        return tagged, counts


@dataclass(frozen=True)
class BucketTagging(InTaskTagging):
    """Tagging in the write tasks, one task per bucket: nothing to plan beyond the index."""

    index: BucketIndex

    def write(self, writer: InTaskWriter) -> list[WriteStat]:
        return writer.write_buckets(self.index)

    def describe(self) -> str:
        return f"{self.index.num_buckets:,} buckets per partition, BUCKET index"


@dataclass(frozen=True)
class BucketCount:
    """Records and deletes of one (partition, bucket) in a batch."""

    partition_path: str
    bucket: int
    rows: int
    deletes: int

"""The write domain: every option a write takes (`WriteConfig`'s), in Hudi's option names.

`hoodie.config` builds a `WriteConfig` from these (`attribute` is the field each sets); the
table services take their defaults from here when they run without a write config, and the
bloom filter's defaults are these. Options that also describe the table (its type, hive-style
partitioning, ...) take their defaults from the table domain, so each default is written once.
"""

from __future__ import annotations

from enum import Enum
from typing import cast

from ..exceptions import InvalidConfigError
from . import table
from .keygen import KEYGEN_OPTIONS
from .property import (
    Alias,
    ConfigProperty,
    Parse,
    boolean,
    choice,
    choice_values,
    column,
    field_list,
    non_negative_int,
    optional_field_list,
    positive_float,
    positive_int,
    probability,
    text,
)

MB = 1024 * 1024


class Operation(Enum):
    """hoodie.datasource.write.operation: what a write does with keys the table already holds."""

    UPSERT = "upsert"
    INSERT = "insert"
    BULK_INSERT = "bulk_insert"


class InsertDupPolicy(Enum):
    """hoodie.datasource.insert.dup.policy: what an insert does with them (Apache Hudi's
    `none` is refused: see `_dup_policy`)."""

    FAIL = "fail"
    DROP = "drop"


class Compression(Enum):
    SNAPPY = "snappy"
    GZIP = "gzip"
    ZSTD = "zstd"
    LZ4 = "lz4"
    BROTLI = "brotli"
    UNCOMPRESSED = "uncompressed"
    NONE = "none"


class IndexType(Enum):
    """hoodie.index.type: how a write finds the file group holding each key."""

    SIMPLE = "SIMPLE"
    BUCKET = "BUCKET"
    BLOOM = "BLOOM"
    GLOBAL_SIMPLE = "GLOBAL_SIMPLE"
    GLOBAL_BLOOM = "GLOBAL_BLOOM"
    RECORD_INDEX = "RECORD_INDEX"


# Apache Hudi 1.2's other names of index types: the same index, another value.
INDEX_TYPE_ALIASES = {"GLOBAL_RECORD_LEVEL_INDEX": IndexType.RECORD_INDEX.value}
# Apache Hudi 1.1+'s partitioned record index (keys unique per partition), which we lack.
_PARTITIONED_RECORD_INDEX = "RECORD_LEVEL_INDEX"


class BloomFilterType(Enum):
    """Apache Hudi's bloom filter kinds (`BloomFilterTypeCode`): one vector, or rows of them."""

    SIMPLE = "SIMPLE"
    DYNAMIC_V0 = "DYNAMIC_V0"


class CleanerPolicy(Enum):
    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"


class CompactionTriggerStrategy(Enum):
    """hoodie.metadata.compact.trigger.strategy: when the metadata table is compacted (Apache
    Hudi's `CompactionTriggerStrategy`): after enough delta commits, enough seconds, both or
    either. NUM_COMMITS_AFTER_LAST_REQUEST counts from the latest compaction requested, which
    for us is the latest completed one (a pending metadata table compaction is removed before
    the services run), so it is NUM_COMMITS."""

    NUM_COMMITS = "NUM_COMMITS"
    NUM_COMMITS_AFTER_LAST_REQUEST = "NUM_COMMITS_AFTER_LAST_REQUEST"
    TIME_ELAPSED = "TIME_ELAPSED"
    NUM_AND_TIME = "NUM_AND_TIME"
    NUM_OR_TIME = "NUM_OR_TIME"


class ConcurrencyMode(Enum):
    SINGLE_WRITER = "single_writer"
    OPTIMISTIC_CONCURRENCY_CONTROL = "optimistic_concurrency_control"


class LockProvider(Enum):
    """hoodie.write.lock.provider: our two locks; Apache Hudi's class names for them are
    accepted too (`HUDI_LOCK_CLASSES`)."""

    FILESYSTEM = "filesystem"
    STORAGE = "storage"


HUDI_LOCK_CLASSES = {
    "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider": LockProvider.FILESYSTEM,
    "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider": LockProvider.STORAGE,
}
_LOCK_PROVIDERS = {
    **{provider.value: provider.value for provider in LockProvider},
    **{name.lower(): provider.value for name, provider in HUDI_LOCK_CLASSES.items()},
}


def _table_version(key: str, value: object) -> int:
    versions = choice_values(table.TableVersion)
    stripped = str(value).strip()
    if not stripped.isdigit() or int(stripped) not in tuple(table.TableVersion):
        raise InvalidConfigError(
            f"option '{key}' must be one of {', '.join(versions)} (the Hudi "
            f"table version to write: 6 for Apache Hudi 0.x readers, 8 for Apache Hudi 1.x), "
            f"got {value!r}"
        )
    return int(stripped)


def _lock_provider(key: str, value: object) -> str:
    folded = str(value).strip().lower()
    if folded not in _LOCK_PROVIDERS:
        storage, filesystem = LockProvider.STORAGE.value, LockProvider.FILESYSTEM.value
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not a lock provider we have; use {storage} "
            f"(org.apache.hudi.client.transaction.lock.StorageBasedLockProvider) or "
            f"{filesystem} (org.apache.hudi.client.transaction.lock."
            "FileSystemBasedLockProvider)"
        )
    return _LOCK_PROVIDERS[folded]


def _index_type(key: str, value: object) -> str:
    folded = str(value).strip().upper()
    folded = INDEX_TYPE_ALIASES.get(folded, folded)
    supported = choice_values(IndexType)
    if folded == _PARTITIONED_RECORD_INDEX:
        raise InvalidConfigError(
            f"option '{key}'={value!r} (Apache Hudi 1.1+'s partitioned record index, keys "
            "unique per partition) is not supported; RECORD_INDEX (the global record index, "
            "also named GLOBAL_RECORD_LEVEL_INDEX) is, and SIMPLE or BLOOM look keys up per "
            "partition"
        )
    if folded not in supported:
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not supported; supported: {', '.join(supported)}"
        )
    return folded


def _dup_policy(key: str, value: object) -> str:
    if str(value).strip().lower() == "none":
        raise InvalidConfigError(
            f"option '{key}'=none (Apache Hudi's default: insert keys the table already holds "
            "as second records) is not supported: every reader, upsert and delete of a "
            "dbt-hoodie table relies on one record per key. Use fail (the default: the write "
            "stops, naming the keys) or drop (the stored records are kept and the incoming rows "
            "of those keys skipped)"
        )
    return str(choice(InsertDupPolicy)(key, value))


def _only(taken: bool, why: str) -> Parse:
    """A switch we take at one value only, Apache Hudi's default (so configs copied from
    Apache Hudi jobs carry over): the other value is refused, saying why and what to do
    instead. Its option sets no `WriteConfig` field (there is nothing to choose)."""

    def check(key: str, value: object) -> bool:
        given = boolean(key, value)
        if given != taken:
            raise InvalidConfigError(
                f"option '{key}'={str(given).lower()} is not supported: {why}. Leave it unset "
                f"(or {str(taken).lower()}, Apache Hudi's default)"
            )
        return given

    return check


# What refusing each of Apache Hudi's metadata table switches says (keys and defaults as in
# HoodieMetadataConfig of Apache Hudi 0.15.0 and 1.2.0, read from their bundles' classes).
_NO_PARTITIONED_RECORD_INDEX = (
    "the metadata table's partitioned record index (Apache Hudi 1.1+: record_index keyed by "
    "partition and key) is not written by dbt-hoodie; its global record index is "
    "(hoodie.metadata.global.record.level.index.enable, 0.15's "
    "hoodie.metadata.record.index.enable)"
)
_REFUSED_SWITCHES = (
    ConfigProperty("hoodie.metadata.log.compaction.enable", False,
                   "Apache Hudi 0.14+ (default false): log compaction of the metadata table "
                   "(its log blocks merged into one new log file); only false: we compact it "
                   "into base files (hoodie.metadata.compact.*)",
                   parse=_only(False, "the metadata table is compacted into HFile base files "
                               "(hoodie.metadata.compact.max.delta.commits), never log-compacted "
                               "by dbt-hoodie")),
    ConfigProperty("hoodie.metadata.index.async", False,
                   "Apache Hudi 0.11+ (default false): index partitions built by an "
                   "asynchronous indexer; only false: the write that turns an index on builds "
                   "it, inline",
                   parse=_only(False, "dbt-hoodie has no asynchronous indexer: the write that "
                               "turns an index on (hoodie.metadata.index.*.enable=true) builds "
                               "it before its own delta commit")),
    ConfigProperty("hoodie.metadata.streaming.write.enabled", False,
                   "Apache Hudi 1.1+ (default false): the data and metadata table writes in "
                   "one Spark job; only false: our metadata delta commit is written after the "
                   "action's files, from their write stats, before the action completes",
                   parse=_only(False, "the metadata table's delta commit is written from the "
                               "action's write stats after its data files, before the action "
                               "completes, as Apache Hudi's non-streaming writers do")),
    ConfigProperty("hoodie.metadata.index.partition.stats.enable", False,
                   "Apache Hudi 1.0 (its 1.2 builds partition_stats with column stats, on "
                   "version 8, and reads no such key): only false: the partition_stats "
                   "partition is not written (readers skip by column_stats without it)",
                   parse=_only(False, "the metadata table's partition_stats partition is not "
                               "written by dbt-hoodie (hoodie.metadata.index.column.stats.enable "
                               "gives readers per-file statistics)")),
    ConfigProperty("hoodie.metadata.record.level.index.enable", False,
                   "Apache Hudi 1.1+ (default false): the partitioned record index; only false "
                   "(the global one is hoodie.metadata.global.record.level.index.enable)",
                   parse=_only(False, _NO_PARTITIONED_RECORD_INDEX)),
    ConfigProperty("hoodie.metadata.auto.initialize", True,
                   "Apache Hudi 0.14+ (default true): the metadata table is built from a "
                   "listing of the table's files; only true (false builds one without them); to "
                   "write without a metadata table, hoodie.metadata.enable=false",
                   parse=_only(True, "with false Apache Hudi builds the metadata table's files "
                               "partition without listing the table's files (for metadata "
                               "tables filled in by other means), and one missing files hides "
                               "them from every reader; dbt-hoodie always builds it from a "
                               "listing. To write without a metadata table, set "
                               "hoodie.metadata.enable=false")),
    ConfigProperty("_hoodie.metadata.ignore.spurious.deletes", True,
                   "Apache Hudi 0.10+ (default true): a metadata table record deleting a file "
                   "no earlier record added is ignored; only true on writes (the read option of "
                   "this key, false, makes a read fail on one)",
                   parse=_only(True, "writes read the metadata table tolerating spurious deletes "
                               "(a files record deleting a file no earlier one added), as Apache "
                               "Hudi does by default; to check a table for them, read "
                               "it with this read option set to false (spark.read.format("
                               "\"hoodie\").option(\"_hoodie.metadata.ignore.spurious.deletes\", "
                               "\"false\"))")),
)  # fmt: skip
_DYNAMIC_V0, _SIMPLE = BloomFilterType.DYNAMIC_V0.value, BloomFilterType.SIMPLE.value


class LayoutOptimizationStrategy(Enum):
    """hoodie.layout.optimize.strategy: how clustering orders rows by the sort columns
    (Apache Hudi's `LayoutOptimizationStrategy`; HILBERT is refused)."""

    LINEAR = "LINEAR"
    ZORDER = "ZORDER"


def _only_value(taken: str, why: str) -> Parse:
    """An option we take at one value only, Apache Hudi's default (so configs copied from
    Apache Hudi jobs carry over): any other is refused by name, saying why. Its option sets no
    `WriteConfig` field."""

    def check(key: str, value: object) -> str:
        given = str(value).strip()
        if given.lower() != taken.lower():
            raise InvalidConfigError(
                f"option '{key}'={given} is not supported: {why}. Leave it unset (or {taken}, "
                "Apache Hudi's default)"
            )
        return taken

    return check


# What a config copied from an Apache Hudi Spark job commonly carries that dbt-hoodie has no
# separate setting for: taken at Apache Hudi's default (what we do), any other value refused
# by name with what to do instead, not as an unknown key. (The hive_sync keys besides its
# switch are refused by prefix: `REFUSED_PREFIXES`.)
CATALOG_SYNC = (
    "dbt-hoodie syncs to no other catalog (its dbt adapter registers the table in the "
    "session's Spark catalog, the Hive metastore, on every run); remove the "
    "hoodie.datasource.hive_sync.* and hoodie.datasource.meta.sync.* settings"
)
# Keys under these prefixes are Apache Hudi settings of a feature dbt-hoodie does not have:
# refused with the reason rather than as unknown keys.
REFUSED_PREFIXES = {
    "hoodie.datasource.hive_sync.": CATALOG_SYNC,
    "hoodie.datasource.meta.sync.": CATALOG_SYNC,
    "hoodie.meta.sync.": CATALOG_SYNC,
}
_ONE_PARALLELISM = (
    "dbt-hoodie has one setting for the write tasks of every operation (bulk insert, insert, "
    "upsert, delete): hoodie.upsert.shuffle.parallelism"
)
_HUDI_JOB_SETTINGS = (
    ConfigProperty("hoodie.datasource.hive_sync.enable", False,
                   "Apache Hudi's Hive sync; only false: " + CATALOG_SYNC,
                   parse=_only(False, CATALOG_SYNC)),
    ConfigProperty("hoodie.datasource.meta.sync.enable", False,
                   "Apache Hudi's catalog sync; only false: " + CATALOG_SYNC,
                   parse=_only(False, CATALOG_SYNC)),
    ConfigProperty("hoodie.combine.before.upsert", True,
                   "Apache Hudi (default true): combine a batch's records of one key before "
                   "an upsert; only true: an upsert always keeps one record per key, by the "
                   "ordering field",
                   parse=_only(True, "an upsert always combines a batch's records of one key "
                               "by the ordering field (hoodie.datasource.write.precombine."
                               "field), as Apache Hudi does by default")),
    ConfigProperty("hoodie.bulkinsert.sort.mode", "NONE",
                   "Apache Hudi (1.x default NONE): how a bulk insert sorts its records; only "
                   "NONE: each partition's records are written as they come",
                   parse=_only_value("NONE", "a bulk insert writes each partition's records "
                                     "as they come; clustering sorts a table's files "
                                     "(hoodie.clustering.plan.strategy.sort.columns)")),
    ConfigProperty("hoodie.clean.async.enabled", False,
                   "Apache Hudi (default false): clean in a background thread; only false: "
                   "cleaning runs after a write (hoodie.clean.automatic) or by hoodie_clean",
                   parse=_only(False, "cleaning runs after a write (hoodie.clean.automatic) "
                               "or by the hoodie_clean operation, never in the background"),
                   aliases=(Alias("hoodie.clean.async"),)),
    ConfigProperty("hoodie.clustering.async.enabled", False,
                   "Apache Hudi (default false): cluster in a background thread; only false: "
                   "clustering runs after a write (hoodie.clustering.inline) or by "
                   "hoodie_cluster",
                   parse=_only(False, "clustering runs after a write (hoodie.clustering."
                               "inline) or by the hoodie_cluster operation, never in the "
                               "background")),
    *(
        ConfigProperty(f"hoodie.{operation}.shuffle.parallelism", 0,
                       f"Apache Hudi (default 0: automatic): the {what}'s tasks; only 0: "
                       + _ONE_PARALLELISM,
                       parse=_only_value("0", _ONE_PARALLELISM))
        for operation, what in (("bulkinsert", "bulk insert"), ("insert", "insert"),
                                ("delete", "delete"))
    ),
)  # fmt: skip


def _layout_strategy(key: str, value: object) -> str:
    if str(value).strip().upper() == "HILBERT":
        raise InvalidConfigError(
            f"option '{key}'=HILBERT is not supported: clustering sorts LINEAR (by the sort "
            "columns in order) or ZORDER (by the bits of the columns interleaved)"
        )
    return str(choice(LayoutOptimizationStrategy)(key, value))


_CLUSTER_PREFIX = "hoodie.clustering.plan.strategy."
CLUSTERING_OPTIONS: tuple[ConfigProperty, ...] = (
    ConfigProperty("hoodie.clustering.inline", False,
                   "cluster after writes (schedule and execute), once "
                   "hoodie.clustering.inline.max.commits commits followed the last clustering",
                   attribute="inline_clustering", parse=boolean,
                   aliases=(Alias("hoodie.datasource.clustering.inline.enable"),)),
    ConfigProperty("hoodie.clustering.inline.max.commits", 4,
                   "commits since the last clustering that trigger inline clustering",
                   attribute="clustering_max_commits", parse=positive_int),
    ConfigProperty("hoodie.clustering.schedule.inline", False,
                   "schedule a clustering plan after writes (at the same trigger) without "
                   "executing it; hoodie_cluster or services.cluster runs it",
                   attribute="schedule_inline_clustering", parse=boolean),
    ConfigProperty("hoodie.clustering.plan.strategy.class",
                   "org.apache.hudi.client.clustering.plan.strategy."
                   "SparkSizeBasedClusteringPlanStrategy",
                   "how file slices are chosen and grouped: only the size-based strategy",
                   parse=_only_value("org.apache.hudi.client.clustering.plan.strategy."
                                     "SparkSizeBasedClusteringPlanStrategy",
                                     "clustering plans by file size only")),
    ConfigProperty("hoodie.clustering.execution.strategy.class",
                   "org.apache.hudi.client.clustering.run.strategy."
                   "SparkSortAndSizeExecutionStrategy",
                   "how a plan is executed: only sort (by the sort columns) and size",
                   parse=_only_value("org.apache.hudi.client.clustering.run.strategy."
                                     "SparkSortAndSizeExecutionStrategy",
                                     "clustering executes by sort and size only")),
    ConfigProperty(_CLUSTER_PREFIX + "small.file.limit", 314572800,
                   "base files smaller than this (bytes) are clustered",
                   attribute="clustering_small_file_limit", parse=positive_int),
    ConfigProperty(_CLUSTER_PREFIX + "max.bytes.per.group", 2147483648,
                   "input bytes of one clustering group at most",
                   attribute="clustering_max_bytes_per_group", parse=positive_int),
    ConfigProperty(_CLUSTER_PREFIX + "target.file.max.bytes", 1073741824,
                   "size of the files clustering writes: a group writes ceil(its bytes / this) "
                   "file groups",
                   attribute="clustering_target_file_max_bytes", parse=positive_int),
    ConfigProperty(_CLUSTER_PREFIX + "max.num.groups", 30,
                   "clustering groups of one plan at most",
                   attribute="clustering_max_groups", parse=positive_int),
    ConfigProperty(_CLUSTER_PREFIX + "sort.columns", None,
                   "comma-separated columns clustering sorts the rows by (none: key order)",
                   attribute="clustering_sort_columns", parse=optional_field_list),
    ConfigProperty(_CLUSTER_PREFIX + "single.group.clustering.enabled", True,
                   "cluster a group of one file slice too (false: only groups of several)",
                   attribute="clustering_single_group", parse=boolean),
    ConfigProperty("hoodie.clustering.plan.partition.filter.mode", "NONE",
                   "which partitions are clustered: NONE (all) only",
                   parse=_only_value("NONE", "every partition is considered for clustering")),
    ConfigProperty("hoodie.layout.optimize.strategy", LayoutOptimizationStrategy.LINEAR.value,
                   "how clustering orders rows by the sort columns: LINEAR (lexicographic) or "
                   "ZORDER (the columns' bits interleaved; our own byte layout)",
                   attribute="layout_optimize_strategy", parse=_layout_strategy,
                   choices=LayoutOptimizationStrategy),
    ConfigProperty("hoodie.clustering.rollback.pending.replacecommit.on.conflict", False,
                   "a write into a file group of a clustering plan not yet executing (requested) "
                   "rolls the plan back and goes on; false: the write fails",
                   attribute="clustering_rollback_pending_on_conflict", parse=boolean),
    ConfigProperty("hoodie.layout.optimize.curve.build.method", "DIRECT",
                   "ZORDER: from the values themselves (DIRECT) only",
                   parse=_only_value("DIRECT", "the Z-order curve is built from the values")),
)  # fmt: skip


OPTIONS: tuple[ConfigProperty, ...] = (
    # The table's identity, which callers usually give as arguments (dbt: record_key, ...);
    # Hudi's own keys for them work too, from Apache Hudi jobs, dbt-spark or dbt-glue configs.
    ConfigProperty("hoodie.table.name", None, "the table's name", attribute="table_name",
                   parse=text, aliases=(Alias("hoodie.datasource.write.table.name"),),
                   identity=True),
    ConfigProperty("hoodie.datasource.write.recordkey.field", (),
                   "record key column(s), comma-separated", attribute="record_key_fields",
                   parse=field_list, aliases=(Alias(table.RECORD_KEY_FIELDS.key),),
                   identity=True),
    ConfigProperty("hoodie.datasource.write.partitionpath.field", (),
                   "partition path column(s), comma-separated; empty: non-partitioned; "
                   "with CustomKeyGenerator each as column:SIMPLE or column:TIMESTAMP",
                   attribute="partition_fields", parse=optional_field_list,
                   aliases=(Alias(table.PARTITION_FIELDS.key),), identity=True),
    ConfigProperty("hoodie.datasource.write.precombine.field", None,
                   "ordering column: the larger value wins", attribute="precombine_field",
                   parse=column, aliases=(Alias(table.PRECOMBINE_FIELD.key),), identity=True),
    ConfigProperty("hoodie.datasource.write.payload.class", None,
                   "how versions of a key merge, as Apache Hudi's payload class: "
                   "DefaultHoodieRecordPayload or EventTimeAvroPayload (the larger ordering "
                   "value wins), OverwriteWithLatestAvroPayload (the later write wins), "
                   "OverwriteNonDefaultsWithLatestAvroPayload (the later write's non-null "
                   "columns win), PartialUpdateAvroPayload (the larger ordering value's "
                   "non-null columns win); full class names. None: the table's; a new table's "
                   "by hoodie.write.record.merge.mode, else by the precombine field (Default "
                   "with one, OverwriteWithLatest without). A table keeps its merge mode",
                   attribute="payload_class", parse=choice(table.PayloadClass),
                   aliases=(Alias(table.PAYLOAD_CLASS.key),), choices=table.PayloadClass),
    ConfigProperty("hoodie.write.record.merge.mode", None,
                   "how versions of a key merge, as Apache Hudi 1.x's merge mode: "
                   "EVENT_TIME_ORDERING (DefaultHoodieRecordPayload), COMMIT_TIME_ORDERING "
                   "(OverwriteWithLatestAvroPayload) or CUSTOM (with one of the column-wise "
                   "payloads in hoodie.datasource.write.payload.class). None: the table's, or "
                   "by the payload class. A table keeps its merge mode",
                   attribute="record_merge_mode", parse=choice(table.RecordMergeMode),
                   aliases=(Alias(table.RECORD_MERGE_MODE.key),), choices=table.RecordMergeMode),
    ConfigProperty("hoodie.write.partial.update.columns", (),
                   "a partial update (dbt's merge_update_columns / merge_exclude_columns): "
                   "the columns, comma-separated, that an incoming row whose key the table "
                   "holds replaces when it wins by the merge mode; its other columns keep the "
                   "stored values (the record key, partition and ordering columns are always "
                   "replaced), and rows of new keys are inserted whole. Every table type and "
                   "version (version 8 merge-on-read writes such rows as partial update log "
                   "blocks); refused with the column-wise payloads and with a global index "
                   "that moves records between partitions. Empty: whole rows. (Apache Hudi's "
                   "hoodie.write.partial.update.schema is an Avro schema its MERGE INTO sets "
                   "for itself, version 8 merge-on-read only)",
                   attribute="partial_update_columns", parse=optional_field_list),
    ConfigProperty("hoodie.datasource.write.table.type", table.TYPE.default,
                   "COPY_ON_WRITE or MERGE_ON_READ", attribute="table_type",
                   parse=choice(table.TableType), aliases=(Alias(table.TYPE.key),),
                   choices=table.TableType, identity=True),
    ConfigProperty(table.HIVE_STYLE_PARTITIONING.key, table.HIVE_STYLE_PARTITIONING.default,
                   "write partition folders as col=value", attribute="hive_style_partitioning",
                   parse=boolean, identity=True),
    ConfigProperty(table.URL_ENCODE_PARTITIONING.key, table.URL_ENCODE_PARTITIONING.default,
                   "escape partition values in folder names as Apache Hudi does (`%XX` for "
                   "`/`, control and Hive's special characters), and `.`, `..` and `.hoodie...` "
                   "values too (see \"Partition paths\")",
                   attribute="url_encode_partition_path", parse=boolean),
    ConfigProperty(table.CDC_ENABLED.key, None,
                   "log the changes of every write that rewrites a base file to a `.cdc` file "
                   "beside it, for Apache Hudi's CDC query "
                   "(hoodie.datasource.query.incremental.format=cdc); none: the table's, new "
                   "tables false. Set when the table is created: a table keeps it",
                   attribute="cdc_enabled", parse=boolean),
    ConfigProperty(table.CDC_SUPPLEMENTAL_LOGGING_MODE.key, None,
                   "what a `.cdc` file records per change: OP_KEY_ONLY (op and key), "
                   "DATA_BEFORE (and the before image) or DATA_BEFORE_AFTER (op, instant, both "
                   "images); none: the table's, new tables "
                   f"{table.CDC_SUPPLEMENTAL_LOGGING_MODE.default}. A table keeps it",
                   attribute="cdc_supplemental_logging_mode",
                   parse=choice(table.CdcSupplementalLoggingMode),
                   choices=table.CdcSupplementalLoggingMode),
    # Key generators (declared in `hoodie.options.keygen`).
    *KEYGEN_OPTIONS,
    ConfigProperty("hoodie.write.table.version", None,
                   "the Hudi table version a new table is created with: 6 (read by Apache Hudi "
                   "0.x and 1.x, hudi-rs) or 8 (Apache Hudi 1.x, hudi-rs); none: "
                   f"{table.VERSION.default}. A table keeps its version",
                   attribute="table_version", parse=_table_version, choices=table.TableVersion),
    ConfigProperty("hoodie.metadata.enable", None,
                   "Apache Hudi's metadata table (`.hoodie/metadata`): true keeps its files "
                   "partition up to date with every action (built from a listing by the first "
                   "one, one metadata delta commit per action, completed before the action); "
                   "false deletes it (hoodie.table.metadata.partitions cleared first) before any "
                   "action changes the table, as Apache Hudi does with false; none: true on "
                   "table version 8 (Apache Hudi 1.x's default), and on version 6 true only where "
                   "the table has one already",
                   attribute="metadata_table", parse=boolean),
    ConfigProperty("hoodie.metadata.compact.max.delta.commits", 10,
                   "with the metadata table: its delta commits after which it is compacted into "
                   "new HFile base files (after a write, once no older data instant is pending); "
                   "it is then cleaned (keeping min(hoodie.cleaner.commits.retained, 20) commits) "
                   "and archived (hoodie.keep.min/max.commits), as Apache Hudi does; the data "
                   "table's archival never goes past its latest compaction",
                   attribute="metadata_compaction_delta_commits", parse=positive_int),
    ConfigProperty("hoodie.metadata.compact.max.delta.seconds", 7200,
                   "with the metadata table and a time trigger strategy: seconds from its latest "
                   "compaction (none yet: its first delta commit) to its latest delta commit "
                   "after which it is compacted (Apache Hudi 1.2)",
                   attribute="metadata_compaction_delta_seconds", parse=positive_int),
    ConfigProperty("hoodie.metadata.compact.trigger.strategy",
                   CompactionTriggerStrategy.NUM_COMMITS.value,
                   "with the metadata table: what makes it due for compaction: "
                   "hoodie.metadata.compact.max.delta.commits delta commits (NUM_COMMITS, "
                   "NUM_COMMITS_AFTER_LAST_REQUEST), hoodie.metadata.compact.max.delta.seconds "
                   "seconds (TIME_ELAPSED), both (NUM_AND_TIME) or either (NUM_OR_TIME), as "
                   "Apache Hudi 1.2 decides, on both table versions",
                   attribute="metadata_compaction_trigger",
                   parse=choice(CompactionTriggerStrategy), choices=CompactionTriggerStrategy),
    ConfigProperty("hoodie.metadata.max.logfile.size", 2 * 1024 * MB,
                   "Apache Hudi 0.14+: bytes after which it rolls a metadata table log file "
                   "over to a new one, after an append; ours are never appended to (one new log "
                   "file per file group and delta commit), so each already holds one append, "
                   "the least any value gives",
                   parse=positive_int),
    ConfigProperty("hoodie.metadata.index.secondary.enable", None,
                   "Apache Hudi 1.x (default true): keep the secondary indexes CREATE INDEX "
                   "made; dbt-hoodie makes and keeps none: true is refused on a table whose "
                   "metadata table has one (false, or "
                   "unset: our writes rebuild its metadata table without it)",
                   attribute="metadata_secondary_index", parse=boolean),
    *_REFUSED_SWITCHES,
    *_HUDI_JOB_SETTINGS,
    ConfigProperty("hoodie.metadata.index.column.stats.enable", None,
                   "with the metadata table: its column_stats partition (each base and log "
                   "file's min, max, value and null counts per indexed column, as Apache Hudi "
                   "writes them; readers skip files by them): true builds it from the files' "
                   "footers and keeps it with every action, false drops it; none: kept where "
                   "the table has it",
                   attribute="metadata_column_stats", parse=boolean),
    ConfigProperty("hoodie.metadata.index.column.stats.column.list", None,
                   "the columns column_stats indexes, comma-separated (table version 8: after "
                   "_hoodie_commit_time, _hoodie_partition_path and _hoodie_record_key, as Apache "
                   "Hudi 1.x); none: the meta columns Apache Hudi indexes for the table version, "
                   "then every data column of a type with statistics. A change applies to the "
                   "files written from then on",
                   attribute="metadata_column_stats_columns", parse=optional_field_list),
    ConfigProperty("hoodie.metadata.index.column.stats.max.columns.to.index", 32,
                   "with no column list, on table version 8: at most this many data columns "
                   "are indexed, as Apache Hudi 1.x (version 6 indexes all, as 0.15)",
                   attribute="metadata_column_stats_max_columns", parse=positive_int),
    ConfigProperty("hoodie.metadata.index.column.stats.file.group.count", 2,
                   "file groups of a column_stats partition built by this write (an existing "
                   "one keeps its count)",
                   attribute="metadata_column_stats_file_groups", parse=positive_int),
    ConfigProperty("hoodie.metadata.index.bloom.filter.enable", None,
                   "with the metadata table: its bloom_filters partition (each base file's "
                   "record key bloom filter, as in its footer): true builds it from the footers "
                   "and keeps it, false drops it; none: kept where the table has it",
                   attribute="metadata_bloom_filters", parse=boolean),
    ConfigProperty("hoodie.metadata.index.bloom.filter.file.group.count", 4,
                   "file groups of a bloom_filters partition built by this write (an existing "
                   "one keeps its count)",
                   attribute="metadata_bloom_filter_file_groups", parse=positive_int),
    ConfigProperty("hoodie.metadata.index.bloom.filter.column.list", None,
                   "only the record key (none, or the key's field) is supported: the bloom "
                   "filters are the base files' footer filters of their keys",
                   attribute="metadata_bloom_filter_columns", parse=optional_field_list),
    ConfigProperty("hoodie.metadata.global.record.level.index.enable", None,
                   "with the metadata table: its record_index partition (where each record key "
                   "lives: partition, file group, the instant that put it there; Apache Hudi's "
                   "RECORD_INDEX index finds keys by it): true builds it from the keys of the "
                   "latest file slices and keeps it with every action, false drops it; none: "
                   "kept where the table has it",
                   attribute="metadata_record_index", parse=boolean,
                   aliases=(Alias("hoodie.metadata.record.index.enable"),)),
    ConfigProperty("hoodie.metadata.global.record.level.index.min.filegroup.count", 10,
                   "fewest file groups of a record_index partition built by this write (the "
                   "count is estimated from the table's keys when it is built, then fixed)",
                   attribute="metadata_record_index_min_file_groups", parse=positive_int,
                   aliases=(Alias("hoodie.metadata.record.index.min.filegroup.count"),)),
    ConfigProperty("hoodie.metadata.global.record.level.index.max.filegroup.count", 10000,
                   "most file groups of a record_index partition built by this write",
                   attribute="metadata_record_index_max_file_groups", parse=positive_int,
                   aliases=(Alias("hoodie.metadata.record.index.max.filegroup.count"),)),
    ConfigProperty("hoodie.metadata.record.index.max.filegroup.size", 1024 * MB,
                   "bytes of record index entries one record_index file group is sized for when "
                   "the partition is built (Apache Hudi's estimate: keys x growth factor x "
                   "average entry size / this)",
                   attribute="metadata_record_index_max_file_group_size", parse=positive_int),
    ConfigProperty("hoodie.metadata.record.index.growth.factor", 2.0,
                   "how many times the table's key count a record_index partition is sized for "
                   "when it is built",
                   attribute="metadata_record_index_growth_factor", parse=positive_float),
    # What a write does.
    ConfigProperty("hoodie.datasource.write.operation", Operation.UPSERT.value,
                   "upsert (update stored keys, insert new ones), insert (only new keys, filling "
                   "small file groups) or bulk_insert (only new keys, into new file groups, "
                   "sorted by partition and key, no small-file rewrites); an index that looks "
                   "keys up (SIMPLE, BLOOM, GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX; not "
                   "BUCKET) for insert and bulk_insert",
                   attribute="operation", parse=choice(Operation), choices=Operation),
    ConfigProperty("hoodie.datasource.insert.dup.policy", InsertDupPolicy.FAIL.value,
                   "insert and bulk_insert: rows whose key the table already holds stop the "
                   "write (fail) or are skipped (drop); Apache Hudi's none (write a second record "
                   "of the key) is refused",
                   attribute="insert_dup_policy", parse=_dup_policy, choices=InsertDupPolicy),
    # File sizing and writing.
    ConfigProperty("hoodie.parquet.max.file.size", 120 * MB,
                   "bytes a base file is not grown past",
                   attribute="max_file_size", parse=positive_int),
    ConfigProperty("hoodie.parquet.small.file.limit", 100 * MB,
                   "bytes under which a base file takes new inserts; 0 turns it off",
                   attribute="small_file_limit", parse=non_negative_int),
    ConfigProperty("hoodie.copyonwrite.record.size.estimate", 1024,
                   "bytes per record before any commit tells",
                   attribute="record_size_estimate", parse=positive_int),
    ConfigProperty("hoodie.parquet.compression.codec", Compression.SNAPPY.value,
                   ", ".join(choice_values(Compression))
                   + " (Apache Hudi's default is gzip; snappy writes faster)",
                   attribute="compression", parse=choice(Compression), choices=Compression),
    ConfigProperty("hoodie.memory.merge.max.size", 512 * MB,
                   "bytes of records a bulk insert task holds in memory before it sets them "
                   "aside on local disk; half Apache Hudi's 1 GiB, since a Python worker's memory "
                   "is outside Spark's heap (on a cluster, in the executor's memory overhead)",
                   attribute="merge_max_memory", parse=positive_int),
    ConfigProperty("hoodie.upsert.shuffle.parallelism", 0,
                   "write tasks of one-job upserts (SIMPLE routing units, BUCKET writes), and the "
                   "tasks that read stored keys when tagging runs as a job of its own; 0: "
                   "Spark's default (adaptive execution sizes one-job upserts)",
                   attribute="parallelism", parse=non_negative_int),
    # Indexes.
    ConfigProperty("hoodie.index.type", IndexType.SIMPLE.value,
                   "SIMPLE (join with the stored keys of the batch's partitions), BUCKET (hash "
                   "of the key, no key scan), BLOOM (stored keys read only from the files whose "
                   "footer key range and bloom filter may hold an incoming key), GLOBAL_SIMPLE "
                   "and GLOBAL_BLOOM (the same lookups in every partition: a key is unique "
                   "across the table), RECORD_INDEX (global: each key looked up in the "
                   "metadata table's record_index partition, only the HFile blocks it falls "
                   "in read; a table without one is tagged as by GLOBAL_SIMPLE, as Apache "
                   "Hudi does; 1.2's GLOBAL_RECORD_LEVEL_INDEX is the same)",
                   attribute="index_type", parse=_index_type, choices=IndexType),
    ConfigProperty("hoodie.bloom.index.prune.by.ranges", True,
                   "BLOOM index: skip the files whose footer key range (hoodie_min_record_key, "
                   "hoodie_max_record_key) cannot hold a key before checking bloom filters; "
                   "false: check every file's bloom filter (keys that are random strings)",
                   attribute="bloom_prune_by_ranges", parse=boolean),
    ConfigProperty("hoodie.bloom.index.parallelism", 0,
                   "BLOOM index: Spark tasks that check bloom filters and read candidate keys; "
                   "0: one per file slice of the batch's partitions, up to "
                   "hoodie.upsert.shuffle.parallelism (or Spark's shuffle partitions)",
                   attribute="bloom_parallelism", parse=non_negative_int),
    ConfigProperty("hoodie.simple.index.update.partition.path", True,
                   "GLOBAL_SIMPLE: a record whose partition value changed is deleted from its "
                   "old partition and inserted in the new one, in one commit (true), or updated "
                   "where it is, keeping its old partition path and that partition's values in its "
                   "partition columns (false)",
                   attribute="simple_index_update_partition_path", parse=boolean),
    ConfigProperty("hoodie.bloom.index.update.partition.path", True,
                   "GLOBAL_BLOOM: as hoodie.simple.index.update.partition.path for GLOBAL_SIMPLE",
                   attribute="bloom_index_update_partition_path", parse=boolean),
    ConfigProperty("hoodie.record.index.update.partition.path", False,
                   "RECORD_INDEX: as hoodie.simple.index.update.partition.path for "
                   "GLOBAL_SIMPLE, but off by default, as in Apache Hudi 0.15 and 1.2 (a record "
                   "whose partition value changed is updated where it is stored); on a table "
                   "without a record index, tagging falls back to GLOBAL_SIMPLE and such "
                   "records move whatever this says, as in Apache Hudi's fallback",
                   attribute="record_index_update_partition_path", parse=boolean),
    ConfigProperty("hoodie.index.bloom.num_entries", 60_000,
                   "keys a base file's bloom filter (in its footer, which Apache Hudi's BLOOM "
                   "index reads; written whatever our index) is sized for",
                   attribute="bloom_num_entries", parse=positive_int),
    ConfigProperty("hoodie.index.bloom.fpp", 1e-9,
                   "the bloom filter's false positive rate at that many keys",
                   attribute="bloom_fpp", parse=probability),
    ConfigProperty("hoodie.bloom.index.filter.type", _DYNAMIC_V0,
                   f"{_DYNAMIC_V0} (a vector more per hoodie.index.bloom.num_entries keys, up to "
                   f"the max entries) or {_SIMPLE} (one vector)",
                   attribute="bloom_filter_type", parse=choice(BloomFilterType),
                   choices=BloomFilterType),
    ConfigProperty("hoodie.bloom.index.filter.dynamic.max.entries", 100_000,
                   f"{_DYNAMIC_V0}: keys its vectors grow to cover; beyond, the false positive "
                   "rate grows",
                   attribute="bloom_dynamic_max_entries", parse=positive_int),
    ConfigProperty("hoodie.bucket.index.num.buckets", 4,
                   "BUCKET index: buckets (file groups) per partition, fixed for the table",
                   attribute="bucket_count", parse=positive_int),
    ConfigProperty("hoodie.bucket.index.hash.field", (),
                   "BUCKET index: the record key fields to hash (none: all of them)",
                   attribute="bucket_hash_fields", parse=field_list),
    # Table services.
    ConfigProperty("hoodie.clean.automatic", True, "clean old file versions after every write",
                   attribute="auto_clean", parse=boolean),
    ConfigProperty("hoodie.cleaner.policy", CleanerPolicy.KEEP_LATEST_COMMITS.value,
                   "KEEP_LATEST_COMMITS or KEEP_LATEST_FILE_VERSIONS",
                   attribute="cleaner_policy", parse=choice(CleanerPolicy),
                   aliases=(Alias("hoodie.clean.policy"),), choices=CleanerPolicy),
    ConfigProperty("hoodie.cleaner.commits.retained", 10,
                   "KEEP_LATEST_COMMITS: commits whose snapshots stay readable; as in Apache Hudi, "
                   "the file versions the earliest of them replaced stay too (rolling it back "
                   "needs them)",
                   attribute="cleaner_commits_retained", parse=positive_int,
                   aliases=(Alias("hoodie.clean.commits.retained"),)),
    ConfigProperty("hoodie.cleaner.fileversions.retained", 3,
                   "KEEP_LATEST_FILE_VERSIONS: versions kept per file group",
                   attribute="cleaner_file_versions_retained", parse=positive_int,
                   aliases=(Alias("hoodie.clean.fileversions.retained"),)),
    ConfigProperty("hoodie.cleaner.incremental.mode", True,
                   "KEEP_LATEST_COMMITS: list only the partitions that commits since the last "
                   "clean's earliest retained commit wrote, not the whole table (as Apache Hudi; "
                   "the first clean, and one after archival passed that commit, list every one)",
                   attribute="cleaner_incremental_mode", parse=boolean),
    ConfigProperty("hoodie.archive.automatic", True, "archive old instants after every write",
                   attribute="auto_archive", parse=boolean),
    ConfigProperty("hoodie.archive.beyond.savepoint", False,
                   "archive past savepoints, keeping savepointed commits on the timeline; a "
                   "restore to such a savepoint is then refused, and hudi-rs 0.x misses the rows "
                   "of the archived commits (keep it off where hudi-rs reads)",
                   attribute="archive_beyond_savepoint", parse=boolean),
    ConfigProperty("hoodie.keep.min.commits", 20,
                   "commits the active timeline keeps after archiving",
                   attribute="keep_min_commits", parse=positive_int),
    ConfigProperty("hoodie.keep.max.commits", 30,
                   "commits on the active timeline that trigger archiving",
                   attribute="keep_max_commits", parse=positive_int),
    ConfigProperty("hoodie.compact.inline", True, "merge-on-read: compact after delta commits",
                   attribute="inline_compaction", parse=boolean),
    ConfigProperty("hoodie.compact.inline.max.delta.commits", 5,
                   "merge-on-read: delta commits that trigger inline compaction",
                   attribute="compaction_delta_commits", parse=positive_int),
    ConfigProperty("hoodie.compact.schedule.inline", False,
                   "merge-on-read, with hoodie.compact.inline=false: after the same number of "
                   "delta commits, only schedule a compaction plan; a later compaction run "
                   "(hoodie_compact, or Apache Hudi's async compaction) executes it",
                   attribute="schedule_inline_compaction", parse=boolean),
    # Clustering (hoodie/table_services/clustering.py).
    *CLUSTERING_OPTIONS,
    # Concurrency.
    ConfigProperty("hoodie.write.concurrency.mode",
                   ConcurrencyMode.OPTIMISTIC_CONCURRENCY_CONTROL.value,
                   "optimistic_concurrency_control (commits under the table lock, a conflicting "
                   "write fails) or single_writer (no lock: one writer at a time); both keep "
                   "heartbeats and never roll back a running write",
                   attribute="concurrency_mode", parse=choice(ConcurrencyMode),
                   choices=ConcurrencyMode),
    ConfigProperty("hoodie.write.lock.provider", None,
                   "optimistic concurrency: the table lock, storage (renewed, handed over by "
                   "conditional writes; S3 and local paths) or filesystem (an exclusively "
                   "created file); Hudi's class names work too; none: storage on S3, "
                   "filesystem elsewhere",
                   attribute="lock_provider", parse=_lock_provider, choices=LockProvider),
    ConfigProperty("hoodie.write.lock.wait_time_ms", 60_000,
                   "optimistic concurrency: how long to wait for the table lock (ms)",
                   attribute="lock_wait_ms", parse=positive_int),
    ConfigProperty("hoodie.write.lock.filesystem.expire", 1,
                   "filesystem lock: minutes after which a dead writer's lock is broken "
                   "(a live holder renews it every third of that, however long it holds it)",
                   attribute="lock_expire_minutes", parse=positive_int),
    ConfigProperty("hoodie.write.lock.storage.validity.timeout.secs", 300,
                   "storage lock: seconds it stays held without renewal (a dead writer's lock "
                   "expires after this)",
                   attribute="lock_validity_seconds", parse=positive_int),
    ConfigProperty("hoodie.write.lock.storage.renew.interval.secs", 30,
                   "storage lock: seconds between its holder's renewals (shorter than the "
                   "validity timeout)",
                   attribute="lock_renew_seconds", parse=positive_int),
    ConfigProperty("hoodie.client.heartbeat.interval_in_ms", 60_000,
                   "writer heartbeat period (ms)",
                   attribute="heartbeat_interval_ms", parse=positive_int),
    ConfigProperty("hoodie.client.heartbeat.tolerable.misses", 2,
                   "missed heartbeats before a pending write has failed",
                   attribute="heartbeat_tolerable_misses", parse=non_negative_int),
)  # fmt: skip
_BY_ATTRIBUTE = {prop.attribute: prop for prop in OPTIONS if prop.attribute}


def option(attribute: str) -> ConfigProperty:
    """The write option that sets `WriteConfig.<attribute>`."""
    return _BY_ATTRIBUTE[attribute]


def default(attribute: str) -> object:
    """The default of the write option that sets `WriteConfig.<attribute>`."""
    return _BY_ATTRIBUTE[attribute].default


_SECONDS_PER_UNIT = {"_ms": 0.001, "_seconds": 1.0, "_minutes": 60.0}


def default_seconds(attribute: str) -> float:
    """The default of a duration option in seconds, whatever unit its key has (the field's
    name ends in it): what the locks and heartbeats built without a write config use."""
    unit = next(u for u in _SECONDS_PER_UNIT if attribute.endswith(u))
    return float(cast(int, default(attribute))) * _SECONDS_PER_UNIT[unit]

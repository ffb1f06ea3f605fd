"""Write configuration: what a caller asks for, checked once, in Hudi's option names.

Every option a user can set arrives here, either as a first-class field or as a raw `hoodie.*`
key. Unknown and malformed keys fail with the list of supported ones, so a typo never silently
falls back to a default. The options themselves (keys, defaults, docs, choices) are declared
once, in `hoodie.options.write`; here they become a `WriteConfig` and are checked together.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .bloom_filter import BloomFilterSpec
from .exceptions import ConflictingSettingsError, InvalidConfigError
from .metadata_records import MetadataPartitionType, estimate_file_group_count
from .options.keygen import CLASS_OF_TYPE, TimestampSpec, split_typed_fields, timestamp_settings
from .options.property import ConfigProperty as ConfigProperty
from .options.property import by_key, choice, closest_key
from .options.table import TableType, TableVersion
from .options.write import MB as MB
from .options.write import (
    OPTIONS,
    REFUSED_PREFIXES,
    ConcurrencyMode,
    IndexType,
    InsertDupPolicy,
    LockProvider,
    Operation,
    default,
)
from .properties import COPY_ON_WRITE, MERGE_ON_READ, metadata_partitions
from .schema_evolution import SchemaChange

_MAX_BLOOM_BITS = 2**31 - 1
# Apache Hudi 1.x's secondary indexes: one metadata table partition each, named by this prefix.
SECONDARY_INDEX_PREFIX = MetadataPartitionType.SECONDARY_INDEX.partition_name
# The option values the core decides by (declared with their options in `hoodie.options.write`).
SIMPLE_INDEX, BUCKET_INDEX = IndexType.SIMPLE.value, IndexType.BUCKET.value
BLOOM_INDEX = IndexType.BLOOM.value
GLOBAL_SIMPLE_INDEX = IndexType.GLOBAL_SIMPLE.value
GLOBAL_BLOOM_INDEX = IndexType.GLOBAL_BLOOM.value
RECORD_INDEX_TYPE = IndexType.RECORD_INDEX.value
INDEX_TYPES = (SIMPLE_INDEX, BUCKET_INDEX, BLOOM_INDEX, GLOBAL_SIMPLE_INDEX, GLOBAL_BLOOM_INDEX,
               RECORD_INDEX_TYPE)  # fmt: skip
# The indexes that look up which keys the table holds: an insert's dup policy needs them.
KEY_LOOKUP_INDEXES = (SIMPLE_INDEX, BLOOM_INDEX, GLOBAL_SIMPLE_INDEX, GLOBAL_BLOOM_INDEX,
                      RECORD_INDEX_TYPE)  # fmt: skip
# hoodie.datasource.write.operation: what a write does with keys the table already holds.
UPSERT, INSERT, BULK_INSERT = (
    Operation.UPSERT.value,
    Operation.INSERT.value,
    Operation.BULK_INSERT.value,
)
# hoodie.datasource.insert.dup.policy: what an insert does with them.
FAIL_ON_EXISTING, DROP_EXISTING = InsertDupPolicy.FAIL.value, InsertDupPolicy.DROP.value
# Table versions a new table can be created with: 6 (Hudi 0.12-0.15) and 8 (Hudi 1.0).
WRITE_TABLE_VERSIONS = tuple(int(version) for version in TableVersion)
# hoodie.write.lock.provider: our two locks.
FILESYSTEM_LOCK, STORAGE_LOCK = LockProvider.FILESYSTEM.value, LockProvider.STORAGE.value
OPTIMISTIC = ConcurrencyMode.OPTIMISTIC_CONCURRENCY_CONTROL.value

_BY_KEY = by_key(OPTIONS)


def option_keys(attribute: str) -> tuple[str, ...]:
    """Every key (Hudi's current one first) of the option that sets `WriteConfig.<attribute>`."""
    return next(prop.keys for prop in OPTIONS if prop.attribute == attribute)


def option_default(attribute: str) -> object:
    """The default of the option that sets `WriteConfig.<attribute>`: what table services
    use when they run without a write config."""
    return default(attribute)


def _default(attribute: str) -> Any:
    """A `WriteConfig` field's default, from the option table."""
    return field(default=default(attribute))


COLUMN_STATS = "column_stats"
BLOOM_FILTERS = "bloom_filters"
RECORD_INDEX = MetadataPartitionType.RECORD_INDEX.partition_name


@dataclass(frozen=True)
class MetadataIndexes:
    """Which of the metadata table's index partitions a writer keeps beside `files`
    (`hoodie.metadata.index.*`): True builds one the table lacks, False drops one it has,
    None keeps what the table has (so a writer or table service that does not say keeps a
    table's indexes, as it keeps its metadata table); with the column list and file group
    counts a new partition is built with."""

    column_stats: bool | None = None
    column_list: tuple[str, ...] | None = None  # None: the table version's default
    max_columns: int = 32
    column_stats_file_groups: int = 2
    bloom_filters: bool | None = None
    bloom_filter_file_groups: int = 4
    record_index: bool | None = None
    record_index_min_file_groups: int = 10
    record_index_max_file_groups: int = 10000
    record_index_max_file_group_size: int = 1024 * 1024 * 1024
    record_index_growth_factor: float = 2.0

    def kept(self, existing: Collection[str]) -> tuple[str, ...]:
        """The index partitions kept, given the table's completed ones."""
        out = []
        for name, on in ((BLOOM_FILTERS, self.bloom_filters), (COLUMN_STATS, self.column_stats),
                         (RECORD_INDEX, self.record_index)):  # fmt: skip
            if on or (on is None and name in existing):
                out.append(name)
        return tuple(out)

    def record_index_file_groups(self, record_count: int, average_entry_size: int) -> int:
        """File groups of a `record_index` partition built over `record_count` keys whose
        entries take `average_entry_size` bytes (Apache Hudi's `estimateFileGroupCount`)."""
        return estimate_file_group_count(
            record_count, average_entry_size, self.record_index_min_file_groups,
            self.record_index_max_file_groups, self.record_index_growth_factor,
            self.record_index_max_file_group_size,
        )  # fmt: skip

    def file_groups(self, partition: str) -> int:
        """File groups of `partition` when it is built."""
        if partition == COLUMN_STATS:
            return self.column_stats_file_groups
        if partition == BLOOM_FILTERS:
            return self.bloom_filter_file_groups
        return 1


@dataclass(frozen=True)
class WriteConfig:
    """How to write a table: its identity (name, record key, partition fields, precombine
    field, table type) plus the write options (`hoodie.*` keys, declared in
    `hoodie/options/write.py`; every one in `docs/options.md`).

    Build it with `WriteConfig.build` (arguments as dbt's config names them, or Hudi's keys in
    `options`), and give it once, to `HoodieTable.for_write` or `HoodieTable.open`. Frozen: a
    write never changes it. Unknown keys and bad values raise `InvalidConfigError` naming the
    option; nothing given is accepted and ignored.
    """

    table_name: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    precombine_field: str | None = None
    table_type: str = _default("table_type")
    # hoodie.datasource.write.payload.class, hoodie.write.record.merge.mode: None: the
    # table's (`hoodie.merge.merge_mode_for_write` for a new table)
    payload_class: str | None = _default("payload_class")
    record_merge_mode: str | None = _default("record_merge_mode")
    # hoodie.table.cdc.enabled / .supplemental.logging.mode; None: the table's (new: off)
    cdc_enabled: bool | None = _default("cdc_enabled")
    cdc_supplemental_logging_mode: str | None = _default("cdc_supplemental_logging_mode")
    # hoodie.write.partial.update.columns: what a matched key's winning row replaces;
    # (): the whole row (`replaced_columns`)
    partial_update_columns: tuple[str, ...] = _default("partial_update_columns")
    operation: str = _default("operation")
    insert_dup_policy: str = _default("insert_dup_policy")
    hive_style_partitioning: bool = _default("hive_style_partitioning")
    url_encode_partition_path: bool = _default("url_encode_partition_path")
    # hoodie.datasource.write.keygenerator.class / .type, as a type name (None: not given)
    key_generator_class: str | None = _default("key_generator_class")
    key_generator_type: str | None = _default("key_generator_type")
    # CustomKeyGenerator: each partition field's type, from `field:TYPE` (split off the fields)
    partition_types: tuple[str, ...] = ()
    table_version: int | None = _default("table_version")  # None: the table's, new ones 6
    # hoodie.metadata.enable; None: by the table (`keeps_metadata_table`)
    metadata_table: bool | None = _default("metadata_table")
    metadata_compaction_delta_commits: int = _default("metadata_compaction_delta_commits")
    metadata_compaction_delta_seconds: int = _default("metadata_compaction_delta_seconds")
    metadata_compaction_trigger: str = _default("metadata_compaction_trigger")
    # hoodie.metadata.index.secondary.enable; None: unset (a secondary index is not kept)
    metadata_secondary_index: bool | None = _default("metadata_secondary_index")
    metadata_column_stats: bool | None = _default("metadata_column_stats")  # None: the table's
    metadata_column_stats_columns: tuple[str, ...] | None = _default(
        "metadata_column_stats_columns"
    )  # None or (): the default list
    metadata_column_stats_max_columns: int = _default("metadata_column_stats_max_columns")
    metadata_column_stats_file_groups: int = _default("metadata_column_stats_file_groups")
    metadata_bloom_filters: bool | None = _default("metadata_bloom_filters")  # None: the table's
    metadata_bloom_filter_file_groups: int = _default("metadata_bloom_filter_file_groups")
    metadata_bloom_filter_columns: tuple[str, ...] | None = _default(
        "metadata_bloom_filter_columns"
    )
    metadata_record_index: bool | None = _default("metadata_record_index")  # None: the table's
    metadata_record_index_min_file_groups: int = _default("metadata_record_index_min_file_groups")
    metadata_record_index_max_file_groups: int = _default("metadata_record_index_max_file_groups")
    metadata_record_index_max_file_group_size: int = _default(
        "metadata_record_index_max_file_group_size"
    )
    metadata_record_index_growth_factor: float = _default("metadata_record_index_growth_factor")
    database: str = "default"
    max_file_size: int = _default("max_file_size")
    small_file_limit: int = _default("small_file_limit")
    record_size_estimate: int = _default("record_size_estimate")
    compression: str = _default("compression")
    merge_max_memory: int = _default("merge_max_memory")
    parallelism: int = _default("parallelism")
    index_type: str = _default("index_type")
    simple_index_update_partition_path: bool = _default("simple_index_update_partition_path")
    bloom_index_update_partition_path: bool = _default("bloom_index_update_partition_path")
    record_index_update_partition_path: bool = _default("record_index_update_partition_path")
    bloom_num_entries: int = _default("bloom_num_entries")
    bloom_fpp: float = _default("bloom_fpp")
    bloom_filter_type: str = _default("bloom_filter_type")
    bloom_dynamic_max_entries: int = _default("bloom_dynamic_max_entries")
    bloom_prune_by_ranges: bool = _default("bloom_prune_by_ranges")
    bloom_parallelism: int = _default("bloom_parallelism")
    bucket_count: int = _default("bucket_count")
    bucket_hash_fields: tuple[str, ...] = _default("bucket_hash_fields")  # (): the key
    concurrency_mode: str = _default("concurrency_mode")
    lock_provider: str | None = _default("lock_provider")  # None: by the table's storage
    lock_wait_ms: int = _default("lock_wait_ms")
    lock_expire_minutes: int = _default("lock_expire_minutes")
    lock_validity_seconds: int = _default("lock_validity_seconds")
    lock_renew_seconds: int = _default("lock_renew_seconds")
    heartbeat_interval_ms: int = _default("heartbeat_interval_ms")
    heartbeat_tolerable_misses: int = _default("heartbeat_tolerable_misses")
    auto_clean: bool = _default("auto_clean")
    auto_archive: bool = _default("auto_archive")
    archive_beyond_savepoint: bool = _default("archive_beyond_savepoint")
    keep_min_commits: int = _default("keep_min_commits")
    keep_max_commits: int = _default("keep_max_commits")
    cleaner_policy: str = _default("cleaner_policy")
    cleaner_commits_retained: int = _default("cleaner_commits_retained")
    cleaner_file_versions_retained: int = _default("cleaner_file_versions_retained")
    cleaner_incremental_mode: bool = _default("cleaner_incremental_mode")
    inline_compaction: bool = _default("inline_compaction")
    compaction_delta_commits: int = _default("compaction_delta_commits")
    schedule_inline_compaction: bool = _default("schedule_inline_compaction")
    inline_clustering: bool = _default("inline_clustering")
    clustering_max_commits: int = _default("clustering_max_commits")
    schedule_inline_clustering: bool = _default("schedule_inline_clustering")
    clustering_small_file_limit: int = _default("clustering_small_file_limit")
    clustering_max_bytes_per_group: int = _default("clustering_max_bytes_per_group")
    clustering_target_file_max_bytes: int = _default("clustering_target_file_max_bytes")
    clustering_max_groups: int = _default("clustering_max_groups")
    clustering_sort_columns: tuple[str, ...] | None = _default("clustering_sort_columns")
    clustering_single_group: bool = _default("clustering_single_group")
    layout_optimize_strategy: str = _default("layout_optimize_strategy")
    clustering_rollback_pending_on_conflict: bool = _default(
        "clustering_rollback_pending_on_conflict"
    )
    # What a batch with other columns than the table's may do (see hoodie.schema_evolution).
    schema_change: SchemaChange = SchemaChange.EVOLVE
    options: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.table_name:
            raise InvalidConfigError("a table name is required")
        names, types = split_typed_fields(self.partition_fields)
        if types:
            object.__setattr__(self, "partition_fields", names)
            object.__setattr__(self, "partition_types", types)
        self._check_key_generator()
        if not self.record_key_fields:
            raise InvalidConfigError(
                f"table '{self.table_name}': record_key is required (a column or list of columns)"
            )
        if self.table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise InvalidConfigError(
                f"table type must be {COPY_ON_WRITE} or {MERGE_ON_READ}, got {self.table_type!r}"
            )
        for name in (*self.record_key_fields, *self.partition_fields):
            if not isinstance(name, str) or not name.strip():
                raise InvalidConfigError(
                    f"table '{self.table_name}': column names must be non-empty strings, "
                    f"got {name!r}"
                )
        stray = [f for f in self.bucket_hash_fields if f not in self.record_key_fields]
        if stray:
            raise InvalidConfigError(
                f"table '{self.table_name}': hoodie.bucket.index.hash.field names "
                f"{', '.join(stray)}, which {'is' if len(stray) == 1 else 'are'} not record key "
                f"field(s) ({', '.join(self.record_key_fields)}): the bucket must follow from "
                "the key"
            )
        if self.operation != UPSERT and self.index_type not in KEY_LOOKUP_INDEXES:
            raise InvalidConfigError(
                f"table '{self.table_name}': hoodie.datasource.write.operation={self.operation} "
                f"needs the SIMPLE index or the BLOOM index (hoodie.index.type={self.index_type} "
                "places records without looking up which keys exist); use operation upsert, or "
                "the SIMPLE or BLOOM index"
            )
        self._check_partial_update()
        if self.keep_min_commits >= self.keep_max_commits:
            raise InvalidConfigError(
                f"hoodie.keep.min.commits ({self.keep_min_commits}) must be smaller than "
                f"hoodie.keep.max.commits ({self.keep_max_commits})"
            )
        if self.inline_clustering and self.schedule_inline_clustering:
            raise InvalidConfigError(
                "hoodie.clustering.inline and hoodie.clustering.schedule.inline are both true: "
                "either clustering runs after writes (inline) or is only planned there "
                "(schedule.inline), as Apache Hudi allows one of them"
            )
        if self.lock_renew_seconds >= self.lock_validity_seconds:
            raise InvalidConfigError(
                f"hoodie.write.lock.storage.renew.interval.secs ({self.lock_renew_seconds}) must "
                "be smaller than hoodie.write.lock.storage.validity.timeout.secs "
                f"({self.lock_validity_seconds}): the lock must be renewed before it expires"
            )
        if self.small_file_limit >= self.max_file_size:
            raise InvalidConfigError(
                f"hoodie.parquet.small.file.limit ({self.small_file_limit}) must be smaller than "
                f"hoodie.parquet.max.file.size ({self.max_file_size})"
            )
        if self.bloom_filter.vector_size > _MAX_BLOOM_BITS:
            raise InvalidConfigError(
                f"hoodie.index.bloom.num_entries ({self.bloom_num_entries}) at "
                f"hoodie.index.bloom.fpp ({self.bloom_fpp}) needs a bloom filter of "
                f"{self.bloom_filter.vector_size} bits; at most {_MAX_BLOOM_BITS} (Java's int) "
                "can be read by Apache Hudi"
            )

        stray = [c for c in self.metadata_bloom_filter_columns or ()
                 if c not in self.record_key_fields]  # fmt: skip
        if stray:
            raise InvalidConfigError(
                f"table '{self.table_name}': hoodie.metadata.index.bloom.filter.column.list names "
                f"{', '.join(stray)}: the metadata table's bloom filters are the base files' "
                f"record key filters ({', '.join(self.record_key_fields)}); leave it unset"
            )
        low = self.metadata_record_index_min_file_groups
        high = self.metadata_record_index_max_file_groups
        if low > high:
            raise InvalidConfigError(
                f"hoodie.metadata.global.record.level.index.min.filegroup.count ({low}) must not "
                "be larger than hoodie.metadata.global.record.level.index.max.filegroup.count "
                f"({high})"
            )
        if self.index_type == RECORD_INDEX_TYPE and self.metadata_record_index is False:
            raise InvalidConfigError(
                f"table '{self.table_name}': hoodie.index.type={RECORD_INDEX_TYPE} tags records by "
                "the metadata table's record index, which "
                "hoodie.metadata.record.index.enable=false drops; unset that option (the index "
                "type turns it on) or choose hoodie.index.type=GLOBAL_SIMPLE"
            )
        record_index_key = ("hoodie.metadata.global.record.level.index.enable"
                            if self.metadata_record_index else
                            f"hoodie.index.type={RECORD_INDEX_TYPE}")  # fmt: skip
        wanted = [key for key, on in (
            ("hoodie.metadata.index.column.stats.enable", self.metadata_column_stats),
            ("hoodie.metadata.index.bloom.filter.enable", self.metadata_bloom_filters),
            (record_index_key, self.record_index_wanted),
        ) if on]  # fmt: skip
        if wanted and self.metadata_table is False:
            raise InvalidConfigError(
                f"table '{self.table_name}': {' and '.join(wanted)} need the metadata table, "
                "which hoodie.metadata.enable=false turns off; set it to true (or unset)"
            )

    @property
    def moves_records(self) -> bool:
        """Does the index move a record whose partition value changed (a global index with its
        `hoodie.*.index.update.partition.path` on)?"""
        return {
            GLOBAL_SIMPLE_INDEX: self.simple_index_update_partition_path,
            GLOBAL_BLOOM_INDEX: self.bloom_index_update_partition_path,
            RECORD_INDEX_TYPE: self.record_index_update_partition_path,
        }.get(self.index_type, False)

    def _check_partial_update(self) -> None:
        if not self.partial_update_columns:
            return
        if self.moves_records:
            key = {GLOBAL_SIMPLE_INDEX: "hoodie.simple.index.update.partition.path",
                   GLOBAL_BLOOM_INDEX: "hoodie.bloom.index.update.partition.path",
                   RECORD_INDEX_TYPE: "hoodie.record.index.update.partition.path"}[
                       self.index_type]  # fmt: skip
            raise InvalidConfigError(
                f"table '{self.table_name}': a partial update (hoodie.write.partial.update."
                f"columns, dbt's merge_update_columns / merge_exclude_columns) cannot keep the "
                f"stored columns of a record that {self.index_type} moves to another partition "
                f"({key}=true): set {key}=false (the record is updated where it is stored), "
                "or use a non-global index"
            )

    def replaced_columns(self, columns: Collection[str]) -> frozenset[str] | None:
        """The columns of `columns` (the new table version's) that a matched key's winning
        row replaces in a partial update: the listed ones plus the record key, partition and
        ordering columns, which a partial update always takes; None: whole rows. A listed
        name that is not a column: `InvalidConfigError` naming the table's columns."""
        if not self.partial_update_columns:
            return None
        unknown = [c for c in self.partial_update_columns if c not in columns]
        if unknown:
            raise InvalidConfigError(
                f"table '{self.table_name}': hoodie.write.partial.update.columns names "
                f"{', '.join(unknown)}, which {'is' if len(unknown) == 1 else 'are'} not a "
                f"column of the table (its columns: {', '.join(columns)})"
            )
        always = (*self.record_key_fields, *self.partition_fields, self.precombine_field or "")
        return frozenset(c for c in (*self.partial_update_columns, *always) if c in columns)

    @property
    def key_generator(self) -> str | None:
        """The key generator type asked for: the class's (hoodie.datasource.write.keygenerator
        .class), else the type's (D9: honoured when the class is absent), else CUSTOM where
        the partition fields carry types; None: by the table, or by the fields."""
        if self.key_generator_class is not None:
            return self.key_generator_class
        if self.key_generator_type is not None:
            return self.key_generator_type
        return "CUSTOM" if self.partition_types else None

    @property
    def timestamp_settings(self) -> dict[str, str]:
        """The hoodie.keygen.timebased.* options given, by their own keys."""
        return timestamp_settings(self.options)

    def _check_key_generator(self) -> None:
        asked, table = self.key_generator, self.table_name
        given = self.key_generator_class, self.key_generator_type
        if None not in given and given[0] != given[1]:
            raise InvalidConfigError(
                f"table '{table}': hoodie.datasource.write.keygenerator.class names "
                f"{CLASS_OF_TYPE[str(given[0])]} and hoodie.datasource.write.keygenerator.type "
                f"{given[1]}; set one of them (Apache Hudi takes the class)"
            )
        if self.partition_types and asked != "CUSTOM":
            raise InvalidConfigError(
                f"table '{table}': partition fields with types (`field:TYPE`) are "
                f"CustomKeyGenerator's; hoodie.datasource.write.keygenerator says {asked}"
            )
        if asked == "CUSTOM" and self.partition_fields and not self.partition_types:
            raise InvalidConfigError(
                f"table '{table}': CustomKeyGenerator needs each partition field's type: "
                f"`column:SIMPLE` or `column:TIMESTAMP` (got {','.join(self.partition_fields)})"
            )
        if asked == "TIMESTAMP" and (len(self.partition_fields) != 1
                                     or len(self.record_key_fields) != 1):  # fmt: skip
            raise InvalidConfigError(
                f"table '{table}': TimestampBasedKeyGenerator takes one record key field and one "
                "partition field (Apache Hudi refuses more); use CustomKeyGenerator "
                "(`region:SIMPLE,ts:TIMESTAMP`) for more"
            )
        if asked == "SIMPLE" and (len(self.partition_fields) > 1
                                  or len(self.record_key_fields) > 1):  # fmt: skip
            raise InvalidConfigError(
                f"table '{table}': SimpleKeyGenerator takes one record key field and at most "
                "one partition field; use ComplexKeyGenerator for more"
            )
        if asked == "NON_PARTITION" and self.partition_fields:
            raise InvalidConfigError(
                f"table '{table}': NonpartitionedKeyGenerator with partition fields "
                f"({','.join(self.partition_fields)}); leave them out or choose another key "
                "generator"
            )
        settings = self.timestamp_settings
        if asked == "TIMESTAMP" or "TIMESTAMP" in self.partition_types:
            if settings:  # none given: the table's (a later write), checked there
                TimestampSpec.of(settings, f"table '{table}'")
        elif settings:
            raise InvalidConfigError(
                f"table '{table}': {', '.join(sorted(settings))} set the timestamp parts of "
                "TimestampBasedKeyGenerator or CustomKeyGenerator (`column:TIMESTAMP`), and "
                f"this write's key generator is {asked or 'chosen by the fields'}: set "
                "hoodie.datasource.write.keygenerator.class, or leave them out"
            )

    @property
    def metadata_indexes(self) -> MetadataIndexes:
        """The metadata table's index partitions this write keeps beside `files`."""
        return MetadataIndexes(
            column_stats=self.metadata_column_stats,
            column_list=self.metadata_column_stats_columns or None,
            max_columns=self.metadata_column_stats_max_columns,
            column_stats_file_groups=self.metadata_column_stats_file_groups,
            bloom_filters=self.metadata_bloom_filters,
            bloom_filter_file_groups=self.metadata_bloom_filter_file_groups,
            record_index=self.record_index_wanted,
            record_index_min_file_groups=self.metadata_record_index_min_file_groups,
            record_index_max_file_groups=self.metadata_record_index_max_file_groups,
            record_index_max_file_group_size=self.metadata_record_index_max_file_group_size,
            record_index_growth_factor=self.metadata_record_index_growth_factor,
        )

    @property
    def global_index(self) -> bool:
        """Does the index keep a key unique across partitions (one row per key)?"""
        return self.index_type in (GLOBAL_SIMPLE_INDEX, GLOBAL_BLOOM_INDEX, RECORD_INDEX_TYPE)

    @property
    def record_index_wanted(self) -> bool | None:
        """`hoodie.metadata.record.index.enable` (None: keep the table's), which
        `hoodie.index.type=RECORD_INDEX` turns on where it is unset: that index type tags by
        the record index, so asking for it asks for the index. (Apache Hudi builds the index
        only for the option, and tags by GLOBAL_SIMPLE until then; the table is the same.)"""
        if self.metadata_record_index is None and self.index_type == RECORD_INDEX_TYPE:
            return True
        return self.metadata_record_index

    @property
    def bloom_filter(self) -> BloomFilterSpec:
        """The bloom filter every base file of this write carries in its footer."""
        return BloomFilterSpec(self.bloom_num_entries, self.bloom_fpp, self.bloom_filter_type,
                               self.bloom_dynamic_max_entries)  # fmt: skip

    def keeps_metadata_table(self, table_version: int, extra: Mapping[str, str]) -> bool:
        """Does this write keep the table's metadata table (`hoodie.metadata.enable`)? Unset:
        Apache Hudi 1.x's default on a version 8 table (true); on a version 6 table, whether
        it has one already (`hoodie.table.metadata.partitions`, as a 0.x writer left it), so
        that tables written before keep their layout and a 0.x writer's metadata table is
        kept rather than deleted; true whatever the table when one of its indexes is asked
        for (`hoodie.metadata.index.*.enable=true`, `hoodie.index.type=RECORD_INDEX`)."""
        if self.metadata_table is not None:
            return self.metadata_table
        if self.metadata_column_stats or self.metadata_bloom_filters or self.record_index_wanted:
            return True  # an index of the metadata table asked for: the table comes with it
        return table_version >= 8 or bool(metadata_partitions(dict(extra)))

    def for_table(self, table_version: int, extra: Mapping[str, str]) -> WriteConfig:
        """This config with `hoodie.metadata.enable` decided for the table it writes; refused
        where it asks to keep secondary indexes the table's metadata table has, which our
        writes cannot keep (they rebuild a metadata table holding partitions we do not
        write)."""
        keeps = self.keeps_metadata_table(table_version, extra)
        secondary = [p for p in metadata_partitions(dict(extra))
                     if p.startswith(SECONDARY_INDEX_PREFIX)]  # fmt: skip
        if keeps and self.metadata_secondary_index and secondary:
            raise InvalidConfigError(
                f"table '{self.table_name}': hoodie.metadata.index.secondary.enable=true asks to "
                f"keep the secondary index(es) of its metadata table ({', '.join(secondary)}), "
                "which dbt-hoodie cannot update (it writes no secondary index): our write would "
                "rebuild the metadata table without them. Set it to false "
                "(or unset) to have them dropped, or write this table with Apache Hudi"
            )
        if self.metadata_table is not None:
            return self
        return replace(self, metadata_table=keeps)

    @classmethod
    def build(
        cls,
        table_name: str | None = None,
        record_key: str | list[str] | tuple[str, ...] | None = None,
        partition_path: str | list[str] | tuple[str, ...] | None = None,
        precombine_field: str | None = None,
        *,
        table_type: str | None = None,
        hive_style_partitioning: bool | None = None,
        options: Mapping[str, object] | None = None,
        database: str = "default",
        schema_change: SchemaChange | str = SchemaChange.EVOLVE,
    ) -> WriteConfig:
        """Build from the caller's settings and `options` (Hudi's `hoodie.*` keys).

        The table's identity may come either way: as arguments (what dbt's config names) or
        as Hudi's keys (`hoodie.datasource.write.recordkey.field`, ...), as configs brought
        from Apache Hudi jobs have it. Given both ways, the two must agree.
        """
        parsed = parse_options(options or {})
        given = {
            "table_name": table_name or None,
            "record_key_fields": as_field_tuple(record_key) or None,
            "partition_fields": as_field_tuple(partition_path) or None,
            "precombine_field": precombine_field or None,
            "table_type": choice(TableType)("table_type", table_type)
            if table_type is not None
            else None,
            "hive_style_partitioning": hive_style_partitioning,
        }
        for attribute, value in given.items():
            if value is None:
                continue
            option = parsed.get(attribute)
            if option is not None and option != value:
                key = next(p.key for p in OPTIONS if p.attribute == attribute)
                raise ConflictingSettingsError(
                    f"{_ARGUMENT_NAMES[attribute]}={_show_setting(value)} and option '{key}'="
                    f"{_show_setting(option)} disagree; set only one of them",
                    setting=_ARGUMENT_NAMES[attribute],
                    given=value,
                    option_key=key,
                    option_value=option,
                )
            parsed[attribute] = value
        if "table_name" not in parsed:
            raise InvalidConfigError("a table name is required (hoodie.table.name)")
        if "record_key_fields" not in parsed:
            raise InvalidConfigError(
                f"table '{parsed['table_name']}': record_key is required (a column or list of "
                "columns; Hudi's key: hoodie.datasource.write.recordkey.field)"
            )
        return cls(
            database=database,
            schema_change=_schema_change(schema_change),
            options={str(k): str(v) for k, v in (options or {}).items()},
            **parsed,
        )


# The names `build` takes the identity settings by (dbt's config names them the same).
_ARGUMENT_NAMES = {
    "table_name": "table_name",
    "record_key_fields": "record_key",
    "partition_fields": "partition_path",
    "precombine_field": "precombine_field",
    "table_type": "table_type",
    "hive_style_partitioning": "hive_style_partitioning",
}


def _show_setting(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _schema_change(value: SchemaChange | str) -> SchemaChange:
    if isinstance(value, SchemaChange):
        return value
    try:
        return SchemaChange(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(c.value for c in SchemaChange)
        raise InvalidConfigError(
            f"on_schema_change must be one of {choices}; got {value!r}"
        ) from None


def as_field_tuple(value: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """A column list from `'a'`, `'a,b'` or `['a', 'b']`."""
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if not isinstance(item, str):
                raise InvalidConfigError(f"column names must be strings, got {item!r}")
            out.append(item.strip())
        return tuple(out)
    raise InvalidConfigError(f"expected a column name or list of names, got {value!r}")


def parse_options(options: Mapping[str, object]) -> dict[str, Any]:
    """`hoodie.*` options as `WriteConfig` fields (each value of its field's type, as the
    option's `parse` makes it). Unknown keys are refused, naming the closest known key; one
    option given under two of its keys must have one value."""
    parsed: dict[str, Any] = {}
    seen: dict[str, str] = {}  # attribute -> the key it was given by
    unknown = [key for key in options if key not in _BY_KEY]
    if unknown:
        raise InvalidConfigError(_unknown_options(unknown))
    for key, value in options.items():
        prop = _BY_KEY[key]
        value = prop.value(key, value)
        if not prop.attribute:
            continue  # a switch taken at one value: its parse refused any other
        if prop.attribute in seen and parsed[prop.attribute] != value:
            raise InvalidConfigError(
                f"options '{seen[prop.attribute]}' and '{key}' are the same setting with "
                f"different values ({_show_setting(parsed[prop.attribute])} vs "
                f"{_show_setting(value)}); set only one"
            )
        seen[prop.attribute] = key
        if value is not None:
            parsed[prop.attribute] = value
    return parsed


def _unknown_options(keys: list[str]) -> str:
    """Every unknown key at once (a config copied from a Hudi job fixed in one go), each with
    the reason where it is a Hudi feature we do not have, or the key it is a typo of; the
    options themselves are on the reference page, not listed here."""
    said = []
    for key in keys:
        why = next((r for p, r in REFUSED_PREFIXES.items() if key.startswith(p)), None)
        if why is not None:
            said.append(f"option '{key}' is not supported: {why}")
            continue
        close = closest_key(key, _BY_KEY)
        said.append(f"unknown option '{key}'" + (f" (did you mean '{close}'?)" if close else ""))
    return (
        "; ".join(said) + ". The options are listed in docs/options.md (python -m "
        "hoodie.options.reference)"
    )

"""Write configuration: what a caller asks for, checked once, in Hudi's option names.

Every option a user can set arrives here, either as a first-class field or as a raw `hoodie.*`
key. Unknown and malformed keys fail with the list of supported ones, so a typo never silently
falls back to a default.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .bloom_filter import DYNAMIC_V0, FILTER_TYPES, SIMPLE, BloomFilterSpec
from .exceptions import ConflictingSettingsError, InvalidConfigError
from .properties import COPY_ON_WRITE, MERGE_ON_READ
from .schema_evolution import SchemaChange

MB = 1024 * 1024
_MAX_BLOOM_BITS = 2**31 - 1
SIMPLE_INDEX, BUCKET_INDEX = "SIMPLE", "BUCKET"
INDEX_TYPES = (SIMPLE_INDEX, BUCKET_INDEX)
# hoodie.datasource.write.operation: what a write does with keys the table already holds.
UPSERT, INSERT, BULK_INSERT = "upsert", "insert", "bulk_insert"
# hoodie.datasource.insert.dup.policy: what an insert does with them.
FAIL_ON_EXISTING, DROP_EXISTING = "fail", "drop"


def _positive_int(key: str, value: object) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number <= 0:
        raise InvalidConfigError(f"option '{key}' must be a positive integer, got {value!r}")
    return number


def _non_negative_int(key: str, value: object) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number < 0:
        raise InvalidConfigError(f"option '{key}' must be an integer >= 0, got {value!r}")
    return number


# Table versions a new table can be created with: 6 (Hudi 0.12-0.15) and 8 (Hudi 1.0).
WRITE_TABLE_VERSIONS = (6, 8)


def _table_version(key: str, value: object) -> int:
    text = str(value).strip()
    if not text.isdigit() or int(text) not in WRITE_TABLE_VERSIONS:
        raise InvalidConfigError(
            f"option '{key}' must be one of {', '.join(map(str, WRITE_TABLE_VERSIONS))} (the Hudi "
            f"table version to write: 6 for Apache Hudi 0.x readers, 8 for Apache Hudi 1.x), "
            f"got {value!r}"
        )
    return int(text)


def _probability(key: str, value: object) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        number = -1.0
    if not 0.0 < number < 1.0:
        raise InvalidConfigError(
            f"option '{key}' must be a probability between 0 and 1 (exclusive), got {value!r}"
        )
    return number


def _boolean(key: str, value: object) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise InvalidConfigError(f"option '{key}' must be true or false, got {value!r}")
    return text == "true"


def _choice(*choices: str) -> Callable[[str, object], str]:
    """Any spelling's case is accepted; the value comes back as Hudi spells it in `choices`."""
    by_folded = {choice.lower(): choice for choice in choices}

    def check(key: str, value: object) -> str:
        text = str(value).strip().lower()
        if text not in by_folded:
            raise InvalidConfigError(
                f"option '{key}' must be one of {', '.join(choices)}, got {value!r}"
            )
        return by_folded[text]

    return check


# hoodie.write.lock.provider: our two locks, by name or by the class name Apache Hudi gives them.
FILESYSTEM_LOCK, STORAGE_LOCK = "filesystem", "storage"
_LOCK_PROVIDERS = {
    FILESYSTEM_LOCK: FILESYSTEM_LOCK,
    STORAGE_LOCK: STORAGE_LOCK,
    "org.apache.hudi.client.transaction.lock.filesystembasedlockprovider": FILESYSTEM_LOCK,
    "org.apache.hudi.client.transaction.lock.storagebasedlockprovider": STORAGE_LOCK,
}


def _lock_provider(key: str, value: object) -> str:
    text = str(value).strip().lower()
    if text not in _LOCK_PROVIDERS:
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not a lock provider we have; use {STORAGE_LOCK} "
            f"(org.apache.hudi.client.transaction.lock.StorageBasedLockProvider) or "
            f"{FILESYSTEM_LOCK} (org.apache.hudi.client.transaction.lock."
            "FileSystemBasedLockProvider)"
        )
    return _LOCK_PROVIDERS[text]


def _metadata_table(key: str, value: object) -> bool:
    """`hoodie.metadata.enable`: only false, which is what every action of ours does (a table's
    Apache Hudi metadata table is turned off before it changes the table); true would ask for
    a metadata table we do not maintain yet."""
    if _boolean(key, value):
        raise InvalidConfigError(
            f"option '{key}'=true is not supported: dbt-hoodie does not maintain Apache Hudi's "
            "metadata table yet, so it turns a table's metadata table off before changing the "
            f"table (as Apache Hudi does with {key}=false) and readers list files instead. "
            f"Remove the option or set {key}=false"
        )
    return False


def _index_type(key: str, value: object) -> str:
    text = str(value).strip().upper()
    if text not in INDEX_TYPES:
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not supported; supported: {', '.join(INDEX_TYPES)}"
        )
    return text


def _dup_policy(key: str, value: object) -> str:
    text = str(value).strip().lower()
    if text == "none":
        raise InvalidConfigError(
            f"option '{key}'=none (Apache Hudi's default: insert keys the table already holds "
            "as second records) is not supported: every reader, upsert and delete of a "
            "dbt-hoodie table relies on one record per key. Use fail (the default: the write "
            "stops, naming the keys) or drop (the stored records are kept and the incoming rows "
            "of those keys skipped)"
        )
    return _choice(FAIL_ON_EXISTING, DROP_EXISTING)(key, value)


def _field_list(key: str, value: object) -> tuple[str, ...]:
    fields = tuple(f.strip() for f in str(value).split(",") if f.strip())
    if not fields:
        raise InvalidConfigError(f"option '{key}' must name one or more columns, got {value!r}")
    return fields


def _column(key: str, value: object) -> str | None:
    text = str(value).strip()
    return text or None


def _text(key: str, value: object) -> str:
    text = str(value).strip()
    if not text:
        raise InvalidConfigError(f"option '{key}' must not be empty")
    return text


def _partition_list(key: str, value: object) -> tuple[str, ...]:
    return tuple(f.strip() for f in str(value).split(",") if f.strip())


@dataclass(frozen=True)
class ConfigProperty:
    """One write option, defined once, as Hudi's `ConfigProperty` defines it: its key, the
    other keys Hudi accepts for it, how its text is read, its default and what it does.
    `attribute` is the `WriteConfig` field it sets."""

    key: str
    attribute: str
    parse: Callable[[str, object], object]
    default: object
    doc: str
    alternatives: tuple[str, ...] = ()
    identity: bool = False  # a setting the caller also names directly (record key, ...)

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.alternatives)

    def describe(self) -> str:
        also = f" (also {', '.join(self.alternatives)})" if self.alternatives else ""
        return f"{self.key}{also}: {self.doc}, default {_show_default(self.default)}"


def _show_default(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None or value == ():
        return "none"
    return str(value)


_COMPRESSION = ("snappy", "gzip", "zstd", "lz4", "brotli", "uncompressed", "none")
OPTIONS: tuple[ConfigProperty, ...] = (
    # The table's identity, which callers usually give as arguments (dbt: record_key, ...);
    # Hudi's own keys for them work too, from Apache Hudi jobs, dbt-spark or dbt-glue configs.
    ConfigProperty("hoodie.table.name", "table_name", _text, None, "the table's name",
                   ("hoodie.datasource.write.table.name",), identity=True),
    ConfigProperty("hoodie.datasource.write.recordkey.field", "record_key_fields", _field_list,
                   (), "record key column(s), comma-separated", ("hoodie.table.recordkey.fields",),
                   identity=True),
    ConfigProperty("hoodie.datasource.write.partitionpath.field", "partition_fields",
                   _partition_list, (), "partition path column(s), comma-separated; empty: "
                   "non-partitioned", ("hoodie.table.partition.fields",), identity=True),
    ConfigProperty("hoodie.datasource.write.precombine.field", "precombine_field", _column, None,
                   "ordering column: the larger value wins", ("hoodie.table.precombine.field",),
                   identity=True),
    ConfigProperty("hoodie.datasource.write.table.type", "table_type",
                   _choice(COPY_ON_WRITE, MERGE_ON_READ), COPY_ON_WRITE,
                   "COPY_ON_WRITE or MERGE_ON_READ", ("hoodie.table.type",), identity=True),
    ConfigProperty("hoodie.datasource.write.hive_style_partitioning", "hive_style_partitioning",
                   _boolean, False, "write partition folders as col=value", identity=True),
    ConfigProperty("hoodie.datasource.write.partitionpath.urlencode",
                   "url_encode_partition_path", _boolean, False,
                   "escape partition values in folder names as Apache Hudi does (`%XX` for "
                   "`/`, control and Hive's special characters), and `.`, `..` and `.hoodie...` "
                   "values too (see \"Partition paths\")"),
    ConfigProperty("hoodie.write.table.version", "table_version", _table_version, None,
                   "the Hudi table version a new table is created with: 6 (read by Apache Hudi "
                   "0.x and 1.x, hudi-rs) or 8 (Apache Hudi 1.x, hudi-rs); none: 6. A table "
                   "keeps its version"),
    ConfigProperty("hoodie.metadata.enable", "metadata_table", _metadata_table, False,
                   "Apache Hudi's metadata table: false only; a table's metadata table is "
                   "deleted (hoodie.table.metadata.partitions cleared first) before any action "
                   "changes the table, as Apache Hudi does with false"),
    # What a write does.
    ConfigProperty("hoodie.datasource.write.operation", "operation",
                   _choice(UPSERT, INSERT, BULK_INSERT), UPSERT,
                   "upsert (update stored keys, insert new ones), insert (only new keys, filling "
                   "small file groups) or bulk_insert (only new keys, into new file groups, "
                   "sorted by partition and key, no small-file rewrites); SIMPLE index only for "
                   "insert and bulk_insert"),
    ConfigProperty("hoodie.datasource.insert.dup.policy", "insert_dup_policy", _dup_policy,
                   FAIL_ON_EXISTING, "insert and bulk_insert: rows whose key the table already "
                   "holds stop the write (fail) or are skipped (drop)"),
    # File sizing and writing.
    ConfigProperty("hoodie.parquet.max.file.size", "max_file_size", _positive_int, 120 * MB,
                   "bytes a base file is not grown past"),
    ConfigProperty("hoodie.parquet.small.file.limit", "small_file_limit", _non_negative_int,
                   100 * MB, "bytes under which a base file takes new inserts; 0 turns it off"),
    ConfigProperty("hoodie.copyonwrite.record.size.estimate", "record_size_estimate",
                   _positive_int, 1024, "bytes per record before any commit tells"),
    ConfigProperty("hoodie.parquet.compression.codec", "compression", _choice(*_COMPRESSION),
                   "snappy", ", ".join(_COMPRESSION)),
    ConfigProperty("hoodie.memory.merge.max.size", "merge_max_memory", _positive_int, 512 * MB,
                   "bytes of records a bulk insert task holds in memory before it sets them "
                   "aside on local disk"),
    ConfigProperty("hoodie.upsert.shuffle.parallelism", "parallelism", _non_negative_int, 0,
                   "Spark partitions for tagging; 0: Spark's default"),
    # Indexes.
    ConfigProperty("hoodie.index.type", "index_type", _index_type, SIMPLE_INDEX,
                   "SIMPLE (join with stored keys) or BUCKET (hash of the key, no key scan)"),
    ConfigProperty("hoodie.index.bloom.num_entries", "bloom_num_entries", _positive_int, 60_000,
                   "keys a base file's bloom filter (in its footer, which Apache Hudi's BLOOM "
                   "index reads; written whatever our index) is sized for"),
    ConfigProperty("hoodie.index.bloom.fpp", "bloom_fpp", _probability, 1e-9,
                   "the bloom filter's false positive rate at that many keys"),
    ConfigProperty("hoodie.bloom.index.filter.type", "bloom_filter_type",
                   _choice(*FILTER_TYPES), DYNAMIC_V0,
                   f"{DYNAMIC_V0} (a vector more per hoodie.index.bloom.num_entries keys, up to "
                   f"the max entries) or {SIMPLE} (one vector)"),
    ConfigProperty("hoodie.bloom.index.filter.dynamic.max.entries", "bloom_dynamic_max_entries",
                   _positive_int, 100_000,
                   f"{DYNAMIC_V0}: keys its vectors grow to cover; beyond, the false positive "
                   "rate grows"),
    ConfigProperty("hoodie.bucket.index.num.buckets", "bucket_count", _positive_int, 4,
                   "BUCKET index: buckets (file groups) per partition, fixed for the table"),
    ConfigProperty("hoodie.bucket.index.hash.field", "bucket_hash_fields", _field_list, (),
                   "BUCKET index: the record key fields to hash (none: all of them)"),
    # Table services.
    ConfigProperty("hoodie.clean.automatic", "auto_clean", _boolean, True,
                   "clean old file versions after every write"),
    ConfigProperty("hoodie.cleaner.policy", "cleaner_policy",
                   _choice("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"),
                   "KEEP_LATEST_COMMITS", "KEEP_LATEST_COMMITS or KEEP_LATEST_FILE_VERSIONS",
                   ("hoodie.clean.policy",)),
    ConfigProperty("hoodie.cleaner.commits.retained", "cleaner_commits_retained",
                   _positive_int, 10, "KEEP_LATEST_COMMITS: commits whose snapshots stay readable",
                   ("hoodie.clean.commits.retained",)),
    ConfigProperty("hoodie.cleaner.fileversions.retained", "cleaner_file_versions_retained",
                   _positive_int, 3, "KEEP_LATEST_FILE_VERSIONS: versions kept per file group",
                   ("hoodie.clean.fileversions.retained",)),
    ConfigProperty("hoodie.archive.automatic", "auto_archive", _boolean, True,
                   "archive old instants after every write"),
    ConfigProperty("hoodie.archive.beyond.savepoint", "archive_beyond_savepoint", _boolean,
                   False, "archive past savepoints, keeping savepointed commits on the timeline"),
    ConfigProperty("hoodie.keep.min.commits", "keep_min_commits", _positive_int, 20,
                   "commits the active timeline keeps after archiving"),
    ConfigProperty("hoodie.keep.max.commits", "keep_max_commits", _positive_int, 30,
                   "commits on the active timeline that trigger archiving"),
    ConfigProperty("hoodie.compact.inline", "inline_compaction", _boolean, True,
                   "merge-on-read: compact after delta commits"),
    ConfigProperty("hoodie.compact.inline.max.delta.commits", "compaction_delta_commits",
                   _positive_int, 5, "merge-on-read: delta commits that trigger inline compaction"),
    # Concurrency.
    ConfigProperty("hoodie.write.concurrency.mode", "concurrency_mode",
                   _choice("single_writer", "optimistic_concurrency_control"),
                   "optimistic_concurrency_control",
                   "optimistic_concurrency_control (commits under the table lock, a conflicting "
                   "write fails) or single_writer (no lock: one writer at a time); both keep "
                   "heartbeats and never roll back a running write"),
    ConfigProperty("hoodie.write.lock.provider", "lock_provider", _lock_provider, None,
                   "optimistic concurrency: the table lock, storage (renewed, handed over by "
                   "conditional writes; S3 and local paths) or filesystem (an exclusively "
                   "created file); Hudi's class names work too; none: storage on S3, "
                   "filesystem elsewhere"),
    ConfigProperty("hoodie.write.lock.wait_time_ms", "lock_wait_ms", _positive_int, 60_000,
                   "optimistic concurrency: how long to wait for the table lock (ms)"),
    ConfigProperty("hoodie.write.lock.filesystem.expire", "lock_expire_minutes", _positive_int, 1,
                   "filesystem lock: minutes after which a dead writer's lock is broken"),
    ConfigProperty("hoodie.write.lock.storage.validity.timeout.secs", "lock_validity_seconds",
                   _positive_int, 300, "storage lock: seconds it stays held without renewal "
                   "(a dead writer's lock expires after this)"),
    ConfigProperty("hoodie.write.lock.storage.renew.interval.secs", "lock_renew_seconds",
                   _positive_int, 30, "storage lock: seconds between its holder's renewals"),
    ConfigProperty("hoodie.client.heartbeat.interval_in_ms", "heartbeat_interval_ms",
                   _positive_int, 60_000, "writer heartbeat period (ms)"),
    ConfigProperty("hoodie.client.heartbeat.tolerable.misses", "heartbeat_tolerable_misses",
                   _non_negative_int, 2, "missed heartbeats before a pending write has failed"),
)  # fmt: skip
_BY_KEY = {key: prop for prop in OPTIONS for key in prop.keys}
_DEFAULTS = {prop.attribute: prop.default for prop in OPTIONS}


def option_keys(attribute: str) -> tuple[str, ...]:
    """Every key (Hudi's current one first) of the option that sets `WriteConfig.<attribute>`."""
    return next(prop.keys for prop in OPTIONS if prop.attribute == attribute)


def option_default(attribute: str) -> object:
    """The default of the option that sets `WriteConfig.<attribute>`: what table services
    use when they run without a write config."""
    return _DEFAULTS[attribute]


def _default(attribute: str) -> Any:
    """A `WriteConfig` field's default, from the option table."""
    return field(default=_DEFAULTS[attribute])


@dataclass(frozen=True)
class WriteConfig:
    """How to write one batch: the table's identity plus tuning options."""

    table_name: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    precombine_field: str | None = None
    table_type: str = _default("table_type")
    operation: str = _default("operation")
    insert_dup_policy: str = _default("insert_dup_policy")
    hive_style_partitioning: bool = _default("hive_style_partitioning")
    url_encode_partition_path: bool = _default("url_encode_partition_path")
    table_version: int | None = _default("table_version")  # None: the table's, new ones 6
    metadata_table: bool = _default("metadata_table")  # always False (true is refused)
    database: str = "default"
    max_file_size: int = _default("max_file_size")
    small_file_limit: int = _default("small_file_limit")
    record_size_estimate: int = _default("record_size_estimate")
    compression: str = _default("compression")
    merge_max_memory: int = _default("merge_max_memory")
    parallelism: int = _default("parallelism")
    index_type: str = _default("index_type")
    bloom_num_entries: int = _default("bloom_num_entries")
    bloom_fpp: float = _default("bloom_fpp")
    bloom_filter_type: str = _default("bloom_filter_type")
    bloom_dynamic_max_entries: int = _default("bloom_dynamic_max_entries")
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
    inline_compaction: bool = _default("inline_compaction")
    compaction_delta_commits: int = _default("compaction_delta_commits")
    # What a batch with other columns than the table's may do (see hoodie.schema_evolution).
    schema_change: SchemaChange = SchemaChange.EVOLVE
    options: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.table_name:
            raise InvalidConfigError("a table name is required")
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
        if self.operation != UPSERT and self.index_type != SIMPLE_INDEX:
            raise InvalidConfigError(
                f"table '{self.table_name}': hoodie.datasource.write.operation={self.operation} "
                f"needs the SIMPLE index (hoodie.index.type={self.index_type} places records "
                "without looking up which keys exist); use operation upsert, or the SIMPLE index"
            )
        if self.keep_min_commits >= self.keep_max_commits:
            raise InvalidConfigError(
                f"hoodie.keep.min.commits ({self.keep_min_commits}) must be smaller than "
                f"hoodie.keep.max.commits ({self.keep_max_commits})"
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

    @property
    def bloom_filter(self) -> BloomFilterSpec:
        """The bloom filter every base file of this write carries in its footer."""
        return BloomFilterSpec(self.bloom_num_entries, self.bloom_fpp, self.bloom_filter_type,
                               self.bloom_dynamic_max_entries)  # fmt: skip

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
            "table_type": _choice(COPY_ON_WRITE, MERGE_ON_READ)("table_type", table_type)
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
    for key, value in options.items():
        prop = _BY_KEY.get(key)
        if prop is None:
            raise InvalidConfigError(_unknown_option(key))
        value = prop.parse(key, value)
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


def _unknown_option(key: str) -> str:
    close = difflib.get_close_matches(key, list(_BY_KEY), n=1, cutoff=0.6)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    supported = "\n".join(f"  {prop.describe()}" for prop in sorted(OPTIONS, key=lambda p: p.key))
    return f"unknown option '{key}'.{hint} Supported options:\n{supported}"

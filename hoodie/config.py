"""Write configuration: what a caller asks for, checked once, in Hudi's option names.

Every option a user can set arrives here, either as a first-class field or as a raw `hoodie.*`
key. Unknown and malformed keys fail with the list of supported ones, so a typo never silently
falls back to a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .exceptions import InvalidConfigError
from .properties import COPY_ON_WRITE, MERGE_ON_READ
from .schema_evolution import SchemaChange

MB = 1024 * 1024
SIMPLE_INDEX, BUCKET_INDEX = "SIMPLE", "BUCKET"
INDEX_TYPES = (SIMPLE_INDEX, BUCKET_INDEX)


def _positive_int(key: str, value: str) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number <= 0:
        raise InvalidConfigError(f"option '{key}' must be a positive integer, got {value!r}")
    return number


def _non_negative_int(key: str, value: str) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number < 0:
        raise InvalidConfigError(f"option '{key}' must be an integer >= 0, got {value!r}")
    return number


def _boolean(key: str, value: str) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise InvalidConfigError(f"option '{key}' must be true or false, got {value!r}")
    return text == "true"


def _choice(*choices: str):
    """Any spelling's case is accepted; the value comes back as Hudi spells it in `choices`."""
    by_folded = {choice.lower(): choice for choice in choices}

    def check(key: str, value: str) -> str:
        text = str(value).strip().lower()
        if text not in by_folded:
            raise InvalidConfigError(
                f"option '{key}' must be one of {', '.join(choices)}, got {value!r}"
            )
        return by_folded[text]

    return check


def _index_type(key: str, value: str) -> str:
    text = str(value).strip().upper()
    if text not in INDEX_TYPES:
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not supported; supported: {', '.join(INDEX_TYPES)}"
        )
    return text


def _field_list(key: str, value: str) -> tuple[str, ...]:
    fields = tuple(f.strip() for f in str(value).split(",") if f.strip())
    if not fields:
        raise InvalidConfigError(f"option '{key}' must name one or more columns, got {value!r}")
    return fields


# key -> (attribute on WriteConfig, parser, description for error messages and docs)
SUPPORTED_OPTIONS = {
    "hoodie.parquet.max.file.size": ("max_file_size", _positive_int, "bytes, default 125829120"),
    "hoodie.parquet.small.file.limit": (
        "small_file_limit",
        _non_negative_int,
        "bytes, default 104857600; 0 turns small-file filling off",
    ),
    "hoodie.copyonwrite.record.size.estimate": (
        "record_size_estimate",
        _positive_int,
        "bytes per record before any commit tells, default 1024",
    ),
    "hoodie.parquet.compression.codec": (
        "compression",
        _choice("snappy", "gzip", "zstd", "lz4", "brotli", "uncompressed", "none"),
        "default snappy",
    ),
    "hoodie.upsert.shuffle.parallelism": (
        "parallelism",
        _non_negative_int,
        "Spark partitions for tagging, default 0 = Spark's default",
    ),
    "hoodie.index.type": (
        "index_type",
        _index_type,
        "SIMPLE (default: join with stored keys) | BUCKET (hash of the key, no key scan)",
    ),
    "hoodie.bucket.index.num.buckets": (
        "bucket_count",
        _positive_int,
        "BUCKET index: buckets (file groups) per partition, fixed for the table, default 4",
    ),
    "hoodie.bucket.index.hash.field": (
        "bucket_hash_fields",
        _field_list,
        "BUCKET index: the record key fields to hash, default all of them",
    ),
    "hoodie.clean.automatic": (
        "auto_clean",
        _boolean,
        "clean old file versions after every write, default true",
    ),
    "hoodie.cleaner.policy": (
        "cleaner_policy",
        _choice("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"),
        "KEEP_LATEST_COMMITS (default) or KEEP_LATEST_FILE_VERSIONS",
    ),
    "hoodie.cleaner.commits.retained": (
        "cleaner_commits_retained",
        _positive_int,
        "KEEP_LATEST_COMMITS: commits whose snapshots stay readable, default 10",
    ),
    "hoodie.cleaner.fileversions.retained": (
        "cleaner_file_versions_retained",
        _positive_int,
        "KEEP_LATEST_FILE_VERSIONS: versions kept per file group, default 3",
    ),
    "hoodie.write.concurrency.mode": (
        "concurrency_mode",
        _choice("single_writer", "optimistic_concurrency_control"),
        "single_writer (default) or optimistic_concurrency_control",
    ),
    "hoodie.write.lock.wait_time_ms": (
        "lock_wait_ms",
        _positive_int,
        "optimistic concurrency: how long to wait for the table lock, default 60000",
    ),
    "hoodie.write.lock.filesystem.expire": (
        "lock_expire_minutes",
        _positive_int,
        "minutes after which a dead writer's table lock is broken, default 1",
    ),
    "hoodie.client.heartbeat.interval_in_ms": (
        "heartbeat_interval_ms",
        _positive_int,
        "optimistic concurrency: writer heartbeat period, default 60000",
    ),
    "hoodie.client.heartbeat.tolerable.misses": (
        "heartbeat_tolerable_misses",
        _non_negative_int,
        "missed heartbeats before a pending write counts as failed, default 2",
    ),
    "hoodie.archive.automatic": (
        "auto_archive",
        _boolean,
        "archive old instants after every write, default true",
    ),
    "hoodie.archive.beyond.savepoint": (
        "archive_beyond_savepoint",
        _boolean,
        "archive past savepoints, keeping savepointed commits on the timeline, default false",
    ),
    "hoodie.keep.min.commits": (
        "keep_min_commits",
        _positive_int,
        "commits the active timeline keeps after archiving, default 20",
    ),
    "hoodie.keep.max.commits": (
        "keep_max_commits",
        _positive_int,
        "commits on the active timeline that trigger archiving, default 30",
    ),
    "hoodie.compact.inline": (
        "inline_compaction",
        _boolean,
        "merge-on-read: compact after delta commits, default true",
    ),
    "hoodie.compact.inline.max.delta.commits": (
        "compaction_delta_commits",
        _positive_int,
        "merge-on-read: delta commits that trigger inline compaction, default 5",
    ),
    "hoodie.datasource.write.hive_style_partitioning": (
        "hive_style_partitioning",
        _boolean,
        "write partition folders as col=value, default false",
    ),
    "hoodie.datasource.write.partitionpath.urlencode": (
        "url_encode_partition_path",
        _boolean,
        "URL-encode partition values in folder names, default false",
    ),
}


@dataclass(frozen=True)
class WriteConfig:
    """How to write one batch: the table's identity plus tuning options."""

    table_name: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    precombine_field: str | None = None
    table_type: str = COPY_ON_WRITE
    hive_style_partitioning: bool = False
    url_encode_partition_path: bool = False
    database: str = "default"
    max_file_size: int = 120 * MB
    small_file_limit: int = 100 * MB
    record_size_estimate: int = 1024
    compression: str = "snappy"
    parallelism: int = 0
    index_type: str = SIMPLE_INDEX
    bucket_count: int = 4
    bucket_hash_fields: tuple[str, ...] = ()  # default: the record key fields
    concurrency_mode: str = "single_writer"
    lock_wait_ms: int = 60_000
    lock_expire_minutes: int = 1
    heartbeat_interval_ms: int = 60_000
    heartbeat_tolerable_misses: int = 2
    auto_clean: bool = True
    auto_archive: bool = True
    archive_beyond_savepoint: bool = False
    keep_min_commits: int = 20
    keep_max_commits: int = 30
    cleaner_policy: str = "KEEP_LATEST_COMMITS"
    cleaner_commits_retained: int = 10
    cleaner_file_versions_retained: int = 3
    inline_compaction: bool = True
    compaction_delta_commits: int = 5
    # What a batch with other columns than the table's may do (see hoodie.schema_evolution).
    schema_change: SchemaChange = SchemaChange.EVOLVE
    options: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
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
        if self.keep_min_commits >= self.keep_max_commits:
            raise InvalidConfigError(
                f"hoodie.keep.min.commits ({self.keep_min_commits}) must be smaller than "
                f"hoodie.keep.max.commits ({self.keep_max_commits})"
            )
        if self.small_file_limit >= self.max_file_size:
            raise InvalidConfigError(
                f"hoodie.parquet.small.file.limit ({self.small_file_limit}) must be smaller than "
                f"hoodie.parquet.max.file.size ({self.max_file_size})"
            )

    @classmethod
    def build(
        cls,
        table_name: str,
        record_key: str | list[str] | tuple[str, ...],
        partition_path: str | list[str] | tuple[str, ...] | None = None,
        precombine_field: str | None = None,
        *,
        table_type: str = COPY_ON_WRITE,
        hive_style_partitioning: bool | None = None,
        options: Mapping[str, object] | None = None,
        database: str = "default",
        schema_change: SchemaChange | str = SchemaChange.EVOLVE,
    ) -> WriteConfig:
        """Build from user-facing values, parsing `options` (raw `hoodie.*` keys)."""
        parsed = parse_options(options or {})
        if hive_style_partitioning is not None:
            declared = parsed.get("hive_style_partitioning")
            if declared is not None and declared != hive_style_partitioning:
                raise InvalidConfigError(
                    "hive_style_partitioning and option "
                    "'hoodie.datasource.write.hive_style_partitioning' disagree "
                    f"({hive_style_partitioning} vs {declared}); set only one"
                )
            parsed["hive_style_partitioning"] = hive_style_partitioning
        return cls(
            table_name=table_name,
            record_key_fields=as_field_tuple(record_key),
            partition_fields=as_field_tuple(partition_path),
            precombine_field=precombine_field or None,
            table_type=table_type,
            database=database,
            schema_change=_schema_change(schema_change),
            options={str(k): str(v) for k, v in (options or {}).items()},
            **parsed,
        )


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


def parse_options(options: Mapping[str, object]) -> dict[str, object]:
    parsed: dict[str, object] = {}
    for key, value in options.items():
        if key not in SUPPORTED_OPTIONS:
            supported = "\n".join(
                f"  {name}: {desc}" for name, (_, _, desc) in sorted(SUPPORTED_OPTIONS.items())
            )
            raise InvalidConfigError(f"unknown option '{key}'. Supported options:\n{supported}")
        attr, parser, _ = SUPPORTED_OPTIONS[key]
        parsed[attr] = parser(key, value)
    return parsed

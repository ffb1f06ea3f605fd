"""The read domain: every option a read takes, in Hudi's names (`hoodie.read.options` parses
them into `ReadOptions`; an unknown key is refused there, listing these).

The docs are what that refusal lists, word for word; `INTERNAL` are keys Spark or dbt-hoodie
itself passes to the data source, accepted and never listed.
"""

from __future__ import annotations

from enum import Enum

from .property import ConfigProperty, boolean


class QueryType(Enum):
    """hoodie.datasource.query.type: what is true now, without the log files of merge-on-read
    (read-optimized), or what changed in a range of instants."""

    SNAPSHOT = "snapshot"
    READ_OPTIMIZED = "read_optimized"
    INCREMENTAL = "incremental"


class IncrementalFormat(Enum):
    """hoodie.datasource.query.incremental.format: an incremental read's rows."""

    LATEST_STATE = "latest_state"
    CDC = "cdc"


# hoodie.storage.<name>: an option of the table's object store (the storage domain).
STORAGE_PREFIX = "hoodie.storage."

QUERY_TYPE = ConfigProperty(
    "hoodie.datasource.query.type", QueryType.SNAPSHOT.value,
    f"{QueryType.SNAPSHOT.value} (default) | {QueryType.READ_OPTIMIZED.value} | "
    f"{QueryType.INCREMENTAL.value}", attribute="query_type", choices=QueryType,
)  # fmt: skip
AS_OF_INSTANT = ConfigProperty(
    "as.of.instant", None,
    "time travel: yyyyMMddHHmmssSSS, 'yyyy-MM-dd HH:mm:ss' or yyyy-MM-dd",
    attribute="as_of_instant",
)  # fmt: skip
BEGIN_INSTANT = ConfigProperty(
    "hoodie.datasource.read.begin.instanttime", None,
    "incremental: changes after this instant (exclusive)", attribute="begin_instant",
)  # fmt: skip
END_INSTANT = ConfigProperty(
    "hoodie.datasource.read.end.instanttime", None,
    "incremental: changes up to this instant (inclusive), default latest",
    attribute="end_instant",
)  # fmt: skip
# Apache Hudi's key (since 0.13.0). `cdc` is its CDC query: four string columns op, ts_ms,
# before, after (`hoodie.read.cdc`), on tables written with hoodie.table.cdc.enabled.
INCREMENTAL_FORMAT = ConfigProperty(
    "hoodie.datasource.query.incremental.format", IncrementalFormat.LATEST_STATE.value,
    f"incremental: {IncrementalFormat.LATEST_STATE.value} (default: the latest version of each "
    f"record the range wrote) | {IncrementalFormat.CDC.value} (every change: op, ts_ms, before, "
    "after; tables with hoodie.table.cdc.enabled=true)",
    attribute="incremental_format", choices=IncrementalFormat,
)  # fmt: skip
_MAX_PARTITION_BYTES = 128 * 1024 * 1024  # Spark's spark.sql.files.maxPartitionBytes
MAX_PARTITION_BYTES = ConfigProperty(
    "hoodie.read.max.partition.bytes", _MAX_PARTITION_BYTES,
    f"bytes of file slices one Spark task reads at most (default {_MAX_PARTITION_BYTES})",
    attribute="max_partition_bytes",
)  # fmt: skip
PARALLELISM = ConfigProperty(
    "hoodie.read.parallelism", None,
    "tasks to spread a read of small file slices over (default: the driver's cores)",
    attribute="parallelism",
)  # fmt: skip
# Apache Hudi 1.x's readers list files through the metadata table with this on, their default
# (`DEFAULT_METADATA_ENABLE_FOR_READERS`; 0.15's is false); so do ours. The table decides: one
# without a usable metadata table (`files` not in hoodie.table.metadata.partitions) is listed
# from storage either way. The writers' key of the same name (hoodie.options.write) is another
# switch, defaulting to false: whether our actions keep the metadata table at all.
METADATA_ENABLE = ConfigProperty(
    "hoodie.metadata.enable", True,
    "list the table's partitions and files through its metadata table (.hoodie/metadata) when "
    "it has one whose files partition is complete, instead of listing storage; a file no "
    "completed action recorded there (one a crashed writer left) is not read, as in Apache "
    "Hudi. false: list storage. A damaged metadata table fails the read",
    attribute="metadata_enable", parse=boolean,
)  # fmt: skip
# Apache Hudi 1.x turns data skipping on by default (`DataSourceReadOptions.ENABLE_DATA_SKIPPING`,
# true in 1.2.0; false in 0.15), and so do we: a skipped file slice is one no row of which can
# match the read's filters, so the switch changes what a read costs, never what it returns.
DATA_SKIPPING = ConfigProperty(
    "hoodie.enable.data.skipping", True,
    "skip file slices no row of which can match the read's filters, by their base files' "
    "column statistics, record key range and bloom filter (footers)",
    attribute="data_skipping", parse=boolean,
)  # fmt: skip
# Apache Hudi's reader tolerance (`HoodieMetadataConfig.IGNORE_SPURIOUS_DELETES`, true in 0.15
# and 1.2; checked by `BaseTableMetadata.checkForSpuriousDeletes` where a listing reads a
# `files` record): a rollback's delete of a file whose own delta commit never counted (its
# data instant failed) is such a delete, harmless, so it is ignored unless a read asks.
IGNORE_SPURIOUS_DELETES = ConfigProperty(
    "_hoodie.metadata.ignore.spurious.deletes", True,
    "listing through the metadata table: a files record still deleting a file after merging "
    "(no earlier record of the partition added it) is ignored, as in Apache Hudi; false: the "
    "read fails naming the partition and the file",
    attribute="ignore_spurious_deletes", parse=boolean,
)  # fmt: skip
STORAGE = ConfigProperty(
    STORAGE_PREFIX + "<name>", None,
    "an option of the object store's pyarrow file system (endpoint_override, region, "
    "scheme, ...)", attribute="storage_options",
)  # fmt: skip

READ_OPTIONS: tuple[ConfigProperty, ...] = (
    QUERY_TYPE, AS_OF_INSTANT, BEGIN_INSTANT, END_INSTANT, INCREMENTAL_FORMAT, MAX_PARTITION_BYTES,
    PARALLELISM, METADATA_ENABLE, DATA_SKIPPING, IGNORE_SPURIOUS_DELETES, STORAGE,
)  # fmt: skip

# A read plan `HoodieTable.read` made (`ReadPlan.to_json`): the data source reads exactly its
# slices instead of planning (internal: not for users, who give the options it came from).
PLANNED = "hoodie.read.planned"
# Opt-in partition pruning by Spark's filters (PySpark hands them over only with
# spark.sql.python.filterPushdown.enabled; the dbt adapter's session turns both on).
FILTER_PUSHDOWN = "hoodie.read.filter.pushdown"
# Options Spark itself passes along, and our own switches (read by the data source).
INTERNAL = frozenset({"path", "paths", FILTER_PUSHDOWN, PLANNED})

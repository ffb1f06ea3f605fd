"""The table domain: the keys of `hoodie.properties`, as Apache Hudi's `HoodieTableConfig`
names them, with what a table we create gets when nothing says otherwise.

`hoodie.properties` (`TableProperties`) reads and writes them; a table written by Apache Hudi
may carry others, which are kept as stored. A default is what a table we create gets when
nothing says otherwise, and, for the keys `TableProperties` reads, what a stored table
without the key is read as (but `hoodie.table.version`: a stored table must name it).
"""

from __future__ import annotations

from enum import Enum, IntEnum

from .property import Alias, ConfigProperty


class TableType(Enum):
    COPY_ON_WRITE = "COPY_ON_WRITE"
    MERGE_ON_READ = "MERGE_ON_READ"


class TableVersion(IntEnum):
    """The table versions we create and write (Apache Hudi 0.12-0.15 write 6, 1.0 writes 8;
    we read 9, Apache Hudi 1.1's, too, but do not write it)."""

    SIX = 6
    EIGHT = 8


class RecordMergeMode(Enum):
    """Hudi 1.x's merge modes: by the ordering field, the later write wins, or as the payload
    class says (CUSTOM: we merge by OverwriteNonDefaultsWithLatestAvroPayload and
    PartialUpdateAvroPayload, see `hoodie.merge`)."""

    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
    CUSTOM = "CUSTOM"


class CdcSupplementalLoggingMode(Enum):
    """What a CDC log file records per change (`HoodieCDCSupplementalLoggingMode`): the
    operation and key only, plus the image before, or both images. The less is logged, the more
    a CDC read looks up in base files (which cleaning may have removed)."""

    OP_KEY_ONLY = "OP_KEY_ONLY"
    DATA_BEFORE = "DATA_BEFORE"
    DATA_BEFORE_AFTER = "DATA_BEFORE_AFTER"


_MODEL = "org.apache.hudi.common.model."


class PayloadClass(Enum):
    """The payload classes we merge by (Apache Hudi's; `hoodie.merge`)."""

    DEFAULT = _MODEL + "DefaultHoodieRecordPayload"
    EVENT_TIME = _MODEL + "EventTimeAvroPayload"
    OVERWRITE_WITH_LATEST = _MODEL + "OverwriteWithLatestAvroPayload"
    OVERWRITE_NON_DEFAULTS = _MODEL + "OverwriteNonDefaultsWithLatestAvroPayload"
    PARTIAL_UPDATE = _MODEL + "PartialUpdateAvroPayload"

    @property
    def short_name(self) -> str:
        return self.value.rsplit(".", 1)[-1]

    @property
    def mode(self) -> RecordMergeMode:
        """The merge mode Apache Hudi 1.2 gives a new version 8 table with this payload."""
        if self in (PayloadClass.DEFAULT, PayloadClass.EVENT_TIME):
            return RecordMergeMode.EVENT_TIME_ORDERING
        if self is PayloadClass.OVERWRITE_WITH_LATEST:
            return RecordMergeMode.COMMIT_TIME_ORDERING
        return RecordMergeMode.CUSTOM


NAME = ConfigProperty("hoodie.table.name", None, "the table's name", attribute="name")
TYPE = ConfigProperty(
    "hoodie.table.type", TableType.COPY_ON_WRITE.value, "how updates are stored: rewritten "
    "base files (COPY_ON_WRITE) or log files merged on read (MERGE_ON_READ)",
    attribute="table_type", choices=TableType,
)  # fmt: skip
VERSION = ConfigProperty(
    "hoodie.table.version", TableVersion.SIX.value, "the table's format version: 6, 8 or 9 "
    "are read, 6 and 8 written (a new table's: hoodie.write.table.version)",
    attribute="table_version",
)  # fmt: skip
TIMELINE_LAYOUT_VERSION = ConfigProperty(
    "hoodie.timeline.layout.version", 1, "the timeline's layout: 1 (`.hoodie/`) with table "
    "version 6, 2 (`.hoodie/timeline/`) with 8 and 9", attribute="timeline_layout_version",
)  # fmt: skip
DATABASE_NAME = ConfigProperty("hoodie.database.name", "default", "the table's database",
                               attribute="database")  # fmt: skip
RECORD_KEY_FIELDS = ConfigProperty("hoodie.table.recordkey.fields", (),
                                   "record key column(s), comma-separated",
                                   attribute="record_key_fields")  # fmt: skip
PARTITION_FIELDS = ConfigProperty(
    "hoodie.table.partition.fields", (), "partition path column(s), comma-separated (Apache "
    "Hudi may add `:TYPE` to each, read as the column); none: non-partitioned",
    attribute="partition_fields",
)  # fmt: skip
PRECOMBINE_FIELD = ConfigProperty(
    "hoodie.table.precombine.field", None, "the ordering column: the larger value wins (one "
    "column; table version 9 names it hoodie.table.ordering.fields)",
    attribute="precombine_field", aliases=(Alias("hoodie.table.ordering.fields"),),
)  # fmt: skip
KEY_GENERATOR_CLASS = ConfigProperty(
    "hoodie.table.keygenerator.class", None, "Apache Hudi's key generator class; none: by the "
    "partition fields (NonpartitionedKeyGenerator, SimpleKeyGenerator for one, "
    "ComplexKeyGenerator for more)", attribute="key_generator_class",
)  # fmt: skip
KEY_GENERATOR_TYPE = ConfigProperty(
    "hoodie.table.keygenerator.type", None, "table versions 8 and 9: the key generator by "
    "type (SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM)",
)  # fmt: skip
HIVE_STYLE_PARTITIONING = ConfigProperty(
    "hoodie.datasource.write.hive_style_partitioning", False, "partition folders are named "
    "col=value", attribute="hive_style_partitioning",
)  # fmt: skip
URL_ENCODE_PARTITIONING = ConfigProperty(
    "hoodie.datasource.write.partitionpath.urlencode", False, "partition values in folder "
    "names are escaped (`%XX`)", attribute="url_encode_partition_path",
)  # fmt: skip
DROP_PARTITION_COLUMNS = ConfigProperty(
    "hoodie.datasource.write.drop.partition.columns", False, "partition columns left out of "
    "the data files (always false in tables we write)",
)  # fmt: skip
BASE_FILE_FORMAT = ConfigProperty("hoodie.table.base.file.format", "PARQUET",
                                  "the base files' format: PARQUET only")  # fmt: skip
POPULATE_META_FIELDS = ConfigProperty(
    "hoodie.populate.meta.fields", True, "records carry Hudi's `_hoodie_*` columns",
    attribute="populate_meta_fields",
)  # fmt: skip
ARCHIVELOG_FOLDER = ConfigProperty("hoodie.archivelog.folder", "archived",
                                   "table version 6: the archived timeline's folder in "
                                   "`.hoodie/`")  # fmt: skip
PAYLOAD_CLASS = ConfigProperty(
    "hoodie.compaction.payload.class", None, "Apache Hudi's payload class (how versions of a "
    "key merge on version 6; absent: OverwriteWithLatestAvroPayload, by commit time); tables "
    "we create store it (DefaultHoodieRecordPayload with a precombine field, "
    "OverwriteWithLatestAvroPayload without, or the write's payload class)",
)  # fmt: skip
RECORD_MERGER_STRATEGY = ConfigProperty("hoodie.compaction.record.merger.strategy", None,
                                        "Apache Hudi 0.x's record merger strategy id")  # fmt: skip
RECORD_MERGE_MODE = ConfigProperty(
    "hoodie.record.merge.mode", None, "table versions 8 and 9: how versions of a key merge; "
    "none (version 6): by the payload class", attribute="record_merge_mode",
    choices=RecordMergeMode,
)  # fmt: skip
RECORD_MERGE_STRATEGY_ID = ConfigProperty("hoodie.record.merge.strategy.id", None,
                                          "table versions 8 and 9: the merge strategy's id, by "
                                          "the merge mode")  # fmt: skip
CREATE_SCHEMA = ConfigProperty("hoodie.table.create.schema", None,
                               "the Avro schema the table was created with",
                               attribute="create_schema")  # fmt: skip
TIMELINE_TIMEZONE = ConfigProperty("hoodie.table.timeline.timezone", "UTC",
                                   "the time zone of instant times: UTC in tables we create "
                                   "(Apache Hudi's default is LOCAL)")  # fmt: skip
TABLE_CHECKSUM = ConfigProperty("hoodie.table.checksum", None,
                                "CRC32 of `<database>.<table>`, guarding renames")  # fmt: skip
METADATA_PARTITIONS = ConfigProperty(
    "hoodie.table.metadata.partitions", (), "the metadata table's partitions readers may use; "
    "non-empty: Apache Hudi's and hudi-rs's readers list files through `.hoodie/metadata` "
    "(`files` kept by every action of ours with hoodie.metadata.enable=true, cleared by every "
    "action of ours otherwise)",
)  # fmt: skip
METADATA_PARTITIONS_INFLIGHT = ConfigProperty(
    "hoodie.table.metadata.partitions.inflight", (), "the metadata table's partitions being "
    "built (`files` while our first action with hoodie.metadata.enable=true builds it; "
    "cleared by every action of ours otherwise)",
)  # fmt: skip
INITIAL_VERSION = ConfigProperty("hoodie.table.initial.version", None,
                                 "table versions 8 and 9: the version the table was created "
                                 "with")  # fmt: skip
TIMELINE_PATH = ConfigProperty("hoodie.timeline.path", "timeline",
                               "table versions 8 and 9: the active timeline's folder in "
                               "`.hoodie/`")  # fmt: skip
TIMELINE_HISTORY_PATH = ConfigProperty("hoodie.timeline.history.path", "history",
                                       "table versions 8 and 9: the LSM timeline's folder in "
                                       "the timeline's")  # fmt: skip

CDC_ENABLED = ConfigProperty(
    "hoodie.table.cdc.enabled", False, "writes that rewrite a base file also write the "
    "changes they made to a `.cdc` log file beside it, for CDC reads "
    "(hoodie.datasource.query.incremental.format=cdc); set when the table is created",
    attribute="cdc_enabled",
)  # fmt: skip
CDC_SUPPLEMENTAL_LOGGING_MODE = ConfigProperty(
    "hoodie.table.cdc.supplemental.logging.mode",
    CdcSupplementalLoggingMode.DATA_BEFORE_AFTER.value, "what a `.cdc` file records per "
    "change: OP_KEY_ONLY, DATA_BEFORE or DATA_BEFORE_AFTER (any case; stored upper-case); "
    "set when the table is created", attribute="cdc_supplemental_logging_mode",
    choices=CdcSupplementalLoggingMode,
)  # fmt: skip

TABLE_PROPERTIES: tuple[ConfigProperty, ...] = (
    NAME, TYPE, VERSION, TIMELINE_LAYOUT_VERSION, DATABASE_NAME, RECORD_KEY_FIELDS,
    PARTITION_FIELDS, PRECOMBINE_FIELD, KEY_GENERATOR_CLASS, KEY_GENERATOR_TYPE,
    HIVE_STYLE_PARTITIONING, URL_ENCODE_PARTITIONING, DROP_PARTITION_COLUMNS, BASE_FILE_FORMAT,
    POPULATE_META_FIELDS, ARCHIVELOG_FOLDER, PAYLOAD_CLASS, RECORD_MERGER_STRATEGY,
    RECORD_MERGE_MODE, RECORD_MERGE_STRATEGY_ID, CREATE_SCHEMA, TIMELINE_TIMEZONE, TABLE_CHECKSUM,
    METADATA_PARTITIONS, METADATA_PARTITIONS_INFLIGHT, INITIAL_VERSION, TIMELINE_PATH,
    TIMELINE_HISTORY_PATH, CDC_ENABLED, CDC_SUPPLEMENTAL_LOGGING_MODE,
)  # fmt: skip

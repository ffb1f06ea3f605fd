"""Apache Hudi tables (table version 6) written and read with PySpark and pyarrow.

The core of dbt-hoodie, usable without dbt::

    from hoodie import HoodieTable, WriteConfig

    config = WriteConfig.build("orders", record_key="order_id", partition_path="order_date",
                               precombine_field="updated_at")
    table = HoodieTable.for_write("/lake/orders", config)
    table.upsert(spark_df, config)
    table.read(spark).show()

What this module exports is the core's public API, and all the dbt adapter uses.
"""

from .config import OPTIONS, ConfigProperty, WriteConfig, as_field_tuple, option_keys
from .exceptions import (
    ConflictingSettingsError,
    DuplicateRecordKeyError,
    HoodieError,
    InvalidConfigError,
    MetaColumnError,
    RecordKeyExistsError,
    SchemaEvolutionError,
    TableIdentityError,
    TaskFailedError,
    TimelineError,
)
from .properties import COPY_ON_WRITE, MERGE_ON_READ
from .read.datasource import BASE_PATH_METADATA, PUSHDOWN_OPTION, SOURCE_NAME
from .read.datasource import register as register_data_source
from .read.options import STORAGE_PREFIX, ReadOptions
from .schema import META_COLUMNS
from .shipping import ship_core
from .table import HoodieTable
from .write.result import WriteResult
from .write.validation import check_batch

__all__ = [
    "BASE_PATH_METADATA",
    "COPY_ON_WRITE",
    "MERGE_ON_READ",
    "META_COLUMNS",
    "OPTIONS",
    "PUSHDOWN_OPTION",
    "SOURCE_NAME",
    "STORAGE_PREFIX",
    "ConfigProperty",
    "ConflictingSettingsError",
    "DuplicateRecordKeyError",
    "HoodieError",
    "HoodieTable",
    "InvalidConfigError",
    "MetaColumnError",
    "ReadOptions",
    "RecordKeyExistsError",
    "SchemaEvolutionError",
    "TableIdentityError",
    "TaskFailedError",
    "TimelineError",
    "WriteConfig",
    "WriteResult",
    "as_field_tuple",
    "check_batch",
    "option_keys",
    "register_data_source",
    "ship_core",
]

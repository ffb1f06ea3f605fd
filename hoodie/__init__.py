"""Apache Hudi tables (table versions 6 and 8) written and read with PySpark and pyarrow.

The core of dbt-hoodie, usable without dbt::

    from hoodie import HoodieTable, WriteConfig

    config = WriteConfig.build("orders", record_key="order_id", partition_path="order_date",
                               precombine_field="updated_at")
    table = HoodieTable.for_write("/lake/orders", config)   # the config, given once
    table.upsert(spark_df)
    table.services.clean()
    table.read(spark).show()

What this module exports is what users of the core call: the table facade and its services,
the write config, what writes and services return, the table's properties and every error the
core raises (`hoodie.exceptions`), and `progress`: the steps of writes and table services
as they happen (typed events; `progress.listening(listener)`). What integrations need
besides (the dbt adapter, a cluster's deployment) is in `hoodie.integration`.
"""

from . import progress
from .avro_metadata import CleanMetadata, RestoreMetadata, RollbackMetadata, SavepointMetadata
from .config import WriteConfig
from .exceptions import (
    ClusteringUpdateError,
    ColumnNameError,
    ColumnTypeError,
    CommitError,
    ConcurrentWriteConflict,
    ConflictingSettingsError,
    CorruptDataFileError,
    DamagedFileError,
    DuplicateColumnError,
    DuplicateRecordKeyError,
    HoodieError,
    InvalidConfigError,
    LockLostError,
    LockTimeoutError,
    MalformedMetadataError,
    MetaColumnError,
    MissingColumnError,
    MissingDataFileError,
    NullRecordKeyError,
    PartitionPathError,
    RecordKeyExistsError,
    SchemaError,
    SchemaEvolutionError,
    StaleClusteringPlanError,
    TableExistsError,
    TableIdentityError,
    TableNotFoundError,
    TaskFailedError,
    TimelineError,
    UnsafePathError,
    UnsupportedTableError,
    WriteRolledBackError,
)
from .properties import COPY_ON_WRITE, MERGE_ON_READ, TableProperties
from .services import TableServices
from .table import HistoryRow, HoodieTable
from .table_services.savepoint import Savepoint
from .table_services.upgrade import UpgradeResult
from .table_stats import TableStats
from .write.result import WriteResult

__all__ = [
    "COPY_ON_WRITE",
    "MERGE_ON_READ",
    "CleanMetadata",
    "ClusteringUpdateError",
    "ColumnNameError",
    "ColumnTypeError",
    "CommitError",
    "ConcurrentWriteConflict",
    "ConflictingSettingsError",
    "CorruptDataFileError",
    "DamagedFileError",
    "DuplicateColumnError",
    "DuplicateRecordKeyError",
    "HistoryRow",
    "HoodieError",
    "HoodieTable",
    "InvalidConfigError",
    "LockLostError",
    "LockTimeoutError",
    "MalformedMetadataError",
    "MetaColumnError",
    "MissingColumnError",
    "MissingDataFileError",
    "NullRecordKeyError",
    "PartitionPathError",
    "RecordKeyExistsError",
    "RestoreMetadata",
    "RollbackMetadata",
    "Savepoint",
    "SavepointMetadata",
    "SchemaError",
    "SchemaEvolutionError",
    "StaleClusteringPlanError",
    "TableExistsError",
    "TableIdentityError",
    "TableNotFoundError",
    "TableProperties",
    "TableServices",
    "TableStats",
    "TaskFailedError",
    "TimelineError",
    "UnsafePathError",
    "UnsupportedTableError",
    "UpgradeResult",
    "WriteConfig",
    "WriteResult",
    "WriteRolledBackError",
    "progress",
]

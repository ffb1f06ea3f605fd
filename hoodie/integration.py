"""What integrations of the core need beyond the user's API: the dbt adapter, a cluster's
deployment, the `hoodie` data source's registration.

`hoodie.__all__` is what a user of the core calls (the table facade, its config, results and
errors). The names here are plumbing: the data source's name and option keys as the adapter
registers catalog tables with them, the option table the adapter checks model configs
against (`parse_options` checks write options: a catalog entry's properties; `closest_key`
names the config a typo meant), the batch check a first run makes before its table exists,
and shipping the core to a cluster's Python workers. They are stable for the adapter, not
promised to users.
"""

from .config import OPTIONS, ConfigProperty, as_field_tuple, option_keys, parse_options
from .options.property import closest_key
from .read.datasource import BASE_PATH_METADATA, PUSHDOWN_OPTION, SOURCE_NAME
from .read.datasource import register as register_data_source
from .read.options import STORAGE_PREFIX, ReadOptions
from .schema import META_COLUMNS, quoted_name
from .shipping import ship_core
from .transaction.checkpoints import (
    CHECKPOINTS_KEY,
    CheckpointConflictError,
    SourceCheckpoint,
    expect_checkpoints,
)
from .transaction.checkpoints import encode as encode_checkpoints
from .write.validation import check_batch

__all__ = [
    "BASE_PATH_METADATA",
    "CHECKPOINTS_KEY",
    "META_COLUMNS",
    "OPTIONS",
    "PUSHDOWN_OPTION",
    "SOURCE_NAME",
    "STORAGE_PREFIX",
    "CheckpointConflictError",
    "ConfigProperty",
    "ReadOptions",
    "SourceCheckpoint",
    "as_field_tuple",
    "check_batch",
    "closest_key",
    "encode_checkpoints",
    "expect_checkpoints",
    "option_keys",
    "parse_options",
    "quoted_name",
    "register_data_source",
    "ship_core",
]

"""What integrations of the core need beyond the user's API: the dbt adapter, a cluster's
deployment, the `hoodie` data source's registration.

`hoodie.__all__` is what a user of the core calls (the table facade, its config, results and
errors). The names here are plumbing: the data source's name and option keys as the adapter
registers catalog tables with them, the option table the adapter checks model configs
against (`parse_options` checks write options: a catalog entry's properties; `closest_key`
names the config a typo meant), the batch check a first run makes before its table exists,
shipping the core to a cluster's Python workers, and starting a session's Python workers
beforehand (`warm_python_workers`). They are stable for the adapter, not promised to users.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession

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
    "warm_python_workers",
]


def warm_python_workers(spark: SparkSession, tasks: int) -> int:
    """Start `tasks` Python workers of `spark` with the core imported, in one job of `tasks`
    tiny tasks; the number of worker processes that ran them.

    A session's first task in Python waits for everything that follows its start: the JVM's
    first Python job, PySpark's daemon, a worker forked per core, and each worker's import of
    the core when it unpickles the task (1-2 s of CPU each). Spark reuses a worker for the
    tasks that follow (`spark.python.worker.reuse`, on by default) until it has been idle for
    a minute, so a job run here, beside the session's start-up, spares a first write that
    wait. On a cluster each executor has workers of its own: this warms those the tasks land
    on.
    """
    rows = spark.range(0, tasks, 1, tasks).mapInArrow(_warm_task, "pid long").collect()
    return len({row["pid"] for row in rows})


def _warm_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A warming task: unpickling it imported this module, and so the core (the `hoodie`
    package imports its write and read machinery)."""
    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"pid": [os.getpid()]})

"""The Spark job the metadata table's large writes share (the record index's, `record_index`;
the `column_stats` / `bloom_filters` records of many files, `metadata_indexes`): a list of
sources (JSON strings) read in tasks into rows (`mapInArrow`), the rows grouped by metadata
table file group, one task per group writing that group's file (`applyInArrow`) at the name
the driver planned, each returning a line of JSON. Connect-safe: DataFrames only.

A task's file is written only if absent (`put_task_file`): a task Spark runs again finds its
own file, the same bytes; any other content is another writer's, an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..exceptions import HoodieError
from ..faults import crash_point
from ..storage import FileIO

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SOURCE_DDL = "source string"
RESULT_DDL = "result string"

Reader = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]
GroupFunction = Callable[[tuple[Any, ...], pa.Table], pa.Table]


def grouped_write(
    spark: SparkSession,
    sources: Sequence[str],
    reader: Reader,
    rows_ddl: str,
    by: Sequence[str],
    writer: GroupFunction,
    source_tasks: int,
    group_tasks: int,
) -> list[dict[str, Any]]:
    """One Spark job: `sources` read by `reader` in at most `source_tasks` tasks into rows of
    `rows_ddl`, grouped by the columns `by`, each group given to `writer` (in `group_tasks`
    tasks, so that groups are written in parallel); the JSON each returned, parsed."""
    if not sources:
        return []
    frame = spark.createDataFrame([(s,) for s in sources], SOURCE_DDL)
    frame = frame.repartition(max(1, min(len(sources), source_tasks)))
    rows = frame.mapInArrow(reader, rows_ddl)
    grouped = rows.repartition(max(1, group_tasks), *by).groupBy(*by)
    out = grouped.applyInArrow(plain_function(writer), RESULT_DDL).collect()
    return [json.loads(r["result"]) for r in out]


def plain_function(writer: GroupFunction) -> GroupFunction:
    """`applyInArrow` counts a function's arguments, which a callable object's `self` confuses."""

    def write_group(key: tuple[Any, ...], rows: pa.Table) -> pa.Table:
        return writer(key, rows)

    return write_group


def group_key(value: Any) -> Any:
    """A grouping key's value as Python (`applyInArrow` gives Arrow scalars)."""
    return value.as_py() if hasattr(value, "as_py") else value


def put_task_file(storage: FileIO, path: str, content: bytes, point: str) -> None:
    """Write a task's metadata table file `path` unless there: a task run again (Spark retries
    a failed one) finds its own file; another writer's is another file. Then the crash point
    `point`."""
    if not storage.create_if_absent(path, content):
        if storage.read_bytes(path) != content:
            raise HoodieError(
                f"metadata table file {storage.uri(path)} exists already; another "
                "writer is writing the metadata table"
            )
    crash_point(point)


def result(**fields: Any) -> pa.Table:
    """A group task's one line of JSON (none: `fields` empty)."""
    lines = [json.dumps(fields)] if fields else []
    return pa.table({"result": pa.array(lines, pa.string())})

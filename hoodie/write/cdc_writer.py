"""The `.cdc` file a rewrite of a base file leaves beside it on a table with CDC on.

Apache Hudi's merge handle (`HoodieMergeHandleWithChangeLog`) hands every record it decides to
a `HoodieCDCLogger`: an update that wins is `u` (before: the stored row, after: the row
written), a delete of a stored key `d` (before), a new key `i` (after); an update that loses
to the stored row, and a delete of a key the file group lacks, change nothing and log
nothing. Compaction logs what it folds the same way (Apache Hudi 1.x). The file is one
`CDC_DATA` block named after the base file (same instant and write token, version 1), marked
before it is created so that a rollback removes it, and listed in the write stat's
`cdcStats`. It is written even when no record changed: the stat then says the base file was
rewritten, and Apache Hudi's CDC query asks for a `.cdc` file of every rewritten base file
("There should be a cdc log file").

Which images a record carries depends on the table's supplemental logging mode (`hoodie.cdc`):
the images are the data columns (no meta columns) in the write's schema.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from .. import cdc
from ..cdc import AFTER, BEFORE, OP, TS_MS, CdcOperation, cdc_data_block, cdc_fields, cdc_schema
from ..faults import crash_point
from ..markers import IOType, WriteMarkers
from ..naming import cdc_log_file_name
from ..options.table import CdcSupplementalLoggingMode
from ..properties import TableProperties
from ..schema import META_COLUMNS, RECORD_KEY
from ..storage import FileIO


@dataclass(frozen=True)
class CdcLogging:
    """How a table logs changes (picklable: write tasks get it with their handle)."""

    mode: CdcSupplementalLoggingMode
    table_name: str

    @classmethod
    def of(cls, properties: TableProperties) -> CdcLogging | None:
        """The table's CDC logging, or None when `hoodie.table.cdc.enabled` is off (Apache
        Hudi's tables with it on get `.cdc` files from our writers too)."""
        if not properties.cdc_enabled:
            return None
        return cls(
            CdcSupplementalLoggingMode(properties.cdc_supplemental_logging_mode),
            properties.name,
        )


@dataclass(frozen=True)
class FileGroupChanges:
    """What one rewrite did to a file group's records, by key (record key column
    `_hoodie_record_key`, any other columns: the row)."""

    updated: pa.Array  # keys whose stored row was replaced
    deleted: pa.Array  # keys whose stored row was removed
    inserted: pa.Array  # keys the file group did not hold

    @classmethod
    def between(
        cls, before: pa.Table | None, after: pa.Table, changed: pa.Array
    ) -> FileGroupChanges:
        """The changes from the rows `before` to the rows `after`, where `changed` (per row of
        `after`) says which rows the write produced (the others were kept as stored)."""
        after_keys = after.column(RECORD_KEY).combine_chunks()
        new_keys = after_keys.filter(changed)
        if before is None or before.num_rows == 0:
            empty = pa.array([], pa.string())
            return cls(empty, empty, new_keys.cast(pa.string()))
        before_keys = before.column(RECORD_KEY).combine_chunks()
        stored = pc.is_in(new_keys, value_set=before_keys)
        gone = pc.invert(pc.is_in(before_keys, value_set=after_keys))
        return cls(
            new_keys.filter(stored).cast(pa.string()),
            before_keys.filter(gone).cast(pa.string()),
            new_keys.filter(pc.invert(stored)).cast(pa.string()),
        )

    @property
    def count(self) -> int:
        return len(self.updated) + len(self.deleted) + len(self.inserted)


def change_records(
    mode: CdcSupplementalLoggingMode,
    instant: str,
    image_schema: pa.Schema,
    changes: FileGroupChanges,
    before: pa.Table | None,
    after: pa.Table,
) -> pa.Table:
    """The CDC records of `changes` (updates, then deletes, then inserts, each by key) with
    the columns of `mode`'s schema; images are rows of `before`/`after` (found by record key)
    in `image_schema`'s columns."""
    keys = pa.concat_arrays(
        [_strings(changes.updated), _strings(changes.deleted), _strings(changes.inserted)]
    )
    ops = pa.array(
        [CdcOperation.UPDATE.value] * len(changes.updated)
        + [CdcOperation.DELETE.value] * len(changes.deleted)
        + [CdcOperation.INSERT.value] * len(changes.inserted),
        pa.string(),
    )
    columns: dict[str, pa.Array] = {OP: ops}
    for name in cdc_fields(mode)[1:]:
        if name == TS_MS:
            columns[name] = pa.array([instant] * len(keys), pa.string())
        elif name == cdc.RECORD_KEY:
            columns[name] = keys
        elif name == BEFORE:
            columns[name] = _images(keys, before, image_schema)
        elif name == AFTER:
            columns[name] = _images(keys, after, image_schema)
    return pa.table(columns)


def _strings(keys: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    return keys.cast(pa.string())


def _images(keys: pa.Array, rows: pa.Table | None, schema: pa.Schema) -> pa.StructArray:
    """Per key, its row of `rows` as a struct of `schema`'s columns; null where it has none."""
    fields = list(schema)
    if rows is None or rows.num_rows == 0:
        children = [pa.nulls(len(keys), f.type) for f in fields]
        return pa.StructArray.from_arrays(children, fields=fields,
                                          mask=pa.array([True] * len(keys)))  # fmt: skip
    stored_keys = rows.column(RECORD_KEY).combine_chunks().cast(pa.string())
    position = pc.index_in(keys, value_set=stored_keys)
    children = []
    for f in fields:
        if f.name in rows.column_names:
            column = rows.column(f.name).combine_chunks().cast(f.type)
            children.append(column.take(position))
        else:  # a column the older rows lack (schema evolution): null
            children.append(pa.nulls(len(keys), f.type))
    return pa.StructArray.from_arrays(children, fields=fields, mask=pc.is_null(position))


def image_schema(schema: pa.Schema) -> pa.Schema:
    """The images' columns: `schema` less the meta columns."""
    return pa.schema([f for f in schema if f.name not in META_COLUMNS])


def write_cdc_file(
    storage: FileIO,
    markers: WriteMarkers,
    logging: CdcLogging,
    partition_path: str,
    file_id: str,
    token: str,
    instant: str,
    records: pa.Table,
    data_schema: pa.Schema,
) -> tuple[str, int]:
    """Write the `.cdc` file of one rewrite; (its path relative to the base path, its size).

    Marked CREATE, as Apache Hudi 1.x marks the log files it creates: a rollback (ours or
    Apache Hudi's) deletes it."""
    name = cdc_log_file_name(file_id, instant, token)
    relative = posixpath.join(partition_path, name) if partition_path else name
    schema = cdc_schema(logging.mode, logging.table_name, image_schema(data_schema))
    data = cdc_data_block(records, instant, schema)
    markers.create(relative, IOType.CREATE)
    crash_point("task.cdc_file.marked")
    storage.write_bytes(relative, data)
    crash_point("task.cdc_file.written")
    return relative, len(data)

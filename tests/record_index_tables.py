"""Record index truths and synthetic record indexes, for the tests and bench/ of record index
lookups.

`live_keys(meta)`: every live key of a table's latest slices -> (partition, file id), read from
the data files themselves (the truth a record index must agree with).

`add_record_index(path, locations, file_groups)`: gives a table with a metadata table (one our
writer made) a `record_index` partition holding `locations`, written with the project's own
HFile and record codecs as Apache Hudi lays it out (base HFiles named at the metadata table's
latest completed instant, one per file group; table version 6: optionally a log file of
updates and deletes on top), and lists it in `hoodie.table.metadata.partitions`. The data table
need not hold those keys: a lookup reads the metadata table only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie import properties as props
from hoodie.hfile import write_hfile
from hoodie.logformat import BlockType, DeleteRecord, delete_block, hfile_data_block, read_log_file
from hoodie.meta_client import PROPERTIES_FILE, HoodieTableMetaClient
from hoodie.metadata_records import (
    MetadataPartitionType,
    RecordIndexRecord,
    encode_metadata_record,
    file_group_id,
    file_group_index,
    file_group_indexes,
    metadata_record_schema,
    partition_identifier,
)
from hoodie.table_metadata import METADATA_FOLDER, TableMetadata

KEY = "_hoodie_record_key"
RECORD_INDEX = MetadataPartitionType.RECORD_INDEX


def live_keys(meta: HoodieTableMetaClient) -> dict[str, tuple[str, str]]:
    """Every live key of the table's latest file slices -> (partition, file id): the base
    file's keys and the log blocks' of completed instants, less the keys deleted after."""
    view = meta.file_system_view()
    out: dict[str, tuple[str, str]] = {}
    for group in view.file_groups():
        latest = group.latest_slice
        assert latest is not None
        place = (group.partition_path, group.file_id)
        if latest.base_file is not None:
            table = pq.read_table(meta.storage.uri(latest.base_file.relative_path), columns=[KEY])
            out.update((key, place) for key in table.column(KEY).to_pylist())
        for log in latest.log_files:
            for block in read_log_file(meta.storage, log.relative_path, include_corrupt=False):
                if block.instant_time not in view.committed:
                    continue
                if block.block_type is BlockType.DELETE:
                    for gone in block.deleted_records():
                        out.pop(gone.record_key, None)
                elif block.is_data_block:
                    keys = block.records().column(KEY).to_pylist()
                    out.update((key, place) for key in keys)
    return out


def _entries(records: Iterable[RecordIndexRecord], version: int) -> list[tuple[bytes, bytes]]:
    rows = [(r.key.encode("utf-8"), encode_metadata_record(r, version)) for r in records]
    return sorted(rows)


def add_record_index(
    path: str | Path,
    locations: Mapping[str, tuple[str, str]],
    file_groups: int,
    *,
    block_size: int = 1 << 20,
    logged: Mapping[str, tuple[str, str]] | None = None,
    deleted: Iterable[str] = (),
) -> str:
    """See the module's docstring. `locations`: key -> (data partition, file id), in the base
    files; `logged` and `deleted`: a log file per touched file group on top (table version 6
    only), of new locations and of delete blocks; both at the metadata table's latest
    completed instant, which must be a completed data instant (it is, for tables our writer
    made). Returns that instant."""
    root = Path(path)
    meta = HoodieTableMetaClient.open(str(root))
    metadata = TableMetadata.open(meta)
    assert metadata is not None, "the table has no metadata table"
    instant = metadata.latest_instant
    assert instant is not None and instant in {i.timestamp for i in meta.timeline().completed}
    version = meta.properties.table_version
    timezone = metadata.data_timezone
    hbase_keys = version < 8
    schema = metadata_record_schema(version)
    folder = root / METADATA_FOLDER / RECORD_INDEX.partition_name
    folder.mkdir(parents=True, exist_ok=True)

    def by_group(places: Mapping[str, tuple[str, str]]) -> list[list[RecordIndexRecord]]:
        out: list[list[RecordIndexRecord]] = [[] for _ in range(file_groups)]
        keys = list(places)
        groups = file_group_indexes(pa.array(keys, pa.string()), file_groups) if keys else []
        templates: dict[tuple[str, str], RecordIndexRecord] = {}
        for key, group in zip(keys, groups):
            place = places[key]
            template = templates.get(place)
            if template is None:
                template = RecordIndexRecord.placing(
                    "", partition_identifier(place[0]), place[1], instant, timezone
                )
                templates[place] = template
            out[group].append(dataclasses.replace(template, key=key))
        return out

    placed, updated = by_group(locations), by_group(logged or {})
    gone = set(deleted)
    for group in range(file_groups):
        file_id = file_group_id(RECORD_INDEX.file_id_prefix, group)
        data = write_hfile(_entries(placed[group], version),
                           file_info={b"schema": schema.encode()}, block_size=block_size,
                           hbase_keys=hbase_keys)  # fmt: skip
        (folder / f"{file_id}_0-0-0_{instant}.hfile").write_bytes(data)
        updates = updated[group]
        removed = sorted(k for k in gone if file_group_index(k, file_groups) == group)
        if not updates and not removed:
            continue
        assert version < 8, "log files of the synthetic record index are table version 6's"
        blocks = b""
        if updates:
            blocks += hfile_data_block(_entries(updates, version), instant, schema,
                                       hbase_keys=hbase_keys)  # fmt: skip
        if removed:
            blocks += delete_block(
                [DeleteRecord(k, RECORD_INDEX.partition_name, None) for k in removed], instant
            )
        (folder / f".{file_id}_{instant}.log.1_0-0-0").write_bytes(blocks)
    properties = root / PROPERTIES_FILE
    stored = props.loads(properties.read_text())
    listed = {p for p in stored.get(props.METADATA_PARTITIONS, "").split(",") if p}
    stored[props.METADATA_PARTITIONS] = ",".join(sorted(listed | {RECORD_INDEX.partition_name}))
    properties.write_text(props.dumps(stored))
    return instant

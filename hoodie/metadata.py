"""Commit metadata: what a completed write instant holds.

Field names and shapes follow Apache Hudi's `HoodieCommitMetadata` / `HoodieWriteStat` so that
Hudi and hudi-rs read what we write, and we read theirs. Unknown fields are kept on read.
Table version 6 stores it as JSON; versions 8 and 9 as an Avro object container file of one
record whose field names are the JSON's keys, so one parser reads both.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import fastavro

SCHEMA_KEY = "schema"
AVRO_MAGIC = b"Obj\x01"

# Hudi's Avro schemas of commit metadata (`HoodieCommitMetadata.avsc`,
# `HoodieReplaceCommitMetadata.avsc`), field for field in Hudi's order, so the records Hudi 1.x
# readers resolve against their own schema carry every field they expect.
_STRING = {"type": "string", "avro.java.string": "String"}
_STAT_FIELDS: list[tuple[str, Any]] = [
    ("fileId", _STRING), ("path", _STRING), ("prevCommit", _STRING), ("numWrites", "long"),
    ("numDeletes", "long"), ("numUpdateWrites", "long"), ("totalWriteBytes", "long"),
    ("totalWriteErrors", "long"), ("partitionPath", _STRING), ("totalLogRecords", "long"),
    ("totalLogFiles", "long"), ("totalUpdatedRecordsCompacted", "long"), ("numInserts", "long"),
    ("totalLogBlocks", "long"), ("totalCorruptLogBlock", "long"),
    ("totalRollbackBlocks", "long"), ("fileSizeInBytes", "long"), ("logVersion", "int"),
    ("logOffset", "long"), ("baseFile", _STRING),
    ("logFiles", {"type": "array", "items": _STRING}),
    ("cdcStats", {"type": "map", "values": "long", "avro.java.string": "String"}),
    ("prevBaseFile", _STRING), ("minEventTime", "long"), ("maxEventTime", "long"),
    ("runtimeStats", {"type": "record", "name": "HoodieRuntimeStats", "fields": [
        {"name": n, "type": ["null", "long"], "default": None}
        for n in ("totalScanTime", "totalCreateTime", "totalUpsertTime")
    ]}),
    ("totalLogFilesCompacted", "long"), ("totalLogReadTimeMs", "long"),
    ("totalLogSizeCompacted", "long"), ("tempPath", _STRING), ("numUpdates", "long"),
]  # fmt: skip


def _commit_schema(name: str, replace: bool) -> dict[str, Any]:
    stat = {
        "type": "record",
        "name": "HoodieWriteStat",
        "fields": [{"name": n, "type": ["null", t], "default": None} for n, t in _STAT_FIELDS],
    }
    stats_map = {
        "type": "map",
        "values": {"type": "array", "items": stat},
        "avro.java.string": "String",
    }
    fields: list[dict[str, Any]] = [
        {"name": "partitionToWriteStats", "type": ["null", stats_map], "default": None},
        {"name": "compacted", "type": ["null", "boolean"], "default": None},
        {"name": "extraMetadata", "default": None, "type": [
            "null", {"type": "map", "values": _STRING, "avro.java.string": "String"}]},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", _STRING], "default": None},
    ]  # fmt: skip
    if replace:
        ids = {
            "type": "map",
            "values": {"type": "array", "items": _STRING},
            "avro.java.string": "String",
        }
        fields.append({"name": "partitionToReplaceFileIds", "type": ["null", ids], "default": None})
    return {
        "type": "record",
        "name": name,
        "namespace": "org.apache.hudi.avro.model",
        "fields": fields,
    }


# As JSON, for schemas that hold commit metadata (the v6 archive's HoodieArchivedMetaEntry).
COMMIT_SCHEMA_JSON = _commit_schema("HoodieCommitMetadata", replace=False)
COMMIT_SCHEMA = fastavro.parse_schema(COMMIT_SCHEMA_JSON)
REPLACE_COMMIT_SCHEMA = fastavro.parse_schema(
    _commit_schema("HoodieReplaceCommitMetadata", replace=True)
)
_STAT_NAMES = [n for n, _ in _STAT_FIELDS]


@dataclass
class WriteStat:
    """What one write handle did to one file group in one instant."""

    file_id: str
    partition_path: str
    path: str | None  # relative to the base path
    prev_commit: str = "null"
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    file_size_in_bytes: int = 0
    total_write_errors: int = 0
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    base_file: str | None = None  # merge-on-read: the base file a log file belongs to
    log_files: list[str] | None = None
    log_version: int | None = None
    log_offset: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # What the write task found for the metadata table's indexes, handed to the driver with
    # the stat and never written into the commit metadata (as Apache Hudi keeps its write
    # stats' column ranges out of the JSON): each indexed column's range
    # (`column_stats.ColumnRange.to_json`). Not a base file's bloom filter (hundreds of KB
    # each): the commit reads it from the footer (`transaction/metadata_indexes.py`).
    column_ranges: list[dict[str, Any]] | None = None
    # The record index's changes of the file (`transaction/record_index.hand_over_keys`): how
    # many keys (None: not recorded), and the keys themselves (those the file group gained,
    # those it lost), or the key file under the instant's temp folder holding them.
    index_keys: int | None = None
    located_keys: list[str] | None = None
    removed_keys: list[str] | None = None
    keys_file: str | None = None
    # The file is a log whose keys' fate the merge of its slice decides by ordering value: a
    # delete with one may lose to the stored version, an update to a delete logged before it.
    # The commit holds the handed-over keys to the merged slice (`record_index.written_rows`).
    held_to_slice: bool = False
    # The `.cdc` files the write made beside the file (path relative to the base path ->
    # size; `hoodie.cdc`): Apache Hudi's CDC query reads these instead of inferring changes.
    cdc_stats: dict[str, int] | None = None

    _JSON_NAMES = {
        "file_id": "fileId",
        "partition_path": "partitionPath",
        "path": "path",
        "prev_commit": "prevCommit",
        "num_writes": "numWrites",
        "num_deletes": "numDeletes",
        "num_update_writes": "numUpdateWrites",
        "num_inserts": "numInserts",
        "total_write_bytes": "totalWriteBytes",
        "file_size_in_bytes": "fileSizeInBytes",
        "total_write_errors": "totalWriteErrors",
        "total_log_records": "totalLogRecords",
        "total_log_files_compacted": "totalLogFilesCompacted",
        "total_log_size_compacted": "totalLogSizeCompacted",
        "total_updated_records_compacted": "totalUpdatedRecordsCompacted",
        "total_log_blocks": "totalLogBlocks",
        "total_corrupt_log_block": "totalCorruptLogBlock",
        "total_rollback_blocks": "totalRollbackBlocks",
        "base_file": "baseFile",
        "log_files": "logFiles",
        "log_version": "logVersion",
        "log_offset": "logOffset",
        "cdc_stats": "cdcStats",
    }

    def written_files(self) -> list[str]:
        """The files the stat names (relative paths): its data file and its `.cdc` files."""
        return ([self.path] if self.path else []) + sorted(self.cdc_stats or {})

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fileId": self.file_id,
            "path": self.path,
            "cdcStats": self.cdc_stats or None,
            "prevCommit": self.prev_commit,
        }
        for attr, name in self._JSON_NAMES.items():
            if name in out:
                continue
            value = getattr(self, attr)
            if value is None and attr in {"base_file", "log_files", "log_version", "log_offset"}:
                continue
            out[name] = value
        out.setdefault("tempPath", None)
        out.setdefault("minEventTime", None)
        out.setdefault("maxEventTime", None)
        out.setdefault("runtimeStats", None)
        out.update(self.extra)
        return out

    @classmethod
    def from_json_dict(cls, data: dict[str, Any], partition_path: str) -> WriteStat:
        kwargs: dict[str, Any] = {}
        by_json = _STAT_ATTRIBUTES
        extra = {}
        for key, value in data.items():
            if key in by_json:
                kwargs[by_json[key]] = value
            else:
                extra[key] = value
        kwargs.setdefault("file_id", "")
        kwargs["partition_path"] = kwargs.get("partition_path") or partition_path
        kwargs.setdefault("path", None)
        kwargs["prev_commit"] = str(kwargs.get("prev_commit") or "null")
        return cls(extra=extra, **kwargs)


# A write stat's JSON names -> its attributes (`WriteStat.from_json_dict`, once per stat).
_STAT_ATTRIBUTES: dict[str, str] = {v: k for k, v in WriteStat._JSON_NAMES.items()}


@dataclass
class CommitMetadata:
    """`HoodieCommitMetadata` (also the body of replace commits, with the replaced file ids)."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    operation_type: str = "UPSERT"
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    partition_to_replace_file_ids: dict[str, list[str]] | None = None

    @property
    def schema(self) -> str | None:
        return self.extra_metadata.get(SCHEMA_KEY) or None

    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def add(self, stat: WriteStat) -> None:
        self.partition_to_write_stats.setdefault(stat.partition_path, []).append(stat)

    def total(self, attr: str) -> int:
        return sum(getattr(s, attr) or 0 for s in self.write_stats())

    def to_json(self) -> str:
        body: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_json_dict() for s in stats]
                for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            body["partitionToReplaceFileIds"] = self.partition_to_replace_file_ids
        return json.dumps(body, indent=2)

    def to_avro(self) -> bytes:
        """Table version 8's form: one record in an Avro object container file (Hudi writes
        no codec), a replace commit's with its replaced file ids."""
        replace = self.partition_to_replace_file_ids is not None
        schema = REPLACE_COMMIT_SCHEMA if replace else COMMIT_SCHEMA
        out = io.BytesIO()
        fastavro.writer(out, schema, [self.to_avro_record()])
        return out.getvalue()

    def to_avro_record(self) -> dict[str, Any]:
        """The Avro record of Hudi's `HoodieCommitMetadata` (or `HoodieReplaceCommitMetadata`
        with replaced file ids), as fastavro writes it."""
        record: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [_avro_stat(s.to_json_dict()) for s in stats]
                for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "version": None,
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            record["partitionToReplaceFileIds"] = self.partition_to_replace_file_ids
        return record

    @classmethod
    def parse(cls, content: bytes) -> CommitMetadata:
        """A commit file's content, JSON (table version 6) or Avro (versions 8 and 9)."""
        if content.startswith(AVRO_MAGIC):
            record = next(iter(fastavro.reader(io.BytesIO(content))), None)
            return cls._from_dict(record if isinstance(record, dict) else {})
        return cls.from_json(content)

    @classmethod
    def from_json(cls, text: str | bytes) -> CommitMetadata:
        if not text or not text.strip():
            return cls()
        return cls._from_dict(json.loads(text))

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> CommitMetadata:
        stats = {
            partition: [WriteStat.from_json_dict(s, partition) for s in (entries or [])]
            for partition, entries in (data.get("partitionToWriteStats") or {}).items()
        }
        return cls(
            partition_to_write_stats=stats,
            operation_type=data.get("operationType") or "UNKNOWN",
            compacted=bool(data.get("compacted")),
            extra_metadata=dict(data.get("extraMetadata") or {}),
            partition_to_replace_file_ids=data.get("partitionToReplaceFileIds"),
        )


def _avro_stat(stat: dict[str, Any]) -> dict[str, Any]:
    """A write stat's JSON fields as the Avro record has them (unknown ones dropped, as Hudi's
    conversion drops them; `"null"` previous commits stay the string Hudi writes)."""
    record = {name: stat.get(name) for name in _STAT_NAMES}
    if not isinstance(record["runtimeStats"], dict):
        record["runtimeStats"] = None
    if not isinstance(record["cdcStats"], dict):
        record["cdcStats"] = None
    return record


def stat_as_dict(stat: WriteStat) -> dict[str, Any]:
    """A plain dict for moving stats between Spark tasks and the driver."""
    return asdict(stat)

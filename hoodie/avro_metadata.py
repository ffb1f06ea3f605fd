"""The Avro timeline metadata of rollback, cleaning, savepoints and restore, as Hudi stores it.

Write commits hold JSON (`metadata.py`), but Hudi serializes the plans and results of these
actions with `TimelineMetadataUtils.serializeAvroMetadata`: an Avro data file (object container,
null codec) holding one record, whose header carries the writer's schema. Which file holds what:

- `<t>.rollback.requested`: `HoodieRollbackPlan`; `<t>.rollback.inflight` is empty;
  `<t>.rollback`: `HoodieRollbackMetadata`.
- `<t>.clean.requested` and `<t>.clean.inflight`: the same `HoodieCleanerPlan`;
  `<t>.clean`: `HoodieCleanMetadata`.
- `<t>.savepoint.inflight` is empty; `<t>.savepoint`: `HoodieSavepointMetadata`.
- `<t>.restore.requested`: `HoodieRestorePlan`; `<t>.restore.inflight` is empty;
  `<t>.restore`: `HoodieRestoreMetadata`.

A reader resolves the header's schema against its own by record and field name, skipping fields
it lacks and taking its defaults for fields the file lacks. So the schemas below carry Hudi's
record names (namespace `org.apache.hudi.avro.model`), field names, types and defaults exactly, in
the field set of Hudi 0.14/0.15 (table version 6), and we write the `version` numbers Hudi 0.14
writes. Decoding reads each file with its own schema and maps fields by name, using Hudi's
defaults for absent ones, so files of older and newer Hudi releases decode too.

File names and paths are kept exactly as Hudi wrote them: plans and rollback results hold
absolute paths (on local storage Hudi's rollback log paths carry a `file:` scheme, its deleted
files do not), savepoints and clean results hold file names.
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import fastavro

from .exceptions import HoodieError

NAMESPACE = "org.apache.hudi.avro.model"

# The `version` Hudi 0.14 writes into each record.
ROLLBACK_PLAN_VERSION = 1
ROLLBACK_METADATA_VERSION = 1
CLEANER_PLAN_VERSION = 2  # file paths in `filePathsToBeDeletedPerPartition`
CLEAN_METADATA_VERSION = 2
SAVEPOINT_METADATA_VERSION = 1
RESTORE_PLAN_VERSION = 2  # with `savepointToRestoreTimestamp`
RESTORE_METADATA_VERSION = 1


# A schema as JSON (a record's, so a dict), and a record as fastavro reads and writes it.
AvroSchema = dict[str, Any]
AvroRecord = dict[str, Any]


def full_name(record: str) -> str:
    return f"{NAMESPACE}.{record}"


# Schema building blocks. A named record is spelled out where a schema first uses it and referred
# to by full name afterwards, as Avro (and fastavro) require.


def _record(name: str, *fields: AvroSchema) -> AvroSchema:
    return {"type": "record", "name": name, "namespace": NAMESPACE, "fields": list(fields)}


def _required(name: str, avro: Any) -> AvroSchema:
    return {"name": name, "type": avro}


def _defaulted(name: str, avro: Any, default: Any) -> AvroSchema:
    return {"name": name, "type": avro, "default": default}


def _optional(name: str, avro: Any) -> AvroSchema:
    return _defaulted(name, ["null", avro], None)


def _version(default: int) -> AvroSchema:
    return _defaulted("version", ["int", "null"], default)


def _array(items: Any) -> AvroSchema:
    return {"type": "array", "items": items}


def _map(values: Any) -> AvroSchema:
    return {"type": "map", "values": values}


def _parse(schema: AvroSchema) -> AvroSchema:
    parsed = fastavro.parse_schema(schema)
    assert isinstance(parsed, dict)  # a record's schema parses to a dict
    return parsed


_STRINGS = _array("string")

_INSTANT_INFO = _record(
    "HoodieInstantInfo", _required("commitTime", "string"), _required("action", "string")
)

ROLLBACK_PLAN_SCHEMA = _parse(
    _record(
        "HoodieRollbackPlan",
        _optional("instantToRollback", _INSTANT_INFO),
        _optional(
            "RollbackRequests",
            _array(
                _record(
                    "HoodieRollbackRequest",
                    _required("partitionPath", "string"),
                    _optional("fileId", "string"),
                    _optional("latestBaseInstant", "string"),
                    _defaulted("filesToBeDeleted", _STRINGS, []),
                    _optional("logBlocksToBeDeleted", _map("long")),
                )
            ),
        ),
        _version(1),
    )
)

_ROLLBACK_METADATA = _record(
    "HoodieRollbackMetadata",
    _required("startRollbackTime", "string"),
    _required("timeTakenInMillis", "long"),
    _required("totalFilesDeleted", "int"),
    _required("commitsRollback", _STRINGS),
    _required(
        "partitionMetadata",
        _map(
            _record(
                "HoodieRollbackPartitionMetadata",
                _required("partitionPath", "string"),
                _required("successDeleteFiles", _STRINGS),
                _required("failedDeleteFiles", _STRINGS),
                _optional("rollbackLogFiles", _map("long")),
                _optional("logFilesFromFailedCommit", _map("long")),
            )
        ),
    ),
    _version(1),
    _defaulted("instantsRollback", _array(_INSTANT_INFO), []),
)
ROLLBACK_METADATA_SCHEMA = _parse(_ROLLBACK_METADATA)

CLEANER_PLAN_SCHEMA = _parse(
    _record(
        "HoodieCleanerPlan",
        _optional(
            "earliestInstantToRetain",
            _record(
                "HoodieActionInstant",
                _required("timestamp", "string"),
                _required("action", "string"),
                _required("state", "string"),
            ),
        ),
        _defaulted("lastCompletedCommitTimestamp", "string", ""),
        _required("policy", "string"),
        _optional("filesToBeDeletedPerPartition", _map(_STRINGS)),
        _version(1),
        _optional(
            "filePathsToBeDeletedPerPartition",
            _map(
                _array(
                    _record(
                        "HoodieCleanFileInfo",
                        _optional("filePath", "string"),
                        _optional("isBootstrapBaseFile", "boolean"),
                    )
                )
            ),
        ),
        _optional("partitionsToBeDeleted", _STRINGS),
        _optional("extraMetadata", _map("string")),
    )
)

CLEAN_METADATA_SCHEMA = _parse(
    _record(
        "HoodieCleanMetadata",
        _required("startCleanTime", "string"),
        _required("timeTakenInMillis", "long"),
        _required("totalFilesDeleted", "int"),
        _required("earliestCommitToRetain", "string"),
        _defaulted("lastCompletedCommitTimestamp", "string", ""),
        _required(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieCleanPartitionMetadata",
                    _required("partitionPath", "string"),
                    _required("policy", "string"),
                    _required("deletePathPatterns", _STRINGS),
                    _required("successDeleteFiles", _STRINGS),
                    _required("failedDeleteFiles", _STRINGS),
                    _optional("isPartitionDeleted", "boolean"),
                )
            ),
        ),
        _version(1),
        _optional("bootstrapPartitionMetadata", _map(full_name("HoodieCleanPartitionMetadata"))),
        _optional("extraMetadata", _map("string")),
    )
)

SAVEPOINT_METADATA_SCHEMA = _parse(
    _record(
        "HoodieSavepointMetadata",
        _required("savepointedBy", "string"),
        _required("savepointedAt", "long"),
        _required("comments", "string"),
        _required(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieSavepointPartitionMetadata",
                    _required("partitionPath", "string"),
                    _required("savepointDataFile", _STRINGS),
                )
            ),
        ),
        _version(1),
    )
)

RESTORE_PLAN_SCHEMA = _parse(
    _record(
        "HoodieRestorePlan",
        _defaulted("instantsToRollback", _array(_INSTANT_INFO), []),
        _version(2),
        # Hudi declares this union string-first with a null default; kept as declared.
        _defaulted("savepointToRestoreTimestamp", ["string", "null"], None),
    )
)

RESTORE_METADATA_SCHEMA = _parse(
    _record(
        "HoodieRestoreMetadata",
        _required("startRestoreTime", "string"),
        _required("timeTakenInMillis", "long"),
        _required("instantsToRollback", _STRINGS),
        # The rollback metadata defines HoodieInstantInfo, so restoreInstantInfo names it.
        _required("hoodieRestoreMetadata", _map(_array(["null", _ROLLBACK_METADATA]))),
        _version(1),
        _defaulted("restoreInstantInfo", _array(full_name("HoodieInstantInfo")), []),
    )
)


def _or_default(record: AvroRecord, name: str, default: Any) -> Any:
    """A field's value, or Hudi's default where the writer's schema lacks it or holds null."""
    value = record.get(name)
    return default if value is None else value


_File = TypeVar("_File", bound="_AvroFile")


class _AvroFile(ABC):
    """A record that Hudi stores alone in an Avro data file on the timeline."""

    SCHEMA: ClassVar[AvroSchema]

    def to_avro(self) -> bytes:
        out = io.BytesIO()
        fastavro.writer(out, self.SCHEMA, [self._to_record()])
        return out.getvalue()

    @classmethod
    def from_avro(cls: type[_File], data: bytes) -> _File:
        expected = cls.SCHEMA["name"]
        if not data:
            raise HoodieError(f"expected an Avro data file holding a {expected}, got empty content")
        reader = fastavro.reader(io.BytesIO(data))
        schema = reader.writer_schema
        # a file of a primitive type (its schema a string, or a union's list) holds no record
        held = schema.get("name") if isinstance(schema, dict) else schema
        if held != expected:
            raise HoodieError(f"expected a {expected} record, the file holds {held}")
        records = list(reader)
        if len(records) != 1:
            raise HoodieError(f"a {expected} file holds one record, found {len(records)}")
        record = records[0]
        assert isinstance(record, dict)  # the writer's schema is the record's
        return cls._from_record(record)

    @abstractmethod
    def _to_record(self) -> AvroRecord:
        """The record as fastavro writes it: Hudi's field names, Avro-typed values."""

    @classmethod
    @abstractmethod
    def _from_record(cls: type[_File], record: AvroRecord) -> _File:
        """Build from a record decoded with whatever schema the file was written with."""


@dataclass(frozen=True)
class InstantInfo:
    """An instant by time and action (`HoodieInstantInfo`): what a rollback or restore undoes."""

    commit_time: str
    action: str

    def _to_record(self) -> AvroRecord:
        return {"commitTime": self.commit_time, "action": self.action}

    @classmethod
    def _from_record(cls, record: AvroRecord) -> InstantInfo:
        return cls(record["commitTime"], record["action"])


@dataclass(frozen=True)
class ActionInstant:
    """An instant with its state (`HoodieActionInstant`); `state` is Hudi's name, `COMPLETED`."""

    timestamp: str
    action: str
    state: str

    def _to_record(self) -> AvroRecord:
        return {"timestamp": self.timestamp, "action": self.action, "state": self.state}

    @classmethod
    def _from_record(cls, record: AvroRecord) -> ActionInstant:
        return cls(record["timestamp"], record["action"], record["state"])


# --- rollback ---------------------------------------------------------------------------------


@dataclass
class RollbackRequest:
    """What a rollback undoes in one file group: files to delete, or log files to roll back.

    Hudi plans files the failed instant created as `files_to_be_deleted` (with `file_id` and
    `latest_base_instant` left empty), and log files it appended to as `log_blocks_to_be_deleted`
    (path -> size), which are rolled back by appending a rollback command block. Hudi's executor
    takes a request as one or the other: with files to delete it ignores the log blocks, and for
    log blocks it opens the log of `file_id` over `latest_base_instant`, so those must be set and
    each file group needs a request of its own.
    """

    partition_path: str
    file_id: str | None = None
    latest_base_instant: str | None = None
    files_to_be_deleted: list[str] = field(default_factory=list)
    log_blocks_to_be_deleted: dict[str, int] = field(default_factory=dict)

    def _to_record(self) -> AvroRecord:
        return {
            "partitionPath": self.partition_path,
            "fileId": self.file_id,
            "latestBaseInstant": self.latest_base_instant,
            "filesToBeDeleted": list(self.files_to_be_deleted),
            "logBlocksToBeDeleted": dict(self.log_blocks_to_be_deleted),
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> RollbackRequest:
        return cls(
            partition_path=record["partitionPath"],
            file_id=record.get("fileId"),
            latest_base_instant=record.get("latestBaseInstant"),
            files_to_be_deleted=list(_or_default(record, "filesToBeDeleted", [])),
            log_blocks_to_be_deleted=dict(_or_default(record, "logBlocksToBeDeleted", {})),
        )


@dataclass
class RollbackPlan(_AvroFile):
    """`<t>.rollback.requested`: the instant to roll back and what to undo for it."""

    SCHEMA = ROLLBACK_PLAN_SCHEMA

    instant_to_rollback: InstantInfo | None
    rollback_requests: list[RollbackRequest] = field(default_factory=list)
    version: int = ROLLBACK_PLAN_VERSION

    def _to_record(self) -> AvroRecord:
        return {
            "instantToRollback": self.instant_to_rollback._to_record()
            if self.instant_to_rollback
            else None,
            "RollbackRequests": [request._to_record() for request in self.rollback_requests],
            "version": self.version,
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> RollbackPlan:
        instant = record.get("instantToRollback")
        return cls(
            instant_to_rollback=InstantInfo._from_record(instant) if instant else None,
            rollback_requests=[
                RollbackRequest._from_record(r) for r in _or_default(record, "RollbackRequests", [])
            ],
            version=_or_default(record, "version", 1),
        )


@dataclass
class RollbackPartitionMetadata:
    """What a rollback did in one partition.

    `rollback_log_files` are the log files a rollback command block was appended to, and
    `log_files_from_failed_commit` the log files the rolled-back instant wrote; both map path to
    size in bytes.
    """

    partition_path: str
    success_delete_files: list[str] = field(default_factory=list)
    failed_delete_files: list[str] = field(default_factory=list)
    rollback_log_files: dict[str, int] = field(default_factory=dict)
    log_files_from_failed_commit: dict[str, int] = field(default_factory=dict)

    def _to_record(self) -> AvroRecord:
        return {
            "partitionPath": self.partition_path,
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "rollbackLogFiles": dict(self.rollback_log_files),
            "logFilesFromFailedCommit": dict(self.log_files_from_failed_commit),
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> RollbackPartitionMetadata:
        return cls(
            partition_path=record["partitionPath"],
            success_delete_files=list(record["successDeleteFiles"]),
            failed_delete_files=list(record["failedDeleteFiles"]),
            rollback_log_files=dict(_or_default(record, "rollbackLogFiles", {})),
            log_files_from_failed_commit=dict(_or_default(record, "logFilesFromFailedCommit", {})),
        )


@dataclass
class RollbackMetadata(_AvroFile):
    """`<t>.rollback`: what a completed rollback did, per partition (also nested in restores)."""

    SCHEMA = ROLLBACK_METADATA_SCHEMA

    start_rollback_time: str
    time_taken_in_millis: int
    total_files_deleted: int
    commits_rolled_back: list[str]
    partition_metadata: dict[str, RollbackPartitionMetadata]
    version: int = ROLLBACK_METADATA_VERSION
    instants_rollback: list[InstantInfo] = field(default_factory=list)

    def _to_record(self) -> AvroRecord:
        return {
            "startRollbackTime": self.start_rollback_time,
            "timeTakenInMillis": self.time_taken_in_millis,
            "totalFilesDeleted": self.total_files_deleted,
            "commitsRollback": list(self.commits_rolled_back),
            "partitionMetadata": {p: m._to_record() for p, m in self.partition_metadata.items()},
            "version": self.version,
            "instantsRollback": [instant._to_record() for instant in self.instants_rollback],
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> RollbackMetadata:
        return cls(
            start_rollback_time=record["startRollbackTime"],
            time_taken_in_millis=record["timeTakenInMillis"],
            total_files_deleted=record["totalFilesDeleted"],
            commits_rolled_back=list(record["commitsRollback"]),
            partition_metadata={
                p: RollbackPartitionMetadata._from_record(m)
                for p, m in record["partitionMetadata"].items()
            },
            version=_or_default(record, "version", 1),
            instants_rollback=[
                InstantInfo._from_record(i) for i in _or_default(record, "instantsRollback", [])
            ],
        )


# --- cleaning ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanFileInfo:
    """One file a clean deletes, by absolute path; bootstrap base files live outside the table."""

    file_path: str
    is_bootstrap_base_file: bool = False

    def _to_record(self) -> AvroRecord:
        return {"filePath": self.file_path, "isBootstrapBaseFile": self.is_bootstrap_base_file}

    @classmethod
    def _from_record(cls, record: AvroRecord) -> CleanFileInfo:
        return cls(record["filePath"], bool(record.get("isBootstrapBaseFile")))


@dataclass
class CleanerPlan(_AvroFile):
    """`<t>.clean.requested` (and `.clean.inflight`): the files and partitions a clean deletes.

    Version 2 plans list files by absolute path in `file_paths_to_be_deleted_per_partition`.
    Version 1 plans, from old Hudi releases, used `files_to_be_deleted_per_partition` (file names
    per partition), which Hudi still writes as an empty map; it is kept so that they decode whole.
    """

    SCHEMA = CLEANER_PLAN_SCHEMA

    earliest_instant_to_retain: ActionInstant | None
    last_completed_commit_timestamp: str
    policy: str
    file_paths_to_be_deleted_per_partition: dict[str, list[CleanFileInfo]]
    version: int = CLEANER_PLAN_VERSION
    partitions_to_be_deleted: list[str] = field(default_factory=list)
    extra_metadata: dict[str, str] = field(default_factory=dict)
    files_to_be_deleted_per_partition: dict[str, list[str]] = field(default_factory=dict)

    def _to_record(self) -> AvroRecord:
        earliest = self.earliest_instant_to_retain
        return {
            "earliestInstantToRetain": earliest._to_record() if earliest else None,
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {
                p: list(names) for p, names in self.files_to_be_deleted_per_partition.items()
            },
            "version": self.version,
            "filePathsToBeDeletedPerPartition": {
                p: [info._to_record() for info in infos]
                for p, infos in self.file_paths_to_be_deleted_per_partition.items()
            },
            "partitionsToBeDeleted": list(self.partitions_to_be_deleted),
            "extraMetadata": dict(self.extra_metadata),
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> CleanerPlan:
        earliest = record.get("earliestInstantToRetain")
        return cls(
            earliest_instant_to_retain=ActionInstant._from_record(earliest) if earliest else None,
            last_completed_commit_timestamp=_or_default(record, "lastCompletedCommitTimestamp", ""),
            policy=record["policy"],
            file_paths_to_be_deleted_per_partition={
                p: [CleanFileInfo._from_record(info) for info in infos]
                for p, infos in _or_default(record, "filePathsToBeDeletedPerPartition", {}).items()
            },
            version=_or_default(record, "version", 1),
            partitions_to_be_deleted=list(_or_default(record, "partitionsToBeDeleted", [])),
            extra_metadata=dict(_or_default(record, "extraMetadata", {})),
            files_to_be_deleted_per_partition={
                p: list(names)
                for p, names in _or_default(record, "filesToBeDeletedPerPartition", {}).items()
            },
        )


@dataclass
class CleanPartitionMetadata:
    """What a clean did in one partition (`HoodieCleanPartitionMetadata`)."""

    partition_path: str
    policy: str
    delete_path_patterns: list[str] = field(default_factory=list)
    success_delete_files: list[str] = field(default_factory=list)
    failed_delete_files: list[str] = field(default_factory=list)
    is_partition_deleted: bool = False

    def _to_record(self) -> AvroRecord:
        return {
            "partitionPath": self.partition_path,
            "policy": self.policy,
            "deletePathPatterns": list(self.delete_path_patterns),
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "isPartitionDeleted": self.is_partition_deleted,
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> CleanPartitionMetadata:
        return cls(
            partition_path=record["partitionPath"],
            policy=record["policy"],
            delete_path_patterns=list(record["deletePathPatterns"]),
            success_delete_files=list(record["successDeleteFiles"]),
            failed_delete_files=list(record["failedDeleteFiles"]),
            is_partition_deleted=bool(record.get("isPartitionDeleted")),
        )


def _clean_partitions(value: dict[str, AvroRecord] | None) -> dict[str, CleanPartitionMetadata]:
    return {p: CleanPartitionMetadata._from_record(m) for p, m in (value or {}).items()}


@dataclass
class CleanMetadata(_AvroFile):
    """`<t>.clean`: what a completed clean deleted, per partition.

    Hudi's incremental cleaning starts its next plan from `earliest_commit_to_retain` here.
    """

    SCHEMA = CLEAN_METADATA_SCHEMA

    start_clean_time: str
    time_taken_in_millis: int
    total_files_deleted: int
    earliest_commit_to_retain: str
    last_completed_commit_timestamp: str
    partition_metadata: dict[str, CleanPartitionMetadata]
    version: int = CLEAN_METADATA_VERSION
    bootstrap_partition_metadata: dict[str, CleanPartitionMetadata] = field(default_factory=dict)
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def _to_record(self) -> AvroRecord:
        return {
            "startCleanTime": self.start_clean_time,
            "timeTakenInMillis": self.time_taken_in_millis,
            "totalFilesDeleted": self.total_files_deleted,
            "earliestCommitToRetain": self.earliest_commit_to_retain,
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "partitionMetadata": {p: m._to_record() for p, m in self.partition_metadata.items()},
            "version": self.version,
            "bootstrapPartitionMetadata": {
                p: m._to_record() for p, m in self.bootstrap_partition_metadata.items()
            },
            "extraMetadata": dict(self.extra_metadata),
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> CleanMetadata:
        return cls(
            start_clean_time=record["startCleanTime"],
            time_taken_in_millis=record["timeTakenInMillis"],
            total_files_deleted=record["totalFilesDeleted"],
            earliest_commit_to_retain=record["earliestCommitToRetain"],
            last_completed_commit_timestamp=_or_default(record, "lastCompletedCommitTimestamp", ""),
            partition_metadata=_clean_partitions(record["partitionMetadata"]),
            version=_or_default(record, "version", 1),
            bootstrap_partition_metadata=_clean_partitions(
                record.get("bootstrapPartitionMetadata")
            ),
            extra_metadata=dict(_or_default(record, "extraMetadata", {})),
        )


# --- savepoints -------------------------------------------------------------------------------


@dataclass
class SavepointPartitionMetadata:
    """The files of one partition a savepoint keeps from cleaning, by file name."""

    partition_path: str
    savepoint_data_file: list[str] = field(default_factory=list)

    def _to_record(self) -> AvroRecord:
        return {
            "partitionPath": self.partition_path,
            "savepointDataFile": list(self.savepoint_data_file),
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> SavepointPartitionMetadata:
        return cls(record["partitionPath"], list(record["savepointDataFile"]))


@dataclass
class SavepointMetadata(_AvroFile):
    """`<t>.savepoint`: who saved the table as of instant `t`, when, and which files that keeps."""

    SCHEMA = SAVEPOINT_METADATA_SCHEMA

    savepointed_by: str
    savepointed_at: int  # epoch milliseconds
    comments: str
    partition_metadata: dict[str, SavepointPartitionMetadata]
    version: int = SAVEPOINT_METADATA_VERSION

    def _to_record(self) -> AvroRecord:
        return {
            "savepointedBy": self.savepointed_by,
            "savepointedAt": self.savepointed_at,
            "comments": self.comments,
            "partitionMetadata": {p: m._to_record() for p, m in self.partition_metadata.items()},
            "version": self.version,
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> SavepointMetadata:
        return cls(
            savepointed_by=record["savepointedBy"],
            savepointed_at=record["savepointedAt"],
            comments=record["comments"],
            partition_metadata={
                p: SavepointPartitionMetadata._from_record(m)
                for p, m in record["partitionMetadata"].items()
            },
            version=_or_default(record, "version", 1),
        )


# --- restore ----------------------------------------------------------------------------------


@dataclass
class RestorePlan(_AvroFile):
    """`<t>.restore.requested`: the instants a restore rolls back, in the order it does so."""

    SCHEMA = RESTORE_PLAN_SCHEMA

    instants_to_rollback: list[InstantInfo]
    version: int = RESTORE_PLAN_VERSION
    savepoint_to_restore_timestamp: str | None = None

    def _to_record(self) -> AvroRecord:
        return {
            "instantsToRollback": [instant._to_record() for instant in self.instants_to_rollback],
            "version": self.version,
            "savepointToRestoreTimestamp": self.savepoint_to_restore_timestamp,
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> RestorePlan:
        return cls(
            instants_to_rollback=[
                InstantInfo._from_record(i) for i in _or_default(record, "instantsToRollback", [])
            ],
            version=_or_default(record, "version", 2),
            savepoint_to_restore_timestamp=record.get("savepointToRestoreTimestamp"),
        )


@dataclass
class RestoreMetadata(_AvroFile):
    """`<t>.restore`: the rollbacks a completed restore did, keyed by rolled-back instant time.

    A restore's rollbacks leave no `.rollback` files of their own; their metadata lives here.
    """

    SCHEMA = RESTORE_METADATA_SCHEMA

    start_restore_time: str
    time_taken_in_millis: int
    instants_to_rollback: list[str]
    hoodie_restore_metadata: dict[str, list[RollbackMetadata]]
    version: int = RESTORE_METADATA_VERSION
    restore_instant_info: list[InstantInfo] = field(default_factory=list)

    def _to_record(self) -> AvroRecord:
        return {
            "startRestoreTime": self.start_restore_time,
            "timeTakenInMillis": self.time_taken_in_millis,
            "instantsToRollback": list(self.instants_to_rollback),
            "hoodieRestoreMetadata": {
                instant: [rollback._to_record() for rollback in rollbacks]
                for instant, rollbacks in self.hoodie_restore_metadata.items()
            },
            "version": self.version,
            "restoreInstantInfo": [instant._to_record() for instant in self.restore_instant_info],
        }

    @classmethod
    def _from_record(cls, record: AvroRecord) -> RestoreMetadata:
        return cls(
            start_restore_time=record["startRestoreTime"],
            time_taken_in_millis=record["timeTakenInMillis"],
            instants_to_rollback=list(record["instantsToRollback"]),
            # The schema allows null entries; Hudi writes none and they carry nothing.
            hoodie_restore_metadata={
                instant: [RollbackMetadata._from_record(r) for r in rollbacks if r is not None]
                for instant, rollbacks in record["hoodieRestoreMetadata"].items()
            },
            version=_or_default(record, "version", 1),
            restore_instant_info=[
                InstantInfo._from_record(i) for i in _or_default(record, "restoreInstantInfo", [])
            ],
        )

"""The compaction plan: which file slices a compaction folds, as Hudi stores it.

`<instant>.compaction.requested` holds an Avro data file with one `HoodieCompactionPlan`
record (Hudi's `TimelineMetadataUtils.serializeCompactionPlan`). We write plan version 2, in
which the base and log files are named by file name within their partition. Fields Hudi added
later all have defaults, so Hudi reads our plans and we read its plans of any version.
"""

from __future__ import annotations

import io
import posixpath
from dataclasses import dataclass, field
from typing import Any

import fastavro

from .exceptions import HoodieError, malformed
from .partition_paths import check_data_file
from .storage import FileIO
from .timeline import Action, Instant, State, Timeline, TimelineLayout

PLAN_VERSION = 2
_NAMESPACE = "org.apache.hudi.avro.model"


def _nullable(avro: Any) -> list[Any]:
    return ["null", avro]


PLAN_SCHEMA = fastavro.parse_schema(
    {
        "type": "record",
        "name": "HoodieCompactionPlan",
        "namespace": _NAMESPACE,
        "fields": [
            {
                "name": "operations",
                "type": _nullable(
                    {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": "HoodieCompactionOperation",
                            "fields": [
                                {"name": "baseInstantTime", "type": _nullable("string")},
                                {
                                    "name": "deltaFilePaths",
                                    "type": _nullable({"type": "array", "items": "string"}),
                                    "default": None,
                                },
                                {
                                    "name": "dataFilePath",
                                    "type": _nullable("string"),
                                    "default": None,
                                },  # fmt: skip
                                {"name": "fileId", "type": _nullable("string")},
                                {
                                    "name": "partitionPath",
                                    "type": _nullable("string"),
                                    "default": None,
                                },  # fmt: skip
                                {
                                    "name": "metrics",
                                    "type": _nullable({"type": "map", "values": "double"}),
                                    "default": None,
                                },
                                {
                                    "name": "bootstrapFilePath",
                                    "type": _nullable("string"),
                                    "default": None,
                                },  # fmt: skip
                            ],
                        },
                    }
                ),
                "default": None,
            },
            {
                "name": "extraMetadata",
                "type": _nullable({"type": "map", "values": "string"}),
                "default": None,
            },
            {"name": "version", "type": ["int", "null"], "default": 1},
        ],
    }
)


@dataclass(frozen=True)
class CompactionOperation:
    """One file slice to compact: its base file (may be absent) and log files, by name."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict, compare=False)

    def relative(self, name: str) -> str:
        return posixpath.join(self.partition_path, name) if self.partition_path else name


@dataclass
class CompactionPlan:
    operations: list[CompactionOperation]
    extra_metadata: dict[str, str] = field(default_factory=dict)
    version: int = PLAN_VERSION

    def file_groups(self) -> set[tuple[str, str]]:
        return {(op.partition_path, op.file_id) for op in self.operations}

    def to_avro(self) -> bytes:
        record = {
            "operations": [
                {
                    "baseInstantTime": op.base_instant,
                    "deltaFilePaths": list(op.log_files),
                    "dataFilePath": op.base_file,
                    "fileId": op.file_id,
                    "partitionPath": op.partition_path,
                    "metrics": dict(op.metrics),
                    "bootstrapFilePath": None,
                }
                for op in self.operations
            ],
            "extraMetadata": dict(self.extra_metadata),
            "version": self.version,
        }
        out = io.BytesIO()
        fastavro.writer(out, PLAN_SCHEMA, [record])
        return out.getvalue()

    @classmethod
    def from_avro(cls, data: bytes) -> CompactionPlan:
        records = list(fastavro.reader(io.BytesIO(data)))
        if len(records) != 1:
            raise HoodieError(f"a compaction plan holds one record, found {len(records)}")
        record = records[0]
        if not isinstance(record, dict):
            raise HoodieError(f"a compaction plan holds a record, found {type(record).__name__}")
        version = record.get("version") or 1
        operations = []
        for op in record.get("operations") or []:
            partition = op.get("partitionPath") or ""
            operations.append(
                CompactionOperation(
                    partition_path=partition,
                    file_id=op["fileId"],
                    base_instant=op["baseInstantTime"],
                    # Version 1 plans hold full paths; only the name matters within a partition.
                    base_file=posixpath.basename(op["dataFilePath"])
                    if op.get("dataFilePath")
                    else None,
                    log_files=tuple(posixpath.basename(p) for p in op.get("deltaFilePaths") or []),
                    metrics=dict(op.get("metrics") or {}),
                )
            )
        return cls(operations, dict(record.get("extraMetadata") or {}), version)


def read_plan(storage: FileIO, layout: TimelineLayout, instant_time: str) -> CompactionPlan:
    """The plan of a compaction; every file it names checked to be a data file of the table
    (a crafted plan must not make compaction read, or clean spare, files elsewhere)."""
    requested = Instant(instant_time, Action.COMPACTION, State.REQUESTED)
    path = layout.path(requested)
    with malformed(storage.uri(path), "a compaction plan (Avro)"):
        plan = CompactionPlan.from_avro(storage.read_bytes(path))
    source = f"compaction plan {instant_time}"
    for op in plan.operations:
        for name in ([op.base_file] if op.base_file else []) + list(op.log_files):
            check_data_file(f"at {storage.base_uri}", source, op.relative(name))
    return plan


def pending_compaction_file_groups(
    storage: FileIO, timeline: Timeline
) -> dict[tuple[str, str], str]:
    """(partition, file id) -> instant of the pending compaction that will compact it."""
    groups: dict[tuple[str, str], str] = {}
    for instant in timeline.pending:
        if instant.action is Action.COMPACTION:
            for group in read_plan(storage, timeline.layout, instant.timestamp).file_groups():
                groups[group] = instant.timestamp
    return groups

"""The clustering plan: which file slices a clustering rewrites, as Apache Hudi stores it.

A clustering is requested with an Avro data file holding one `HoodieRequestedReplaceMetadata`
(`operationType` `CLUSTER`) whose `clusteringPlan` lists groups of file slices
(`HoodieClusteringGroup` of `HoodieSliceInfo`), each rewritten into `numOutputFileGroups` new
file groups, and the execution strategy (`HoodieClusteringStrategy`: its class and params,
the sort columns among them). Where it lives:

- table version 6 (timeline layout 1): `<t>.replacecommit.requested`, then an empty
  `<t>.replacecommit.inflight`, then `<t>.replacecommit` (the replace commit's JSON). An
  insert overwrite's replace commit has the same names with an empty requested file: only
  the requested metadata tells a clustering apart (Apache Hudi's
  `ClusteringUtils.isClusteringInstant`);
- table version 8 (layout 2): `<t>.clustering.requested`, `<t>.clustering.inflight` (empty),
  then `<t>_<completion>.replacecommit` (Avro).

Slice paths are absolute (Apache Hudi writes its table's full path): a plan we read has every
path made relative to the table and checked to be a data file of the slice's partition and
file group (a crafted plan must not make clustering read, or the cleaner spare, anything
else); plans we write name the files under the table's URI. Fields are mapped by name from
the file's own schema, with Apache Hudi's defaults for absent ones, so plans of 0.x and 1.x
read alike; we write 0.15's field set on version 6 tables and 1.2's on version 8 tables.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

import fastavro

from .exceptions import ClusteringUpdateError, HoodieError, UnsafePathError, malformed
from .naming import parse_base_file_name, parse_log_file_name
from .partition_paths import check_data_file, shown
from .storage import FileIO
from .timeline import Action, Instant, State, Timeline, TimelineLayout

CLUSTER = "CLUSTER"  # the operation type of a clustering's requested and completed metadata
SIZE_BASED_PLAN_STRATEGY = (
    "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
)
SORT_AND_SIZE_EXECUTION_STRATEGY = (
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
)
SORT_COLUMNS_PARAM = "hoodie.clustering.plan.strategy.sort.columns"
_NAMESPACE = "org.apache.hudi.avro.model"


def _nullable(avro: Any) -> list[Any]:
    return ["null", avro]


def _optional(name: str, avro: Any) -> dict[str, Any]:
    return {"name": name, "type": _nullable(avro), "default": None}


def _version() -> dict[str, Any]:
    return {"name": "version", "type": ["int", "null"], "default": 1}


_STRING_MAP = {"type": "map", "values": "string"}


def _schema(layout_version: int) -> dict[str, Any]:
    """`HoodieRequestedReplaceMetadata` as Apache Hudi 0.15 (layout 1) or 1.2 (layout 2)
    declares it: 1.x added the plan's `missingSchedulePartitions`."""
    slice_info = {
        "type": "record",
        "name": "HoodieSliceInfo",
        "fields": [
            _optional("dataFilePath", "string"),
            _optional("deltaFilePaths", {"type": "array", "items": "string"}),
            {"name": "fileId", "type": _nullable("string")},
            _optional("partitionPath", "string"),
            _optional("bootstrapFilePath", "string"),
            _version(),
        ],
    }
    group = {
        "type": "record",
        "name": "HoodieClusteringGroup",
        "fields": [
            _optional("slices", {"type": "array", "items": slice_info}),
            _optional("metrics", {"type": "map", "values": "double"}),
            {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
            _optional("extraMetadata", _STRING_MAP),
            _version(),
        ],
    }
    strategy = {
        "type": "record",
        "name": "HoodieClusteringStrategy",
        "fields": [
            _optional("strategyClassName", "string"),
            _optional("strategyParams", _STRING_MAP),
            _version(),
        ],
    }
    plan_fields = [
        _optional("inputGroups", {"type": "array", "items": group}),
        _optional("strategy", strategy),
        _optional("extraMetadata", _STRING_MAP),
        _version(),
        _optional("preserveHoodieMetadata", "boolean"),
    ]
    if layout_version >= 2:
        plan_fields.append(
            _optional("missingSchedulePartitions", {"type": "array", "items": "string"})
        )
    plan = {"type": "record", "name": "HoodieClusteringPlan", "fields": plan_fields}
    return {
        "type": "record",
        "name": "HoodieRequestedReplaceMetadata",
        "namespace": _NAMESPACE,
        "fields": [
            _optional("operationType", "string"),
            _optional("clusteringPlan", plan),
            _optional("extraMetadata", _STRING_MAP),
            _version(),
        ],
    }


_SCHEMAS = {version: fastavro.parse_schema(_schema(version)) for version in (1, 2)}


@dataclass(frozen=True)
class SliceInfo:
    """One file slice of a clustering group: its base file and log files, relative to the
    table (as every reader of ours takes them)."""

    partition_path: str
    file_id: str
    base_file: str | None  # relative path
    log_files: tuple[str, ...] = ()  # relative paths


@dataclass(frozen=True)
class ClusteringGroup:
    """Slices rewritten together into `num_output_file_groups` new file groups."""

    slices: tuple[SliceInfo, ...]
    num_output_file_groups: int = 1
    metrics: dict[str, float] = field(default_factory=dict, compare=False)


@dataclass
class ClusteringPlan:
    groups: list[ClusteringGroup]
    strategy_class: str = SORT_AND_SIZE_EXECUTION_STRATEGY
    strategy_params: dict[str, str] = field(default_factory=dict)
    extra_metadata: dict[str, str] = field(default_factory=dict)
    preserve_hoodie_metadata: bool = True
    operation_type: str = CLUSTER

    @property
    def sort_columns(self) -> tuple[str, ...]:
        text = self.strategy_params.get(SORT_COLUMNS_PARAM) or ""
        return tuple(c.strip() for c in text.split(",") if c.strip())

    def file_groups(self) -> set[tuple[str, str]]:
        return {(s.partition_path, s.file_id) for g in self.groups for s in g.slices}

    def to_avro(self, storage: FileIO, layout_version: int) -> bytes:
        """The requested metadata's Avro file; slice paths under the table's URI."""
        plan: dict[str, Any] = {
            "inputGroups": [
                {
                    "slices": [
                        {
                            "dataFilePath": storage.uri(s.base_file) if s.base_file else None,
                            "deltaFilePaths": [storage.uri(p) for p in s.log_files],
                            "fileId": s.file_id,
                            "partitionPath": s.partition_path,
                            "bootstrapFilePath": "",
                            "version": 1,
                        }
                        for s in group.slices
                    ],
                    "metrics": dict(group.metrics),
                    "numOutputFileGroups": group.num_output_file_groups,
                    "extraMetadata": None,
                    "version": 1,
                }
                for group in self.groups
            ],
            "strategy": {
                "strategyClassName": self.strategy_class,
                "strategyParams": dict(self.strategy_params),
                "version": 1,
            },
            "extraMetadata": dict(self.extra_metadata),
            "version": 1,
            "preserveHoodieMetadata": self.preserve_hoodie_metadata,
        }
        if layout_version >= 2:
            plan["missingSchedulePartitions"] = []
        record = {
            "operationType": self.operation_type,
            "clusteringPlan": plan,
            "extraMetadata": {},
            "version": 1,
        }
        out = io.BytesIO()
        fastavro.writer(out, _SCHEMAS[2 if layout_version >= 2 else 1], [record])
        return out.getvalue()

    @classmethod
    def from_avro(cls, data: bytes, storage: FileIO, source: str) -> ClusteringPlan | None:
        """The plan in a requested replace metadata file, or None when it holds none (an
        empty file, or no clustering plan: an insert overwrite's). Every path is made
        relative to the table and checked (`source` names the plan in errors)."""
        record = _requested_record(data)
        if record is None:
            return None
        plan = record.get("clusteringPlan")
        if not plan:
            return None
        groups = []
        for group in plan.get("inputGroups") or []:
            slices = tuple(_slice(storage, source, s) for s in group.get("slices") or [])
            outputs = group.get("numOutputFileGroups")
            groups.append(
                ClusteringGroup(
                    slices,
                    1 if outputs is None else int(outputs),
                    dict(group.get("metrics") or {}),
                )
            )
        for group in groups:
            if group.num_output_file_groups < 1:
                raise HoodieError(
                    f"{source}: a clustering group must write at least one file group, the "
                    f"plan says {group.num_output_file_groups}"
                )
        strategy = plan.get("strategy") or {}
        preserve = plan.get("preserveHoodieMetadata")
        return cls(
            groups,
            strategy.get("strategyClassName") or SORT_AND_SIZE_EXECUTION_STRATEGY,
            dict(strategy.get("strategyParams") or {}),
            dict(plan.get("extraMetadata") or {}),
            True if preserve is None else bool(preserve),
            record.get("operationType") or CLUSTER,
        )


def _requested_record(data: bytes) -> dict[str, Any] | None:
    if not data:
        return None  # Apache Hudi: "few operations create requested file without any content"
    reader = fastavro.reader(io.BytesIO(data))
    schema = reader.writer_schema
    held = schema.get("name") if isinstance(schema, dict) else schema
    if held not in (
        "HoodieRequestedReplaceMetadata",
        f"{_NAMESPACE}.HoodieRequestedReplaceMetadata",
    ):
        raise HoodieError(
            f"expected a HoodieRequestedReplaceMetadata record, the file holds {held}"
        )
    records = list(reader)
    if len(records) != 1:
        raise HoodieError(
            f"a requested replace metadata file holds one record, found {len(records)}"
        )
    record = records[0]
    assert isinstance(record, dict)
    return record


def _slice(storage: FileIO, source: str, info: dict[str, Any]) -> SliceInfo:
    """A slice with its paths relative to the table, each checked to be a data file of the
    slice's partition and file group."""
    file_id = info.get("fileId")
    partition = info.get("partitionPath") or ""
    if not file_id or "/" in file_id:
        raise UnsafePathError(f"table at {storage.base_uri}: {source} names the file group "
                              f"{shown(str(file_id))}, which is no file id")  # fmt: skip
    if info.get("bootstrapFilePath"):
        raise HoodieError(f"{source} clusters a bootstrapped file group ({file_id}); "
                          "bootstrapped tables are not supported")  # fmt: skip

    def relative(path: str, is_log: bool) -> str:
        try:
            rel = storage.relative(path)
        except UnsafePathError as error:
            raise UnsafePathError(
                f"table at {storage.base_uri}: {source} names the data file {shown(path)}, "
                "which is outside the table; nothing was read, written or deleted"
            ) from error
        check_data_file(f"at {storage.base_uri}", source, rel)
        folder, _, name = rel.rpartition("/")
        parsed = parse_log_file_name(name) if is_log else parse_base_file_name(name)
        if folder != partition or parsed is None or parsed.file_id != file_id:
            raise UnsafePathError(
                f"table at {storage.base_uri}: {source} names the data file {shown(path)} in "
                f"the slice of file group {partition}/{file_id}, to which it does not belong; "
                "nothing was read, written or deleted"
            )
        return rel

    data = info.get("dataFilePath")
    base = relative(data, is_log=False) if data else None
    logs = tuple(relative(p, is_log=True) for p in info.get("deltaFilePaths") or [])
    return SliceInfo(partition, file_id, base, logs)


def requested_instant(layout: TimelineLayout, instant_time: str) -> Instant:
    """The requested instant of a clustering: `replacecommit` in layout 1, `clustering` in 2."""
    action = Action.CLUSTERING if layout.version >= 2 else Action.REPLACE_COMMIT
    return Instant(instant_time, action, State.REQUESTED)


def read_requested(
    storage: FileIO, layout: TimelineLayout, instant_time: str
) -> ClusteringPlan | None:
    """The clustering plan requested at `instant_time`, or None when that replace commit is
    no clustering (an insert overwrite's, in layout 1)."""
    path = layout.path(requested_instant(layout, instant_time))
    if not storage.exists(path):
        return None
    with malformed(storage.uri(path), "a clustering plan (Avro HoodieRequestedReplaceMetadata)"):
        return ClusteringPlan.from_avro(
            storage.read_bytes(path), storage, f"clustering plan {instant_time}"
        )


def read_plan(storage: FileIO, layout: TimelineLayout, instant_time: str) -> ClusteringPlan:
    plan = read_requested(storage, layout, instant_time)
    if plan is None:
        raise HoodieError(
            f"instant {instant_time} of the table at {storage.base_uri} is no clustering"
        )
    return plan


def is_clustering(storage: FileIO, layout: TimelineLayout, instant: Instant) -> bool:
    """Is this pending instant a clustering? Layout 2 names it so; in layout 1 a pending
    replace commit is one when its requested file holds a clustering plan."""
    if instant.is_completed:
        return False
    if instant.action is Action.CLUSTERING:
        return True
    if instant.action is not Action.REPLACE_COMMIT or layout.version >= 2:
        return False
    path = layout.path(requested_instant(layout, instant.timestamp))
    try:
        data = storage.read_bytes(path)
    except FileNotFoundError:
        return False
    with malformed(storage.uri(path), "a requested replace commit (Avro)"):
        record = _requested_record(data)
    return bool(record and record.get("clusteringPlan"))


def pending_clusterings(storage: FileIO, timeline: Timeline) -> list[Instant]:
    """The pending clusterings, oldest first."""
    return [i for i in timeline.pending if is_clustering(storage, timeline.layout, i)]


def pending_clustering_file_groups(
    storage: FileIO, timeline: Timeline
) -> dict[tuple[str, str], str]:
    """(partition, file id) -> instant of the pending clustering that will rewrite it."""
    groups: dict[tuple[str, str], str] = {}
    for instant in pending_clusterings(storage, timeline):
        for group in read_plan(storage, timeline.layout, instant.timestamp).file_groups():
            groups[group] = instant.timestamp
    return groups


def refuse_updates_to_clustering(
    storage: FileIO, timeline: Timeline, touched: set[tuple[str, str]], table_name: str
) -> None:
    """Raise `ClusteringUpdateError` when a write touched (updated, deleted from, filled or
    replaced) a file group a pending clustering rewrites: its changes would be lost when the
    clustering completes. Apache Hudi's words (`SparkRejectUpdateStrategy`), then ours."""
    busy = pending_clustering_file_groups(storage, timeline)
    hit = sorted(group for group in touched if group in busy)
    if hit:
        partition, file_id = hit[0]
        raise ClusteringUpdateError(
            f"Not allowed to update the clustering file group {partition}/{file_id}. For "
            "pending clustering operations, we are not going to support update for now. "
            f"(Table '{table_name}': clustering {busy[hit[0]]} plans to rewrite "
            f"{len(hit)} file group(s) this write changes; the write was undone. Run the "
            "pending clustering (hoodie_cluster, or table.services.cluster) and write again.)"
        )

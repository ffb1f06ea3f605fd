"""How far a table has consumed other tables: source checkpoints kept in its own commits.

Hudi Streamer keeps the position of its source in the target's commit metadata
(`deltastreamer.checkpoint.key`, `streamer.checkpoint.key.v2`): data and position complete in
one instant, so a crash keeps both or neither, and a re-run reads from where the last
completed commit left off. A table here may consume several Hudi tables, so its commits keep
one JSON object under `CHECKPOINTS_KEY`: each source table (its base path) -> its checkpoint.

A checkpoint is a position of the source's incremental read: the read after it takes the
changes in `(position, next]`. On a layout 2 timeline (table version 8) positions are
completion times, which never leave a hole; on layout 1 (version 6) they are requested
times, and a position never passes a write still pending, whose rows would otherwise get a
requested time below the next checkpoint and be skipped (Apache Hudi's
`hoodie.read.timeline.holes.resolution.policy=BLOCK`).

Every write that carries checkpoints carries all of the table's (those it did not advance
too), so the newest write commit always holds them, whatever archival moved away. Table
services (compaction, clustering, log compaction) do not count: they write no checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from ..exceptions import ConcurrentWriteConflict, MalformedMetadataError
from ..meta_client import HoodieTableMetaClient
from ..metadata import CommitMetadata
from ..timeline import Instant, Timeline

CHECKPOINTS_KEY = "hoodie.incremental.checkpoints"
# Commits of table services: they move rows but change none, and carry no checkpoint.
_SERVICE_OPERATIONS = frozenset({"COMPACT", "CLUSTER", "LOG_COMPACT"})
_FORMATS = frozenset({"latest_state", "cdc"})


class CheckpointConflictError(ConcurrentWriteConflict):
    """Another write of the table advanced a checkpoint this write read (`hoodie_incremental`): both
    consumed the same changes of a source, and only the first may commit them. This write was
    undone, so no change is applied twice.

    Run the model again: it reads on from where the other run stopped. Keep two runs of one model
    from overlapping (a schedule and a manual run)."""


@dataclass(frozen=True)
class SourceCheckpoint:
    """A source table consumed up to `position`: its incremental read's begin next time (a
    completion time on timeline layout 2, a requested time on layout 1). `instant` is the
    requested time of the last write consumed; `table_version` the source's version then;
    `format` how the consumer reads it (`hoodie.datasource.query.incremental.format`:
    `latest_state`, or `cdc`, which needs the source's history after `position`)."""

    position: str
    instant: str
    table_version: int
    format: str = "latest_state"

    @classmethod
    def of(cls, data: object, where: str) -> SourceCheckpoint:
        if not isinstance(data, dict):
            raise ValueError(f"a checkpoint of {where} is not an object: {data!r}")
        try:
            position, instant, version = data["position"], data["instant"], data["table_version"]
        except KeyError as missing:
            raise ValueError(f"a checkpoint of {where} lacks {missing}") from None
        read_as = data.get("format", "latest_state")  # written before formats were recorded
        if not (isinstance(position, str) and isinstance(instant, str)
                and isinstance(version, int) and position and instant
                and read_as in _FORMATS):  # fmt: skip
            raise ValueError(f"a checkpoint of {where} has values of the wrong kind: {data!r}")
        return cls(position, instant, version, read_as)


def encode(checkpoints: Mapping[str, SourceCheckpoint]) -> str:
    return json.dumps({k: asdict(v) for k, v in sorted(checkpoints.items())}, sort_keys=True)


def decode(text: str, where: str) -> dict[str, SourceCheckpoint]:
    """The checkpoints of one commit; text that is not what `encode` writes is an error."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"checkpoints of {where} are not an object")
    return {str(source): SourceCheckpoint.of(value, where) for source, value in data.items()}


def checkpoints_of(meta_client: HoodieTableMetaClient) -> dict[str, SourceCheckpoint]:
    """The table's checkpoints: those of its newest completed write (none if it has none)."""
    found = _newest_write(meta_client, meta_client.timeline())
    if found is None:
        return {}
    instant, metadata = found
    text = metadata.extra_metadata.get(CHECKPOINTS_KEY)
    if text is None:
        return {}
    where = meta_client.storage.uri(meta_client.instant_path(instant))
    try:
        return decode(text, where)
    except ValueError as error:
        raise MalformedMetadataError(
            f"{where}: extraMetadata '{CHECKPOINTS_KEY}' is damaged ({error}); the table's "
            "consumers cannot tell how far they read. Rebuild the consuming model with a full "
            "refresh"
        ) from error


def _newest_write(
    meta_client: HoodieTableMetaClient, timeline: Timeline
) -> tuple[Instant, CommitMetadata] | None:
    for instant in reversed(timeline.completed.write_timeline.instants):
        metadata = meta_client.commit_metadata(instant)
        if str(metadata.operation_type).upper() in _SERVICE_OPERATIONS or metadata.compacted:
            continue
        return instant, metadata
    return None


def current_position(
    meta_client: HoodieTableMetaClient, read_as: str = "latest_state"
) -> SourceCheckpoint | None:
    """Where a consumer of this table reading now (`read_as`: the incremental format) may
    read up to: its latest completed write, by completion time on layout 2; by requested time
    on layout 1 and for `cdc` reads (Apache Hudi's CDC query takes instants by requested
    time), the latest one older than every write still pending. None while the table has no
    such write."""
    timeline = meta_client.timeline()
    version = meta_client.properties.table_version
    writes = list(timeline.completed.write_timeline.instants)
    if timeline.layout.version >= 2 and read_as != "cdc":
        completion = timeline.completion_times()
        newest_first = sorted(writes, key=lambda i: completion.get(i.timestamp, i.timestamp),
                              reverse=True)  # fmt: skip
        for instant in newest_first:
            if not _is_service(meta_client, instant):
                position = completion.get(instant.timestamp, instant.timestamp)
                return SourceCheckpoint(position, instant.timestamp, version, read_as)
        return None
    pending = [i.timestamp for i in timeline.pending.write_timeline.instants]
    for instant in reversed(writes):
        if pending and instant.timestamp >= min(pending):
            continue
        if not _is_service(meta_client, instant):
            return SourceCheckpoint(instant.timestamp, instant.timestamp, version, read_as)
    return None


def _is_service(meta_client: HoodieTableMetaClient, instant: Instant) -> bool:
    metadata = meta_client.commit_metadata(instant)
    return str(metadata.operation_type).upper() in _SERVICE_OPERATIONS or metadata.compacted


def expect_checkpoints(
    expected: Mapping[str, SourceCheckpoint | None],
) -> Callable[[HoodieTableMetaClient], None]:
    """A check run at commit (under the table lock with optimistic concurrency): the table's
    checkpoints of these sources are still what the write read before consuming them."""

    def check(meta_client: HoodieTableMetaClient) -> None:
        stored = checkpoints_of(meta_client)
        for source, wanted in expected.items():
            if stored.get(source) != wanted:
                raise CheckpointConflictError(
                    f"table '{meta_client.name}': another write consumed {source} since this "
                    f"one read it (checkpoint {_shown(wanted)} is now "
                    f"{_shown(stored.get(source))}); this write is undone so no change is "
                    "consumed twice. Run it again"
                )

    return check


def _shown(checkpoint: SourceCheckpoint | None) -> str:
    return "(none)" if checkpoint is None else checkpoint.position

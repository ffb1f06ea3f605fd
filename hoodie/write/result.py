"""What a completed write or compaction did, for logs, dbt's run results and tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..metadata import CommitMetadata


@dataclass
class WriteResult:
    """What one completed write (or compaction) did, as its commit metadata records it.

    Attributes:
        instant: the instant time of the commit (`yyyyMMddHHmmssSSS`).
        operation: the operation its commit metadata names (`UPSERT`, `INSERT`,
            `BULK_INSERT`, `DELETE`, `INSERT_OVERWRITE_TABLE`, `COMPACT`).
        metadata: the commit metadata written to the timeline (per-file write stats).
        seconds: wall time of the write, from its first check to its commit.
        partitions: the partition paths it wrote.
        compactions: inline compactions run after the write, each its own result.
        clusterings: inline clusterings run after the write, each its own result.

    The counts (`num_inserts`, `num_updates`, `num_deletes`, `files_written`,
    `bytes_written`) are totals over the commit's write stats.
    """

    instant: str
    operation: str
    metadata: CommitMetadata
    seconds: float
    partitions: list[str] = field(default_factory=list)
    compactions: list[WriteResult] = field(default_factory=list)  # inline, after the write
    clusterings: list[WriteResult] = field(default_factory=list)  # inline, after the write

    @property
    def num_inserts(self) -> int:
        return self.metadata.total("num_inserts")

    @property
    def num_updates(self) -> int:
        return self.metadata.total("num_update_writes")

    @property
    def num_deletes(self) -> int:
        return self.metadata.total("num_deletes")

    @property
    def files_written(self) -> int:
        return len(self.metadata.write_stats())

    @property
    def bytes_written(self) -> int:
        return self.metadata.total("total_write_bytes")

    def summary(self) -> str:
        text = (
            f"{self.operation.lower()} {self.instant}: {self.num_inserts} inserted, "
            f"{self.num_updates} updated, {self.num_deletes} deleted in "
            f"{self.files_written} file(s)"
        )
        for compaction in self.compactions:
            text += (
                f"; compaction {compaction.instant} rewrote {compaction.files_written} "
                "file group(s)"
            )
        for clustering in self.clusterings:
            replaced = clustering.metadata.partition_to_replace_file_ids or {}
            text += (
                f"; clustering {clustering.instant} rewrote "
                f"{sum(len(ids) for ids in replaced.values())} file group(s) into "
                f"{clustering.files_written}"
            )
        return text

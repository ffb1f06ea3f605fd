"""What a catalog shows of a table (`dbt docs generate`): rows, size, files, latest commit.

Read from the metadata only, never from the data: the timeline, the file-system view of the
latest snapshot (the files a snapshot read reads: each file group's latest slice) and the
commit metadata of the retained commits, whose write stats record the rows each base file was
written with (`numWrites`, Apache Hudi's as ours). A base file whose commit was archived off
the timeline is counted from its parquet footer (one ranged read). Nothing is written.

Rows are exact where they can be: a copy-on-write table, or a merge-on-read table whose latest
slices have no log files. Log files hold updates, deletes and (some indexes) inserts that only
merging the slice resolves, so with log files pending compaction the count is of the base files
and says so (`rows_exact` False).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .clustering_plan import pending_clusterings
from .fs_view import WrittenFile, damaged_data_file
from .meta_client import HoodieTableMetaClient
from .options import read as read_options
from .properties import TIMELINE_TIMEZONE
from .timeline import Action, Instant, instant_to_datetime


@dataclass(frozen=True)
class TableStats:
    """A table's facts as of its latest completed commit."""

    table_type: str
    table_version: int
    rows: int  # in the latest base files: the table's rows when `rows_exact`
    rows_exact: bool
    base_files: int  # files of the latest file slices: what a snapshot read reads
    log_files: int
    size_bytes: int  # of those files
    latest_commit: Instant | None  # the latest completed write (commit, delta or replace)
    timeline_timezone: str  # of instant times: UTC (ours), LOCAL (Apache Hudi's default)
    pending_compactions: int
    pending_clusterings: int

    @property
    def files(self) -> int:
        return self.base_files + self.log_files

    def rows_text(self) -> str:
        """The row count as a catalog shows it: the number where exact, else what it counts."""
        if self.rows_exact:
            return str(self.rows)
        logs = f"{self.log_files} log file{'s' if self.log_files != 1 else ''}"
        return f"~{self.rows} (base files; {logs} pending compaction)"

    def files_text(self) -> str:
        text = f"{self.base_files} base file{'s' if self.base_files != 1 else ''}"
        if self.log_files:
            text += f", {self.log_files} log file{'s' if self.log_files != 1 else ''}"
        return text

    def latest_commit_text(self) -> str:
        """When the latest commit completed, readable (layout 2 records the completion time;
        version 6 only the instant's own time), with its action and instant time."""
        instant = self.latest_commit
        if instant is None:
            return "none yet"
        time = instant.completion_time or instant.timestamp
        readable = _readable(time, self.timeline_timezone)
        return f"{readable} ({instant.action.value} {instant.timestamp})"


def _readable(time: str, timezone: str) -> str:
    """An instant time as `2026-12-07 04:38:10 UTC`: in UTC for tables whose timeline is in
    UTC (ours), else in the writer's local time, which the table does not record."""
    try:
        moment: datetime = instant_to_datetime(time)
    except ValueError:
        return time  # not a date (Apache Hudi's initialization instants): as it is
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text} UTC" if timezone.upper() == "UTC" else f"{text} (the writer's local time)"


def table_stats(meta_client: HoodieTableMetaClient) -> TableStats:
    """The table's facts, from its timeline, latest file slices and commit metadata.

    The view lists files as a snapshot read does (through the metadata table where the table
    has a usable one) and holds the latest slices to the retained commits alike
    (`check_slices`): a missing or cut-short data file is the same error here as in a read.

    Raises:
        DamagedFileError: a timeline file, commit metadata or data file that does not read.
    """
    properties = meta_client.properties
    timeline = meta_client.timeline()
    latest = timeline.completed.write_timeline.latest()
    compactions = sum(1 for i in timeline.pending if i.action is Action.COMPACTION)
    clusterings = len(pending_clusterings(meta_client.storage, timeline))
    rows = base_files = log_files = size = 0
    if latest is not None:
        metadata = bool(read_options.METADATA_ENABLE.default)
        view = meta_client.file_system_view(None, timeline=timeline, metadata=metadata)
        groups = view.file_groups()
        view.check_slices(groups)
        for group in groups:
            file_slice = group.latest_slice
            if file_slice is None:
                continue
            if file_slice.base_file is not None:
                base = file_slice.base_file
                base_files += 1
                size += base.size
                rows += _base_file_rows(meta_client, view.written_files, base.relative_path,
                                        base.instant)  # fmt: skip
            log_files += len(file_slice.log_files)
            size += sum(log.size for log in file_slice.log_files)
    return TableStats(
        table_type=properties.table_type,
        table_version=properties.table_version,
        rows=rows,
        rows_exact=log_files == 0,
        base_files=base_files,
        log_files=log_files,
        size_bytes=size,
        latest_commit=latest,
        timeline_timezone=properties.extra.get(TIMELINE_TIMEZONE) or "LOCAL",
        pending_compactions=compactions,
        pending_clusterings=clusterings,
    )


def _base_file_rows(
    meta_client: HoodieTableMetaClient,
    written: Mapping[str, Sequence[WrittenFile]],
    relative: str,
    instant: str,
) -> int:
    """The rows a base file was written with: its commit's write stat, else (the commit was
    archived, or a stat without the file) its parquet footer."""
    for file in written.get(relative, ()):
        if file.instant == instant:
            return int(file.records)
    storage = meta_client.storage
    name = posixpath.basename(relative)
    with damaged_data_file(storage, relative, f"base file {name}"):
        return int(storage.parquet_file(relative).metadata.num_rows)

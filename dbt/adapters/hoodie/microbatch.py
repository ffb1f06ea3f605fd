"""One batch of a microbatch lake model: a commit that replaces the batch's event-time window.

dbt-core runs a `materialized='incremental', incremental_strategy='microbatch'` model once per
batch (`batch_size` of `event_time`), with the model's inputs filtered to the batch's window,
and re-runs a batch on `lookback` and `dbt retry`. dbt-spark's strategy overwrites the
batch's partitions; a lake upsert does what works on any partitioning: the batch's rows are
upserted, and the stored rows whose event time lies in the window and whose key the batch
does not hold are deleted, in the same commit. Running a batch twice leaves the table as
running it once, and a row gone from the source within a window is gone from the table.

The commit records the batch (`dbt.batch.*` extraMetadata) beside dbt's invocation, so the
timeline says which batch wrote which instant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dbt_common.invocation import get_invocation_id
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hoodie import WriteConfig
from hoodie.integration import quoted_name

from .errors import ModelConfigError

BATCH_ID = "dbt.batch.id"
BATCH_START = "dbt.batch.event_time_start"
BATCH_END = "dbt.batch.event_time_end"
INVOCATION_ID = "dbt.invocation_id"
NODE_ID = "dbt.node"


@dataclass(frozen=True)
class BatchWindow:
    """A batch as dbt hands it to the materialization: `[start, end)` of `event_time`."""

    id: str
    event_time: str
    start: datetime
    end: datetime

    @classmethod
    def of(cls, model: str, config: Mapping[str, Any], batch: Any) -> BatchWindow | None:
        """The batch of a microbatch model's run (`model.batch`), None for any other run."""
        if not batch or str(config.get("incremental_strategy")).lower() != "microbatch":
            return None
        event_time = config.get("event_time")
        if not event_time:
            raise ModelConfigError(
                f"Model '{model}': incremental_strategy='microbatch' needs event_time, the "
                "column whose value places a row in a batch"
            )
        return cls(
            id=str(batch["id"]),
            event_time=str(event_time),
            start=_datetime(batch["event_time_start"]),
            end=_datetime(batch["event_time_end"]),
        )

    def commit_metadata(self) -> dict[str, str]:
        return {
            BATCH_ID: self.id,
            BATCH_START: self.start.isoformat(),
            BATCH_END: self.end.isoformat(),
        }

    def check_rows(self, model: str, rows: DataFrame) -> str | None:
        """The model's rows must carry the event time column (dbt filtered its inputs by it,
        and the window's stored rows are found by it). Rows outside the window (an input
        without event_time, a model that shifts it) are written, but no re-run of this batch
        replaces them: the warning to give, or None."""
        if self.event_time not in rows.columns:
            raise ModelConfigError(
                f"Model '{model}': event_time='{self.event_time}' is not a column of the "
                f"model's rows ({', '.join(rows.columns)}); select it, so that each row's "
                "batch is known and a re-run batch replaces its own rows"
            )
        column = _column(self.event_time)
        outside = rows.where(
            column.isNull() | (column < F.lit(self.start)) | (column >= F.lit(self.end))
        ).count()
        if not outside:
            return None
        return (
            f"Model '{model}': {outside} row(s) of batch {self.id} have an event_time outside "
            f"[{self.start.isoformat()}, {self.end.isoformat()}); they are written, but a re-run "
            "of this batch does not replace them (only the rows of its window). Give the "
            "model's inputs event_time configs (dbt filters them per batch), or filter by "
            "model.batch.event_time_start/_end"
        )

    def deletes(self, stored: DataFrame, rows: DataFrame, config: WriteConfig) -> DataFrame:
        """The stored rows of this window whose key the batch's rows lack, as the key and
        partition columns a delete needs. Under a global index a key is the record key alone;
        otherwise a key in another partition is another record, as the index keeps it."""
        keys = list(config.record_key_fields)
        if not config.global_index:
            keys += [c for c in config.partition_fields if c not in keys]
        column = _column(self.event_time)
        in_window = (column >= F.lit(self.start)) & (column < F.lit(self.end))
        wanted = list(dict.fromkeys((*config.record_key_fields, *config.partition_fields)))
        batch_keys = rows.select([_column(name) for name in keys]).distinct()
        return (
            stored.where(in_window)
            .select([_column(name) for name in wanted])
            .join(batch_keys, on=keys, how="left_anti")
        )


def _column(name: str):
    """A column by its name as it is (a dot in a name is not a struct field)."""
    return F.col(quoted_name(name))


def _datetime(value: Any) -> datetime:
    """A batch bound: dbt gives datetimes in the node, text once serialized (`model` dict)."""
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def run_metadata(node_id: str | None) -> dict[str, str]:
    """Which dbt invocation and node wrote a commit."""
    out = {INVOCATION_ID: get_invocation_id()}
    if node_id:
        out[NODE_ID] = node_id
    return out

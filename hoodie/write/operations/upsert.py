"""Upsert: every record of the batch replaces its key's stored version, or is inserted.

Planning: into a table with no records yet, a bulk insert (`bulk_insert.py`) where the index
allows; otherwise tagged in the index's write tasks where it can (the BUCKET index, the
SIMPLE index's routing units), else tagged and placed in a job of its own, new keys filling
small file groups.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from ..prepare import UPSERT
from .base import Snapshot, WriteOperation
from .plans import Tagging, WritePlan


class Upsert(WriteOperation):
    name = UPSERT
    bulk_insert_first_write = True

    def _plan(self, prepared: DataFrame, snapshot: Snapshot) -> WritePlan:
        return self.in_tasks_or_placed(prepared, snapshot, Tagging())

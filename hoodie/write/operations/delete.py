"""Delete (Hudi's delete operation): the batch's keys are removed from the table.

Planning: as an upsert's (`upsert.py`), except that keys the table lacks have nothing to do,
and a table with no records gets no bulk insert: the write still goes through the index.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from ..prepare import DELETE
from .base import Snapshot, WriteOperation
from .plans import Tagging, WritePlan


class Delete(WriteOperation):
    name = DELETE

    def _plan(self, prepared: DataFrame, snapshot: Snapshot) -> WritePlan:
        return self.in_tasks_or_placed(prepared, snapshot, Tagging(delete_operation=True))

"""Insert: the batch's new keys are added, filling small file groups as an upsert's do.

Planning: into a table with no records yet, a bulk insert (`bulk_insert.py`); otherwise
tagged and placed in a job of its own, since the dup policy
(`hoodie.datasource.insert.dup.policy`) needs the whole batch's verdict on keys the table
holds before anything is written: those stop the write or are dropped, never updated. An
index that cannot tell which keys the table holds refuses it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from ..prepare import INSERT
from .base import Snapshot, WriteContext, WriteOperation
from .plans import Tagging, WritePlan


class Insert(WriteOperation):
    name = INSERT
    bulk_insert_first_write = True

    @classmethod
    def check(cls, context: WriteContext) -> None:
        context.index.check_insert(context.meta_client.name, cls.name)

    def _plan(self, prepared: DataFrame, snapshot: Snapshot) -> WritePlan:
        tagging = Tagging(on_existing=self.context.config.insert_dup_policy)
        return self.placed(prepared, snapshot, tagging)

"""Bulk insert: as an insert, but into new file groups only, in one job after any lookup.

Planning: into a table with no records yet (and for an upsert's or insert's first write,
which is then recorded as a bulk insert), the batch goes untagged into new file groups,
sorted by partition path and key (`write/bulk_insert.py`). Into a table with records, the
index first looks up which keys exist, for the dup policy; the kept records then go to new
file groups all the same, so no small file group is rewritten. Within the batch, ties go to
the later row, as in an upsert.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from ..bulk_insert import with_arrival
from ..prepare import BULK_INSERT
from .base import Snapshot, WriteContext, WriteOperation
from .plans import LookedUpBulkPlan, Tagging, WritePlan


class BulkInsert(WriteOperation):
    name = BULK_INSERT
    bulk_insert_first_write = True

    def __init__(self, context: WriteContext, lookup: bool = True):
        super().__init__(context)
        self.lookup = lookup  # False: the table has no records to look up

    @classmethod
    def check(cls, context: WriteContext) -> None:
        context.index.check_insert(context.meta_client.name, cls.name)

    def _plan(self, prepared: DataFrame, snapshot: Snapshot) -> WritePlan:
        if not self.lookup:
            return self.untagged(prepared, snapshot)
        if self.context.config.precombine_field is not None:
            prepared = with_arrival(prepared)  # ties go to the later row, as in an upsert
        tagging = Tagging(on_existing=self.context.config.insert_dup_policy)
        placement, _, _ = self.tag_and_place(self.persist(prepared), snapshot, tagging)
        return LookedUpBulkPlan(placement)

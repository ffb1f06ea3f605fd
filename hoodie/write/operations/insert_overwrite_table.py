"""Insert overwrite table: the batch replaces the table's contents in one replace commit.

Every current file group is listed as replaced and the rows go to new file groups, so readers
switch from the old contents to the new at the commit, and time travel to earlier instants
still finds the old files (until cleaning removes them).

Planning: untagged into new file groups in one job where the index allows (a bulk insert);
otherwise (the BUCKET index, whose file ids follow from the keys) placed by the index, every
record an insert into a new file group.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from ..prepare import INSERT_OVERWRITE_TABLE
from .base import Snapshot, WriteOperation
from .plans import Tagging, WritePlan


class InsertOverwriteTable(WriteOperation):
    name = INSERT_OVERWRITE_TABLE
    replaces = True

    def _plan(self, prepared: DataFrame, snapshot: Snapshot) -> WritePlan:
        if self.context.index.bulk_inserts():
            return self.untagged(prepared, snapshot)
        return self.placed(prepared, snapshot, Tagging(overwrite=True))

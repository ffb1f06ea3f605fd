"""Write operations, one class per Hudi operation, over one `Transaction` each (`base.py`).

`operation_for` chooses the class that runs a requested operation: an upsert, insert or bulk
insert into a table with no records is a bulk insert, where the index allows one.
"""

from __future__ import annotations

from .base import Snapshot, WriteContext, WriteOperation
from .bulk_insert import BulkInsert
from .delete import Delete
from .insert import Insert
from .insert_overwrite_table import InsertOverwriteTable
from .plans import WritePlan
from .upsert import Upsert

# By the name `hoodie.datasource.write.operation` gives (in capitals, as commits record it).
OPERATIONS: dict[str, type[WriteOperation]] = {
    kind.name: kind for kind in (Upsert, Insert, BulkInsert, Delete, InsertOverwriteTable)
}


def operation_for(kind: type[WriteOperation], context: WriteContext) -> WriteOperation:
    """The operation that runs `kind` on this table (refused here if it cannot)."""
    kind.check(context)
    if kind.bulk_insert_first_write and context.index.bulk_inserts() and context.first_write():
        return BulkInsert(context, lookup=False)
    return kind(context)


__all__ = [
    "OPERATIONS",
    "BulkInsert",
    "Delete",
    "Insert",
    "InsertOverwriteTable",
    "Snapshot",
    "Upsert",
    "WriteContext",
    "WriteOperation",
    "WritePlan",
    "operation_for",
]

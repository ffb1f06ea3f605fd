"""Which write operation runs a requested one, and what it asks of its index (no Spark).

The choice is the index's, through `HoodieIndex` alone: a first write goes untagged into new
file groups where the index allows it (SIMPLE, not BUCKET, whose file ids follow from keys);
an insert is refused by an index that cannot tell which keys exist.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie import WriteConfig
from hoodie.exceptions import InvalidConfigError
from hoodie.index import index_for
from hoodie.keygen import KeyGenerator
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.metadata import CommitMetadata
from hoodie.properties import TableProperties
from hoodie.timeline import Action
from hoodie.transaction.failed_writes import FailedWritesPolicy
from hoodie.transaction.transaction import Transaction
from hoodie.write.operations import (
    OPERATIONS,
    BulkInsert,
    Delete,
    Insert,
    InsertOverwriteTable,
    Upsert,
    WriteContext,
    operation_for,
)
from hoodie.write.prepare import BatchPreparer

BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}


def _context(tmp_path, table_type="COPY_ON_WRITE", options=None) -> WriteContext:
    table = HoodieTableMetaClient.create(
        str(tmp_path / "t"),
        TableProperties(name="t", table_type=table_type, record_key_fields=("id",)),
    )
    config = WriteConfig.build("t", "id", table_type=table_type, options=options or {})
    index = index_for(config)
    preparer = BatchPreparer("t", config, KeyGenerator(config.record_key_fields, ()), index)
    policy = FailedWritesPolicy.of(table.storage, config)
    return WriteContext(table, config, index, preparer, pa.schema([]), policy)


def _commit(context: WriteContext) -> None:
    with Transaction.start(context.meta_client, context.policy, Action.COMMIT) as txn:
        txn.inflight()
        txn.commit(CommitMetadata(operation_type="UPSERT"))


def test_every_configured_operation_has_its_class():
    assert {name.lower() for name in OPERATIONS} >= {"upsert", "insert", "bulk_insert"}
    assert OPERATIONS["DELETE"] is Delete
    assert OPERATIONS["INSERT_OVERWRITE_TABLE"] is InsertOverwriteTable


@pytest.mark.parametrize("kind", [Upsert, Insert, BulkInsert])
def test_a_first_write_is_a_bulk_insert_with_nothing_to_look_up(tmp_path, kind):
    context = _context(tmp_path)
    chosen = operation_for(kind, context)
    assert type(chosen) is BulkInsert and not chosen.lookup
    assert chosen.name == "BULK_INSERT"  # as the commit records it
    _commit(context)
    later = operation_for(kind, context)
    assert type(later) is kind
    assert not isinstance(later, BulkInsert) or later.lookup


def test_a_delete_and_an_overwrite_are_never_turned_into_a_bulk_insert(tmp_path):
    context = _context(tmp_path)
    assert type(operation_for(Delete, context)) is Delete
    overwrite = operation_for(InsertOverwriteTable, context)
    assert type(overwrite) is InsertOverwriteTable
    assert overwrite.action() is Action.REPLACE_COMMIT


def test_the_bucket_index_takes_no_bulk_insert_and_refuses_inserts(tmp_path):
    context = _context(tmp_path, options=BUCKET)
    assert not context.index.bulk_inserts() and context.index.tags_in_write_tasks()
    assert type(operation_for(Upsert, context)) is Upsert  # its first write too
    for kind in (Insert, BulkInsert):
        with pytest.raises(InvalidConfigError, match=f"operation {kind.name.lower()} needs "
                           "the SIMPLE index"):  # fmt: skip
            operation_for(kind, context)


def test_the_action_follows_the_table_type(tmp_path):
    cow = _context(tmp_path / "cow")
    mor = _context(tmp_path / "mor", table_type="MERGE_ON_READ")
    assert Upsert(cow).action() is Action.COMMIT
    assert Upsert(mor).action() is Action.DELTA_COMMIT
    assert Delete(mor).action() is Action.DELTA_COMMIT
    assert InsertOverwriteTable(mor).action() is Action.REPLACE_COMMIT


def test_routed_writes_of_many_units_or_deletes_set_their_task_count():
    """`routed_write_tasks`: Spark's adaptive execution sizes tasks by shuffled bytes, which
    put every file group of a small batch (or of a delete's keys) into one task."""
    from hoodie.write.executor import MANY_UNITS, routed_write_tasks

    assert routed_write_tasks(False, MANY_UNITS - 1, 200) == 0  # Spark's to split
    assert routed_write_tasks(False, 30, 8) == 8
    assert routed_write_tasks(False, 30, 200) == MANY_UNITS // 2
    assert routed_write_tasks(False, 500, 200) == 500 // MANY_UNITS
    assert routed_write_tasks(False, 50_000, 200) == 200
    assert routed_write_tasks(True, 3, 200) == 3 and routed_write_tasks(True, 300, 8) == 8

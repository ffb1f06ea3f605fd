"""Damaged metadata files that a writer, clean, restore or rollback reads are the project's own
`MalformedMetadataError` naming the file, never a raw parse error, and never skipped.

Each case damages one file of a table Apache Hudi wrote (table version 6), without Spark.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie.exceptions import MalformedMetadataError
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.table_services.clean import Cleaner
from hoodie.table_services.savepoint import refuse_pending_restore
from hoodie.timeline import Action, Instant, State
from hoodie.transaction.failed_writes import FailedWritesPolicy
from hoodie.transaction.rollback import Rollback

COW = "sample_table/cow/v6_simplekeygen_nonhivestyle"
COW_SECOND = "20240418172804498"
LATER = "20240419000000000"  # after every instant of the table
GARBAGE = b"\x00\x01 not Avro \xff"


def _damaged(root: Path, name: str) -> tuple[HoodieTableMetaClient, str]:
    """The table with `.hoodie/<name>` holding garbage, and the file's name."""
    (root / ".hoodie" / name).write_bytes(GARBAGE)
    return HoodieTableMetaClient.open(str(root)), name


def test_a_damaged_clean_plan_names_it(sample_table):
    meta_client, name = _damaged(sample_table(COW), f"{LATER}.clean.requested")
    with pytest.raises(MalformedMetadataError, match=rf"{name} is damaged.*clean plan"):
        Cleaner(meta_client).run()  # finishing the abandoned clean reads its plan


def test_damaged_savepoint_metadata_names_it(sample_table):
    """A clean spares the files savepoints hold: it cannot plan without reading them."""
    meta_client, name = _damaged(sample_table(COW), f"{LATER}.savepoint")
    with pytest.raises(MalformedMetadataError, match=rf"{name} is damaged.*savepoint"):
        Cleaner(meta_client).schedule()


def test_a_damaged_restore_plan_names_it(sample_table):
    meta_client, name = _damaged(sample_table(COW), f"{LATER}.restore.requested")
    with pytest.raises(MalformedMetadataError, match=rf"{name} is damaged.*restore plan"):
        refuse_pending_restore(meta_client, "write")


def test_a_damaged_rollback_plan_names_it(sample_table):
    meta_client, name = _damaged(sample_table(COW), f"{LATER}.rollback.requested")
    rollback = Rollback(meta_client)
    pending = Instant(LATER, Action.ROLLBACK, State.REQUESTED)
    with pytest.raises(MalformedMetadataError, match=rf"{name} is damaged.*rollback plan"):
        rollback.target_of(pending)
    with pytest.raises(MalformedMetadataError, match=rf"{name} is damaged"):
        rollback.rollback_failed_writes(FailedWritesPolicy(meta_client.storage))


def test_rolling_back_a_commit_whose_metadata_is_damaged_names_it(sample_table):
    """The files to undo were taken from a listing instead, in silence; in table version 6
    that misses log files written into slices of earlier instants. (A restore rolls back
    completed commits this way.)"""
    root = sample_table(COW)
    commit = root / ".hoodie" / f"{COW_SECOND}.commit"
    commit.write_bytes(commit.read_bytes()[:50])
    before = sorted(p.name for p in root.rglob("*") if p.is_file())
    rollback = Rollback(HoodieTableMetaClient.open(str(root)))
    completed = Instant(COW_SECOND, Action.COMMIT, State.COMPLETED)
    with pytest.raises(MalformedMetadataError, match=rf"{commit.name} is damaged"):
        rollback.rollback(completed, FailedWritesPolicy(rollback.storage))
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == before  # nothing undone


def test_a_damaged_writer_schema_in_commit_metadata_names_the_commit(sample_table):
    """The commit file parses, but the schema it carries does not (a raw KeyError)."""
    root = sample_table(COW)
    commit = root / ".hoodie" / f"{COW_SECOND}.commit"
    text = commit.read_text()
    assert text.count('\\"type\\"') > 1  # the schema: a JSON string inside the JSON
    commit.write_text(text.replace('\\"type\\"', '\\"tKpe\\"', 1))
    with pytest.raises(MalformedMetadataError, match=rf"{commit.name} is damaged.*schema"):
        HoodieTableMetaClient.open(str(root)).schema()

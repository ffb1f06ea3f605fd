"""GLOBAL_SIMPLE with Apache Hudi (issue 41, item 3): records change partitions while Apache
Hudi and we take turns on one table, both with `hoodie.index.type=GLOBAL_SIMPLE`, and after
every turn our reader and Apache Hudi's give the same rows (read-optimized ones too, the old
copies merge-on-read keeps until compaction included), one row per key, the rows the writes
so far mean.

Copy-on-write and merge-on-read; table version 6 (Apache Hudi 0.15, and 1.2 writing version 6)
and 8 (Apache Hudi 1.2 writing version 8). No row here loses to a stored one by ordering value:
there Apache Hudi rewrites the stored row with the new commit time, which we do not (README's
deliberate differences).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from apache_hudi import TABLE_TYPES
from test_take_turns import SETUPS, Turns, start

from hoodie import HoodieTable, WriteConfig

pytestmark = pytest.mark.hudi_full

INDEXES = ("GLOBAL_SIMPLE", "GLOBAL_BLOOM")


def at(key: int, dt: str, name: str, ts: int, deleted: bool = False) -> tuple:
    """A record of key `key` in partition `dt` (any partition: the key decides nothing)."""
    return (key, name, dt, ts, deleted)


@dataclass
class GlobalTurns(Turns):
    """`Turns` with the global index on both sides: a key is one record across partitions."""

    index: str = "GLOBAL_SIMPLE"

    @property
    def on_both_sides(self) -> dict[str, str]:
        return {"hoodie.index.type": self.index}

    def our_config(self) -> WriteConfig:
        options = {"hoodie.write.table.version": str(self.table_version), **self.on_both_sides}
        return WriteConfig.build(
            self.name, record_key="id", partition_path="dt", precombine_field="ts",
            table_type=TABLE_TYPES[self.kind], options=options,
        )  # fmt: skip

    def we_delete(self, rows) -> None:
        cfg = self.our_config()
        HoodieTable.for_write(self.path, cfg).delete(self.spark.createDataFrame(rows, _SCHEMA), cfg)
        self.remember(rows, deletes=True)
        self.check("we deleted")


_SCHEMA = "id int, name string, dt string, ts bigint, _hoodie_is_deleted boolean"


def global_turns(spark, apache_hudi, tmp_path, kind: str, setup: str, index: str) -> GlobalTurns:
    turns = start(spark, apache_hudi, tmp_path, kind, setup)
    return GlobalTurns(turns.spark, turns.judge, turns.path, turns.kind, turns.table_version,
                       index=index)  # fmt: skip


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("kind", sorted(TABLE_TYPES))
@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_we_start_and_records_move(spark, apache_hudi, tmp_path, kind, setup, index):
    """We create; Apache Hudi moves a key and inserts; we move keys (one back where it was, one
    into a new partition), delete one naming the wrong partition; Apache Hudi moves one we
    moved; after its compaction (merge-on-read) we move again."""
    turns = global_turns(spark, apache_hudi, tmp_path, kind, setup, index)
    turns.we_upsert([at(k, "xyz"[k % 3], f"a{k}", 1) for k in range(1, 10)])
    turns.they_write([at(1, "y", "b1", 2), at(7, "x", "b7", 2), at(10, "z", "b10", 2)],
                     turns.on_both_sides)  # fmt: skip
    turns.we_upsert([at(1, "x", "c1", 3), at(2, "w", "c2", 3), at(3, "y", "c3", 3, True),
                     at(4, "x", "c4", 3), at(11, "y", "c11", 3)])  # fmt: skip
    turns.we_delete([at(5, "w", "", 0)])
    turns.they_write([at(2, "x", "d2", 4), at(6, "z", "d6", 4), at(11, "w", "d11", 4)],
                     turns.on_both_sides)  # fmt: skip
    if kind == "mor":
        turns.they_compact()
    turns.we_upsert([at(2, "y", "e2", 5), at(11, "x", "e11", 5), at(12, "w", "e12", 5)])


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("kind", sorted(TABLE_TYPES))
@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_apache_hudi_starts_and_records_move(spark, apache_hudi, tmp_path, kind, setup, index):
    """Apache Hudi creates; we move keys (a batch naming one key in two partitions keeps the
    later one); Apache Hudi moves one back and deletes one by `_hoodie_is_deleted` in the wrong
    partition; we move again."""
    turns = global_turns(spark, apache_hudi, tmp_path, kind, setup, index)
    turns.they_write([at(k, "xyz"[k % 3], f"a{k}", 1) for k in range(1, 10)], turns.on_both_sides)
    turns.we_upsert([at(1, "z", "b1-old", 2), at(1, "w", "b1", 3), at(2, "x", "b2", 2),
                     at(10, "y", "b10", 2)])  # fmt: skip
    turns.they_write([at(1, "y", "c1", 4), at(3, "x", "c3", 4, True), at(4, "w", "c4", 4)],
                     turns.on_both_sides)  # fmt: skip
    turns.we_upsert([at(1, "x", "d1", 5), at(4, "y", "d4", 5), at(2, "x", "d2", 5)])

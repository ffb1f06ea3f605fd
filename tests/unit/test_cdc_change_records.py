"""The change records a rewrite logs (`hoodie.write.cdc_writer`): per mode the fields Apache
Hudi's `HoodieCDCLogger` writes (`u` before/after, `d` before, `i` after), images of the data
columns only, and the changes between two versions of a file group (compaction's case)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie import cdc
from hoodie.logformat import read_log_file
from hoodie.options.table import CdcSupplementalLoggingMode as Mode
from hoodie.schema import COMMIT_TIME, RECORD_KEY
from hoodie.write.cdc_writer import FileGroupChanges, change_records, image_schema

DATA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("ts", pa.int64()),
                  ("name", pa.string())])  # fmt: skip
INSTANT = "20261206202436131"


def _rows(rows: list[tuple], commit: str = "1") -> pa.Table:
    table = pa.Table.from_pylist([dict(zip(DATA.names, r)) for r in rows], schema=DATA)
    keys = pa.array([str(r[0]) for r in rows], pa.string())
    table = table.add_column(0, RECORD_KEY, keys)
    return table.add_column(0, COMMIT_TIME, pa.array([commit] * len(rows), pa.string()))


BEFORE = _rows([(1, "a", 1, "w"), (2, "a", 1, "x"), (3, "a", 1, "y")])
AFTER = _rows([(1, "a", 1, "w"), (2, "a", 2, "x2"), (4, "a", 2, "v")])
CHANGES = FileGroupChanges(
    updated=pa.array(["2"]), deleted=pa.array(["3"]), inserted=pa.array(["4"])
)


def _image(row: tuple) -> dict:
    return dict(zip(DATA.names, row))


EXPECTED = {
    Mode.DATA_BEFORE_AFTER: [
        {"op": "u", "ts_ms": INSTANT, "before": _image((2, "a", 1, "x")),
         "after": _image((2, "a", 2, "x2"))},
        {"op": "d", "ts_ms": INSTANT, "before": _image((3, "a", 1, "y")), "after": None},
        {"op": "i", "ts_ms": INSTANT, "before": None, "after": _image((4, "a", 2, "v"))},
    ],
    Mode.DATA_BEFORE: [
        {"op": "u", "record_key": "2", "before": _image((2, "a", 1, "x"))},
        {"op": "d", "record_key": "3", "before": _image((3, "a", 1, "y"))},
        {"op": "i", "record_key": "4", "before": None},
    ],
    Mode.OP_KEY_ONLY: [
        {"op": "u", "record_key": "2"},
        {"op": "d", "record_key": "3"},
        {"op": "i", "record_key": "4"},
    ],
}  # fmt: skip


@pytest.mark.parametrize("mode", list(Mode))
def test_change_records_per_mode_read_back_from_their_block(mode):
    records = change_records(mode, INSTANT, image_schema(AFTER.schema), CHANGES, BEFORE, AFTER)
    assert records.to_pylist() == EXPECTED[mode]
    schema = cdc.cdc_schema(mode, "t", image_schema(AFTER.schema))
    (block,) = read_log_file(cdc.cdc_data_block(records, INSTANT, schema))
    assert cdc.read_cdc_block(block).to_pylist() == EXPECTED[mode]


def test_no_changes_is_an_empty_block():
    none = FileGroupChanges(pa.array([], pa.string()), pa.array([], pa.string()),
                            pa.array([], pa.string()))  # fmt: skip
    records = change_records(Mode.DATA_BEFORE_AFTER, INSTANT, DATA, none, BEFORE, BEFORE)
    assert records.num_rows == 0
    schema = cdc.cdc_schema(Mode.DATA_BEFORE_AFTER, "t", DATA)
    (block,) = read_log_file(cdc.cdc_data_block(records, INSTANT, schema))
    assert cdc.read_cdc_block(block).num_rows == 0


def test_changes_between_two_versions():
    """Compaction's: rows written after the base file are updates or inserts, rows of the
    base file gone are deletes, rows kept as stored are no change."""
    after = _rows([(1, "a", 1, "w")], commit="1")
    after = pa.concat_tables([after, _rows([(2, "a", 2, "x2"), (4, "a", 2, "v")], commit="5")])
    changed = pa.array([False, True, True])
    changes = FileGroupChanges.between(BEFORE, after, changed)
    assert changes.updated.to_pylist() == ["2"]
    assert changes.deleted.to_pylist() == ["3"]
    assert changes.inserted.to_pylist() == ["4"]
    fresh = FileGroupChanges.between(None, after, changed)
    assert (fresh.updated.to_pylist(), fresh.inserted.to_pylist()) == ([], ["2", "4"])


def test_images_of_older_rows_lacking_a_new_column_are_null_there():
    wider = pa.schema([*DATA, ("extra", pa.int32())])
    records = change_records(Mode.DATA_BEFORE_AFTER, INSTANT, wider, CHANGES, BEFORE, AFTER)
    assert records.column("before")[0].as_py()["extra"] is None

"""CDC log files' format (`hoodie.cdc`, `naming`): the schemas Apache Hudi 1.2 wrote in the
probe's tables (docs/design/incremental-samples/runs/cdc-1.2.0-v8.txt), names, and blocks
that read back as written."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie import cdc, naming
from hoodie.exceptions import HoodieError, SchemaError, UnsupportedTableError
from hoodie.logformat import BlockType, read_log_file
from hoodie.options.table import CdcSupplementalLoggingMode as Mode
from hoodie.properties import TableProperties

RUNS = Path(__file__).parents[2] / "docs/design/incremental-samples/runs"
# The probe's table: id bigint, dt string, ts bigint, name string.
DATA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("ts", pa.int64()),
                  ("name", pa.string())])  # fmt: skip


def _schemas_apache_hudi_wrote() -> dict[tuple[str, ...], dict]:
    out = {}
    for line in (RUNS / "cdc-1.2.0-v8.txt").read_text().splitlines():
        line = line.strip()
        if line.startswith("SCHEMA=") and ("cdc_cow" in line or '"name":"Record"' in line):
            schema = json.loads(line.removeprefix("SCHEMA="))
            out[tuple(f["name"] for f in schema["fields"])] = schema
    return out


@pytest.mark.parametrize("mode", list(Mode))
def test_schemas_are_apache_hudis(mode):
    written = _schemas_apache_hudi_wrote()
    ours = cdc.cdc_schema(mode, "cdc_cow", DATA)
    assert ours == written[cdc.cdc_fields(mode)]


def test_meta_columns_stay_out_of_the_images():
    with_meta = pa.schema([("_hoodie_commit_time", pa.string()), *DATA])
    assert cdc.cdc_schema(Mode.DATA_BEFORE, "t", with_meta) == cdc.cdc_schema(
        Mode.DATA_BEFORE, "t", DATA
    )


def test_cdc_file_names():
    name = naming.cdc_log_file_name("b317dc67-db1d-4c20-bb50-d777fea9bb4f-0",
                                    "20261206202436131", "0-42-230")  # fmt: skip
    # as Apache Hudi named it in the probe's table
    assert name == ".b317dc67-db1d-4c20-bb50-d777fea9bb4f-0_20261206202436131.log.1_0-42-230.cdc"
    parsed = naming.parse_cdc_log_file_name(name)
    assert parsed == naming.LogFileName(
        "b317dc67-db1d-4c20-bb50-d777fea9bb4f-0", "20261206202436131", 1, "0-42-230"
    )
    # never a data log file, nor what makes a folder a partition
    assert naming.parse_log_file_name(name) is None
    assert not naming.marks_partition(name)
    data_log = naming.log_file_name("f-0", "20261206202436131", 1, "0-1-2")
    assert naming.parse_cdc_log_file_name(data_log) is None
    assert naming.parse_cdc_log_file_name(data_log + ".cdc.crc") is None


def _rows(mode: Mode) -> list[dict]:
    before = {"id": 2, "dt": "a", "ts": 1, "name": "x"}
    after = {"id": 2, "dt": "a", "ts": 2, "name": "x2"}
    if mode is Mode.OP_KEY_ONLY:
        return [{"op": "u", "record_key": "2"}, {"op": "i", "record_key": "5"}]
    if mode is Mode.DATA_BEFORE:
        return [{"op": "u", "record_key": "2", "before": before},
                {"op": "i", "record_key": "5", "before": None}]  # fmt: skip
    return [{"op": "u", "ts_ms": "20261206202436131", "before": before, "after": after},
            {"op": "d", "ts_ms": "20261206202436131", "before": after, "after": None}]  # fmt: skip


@pytest.mark.parametrize("mode", list(Mode))
def test_blocks_read_back(mode):
    schema = cdc.cdc_schema(mode, "t", DATA)
    block_bytes = cdc.cdc_data_block(_rows(mode), "20261206202436131", schema)
    (block,) = read_log_file(block_bytes)
    assert block.block_type == BlockType.CDC_DATA
    assert block.instant_time == "20261206202436131"
    assert json.loads(block.schema) == schema
    assert cdc.read_cdc_block(block).to_pylist() == _rows(mode)
    # an Arrow table of the records encodes the same bytes
    table = cdc.read_cdc_block(block)
    assert cdc.cdc_data_block(table, "20261206202436131", schema) == block_bytes
    with pytest.raises(HoodieError, match="cdc_records"):
        block.records()


def test_bad_records_are_refused():
    schema = cdc.cdc_schema(Mode.OP_KEY_ONLY, "t", DATA)
    with pytest.raises(SchemaError, match="op is 'x'"):
        cdc.cdc_data_block([{"op": "x", "record_key": "1"}], "1", schema)
    with pytest.raises(SchemaError, match="fields"):
        cdc.cdc_data_block([{"record_key": "1", "op": "i"}], "1", schema)


def test_table_properties_keep_cdc():
    base = {"hoodie.table.name": "t", "hoodie.table.version": "6",
            "hoodie.table.recordkey.fields": "id"}  # fmt: skip
    plain = TableProperties.from_dict(base)
    assert not plain.cdc_enabled and "hoodie.table.cdc.enabled" not in plain.to_dict()
    on = TableProperties.from_dict(
        {
            **base,
            "hoodie.table.cdc.enabled": "true",
            "hoodie.table.cdc.supplemental.logging.mode": "op_key_only",
        }  # fmt: skip
    )
    assert on.cdc_enabled and on.cdc_supplemental_logging_mode == "OP_KEY_ONLY"
    stored = on.to_dict()
    assert stored["hoodie.table.cdc.enabled"] == "true"
    assert stored["hoodie.table.cdc.supplemental.logging.mode"] == "OP_KEY_ONLY"
    again = TableProperties.from_dict(stored)
    assert (again.cdc_enabled, again.cdc_supplemental_logging_mode) == (True, "OP_KEY_ONLY")
    default_mode = TableProperties.from_dict({**base, "hoodie.table.cdc.enabled": "true"})
    assert default_mode.cdc_supplemental_logging_mode == "DATA_BEFORE_AFTER"
    with pytest.raises(UnsupportedTableError, match="supplemental.logging.mode=CDC_OP_KEY"):
        TableProperties.from_dict(
            {**base, "hoodie.table.cdc.supplemental.logging.mode": "cdc_op_key"}
        )

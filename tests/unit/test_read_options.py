"""Read options: Hudi's names, instant spellings, and clear errors for anything else."""

from __future__ import annotations

import pytest

from hoodie.exceptions import InvalidConfigError
from hoodie.read.options import ReadOptions, normalize_instant


@pytest.mark.parametrize(
    "text, expected",
    [
        ("20261120103000123", "20261120103000123"),
        ("20261120103000", "20261120103000000"),
        ("20261120", "20261120000000000"),
        ("2026-11-20 10:30:00", "20261120103000000"),
        ("2026-11-20 10:30:00.250", "20261120103000250"),
        ("2026-11-20T10:30:00", "20261120103000000"),
        ("2026-11-20", "20261120000000000"),
    ],
)
def test_instant_spellings(text, expected):
    assert normalize_instant(text, "as.of.instant") == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "20261399", "2026/11/20", ""])
def test_malformed_instants_name_the_option_and_value(text):
    with pytest.raises(InvalidConfigError, match=r"option 'as.of.instant'=.* is not an instant"):
        ReadOptions.parse({"as.of.instant": text})


def test_defaults_to_snapshot():
    assert ReadOptions.parse({"path": "/x"}) == ReadOptions()


def test_unknown_options_are_named_with_the_one_meant():
    with pytest.raises(InvalidConfigError, match=r"unknown read option\(s\) 'as.of.instnt'") as e:
        ReadOptions.parse({"as.of.instnt": "2026-01-01"})
    assert "(did you mean 'as.of.instant'?)" in str(e.value) and "docs/options.md" in str(e.value)


def test_query_type_is_checked():
    with pytest.raises(InvalidConfigError, match="must be one of snapshot, read_optimized"):
        ReadOptions.parse({"hoodie.datasource.query.type": "latest"})
    assert ReadOptions.parse({"hoodie.datasource.query.type": "READ_OPTIMIZED"}).query_type == (
        "read_optimized"
    )


def test_incremental_needs_a_begin_and_no_as_of():
    incremental = {"hoodie.datasource.query.type": "incremental"}
    with pytest.raises(InvalidConfigError, match="needs 'hoodie.datasource.read.begin"):
        ReadOptions.parse(incremental)
    with pytest.raises(InvalidConfigError, match="does not apply to incremental"):
        ReadOptions.parse({**incremental, "hoodie.datasource.read.begin.instanttime": "0",
                           "as.of.instant": "2026-01-01"})  # fmt: skip
    parsed = ReadOptions.parse({**incremental, "hoodie.datasource.read.begin.instanttime": "0"})
    assert parsed.begin_instant == "0" * 17 and parsed.end_instant is None


def test_range_options_need_incremental_and_order():
    with pytest.raises(InvalidConfigError, match="apply to incremental reads only"):
        ReadOptions.parse({"hoodie.datasource.read.begin.instanttime": "20260101"})
    with pytest.raises(InvalidConfigError, match="must be after"):
        ReadOptions.parse(
            {
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": "20260102",
                "hoodie.datasource.read.end.instanttime": "20260101",
            }
        )


def test_task_sizing_options_are_positive_whole_numbers():
    parsed = ReadOptions.parse(
        {"hoodie.read.max.partition.bytes": "1048576", "hoodie.read.parallelism": " 8 "}
    )
    assert (parsed.max_partition_bytes, parsed.parallelism) == (1048576, 8)
    assert ReadOptions.parse({}).parallelism is None
    for option in ("hoodie.read.max.partition.bytes", "hoodie.read.parallelism"):
        for bad in ("0", "-1", "1.5", "lots"):
            with pytest.raises(InvalidConfigError, match=rf"'{option}'=.* positive whole number"):
                ReadOptions.parse({option: bad})

"""A read plan handed to the data source as an option (`hoodie.read.planned`) comes back the
same: the data source then reads exactly the slices `HoodieTable.read` planned."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hoodie.exceptions import InvalidConfigError
from hoodie.fs_view import CommittedInstants
from hoodie.read.datasource import decode_plan, encode_plan
from hoodie.read.planner import FileSplit, ReadPlan

instants = st.text("0123456789", min_size=17, max_size=17)
names = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
splits = st.builds(
    FileSplit,
    partition_path=names,
    file_id=names,
    base_file=st.none() | names,
    log_files=st.lists(names, max_size=3).map(tuple),
    size=st.integers(0, 2**40),
)
committed = st.builds(
    CommittedInstants,
    completed=st.frozensets(instants, max_size=4),
    timeline_start=st.none() | instants,
    pending=st.frozensets(instants, max_size=2),
    as_of=st.none() | instants,
    layout_version=st.sampled_from([1, 2]),
)
plans = st.builds(
    ReadPlan,
    splits=st.lists(splits, max_size=5),
    as_of=st.none() | instants,
    commit_time_range=st.none() | st.tuples(instants, instants),
    commit_times=st.none() | st.frozensets(instants, max_size=3),
    partitions_pruned=st.integers(0, 100),
    merge_logs=st.booleans(),
    instants=st.lists(instants, max_size=3),
    committed=st.none() | committed,
)


@given(plans)
def test_a_plan_survives_the_option(plan):
    text = encode_plan(plan)
    assert text.isascii()
    assert decode_plan(text) == plan


def test_the_option_is_compressed():
    """PySpark pickles a data source's options into every read task: the text of a plan of
    many slices is a fraction of its JSON."""
    many = [
        FileSplit(
            f"2026/11/{day:02d}",
            f"{n:08x}-1f2e-4d3c-9b8a-{n:012x}-0",
            f"2026/11/{day:02d}/{n:08x}-1f2e-4d3c-9b8a-{n:012x}-0_1-2-3_20261126101010101.parquet",
            (),
            128 << 20,
        )
        for day in range(1, 31)
        for n in range(day * 100, day * 100 + 40)
    ]
    plan = ReadPlan(many, "20261126101010101", merge_logs=True)
    assert len(encode_plan(plan)) < len(plan.to_json()) / 3


@pytest.mark.parametrize(
    "text", ["", "not base64!", "aGVsbG8=", encode_plan(ReadPlan([], None))[:-8]]
)
def test_a_plan_that_is_not_one_is_refused_naming_the_option(text):
    with pytest.raises(InvalidConfigError, match="option 'hoodie.read.planned' is not a read plan"):
        decode_plan(text)

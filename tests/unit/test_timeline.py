"""The timeline: instant file names (layouts 1 and 2), loading the timeline, new instant times."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta, timezone

import pytest

from hoodie.storage import FileInfo, load_file_io
from hoodie.timeline import (
    LAYOUT_V1,
    LAYOUT_V2,
    Action,
    Instant,
    State,
    Timeline,
    instant_to_datetime,
    layout_of,
    new_instant_time,
)

T = "20240418172804498"
A, R, IN, C = Action, State.REQUESTED, State.INFLIGHT, State.COMPLETED


# -- file names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        (f"{T}.commit", Instant(T, A.COMMIT, C)),
        (f"{T}.inflight", Instant(T, A.COMMIT, IN)),
        (f"{T}.commit.requested", Instant(T, A.COMMIT, R)),
        (f"{T}.deltacommit", Instant(T, A.DELTA_COMMIT, C)),
        (f"{T}.deltacommit.inflight", Instant(T, A.DELTA_COMMIT, IN)),
        (f"{T}.deltacommit.requested", Instant(T, A.DELTA_COMMIT, R)),
        (f"{T}.replacecommit", Instant(T, A.REPLACE_COMMIT, C)),
        (f"{T}.replacecommit.inflight", Instant(T, A.REPLACE_COMMIT, IN)),
        (f"{T}.replacecommit.requested", Instant(T, A.REPLACE_COMMIT, R)),
        (f"{T}.clean", Instant(T, A.CLEAN, C)),
        (f"{T}.clean.inflight", Instant(T, A.CLEAN, IN)),
        (f"{T}.clean.requested", Instant(T, A.CLEAN, R)),
        (f"{T}.rollback", Instant(T, A.ROLLBACK, C)),
        (f"{T}.rollback.inflight", Instant(T, A.ROLLBACK, IN)),
        (f"{T}.rollback.requested", Instant(T, A.ROLLBACK, R)),
        (f"{T}.compaction.requested", Instant(T, A.COMPACTION, R)),
        (f"{T}.compaction.inflight", Instant(T, A.COMPACTION, IN)),
        (f"{T}.logcompaction.requested", Instant(T, A.LOG_COMPACTION, R)),
        (f"{T}.logcompaction.inflight", Instant(T, A.LOG_COMPACTION, IN)),
        (f"{T}.savepoint", Instant(T, A.SAVEPOINT, C)),
        (f"{T}.savepoint.inflight", Instant(T, A.SAVEPOINT, IN)),
        (f"{T}.restore", Instant(T, A.RESTORE, C)),
        (f"{T}.restore.inflight", Instant(T, A.RESTORE, IN)),
        (f"{T}.restore.requested", Instant(T, A.RESTORE, R)),
        (f"{T}.indexing", Instant(T, A.INDEXING, C)),
        (f"{T}.indexing.requested", Instant(T, A.INDEXING, R)),
        # Older 14-digit (second precision) instants are still instants.
        ("20220101120000.commit", Instant("20220101120000", A.COMMIT, C)),
    ],
)
def test_parse_file_name(name, expected):
    assert LAYOUT_V1.parse_file_name(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "hoodie.properties",
        "hoodie.properties.backup",
        "archived",
        ".aux",
        ".temp",
        ".schema",
        f".{T}.commit.crc",
        f"{T}.commit.crc",
        f"{T}",
        f"{T}.",
        f"{T}.unknownaction",
        f"{T}.commit.done",
        f"{T}.deltacommit.completed",
        "abc.commit",
        "2024041817280449x.commit",
        "",
    ],
)
def test_parse_file_name_non_instants(name):
    assert LAYOUT_V1.parse_file_name(name) is None


@pytest.mark.parametrize(
    "instant, name",
    [
        (Instant(T, A.COMMIT, R), f"{T}.commit.requested"),
        (Instant(T, A.COMMIT, IN), f"{T}.inflight"),
        (Instant(T, A.COMMIT, C), f"{T}.commit"),
        (Instant(T, A.DELTA_COMMIT, R), f"{T}.deltacommit.requested"),
        (Instant(T, A.DELTA_COMMIT, IN), f"{T}.deltacommit.inflight"),
        (Instant(T, A.DELTA_COMMIT, C), f"{T}.deltacommit"),
        (Instant(T, A.REPLACE_COMMIT, IN), f"{T}.replacecommit.inflight"),
        (Instant(T, A.COMPACTION, R), f"{T}.compaction.requested"),
        (Instant(T, A.COMPACTION, IN), f"{T}.compaction.inflight"),
        (Instant(T, A.COMPACTION, C), f"{T}.commit"),
        (Instant(T, A.LOG_COMPACTION, IN), f"{T}.logcompaction.inflight"),
        (Instant(T, A.LOG_COMPACTION, C), f"{T}.deltacommit"),
        (Instant(T, A.CLEAN, C), f"{T}.clean"),
        (Instant(T, A.ROLLBACK, IN), f"{T}.rollback.inflight"),
    ],
)
def test_file_name(instant, name):
    assert LAYOUT_V1.file_name(instant) == name


@pytest.mark.parametrize("action, state", list(itertools.product(list(Action), list(State))))
def test_file_name_round_trip(action, state):
    instant = Instant(T, action, state)
    parsed = LAYOUT_V1.parse_file_name(LAYOUT_V1.file_name(instant))
    if state is C:
        assert parsed == Instant(T, action.completes_as, C)
    else:
        assert parsed == instant
    assert parsed.is_completed is (state is C)


# -- layout 2 (table versions 8 and 9): `.hoodie/timeline/`, completion times in names ------------
DONE = "20240418172805001"


@pytest.mark.parametrize(
    "name, expected",
    [
        (f"{T}_{DONE}.commit", Instant(T, A.COMMIT, C, DONE)),
        (f"{T}.inflight", Instant(T, A.COMMIT, IN)),
        (f"{T}.commit.requested", Instant(T, A.COMMIT, R)),
        (f"{T}_{DONE}.deltacommit", Instant(T, A.DELTA_COMMIT, C, DONE)),
        (f"{T}.deltacommit.inflight", Instant(T, A.DELTA_COMMIT, IN)),
        (f"{T}.clustering.requested", Instant(T, A.CLUSTERING, R)),
        (f"{T}_{DONE}.replacecommit", Instant(T, A.REPLACE_COMMIT, C, DONE)),
        (f"{T}.compaction.inflight", Instant(T, A.COMPACTION, IN)),
        (f"{T}_{DONE}.rollback", Instant(T, A.ROLLBACK, C, DONE)),
        (f"{T}_{DONE}.indexing", Instant(T, A.INDEXING, C, DONE)),
        # A completed instant Hudi's upgrade left without a completion time ("legacy").
        (f"{T}.commit", Instant(T, A.COMMIT, C)),
    ],
)
def test_layout_2_file_names(name, expected):
    parsed = LAYOUT_V2.parse_file_name(name)
    assert parsed == expected and parsed.completion_time == expected.completion_time


@pytest.mark.parametrize(
    "name", [f"{T}_{DONE}.commit.requested", f"{T}_x.commit", f"{T}_{DONE}.unknown", "history"]
)
def test_layout_2_non_instants(name):
    assert LAYOUT_V2.parse_file_name(name) is None


def test_layout_1_has_no_completion_times():
    assert LAYOUT_V1.parse_file_name(f"{T}_{DONE}.commit") is None


@pytest.mark.parametrize("action, state", list(itertools.product(list(Action), list(State))))
def test_layout_2_round_trip(action, state):
    instant = Instant(T, action, state, DONE if state is C else None)
    parsed = LAYOUT_V2.parse_file_name(LAYOUT_V2.file_name(instant))
    expected_action = action.completes_as if state is C else action
    assert parsed == Instant(T, expected_action, state)
    assert parsed.completion_time == instant.completion_time


def test_layout_2_refuses_to_name_a_completed_instant_without_its_completion_time():
    with pytest.raises(ValueError, match="completion time"):
        LAYOUT_V2.file_name(Instant(T, A.COMMIT, C))


def test_layouts_by_version_and_folder():
    assert layout_of(1) is LAYOUT_V1 and layout_of(2) is LAYOUT_V2
    assert (LAYOUT_V1.folder, LAYOUT_V2.folder) == (".hoodie", ".hoodie/timeline")
    assert LAYOUT_V2.path(Instant(T, A.CLEAN, R)) == f".hoodie/timeline/{T}.clean.requested"
    with pytest.raises(ValueError):
        layout_of(3)


def test_completion_times_do_not_change_what_an_instant_is():
    assert Instant(T, A.COMMIT, C, DONE) == Instant(T, A.COMMIT, C)
    timeline = Timeline([Instant(T, A.COMMIT, C, DONE), Instant(DONE, A.CLEAN, IN)], LAYOUT_V2)
    assert timeline.completion_times() == {T: DONE}
    assert timeline.completed.layout is LAYOUT_V2


def test_a_savepoint_does_not_stand_for_the_completion_of_the_commit_it_pins():
    """A savepoint has its commit's time; taken later, it completes later. Found upgrading a
    savepointed table: the commit took the savepoint's completion time, so an incremental read
    missed it (and a delta commit's log files would have joined a later slice)."""
    later = "20240419000000000"
    timeline = Timeline(
        [Instant(T, A.DELTA_COMMIT, C, DONE), Instant(T, A.SAVEPOINT, C, later)], LAYOUT_V2
    )
    assert timeline.completion_times() == {T: DONE}


def test_with_state():
    instant = Instant(T, A.DELTA_COMMIT, R)
    assert instant.with_state(IN) == Instant(T, A.DELTA_COMMIT, IN)
    assert instant.with_state(C).is_completed
    assert not instant.is_completed


# -- loading -------------------------------------------------------------------------------------


def test_load_cow_fixture(sample_table):
    root = sample_table("sample_table/cow/v6_simplekeygen_nonhivestyle")
    timeline = Timeline.load(load_file_io(str(root)))
    expected = [
        Instant("20240418172802262", A.COMMIT, C),
        Instant("20240418172804498", A.COMMIT, C),
    ]
    assert list(timeline) == expected
    assert list(timeline.completed) == expected
    assert len(timeline.pending) == 0
    assert list(timeline.write_timeline) == expected
    assert timeline.latest() == expected[-1]
    assert timeline.last_timestamp() == "20240418172804498"
    assert timeline.before_or_at("20240418172803000").timestamps() == ["20240418172802262"]
    assert timeline.before_or_at("20240418172802262").timestamps() == ["20240418172802262"]
    assert timeline.before_or_at("20240418172802261").timestamps() == []


def test_load_empty_fixture(sample_table):
    root = sample_table("sample_table/cow/v6_empty")
    timeline = Timeline.load(load_file_io(str(root)))
    assert len(timeline) == 0
    assert timeline.latest() is None
    assert timeline.last_timestamp() is None


def test_load_mor_rollback_fixture(sample_table):
    root = sample_table("sample_table/mor/parquet/v6_nonpartitioned_rollback")
    timeline = Timeline.load(load_file_io(str(root)))
    assert list(timeline) == [
        Instant("20250126040823628", A.DELTA_COMMIT, C),
        Instant("20250126040936578", A.ROLLBACK, C),
        Instant("20250126060846931", A.DELTA_COMMIT, C),
    ]
    assert timeline.write_timeline.timestamps() == ["20250126040823628", "20250126060846931"]


def _touch(root, *names):
    meta = root / ".hoodie"
    meta.mkdir(parents=True, exist_ok=True)
    for name in names:
        (meta / name).write_bytes(b"")


def test_load_completed_compaction_collapses_to_commit(tmp_path):
    t = "20240101000000001"
    _touch(tmp_path, f"{t}.compaction.requested", f"{t}.compaction.inflight", f"{t}.commit")
    timeline = Timeline.load(load_file_io(str(tmp_path)))
    assert list(timeline) == [Instant(t, A.COMMIT, C)]
    assert list(timeline.write_timeline) == [Instant(t, A.COMMIT, C)]


def test_load_completed_log_compaction_collapses_to_delta_commit(tmp_path):
    t = "20240101000000001"
    _touch(
        tmp_path, f"{t}.logcompaction.requested", f"{t}.logcompaction.inflight", f"{t}.deltacommit"
    )
    assert list(Timeline.load(load_file_io(str(tmp_path)))) == [Instant(t, A.DELTA_COMMIT, C)]


class _ListedStorage:
    """A storage stand-in that lists `.hoodie/` files in a chosen order."""

    def __init__(self, names):
        self.names = names

    def list_files(self, relative="", *, recursive=False):
        assert relative == ".hoodie"
        return [FileInfo(f".hoodie/{n}", 0) for n in self.names]


@pytest.mark.parametrize(
    "order",
    list(itertools.permutations(["1.compaction.requested", "1.compaction.inflight", "1.commit"])),
)
def test_load_compaction_independent_of_listing_order(order):
    timeline = Timeline.load(_ListedStorage(list(order)))
    assert list(timeline) == [Instant("1", A.COMMIT, C)]


@pytest.mark.parametrize(
    "names, expected",
    [
        (["1.commit.requested", "1.inflight", "1.commit"], Instant("1", A.COMMIT, C)),
        (["1.inflight", "1.commit.requested"], Instant("1", A.COMMIT, IN)),
        (["1.deltacommit.inflight", "1.deltacommit.requested"], Instant("1", A.DELTA_COMMIT, IN)),
        (["1.clean.requested"], Instant("1", A.CLEAN, R)),
    ],
)
def test_load_newest_state_wins(names, expected):
    for order in itertools.permutations(names):
        assert list(Timeline.load(_ListedStorage(list(order)))) == [expected]


def test_load_pending_and_completed(tmp_path):
    done, pending, compaction = "20240101000000001", "20240101000000002", "20240101000000003"
    _touch(
        tmp_path,
        f"{done}.deltacommit.requested",
        f"{done}.deltacommit.inflight",
        f"{done}.deltacommit",
        f"{pending}.deltacommit.requested",
        f"{pending}.deltacommit.inflight",
        f"{compaction}.compaction.requested",
        "hoodie.properties",
    )
    (tmp_path / ".hoodie" / "archived").mkdir()
    # Files in sub-folders (archive, metadata table) are not on this timeline.
    (tmp_path / ".hoodie" / "archived" / "20230101000000000.commit").write_bytes(b"")
    timeline = Timeline.load(load_file_io(str(tmp_path)))
    assert list(timeline) == [
        Instant(done, A.DELTA_COMMIT, C),
        Instant(pending, A.DELTA_COMMIT, IN),
        Instant(compaction, A.COMPACTION, R),
    ]
    assert list(timeline.completed) == [Instant(done, A.DELTA_COMMIT, C)]
    assert list(timeline.pending) == [
        Instant(pending, A.DELTA_COMMIT, IN),
        Instant(compaction, A.COMPACTION, R),
    ]
    # A pending write instant is in the write timeline, but not in its completed part.
    assert timeline.write_timeline.timestamps() == [done, pending]
    assert timeline.completed.write_timeline.timestamps() == [done]


def test_load_without_metafolder(tmp_path):
    assert len(Timeline.load(load_file_io(str(tmp_path)))) == 0


def test_timeline_is_sorted():
    timeline = Timeline(
        [Instant("3", A.COMMIT, C), Instant("1", A.CLEAN, C), Instant("2", A.COMMIT, IN)]
    )
    assert timeline.timestamps() == ["1", "2", "3"]
    assert timeline.filter(lambda i: i.action is A.COMMIT).timestamps() == ["2", "3"]


# -- new instant times ---------------------------------------------------------------------------


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def test_new_instant_time_format_and_clock():
    before = datetime.now(timezone.utc)
    stamp = new_instant_time()
    after = datetime.now(timezone.utc)
    assert re.fullmatch(r"\d{17}", stamp)
    moment = instant_to_datetime(stamp)
    assert before - timedelta(milliseconds=1) <= moment <= after


def test_new_instant_time_strictly_increasing():
    stamps = [new_instant_time() for _ in range(50)]
    assert all(re.fullmatch(r"\d{17}", s) for s in stamps)
    assert all(a < b for a, b in zip(stamps, stamps[1:]))


@pytest.mark.parametrize("initial", ["00000000000000000", "00000000000000001", "00000000000000010"])
def test_new_instant_time_after_an_initialization_instant(initial):
    """Apache Hudi's initialization instants (zeros, the metadata table's next ones a
    millisecond later) are no date: a new instant comes after them at the clock's time."""
    stamp = new_instant_time(after=initial)
    assert re.fullmatch(r"\d{17}", stamp) and stamp > initial
    assert abs(instant_to_datetime(stamp) - datetime.now(timezone.utc)) < timedelta(seconds=5)


def test_new_instant_time_after():
    previous = _stamp(datetime.now(timezone.utc) - timedelta(seconds=1))
    for _ in range(50):
        stamp = new_instant_time(after=previous)
        assert re.fullmatch(r"\d{17}", stamp)
        assert stamp > previous
        previous = stamp


def test_new_instant_time_after_future_floor_waits():
    floor = _stamp(datetime.now(timezone.utc) + timedelta(milliseconds=40))
    stamp = new_instant_time(after=floor)
    assert stamp > floor
    assert len(stamp) == 17


def test_new_instant_time_after_old_floor():
    assert new_instant_time(after="20200101000000000") > "20200101000000000"


def test_instant_to_datetime():
    assert instant_to_datetime("20240418172804498") == datetime(
        2024, 4, 18, 17, 28, 4, 498000, tzinfo=timezone.utc
    )
    assert instant_to_datetime("20240418172804") == datetime(
        2024, 4, 18, 17, 28, 4, tzinfo=timezone.utc
    )

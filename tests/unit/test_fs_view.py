"""The file-system view over real Apache Hudi tables: which base files a snapshot reads."""

from __future__ import annotations

import json
import shutil

import pytest

from hoodie.fs_view import FileSystemView
from hoodie.storage import load_file_io
from hoodie.timeline import Timeline

COW_NONHIVE = "sample_table/cow/v6_simplekeygen_nonhivestyle"
FIRST, SECOND = "20240418172802262", "20240418172804498"
FID_10 = "97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0"
FID_20 = "76e0556b-390d-4249-b7ad-9059e2bc2cbd-0"
FID_30 = "6db57019-98ee-480e-8eb1-fb3de48e1c24-0"
LATEST_FILES = [
    f"10/{FID_10}_0-119-166_{SECOND}.parquet",
    f"20/{FID_20}_0-98-141_{FIRST}.parquet",
    f"30/{FID_30}_1-119-167_{SECOND}.parquet",
]


def _view(root, as_of=None) -> FileSystemView:
    storage = load_file_io(str(root))
    return FileSystemView(storage, Timeline.load(storage), as_of=as_of)


def _paths(base_files) -> list[str]:
    return [b.relative_path for b in base_files]


@pytest.fixture
def cow(sample_table):
    return sample_table(COW_NONHIVE)


def test_partitions_nonhivestyle(cow):
    assert _view(cow).partitions() == ["10", "20", "30"]


def test_partitions_hivestyle(sample_table):
    root = sample_table("sample_table/cow/v6_simplekeygen_hivestyle_no_metafields")
    assert _view(root).partitions() == ["byteField=10", "byteField=20", "byteField=30"]


def test_partitions_nonpartitioned(sample_table):
    root = sample_table("sample_table/cow/v6_nonpartitioned")
    view = _view(root)
    assert view.partitions() == [""]
    assert _paths(view.latest_base_files()) == [
        "a079bdb3-731c-4894-b855-abfcd6921007-0_0-203-274_20240418173551906.parquet"
    ]


def test_empty_table(sample_table):
    view = _view(sample_table("sample_table/cow/v6_empty"))
    assert view.partitions() == []
    assert view.file_groups() == []
    assert view.latest_base_files() == []


def test_latest_base_files_picks_newest_committed_version(cow):
    view = _view(cow)
    files = view.latest_base_files()
    assert _paths(files) == LATEST_FILES
    latest_10 = files[0]
    assert (latest_10.partition_path, latest_10.file_id, latest_10.instant) == (
        "10",
        FID_10,
        SECOND,
    )
    assert latest_10.size == (cow / latest_10.relative_path).stat().st_size


def test_file_groups_hold_all_committed_versions_oldest_first(cow):
    groups = {(g.partition_path, g.file_id): g for g in _view(cow).file_groups()}
    assert sorted(groups) == [("10", FID_10), ("20", FID_20), ("30", FID_30)]
    group_10 = groups[("10", FID_10)]
    assert [s.base_instant for s in group_10.slices] == [FIRST, SECOND]
    assert group_10.latest_slice.base_file.name == f"{FID_10}_0-119-166_{SECOND}.parquet"
    assert all(s.log_files == [] for g in groups.values() for s in g.slices)


def test_latest_base_files_for_some_partitions(cow):
    view = _view(cow)
    assert _paths(view.latest_base_files(["10"])) == LATEST_FILES[:1]
    assert _paths(view.latest_base_files(["20", "30"])) == LATEST_FILES[1:]
    assert view.latest_base_files(["40"]) == []


def test_as_of_older_instant_gives_older_version(cow):
    view = _view(cow, as_of=FIRST)
    assert view.timeline.timestamps() == [FIRST]
    assert _paths(view.latest_base_files()) == [
        f"10/{FID_10}_1-98-142_{FIRST}.parquet",
        f"20/{FID_20}_0-98-141_{FIRST}.parquet",
    ]


def test_as_of_between_and_after_instants(cow):
    between = _view(cow, as_of="20240418172803000")
    assert _paths(between.latest_base_files()) == _paths(
        _view(cow, as_of=FIRST).latest_base_files()
    )
    assert _paths(_view(cow, as_of="20991231000000000").latest_base_files()) == LATEST_FILES
    assert _view(cow, as_of="20240101000000000").latest_base_files() == []


def _fake_write(root, partition: str, source: str, instant: str, *states: str) -> str:
    """Copy a base file under a new instant's name and add the given meta files for it."""
    file_id = source.split("_")[0]
    name = f"{file_id}_0-999-999_{instant}.parquet"
    shutil.copy(root / partition / source, root / partition / name)
    for state in states:
        (root / ".hoodie" / f"{instant}.{state}").write_text("")
    return f"{partition}/{name}"


def test_base_file_of_inflight_instant_is_ignored(cow):
    new = "20240418180000000"
    _fake_write(
        cow, "20", f"{FID_20}_0-98-141_{FIRST}.parquet", new, "commit.requested", "inflight"
    )
    view = _view(cow)
    assert view.timeline.timestamps() == [FIRST, SECOND]
    assert _paths(view.latest_base_files()) == LATEST_FILES
    groups = {g.file_id: g for g in view.file_groups()}
    assert [s.base_instant for s in groups[FID_20].slices] == [FIRST]


def test_base_file_of_requested_or_unknown_instant_is_ignored(cow):
    source = f"{FID_20}_0-98-141_{FIRST}.parquet"
    _fake_write(cow, "20", source, "20240418180000000", "commit.requested")
    _fake_write(cow, "20", source, "20240418190000000")  # no meta file at all
    assert _paths(_view(cow).latest_base_files()) == LATEST_FILES


def test_base_file_counts_once_its_instant_completes(cow):
    new = "20240418180000000"
    path = _fake_write(
        cow, "20", f"{FID_20}_0-98-141_{FIRST}.parquet", new, "commit.requested", "inflight"
    )
    assert path not in _paths(_view(cow).latest_base_files())
    (cow / ".hoodie" / f"{new}.commit").write_text("{}")
    latest = _paths(_view(cow).latest_base_files())
    assert latest == [LATEST_FILES[0], path, LATEST_FILES[2]]
    # And time travel to before it still reads the old file.
    assert _paths(_view(cow, as_of=SECOND).latest_base_files()) == LATEST_FILES


def _replace(root, instant: str, replaced: dict[str, list[str]], complete: bool) -> None:
    body = json.dumps(
        {
            "partitionToWriteStats": {},
            "partitionToReplaceFileIds": replaced,
            "compacted": False,
            "extraMetadata": {},
            "operationType": "INSERT_OVERWRITE",
        }
    )
    meta = root / ".hoodie"
    (meta / f"{instant}.replacecommit.requested").write_text("")
    (meta / f"{instant}.replacecommit.inflight").write_text(body)
    if complete:
        (meta / f"{instant}.replacecommit").write_text(body)


def test_completed_replace_commit_hides_replaced_file_groups(cow):
    replace = "20240418180000000"
    _replace(cow, replace, {"20": [FID_20], "10": []}, complete=True)
    view = _view(cow)
    assert view.replaced_file_ids == {("20", FID_20)}
    assert _paths(view.latest_base_files()) == [LATEST_FILES[0], LATEST_FILES[2]]
    # Before the replace, the file group is still there.
    assert _paths(_view(cow, as_of=SECOND).latest_base_files()) == LATEST_FILES


def test_pending_replace_commit_hides_nothing(cow):
    _replace(cow, "20240418180000000", {"20": [FID_20]}, complete=False)
    view = _view(cow)
    assert view.replaced_file_ids == set()
    assert _paths(view.latest_base_files()) == LATEST_FILES


def test_merge_on_read_log_files_join_their_slice(sample_table):
    root = sample_table("sample_table/mor/parquet/v6_nonpartitioned_rollback")
    (group,) = _view(root).file_groups()
    assert group.partition_path == ""
    assert group.file_id == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
    (file_slice,) = group.slices
    assert file_slice.base_instant == "20250126040823628"
    assert file_slice.base_file.name.endswith("_20250126040823628.parquet")
    assert [lf.version for lf in file_slice.log_files] == [1, 2, 3]
    assert all(lf.instant == "20250126040823628" for lf in file_slice.log_files)


def test_merge_on_read_partitioned(sample_table):
    root = sample_table("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle")
    view = _view(root)
    assert view.partitions() == ["10", "20", "30"]
    groups = {g.partition_path: g for g in view.file_groups()}
    assert len(groups["10"].latest_slice.log_files) == 1
    assert groups["20"].latest_slice.log_files == []
    assert len(view.latest_base_files()) == 3


def test_partitions_with_base_format_partition_metafile(cow):
    (cow / "30" / ".hoodie_partition_metadata").rename(
        cow / "30" / ".hoodie_partition_metadata.parquet"
    )
    assert _view(cow).partitions() == ["10", "20", "30"]

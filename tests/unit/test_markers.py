"""Write markers: announced data files of an instant, found without listing the table."""

from __future__ import annotations

from hoodie.markers import IOType, Marker, WriteMarkers
from hoodie.storage import load_file_io


def test_markers_name_their_data_files_and_io_types(tmp_path):
    storage = load_file_io(str(tmp_path))
    markers = WriteMarkers(storage, "20240101000000000")
    assert markers.all() == []
    markers.create("2024/01/01/f1-0_0-1-0_20240101000000000.parquet", IOType.CREATE)
    markers.create("2024/01/01/.f2-0_20231231000000000.log.3_1-2-0", IOType.APPEND)
    markers.create("f3-0_0-1-0_20240101000000000.parquet", IOType.MERGE)
    markers.create("f3-0_0-1-0_20240101000000000.parquet", IOType.MERGE)  # a retry: same marker
    assert markers.all() == [
        Marker("2024/01/01/.f2-0_20231231000000000.log.3_1-2-0", IOType.APPEND),
        Marker("2024/01/01/f1-0_0-1-0_20240101000000000.parquet", IOType.CREATE),
        Marker("f3-0_0-1-0_20240101000000000.parquet", IOType.MERGE),
    ]
    # Hudi's DIRECT marker layout.
    assert (
        tmp_path / ".hoodie/.temp/20240101000000000/2024/01/01/"
        "f1-0_0-1-0_20240101000000000.parquet.marker.CREATE"
    ).is_file()
    # Other instants' markers are separate.
    assert WriteMarkers(storage, "20240102000000000").all() == []
    markers.delete_all()
    assert markers.all() == []
    assert not (tmp_path / ".hoodie/.temp/20240101000000000").exists()


def test_strays_are_the_marked_files_no_stat_names_cdc_files_included(tmp_path):
    """A retried task's base file and `.cdc` file are strays; the `.cdc` files a stat's
    cdcStats names stay with its base file."""
    from hoodie.metadata import CommitMetadata, WriteStat

    storage = load_file_io(str(tmp_path))
    instant = "20240101000000000"
    markers = WriteMarkers(storage, instant)
    kept = ["a/f-0_0-1-1_20240101000000000.parquet", "a/.f-0_20240101000000000.log.1_0-1-1.cdc"]
    strays = ["a/f-0_0-1-0_20240101000000000.parquet", "a/.f-0_20240101000000000.log.1_0-1-0.cdc"]
    for path in kept + strays:
        markers.create(path, IOType.CREATE)
        storage.write_bytes(path, b"x")
    metadata = CommitMetadata()
    metadata.add(WriteStat("f-0", "a", kept[0], cdc_stats={kept[1]: 1}))
    markers.delete_strays(metadata)
    assert [storage.exists(p) for p in kept + strays] == [True, True, False, False]

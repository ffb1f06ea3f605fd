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

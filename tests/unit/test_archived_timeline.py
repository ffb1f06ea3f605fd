"""The archived timeline of layout 2 (Hudi 1.x's LSM timeline), read as Apache Hudi writes it.

No sample table carries archived instants, so these tables are laid out here after Hudi's
`LSMTimelineWriter`: parquet files of `HoodieLSMTimelineInstant` rows, `manifest_<n>` listing
the files of snapshot n, `_version_` naming the latest n.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.archived_timeline import ArchivedInstant, archived_instants
from hoodie.storage import load_file_io
from hoodie.timeline import LAYOUT_V1, LAYOUT_V2

HISTORY = ".hoodie/timeline/history"


def _history_file(root, name: str, instants: list[tuple[str, str, str]]) -> None:
    rows = pa.table(
        {
            "instantTime": [t for t, _, _ in instants],
            "completionTime": [c for _, c, _ in instants],
            "action": [a for _, _, a in instants],
            "metadata": pa.array([b"Obj\x01..."] * len(instants), pa.binary()),
            "plan": pa.array([None] * len(instants), pa.binary()),
            "version": pa.array([1] * len(instants), pa.int32()),
        }
    )
    (root / HISTORY).mkdir(parents=True, exist_ok=True)
    pq.write_table(rows, root / HISTORY / name)


def _manifest(root, version: int, *files: str) -> None:
    entries = [{"fileName": f, "fileLen": (root / HISTORY / f).stat().st_size} for f in files]
    (root / HISTORY / f"manifest_{version}").write_text(json.dumps({"files": entries}, indent=2))


OLD = [
    ("20250101000000000", "20250101000000500", "commit"),
    ("20250101000001000", "20250101000001200", "clean"),
]
NEW = [("20250101000002000", "20250101000002100", "deltacommit")]


def test_the_latest_manifest_names_the_archived_instants(tmp_path):
    _history_file(tmp_path, "20250101000000000_20250101000001000_0.parquet", OLD)
    _history_file(tmp_path, "20250101000002000_20250101000002000_0.parquet", NEW)
    _manifest(tmp_path, 1, "20250101000000000_20250101000001000_0.parquet")
    _manifest(tmp_path, 2, "20250101000000000_20250101000001000_0.parquet",
              "20250101000002000_20250101000002000_0.parquet")  # fmt: skip
    (tmp_path / HISTORY / "_version_").write_text("2")
    found = archived_instants(load_file_io(str(tmp_path)), LAYOUT_V2)
    assert found == [ArchivedInstant(t, a, "COMPLETED", c) for t, c, a in OLD + NEW]
    # Snapshot 1 is what a reader saw before the second archival.
    (tmp_path / HISTORY / "_version_").write_text("1")
    assert [i.timestamp for i in archived_instants(load_file_io(str(tmp_path)), LAYOUT_V2)] == [
        t for t, _, _ in OLD
    ]


def test_without_a_version_file_the_largest_manifest_counts(tmp_path):
    _history_file(tmp_path, "a_0.parquet", OLD)
    _history_file(tmp_path, "b_0.parquet", NEW)
    _manifest(tmp_path, 1, "a_0.parquet")
    _manifest(tmp_path, 2, "a_0.parquet", "b_0.parquet")
    assert len(archived_instants(load_file_io(str(tmp_path)), LAYOUT_V2)) == 3


def test_a_file_no_manifest_lists_is_not_the_timeline(tmp_path):
    """A compaction of the tree wrote a new file and crashed before its manifest."""
    _history_file(tmp_path, "a_0.parquet", OLD)
    _history_file(tmp_path, "a_1.parquet", OLD + NEW)
    _manifest(tmp_path, 1, "a_0.parquet")
    (tmp_path / HISTORY / "_version_").write_text("1")
    assert len(archived_instants(load_file_io(str(tmp_path)), LAYOUT_V2)) == 2


def test_no_history_no_archived_instants(tmp_path):
    assert archived_instants(load_file_io(str(tmp_path)), LAYOUT_V2) == []
    assert archived_instants(load_file_io(str(tmp_path)), LAYOUT_V1) == []

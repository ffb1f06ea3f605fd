"""Apache Hudi reads HFiles we wrote (issue 41, the metadata table's first step): Apache Hudi
writes a table with its metadata table (`files` only), the `files` partition's base HFile is
replaced by one `write_hfile` makes from the same entries (same name; one data block per
entry, so the index and the block reads are exercised), and Apache Hudi reads the table
through the metadata table (`hoodie.metadata.enable=true`) with the same rows; hudi-rs too,
on table version 8 (it lists through the metadata table from version 8 on). Apache Hudi 0.15
reads the metadata table with HBase's HFile reader, which needs whole KeyValue keys in the
index (`write_hfile(hbase_keys=True)`) once a file has two data blocks; 1.2 reads both.

Controls show the base file is what the listing comes from: on 1.2, the same file without
one partition's entry makes that partition's rows disappear (0.15 still returned them: it
seems to list a partition the metadata table lacks from storage); on 0.15, a file its reader
cannot read fails the read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import hudi
import pyarrow as pa
import pytest
from apache_hudi import HUDI_0, HUDI_1, ApacheHudiError, datasource_options
from rs_compare import read_theirs, rows_of

from hoodie.hfile import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    KEY_VALUE_VERSION,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    HFileReader,
    write_hfile,
)

pytestmark = pytest.mark.hudi_full

COMPUTED = {LAST_KEY, AVG_KEY_LEN, AVG_VALUE_LEN, KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY}
COLUMNS = ["id", "dt", "ts", "name"]
BATCHES = [
    ([1, 2, 3, 4], ["a", "b", "c", "d"], 1),
    ([5, 6], ["a", "b"], 2),
    ([1, 7], ["a", "a"], 3),  # the last write touches one partition: the others' listings
]  # come from the base file alone


def options(version: str) -> dict[str, str]:
    out = datasource_options("hfile_judge", "cow")
    out.update(
        {
            "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.column.stats.enable": "false",
            "hoodie.metadata.index.bloom.filter.enable": "false",
            "hoodie.metadata.record.index.enable": "false",
            "hoodie.metadata.compact.max.delta.commits": "1",
        }
    )
    if version == HUDI_1:
        out["hoodie.write.table.version"] = "8"
        out["hoodie.metadata.index.partition.stats.enable"] = "false"
    return out


def newest_base_file(table: Path) -> Path:
    files = table / ".hoodie" / "metadata" / "files"
    return max(files.glob("files-*.hfile"), key=lambda p: p.stem.rsplit("_", 1)[1])


def replace(base: Path, data: bytes) -> None:
    """Put `data` in place of the base file; Hadoop's checksum file beside it would refuse it."""
    base.write_bytes(data)
    (base.parent / f".{base.name}.crc").unlink(missing_ok=True)


def read_rows(judge, path: str) -> list[dict]:
    table = judge.read(path, **{"hoodie.metadata.enable": "true"})
    return rows_of(table, COLUMNS, "id")


@pytest.mark.parametrize("version", [HUDI_1, HUDI_0])
def test_apache_hudi_reads_the_metadata_table_through_our_hfile(apache_hudi, tmp_path, version):
    judge = apache_hudi(version)
    original = tmp_path / "original"
    for ids, dts, ts in BATCHES:
        rows = pa.table({"id": ids, "dt": dts, "ts": [ts] * len(ids),
                         "name": [f"n{i}-{ts}" for i in ids]})  # fmt: skip
        judge.write(str(original), rows, options(version))
    expected = read_rows(judge, str(original))
    assert [row["id"] for row in expected] == [1, 2, 3, 4, 5, 6, 7]

    theirs_bytes = newest_base_file(original).read_bytes()
    theirs = HFileReader(theirs_bytes, "theirs")
    entries = list(theirs)
    assert [key for key, _ in entries] == [b"__all_partitions__", b"a", b"b", b"c", b"d"]
    info = {k: v for k, v in theirs.file_info.items() if k not in COMPUTED}
    bloom = theirs.meta_block("bloomFilter")
    assert bloom is not None

    def ours(rows=entries, **layout) -> bytes:
        """Our HFile of `rows`, a data block per entry (the index and block reads matter)."""
        data = write_hfile(rows, file_info=info, meta_blocks={"bloomFilter": bloom},
                           block_size=1, **layout)  # fmt: skip
        assert len(HFileReader(data, "ours").data_index) == len(rows) > 1
        assert data != theirs_bytes
        return data

    def copy_with(name: str, data: bytes) -> str:
        """A copy of the table whose `files` base file is `data`: each read below is of a copy
        of its own, so that no reader Apache Hudi may keep in its session sees a file change
        under it."""
        copy = tmp_path / name
        shutil.copytree(original, copy)
        replace(newest_base_file(copy), data)
        return str(copy)

    if version == HUDI_1:  # 1.2's own reader takes both key layouts; hudi-rs too
        for layout in ({}, {"hbase_keys": True}):
            path = copy_with(f"ours_{len(layout)}", ours(**layout))
            assert read_rows(judge, path) == expected
            assert rows_of(read_theirs(hudi.HudiTable(path)), COLUMNS, "id") == expected
        # The control: without partition b's entry, b's rows are gone.
        without_b = [(key, value) for key, value in entries if key != b"b"]
        control = copy_with("control", ours(without_b))
        assert [row["id"] for row in read_rows(judge, control)] == [1, 3, 4, 5, 7]
        rs_rows = rows_of(read_theirs(hudi.HudiTable(control)), COLUMNS, "id")
        assert [row["id"] for row in rs_rows] == [1, 3, 4, 5, 7]
    else:
        # 0.15 reads the metadata table with HBase's HFile reader: whole KeyValue index keys.
        assert read_rows(judge, copy_with("ours_hbase", ours(hbase_keys=True))) == expected
        # 1.2's row-only index keys fail it once there are two data blocks (HBase's index
        # search parses them as KeyValues): why write_hfile has hbase_keys.
        with pytest.raises(ApacheHudiError, match="Failed to retrieve files in partition"):
            read_rows(judge, copy_with("ours_1_2", ours()))

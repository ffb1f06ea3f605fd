"""`keys.live_versions`: which keys a merge-on-read slice still holds after merging its logs
(what a global index asks of a key found in two file groups, and of a record about to move)."""

from __future__ import annotations

import pyarrow as pa

from hoodie.bloom_filter import BloomFilterSpec
from hoodie.fs_view import CommittedInstants
from hoodie.index.keys import KeySource, live_versions
from hoodie.logformat import DeleteRecord, add_meta_fields, delete_block, parquet_data_block
from hoodie.merge import MergeMode
from hoodie.naming import base_file_name, log_file_name
from hoodie.schema import META_COLUMNS, to_avro_schema
from hoodie.storage import load_file_io
from hoodie.write.merge_handle import write_base_file

I1, I2, I3 = "20250101000000000", "20250102000000000", "20250103000000000"
FILE_ID = "11111111-2222-3333-4444-555555555555-0"
DATA = pa.schema([("id", pa.string()), ("dt", pa.string()), ("ts", pa.int64())])


def rows(instant: str, keys_ts: list[tuple[str, int]]) -> pa.Table:
    n = len(keys_ts)
    meta = {
        META_COLUMNS[0]: [instant] * n,
        META_COLUMNS[1]: [f"{instant}_0_{i}" for i in range(n)],
        META_COLUMNS[2]: [k for k, _ in keys_ts],
        META_COLUMNS[3]: ["a"] * n,
        META_COLUMNS[4]: [FILE_ID] * n,
    }
    data = {"id": [k for k, _ in keys_ts], "dt": ["a"] * n, "ts": [t for _, t in keys_ts]}
    columns = {name: pa.array(values, pa.string()) for name, values in meta.items()}
    columns.update({f.name: pa.array(data[f.name], f.type) for f in DATA})
    return pa.table(columns)


def slice_with_logs(tmp_path, blocks: list[bytes]) -> tuple:
    io = load_file_io(str(tmp_path))
    base = f"a/{base_file_name(FILE_ID, '0-0-0', I1)}"
    io.makedirs("a")
    write_base_file(io, base, rows(I1, [("k1", 5), ("k2", 5), ("k3", 5)]), "snappy",
                    BloomFilterSpec())  # fmt: skip
    log = f"a/{log_file_name(FILE_ID, I1, 1, '0-0-0')}"
    io.write_bytes(log, b"".join(blocks))
    source = KeySource("a", FILE_ID, base, (log,))
    committed = CommittedInstants(frozenset({I1, I2, I3}))
    return io, source, committed


def test_a_key_a_log_deleted_is_not_there(tmp_path):
    avro = add_meta_fields(to_avro_schema(DATA, "t"))
    blocks = [
        # k1 removed without ordering (a move's delete, Hudi's Integer 0); k2 by a delete
        # whose ordering value loses to the stored 5; k3 updated to 9
        delete_block([DeleteRecord("k1", "a", 0)], I2, avro),
        delete_block([DeleteRecord("k2", "a", 3)], I2, avro, ordering_field="ts"),
        parquet_data_block(rows(I3, [("k3", 9)]), I3, avro),
    ]
    io, source, committed = slice_with_logs(tmp_path, blocks)
    wanted = pa.array(["k1", "k2", "k3", "k9"], pa.string())
    live = live_versions(io, source, committed, wanted, MergeMode.event_time("ts")).to_pylist()
    assert sorted((r["_hoodie_record_key"], r["ts"]) for r in live) == [("k2", 5), ("k3", 9)]
    # Without an ordering field, deletes order by arrival: k2 goes too.
    unordered = live_versions(io, source, committed, wanted, MergeMode.commit_time()).to_pylist()
    assert sorted(r["_hoodie_record_key"] for r in unordered) == ["k3"]


def test_blocks_of_instants_not_committed_do_not_count(tmp_path):
    avro = add_meta_fields(to_avro_schema(DATA, "t"))
    io, source, _ = slice_with_logs(tmp_path, [delete_block([DeleteRecord("k1", "a", 0)], I2,
                                                            avro)])  # fmt: skip
    only_base = CommittedInstants(frozenset({I1}))
    live = live_versions(
        io, source, only_base, pa.array(["k1"], pa.string()), MergeMode.event_time("ts")
    )
    assert live.column("_hoodie_record_key").to_pylist() == ["k1"]

"""Properties of the metadata record codec and keys over random input: any record a table
version can store reads back equal from its bytes, whatever the names (any Unicode), sizes
and locations; record index locations and instants round trip; and merging is what a reader
relies on (the files rule leaves, for each name, the larger size since its last delete)."""

from __future__ import annotations

import datetime
import uuid
from functools import reduce

from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.metadata_records import (
    BloomFilterRecord,
    ColumnStatsRecord,
    FileEntry,
    FilesRecord,
    MetadataRecord,
    RecordIndexRecord,
    StatKind,
    StatValue,
    decode_metadata_record,
    encode_metadata_record,
    epoch_millis_to_instant,
    file_group_index,
    instant_to_epoch_millis,
    java_string_hash,
    join_file_id,
    merge_metadata_records,
    metadata_record_schema,
    split_file_id,
)

LONGS = st.integers(-(2**63), 2**63 - 1)
NAMES = st.text(min_size=1, max_size=40)
SIZES = st.integers(0, 2**62)

file_entries = st.builds(FileEntry, SIZES, st.booleans())
files_records = st.builds(
    FilesRecord, NAMES, st.booleans(), st.dictionaries(NAMES, file_entries, max_size=8)
)
stat_values = st.one_of(
    st.builds(StatValue, st.just(StatKind.LONG), LONGS),
    st.builds(StatValue, st.just(StatKind.INT), st.integers(-(2**31), 2**31 - 1)),
    st.builds(StatValue, st.just(StatKind.STRING), st.text(max_size=20)),
    st.builds(StatValue, st.just(StatKind.BYTES), st.binary(max_size=20)),
    st.builds(StatValue, st.just(StatKind.DOUBLE), st.floats(allow_nan=False)),
    st.builds(StatValue, st.just(StatKind.BOOLEAN), st.booleans()),
    st.builds(StatValue, st.just(StatKind.DATE), st.integers(-(2**31), 2**31 - 1)),
)
counts = st.one_of(st.none(), st.integers(0, 2**62))
stats_records = st.builds(
    ColumnStatsRecord, NAMES, st.none() | NAMES, st.none() | NAMES,
    st.none() | stat_values, st.none() | stat_values, counts, counts, counts, counts,
    st.booleans(),
)  # fmt: skip
bloom_records = st.builds(
    BloomFilterRecord, NAMES, NAMES, st.text(max_size=17), st.binary(max_size=64), st.booleans()
)
uuid_file_ids = st.builds(
    lambda u, n: str(u) if n is None else f"{u}-{n}",
    st.uuids(),
    st.none() | st.integers(0, 2**31 - 1),
)
location_records = st.one_of(
    st.builds(RecordIndexRecord, NAMES, st.none() | st.text(max_size=20), uuid_file_ids,
              st.none() | LONGS),
    st.builds(RecordIndexRecord, NAMES, st.none() | st.text(max_size=20), st.text(max_size=40),
              st.none() | LONGS, file_id_encoding=st.just(1)),
)  # fmt: skip
records = st.one_of(files_records, stats_records, bloom_records, location_records)


@settings(max_examples=300, deadline=None)
@given(records, st.sampled_from([6, 8]))
def test_every_record_reads_back_from_its_bytes(record: MetadataRecord, version: int) -> None:
    value = encode_metadata_record(record, version)
    assert decode_metadata_record(record.key, value, metadata_record_schema(version)) == record


@given(st.uuids(), st.none() | st.integers(0, 2**31 - 1))
def test_uuid_file_ids_round_trip(token: uuid.UUID, index: int | None) -> None:
    file_id = str(token) if index is None else f"{token}-{index}"
    assert join_file_id(*split_file_id(file_id)) == file_id


@given(st.datetimes(min_value=datetime.datetime(1900, 1, 1)))
def test_instants_round_trip_through_millis(moment: datetime.datetime) -> None:
    instant = moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"
    millis = instant_to_epoch_millis(instant, "UTC")
    assert epoch_millis_to_instant(millis, "UTC") == instant


@given(st.text(max_size=30), st.integers(1, 10_000))
def test_file_groups_are_in_range(key: str, count: int) -> None:
    assert -(2**31) <= java_string_hash(key) < 2**31
    assert 0 <= file_group_index(key, count) < count


# as Apache Hudi writes them: a file added has a size, a tombstone 0 (`validatePayload`)
written = st.one_of(st.builds(FileEntry, st.integers(1, 2**62)), st.just(FileEntry(0, True)))
file_maps = st.dictionaries(st.sampled_from("abcdef"), written, max_size=6)


@given(st.lists(file_maps, min_size=1, max_size=5))
def test_merged_files_keep_the_latest_word_on_each_name(maps: list[dict[str, FileEntry]]) -> None:
    merged = reduce(merge_metadata_records, (FilesRecord("p", False, m) for m in maps))
    assert isinstance(merged, FilesRecord)
    for name in {n for m in maps for n in m}:
        last = [m[name] for m in maps if name in m][-1]
        if last.is_deleted:
            assert name not in merged.live_files()
        else:
            # the largest size since the last delete of the name (older ones were dropped)
            since: list[int] = []
            for m in maps:
                if name in m:
                    since: list[int] = [] if m[name].is_deleted else [*since, m[name].size]
            assert merged.live_files()[name] == max(since)

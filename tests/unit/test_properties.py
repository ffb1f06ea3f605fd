"""`hoodie.properties`: Java properties syntax and the typed table properties."""

from __future__ import annotations

import json

import pytest

from hoodie import properties as P
from hoodie.exceptions import UnsupportedTableError
from hoodie.merge import merge_mode_of

COW_NONHIVE = "sample_table/cow/v6_simplekeygen_nonhivestyle"


@pytest.fixture
def fixture_props(sample_table) -> dict[str, str]:
    root = sample_table(COW_NONHIVE)
    return P.loads((root / ".hoodie" / "hoodie.properties").read_text(encoding="utf-8"))


# -- loads ---------------------------------------------------------------------------------------


def test_loads_fixture_properties(fixture_props):
    assert fixture_props[P.TABLE_NAME] == "v6_simplekeygen_nonhivestyle"
    assert fixture_props[P.TABLE_TYPE] == "COPY_ON_WRITE"
    assert fixture_props[P.TABLE_VERSION] == "6"
    assert fixture_props[P.TIMELINE_LAYOUT_VERSION] == "1"
    assert fixture_props[P.RECORD_KEY_FIELDS] == "id"
    assert fixture_props[P.PARTITION_FIELDS] == "byteField"
    assert fixture_props[P.PRECOMBINE_FIELD] == "longField"
    assert fixture_props[P.TABLE_CHECKSUM] == "616688896"
    # The two leading comment lines are not properties.
    assert not any(key.startswith("#") for key in fixture_props)
    assert len(fixture_props) == 15


def test_loads_fixture_unescapes_colons_in_create_schema(fixture_props):
    text = fixture_props[P.CREATE_SCHEMA]
    assert "\\" not in text
    schema = json.loads(text)
    assert schema["type"] == "record"
    assert schema["name"] == "v6_simplekeygen_nonhivestyle_record"
    assert schema["namespace"] == "hoodie.v6_simplekeygen_nonhivestyle"
    names = [f["name"] for f in schema["fields"]]
    assert names[0] == "id" and names[-1] == "byteField"
    decimal = next(f for f in schema["fields"] if f["name"] == "decimalField")
    assert decimal["type"][0]["size"] == 5


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a=b\n", {"a": "b"}),
        ("a:b\n", {"a": "b"}),
        ("a b\n", {"a": "b"}),
        ("  a  =  b\n", {"a": "b"}),
        ("a = = b\n", {"a": "= b"}),
        ("a==b\n", {"a": "=b"}),
        ("a\n", {"a": ""}),
        ("# comment\n! also comment\n\n   \na=1\n", {"a": "1"}),
        ("a\\=b\\:c=d\n", {"a=b:c": "d"}),
        ("a\\ b=c\n", {"a b": "c"}),
        ("k=\\u0041\\u00e9\n", {"k": "A\u00e9"}),
        ("k=one \\\n    two\n", {"k": "one two"}),
        ("k=ends with backslash\\\\\nz=1\n", {"k": "ends with backslash\\", "z": "1"}),
        ("#comment ends with backslash\\\nz=1\n", {"z": "1"}),
        ("k=a\\tb\\nc\n", {"k": "a\tb\nc"}),
        ("a=1\r\nb=2\r\n", {"a": "1", "b": "2"}),
        ("k=v#not a comment\n", {"k": "v#not a comment"}),
    ],
)
def test_loads_java_syntax(text, expected):
    assert P.loads(text) == expected


# -- dumps ---------------------------------------------------------------------------------------


ROUND_TRIP_VALUES = [
    "plain",
    "with:colon",
    "with=equals",
    "#starts with hash",
    "!starts with bang",
    "middle # hash",
    " one leading space",
    "   three leading spaces",
    "trailing space ",
    "caf\u00e9 \u00fc\u00df \u4e2d\u6587 \u0416",
    "back\\slash and ends with one\\",
    "tab\tnewline\ncarriage\rformfeed\f",
    "",
    '{"type":"record","name":"x"}',
]


@pytest.mark.parametrize("value", ROUND_TRIP_VALUES)
def test_dumps_loads_round_trip(value):
    props = {"k": value, "key with spaces": value, "key:with=seps#": value, "caf\u00e9": value}
    text = P.dumps(props, comment="Updated")
    assert text.isascii()
    assert P.loads(text) == props


def test_dumps_escapes_separators_and_starts_with_comments():
    text = P.dumps({"b": "x:y=z", "a": "1"}, comment="hello")
    lines = text.splitlines()
    assert lines[0] == "#hello"
    assert lines[1].startswith("#")
    # Sorted keys, escaped values, one property per line.
    assert lines[2:] == ["a=1", "b=x\\:y\\=z"]
    assert text.endswith("\n")


def test_dumps_loads_round_trip_non_bmp_character():
    props = {"k": "smile \U0001f600"}
    assert P.loads(P.dumps(props)) == props


def test_loads_java_surrogate_pair():
    assert P.loads("k=\\uD83D\\uDE00\n") == {"k": "\U0001f600"}


# -- checksum and typed properties ---------------------------------------------------------------


def test_table_checksum_matches_hudi():
    assert P.table_checksum("default", "v6_simplekeygen_nonhivestyle") == 616688896


def test_table_checksum_matches_fixture_file(fixture_props):
    assert P.table_checksum(fixture_props[P.DATABASE_NAME], fixture_props[P.TABLE_NAME]) == int(
        fixture_props[P.TABLE_CHECKSUM]
    )


def test_table_checksum_depends_on_database():
    assert P.table_checksum("default", "t") != P.table_checksum("other", "t")


def test_from_dict_fixture(fixture_props):
    props = P.TableProperties.from_dict(fixture_props)
    assert props.name == "v6_simplekeygen_nonhivestyle"
    assert props.table_type == P.COPY_ON_WRITE
    assert not props.is_merge_on_read
    assert props.record_key_fields == ("id",)
    assert props.partition_fields == ("byteField",)
    assert props.is_partitioned
    assert props.precombine_field == "longField"
    assert props.key_generator_class == P.SIMPLE_KEYGEN
    assert props.hive_style_partitioning is False
    assert props.url_encode_partition_path is False
    assert props.populate_meta_fields is True
    assert props.database == "default"
    assert props.table_version == 6
    assert props.timeline_layout_version == 1
    assert json.loads(props.create_schema)["name"] == "v6_simplekeygen_nonhivestyle_record"
    # Keys without a typed field are kept.
    assert props.extra[P.ARCHIVELOG_FOLDER] == "archived"
    assert props.extra[P.TABLE_CHECKSUM] == "616688896"


def test_from_dict_hive_style_fixture(sample_table):
    root = sample_table("sample_table/cow/v6_simplekeygen_hivestyle_no_metafields")
    raw = P.loads((root / ".hoodie" / "hoodie.properties").read_text(encoding="utf-8"))
    props = P.TableProperties.from_dict(raw)
    assert props.hive_style_partitioning is True
    assert props.populate_meta_fields is False
    assert props.partition_fields == ("byteField",)


def test_from_dict_partition_field_with_keygen_type():
    props = P.TableProperties.from_dict(
        {
            P.TABLE_NAME: "t",
            P.TABLE_VERSION: "6",
            P.RECORD_KEY_FIELDS: "a, b",
            P.PARTITION_FIELDS: "region:SIMPLE,ts:TIMESTAMP",
        }
    )
    assert props.record_key_fields == ("a", "b")
    assert props.partition_fields == ("region", "ts")
    assert props.key_generator_class == P.COMPLEX_KEYGEN


def test_from_dict_default_keygen_non_partitioned():
    props = P.TableProperties.from_dict(
        {P.TABLE_NAME: "t", P.TABLE_VERSION: "6", P.RECORD_KEY_FIELDS: "id"}
    )
    assert props.key_generator_class == P.NON_PARTITIONED_KEYGEN
    assert not props.is_partitioned


@pytest.mark.parametrize(
    "version, layout",
    [("5", "1"), ("7", "1"), ("8", "1"), ("9", "1"), ("10", "2"), ("6", "2"), (None, "1")],
)
def test_from_dict_rejects_other_versions(fixture_props, version, layout):
    props = dict(fixture_props)
    if version is None:
        del props[P.TABLE_VERSION]
    else:
        props[P.TABLE_VERSION] = version
    props[P.TIMELINE_LAYOUT_VERSION] = layout
    with pytest.raises(UnsupportedTableError, match="v6_simplekeygen_nonhivestyle"):
        P.TableProperties.from_dict(props)


@pytest.mark.parametrize("version", ["8", "9"])
def test_hudi_1_tables_are_read_with_their_keys(fixture_props, version):
    """Versions 8 and 9 name the key generator by type, version 9 the precombine field
    `ordering.fields`, and both record how records merge."""
    props = {
        k: v
        for k, v in fixture_props.items()
        if k not in (P.KEY_GENERATOR_CLASS, P.PRECOMBINE_FIELD)
    }
    props.update({
        P.TABLE_VERSION: version,
        P.TIMELINE_LAYOUT_VERSION: "2",
        P.KEY_GENERATOR_TYPE: "COMPLEX",
        P.ORDERING_FIELDS: "ts",
        P.RECORD_MERGE_MODE: "EVENT_TIME_ORDERING",
    })  # fmt: skip
    read = P.TableProperties.from_dict(props)
    assert (read.table_version, read.timeline_layout_version) == (int(version), 2)
    assert read.key_generator_class == P.COMPLEX_KEYGEN
    assert read.precombine_field == "ts" and merge_mode_of(read).by_event_time
    by_commit_time = P.TableProperties.from_dict(
        {**props, P.RECORD_MERGE_MODE: "COMMIT_TIME_ORDERING"}
    )
    assert by_commit_time.precombine_field == "ts"
    assert not merge_mode_of(by_commit_time).by_event_time


@pytest.mark.parametrize(
    ("payload", "ordering"),
    [(P.DEFAULT_PAYLOAD, "longField"), (P.OVERWRITE_PAYLOAD, None), (None, None)],
)
def test_a_version_6_table_merges_as_its_payload_class_says(fixture_props, payload, ordering):
    """Version 6 records a payload class, no merge mode: Apache Hudi 0.x's default
    (`OverwriteWithLatestAvroPayload`) lets a later write win whatever the precombine field
    says (Hudi 0.15 reads a log record over its base file so, and Hudi 1.x infers
    COMMIT_TIME_ORDERING from it), and so does a table naming none (0.15's default);
    `DefaultHoodieRecordPayload` orders by the field (found by Apache Hudi as the judge,
    tests/judge/test_we_read_hudi.py)."""
    props = {k: v for k, v in fixture_props.items() if k != P.PAYLOAD_CLASS}
    if payload is not None:
        props[P.PAYLOAD_CLASS] = payload
    read = P.TableProperties.from_dict(props)
    mode = merge_mode_of(read)
    assert read.precombine_field == "longField"
    assert (mode.ordering_field if mode.by_event_time else None) == ordering


@pytest.mark.parametrize(
    "key, value, message",
    [
        (P.BASE_FILE_FORMAT, "LANCE", "LANCE"),
        (P.ORDERING_FIELDS, "ts,seq", "several fields"),
    ],
)
def test_hudi_1_features_we_do_not_read_are_refused(fixture_props, key, value, message):
    props = {**fixture_props, P.TABLE_VERSION: "9", P.TIMELINE_LAYOUT_VERSION: "2", key: value}
    props.pop(P.PRECOMBINE_FIELD, None)
    with pytest.raises(UnsupportedTableError, match=message):
        P.TableProperties.from_dict(props)


def test_to_dict_has_checksum_and_versions():
    props = P.TableProperties(
        name="orders",
        table_type=P.MERGE_ON_READ,
        record_key_fields=("id", "line"),
        partition_fields=("day",),
        precombine_field="ts",
        key_generator_class=P.COMPLEX_KEYGEN,
        hive_style_partitioning=True,
        database="sales",
    )
    out = props.to_dict()
    assert out[P.TABLE_CHECKSUM] == str(P.table_checksum("sales", "orders"))
    assert out[P.TABLE_VERSION] == "6"
    assert out[P.TIMELINE_LAYOUT_VERSION] == "1"
    assert out[P.TABLE_NAME] == "orders"
    assert out[P.TABLE_TYPE] == P.MERGE_ON_READ
    assert out[P.RECORD_KEY_FIELDS] == "id,line"
    assert out[P.PARTITION_FIELDS] == "day"
    assert out[P.PRECOMBINE_FIELD] == "ts"
    assert out[P.HIVE_STYLE_PARTITIONING] == "true"
    assert out[P.DATABASE_NAME] == "sales"
    assert out[P.BASE_FILE_FORMAT] == "PARQUET"
    # And it reads back the same.
    again = P.TableProperties.from_dict(P.loads(P.dumps(out)))
    assert again.to_dict() == out
    assert again.record_key_fields == props.record_key_fields
    assert again.is_merge_on_read


def test_fixture_properties_survive_from_dict_to_dict(fixture_props):
    out = P.TableProperties.from_dict(fixture_props).to_dict()
    for key in (
        P.TABLE_NAME,
        P.TABLE_TYPE,
        P.TABLE_VERSION,
        P.TIMELINE_LAYOUT_VERSION,
        P.RECORD_KEY_FIELDS,
        P.PARTITION_FIELDS,
        P.PRECOMBINE_FIELD,
        P.KEY_GENERATOR_CLASS,
        P.HIVE_STYLE_PARTITIONING,
        P.CREATE_SCHEMA,
        P.TABLE_CHECKSUM,
    ):
        assert out[key] == fixture_props[key], key


def test_to_dict_omits_unset_optional_fields():
    out = P.TableProperties(
        name="t", table_type=P.COPY_ON_WRITE, record_key_fields=("id",)
    ).to_dict()
    assert P.PARTITION_FIELDS not in out
    assert P.PRECOMBINE_FIELD not in out
    assert P.CREATE_SCHEMA not in out

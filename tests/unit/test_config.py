"""Write configuration: building, option parsing and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie.config import MB, OPTIONS, WriteConfig, as_field_tuple, parse_options
from hoodie.exceptions import InvalidConfigError
from hoodie.properties import COPY_ON_WRITE, MERGE_ON_READ


def test_build_defaults():
    config = WriteConfig.build("orders", "id")
    assert config.table_name == "orders"
    assert config.record_key_fields == ("id",)
    assert config.partition_fields == ()
    assert config.precombine_field is None
    assert config.table_type == COPY_ON_WRITE
    assert config.hive_style_partitioning is False
    assert config.url_encode_partition_path is False
    assert config.database == "default"
    assert config.max_file_size == 120 * MB
    assert config.small_file_limit == 100 * MB
    assert config.record_size_estimate == 1024
    assert config.compression == "snappy"
    assert config.parallelism == 0
    assert config.index_type == "SIMPLE"
    assert dict(config.options) == {}


def test_build_happy_path_with_options():
    config = WriteConfig.build(
        "orders",
        record_key=["order_id", "line_no"],
        partition_path="region, order_date",
        precombine_field="updated_at",
        table_type=MERGE_ON_READ,
        hive_style_partitioning=True,
        database="sales",
        options={
            "hoodie.parquet.max.file.size": "1048576",
            "hoodie.parquet.small.file.limit": 0,
            "hoodie.copyonwrite.record.size.estimate": " 256 ",
            "hoodie.parquet.compression.codec": "ZSTD",
            "hoodie.upsert.shuffle.parallelism": "8",
            "hoodie.index.type": "simple",
            "hoodie.datasource.write.hive_style_partitioning": "TRUE",
            "hoodie.datasource.write.partitionpath.urlencode": True,
        },
    )
    assert config.record_key_fields == ("order_id", "line_no")
    assert config.partition_fields == ("region", "order_date")
    assert config.precombine_field == "updated_at"
    assert config.table_type == MERGE_ON_READ
    assert config.database == "sales"
    assert config.max_file_size == 1048576
    assert config.small_file_limit == 0
    assert config.record_size_estimate == 256
    assert config.compression == "zstd"
    assert config.parallelism == 8
    assert config.index_type == "SIMPLE"
    assert config.hive_style_partitioning is True
    assert config.url_encode_partition_path is True
    # The raw options are kept, as strings.
    assert config.options["hoodie.parquet.small.file.limit"] == "0"
    assert config.options["hoodie.datasource.write.partitionpath.urlencode"] == "True"


def test_build_empty_precombine_is_none():
    assert WriteConfig.build("t", "id", precombine_field="").precombine_field is None


def test_unknown_option_names_the_key_and_where_the_options_are():
    with pytest.raises(InvalidConfigError) as err:
        WriteConfig.build("t", "id", options={"hoodie.parquet.max.file.sizee": "1"})
    message = str(err.value)
    assert "'hoodie.parquet.max.file.sizee' (did you mean 'hoodie.parquet.max.file.size'?)" in (
        message
    )
    assert "docs/options.md" in message
    reference = Path(__file__).resolve().parents[2] / "docs" / "options.md"
    for prop in OPTIONS:  # the page it points at lists every option
        assert f"`{prop.key}`" in reference.read_text(), prop.key


@pytest.mark.parametrize(
    "key, value",
    [
        ("hoodie.parquet.max.file.size", "abc"),
        ("hoodie.parquet.max.file.size", "0"),
        ("hoodie.parquet.max.file.size", "-5"),
        ("hoodie.parquet.max.file.size", "1.5"),
        ("hoodie.parquet.max.file.size", ""),
        ("hoodie.parquet.small.file.limit", "-1"),
        ("hoodie.parquet.small.file.limit", "10MB"),
        ("hoodie.copyonwrite.record.size.estimate", "0"),
        ("hoodie.upsert.shuffle.parallelism", "many"),
        # Table versions we write: 6 and 8 only (7 was never a default; 9 is read only).
        ("hoodie.write.table.version", "9"),
        ("hoodie.write.table.version", "7"),
        ("hoodie.write.table.version", "v8"),
        ("hoodie.write.table.version", ""),
    ],
)
def test_malformed_int_option(key, value):
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")) as err:
        WriteConfig.build("t", "id", options={key: value})
    assert repr(value) in str(err.value)


@pytest.mark.parametrize(
    "key, value",
    [
        ("hoodie.datasource.write.hive_style_partitioning", "yes"),
        ("hoodie.datasource.write.partitionpath.urlencode", "1"),
        ("hoodie.parquet.compression.codec", "lzo"),
        ("hoodie.index.type", "HBASE"),
    ],
)
def test_malformed_other_options(key, value):
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        WriteConfig.build("t", "id", options={key: value})


@pytest.mark.parametrize(
    "max_size, small_limit",
    [("1000", "1000"), ("1000", "2000")],
)
def test_small_file_limit_must_be_below_max_file_size(max_size, small_limit):
    with pytest.raises(InvalidConfigError, match="small.file.limit") as err:
        WriteConfig.build(
            "t",
            "id",
            options={
                "hoodie.parquet.max.file.size": max_size,
                "hoodie.parquet.small.file.limit": small_limit,
            },
        )
    assert "max.file.size" in str(err.value)


def test_max_file_size_below_default_small_file_limit_is_an_error():
    with pytest.raises(InvalidConfigError, match="small.file.limit"):
        WriteConfig.build("t", "id", options={"hoodie.parquet.max.file.size": str(50 * MB)})


def test_small_file_limit_just_below_max_is_fine():
    config = WriteConfig.build(
        "t",
        "id",
        options={
            "hoodie.parquet.max.file.size": "1000",
            "hoodie.parquet.small.file.limit": "999",
        },
    )
    assert (config.max_file_size, config.small_file_limit) == (1000, 999)


@pytest.mark.parametrize("argument, option", [(True, "false"), (False, "true")])
def test_conflicting_hive_style_partitioning(argument, option):
    with pytest.raises(InvalidConfigError, match="hive_style_partitioning"):
        WriteConfig.build(
            "t",
            "id",
            hive_style_partitioning=argument,
            options={"hoodie.datasource.write.hive_style_partitioning": option},
        )


@pytest.mark.parametrize("value", [True, False])
def test_agreeing_hive_style_partitioning(value):
    config = WriteConfig.build(
        "t",
        "id",
        hive_style_partitioning=value,
        options={"hoodie.datasource.write.hive_style_partitioning": str(value).lower()},
    )
    assert config.hive_style_partitioning is value


def test_hive_style_from_option_only():
    config = WriteConfig.build(
        "t", "id", options={"hoodie.datasource.write.hive_style_partitioning": "true"}
    )
    assert config.hive_style_partitioning is True


@pytest.mark.parametrize("record_key", [None, "", [], (), " , "])
def test_missing_record_key(record_key):
    with pytest.raises(InvalidConfigError, match="record_key is required"):
        WriteConfig.build("orders", record_key)


def test_missing_table_name():
    with pytest.raises(InvalidConfigError, match="table name"):
        WriteConfig.build("", "id")


def test_blank_column_name_in_list():
    with pytest.raises(InvalidConfigError, match="non-empty"):
        WriteConfig.build("t", ["id", "  "])


def test_bad_table_type():
    with pytest.raises(InvalidConfigError, match="COPY_ON_WRITE"):
        WriteConfig.build("t", "id", table_type="cow")


def test_config_is_frozen():
    config = WriteConfig.build("t", "id")
    with pytest.raises(AttributeError):
        config.table_name = "other"


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, ()),
        ("", ()),
        ([], ()),
        ((), ()),
        ("a", ("a",)),
        ("a,b", ("a", "b")),
        (" a , b ,, c ", ("a", "b", "c")),
        (["a", " b "], ("a", "b")),
        (("a", "b"), ("a", "b")),
    ],
)
def test_as_field_tuple(value, expected):
    assert as_field_tuple(value) == expected


@pytest.mark.parametrize("value", [["a", 1], 5, {"a": 1}])
def test_as_field_tuple_rejects(value):
    with pytest.raises(InvalidConfigError):
        as_field_tuple(value)


def test_parse_options_maps_to_attributes():
    assert parse_options({"hoodie.parquet.max.file.size": "10", "hoodie.index.type": "SIMPLE"}) == {
        "max_file_size": 10,
        "index_type": "SIMPLE",
    }
    assert parse_options({}) == {}


def test_the_table_version_option():
    assert WriteConfig.build("t", "id").table_version is None  # the table's; new ones 6
    for value in ("6", "8", " 8 "):
        config = WriteConfig.build("t", "id", options={"hoodie.write.table.version": value})
        assert config.table_version == int(value)

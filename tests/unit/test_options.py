"""The option table: one definition per option; Hudi's key names and dbt's names both work."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.hoodie.model_config import model_settings
from hoodie import properties as props
from hoodie.config import OPTIONS, WriteConfig
from hoodie.exceptions import ConflictingSettingsError, InvalidConfigError
from hoodie.options.property import closest_key
from hoodie.table_services.archival import archive
from hoodie.table_services.clean import CleanConfig

HUDI_IDENTITY = {
    "hoodie.table.name": "orders",
    "hoodie.datasource.write.recordkey.field": "id,region",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}


def test_hudi_key_names_build_the_same_config_as_the_arguments():
    by_keys = WriteConfig.build(options=HUDI_IDENTITY)
    by_names = WriteConfig.build(
        "orders", ["id", "region"], "day", "ts", table_type="MERGE_ON_READ"
    )
    fields = [f.name for f in dataclasses.fields(WriteConfig) if f.name != "options"]
    assert [getattr(by_keys, f) for f in fields] == [getattr(by_names, f) for f in fields]


def test_the_same_value_given_both_ways_is_fine():
    config = WriteConfig.build("orders", "id,region", options=HUDI_IDENTITY)
    assert config.record_key_fields == ("id", "region") and config.table_type == "MERGE_ON_READ"


@pytest.mark.parametrize(
    "argument, key",
    [
        ({"record_key": "other"}, "hoodie.datasource.write.recordkey.field"),
        ({"partition_path": "month"}, "hoodie.datasource.write.partitionpath.field"),
        ({"precombine_field": "version"}, "hoodie.datasource.write.precombine.field"),
        ({"table_type": "COPY_ON_WRITE"}, "hoodie.datasource.write.table.type"),
        ({"table_name": "sales"}, "hoodie.table.name"),
    ],
)
def test_two_names_with_different_values_are_an_error_naming_both(argument, key):
    with pytest.raises(ConflictingSettingsError) as error:
        WriteConfig.build(options=HUDI_IDENTITY, **argument)
    name = next(iter(argument))
    assert f"{name}=" in str(error.value) and f"'{key}'" in str(error.value)
    assert error.value.option_key == key


def test_an_option_under_two_of_its_keys_must_have_one_value():
    same = {"hoodie.cleaner.commits.retained": "4", "hoodie.clean.commits.retained": "4"}
    assert WriteConfig.build("t", "id", options=same).cleaner_commits_retained == 4
    other = {"hoodie.cleaner.commits.retained": "4", "hoodie.clean.commits.retained": "5"}
    with pytest.raises(InvalidConfigError, match="cleaner.commits.retained' and .*clean.commits"):
        WriteConfig.build("t", "id", options=other)


def test_an_unknown_key_names_the_closest_known_one():
    with pytest.raises(InvalidConfigError, match="did you mean 'hoodie.cleaner.commits.retained'"):
        WriteConfig.build("t", "id", options={"hoodie.cleaner.commit.retained": "3"})
    with pytest.raises(InvalidConfigError, match="did you mean 'hoodie.datasource.write.recordkey"):
        WriteConfig.build("t", "id", options={"hoodie.datasource.write.recordkey.fields": "id"})


def test_did_you_mean_offers_only_a_key_a_few_edits_away():
    """A hint names a key the typo is a couple of edits from (case ignored), never one that is
    merely similar: every key shares `hoodie.`, and a ratio once matched unrelated options."""
    assert closest_key("hoodie.metadata.enable", ["hoodie.compact.inline"]) is None
    assert closest_key("hoodie.index.typ", ["hoodie.index.type", "hoodie.index.class"]) == (
        "hoodie.index.type"
    )
    assert closest_key("preCombine_Field", ["precombine_field", "partition_path"]) == (
        "precombine_field"
    )
    with pytest.raises(InvalidConfigError) as error:
        WriteConfig.build("t", "id", options={"hoodie.metadata.partitions.enable": "true"})
    assert "did you mean" not in str(error.value)


def test_unknown_keys_are_named_together_in_one_line():
    """Every unknown key at once, each with its hint, and where the options are: not the
    whole option table (which buried the hint under a hundred lines)."""
    with pytest.raises(InvalidConfigError) as error:
        WriteConfig.build("t", "id", options={"hoodie.metadata.enabel": "true", "hoodie.x": "1"})
    text = str(error.value)
    assert "unknown option 'hoodie.metadata.enabel' (did you mean 'hoodie.metadata.enable'?)" in (
        text
    )
    assert "unknown option 'hoodie.x'" in text and "docs/options.md" in text
    assert "\n" not in text and len(text) < 400


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("hoodie.datasource.hive_sync.enable", "true", "syncs to no other catalog"),
        ("hoodie.datasource.hive_sync.database", "db", "syncs to no other catalog"),
        ("hoodie.bulkinsert.shuffle.parallelism", "200", "hoodie.upsert.shuffle.parallelism"),
        ("hoodie.clean.async", "true", "never in the background"),
        ("hoodie.clustering.async.enabled", "true", "never in the background"),
        ("hoodie.combine.before.upsert", "false", "always combines"),
        ("hoodie.bulkinsert.sort.mode", "GLOBAL_SORT", "clustering sorts"),
    ],
)
def test_hudi_job_settings_we_have_no_counterpart_of_are_refused_with_the_reason(key, value, says):
    """A config copied from an Apache Hudi job: its settings at Hudi's default carry over; any
    other value is refused by name, saying why, not as an unknown key."""
    with pytest.raises(InvalidConfigError, match=says) as error:
        WriteConfig.build("t", "id", options={key: value})
    assert key in str(error.value) and "unknown option" not in str(error.value)
    defaults = {"hoodie.datasource.hive_sync.enable": "false", "hoodie.clean.async": "false",
                "hoodie.bulkinsert.shuffle.parallelism": "0", "hoodie.bulkinsert.sort.mode": "NONE",
                "hoodie.combine.before.upsert": "true"}  # fmt: skip
    WriteConfig.build("t", "id", options=defaults)


def test_a_record_key_is_needed_one_way_or_the_other():
    with pytest.raises(InvalidConfigError, match="hoodie.datasource.write.recordkey.field"):
        WriteConfig.build("t")


def test_every_default_is_the_option_tables():
    """WriteConfig's fields and the table services' own defaults all come from OPTIONS."""
    defaults = WriteConfig("t", ("id",))
    for prop in OPTIONS:
        if prop.attribute and prop.attribute not in ("table_name", "record_key_fields"):
            assert getattr(defaults, prop.attribute) == prop.default, prop.key
    by_attribute = {prop.attribute: prop.default for prop in OPTIONS}
    clean = CleanConfig()
    assert (clean.policy, clean.commits_retained, clean.file_versions_retained) == (
        by_attribute["cleaner_policy"],
        by_attribute["cleaner_commits_retained"],
        by_attribute["cleaner_file_versions_retained"],
    )
    assert CleanConfig.of(None) == clean
    archived = inspect.signature(archive).parameters
    assert archived["keep_min"].default == by_attribute["keep_min_commits"]
    assert archived["keep_max"].default == by_attribute["keep_max_commits"]


def _settings(config, table_type="COPY_ON_WRITE"):
    return model_settings(
        "orders", config, table_type=table_type, schema="analytics", alias="orders",
        warehouse_dir="/tmp/warehouse",
    )  # fmt: skip


def test_a_dbt_model_may_use_hudi_key_names():
    config = {"materialized": "mor_upsert", "options": dict(HUDI_IDENTITY)}
    written = _settings(config, table_type="MERGE_ON_READ").write_config
    assert written.record_key_fields == ("id", "region")
    assert written.partition_fields == ("day",) and written.precombine_field == "ts"
    assert written.table_name == "orders"


def test_a_dbt_model_whose_hudi_table_type_disagrees_with_its_materialization():
    config = {"materialized": "cow_upsert", "options": dict(HUDI_IDENTITY)}
    with pytest.raises(CompilationError) as error:
        _settings(config)
    text = str(error.value)
    assert "Model 'orders'" in text and "materialized='cow_upsert'" in text
    assert "hoodie.datasource.write.table.type" in text and "materialized='mor_upsert'" in text


def test_a_dbt_model_key_given_twice_differently_names_both():
    config = {"record_key": "txn", "options": {"hoodie.datasource.write.recordkey.field": "id"}}
    with pytest.raises(CompilationError, match="record_key=txn and option 'hoodie.datasource"):
        _settings(config)


# Apache Hudi's metadata table switches we take at its default only (keys and defaults as
# HoodieMetadataConfig of the 0.15.0 and 1.2.0 bundles declare them): key -> (Apache Hudi's
# default, what the refusal of the other value must say).
HUDI_DEFAULT_ONLY = {
    "hoodie.metadata.log.compaction.enable": ("false", "never log-compacted"),
    "hoodie.metadata.index.async": ("false", "no asynchronous indexer"),
    "hoodie.metadata.streaming.write.enabled": ("false", "non-streaming writers"),
    "hoodie.metadata.index.partition.stats.enable": ("false", "partition_stats partition"),
    "hoodie.metadata.record.level.index.enable": ("false", "partitioned record index"),
    "hoodie.metadata.auto.initialize": ("true", "hoodie.metadata.enable=false"),
    "_hoodie.metadata.ignore.spurious.deletes": ("true", "read option set to false"),
}


@pytest.mark.parametrize("key", HUDI_DEFAULT_ONLY)
def test_a_metadata_switch_is_taken_at_apache_hudis_default_and_refused_otherwise(key):
    taken, why = HUDI_DEFAULT_ONLY[key]
    other = "true" if taken == "false" else "false"
    for given in (taken, taken.upper(), f" {taken} "):
        config = WriteConfig.build("t", "id", options={key: given})
        assert dataclasses.replace(config, options={}) == WriteConfig("t", ("id",))
    with pytest.raises(InvalidConfigError) as error:
        WriteConfig.build("t", "id", options={key: other})
    message = str(error.value)
    assert f"option '{key}'={other} is not supported" in message
    assert why in message and f"Leave it unset (or {taken}" in message
    with pytest.raises(InvalidConfigError, match="must be true or false"):
        WriteConfig.build("t", "id", options={key: "yes"})


def test_both_names_of_the_record_index_switch_are_one_option():
    both = {"hoodie.metadata.record.index.enable": "false",
            "hoodie.metadata.global.record.level.index.enable": "false"}  # fmt: skip
    assert WriteConfig.build("t", "id", options=both).metadata_record_index is False
    (prop,) = [p for p in OPTIONS if "hoodie.metadata.record.index.enable" in p.keys]
    assert prop.key == "hoodie.metadata.global.record.level.index.enable"  # 1.2's name first
    with pytest.raises(InvalidConfigError, match="same setting with different values"):
        WriteConfig.build(
            "t",
            "id",
            options={
                "hoodie.metadata.record.index.enable": "true",
                "hoodie.metadata.global.record.level.index.enable": "false",
            },
        )


RECORD_INDEX_SIZING = {
    # attribute: (Apache Hudi 0.15's key, 1.2's key (the same where it kept it), default, a value)
    "metadata_record_index_min_file_groups": (
        "hoodie.metadata.record.index.min.filegroup.count",
        "hoodie.metadata.global.record.level.index.min.filegroup.count", 10, "3"),
    "metadata_record_index_max_file_groups": (
        "hoodie.metadata.record.index.max.filegroup.count",
        "hoodie.metadata.global.record.level.index.max.filegroup.count", 10000, "40"),
    "metadata_record_index_max_file_group_size": (
        "hoodie.metadata.record.index.max.filegroup.size",
        "hoodie.metadata.record.index.max.filegroup.size", 1024**3, "4096"),
    "metadata_record_index_growth_factor": (
        "hoodie.metadata.record.index.growth.factor",
        "hoodie.metadata.record.index.growth.factor", 2.0, "1.5"),
}  # fmt: skip


@pytest.mark.parametrize("attribute", RECORD_INDEX_SIZING)
def test_the_record_index_sizing_options_take_both_apache_hudi_keys(attribute):
    old, new, default, value = RECORD_INDEX_SIZING[attribute]
    assert getattr(WriteConfig("t", ("id",)), attribute) == default
    for key in {old, new}:
        config = WriteConfig.build("t", "id", options={key: value})
        assert getattr(config, attribute) == type(default)(value)
        assert getattr(config.metadata_indexes, attribute.replace("metadata_", "")) == type(
            default
        )(value)
        for bad in ("0", "-2", "many"):
            with pytest.raises(InvalidConfigError, match=f"option '{key}' must be a positive"):
                WriteConfig.build("t", "id", options={key: bad})


def test_the_record_index_is_built_between_its_file_group_bounds():
    with pytest.raises(InvalidConfigError, match=r"min.filegroup.count \(20\) must not be larger"):
        WriteConfig.build("t", "id", options={
            "hoodie.metadata.record.index.min.filegroup.count": "20",
            "hoodie.metadata.record.index.max.filegroup.count": "10",
        })  # fmt: skip
    indexes = WriteConfig.build("t", "id", options={
        "hoodie.metadata.record.index.enable": "true",
        "hoodie.metadata.record.index.max.filegroup.size": str(64 * 1024),
    }).metadata_indexes  # fmt: skip
    assert indexes.record_index is True
    assert indexes.kept(()) == ("record_index",)
    # 100,000 keys x 2.0 of 64-byte entries in 64 KiB file groups: 195 of them
    assert indexes.record_index_file_groups(100_000, 64) == 195
    assert indexes.record_index_file_groups(10, 64) == 10  # the minimum
    # unset: a table's record index is kept, never built; false drops it
    unset = WriteConfig("t", ("id",)).metadata_indexes
    assert unset.kept(("record_index",)) == ("record_index",) and unset.kept(()) == ()
    off = WriteConfig.build("t", "id", options={"hoodie.metadata.record.index.enable": "false"})
    assert off.metadata_indexes.kept(("record_index", "column_stats")) == ("column_stats",)
    # asking for it keeps the metadata table, which false then contradicts
    on = WriteConfig.build("t", "id", options={"hoodie.metadata.record.index.enable": "true"})
    assert on.keeps_metadata_table(6, {})
    with pytest.raises(InvalidConfigError, match="need the metadata table"):
        WriteConfig.build(
            "t",
            "id",
            options={
                "hoodie.metadata.record.index.enable": "true",
                "hoodie.metadata.enable": "false",
            },
        )


def test_the_metadata_compaction_trigger_options():
    config = WriteConfig.build("t", "id", options={
        "hoodie.metadata.compact.trigger.strategy": "num_and_time",
        "hoodie.metadata.compact.max.delta.seconds": "60",
    })  # fmt: skip
    assert config.metadata_compaction_trigger == "NUM_AND_TIME"
    assert config.metadata_compaction_delta_seconds == 60
    with pytest.raises(
        InvalidConfigError,
        match="NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST, "
        "TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME",
    ):
        WriteConfig.build("t", "id", options={"hoodie.metadata.compact.trigger.strategy": "DAILY"})
    with pytest.raises(InvalidConfigError, match="max.delta.seconds' must be a positive integer"):
        WriteConfig.build("t", "id", options={"hoodie.metadata.compact.max.delta.seconds": "0"})


def test_the_metadata_log_file_size_is_any_positive_size():
    """Our metadata table log files hold one append each (never appended to), what Apache
    Hudi's rollover after an append gives at any size: every positive size is met."""
    for size in ("1", "2147483648", "9999999999999"):
        WriteConfig.build("t", "id", options={"hoodie.metadata.max.logfile.size": size})
    with pytest.raises(InvalidConfigError, match="max.logfile.size' must be a positive integer"):
        WriteConfig.build("t", "id", options={"hoodie.metadata.max.logfile.size": "-1"})


SECONDARY = "hoodie.metadata.index.secondary.enable"
WITH_SECONDARY_INDEX = {
    props.METADATA_PARTITIONS: "files,record_index,secondary_index_idx_city",
    props.METADATA_PARTITIONS_INFLIGHT: "",
}


def test_keeping_a_secondary_index_we_cannot_update_is_refused():
    """Apache Hudi 1.x keeps the secondary indexes CREATE INDEX made (its default, true); our
    writes rebuild a metadata table holding one without it, so an explicit true is refused
    on such a table, and false (or unset) lets them go."""
    keep = WriteConfig.build("t", "id", options={SECONDARY: "true"})
    with pytest.raises(InvalidConfigError) as error:
        keep.for_table(8, WITH_SECONDARY_INDEX)
    message = str(error.value)
    assert f"{SECONDARY}=true" in message and "secondary_index_idx_city" in message
    assert "Set it to false" in message
    assert keep.for_table(8, {}).metadata_table is True  # no secondary index: nothing to keep
    off = WriteConfig.build("t", "id", options={SECONDARY: "true", "hoodie.metadata.enable":
                                                "false"})  # fmt: skip
    assert off.for_table(8, WITH_SECONDARY_INDEX).metadata_table is False  # it all goes
    for options in ({SECONDARY: "false"}, {}):
        chosen = WriteConfig.build("t", "id", options=options).for_table(8, WITH_SECONDARY_INDEX)
        assert chosen.metadata_table is True

"""Key generator settings: how a write asks for them (WriteConfig, a dbt model's config), what
`hoodie.properties` keeps of them (as Apache Hudi 1.2 and 0.15 wrote it in the probe,
docs/design/incremental-samples/runs/keygen-*.txt) and which partition fields readers may
prune on."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import CompilationError
from pyspark.sql.datasource import EqualTo

from dbt.adapters.hoodie.model_config import model_settings
from hoodie import properties as P
from hoodie.config import WriteConfig
from hoodie.exceptions import InvalidConfigError
from hoodie.meta_client import identity_changes, table_properties_for
from hoodie.read.partition_filter import PartitionMatcher

K = "hoodie.keygen.timebased."
TS_CLASS = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
TIMESTAMP = {
    "hoodie.datasource.write.keygenerator.class": TS_CLASS,
    K + "timestamp.type": "DATE_STRING",
    K + "input.dateformat": "yyyy-MM-dd HH:mm:ss,yyyy-MM-dd",
    K + "output.dateformat": "yyyy/MM/dd",
}
CUSTOM = {
    "hoodie.datasource.write.keygenerator.type": "CUSTOM",
    K + "timestamp.type": "EPOCHMILLISECONDS",
    K + "output.dateformat": "yyyyMMdd",
}
# What Apache Hudi 1.2 wrote (table version 8) for the probe's custom and timestamp tables.
HUDI_CUSTOM_V8 = """#Updated at 2026-12-06T20:31:00Z
hoodie.table.name=keygen_probe
hoodie.table.version=8
hoodie.timeline.layout.version=2
hoodie.table.recordkey.fields=id,region
hoodie.table.keygenerator.type=CUSTOM
hoodie.table.partition.fields=region\\:SIMPLE,ts_ms\\:TIMESTAMP
"""
HUDI_TIMESTAMP_V6_015 = """hoodie.table.name=keygen_probe
hoodie.table.version=6
hoodie.table.recordkey.fields=id
hoodie.table.keygenerator.class=org.apache.hudi.keygen.TimestampBasedKeyGenerator
hoodie.table.partition.fields=day
hoodie.keygen.timebased.input.dateformat=yyyy-MM-dd HH\\:mm\\:ss,yyyy-MM-dd
hoodie.keygen.timebased.output.dateformat=yyyy-MM-dd-HH
"""


def test_typed_partition_fields_are_kept_and_written_back_as_apache_hudi_wrote_them():
    stored = P.TableProperties.from_dict(P.loads(HUDI_CUSTOM_V8))
    assert stored.partition_fields == ("region", "ts_ms")
    assert stored.partition_types == ("SIMPLE", "TIMESTAMP")
    assert stored.key_generator_class == "org.apache.hudi.keygen.CustomKeyGenerator"
    assert stored.value_partition_fields == ("region",)
    text = P.dumps(stored.to_dict())
    assert "hoodie.table.partition.fields=region\\:SIMPLE,ts_ms\\:TIMESTAMP\n" in text
    assert "hoodie.table.keygenerator.type=CUSTOM\n" in text
    six = P.TableProperties.from_dict(P.loads(HUDI_TIMESTAMP_V6_015))
    assert six.value_partition_fields == ()  # a date made from `day`: nothing to prune by
    assert (
        dataclass_replace(stored, table_version=6).to_dict()[P.PARTITION_FIELDS] == "region,ts_ms"
    )


def dataclass_replace(props, **changes):
    import dataclasses

    return dataclasses.replace(props, **changes)


def test_the_type_is_honoured_when_the_class_is_absent_and_both_must_agree():
    by_type = WriteConfig.build("t", "id", "ts", options={
        "hoodie.datasource.write.keygenerator.type": "timestamp", **{
            k: v for k, v in TIMESTAMP.items() if "keygenerator" not in k}})  # fmt: skip
    assert by_type.key_generator == "TIMESTAMP"
    with pytest.raises(InvalidConfigError, match="set one of them"):
        WriteConfig.build("t", "id", "ts", options={
            **TIMESTAMP, "hoodie.datasource.write.keygenerator.type": "SIMPLE"})  # fmt: skip


@pytest.mark.parametrize(("partitions", "options", "message"), [
    ("day", {**TIMESTAMP, "hoodie.datasource.write.recordkey.field": "id,b"}, "one record key"),
    ("a,b", TIMESTAMP, "one partition field"),
    ("region,ts_ms", {"hoodie.datasource.write.keygenerator.type": "CUSTOM"}, "column:SIMPLE"),
    ("region:SIMPLE", {"hoodie.datasource.write.keygenerator.type": "SIMPLE"}, "CustomKey"),
    ("region:YEAR", {}, "not SIMPLE or TIMESTAMP"),
    ("day", {K + "timestamp.type": "UNIX_TIMESTAMP"}, "set the timestamp parts"),
    ("day", {**TIMESTAMP, K + "output.dateformat": "yyyy-ww"}, "'w' \\(week of weekyear"),
    ("day", {**TIMESTAMP, K + "input.timezone": "Moon/Base"}, "not a time zone"),
    ("day", {**TIMESTAMP, K + "timestamp.type": "SECONDS"}, "must be one of UNIX_TIMESTAMP"),
    ("day", {**TIMESTAMP, "hoodie.datasource.write.keygenerator.consistent.logical.timestamp"
                          ".enabled": "true"}, "only false|not supported"),
])  # fmt: skip
def test_settings_apache_hudi_refuses_or_we_cannot_honour_are_refused(partitions, options,
                                                                     message):  # fmt: skip
    options = {"hoodie.datasource.write.recordkey.field": "id", **options}
    with pytest.raises(InvalidConfigError, match=message):
        WriteConfig.build("t", partition_path=partitions, options=options)


def test_the_table_keeps_the_settings_given_under_their_own_keys():
    """As Apache Hudi 1.2: the timebased keys set (a deltastreamer alias under the key it is
    an alias of), none of the defaults; a custom key generator's parts keep none."""
    aliased = {k.replace("hoodie.keygen", "hoodie.deltastreamer.keygen"): v
               for k, v in TIMESTAMP.items()}  # fmt: skip
    config = WriteConfig.build(
        "t", "id", "day", options={**aliased, "hoodie.write.table.version": "8"}
    )
    stored = table_properties_for(config).to_dict()
    assert {k: v for k, v in stored.items() if k.startswith("hoodie.keygen")} == {
        k: v for k, v in TIMESTAMP.items() if k.startswith(K)
    }
    assert stored[P.KEY_GENERATOR_TYPE] == "TIMESTAMP"
    custom = WriteConfig.build(
        "t",
        "id",
        "region:SIMPLE,ts_ms:TIMESTAMP",
        options={**CUSTOM, "hoodie.write.table.version": "8"},
    )
    kept = table_properties_for(custom).to_dict()
    assert not [k for k in kept if k.startswith("hoodie.keygen")]
    assert kept[P.PARTITION_FIELDS] == "region:SIMPLE,ts_ms:TIMESTAMP"


def test_a_later_write_takes_or_must_match_the_tables_key_generator():
    stored = P.TableProperties.from_dict(P.loads(HUDI_TIMESTAMP_V6_015))
    plain = WriteConfig.build("keygen_probe", "id", "day")
    with pytest.raises(InvalidConfigError, match="needs hoodie.keygen.timebased.timestamp.type"):
        table_properties_for(plain, stored)  # 0.15 kept no type: the write must say it
    typed = P.TableProperties.from_dict(
        P.loads(HUDI_TIMESTAMP_V6_015 + f"{K}timestamp.type=DATE_STRING\n")
    )
    assert identity_changes(typed, table_properties_for(plain, typed)) == []  # the table's
    other = WriteConfig.build("keygen_probe", "id", "day", options={
        **TIMESTAMP, K + "output.dateformat": "yyyyMMdd"})  # fmt: skip
    (change,) = identity_changes(stored, table_properties_for(other, stored))
    assert change.setting == "hoodie.keygen.timebased.*"
    same = WriteConfig.build("keygen_probe", "id", "day", options={
        **TIMESTAMP, K + "output.dateformat": "yyyy-MM-dd-HH"})  # fmt: skip
    # 0.15 keeps no timestamp.type: those it keeps must agree, the rest are the write's
    assert identity_changes(stored, table_properties_for(same, stored)) == []
    simple = WriteConfig.build(
        "keygen_probe",
        "id",
        "day",
        options={
            "hoodie.datasource.write.keygenerator.class": P.SIMPLE_KEYGEN,
        },
    )
    (change,) = identity_changes(stored, table_properties_for(simple, stored))
    assert change.setting == "hoodie.datasource.write.keygenerator.class"


def test_partition_pruning_only_on_value_parts():
    custom = P.TableProperties.from_dict(P.loads(HUDI_CUSTOM_V8))
    assert PartitionMatcher.usable(EqualTo(("region",), "eu"), custom.value_partition_fields)
    assert not PartitionMatcher.usable(EqualTo(("ts_ms",), 5), custom.value_partition_fields)
    matcher = PartitionMatcher(custom.partition_fields, {"region": __import__("pyarrow").string()},
                               False, False, [EqualTo(("region",), "eu")])  # fmt: skip
    assert matcher("eu/20260101") and not matcher("us/20260101")


def test_a_dbt_model_asks_for_a_timestamp_key_generator_by_options():
    config = {"materialized": "cow_upsert", "unique_key": "id", "partition_by": "day",
              "options": {"hoodie.datasource.write.keygenerator.type": "TIMESTAMP",
                          **{k: v for k, v in TIMESTAMP.items() if k.startswith(K)}}}  # fmt: skip
    written = model_settings("orders", config, table_type="COPY_ON_WRITE", schema="s",
                             alias="orders", warehouse_dir="/tmp/w").write_config  # fmt: skip
    assert written.key_generator == "TIMESTAMP" and written.partition_fields == ("day",)
    config["options"][K + "output.dateformat"] = "EEE yyyy"
    with pytest.raises(CompilationError, match="'E' \\(day of week text"):
        model_settings("orders", config, table_type="COPY_ON_WRITE", schema="s",
                       alias="orders", warehouse_dir="/tmp/w")  # fmt: skip
    custom = {
        "materialized": "cow_upsert",
        "unique_key": "id",
        "partition_by": "region:SIMPLE,ts_ms:TIMESTAMP",
        "options": dict(CUSTOM),
    }
    written = model_settings("orders", custom, table_type="COPY_ON_WRITE", schema="s",
                             alias="orders", warehouse_dir="/tmp/w").write_config  # fmt: skip
    assert written.partition_fields == ("region", "ts_ms")
    assert written.partition_types == ("SIMPLE", "TIMESTAMP")

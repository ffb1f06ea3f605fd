"""The profile (`type: hoodie`) and model config resolution: aliases, defaults, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.hoodie.credentials import HoodieCredentials
from dbt.adapters.hoodie.environment import session_conf
from dbt.adapters.hoodie.model_config import model_settings


def creds(**kwargs) -> HoodieCredentials:
    return HoodieCredentials.from_dict({"schema": "analytics", **kwargs})


def test_only_schema_is_required():
    c = creds()
    assert c.type == "hoodie"
    assert str(c.method) == "session"
    assert c.unique_field == "local[*]"
    assert c.spark_conf["spark.sql.ansi.enabled"] == "false"


def test_server_side_parameters_is_an_alias_of_spark_conf():
    c = creds(server_side_parameters={"spark.sql.shuffle.partitions": "3"})
    assert c.spark_conf["spark.sql.shuffle.partitions"] == "3"
    with pytest.raises(DbtRuntimeError, match="set it once"):
        creds(
            spark_conf={"spark.sql.shuffle.partitions": "2"},
            server_side_parameters={"spark.sql.shuffle.partitions": "3"},
        )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"master": "localhost"}, "master 'localhost' is not a Spark master URL"),
        ({"remote": "http://x"}, "remote 'http://x' is not a Spark Connect URL"),
        ({"master": "local[2]", "remote": "sc://h:15002"}, "not both"),
        ({"method": "thrift", "host": "h"}, "method 'thrift' is not supported"),
    ],
)
def test_bad_profiles_name_the_key(kwargs, message):
    with pytest.raises(Exception, match=message):
        creds(**kwargs)


def test_valid_masters_and_remotes():
    for master in ("local", "local[4]", "local[*]", "spark://h:7077", "yarn", "k8s://https://h"):
        assert creds(master=master).unique_field == master
    assert creds(remote="sc://host:15002").unique_field == "sc://host:15002"


def test_a_connect_server_keeps_its_own_warehouse_and_metastore():
    for key in ("warehouse_dir", "metastore_dir"):
        with pytest.raises(DbtRuntimeError, match=f"`{key}` cannot be set with remote"):
            creds(remote="sc://host:15002", **{key: "/lake"})
    # Only session settings go to a running server; static ones would be refused by it.
    sent = session_conf(creds(remote="sc://host:15002", spark_conf={"spark.x": "1"}))
    assert sent["spark.sql.session.timeZone"] == "UTC" and sent["spark.x"] == "1"
    assert not {"spark.sql.warehouse.dir", "spark.sql.catalogImplementation",
                "spark.driver.extraJavaOptions"} & set(sent)  # fmt: skip
    # A local Connect server (remote: local[2]) or an in-process session starts here, with them.
    for profile in ({"remote": "local[2]"}, {"master": "local[2]"}):
        conf = session_conf(creds(warehouse_dir="/lake", **profile))
        assert conf["spark.sql.warehouse.dir"] == "/lake"
        assert conf["spark.sql.catalogImplementation"] == "hive"


def test_the_core_is_shipped_to_clusters_and_connect_servers():
    assert not creds().ships_core  # local[*]: the workers run this Python
    assert not creds(master="local[2]").ships_core
    for master in ("local-cluster[2,1,1024]", "spark://h:7077", "yarn", "k8s://https://h"):
        assert creds(master=master).ships_core, master
    assert creds(remote="sc://host:15002").ships_core
    assert not creds(master="yarn", ship_core=False).ships_core  # installed on the cluster
    assert creds(master="local[2]", ship_core=True).ships_core


def settings(config, **kwargs):
    base = {"materialized": "cow_upsert"}
    return model_settings(
        "orders",
        {**base, **config},
        table_type="COPY_ON_WRITE",
        schema=kwargs.get("schema", "analytics"),
        alias="orders",
        warehouse_dir="/wh",
    )


@pytest.mark.parametrize("alias", ["record_key", "unique_key", "recordKey", "primaryKey"])
def test_record_key_aliases(alias):
    assert settings({alias: "id"}).write_config.record_key_fields == ("id",)


def test_partition_and_precombine_aliases_and_lists():
    s = settings({"unique_key": ["a", "b"], "partition_by": "d", "preCombineField": "ts"})
    assert s.write_config.record_key_fields == ("a", "b")
    assert s.write_config.partition_fields == ("d",)
    assert s.write_config.precombine_field == "ts"
    assert settings(
        {"record_key": "id", "partitionPath": ["y", "m"]}
    ).write_config.partition_fields == ("y", "m")


def test_agreeing_aliases_are_fine_and_disagreeing_ones_fail():
    assert settings({"record_key": "id", "unique_key": ["id"]}).write_config.record_key_fields == (
        "id",
    )
    with pytest.raises(
        CompilationError, match=r"Model 'orders': record_key='id' and unique_key='x'"
    ):
        settings({"record_key": "id", "unique_key": "x"})


def test_repeated_record_key_columns_count_once():
    # dbt treats ['state', 'state'] as the key 'state': the stored keys must not differ.
    keys = settings({"record_key": ["state", "state", "city"]}).write_config.record_key_fields
    assert keys == ("state", "city")


def test_missing_record_key_names_the_model():
    with pytest.raises(
        CompilationError, match=r"Model 'orders' \(materialized='cow_upsert'\) needs a record key"
    ):
        settings({})


def test_location():
    assert settings({"record_key": "id"}).base_uri == "/wh/analytics.db/orders"
    assert (
        settings({"record_key": "id", "location_root": "s3://bucket/lake/"}).base_uri
        == "s3://bucket/lake/orders"
    )


def test_options_are_validated():
    s = settings(
        {
            "record_key": "id",
            "options": {
                "hoodie.parquet.max.file.size": "1000000",
                "hoodie.parquet.small.file.limit": "0",
            },
        }
    )
    assert s.write_config.max_file_size == 1_000_000
    with pytest.raises(CompilationError, match="unknown option 'hoodie.nope'"):
        settings({"record_key": "id", "options": {"hoodie.nope": "1"}})
    with pytest.raises(CompilationError, match="must be a map"):
        settings({"record_key": "id", "options": ["x"]})
    with pytest.raises(CompilationError, match="hive_style_partitioning must be true or false"):
        settings({"record_key": "id", "hive_style_partitioning": "yes"})


def mor_settings(config):
    return model_settings(
        "orders",
        {"materialized": "mor_upsert", "record_key": "id", **config},
        table_type="MERGE_ON_READ",
        schema="analytics",
        alias="orders",
        warehouse_dir="/wh",
    )


def test_compaction_settings_become_hudi_options():
    cfg = mor_settings({}).write_config
    assert (cfg.table_type, cfg.inline_compaction, cfg.compaction_delta_commits) == (
        "MERGE_ON_READ", True, 5,
    )  # fmt: skip
    cfg = mor_settings({"compaction": "off", "compaction_delta_commits": 2}).write_config
    assert (cfg.inline_compaction, cfg.compaction_delta_commits) == (False, 2)
    assert mor_settings({"compaction": "inline"}).write_config.inline_compaction is True
    same = mor_settings({"compaction": "off", "options": {"hoodie.compact.inline": "false"}})
    assert same.write_config.inline_compaction is False
    cfg = mor_settings({"compaction": "schedule"}).write_config
    assert (cfg.inline_compaction, cfg.schedule_inline_compaction) == (False, True)
    assert mor_settings({}).write_config.schedule_inline_compaction is False


@pytest.mark.parametrize(
    "config, message",
    [
        ({"compaction": "sometimes"}, "compaction must be 'inline'"),
        ({"compaction_delta_commits": 0}, "compaction_delta_commits must be a positive"),
        ({"compaction_delta_commits": "5"}, "compaction_delta_commits must be a positive"),
        (
            {"compaction": "off", "options": {"hoodie.compact.inline": "true"}},
            "'hoodie.compact.inline'='true' disagrees",
        ),
        ({"options": {"hoodie.compact.inline.max.delta.commits": "x"}}, "positive integer"),
        (
            {"compaction": "inline", "options": {"hoodie.compact.schedule.inline": "true"}},
            "'hoodie.compact.schedule.inline'='true' disagrees",
        ),
    ],
)
def test_bad_compaction_settings_name_the_model(config, message):
    with pytest.raises(CompilationError, match="Model 'orders'") as error:
        mor_settings(config)
    assert message in str(error.value)


def test_compaction_settings_on_a_copy_on_write_model_fail():
    with pytest.raises(CompilationError, match="mor_upsert' only"):
        settings({"record_key": "id", "compaction": "off"})


# -- every config key is honoured, refused or warned about (config_keys) ----------------------
def dbt_config(**config):
    """A model's config as dbt hands it to the materialization: dbt's keys with their defaults
    (ModelConfig), then the model's own."""
    from dbt.artifacts.resources import ModelConfig

    return {**ModelConfig().to_dict(), "materialized": "cow_upsert", "record_key": "id", **config}


def test_dbt_defaults_pass_without_a_warning():
    from dbt.adapters.hoodie.config_keys import check_keys

    checked = check_keys("orders", dbt_config())
    assert checked.warnings == ()
    assert settings(dbt_config()).write_config.record_key_fields == ("id",)


def test_top_level_hoodie_keys_are_options():
    # The stale-row case: a precombine field set at the top level (a config({...}) dict,
    # +hoodie... in dbt_project.yml, schema.yml) orders the rows.
    cfg = settings(dbt_config(**{"hoodie.datasource.write.precombine.field": "ts"})).write_config
    assert cfg.precombine_field == "ts"
    cfg = settings(dbt_config(**{"hoodie.index.type": "BUCKET"})).write_config
    assert cfg.index_type == "BUCKET"
    with pytest.raises(CompilationError, match="'hoodie.index.typ'.*hoodie.index.type"):
        settings(dbt_config(**{"hoodie.index.typ": "BUCKET"}))


def test_hudi_options_of_dbt_glue_are_options():
    cfg = settings(dbt_config(hudi_options={"hoodie.datasource.write.precombine.field": "ts"}))
    assert cfg.write_config.precombine_field == "ts"
    with pytest.raises(CompilationError, match="unknown option 'hoodie.nope'"):
        settings(dbt_config(hudi_options={"hoodie.nope": "1"}))
    with pytest.raises(CompilationError, match="config 'hudi_options' must be a map"):
        settings(dbt_config(hudi_options="hoodie.index.type=BUCKET"))
    # A key set to null (in yml) is not set there.
    none = settings(dbt_config(**{"hoodie.datasource.write.precombine.field": None}))
    assert none.write_config.precombine_field is None


@pytest.mark.parametrize(
    "config, named",
    [
        (
            {"precombine_field": "ts", "hoodie.datasource.write.precombine.field": "other"},
            ["precombine_field=ts", "'hoodie.datasource.write.precombine.field'=other"],
        ),
        (
            {"options": {"hoodie.index.type": "SIMPLE"}, "hoodie.index.type": "BUCKET"},
            ["'SIMPLE' in options", "'BUCKET' in the config's top level"],
        ),
        (
            {
                "options": {"hoodie.index.type": "SIMPLE"},
                "hudi_options": {"hoodie.index.type": "BUCKET"},
            },
            ["'SIMPLE' in options", "'BUCKET' in hudi_options"],
        ),
        (
            {
                "hoodie.table.precombine.field": "ts",
                "options": {"hoodie.datasource.write.precombine.field": "other"},
            },
            ["'hoodie.datasource.write.precombine.field'", "'hoodie.table.precombine.field'"],
        ),
    ],
)
def test_one_setting_with_two_values_names_both(config, named):
    with pytest.raises(CompilationError, match="Model 'orders'") as error:
        settings(dbt_config(**config))
    for text in named:
        assert text in str(error.value)
    # The same value twice is fine.
    same = {k: v for k, v in config.items()}
    if "hoodie.index.type" in same:
        same["hoodie.index.type"] = "SIMPLE"
        same.pop("hudi_options", None)
        settings(dbt_config(**same))


def test_a_boolean_given_as_yaml_and_as_text_is_one_value():
    # dbt_project.yml's `+hoodie...: true` is a boolean; options={'...': 'true'} is text.
    key = "hoodie.datasource.write.hive_style_partitioning"
    config = dbt_config(**{key: True, "options": {key: "true"}}, partition_path="dt")
    assert settings(config).write_config.hive_style_partitioning is True
    with pytest.raises(CompilationError, match="set twice with different values"):
        settings(dbt_config(**{key: True, "options": {key: "false"}}, partition_path="dt"))


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("incremental_strategy", "microbatch", "materialized='incremental', file_format='hudi'"),
        ("table_type", "mor", "table_type='mor' disagrees with materialized='cow_upsert'"),
        ("incremental_strategy", "append", "'hoodie.datasource.write.operation': 'insert'"),
        ("incremental_strategy", "insert_overwrite", "--full-refresh"),
        ("grants", {"select": ["analyst"]}, "+grants: {}"),
        ("sql_header", "set x = 1", "pre_hook"),
        ("clustered_by", ["id"], "'hoodie.index.type': 'BUCKET'"),
        ("buckets", 4, "'hoodie.index.type': 'BUCKET'"),
        ("file_format", "delta", "file_format='delta' is not what"),
        ("tblproperties", {"comment": "x"}, "tblproperties key 'comment'"),
        ("tblproperties", {"type": "mor"}, "type='mor' disagrees with the table type cow_upsert"),
        ("precombine_feild", "ts", "Did you mean 'precombine_field'?"),
        ("my_macro_setting", 1, "belong under meta"),
    ],
)
def test_configs_that_would_do_nothing_are_refused(key, value, message):
    with pytest.raises(CompilationError, match="Model 'orders'") as error:
        settings(dbt_config(**{key: value}))
    assert key in str(error.value) and message in str(error.value)


COLUMNS = ["id", "dt", "ts", "Name", "amount"]


def partial(**config):
    model = dbt_config(partition_path="dt", precombine_field="ts", **config)
    return model_settings(
        "orders", model, table_type="COPY_ON_WRITE", schema="analytics", alias="orders",
        warehouse_dir="/wh", columns=COLUMNS,
    ).write_config  # fmt: skip


def test_merge_update_and_exclude_columns_resolve_as_dbt_spark_does():
    assert partial().partial_update_columns == ()
    assert partial(merge_update_columns=["amount"]).partial_update_columns == ("amount",)
    # names are matched without case and given as the model spells them
    assert partial(merge_update_columns=["name", "AMOUNT"]).partial_update_columns == (
        "Name", "amount")  # fmt: skip
    excluded = partial(merge_exclude_columns=["NAME"]).partial_update_columns
    assert excluded == ("id", "dt", "ts", "amount")
    # what a matched row replaces: the listed columns, key, partition and ordering columns
    assert partial(merge_update_columns=["amount"]).replaced_columns(COLUMNS) == {
        "id", "dt", "ts", "amount"}  # fmt: skip
    # without the model's columns (snapshots, other callers) nothing is resolved
    unresolved = settings(dbt_config(merge_update_columns=["x"])).write_config
    assert unresolved.partial_update_columns == ()


@pytest.mark.parametrize(
    "config, message",
    [
        ({"merge_update_columns": ["amount"], "merge_exclude_columns": ["Name"]},
         "cannot specify merge_update_columns and merge_exclude_columns"),
        ({"merge_update_columns": ["amount", "amout"]},
         "merge_update_columns names amout, which is not a column of the model (its columns: "
         "id, dt, ts, Name, amount)"),
        ({"merge_exclude_columns": ["nme"]}, "merge_exclude_columns names nme, which is not"),
        ({"merge_exclude_columns": ["DT"]}, "names dt, the record key or partition column"),
        ({"merge_update_columns": "amount", "options": {
            "hoodie.write.partial.update.columns": "Name"}}, "set only one of them"),
        ({"merge_update_columns": ["amount"], "options": {"hoodie.index.type": "GLOBAL_SIMPLE"}},
         "set hoodie.simple.index.update.partition.path=false"),
        ({"merge_update_columns": [1]}, "must be a list of column names"),
    ],
)  # fmt: skip
def test_partial_update_configs_that_cannot_work_are_refused(config, message):
    with pytest.raises(CompilationError, match="orders") as error:
        partial(**config)
    assert message in str(error.value)


def test_honoured_spellings_of_dbt_spark_and_hudi_sql():
    assert settings(dbt_config(incremental_strategy="merge", file_format="hudi"))
    cfg = settings(dbt_config(
        record_key=None,
        tblproperties={"primaryKey": "id", "preCombineField": "ts", "type": "cow",
                       "hoodie.index.type": "BUCKET"},
    )).write_config  # fmt: skip
    assert cfg.record_key_fields == ("id",)
    assert (cfg.precombine_field, cfg.index_type) == ("ts", "BUCKET")
    with pytest.raises(CompilationError, match="record_key='id' and tblproperties.primaryKey='x'"):
        settings(dbt_config(tblproperties={"primaryKey": "x"}))


def test_incremental_lake_models_name_their_table_type():
    from dbt.adapters.hoodie.config_keys import lake_materialization

    def lake(**config):
        checked = dbt_config(materialized="incremental", file_format="hudi", **config)
        settings(checked)  # every key passes
        return lake_materialization("Model 'orders'", checked)

    assert lake() == "cow_upsert"
    assert lake(table_type="mor") == "mor_upsert"
    assert lake(table_type="COW") == "cow_upsert"
    assert lake(tblproperties={"type": "mor"}) == "mor_upsert"
    with pytest.raises(CompilationError, match="table_type must be 'cow'.*got 'parquet'"):
        lake(table_type="parquet")
    with pytest.raises(CompilationError, match="type='cow' disagrees with the table type mor"):
        lake(table_type="mor", tblproperties={"type": "cow"})


def test_microbatch_keys_belong_to_incremental_lake_models():
    from dbt.adapters.hoodie.config_keys import check_keys

    microbatch = dbt_config(materialized="incremental", file_format="hudi",
                            incremental_strategy="microbatch", event_time="ts",
                            batch_size="day", begin="2026-01-01", lookback=2)  # fmt: skip
    assert check_keys("batched_model", microbatch).warnings == ()  # dbt reads them all
    # dbt runs the batches one after another whatever concurrent_batches says (the adapter
    # does not claim MicrobatchConcurrency), and warns about it at parse time itself
    assert check_keys("batched_model", {**microbatch, "concurrent_batches": True}).warnings == ()
    # dbt-core batches only materialized='incremental': the lake materializations say so.
    with pytest.raises(CompilationError, match="table_type='mor' instead of .*'mor_upsert'"):
        check_keys("batched_model", {**microbatch, "materialized": "mor_upsert"})


def test_configs_of_other_resources_warn_once_per_model():
    from dbt.adapters.hoodie.config_keys import check_keys

    config = dbt_config(column_types={"id": "int"}, lookback=3, on_configuration_change="fail")
    warnings = check_keys("warned_model", config).warnings
    assert len(warnings) == 3
    assert any("column_types" in w and "seeds only" in w for w in warnings)
    assert any("lookback=3" in w and "microbatch" in w for w in warnings)
    assert any("materialized views only" in w for w in warnings)
    assert check_keys("warned_model", config).warnings == ()  # once
    assert settings(config).write_config.record_key_fields == ("id",)  # and the run goes on


def test_snapshots_take_top_level_hoodie_keys_and_hudi_options():
    from dbt.adapters.hoodie.snapshot import snapshot_settings

    columns = {"dbt_scd_id": "dbt_scd_id", "dbt_valid_to": "dbt_valid_to"}
    config = {
        "hoodie.parquet.compression.codec": "zstd",
        "hudi_options": {"hoodie.index.type": "BUCKET"},
    }
    cfg = snapshot_settings("hist", config, columns, schema="s", alias="hist",
                            warehouse_dir="/wh").write_config  # fmt: skip
    assert (cfg.compression, cfg.index_type) == ("zstd", "BUCKET")


def test_merge_mode_options_reach_the_write_config():
    """`options={'hoodie.datasource.write.payload.class': ...}` and a merge mode, at the top
    level or in options, are the table's merge mode (hoodie.merge), never dropped."""
    partial = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
    cfg = settings(dbt_config(options={"hoodie.datasource.write.payload.class": partial}))
    assert cfg.write_config.payload_class == partial
    cfg = settings(dbt_config(**{"hoodie.record.merge.mode": "commit_time_ordering"}))
    assert cfg.write_config.record_merge_mode == "COMMIT_TIME_ORDERING"
    with pytest.raises(CompilationError, match="hoodie.datasource.write.payload.class"):
        settings(dbt_config(options={"hoodie.datasource.write.payload.class": "x.MyPayload"}))


def test_cdc_options_reach_the_write_config():
    """`hoodie.table.cdc.*` in options or tblproperties are what a new table is created with
    (hoodie.meta_client.table_properties_for), the mode in any case."""
    cfg = settings(dbt_config(options={"hoodie.table.cdc.enabled": "true"}))
    assert cfg.write_config.cdc_enabled is True
    cfg = settings(dbt_config(tblproperties={
        "hoodie.table.cdc.enabled": "true",
        "hoodie.table.cdc.supplemental.logging.mode": "op_key_only",
    }))  # fmt: skip
    write = cfg.write_config
    assert (write.cdc_enabled, write.cdc_supplemental_logging_mode) == (True, "OP_KEY_ONLY")
    assert settings(dbt_config()).write_config.cdc_enabled is None  # the table's
    with pytest.raises(CompilationError, match="hoodie.table.cdc.supplemental.logging.mode"):
        settings(dbt_config(options={"hoodie.table.cdc.supplemental.logging.mode": "all"}))


def test_the_jvm_logs_to_a_file_beside_dbts_log(tmp_path, monkeypatch):
    """A local session's JVM warnings go to <log-path>/spark.log, not the terminal; a profile
    with its own log4j2 configuration keeps it, and a Connect server is left alone."""
    monkeypatch.chdir(tmp_path)
    options = session_conf(creds(master="local[2]"))["spark.driver.extraJavaOptions"]
    assert "-Dderby.system.home=" in options
    assert f"-Dhoodie.spark.log={tmp_path / 'logs' / 'spark.log'}" in options
    config = options.split("-Dlog4j2.configurationFile=file:")[1].split()[0]
    assert "${sys:hoodie.spark.log}" in Path(config).read_text()
    own = {"spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=/etc/mine.properties"}
    kept = session_conf(creds(master="local[2]", spark_conf=own))
    assert kept["spark.driver.extraJavaOptions"] == own["spark.driver.extraJavaOptions"]
    assert "spark.driver.extraJavaOptions" not in session_conf(creds(remote="sc://h:15002"))

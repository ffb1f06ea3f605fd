"""hoodie.options: every option declared once, per domain, and the reference generated from it."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

from hoodie import properties
from hoodie.bloom_filter import FILTER_TYPES, BloomFilterSpec
from hoodie.config import WRITE_TABLE_VERSIONS, WriteConfig, parse_options
from hoodie.exceptions import InvalidConfigError
from hoodie.options import read, reference, storage, table, write
from hoodie.options.property import (
    Alias,
    ConfigProperty,
    by_key,
    choice_values,
    positive_int,
    show_default,
)
from hoodie.read.options import ReadOptions
from hoodie.read.packing import MAX_PARTITION_BYTES
from hoodie.storage import SECRET_OPTIONS, load_file_io

DOCS = Path(__file__).resolve().parents[2] / "docs" / "options.md"
DOMAINS = {
    "write": write.OPTIONS,
    "read": read.READ_OPTIONS,
    "table": table.TABLE_PROPERTIES,
    "storage": storage.STORAGE_OPTIONS,
}


def test_the_option_reference_is_generated_from_the_declarations():
    assert DOCS.read_text() == reference.render(), (
        f"docs/options.md is stale: regenerate it with `{reference.COMMAND}`"
    )


def test_the_reference_lists_every_key_of_every_domain_with_its_default():
    """(A key of two domains, `hoodie.metadata.enable` of readers and writers, has a row in
    each, with that domain's default.)"""
    lines = reference.render().splitlines()
    for declarations in DOMAINS.values():
        for prop in declarations:
            rows = [line for line in lines if line.startswith(f"| `{prop.key}`")]
            domains = [d for d in DOMAINS.values() if any(p.key == prop.key for p in d)]
            assert len(rows) == len(domains), prop.key
            row = next(r for r in rows if f" | {show_default(prop.default)} | " in r)
            for key in prop.alternatives:
                assert f"`{key}`" in row


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_domain_declares_each_key_once(domain):
    keys = [key for prop in DOMAINS[domain] for key in prop.keys]
    assert len(keys) == len(set(keys))
    attributes = [prop.attribute for prop in DOMAINS[domain] if prop.attribute]
    assert len(attributes) == len(set(attributes))


def test_a_key_declared_twice_is_refused_when_the_table_is_built():
    one = ConfigProperty("hoodie.a", 1, "a", aliases=(Alias("hoodie.b"),))
    other = ConfigProperty("hoodie.b", 2, "b")
    with pytest.raises(ValueError, match="'hoodie.b' is declared twice"):
        by_key((one, other))


def test_a_deprecated_alias_is_listed_as_such_and_still_read():
    prop = ConfigProperty(
        "hoodie.new.name", 3, "how many", parse=positive_int,
        aliases=(Alias("hoodie.old.name", deprecated=True), Alias("hoodie.other.name")),
    )  # fmt: skip
    assert prop.keys == ("hoodie.new.name", "hoodie.old.name", "hoodie.other.name")
    assert prop.deprecated_keys == ("hoodie.old.name",)
    assert prop.value("hoodie.old.name", " 7 ") == 7
    assert prop.describe() == (
        "hoodie.new.name (also hoodie.old.name (deprecated), hoodie.other.name): how many, "
        "default 3"
    )
    assert reference._keys(prop) == (
        "`hoodie.new.name` / `hoodie.old.name` (deprecated) / `hoodie.other.name`"
    )


def test_no_alias_of_ours_is_deprecated_today():
    """Every alias we accept is a name Apache Hudi reads too (none is only an old spelling);
    one marked deprecated must show in the reference."""
    assert [p.key for d in DOMAINS.values() for p in d if p.deprecated_keys] == []


def _with_choices():
    return [p for p in write.OPTIONS if p.choices is not None]


@pytest.mark.parametrize("prop", _with_choices(), ids=lambda p: p.key)
def test_a_bad_choice_is_refused_naming_the_option_and_its_choices(prop):
    for key in prop.keys:
        with pytest.raises(InvalidConfigError) as error:
            parse_options({key: "no-such-value"})
        message = str(error.value)
        assert f"'{key}'" in message
        for value in choice_values(prop.choices):
            assert value in message, (key, value)


@pytest.mark.parametrize("prop", [p for p in _with_choices() if p.attribute], ids=lambda p: p.key)
def test_every_choice_is_accepted_in_any_case_and_taken_as_declared(prop):
    for member in prop.choices:
        value = str(member.value)
        for given in (value, value.upper(), value.lower(), f" {value} "):
            assert parse_options({prop.key: given})[prop.attribute] == member.value


@pytest.mark.parametrize(
    "prop", [p for d in DOMAINS.values() for p in d if p.choices and p.default is not None],
    ids=lambda p: p.key,
)  # fmt: skip
def test_a_default_is_one_of_its_choices(prop):
    assert prop.default in choice_values(prop.choices) or prop.default in tuple(prop.choices)


def test_a_bad_query_type_is_refused_naming_the_option_and_its_choices():
    with pytest.raises(InvalidConfigError) as error:
        ReadOptions.parse({read.QUERY_TYPE.key: "latest"})
    assert read.QUERY_TYPE.key in str(error.value)
    for value in choice_values(read.QueryType):
        assert value in str(error.value)


def test_the_write_options_of_table_properties_default_as_the_table_domain():
    """A write option that also describes the table (its type, partitioning, version) takes
    the table's default, not one of its own."""
    defaults = WriteConfig("t", ("id",))
    created = properties.TableProperties("t", defaults.table_type, ("id",))
    assert defaults.table_type == table.TYPE.default == properties.COPY_ON_WRITE
    assert defaults.hive_style_partitioning == created.hive_style_partitioning
    assert defaults.url_encode_partition_path == created.url_encode_partition_path
    assert created.table_version == table.VERSION.default == properties.DEFAULT_TABLE_VERSION
    assert WRITE_TABLE_VERSIONS == properties.WRITABLE_VERSIONS == (6, 8)
    assert created.database == table.DATABASE_NAME.default
    assert created.populate_meta_fields is table.POPULATE_META_FIELDS.default


def test_a_stored_table_without_a_key_reads_as_the_declared_default():
    stored = properties.TableProperties.from_dict(
        {table.NAME.key: "t", table.VERSION.key: "6", table.RECORD_KEY_FIELDS.key: "id"}
    )
    assert stored.table_type == table.TYPE.default
    assert stored.timeline_layout_version == table.TIMELINE_LAYOUT_VERSION.default
    assert stored.database == table.DATABASE_NAME.default
    assert stored.hive_style_partitioning is table.HIVE_STYLE_PARTITIONING.default
    assert stored.populate_meta_fields is table.POPULATE_META_FIELDS.default
    written = stored.to_dict()
    assert written[table.BASE_FILE_FORMAT.key] == table.BASE_FILE_FORMAT.default
    assert written[table.ARCHIVELOG_FOLDER.key] == table.ARCHIVELOG_FOLDER.default


def test_the_bloom_filter_defaults_are_the_write_options():
    spec = BloomFilterSpec()
    assert (spec.num_entries, spec.fpp, spec.filter_type, spec.dynamic_max_entries) == tuple(
        write.default(name)
        for name in ("bloom_num_entries", "bloom_fpp", "bloom_filter_type",
                     "bloom_dynamic_max_entries")
    )  # fmt: skip
    assert WriteConfig("t", ("id",)).bloom_filter == spec
    assert FILTER_TYPES == choice_values(write.BloomFilterType)


def test_the_read_defaults_are_the_read_options():
    assert ReadOptions().query_type == read.QUERY_TYPE.default
    assert MAX_PARTITION_BYTES == read.MAX_PARTITION_BYTES.default
    assert [f.name for f in dataclasses.fields(ReadOptions)] == [
        p.attribute for p in read.READ_OPTIONS if p.attribute
    ]


def test_the_secret_storage_options_are_the_declared_credentials():
    assert SECRET_OPTIONS == {p.key for p in storage.STORAGE_OPTIONS if p.secret}
    assert {"access_key", "secret_key", "account_key", "sas_token"} <= SECRET_OPTIONS
    options = {"region": "eu-west-1", "secret_key": "x", "access_key": "y"}
    store = load_file_io("s3://bucket/t", options)
    assert store.shareable_options == {"region": "eu-west-1"}


def test_locks_and_heartbeats_built_without_a_config_take_the_write_options_defaults():
    """What a table service builds without a write config waits, renews and expires as a
    write with the default options does."""
    from hoodie.transaction.failed_writes import FailedWritesPolicy
    from hoodie.transaction.heartbeat import Heartbeat
    from hoodie.transaction.lock import FileSystemLock
    from hoodie.transaction.storage_lock import StorageLock

    config = WriteConfig("t", ("id",))
    fields = {
        cls: {f.name: f.default for f in dataclasses.fields(cls)}
        for cls in (FailedWritesPolicy, FileSystemLock, StorageLock)
    }
    assert fields[FailedWritesPolicy]["heartbeat_interval_seconds"] == (
        config.heartbeat_interval_ms / 1000
    )
    assert fields[FailedWritesPolicy]["tolerable_misses"] == config.heartbeat_tolerable_misses
    assert fields[FileSystemLock]["lease_seconds"] == config.lock_expire_minutes * 60
    assert fields[FileSystemLock]["wait_seconds"] == config.lock_wait_ms / 1000
    assert fields[StorageLock]["validity_seconds"] == config.lock_validity_seconds
    assert fields[StorageLock]["renew_seconds"] == config.lock_renew_seconds
    assert fields[StorageLock]["wait_seconds"] == config.lock_wait_ms / 1000
    interval = inspect.signature(Heartbeat).parameters["interval_seconds"].default
    assert interval == config.heartbeat_interval_ms / 1000

"""When the metadata table is compacted (`hoodie.metadata.compact.trigger.strategy` with
`hoodie.metadata.compact.max.delta.commits` and `.max.delta.seconds`), on a small metadata
table built without Spark, on both table versions.

Instant times are set in 2099: a table whose clock runs ahead of ours gets instants ordered
after its own (`new_instant_time`), so every instant of these tables, version 8's compaction
and completion times too, follows from the times the test gives, and nothing depends on the
wall clock. The in-process floor of new instant times is put back after each test, so that
later tests issue instants of today again.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hoodie import timeline
from hoodie.config import WriteConfig
from hoodie.meta_client import HoodieTableMetaClient, table_properties_for
from hoodie.metadata_records import FileEntry, FilesRecord
from hoodie.table_services.metadata_services import (
    MetadataServicesConfig,
    run_metadata_table_services,
)
from hoodie.timeline import Action, Instant, State
from hoodie.transaction.metadata_writer import MetadataTableWriter

T0 = datetime(2099, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def clock_floor_restored(monkeypatch) -> None:
    """`new_instant_time` never issues a time before one it issued: the 2099 instants of a
    test would otherwise hold every later test of the process in 2099."""
    monkeypatch.setattr(timeline, "_last_issued", timeline._last_issued)
    timeline.new_instant_time()  # as a write issues its instant before the metadata table's


def at(seconds: int) -> str:
    """The instant time `seconds` after T0."""
    moment = T0 + timedelta(seconds=seconds)
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def complete_data_instant(data: HoodieTableMetaClient, instant_time: str) -> None:
    requested = data.save_instant(Instant(instant_time, Action.DELTA_COMMIT, State.REQUESTED))
    data.save_instant(requested.with_state(State.COMPLETED), b"{}")


def new_table(tmp_path, version: int) -> HoodieTableMetaClient:
    """A merge-on-read table with one completed data instant at T0 and a metadata table
    built as of it (its first delta commit: T0 on version 8, T0 + `010` on version 6)."""
    config = WriteConfig.build("t", "id", table_type="MERGE_ON_READ",
                               options={"hoodie.write.table.version": str(version)})  # fmt: skip
    data = HoodieTableMetaClient.create(str(tmp_path / "t"), table_properties_for(config))
    complete_data_instant(data, at(0))
    assert MetadataTableWriter.for_action(data, at(1), "deltacommit") is not None
    return data


def write(data: HoodieTableMetaClient, instant_time: str) -> None:
    """One action: its metadata table delta commit, then its data instant completed."""
    writer = MetadataTableWriter.open_existing(data)
    assert writer is not None
    name = f"f-0_0-1-1_{instant_time}.parquet"
    writer.commit(instant_time, [FilesRecord("p", False, {name: FileEntry(10)})])
    complete_data_instant(data, instant_time)


# (strategy, [(seconds after T0 of a write, is the metadata table compacted after it)]), with
# max.delta.commits 2 (the initialization delta commit counts, as in Apache Hudi) and
# max.delta.seconds 7200.
SCENARIOS = {
    "NUM_COMMITS": [(3600, True), (3660, False), (3720, True)],
    "NUM_COMMITS_AFTER_LAST_REQUEST": [(3600, True), (3660, False), (3720, True)],
    # two delta commits at 3600 would do for a count: time alone decides
    "TIME_ELAPSED": [(3600, False), (7200, True), (7260, False), (10800, False), (14400, True)],
    "NUM_AND_TIME": [(60, False), (7200, True), (14400, False), (14460, True)],
    "NUM_OR_TIME": [(60, True), (7260, True), (7320, False), (7380, True)],
}


@pytest.mark.parametrize("version", [6, 8])
@pytest.mark.parametrize("strategy", SCENARIOS)
def test_the_trigger_strategy_decides_when_the_metadata_table_is_compacted(
    tmp_path, version, strategy
):
    data = new_table(tmp_path, version)
    config = MetadataServicesConfig(compaction_delta_commits=2, compaction_delta_seconds=7200,
                                    compaction_trigger=strategy)  # fmt: skip
    for seconds, compacted in SCENARIOS[strategy]:
        write(data, at(seconds))
        result = run_metadata_table_services(data, config)
        assert (result.compaction is not None) is compacted, (strategy, seconds)


@pytest.mark.parametrize("version", [6, 8])
def test_the_default_trigger_counts_delta_commits_however_old(tmp_path, version):
    data = new_table(tmp_path, version)
    config = MetadataServicesConfig(compaction_delta_commits=3)
    assert config.compaction_trigger == "NUM_COMMITS" and config.compaction_delta_seconds == 7200
    write(data, at(86_400))
    assert run_metadata_table_services(data, config).compaction is None  # a day, 2 commits
    write(data, at(86_401))
    assert run_metadata_table_services(data, config).compaction is not None


def test_the_services_take_the_trigger_from_the_write_options():
    config = WriteConfig.build("t", "id", options={
        "hoodie.metadata.compact.trigger.strategy": "time_elapsed",
        "hoodie.metadata.compact.max.delta.seconds": "600",
        "hoodie.metadata.compact.max.delta.commits": "4",
    })  # fmt: skip
    services = MetadataServicesConfig.of(config)
    assert (services.compaction_trigger, services.compaction_delta_seconds,
            services.compaction_delta_commits) == ("TIME_ELAPSED", 600, 4)  # fmt: skip
    defaults = MetadataServicesConfig.of(WriteConfig("t", ("id",)))
    assert (defaults.compaction_trigger, defaults.compaction_delta_seconds) == (
        MetadataServicesConfig().compaction_trigger,
        MetadataServicesConfig().compaction_delta_seconds,
    )


@pytest.mark.parametrize("version", [6, 8])
def test_a_metadata_table_built_before_any_commit_is_due_by_time_at_once(tmp_path, version):
    """Its first delta commit is an initialization instant of zeros, no date: a time
    trigger counts from long ago (Apache Hudi reads its INIT_INSTANT_TS as the epoch)."""
    config = WriteConfig.build("t", "id", table_type="MERGE_ON_READ",
                               options={"hoodie.write.table.version": str(version)})  # fmt: skip
    data = HoodieTableMetaClient.create(str(tmp_path / "t"), table_properties_for(config))
    assert MetadataTableWriter.for_action(data, at(0), "deltacommit") is not None
    write(data, at(0))
    services = MetadataServicesConfig(compaction_delta_commits=100,
                                      compaction_trigger="TIME_ELAPSED")  # fmt: skip
    assert run_metadata_table_services(data, services).compaction is not None

"""Commits on object storage without rename: the store's conditional writes decide races.

Eight threads race to create one object, thirty times over: exactly one wins each race, and
the object holds the winner's bytes. (Checking for the object, then writing it, lets every
racer win: measured, all 30 rounds went wrong that way.) The timeline's own creates (a
requested instant, `hoodie.properties`) go the same way.
"""

from __future__ import annotations

import threading

from hoodie import WriteConfig
from hoodie.exceptions import CommitError
from hoodie.meta_client import HoodieTableMetaClient, table_properties_for
from hoodie.storage import load_file_io
from hoodie.timeline import Action, Instant, State

RACERS, ROUNDS = 8, 30


def _race(action, racers: int = RACERS) -> list:
    results: list = [None] * racers
    barrier = threading.Barrier(racers)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = action(i)
        except Exception as error:  # noqa: BLE001 - the outcome is what the test checks
            results[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_one_of_many_racing_creates_wins(bucket):
    storage = load_file_io(bucket.uri("t"), bucket.storage_options)
    for round_ in range(ROUNDS):
        name = f".hoodie/race-{round_}"
        outcomes = _race(lambda i, name=name: storage.create_if_absent(name, f"w{i}".encode()))
        winners = [i for i, won in enumerate(outcomes) if won is True]
        assert len(winners) == 1, (round_, outcomes)
        assert storage.read_text(name) == f"w{winners[0]}"


def test_two_writers_never_both_request_one_instant(bucket):
    uri, options = bucket.uri("timeline"), bucket.storage_options
    properties = table_properties_for(WriteConfig.build("t", record_key="id"))
    created = _race(lambda i: HoodieTableMetaClient.create(uri, properties, options), 4)
    assert sum(isinstance(c, HoodieTableMetaClient) for c in created) == 1, created
    meta_client = HoodieTableMetaClient.open(uri, options)
    instant = Instant("20261124120000000", Action.COMMIT, State.REQUESTED)
    outcomes = _race(lambda i: meta_client.save_instant(instant, b""), 4)
    assert sum(o == instant for o in outcomes) == 1, outcomes
    assert all(isinstance(o, CommitError) for o in outcomes if o != instant)


def test_completed_instants_are_written_whole_without_a_temporary_object(bucket):
    storage = load_file_io(bucket.uri("t"), bucket.storage_options)
    storage.write_atomic(".hoodie/20261124120000000.commit", b"{}")
    assert [f.name for f in storage.list_files(".hoodie")] == ["20261124120000000.commit"]

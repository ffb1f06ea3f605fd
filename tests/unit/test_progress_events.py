"""Progress of writes and services (`hoodie.progress`) and the adapter's live line.

A write tells its steps in order with the counts the driver holds; a listener hears its own
context's writes only and cannot break one by raising; the live line draws on a terminal only
and renders each model's step and Spark tasks in one line of the terminal's width.
"""

from __future__ import annotations

import io
import logging
import threading
from types import SimpleNamespace

import pytest
from dbt_common.events.event_manager_client import get_event_manager

from dbt.adapters.hoodie import environment
from dbt.adapters.hoodie import progress as adapter_progress
from dbt.adapters.hoodie.progress import LiveLine, ModelListener, TaskCount, live_line_allowed
from hoodie import HoodieTable, WriteConfig, progress
from hoodie.integration import warm_python_workers

SERVICES = (progress.ServiceStarted, progress.ServiceFinished)


def _batch(spark, ids, ts):
    return spark.createDataFrame([(f"k{i:03d}", f"p{i % 3}", ts, i) for i in ids],
                                 "id string, p string, ts int, v int")  # fmt: skip


def _write_steps(heard):
    return [type(e).__name__ for e in heard if not isinstance(e, SERVICES)]


def test_a_write_tells_its_steps_in_order_with_the_counts(spark, tmp_path):
    config = WriteConfig.build(
        "orders", "id", "p", "ts", table_type="MERGE_ON_READ",
        options={"hoodie.index.type": "BLOOM", "hoodie.parquet.small.file.limit": "0",
                 "hoodie.compact.inline.max.delta.commits": "2"},
    )  # fmt: skip
    table = HoodieTable.for_write(str(tmp_path / "orders"), config)
    heard: list[progress.ProgressEvent] = []
    with progress.listening(heard.append):
        first = table.upsert(_batch(spark, range(60), 1))
    # A first write is a bulk insert: nothing to tag, new file groups only.
    assert _write_steps(heard) == ["WriteStarted", "WritingStarted", "Written", "Committing",
                                   "Committed"]  # fmt: skip
    written = next(e for e in heard if isinstance(e, progress.Written))
    assert (written.file_groups, written.new_file_groups, written.inserts, written.records) == (
        3, 3, 60, 60)  # fmt: skip
    assert written.bytes == first.bytes_written > 0
    committed = heard[[type(e) for e in heard].index(progress.Committed)]
    assert (committed.instant, committed.operation, committed.action) == (
        first.instant, "BULK_INSERT", "deltacommit")  # fmt: skip
    assert all(e.table == "orders" for e in heard)

    heard.clear()
    with progress.listening(heard.append):
        second = table.upsert(_batch(spark, range(40, 80), 2))  # 20 updates, 20 inserts
    assert _write_steps(heard) == [
        "WriteStarted", "StepStarted", "TaggingStarted", "Tagged", "WritingStarted", "Written",
        "Committing", "Committed",
    ]  # fmt: skip
    tagging, tagged, writing, written = (
        next(e for e in heard if isinstance(e, kind))
        for kind in (progress.TaggingStarted, progress.Tagged, progress.WritingStarted,
                     progress.Written)
    )  # fmt: skip
    assert (tagging.index, tagging.records, tagging.partitions, tagging.file_slices) == (
        "BLOOM", 40, 3, 3)  # fmt: skip
    assert (tagged.records, tagged.located, tagged.new, tagged.file_groups) == (40, 20, 20, 3)
    assert "tagged 40 records against 3 file slices (BLOOM index)" in tagged.message()
    # Updates go to the 3 groups' logs, inserts to a new group per partition (no small files).
    assert (writing.file_groups, writing.records) == (6, 40)
    assert (written.file_groups, written.new_file_groups) == (6, 3)
    assert (written.inserts, written.updates, written.deletes) == (20, 20, 0)
    assert written.instant == second.instant
    # Then the services, after the commit: the second delta commit triggers a compaction.
    committed_at = [type(e) for e in heard].index(progress.Committed)
    services = [e for e in heard[committed_at:] if isinstance(e, progress.ServiceFinished)]
    compaction = next(e for e in services if e.service == "compaction")
    assert compaction.notable and compaction.outcome is not None
    assert compaction.outcome.startswith("compacted 3 file groups")
    assert second.compactions and second.compactions[0].instant in compaction.outcome
    assert [e.service for e in heard if isinstance(e, progress.ServiceStarted)][-1] == "archival"


def test_a_listener_that_raises_cannot_break_the_write(spark, tmp_path, caplog):
    """Decided: a listener's error is logged (a warning the first time, with its traceback)
    and swallowed; the other listeners still hear every step and the write commits whole."""

    def broken(event):
        raise RuntimeError("a listener's own bug")

    heard: list[progress.ProgressEvent] = []
    table = HoodieTable.for_write(str(tmp_path / "t"), WriteConfig.build("t", "id", "p", "ts"))
    with (
        caplog.at_level(logging.DEBUG, logger="hoodie.progress"),
        progress.listening(broken),
        progress.listening(heard.append),
    ):
        result = table.upsert(_batch(spark, range(30), 1))
    assert table.read(spark).count() == 30 and result.num_inserts == 30
    assert isinstance(heard[-1], progress.ServiceFinished)
    assert any(isinstance(e, progress.Committed) for e in heard)
    failures = [r for r in caplog.records if "progress listener" in r.getMessage()]
    assert len(failures) == len(heard)  # once per event it failed on
    assert [r.levelno for r in failures].count(logging.WARNING) == 1
    assert failures[0].exc_info is not None and "a listener's own bug" in caplog.text


def test_listeners_hear_their_context_or_the_whole_process():
    event = progress.StepStarted("t", "a step")
    mine, everyone = [], []
    other = threading.Thread(target=progress.emit, args=(progress.StepStarted("t", "other"),))
    progress.add_listener(everyone.append)
    try:
        with progress.listening(mine.append):
            other.start()
            other.join()
            progress.emit(event)
        progress.emit(progress.StepStarted("t", "after"))
    finally:
        progress.remove_listener(everyone.append)
    progress.emit(progress.StepStarted("t", "removed"))
    assert mine == [event]
    assert [e.description for e in everyone] == ["other", "a step", "after"]


def test_messages_read_as_numbers_people_read():
    written = progress.Written("orders", "20261207000000000", file_groups=40, new_file_groups=12,
                               files=40, records=10_000_000, inserts=800_000, updates=1_200_000,
                               deletes=5, bytes=180_400_000, seconds=61.04)  # fmt: skip
    assert written.message() == (
        "wrote 40 file groups (12 new): 800,000 inserts, 1,200,000 updates, 5 deletes; "
        "10,000,000 records in 40 files, 180 MB, in 61.0 s"
    )
    assert not progress.ServiceFinished("t", "clean", None, 0.04).notable
    assert progress.ServiceFinished("t", "clean", None, 0.04).message() == (
        "clean: nothing to do (0.0 s)"
    )


# -- the adapter's live line ----------------------------------------------------------------------
class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_line_is_drawn_on_a_terminal_only():
    tty, pipe = FakeTerminal(), io.StringIO()
    assert live_line_allowed(True, tty, {})
    assert not live_line_allowed(True, pipe, {})
    assert not live_line_allowed(False, tty, {})
    for environ in ({"CI": "true"}, {"TERM": "dumb"}, {"DBT_HOODIE_LIVE_PROGRESS": "false"}):
        assert not live_line_allowed(True, tty, environ), environ
    assert live_line_allowed(True, tty, {"CI": "false", "DBT_HOODIE_LIVE_PROGRESS": "1"})


def test_the_live_line_renders_steps_and_tasks_in_the_terminal_width():
    now = [100.0]
    tty = FakeTerminal()
    line = LiveLine(tty, styled=False, clock=lambda: now[0], width=lambda: 121)
    line.begin(1, "orders", tasks=lambda: TaskCount(done=37, total=200, running=2, stages=(4,)))
    listener = ModelListener("orders", line, 1)
    listener(progress.WritingStarted("orders", "2026", file_groups=40, records=2_000_000))
    now[0] += 12.0
    line.tick()
    assert tty.getvalue() == (
        "\r- orders  12s  stage 1 [#---------] 37/200 tasks (2 running)  writing 2,000,000 "
        "records into 40 file groups\x1b[K"
    )
    # A finished step clears the step; a second model shares the line, each cut to its part.
    listener(progress.Committed("orders", "2026", "commit", "UPSERT", 0.8, 75.3))
    line.begin(2, "customers")
    line.set_step(2, "tagging 50,000 records of 1 partition against 1 file slice (BLOOM index)")
    now[0] += 65.0
    text = line.render()
    # (a new step numbers its stages anew, from the next poll of the tasks)
    assert len(text) <= 120 and text.startswith("\\ orders  1:05  [#")
    assert " | customers  1:05  tagging 50,000 records of 1 partition..." in text
    assert text.endswith("...")
    assert "\x1b" not in text
    assert line.render(styled=True).count("\x1b[1m") == 2  # the models' names in bold
    # Cleared before dbt prints (and not drawn again at once), and when the last model ends.
    tty.seek(0)
    tty.truncate()
    line.clear(hold=0.2)
    line.draw()
    assert tty.getvalue() == "\r\x1b[K"
    line.end(1)
    line.end(2)
    assert line.render() == ""


def test_the_live_line_numbers_the_stages_of_a_step():
    """A step's Spark stages come one after another (adaptive execution submits them as jobs
    of their own, each with its own task count): the line says which one runs, counted from
    the step's start, so a total that changes is a new stage, not a step going backwards."""
    running = [TaskCount(0, 2, 2, stages=(7,))]
    line = LiveLine(FakeTerminal(), styled=False, clock=lambda: 0.0, width=lambda: 200)
    line.begin(1, "orders", tasks=lambda: running[0])
    line.set_step(1, "writing into new file groups (bulk insert)")
    line.tick()
    assert "  stage 1 [----------] 0/2 tasks (2 running)  writing" in line.render()
    running[0] = TaskCount(0, 1, 1, stages=(9,))  # the next job's stage (8 skipped)
    line.tick()
    assert "  stage 2 [----------] 0/1 tasks (1 running)  writing" in line.render()
    running[0] = TaskCount(1, 3, 0, stages=(7, 9))  # seen before: not counted again
    line.tick()
    assert "  stages 1-2 [###-------] 1/3 tasks  writing" in line.render()
    line.set_step(1, "committing commit 2026")  # a new step counts its own stages
    running[0] = TaskCount(0, 1, 1, stages=(12,))
    line.tick()
    assert "  stage 1 [----------] 0/1 tasks (1 running)  committing" in line.render()
    running[0] = TaskCount(0, 4, 0)  # a source that names no stage: the tasks alone
    line.tick()
    assert "0s  [----------] 0/4 tasks  committing" in line.render()


def test_a_step_of_the_adapter_is_told_and_shown(monkeypatch):
    """The adapter's own step in a model's hook (registering the table in the catalog after
    the commit): a debug line as it starts, the live line's step while it runs, a debug line
    with its outcome and time; outside a model's hook, nothing."""
    heard = []
    manager = get_event_manager()
    manager.callbacks.append(heard.append)
    tty = FakeTerminal()
    line = LiveLine(tty, styled=False, width=lambda: 200)
    monkeypatch.setattr(adapter_progress, "_live", line)
    no_session = SimpleNamespace(sparkContext=None)  # no tasks to poll
    try:
        with adapter_progress.model_progress("orders", no_session):
            with adapter_progress.model_step("registering s.orders in the catalog") as step:
                assert line.render().endswith("orders  0s  registering s.orders in the catalog")
                step.outcome = "created"
            assert line.render().endswith("orders  0s")
        with adapter_progress.model_step("registering s.other in the catalog"):
            pass
    finally:
        manager.callbacks.remove(heard.append)
        line.stop()
    lines = [(e.info.level, e.info.msg) for e in heard if "Hoodie adapter" in e.info.msg]
    assert lines[0] == ("debug", "Hoodie adapter: orders: registering s.orders in the catalog")
    assert lines[1][0] == "debug" and lines[1][1].startswith(
        "Hoodie adapter: orders: registering s.orders in the catalog: created in 0."
    )
    assert len(lines) == 2  # the step outside a model's hook was not told


def test_the_python_workers_start_beside_the_start_up(spark, monkeypatch):
    """A local session's Python workers are started in a thread of their own while the
    start-up goes on (the first write does not wait for them), the start-up saying it with
    its time; a session on a cluster or Spark Connect is left alone."""
    heard = []
    manager = get_event_manager()
    manager.callbacks.append(heard.append)
    monkeypatch.setattr(adapter_progress, "_live", None)
    monkeypatch.setattr(environment, "_dbt_command", lambda: "run")
    local = SimpleNamespace(remote=None, master="local[2]")
    try:
        thread = environment._warm_workers(local, spark)
        assert thread is not None
        thread.join(timeout=120)
    finally:
        manager.callbacks.remove(heard.append)
    tasks = spark.sparkContext.defaultParallelism
    told = [e.info.msg for e in heard if "Python worker" in e.info.msg]
    assert told[-1].startswith(f"Hoodie adapter: starting {tasks} Python worker"), told
    assert told[-1].endswith(" s") and "with the core... " in told[-1], told
    for elsewhere in (SimpleNamespace(remote=None, master="local-cluster[2,1,1024]"),
                      SimpleNamespace(remote=None, master="spark://host:7077"),
                      SimpleNamespace(remote="sc://host", master=None)):  # fmt: skip
        assert environment._warm_workers(elsewhere, spark) is None
    monkeypatch.setattr(environment, "_dbt_command", lambda: "seed")  # no Python task
    assert environment._warm_workers(local, spark) is None
    assert 1 <= warm_python_workers(spark, 2) <= 2  # the worker processes that ran the tasks


def test_the_live_line_is_cleared_before_dbts_console_lines(monkeypatch):
    monkeypatch.setattr(adapter_progress, "_live", None)
    monkeypatch.setattr(adapter_progress, "live_line_allowed", lambda *args: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = FakeTerminal()
    console = logging.getLogger("stdout_log")
    before = list(console.filters)
    try:
        line = adapter_progress.configure(True, tty)
        assert line is not None and adapter_progress.configure(True, tty) is line  # once
        line.begin(3, "orders")
        line.draw()
        assert tty.getvalue().endswith("\x1b[K") and line.styled
        record = logging.LogRecord("stdout_log", logging.INFO, "", 0, "12:00  OK", (), None)
        assert all(f.filter(record) for f in console.filters)
        assert tty.getvalue().endswith("\r\x1b[K")
        line.end(3)
        line.stop()
    finally:
        console.filters[:] = before


def test_the_start_up_says_what_it_does_and_how_long(monkeypatch):
    heard = []
    manager = get_event_manager()
    manager.callbacks.append(heard.append)
    monkeypatch.setattr(adapter_progress, "_live", None)
    try:
        with adapter_progress.startup_step("starting Spark (local[2])"):
            pass
        with pytest.raises(RuntimeError), adapter_progress.startup_step("registering"):
            raise RuntimeError("no")
    finally:
        manager.callbacks.remove(heard.append)
    lines = [(e.info.level, e.info.msg) for e in heard if "Hoodie adapter" in e.info.msg]
    assert [level for level, _ in lines] == ["debug", "info", "debug"]
    assert lines[1][1].startswith("Hoodie adapter: starting Spark (local[2])... 0.")
    assert lines[1][1].endswith(" s")


def test_the_session_starts_beside_dbts_parse_for_commands_that_connect(monkeypatch):
    """`start_session_early` (the adapter's __init__, before dbt parses the project) starts the
    session in a thread for a command that opens a connection, none for one that does not; a
    failed start there is only a debug line (the connection's open starts it again)."""
    started = []

    def session(creds):
        started.append(creds)
        if creds == "broken":
            raise RuntimeError("no Java")
        return "session"

    monkeypatch.setattr(environment, "spark_session", session)
    for command in ("run", "build", "seed", "debug"):
        monkeypatch.setattr(environment, "_dbt_command", lambda command=command: command)
        thread = environment.start_session_early(f"creds-{command}")
        assert thread is not None
        thread.join(timeout=10)
    assert started == ["creds-run", "creds-build", "creds-seed", "creds-debug"]
    for command in ("parse", "compile", "list", None):
        monkeypatch.setattr(environment, "_dbt_command", lambda command=command: command)
        assert environment.start_session_early("creds") is None
    monkeypatch.setattr(environment, "_dbt_command", lambda: "run")
    thread = environment.start_session_early("broken")
    assert thread is not None
    thread.join(timeout=10)
    assert not thread.is_alive() and started[-1] == "broken"


def test_a_start_up_step_beside_the_others_hands_back_its_outcome(monkeypatch):
    """`_beside` (the data source's registration while the metastore opens): the step runs in
    a thread of its own and its error reaches the thread that waits for it."""
    monkeypatch.setattr(adapter_progress, "_live", None)
    ran = []
    assert environment._beside("session", "a step", ran.append).result(timeout=10) is None
    assert ran == ["session"]

    def broken(session):
        raise RuntimeError("no Python for the lookup")

    with pytest.raises(RuntimeError, match="no Python"):
        environment._beside("session", "a step", broken).result(timeout=10)

"""The Spark session a dbt run works in: built once per process from the profile.

dbt-spark's session cursor calls `SparkSession.builder.getOrCreate()` on every statement; we
build the session once, with the warehouse, metastore and time zone the profile implies, and
hand every cursor that same object, so a Spark Connect session works exactly like a local one.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from .spark_logging import driver_java_options

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from .credentials import HoodieCredentials

_lock = threading.Lock()
_sessions: dict[tuple, SparkSession] = {}


def project_root() -> str:
    """The dbt project folder (where relative profile paths are anchored)."""
    try:
        from dbt.flags import get_flags

        project_dir = getattr(get_flags(), "PROJECT_DIR", None)
    except Exception:  # pragma: no cover - flags are unset outside a dbt invocation
        project_dir = None
    return os.path.abspath(project_dir or os.getcwd())


def resolve_dir(path: str | None, default: str) -> str:
    if "://" in (path or ""):
        return path  # type: ignore[return-value]
    return os.path.abspath(os.path.join(project_root(), path or default))


def session_conf(creds: HoodieCredentials) -> dict[str, str]:
    """The session's settings. A Spark Connect server (`remote: sc://...`) was started by
    someone else with its own warehouse, catalog and JVM options, which a client cannot
    change: only session settings are sent to it."""
    conf = {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.ansi.enabled": "false",
        # Lets the `hoodie` source prune partitions from filters (see hoodie.read.datasource).
        "spark.sql.python.filterPushdown.enabled": "true",
    }
    if not creds.connects_to_server:
        warehouse = resolve_dir(creds.warehouse_dir, "spark-warehouse")
        metastore = resolve_dir(creds.metastore_dir, "metastore")
        conf.update({
            "spark.app.name": "dbt-hoodie",
            "spark.sql.warehouse.dir": warehouse,
            "spark.sql.catalogImplementation": "hive",
            "spark.ui.showConsoleProgress": "false",
            "spark.hadoop.javax.jdo.option.ConnectionURL": (
                f"jdbc:derby:;databaseName={os.path.join(metastore, 'metastore_db')};create=true"
            ),
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={metastore}",
        })  # fmt: skip
    conf.update(creds.spark_conf)
    if not creds.connects_to_server:
        conf["spark.driver.extraJavaOptions"] = driver_java_options(
            project_root(), conf.get("spark.driver.extraJavaOptions")
        )
    return conf


def spark_context_of(session: SparkSession) -> SparkContext | None:
    """The session's SparkContext where it has one (classic PySpark), None over Spark Connect
    (whose `sparkContext` raises). The one place the adapter reaches for it: the live
    progress line's job groups and status tracker (`progress.py`)."""
    from pyspark.sql.utils import is_remote

    if is_remote() or type(session).__module__.startswith("pyspark.sql.connect"):
        return None
    return session.sparkContext


def spark_session(creds: HoodieCredentials) -> SparkSession:
    """The process's session for these credentials, created on first use; each part of the
    start-up says what it did and how long it took (`progress.startup_step`), the ~10-20 s
    before dbt's first model."""
    from pyspark.sql import SparkSession

    from hoodie.integration import register_data_source, ship_core

    from . import progress
    from .credentials import DEFAULT_MASTER

    conf = session_conf(creds)
    key = (creds.remote, creds.master, tuple(sorted(conf.items())))
    with _lock:
        session = _sessions.get(key)
        if session is not None:
            return session
        progress.configure(creds.live_progress)
        # Python workers must run this interpreter, the one with dbt-hoodie installed.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if creds.remote:
            builder = SparkSession.builder.remote(creds.remote)
            starting = f"connecting to Spark Connect at {creds.remote}"
            if not creds.connects_to_server:
                starting = f"starting a Spark Connect server ({creds.remote})"
        else:
            if "://" not in conf["spark.sql.warehouse.dir"]:
                os.makedirs(conf["spark.sql.warehouse.dir"], exist_ok=True)
            master = creds.master or DEFAULT_MASTER
            builder = SparkSession.builder.master(master).enableHiveSupport()
            starting = f"starting Spark ({master})"
            if creds.jvm_class_archive:
                conf = _with_class_archive(conf)
        for name, value in conf.items():
            builder = builder.config(name, value)
        with progress.startup_step(starting):
            session = builder.getOrCreate()
        _warm_workers(creds, session)
        if creds.ships_core:
            with progress.startup_step("shipping the core to the Python workers"):
                ship_core(session)
        metastore = _local_metastore(creds, conf)
        if metastore is None:
            with progress.startup_step("registering the hoodie data source"):
                register_data_source(session)
        else:
            # Side by side: the registration's wait is a Python process of PySpark's looking
            # for data sources (`pyspark_*` modules: it imports the core), the metastore's is
            # the JVM's (Derby, DataNucleus); one after the other they took 2.6 s + 4.0 s.
            registering = _beside(session, "registering the hoodie data source",
                                  register_data_source)  # fmt: skip
            # dbt's first listing of schemas opens it anyway: opened here, its time is told
            with progress.startup_step(f"opening the Hive metastore at {metastore}"):
                session.catalog.databaseExists("default")
            registering.result()
        _sessions[key] = session
        return session


def _with_class_archive(conf: dict[str, str], write: bool | None = None) -> dict[str, str]:
    """`conf` with the driver JVM's class archive options (`class_archive`), when they
    apply; a folder that cannot be written is a debug line, and the start goes on without.
    `write`: may this run write the archive (default: an interactive run)."""
    from . import class_archive, progress

    try:
        choice = class_archive.archive_options(conf, write=write)
    except OSError as error:
        progress.logger.debug(f"no JVM class archive: {error}")
        return conf
    if choice is None:
        return conf
    progress.logger.debug(f"JVM class archive: {choice.action}")
    given = conf.get("spark.driver.extraJavaOptions", "")
    return {**conf, "spark.driver.extraJavaOptions": f"{given} {choice.options}".strip()}


def _beside(
    session: SparkSession, what: str, step: Callable[[SparkSession], None]
) -> Future[None]:
    """`step` of the start-up run in a thread of its own (its own segment of the live line);
    its outcome, error included, is the future's."""
    from . import progress

    done: Future[None] = Future()

    def run() -> None:
        try:
            with progress.startup_step(what, progress.REGISTERING):
                step(session)
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            done.set_exception(error)
        else:
            done.set_result(None)

    threading.Thread(target=run, name="hoodie-start-up", daemon=True).start()
    return done


def start_session_early(creds: HoodieCredentials) -> threading.Thread | None:
    """Start the session for these credentials now, in a thread of its own, for a dbt command
    that will open a connection (`_OPENS_CONNECTIONS`): dbt makes the adapter before it parses
    the project and opens the first connection after, so the JVM, the metastore and the data
    source start while dbt parses (the parse is CPU in this process, the start mostly waits
    on the JVM). The connection's open then takes the cached session (`spark_session` holds
    its lock while a start runs). A start that fails here is only a debug line: the open
    starts it again and reports why it fails."""
    if _dbt_command() not in _OPENS_CONNECTIONS:
        return None
    return _head_start("hoodie-spark-start", lambda: spark_session(creds),
                       "starting Spark beside dbt's parse failed (the connection starts it "
                       "again)")  # fmt: skip


def _head_start(name: str, work: Callable[[], object], failed: str) -> threading.Thread:
    """`work` started now in a thread of its own (`name`), for what a later step would
    otherwise wait for; that step does the work itself if this failed, and says why, so a
    failure here is only a debug line (`failed`: what did not happen, then the error)."""
    from . import progress

    def run() -> None:
        try:
            work()
        except Exception as error:  # noqa: BLE001 - the later step tells
            progress.logger.debug(f"{failed}: {type(error).__name__}: {error}")

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


# dbt commands that open a connection once the project is parsed.
_OPENS_CONNECTIONS = frozenset({"run", "build", "test", "seed", "snapshot", "run-operation",
                                "show", "retry", "clone", "debug"})  # fmt: skip


def _warm_workers(creds: HoodieCredentials, session: SparkSession) -> threading.Thread | None:
    """A local session's Python workers started beside the rest of the start-up (the
    metastore, the data source), in a thread: one per core, each with the core imported.
    Otherwise the first write of each dbt process waits for them, with no task running (6-9 s
    on a busy 2-core machine, 20 s and more on a very busy one: docs/progress.md). Not for dbt
    commands that run no Python task (`_NO_PYTHON_TASKS`), nor other sessions: a cluster's
    executors come and go, and a Connect server's workers are the server's. A failure here
    only costs the first write its wait: it is a debug line, and that write starts the
    workers and reports what stops them."""
    from . import progress
    from .credentials import DEFAULT_MASTER

    master = creds.master or DEFAULT_MASTER
    if creds.remote or not (master == "local" or master.startswith("local[")):
        return None
    if _dbt_command() in _NO_PYTHON_TASKS:
        return None
    context = spark_context_of(session)
    if context is None:
        return None
    tasks = max(1, int(context.defaultParallelism))
    what = f"starting {tasks} Python worker{'s' if tasks > 1 else ''} with the core"

    def warm() -> None:
        from hoodie.integration import warm_python_workers

        with progress.startup_step(what, progress.WARMING):
            warm_python_workers(session, tasks)

    return _head_start("hoodie-python-workers", warm,
                       f"{what} beforehand failed (the first write starts them)")  # fmt: skip


# dbt commands that run no Python task of ours (seeds are plain tables; the catalog's facts
# are read on the driver): their sessions start no workers beforehand.
_NO_PYTHON_TASKS = frozenset({"seed", "debug", "compile", "generate", "list", "parse",
                              "freshness"})  # fmt: skip


def _dbt_command() -> str | None:
    try:
        from dbt.flags import get_flags

        return getattr(get_flags(), "WHICH", None)
    except Exception:  # pragma: no cover - flags are unset outside a dbt invocation
        return None


def _local_metastore(creds: HoodieCredentials, conf: dict[str, str]) -> str | None:
    """The Derby metastore's folder a local session opens (None: another catalog, or a
    Connect server's own)."""
    if creds.remote or conf.get("spark.sql.catalogImplementation") != "hive":
        return None
    url = conf.get("spark.hadoop.javax.jdo.option.ConnectionURL", "")
    if not url.startswith("jdbc:derby:"):
        return None
    return resolve_dir(creds.metastore_dir, "metastore")

"""Where the JVM's log goes in a dbt run: a file beside dbt's own log, not the terminal.

Left to Spark's defaults, a `dbt run` prints dozens of JVM warnings a dbt user can do nothing
about (Hive's unknown settings, "NOT compatible with Hive" for every data source table, the
data source registration, the loopback host name), between dbt's own lines. dbt-databricks and
dbt-spark's other methods run Spark elsewhere, so their users never see these. A session this
adapter starts gets a log4j2 configuration (spark_log.properties, shipped with the adapter)
that writes the JVM's warnings and errors to `<log-path>/spark.log` and nothing to the
terminal. A failed model's error still reaches dbt, which reports it.

A profile that sets its own `-Dlog4j2.configurationFile` in `spark.driver.extraJavaOptions`
keeps it; a Spark Connect server logs as its owner configured it.
"""

from __future__ import annotations

import os

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spark_log.properties")
LOG_FILE = "spark.log"


def log_dir(project_root: str) -> str:
    """dbt's log folder for this invocation (`--log-path`, else `logs` in the project)."""
    try:
        from dbt.flags import get_flags

        path = getattr(get_flags(), "LOG_PATH", None)
    except Exception:  # pragma: no cover - flags are unset outside a dbt invocation
        path = None
    return os.path.abspath(os.path.join(project_root, str(path or "logs")))


def driver_java_options(project_root: str, given: str | None) -> str:
    """The driver JVM's options with the log configuration added, unless `given` (the
    profile's own options) already names a log4j2 configuration."""
    options = given or ""
    if "log4j2.configurationFile" in options:
        return options
    directory = log_dir(project_root)
    os.makedirs(directory, exist_ok=True)
    ours = (
        f"-Dlog4j2.configurationFile=file:{CONFIG} "
        f"-Dhoodie.spark.log={os.path.join(directory, LOG_FILE)}"
    )
    return f"{options} {ours}".strip()

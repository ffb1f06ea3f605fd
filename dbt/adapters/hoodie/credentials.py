"""The `type: hoodie` profile: dbt-spark's session method with the session spelled out.

Only `schema` is required. The session is in-process (`method: session`) on a local or
cluster `master`, or a Spark Connect session when `remote` is set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials

from .errors import ProfileError

_MASTER = re.compile(
    r"^(local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[.+\]|spark://.+|yarn|k8s://.+|mesos://.+)$"
)
_REMOTE = re.compile(r"^(sc://.+|local(\[(\*|\d+)\])?)$")
DEFAULT_MASTER = "local[*]"


@dataclass
class HoodieCredentials(SparkCredentials):
    method: SparkConnectionMethod = SparkConnectionMethod.SESSION  # type: ignore[assignment]
    host: str | None = "session"
    master: str | None = None
    remote: str | None = None
    warehouse_dir: str | None = None
    metastore_dir: str | None = None
    spark_conf: dict[str, Any] = field(default_factory=dict)
    # Tables on object storage: the keyword arguments of pyarrow's S3FileSystem or
    # GcsFileSystem (endpoint_override, region, scheme, ...); credentials best come from the
    # store's usual environment and files, which Spark's Python workers see too.
    storage_options: dict[str, Any] = field(default_factory=dict)
    # Put the core on the cluster's Python workers (hoodie.shipping), so they need only its
    # dependencies, not dbt-hoodie. None: on a cluster or Spark Connect, not on local[*].
    ship_core: bool | None = None
    # The live progress line on a terminal (dbt/adapters/hoodie/progress.py); the environment's
    # DBT_HOODIE_LIVE_PROGRESS=false turns it off too. Off anyway where stderr is no terminal.
    live_progress: bool = True
    # A local session's driver JVM maps the classes an earlier run loaded, from an archive it
    # writes as it exits (dbt/adapters/hoodie/class_archive.py): ~3.5 s off each start.
    jvm_class_archive: bool = True

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        data.setdefault("method", "session")
        data.setdefault("host", "session")
        return data

    def __post_init__(self) -> None:
        if self.method != SparkConnectionMethod.SESSION:
            raise ProfileError(
                f"hoodie profile: method '{self.method}' is not supported; use method: session "
                "(the default), with `master` for a cluster or `remote` for Spark Connect"
            )
        if self.master is not None and self.remote is not None:
            raise ProfileError(
                "hoodie profile: set either `master` (an in-process session) or `remote` "
                "(a Spark Connect URL), not both"
            )
        if self.master is not None and not _MASTER.match(str(self.master)):
            raise ProfileError(
                f"hoodie profile: master '{self.master}' is not a Spark master URL; use e.g. "
                "local[*], local[4], spark://host:7077, yarn or k8s://https://host:443"
            )
        if self.remote is not None and not _REMOTE.match(str(self.remote)):
            raise ProfileError(
                f"hoodie profile: remote '{self.remote}' is not a Spark Connect URL; use e.g. "
                "sc://host:15002 or local[2] (a local Spark Connect server)"
            )
        if self.connects_to_server:
            for key in ("warehouse_dir", "metastore_dir"):
                if getattr(self, key) is not None:
                    raise ProfileError(
                        f"hoodie profile: `{key}` cannot be set with remote '{self.remote}': "
                        "a Spark Connect server keeps its own warehouse and metastore (set "
                        "spark.sql.warehouse.dir and the metastore where the server starts); "
                        f"remove `{key}`"
                    )
        if not isinstance(self.storage_options, dict):
            raise ProfileError(
                "hoodie profile: storage_options must be a map of the object store's options "
                "(e.g. endpoint_override, region)"
            )
        self.storage_options = {str(k): str(v) for k, v in self.storage_options.items()}
        if not isinstance(self.spark_conf, dict):
            raise ProfileError("hoodie profile: spark_conf must be a map of Spark settings")
        merged = {str(k): str(v) for k, v in self.spark_conf.items()}
        for key, value in (self.server_side_parameters or {}).items():
            if key in merged and merged[key] != str(value):
                raise ProfileError(
                    f"hoodie profile: '{key}' is set to '{merged[key]}' in spark_conf and to "
                    f"'{value}' in server_side_parameters (its alias); set it once"
                )
            merged[str(key)] = str(value)
        self.spark_conf = merged
        self.server_side_parameters = dict(merged)
        super().__post_init__()
        # The parent forces ANSI off through server_side_parameters; keep both maps equal.
        self.spark_conf.update(self.server_side_parameters)

    @property
    def connects_to_server(self) -> bool:
        """A running Spark Connect server (`sc://`), not one that PySpark starts here."""
        return str(self.remote or "").startswith("sc://")

    @property
    def ships_core(self) -> bool:
        if self.ship_core is not None:
            return bool(self.ship_core)
        target = str(self.remote or self.master or DEFAULT_MASTER)
        return target.startswith("local-cluster") or not target.startswith("local")

    @property
    def type(self) -> str:
        return "hoodie"

    @property
    def unique_field(self) -> str:
        return self.remote or self.master or DEFAULT_MASTER

    def _connection_keys(self) -> tuple[str, ...]:
        return ("method", "schema", "master", "remote", "warehouse_dir", "metastore_dir")

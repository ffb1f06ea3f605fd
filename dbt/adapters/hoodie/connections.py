"""Connections: dbt-spark's session connection, bound to the profile's SparkSession."""

from __future__ import annotations

from typing import Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.spark.connections import SparkConnectionManager
from dbt.adapters.spark.session import Connection as SessionConnection
from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import AnalysisException

from .environment import spark_session
from .errors import SparkStartError


class HoodieCursor(Cursor):
    """A cursor on one given session (dbt-spark's looks the session up per statement)."""

    def __init__(self, session) -> None:
        super().__init__()
        self.session = session

    def execute(self, sql: str, *parameters: Any) -> None:
        if parameters:
            sql = sql % parameters
        try:
            self._df = self.session.sql(sql)
        except AnalysisException as exc:
            raise DbtRuntimeError(str(exc)) from exc


class HoodieSessionConnection(SessionConnection):
    def __init__(self, session) -> None:
        super().__init__()
        self.session = session

    def cursor(self) -> HoodieCursor:
        return HoodieCursor(self.session)


class HoodieSessionConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session wrapper, with bindings rendered as valid Spark SQL literals.

    Seeds load through bindings (`insert ... values (cast(%s as type), ...)`). dbt-spark
    quotes every non-number as `'value'`, so an empty CSV cell (None) arrived as the string
    'None' instead of NULL, and a text with a quote or a backslash broke the statement or
    lost the backslash.
    """

    @classmethod
    def _fix_binding(cls, value: Any) -> str | float:
        if value is None:
            return "NULL"
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return super()._fix_binding(value)


class HoodieConnectionManager(SparkConnectionManager):
    TYPE = "hoodie"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        try:
            session = spark_session(connection.credentials)
        except Exception as exc:
            raise SparkStartError(f"hoodie: could not start the Spark session: {exc}") from exc
        connection.handle = HoodieSessionConnectionWrapper(HoodieSessionConnection(session))
        connection.state = ConnectionState.OPEN
        return connection

    @staticmethod
    def spark(connection: Connection):
        """The SparkSession behind an open connection."""
        return connection.handle.handle.session

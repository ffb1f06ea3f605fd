"""dbt-hoodie: the `hoodie` adapter, dbt-spark's session method plus Hudi lake tables."""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.hoodie.connections import HoodieConnectionManager  # noqa: F401
from dbt.adapters.hoodie.credentials import HoodieCredentials
from dbt.adapters.hoodie.impl import HoodieAdapter
from dbt.include import hoodie

Plugin = AdapterPlugin(
    adapter=HoodieAdapter,  # type: ignore[arg-type]
    credentials=HoodieCredentials,
    include_path=hoodie.PACKAGE_PATH,
    dependencies=["spark"],
)

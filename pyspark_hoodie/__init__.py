"""Lets PySpark find the `hoodie` data source with no registration call.

At session start PySpark imports every top-level module named `pyspark_*` and registers its
`DefaultSource` under the source's own name.
"""

from hoodie.read.datasource import HoodieDataSource as DefaultSource

__all__ = ["DefaultSource"]

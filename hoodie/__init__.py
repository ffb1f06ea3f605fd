"""Apache Hudi tables (table version 6) written and read with PySpark and pyarrow.

The core of dbt-hoodie, usable without dbt::

    from hoodie import HoodieTable, WriteConfig

    config = WriteConfig.build("orders", record_key="order_id", partition_path="order_date",
                               precombine_field="updated_at")
    table = HoodieTable.for_write("/lake/orders", config)
    table.upsert(spark_df, config)
    table.read(spark).show()
"""

from .config import WriteConfig
from .exceptions import HoodieError
from .table import HoodieTable

__all__ = ["HoodieError", "HoodieTable", "WriteConfig"]

"""A plain PySpark session, no registration call: can it read format("hoodie")?"""

import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pyspark.sql import SparkSession  # noqa: E402

spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
print("ROWS", spark.read.format("hoodie").load(sys.argv[1]).count())
spark.stop()

"""Read path: the `hoodie` Spark data source and snapshot reading of base files."""

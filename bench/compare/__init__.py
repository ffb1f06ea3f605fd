"""Comparative benchmark: our Hudi core against plain Spark, delta-rs, pyiceberg and Apache Hudi.

One workload (`workload.py`) is generated once per run as parquet files; every system (one
module each under `systems/`; Apache Hudi in a child process on its own Spark 3.5) loads it,
applies the same upsert and delete batches, answers the same reads, and is measured the same
way (`metrics.py`, in a worker process of its own: `worker.py`). `runner.py`
drives the run and checks that every table ends in the expected state, and every point read
and filter returns the expected rows; `report.py` writes the
JSON, markdown and plot. The entry point is `bench/compare.py`.
"""

"""Comparative benchmark: our Hudi core against plain Spark, delta-rs and pyiceberg.

One workload (`workload.py`) is generated once per run as parquet files; every system (one
module each under `systems/`) loads it, applies the same upsert and delete batches, and is
measured the same way (`metrics.py`, in a worker process of its own: `worker.py`). `runner.py`
drives the run and checks that every table ends in the expected state; `report.py` writes the
JSON, markdown and plot. The entry point is `bench/compare.py`.
"""

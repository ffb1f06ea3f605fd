"""Deployment tests (marker `deploy`, `make test-deploy`): clusters of separate processes.

The workers' Python without dbt-hoodie (`worker_python`) comes from tests/connect_server.py.
"""

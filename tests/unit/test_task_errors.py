"""A failure of a write's Spark work as the user sees it: one line naming the cause."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import PySparkException

from dbt.adapters.hoodie.errors import dbt_error
from hoodie.exceptions import (
    CorruptDataFileError,
    DuplicateRecordKeyError,
    MalformedMetadataError,
    TableIdentityError,
    TaskFailedError,
)
from hoodie.write.task_errors import (
    CAUSE_LIMIT,
    decode,
    encode,
    failure_cause,
    raise_task_error,
    task_failure,
)

# What a Python worker's failure reads like (PySpark's PythonException), shortened.
WORKER = """An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/x/hoodie/write/bulk_insert.py", line 250, in _write
    write_partition_metadata(self.storage, partition, self.instant, self.partition_depth)
  File "pyarrow/error.pxi", line 92, in pyarrow.lib.check_status
pyarrow.lib.ArrowInvalid: Embedded NUL char in path: '/lake/t/a\\x00b/.hoodie_partition_metadata'

JVM stacktrace:
org.apache.spark.api.python.PythonException: Traceback (most recent call last):
	at org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException
"""


def test_the_cause_is_the_exception_line_of_the_workers_traceback():
    cause = failure_cause(RuntimeError(WORKER))
    assert cause == (
        "pyarrow.lib.ArrowInvalid: Embedded NUL char in path: "
        "'/lake/t/a\\x00b/.hoodie_partition_metadata'"
    )


def test_a_long_cause_is_cut_in_the_middle():
    text = WORKER.replace("a\\x00b", "x" * 5000).replace(
        "ArrowInvalid: Embedded NUL char in path", "OSError: [Errno 36] File name too long"
    )
    cause = failure_cause(RuntimeError(text))
    assert len(cause) < CAUSE_LIMIT + 40 and "\n" not in cause
    assert cause.startswith("pyarrow.lib.OSError: [Errno 36] File name too long: '/lake/t/xxx")
    assert cause.endswith("xxx/.hoodie_partition_metadata'")
    assert "characters)..." in cause


def test_control_characters_are_escaped():
    cause = failure_cause(RuntimeError(WORKER.replace("a\\x00b", "a\x00b\x1b[2J")))
    assert "a\\x00b\\x1b[2J/" in cause and cause.isprintable()


def test_a_jvm_error_keeps_its_first_line():
    error = RuntimeError("[TASK_WRITE_FAILED] Task failed while writing rows.\n\tat org...\n")
    assert failure_cause(error) == "[TASK_WRITE_FAILED] Task failed while writing rows."


def test_dbt_shows_one_line_naming_the_cause():
    error = task_failure(RuntimeError(WORKER), "write 1 to table 't' failed and was undone",
                         "t", "1")  # fmt: skip
    assert isinstance(error, TaskFailedError)
    assert (error.table, error.instant) == ("t", "1")
    assert error.cause.startswith("pyarrow.lib.ArrowInvalid") and error.detail == WORKER
    shown = dbt_error("Model", "t", error)
    assert isinstance(shown, DbtRuntimeError)
    message = str(shown.msg)
    assert message == (
        f"Model 't': write 1 to table 't' failed and was undone: {error.cause} [TaskFailedError]"
    )
    assert "Traceback" not in message and "JVM" not in message


# A task function that cannot return the core's error as a row (a tagging job's key reader)
# raised it from another: the worker's traceback names the cause first.
RAISED_IN_WORKER = """An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/x/hoodie/fs_view.py", line 220, in damaged_data_file
pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/x/hoodie/index/keys.py", line 62, in stored_keys
hoodie.exceptions.CorruptDataFileError: /lake/t/a/f.parquet (a parquet base file) is damaged
"""


def test_the_cores_error_raised_in_a_worker_comes_back_as_its_class():
    error = PySparkException(message=RAISED_IN_WORKER)
    with pytest.raises(CorruptDataFileError, match=r"^/lake/t/a/f.parquet \(a parquet base"):
        raise_task_error(error)


def test_a_worker_error_of_no_core_class_is_left_to_the_caller():
    raise_task_error(PySparkException(message=WORKER))  # raises nothing


@pytest.mark.parametrize(
    "error",
    [
        TableIdentityError(
            "table 't' was created with record key ('id',)",
            setting="record_key_fields",
            stored=("id",),
            wanted=("id", "dt"),
        ),
        TableIdentityError("buckets", setting="bucket_count", stored=4, wanted=8),
        MalformedMetadataError(
            "/lake/t/.hoodie/1.commit is damaged", path="/lake/t/.hoodie/1.commit"
        ),
        CorruptDataFileError("/lake/t/a/f.parquet is damaged", path="/lake/t/a/f.parquet"),
        DuplicateRecordKeyError("key 1 twice"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_an_error_a_task_returns_comes_back_with_its_class_and_fields(error):
    back = decode(encode(error))
    assert type(back) is type(error)
    assert str(back) == str(error) and back.fields() == error.fields()


def test_a_payload_of_old_or_unknown_fields_still_gives_the_class_and_message():
    old = '{"hoodie_error": "CorruptDataFileError", "message": "m"}'
    assert isinstance(decode(old), CorruptDataFileError) and str(decode(old)) == "m"
    odd = '{"hoodie_error": "CorruptDataFileError", "message": "m", "fields": {"nope": 1}}'
    assert isinstance(decode(odd), CorruptDataFileError) and decode(odd).fields() == {"path": ""}

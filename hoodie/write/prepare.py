"""Step 1 of a write: the batch as the index and the write tasks need it.

Each record gets its key and partition path (Spark columns of the key generator), and the
index's own columns (the BUCKET index's bucket); meta columns the caller brought are dropped.
Under a global index the batch keeps one record per key (`one_per_key`), across partitions.
A one-job summary per partition (and index key) counts the rows and finds null keys and
partition paths that could leave the table (`partition_paths`), which stop the write before
anything is written. Writes without that summary (their tasks tag and write in one job) check
both in SQL, in the stage before the shuffle, which completes before any task writes.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from .. import partition_paths
from ..config import WriteConfig
from ..exceptions import (
    DuplicateRecordKeyError,
    MissingColumnError,
    NullRecordKeyError,
    PartitionPathError,
)
from ..index.base import HoodieIndex
from ..keygen import KeyGenerator, partition_path_problem, shown
from ..schema import (
    IS_DELETED,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
    data_schema,
    normalize_schema,
)
from ..schema_evolution import writer_schema
from .task_errors import raise_in_sql
from .validation import check_batch, missing_key_text

# Hudi's operation types, as commits record them (`hoodie.datasource.write.operation` in
# capitals).
UPSERT, INSERT, BULK_INSERT = "UPSERT", "INSERT", "BULK_INSERT"
DELETE = "DELETE"
INSERT_OVERWRITE_TABLE = "INSERT_OVERWRITE_TABLE"
_ARRIVAL, _RANK = "__hoodie_batch_arrival", "__hoodie_batch_rank"  # a global index's dedup


def batch_writer_schema(
    table_name: str, config: WriteConfig, batch: DataFrame, current: pa.Schema | None,
    operation: str,
) -> pa.Schema:  # fmt: skip
    """The user columns of the new table version, checked against the table's schema."""
    check_batch(table_name, config, batch.schema, with_ordering=operation != DELETE)
    columns = batch.columns
    spark_schema = batch.drop(*[c for c in META_COLUMNS if c in columns]).schema
    # Spark hands timestamps to Arrow in the session time zone; we store them as UTC.
    incoming = normalize_schema(data_schema(to_arrow_schema(spark_schema, timezone="UTC")))
    if operation == DELETE:
        return incoming if current is None else current
    if current is None or operation == INSERT_OVERWRITE_TABLE:
        return incoming
    return writer_schema(table_name, current, incoming, config.schema_change)


def with_deletes(table_name: str, config: WriteConfig, batch: DataFrame,
                 deletes: DataFrame) -> DataFrame:  # fmt: skip
    """`batch` and, in the same write, a delete of every key `deletes` holds.

    The delete records carry only the key and partition columns (the rest null, the ordering
    field too): a delete without an ordering value removes the stored row whatever its value,
    as the delete operation's do. `_hoodie_is_deleted` marks them; the batch's own rows keep
    theirs (false when the batch has none, and then the column is not written).
    """
    needed = list(dict.fromkeys((*config.record_key_fields, *config.partition_fields)))
    missing = [name for name in needed if name not in deletes.columns]
    if missing:
        raise MissingColumnError(
            f"table '{table_name}': the keys to delete lack column(s) {', '.join(missing)}; "
            "a delete needs every record key and partition column"
        )
    if IS_DELETED not in batch.columns:
        batch = batch.withColumn(IS_DELETED, F.lit(False))
    types = {f.name: f.dataType for f in batch.schema.fields}
    flagged = deletes.select([
        F.lit(True).alias(name) if name == IS_DELETED
        else deletes[name].cast(types[name]).alias(name) if name in needed
        else F.lit(None).cast(types[name]).alias(name)
        for name in batch.columns
    ])  # fmt: skip
    return batch.unionByName(flagged)


class BatchPreparer:
    def __init__(self, table_name: str, config: WriteConfig, keygen: KeyGenerator,
                 index: HoodieIndex):  # fmt: skip
        self.table_name = table_name
        self.config = config
        self.keygen = keygen
        self.index = index

    def prepare(self, batch: DataFrame, schema: pa.Schema, operation: str) -> DataFrame:
        """Key, partition path and index columns on every record; columns the writer schema
        leaves out (on_schema_change='ignore') go no further."""
        left_out = [c for c in batch.columns if c not in schema.names
                    and c != IS_DELETED and c not in META_COLUMNS]  # fmt: skip
        if left_out and operation != DELETE:
            batch = batch.drop(*left_out)
        existing_meta = [c for c in META_COLUMNS if c in batch.columns]
        if existing_meta:
            batch = batch.drop(*existing_meta)
        if IS_DELETED not in batch.columns:
            batch = batch.withColumn(IS_DELETED, F.lit(False))
        key = F.when(~self.keygen.record_key_is_missing(), self.keygen.record_key())
        path = self.keygen.partition_path(batch.schema, self._unreadable)
        batch = batch.withColumns({RECORD_KEY: key, PARTITION_PATH: path})
        if self.index.is_global():
            batch = self.one_per_key(batch, operation)
        columns = self.index.columns()
        return batch.withColumns(columns) if columns else batch

    def _unreadable(self, text: Column, field: str) -> Column:
        """Fails the job at a string value no input date format reads, as Apache Hudi fails
        the write (a TIMESTAMP part of type DATE_STRING or MIXED)."""
        spec = self.keygen.timestamp
        formats = ", ".join(spec.input_formats) if spec else ""
        message = F.concat(
            F.lit(f"table '{self.table_name}': partition field {field}'s value "),
            shown(text.cast("string")),
            F.lit(f" is read by none of its input date formats ({formats}); nothing was "
                  "written. Clean the values, or add their pattern to "
                  "hoodie.keygen.timebased.input.dateformat"),
        )  # fmt: skip
        return raise_in_sql(PartitionPathError, message).cast("string")

    def one_per_key(self, batch: DataFrame, operation: str) -> DataFrame:
        """Under a global index, one record per key whatever its partition values, as Hudi
        deduplicates by the key alone there: the largest precombine value wins (a null loses
        to any value), then the later row of the batch. Decided here, before any plan, so a
        first write's bulk insert (which only deduplicates per partition) gets one record per
        key too. A key twice in an upsert without a precombine field fails the write, as the
        write tasks refuse it; Hudi's delete keeps any one (it needs only the key)."""
        arrival = F.monotonically_increasing_id()
        batch = batch.withColumn(_ARRIVAL, arrival)
        by_key = Window.partitionBy(RECORD_KEY)
        precombine = self.config.precombine_field
        if precombine is None and operation != DELETE:
            message = F.concat(
                F.lit("record key "), F.col(RECORD_KEY),
                F.lit(f" appears more than once in the batch (record key: "
                      f"{', '.join(self.config.record_key_fields)}). Set precombine_field to "
                      "choose the latest row per key, or deduplicate in the model"),
            )  # fmt: skip
            twice = F.col(RECORD_KEY).isNotNull() & (F.count(F.lit(1)).over(by_key) > 1)
            failed = raise_in_sql(DuplicateRecordKeyError, message)
            batch = batch.withColumn(_ARRIVAL, F.when(twice, failed.cast("long"))
                                     .otherwise(F.col(_ARRIVAL)))  # fmt: skip
        order = [F.col(_ARRIVAL).desc()]
        if precombine is not None and operation != DELETE:
            order = [F.col(precombine).desc_nulls_last(), *order]
        ranked = batch.withColumn(_RANK, F.row_number().over(by_key.orderBy(*order)))
        # (rows without a key all stay, for the summary to count and refuse)
        kept = (F.col(_RANK) == 1) | F.col(RECORD_KEY).isNull()
        return ranked.filter(kept).drop(_RANK, _ARRIVAL)

    def summarize(self, prepared: DataFrame) -> list[Row]:
        """The batch per partition (and index key): rows and the index's aggregates, in one
        job; null keys and unsafe partition paths stop the write here."""
        rows = (
            prepared.groupBy(PARTITION_PATH, *self.index.summary_keys())
            .agg(
                F.count_if(F.col(RECORD_KEY).isNull()).alias("nulls"),
                F.count(F.lit(1)).alias("rows"),
                *self.index.summary_aggregates(),
            )
            .collect()
        )
        nulls = sum(r["nulls"] for r in rows)
        if nulls:
            raise NullRecordKeyError(
                f"table '{self.table_name}': {nulls} row(s) have "
                f"{missing_key_text(self.config.record_key_fields)}"
            )
        for path in sorted({r[PARTITION_PATH] for r in rows}):
            reason = partition_paths.problem(path)
            if reason is not None:
                raise PartitionPathError(partition_paths.refusal_message(
                    self.table_name, self.config.partition_fields, path, reason
                ))  # fmt: skip
        return rows

    def key_or_error(self) -> Column:
        """The record key, failing the Spark job where it is missing.

        For writes whose tasks write as they go (an index that tags in the write tasks): the
        check runs before the shuffle, in a stage that completes before any task writes, so
        a row without a key stops the write with nothing written and no Spark job of its own.
        """
        prefix = f"table '{self.table_name}': a row"
        lacks = f" has {missing_key_text(self.config.record_key_fields)}"
        message = F.lit(prefix + lacks)
        if self.config.partition_fields:
            in_partition = F.concat(F.lit(" in partition '"), F.col(PARTITION_PATH), F.lit("'"))
            message = F.concat(F.lit(prefix), in_partition, F.lit(lacks))
        key = F.col(RECORD_KEY)
        return F.when(key.isNull(), raise_in_sql(NullRecordKeyError, message)).otherwise(key)

    def partition_path_or_error(self, schema: StructType) -> Column:
        """The partition path, failing the Spark job where it could leave the table (as
        `key_or_error`, for writes whose tasks write as they go). Unchecked where the
        batch's partition columns (`schema`) cannot make such a path (`partition_paths_safe`)."""
        path = F.col(PARTITION_PATH)
        if self.keygen.partition_paths_safe(schema):
            return path
        reason = partition_path_problem(path)
        before, after = partition_paths.refusal(self.table_name, self.config.partition_fields)
        message = F.concat(F.lit(before), shown(path), F.lit(", which "), reason, F.lit(after))
        failed = raise_in_sql(PartitionPathError, message)
        return F.when(reason.isNotNull(), failed.cast("string")).otherwise(path)

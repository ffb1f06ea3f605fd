"""A TIMESTAMP partition part as a Spark column: Apache Hudi's `TimestampBasedAvroKeyGenerator`
(`getPartitionPath`), computed in the tasks.

The value becomes an instant: a number (int, long, float, double, decimal: truncated to a whole
number; a date: its epoch day) times the timestamp type's unit, in milliseconds (a smaller unit
divides, truncating toward zero, as Java's `TimeUnit.convert`); a string is read with the input
patterns, the first that reads all of it, in the input time zone. A null value is 1 unit after
the epoch (strings: that instant written with the first input pattern, then read back). The
instant is written with the output pattern in the output time zone.

Every step is independent of the Spark session's time zone: instants are carried as
`TIMESTAMP_NTZ` wall times in UTC and moved between zones with `convert_timezone`.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
)

from ..exceptions import InvalidConfigError
from ..options.keygen import (
    MILLIS_PER_UNIT,
    UNITS_PER_MILLI,
    TimestampSpec,
    spark_pattern,
)

_NUMBERS = (ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, DecimalType)
_MILLIS_PER_DAY = 86_400_000
_UTC = "UTC"


def _epoch() -> Column:
    return F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")


def utc_wall_time(millis: Column) -> Column:
    """The UTC wall time (TIMESTAMP_NTZ) of epoch milliseconds, whatever the session's zone."""
    of_day = F.pmod(millis, F.lit(_MILLIS_PER_DAY))
    days = ((millis - of_day) / F.lit(_MILLIS_PER_DAY)).cast("int")
    seconds = (of_day / F.lit(1000)).cast("decimal(18,6)")
    return _epoch() + F.make_dt_interval(days, F.lit(0), F.lit(0), seconds)


def millis_of(number: Column, unit: str) -> Column:
    """`number` (a whole number) in `unit` as epoch milliseconds, as Java's
    `MILLISECONDS.convert` (truncating toward zero below a millisecond)."""
    if unit in UNITS_PER_MILLI:
        exact = number.cast("decimal(38,0)") / F.lit(UNITS_PER_MILLI[unit]).cast("decimal(38,0)")
        return exact.cast("long")
    return number * F.lit(MILLIS_PER_UNIT[unit])


def _number(column: Column, dtype: DataType) -> Column:
    if isinstance(dtype, DateType):
        return F.unix_date(column).cast("long")
    return column.cast("long")  # float, double and decimal truncate toward zero, as longValue()


def _parsed(text: Column, spec: TimestampSpec) -> Column:
    """The UTC wall time of `text` read with the input patterns (null where none reads it)."""
    found = None
    for pattern in spec.input_formats:
        wall = F.to_timestamp_ntz(text, F.lit(spark_pattern("input", pattern, parsing=True)))
        found = wall if found is None else F.coalesce(found, wall)
    assert found is not None
    return F.convert_timezone(F.lit(spec.input_zone), F.lit(_UTC), found)


def _null_text(spec: TimestampSpec) -> Column:
    """What Apache Hudi reads for a null string: 1 ms after the epoch in the input zone,
    written with the first input pattern."""
    wall = F.convert_timezone(F.lit(_UTC), F.lit(spec.input_zone), utc_wall_time(F.lit(1)))
    return F.date_format(wall, spark_pattern("input", spec.input_formats[0]))


def timestamp_part(column: Column, dtype: DataType, spec: TimestampSpec, field: str) -> Column:
    """The folder text of the TIMESTAMP part of `column` (of type `dtype`, named `field`)."""
    if spec.takes_strings:
        if not isinstance(dtype, StringType):
            raise InvalidConfigError(
                f"partition field {field} is {dtype.simpleString()}, and timestamp type "
                f"{spec.timestamp_type} reads strings (Apache Hudi fails such a write: no time "
                "unit for numbers); use UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS or "
                "SCALAR, or a string column"
            )
        wall = _parsed(F.coalesce(column, _null_text(spec)), spec)
    else:
        if not isinstance(dtype, (*_NUMBERS, DateType)):
            raise InvalidConfigError(
                f"partition field {field} is {dtype.simpleString()}, and timestamp type "
                f"{spec.timestamp_type} takes numbers (or dates, as epoch days); Apache Hudi "
                "fails on other types. Cast the column to an epoch number, or use DATE_STRING "
                "with input formats for strings"
            )
        assert spec.unit is not None
        number = F.coalesce(_number(column, dtype), F.lit(1).cast("long"))
        wall = utc_wall_time(millis_of(number, spec.unit))
    local = F.convert_timezone(F.lit(_UTC), F.lit(spec.output_zone), wall)
    return F.date_format(local, spark_pattern("output", spec.output_format))

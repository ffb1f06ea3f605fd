"""The key generator domain: which of Apache Hudi's key generators makes a table's keys, and
the settings of its timestamp partition parts (`TimestampBasedKeyGenerator`, the `TIMESTAMP`
parts of `CustomKeyGenerator`), read and checked once.

The Spark expressions that apply them are `hoodie.keygen`'s; this module only says what was
asked, so every floor (the write config, `hoodie.properties`, the readers) reads the same
thing. Apache Hudi's date patterns are Joda's (`DateTimeFormat`): we take the letters whose
meaning Joda and Spark share (`y M d H m s S`), quoted literals and separators, and refuse
every other letter by name (a pattern that means something else in Spark would put rows in
other folders than Apache Hudi does).
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from ..exceptions import InvalidConfigError
from .property import Alias, ConfigProperty, choice, choice_values


class KeyGeneratorType(Enum):
    """The key generators we write (Apache Hudi's `KeyGeneratorType` names)."""

    SIMPLE = "SIMPLE"
    COMPLEX = "COMPLEX"
    TIMESTAMP = "TIMESTAMP"
    CUSTOM = "CUSTOM"
    NON_PARTITION = "NON_PARTITION"


_PACKAGE = "org.apache.hudi.keygen."
CLASS_OF_TYPE = {
    "SIMPLE": _PACKAGE + "SimpleKeyGenerator",
    "COMPLEX": _PACKAGE + "ComplexKeyGenerator",
    "TIMESTAMP": _PACKAGE + "TimestampBasedKeyGenerator",
    "CUSTOM": _PACKAGE + "CustomKeyGenerator",
    "NON_PARTITION": _PACKAGE + "NonpartitionedKeyGenerator",
}
TYPE_OF_CLASS = {cls: name for name, cls in CLASS_OF_TYPE.items()}
# The rest of Apache Hudi 1.2's `KeyGeneratorType`, refused by name.
_OTHER_TYPES = {
    "SIMPLE_AVRO": _PACKAGE + "SimpleAvroKeyGenerator",
    "COMPLEX_AVRO": _PACKAGE + "ComplexAvroKeyGenerator",
    "TIMESTAMP_AVRO": _PACKAGE + "TimestampBasedAvroKeyGenerator",
    "CUSTOM_AVRO": _PACKAGE + "CustomAvroKeyGenerator",
    "NON_PARTITION_AVRO": _PACKAGE + "NonpartitionedAvroKeyGenerator",
    "GLOBAL_DELETE": _PACKAGE + "GlobalDeleteKeyGenerator",
    "GLOBAL_DELETE_AVRO": _PACKAGE + "GlobalAvroDeleteKeyGenerator",
    "AUTO_RECORD": _PACKAGE + "AutoRecordGenWrapperKeyGenerator",
    "AUTO_RECORD_AVRO": _PACKAGE + "AutoRecordGenWrapperAvroKeyGenerator",
    "HOODIE_TABLE_METADATA": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
    "SPARK_SQL": "org.apache.spark.sql.hudi.command.SqlKeyGenerator",
    "SPARK_SQL_UUID": "org.apache.spark.sql.hudi.command.UuidKeyGenerator",
    "SPARK_SQL_MERGE_INTO": "org.apache.spark.sql.hudi.command.MergeIntoKeyGenerator",
}
_SUPPORTED = ", ".join(choice_values(KeyGeneratorType))


def _refused(key: str, value: object, name: str) -> InvalidConfigError:
    return InvalidConfigError(
        f"option '{key}'={value!r} ({name}) is not supported: dbt-hoodie writes the keys of "
        f"the key generator types {_SUPPORTED} (classes "
        f"{', '.join(CLASS_OF_TYPE.values())})"
    )


def _keygen_class(key: str, value: object) -> str:
    text = str(value).strip()
    if text in TYPE_OF_CLASS:
        return TYPE_OF_CLASS[text]
    other = {cls: name for name, cls in _OTHER_TYPES.items()}.get(text)
    raise _refused(key, value, f"key generator type {other}" if other else "an unknown class")


def _keygen_type(key: str, value: object) -> str:
    text = str(value).strip().upper()
    if text in CLASS_OF_TYPE:
        return text
    raise _refused(key, value, "Apache Hudi's" if text in _OTHER_TYPES else "an unknown type")


class TimestampType(Enum):
    """`hoodie.keygen.timebased.timestamp.type`: what the partition column holds."""

    UNIX_TIMESTAMP = "UNIX_TIMESTAMP"
    DATE_STRING = "DATE_STRING"
    MIXED = "MIXED"
    EPOCHMILLISECONDS = "EPOCHMILLISECONDS"
    EPOCHMICROSECONDS = "EPOCHMICROSECONDS"
    SCALAR = "SCALAR"


class TimeUnit(Enum):
    """Java's `TimeUnit`: the unit of a `SCALAR` column."""

    NANOSECONDS = "NANOSECONDS"
    MICROSECONDS = "MICROSECONDS"
    MILLISECONDS = "MILLISECONDS"
    SECONDS = "SECONDS"
    MINUTES = "MINUTES"
    HOURS = "HOURS"
    DAYS = "DAYS"


# How many units make a millisecond (below it) or milliseconds a unit (above it).
UNITS_PER_MILLI = {"NANOSECONDS": 1_000_000, "MICROSECONDS": 1000}
MILLIS_PER_UNIT = {"MILLISECONDS": 1, "SECONDS": 1000, "MINUTES": 60_000, "HOURS": 3_600_000,
                   "DAYS": 86_400_000}  # fmt: skip
# The unit each number type is in (DATE_STRING and MIXED take strings).
UNIT_OF_TYPE = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS",
                "EPOCHMICROSECONDS": "MICROSECONDS"}  # fmt: skip
STRING_TYPES = ("DATE_STRING", "MIXED")
HOODIE_DATE_TIME_PARSER = "org.apache.hudi.keygen.parser.HoodieDateTimeParser"

# Joda's pattern letters: those Spark reads alike (with the counts we take), and the names of
# the rest for the refusal.
_TAKEN = {"y": (1, 2, 3, 4), "M": (1, 2), "d": (1, 2), "H": (1, 2), "m": (1, 2), "s": (1, 2),
          "S": (1, 2, 3)}  # fmt: skip
_LETTER_NAMES = {
    "G": "era", "C": "century of era", "Y": "year of era", "x": "weekyear",
    "w": "week of weekyear", "e": "day of week", "E": "day of week text", "D": "day of year",
    "a": "halfday of day", "h": "clockhour of halfday", "K": "hour of halfday",
    "k": "clockhour of day", "z": "time zone name", "Z": "time zone offset/id",
}  # fmt: skip
_SPARK_SPECIAL = set("[]{}#")
_OFFSET = re.compile(r"^(?:GMT|UTC)?[+-]\d{1,2}(?::?\d{2})?$")


def spark_pattern(key: str, pattern: str, parsing: bool = False) -> str:
    """Spark's datetime pattern for the Joda pattern `pattern` (given under `key`): the
    letters `y M d H m s S` (as many as `_TAKEN` allows), quoted literals (`'T'`, `''` for a
    quote) and other characters as literals; any other letter is refused by name. `parsing`:
    an input pattern, where `yy` is refused too (Joda reads it within 50 years of today,
    Spark as 2000-2099)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = i + 1
            while end < len(pattern):
                if pattern[end] == "'" and pattern[end + 1 : end + 2] == "'":
                    end += 2
                    continue
                if pattern[end] == "'":
                    break
                end += 1
            if end >= len(pattern):
                raise InvalidConfigError(f"option '{key}'={pattern!r} has an unclosed quote (')")
            out.append(pattern[i : end + 1])
            i = end + 1
            continue
        if ch.isascii() and ch.isalpha():
            run = len(pattern[i:]) - len(pattern[i:].lstrip(ch))
            if ch not in _TAKEN:
                name = _LETTER_NAMES.get(ch, "not a Joda pattern letter")
                raise InvalidConfigError(
                    f"option '{key}'={pattern!r}: the pattern letter '{ch}' ({name}) is not "
                    "supported; dbt-hoodie takes the letters y M d H m s S (year, month, day, "
                    "hour of day, minute, second, fraction), quoted literals ('T') and "
                    "separators, whose meaning Joda (Apache Hudi) and Spark share"
                )
            if run not in _TAKEN[ch]:
                counts = " or ".join(ch * n for n in _TAKEN[ch])
                raise InvalidConfigError(
                    f"option '{key}'={pattern!r}: '{ch * run}' is not supported; use {counts} "
                    "(other counts mean text or other widths in Joda or Spark)"
                )
            if parsing and ch == "y" and run == 2:
                raise InvalidConfigError(
                    f"option '{key}'={pattern!r}: 'yy' is not supported in an input pattern "
                    "(Joda reads two-digit years within 50 years of today, Spark as 2000-2099); "
                    "use yyyy"
                )
            out.append(ch * run)
            i += run
            continue
        out.append(f"'{ch}'" if ch in _SPARK_SPECIAL else ch)
        i += 1
    return "".join(out)


def _output_format(key: str, value: object) -> str:
    text = str(value)
    if not text.strip():
        raise InvalidConfigError(f"option '{key}' must be a date pattern, such as yyyy/MM/dd")
    spark_pattern(key, text)
    return text


def _zone(key: str, value: object) -> str:
    text = str(value).strip()
    if text in ("UTC", "GMT", "Z") or _OFFSET.match(text):
        return text
    try:
        zoneinfo.ZoneInfo(text)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not a time zone (a region such as Asia/Kolkata, "
            "UTC, or an offset such as +05:30); Java would take it as GMT silently"
        ) from None
    return text


def _parser_class(key: str, value: object) -> str:
    if str(value).strip() != HOODIE_DATE_TIME_PARSER:
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not supported: dbt-hoodie parses dates as Apache "
            f"Hudi's {HOODIE_DATE_TIME_PARSER} does"
        )
    return HOODIE_DATE_TIME_PARSER


def _false_only(key: str, value: object) -> bool:
    if str(value).strip().lower() != "false":
        raise InvalidConfigError(
            f"option '{key}'={value!r} is not supported: timestamp partition columns are "
            "numbers (epoch values in the timestamp type's unit), dates or strings; a Spark "
            "TIMESTAMP column is refused as a timestamp partition source whatever this says"
        )
    return False


def _timebased(name: str) -> tuple[str, tuple[Alias, ...]]:
    alias = Alias(f"hoodie.deltastreamer.keygen.timebased.{name}")
    return f"hoodie.keygen.timebased.{name}", (alias,)


def _timebased_property(name: str, default: object, doc: str, parse: object = None,
                        choices: type[Enum] | None = None) -> ConfigProperty:  # fmt: skip
    key, aliases = _timebased(name)
    return ConfigProperty(key, default, doc, parse=parse, aliases=aliases,  # type: ignore[arg-type]
                          choices=choices)  # fmt: skip


KEYGEN_CLASS = ConfigProperty(
    "hoodie.datasource.write.keygenerator.class", None,
    "Apache Hudi's key generator class: SimpleKeyGenerator, ComplexKeyGenerator, "
    "NonpartitionedKeyGenerator, TimestampBasedKeyGenerator or CustomKeyGenerator (package "
    "org.apache.hudi.keygen); any other is refused. None: the type, else by the fields "
    "(NonpartitionedKeyGenerator, SimpleKeyGenerator for one, ComplexKeyGenerator for more)",
    attribute="key_generator_class", parse=_keygen_class,
)  # fmt: skip
KEYGEN_TYPE = ConfigProperty(
    "hoodie.datasource.write.keygenerator.type", None,
    "the key generator by type (SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM), honoured "
    "when hoodie.datasource.write.keygenerator.class is not given (as Hudi Streamer does; "
    "Apache Hudi 1.2's Spark datasource ignores it and writes SimpleKeyGenerator's keys)",
    attribute="key_generator_type", parse=_keygen_type, choices=KeyGeneratorType,
)  # fmt: skip
TIMESTAMP_TYPE = _timebased_property(
    "timestamp.type", None, "TIMESTAMP parts: what the partition column holds: "
    "UNIX_TIMESTAMP (seconds), EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR (numbers in "
    "the scalar time unit; a DATE column counts days), DATE_STRING or MIXED (strings read "
    "with the input date formats); a null value is taken as 1 unit after the epoch (strings: "
    "that instant in the first input format), as Apache Hudi does", choice(TimestampType),
    TimestampType,
)  # fmt: skip
SCALAR_UNIT = _timebased_property(
    "timestamp.scalar.time.unit", TimeUnit.SECONDS.value, "TIMESTAMP parts of type SCALAR: "
    "the unit of the numbers (Java's TimeUnit: NANOSECONDS ... DAYS)", choice(TimeUnit),
    TimeUnit,
)  # fmt: skip
INPUT_FORMAT = _timebased_property(
    "input.dateformat", "", "DATE_STRING and MIXED: the Joda pattern(s) strings are read by, "
    "separated by the list delimiter; the first that reads the whole string wins (letters "
    "y M d H m s S, quoted literals and separators; Spark reads the digits a pattern asks for "
    "exactly, where Joda takes fewer)",
)  # fmt: skip
INPUT_DELIMITER = _timebased_property(
    "input.dateformat.list.delimiter.regex", ",", "the regular expression that separates the "
    "input date formats",
)  # fmt: skip
INPUT_TIMEZONE = _timebased_property("input.timezone", "UTC", "the time zone strings are "
                                     "read in", _zone)  # fmt: skip
OUTPUT_FORMAT = _timebased_property(
    "output.dateformat", "", "TIMESTAMP parts: the Joda pattern of the partition folder "
    "(`/` makes levels): letters y M d H m s S, quoted literals, separators; required",
    _output_format,
)  # fmt: skip
OUTPUT_TIMEZONE = _timebased_property("output.timezone", "UTC", "the time zone the "
                                      "partition folder's date is in", _zone)  # fmt: skip
TIMEZONE = _timebased_property("timezone", "UTC", "when set, the input and the output time "
                               "zone both", _zone)  # fmt: skip
DATE_TIME_PARSER = ConfigProperty(
    "hoodie.keygen.datetime.parser.class", HOODIE_DATE_TIME_PARSER,
    "only Apache Hudi's default parser", parse=_parser_class,
    aliases=(Alias("hoodie.deltastreamer.keygen.datetime.parser.class"),),
)  # fmt: skip
CONSISTENT_LOGICAL_TIMESTAMP = ConfigProperty(
    "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled", False,
    "only false: Spark TIMESTAMP columns are not taken as timestamp partition sources",
    parse=_false_only,
)  # fmt: skip

# The settings Apache Hudi 1.2 keeps in `hoodie.properties` (`PERSISTED_CONFIG_LIST`), those
# set only, under their own keys.
TIMESTAMP_SETTINGS: tuple[ConfigProperty, ...] = (
    TIMESTAMP_TYPE, SCALAR_UNIT, INPUT_DELIMITER, INPUT_FORMAT, INPUT_TIMEZONE, OUTPUT_FORMAT,
    OUTPUT_TIMEZONE, TIMEZONE, DATE_TIME_PARSER,
)  # fmt: skip
KEYGEN_OPTIONS: tuple[ConfigProperty, ...] = (
    KEYGEN_CLASS, KEYGEN_TYPE, *TIMESTAMP_SETTINGS, CONSISTENT_LOGICAL_TIMESTAMP,
)  # fmt: skip
_SETTING_OF_KEY = {key: prop for prop in TIMESTAMP_SETTINGS for key in prop.keys}


def timestamp_settings(options: Mapping[str, object]) -> dict[str, str]:
    """The timestamp settings among `options`, by their own keys (an alias's value under the
    key it is an alias of), as text."""
    return {_SETTING_OF_KEY[k].key: str(v) for k, v in options.items() if k in _SETTING_OF_KEY}


class PartType(Enum):
    """A `CustomKeyGenerator` partition field's type (`field:TYPE`)."""

    SIMPLE = "SIMPLE"
    TIMESTAMP = "TIMESTAMP"


def split_typed_fields(fields: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(names, types) of partition fields given as `field:TYPE` (Apache Hudi's custom key
    generator, and 1.x's `hoodie.table.partition.fields`); types () when none has one."""
    if not any(":" in f for f in fields):
        return fields, ()
    names, types = [], []
    for item in fields:
        name, _, kind = item.rpartition(":") if ":" in item else ("", "", item)
        if not name:
            raise InvalidConfigError(
                f"partition field {item!r}: with CustomKeyGenerator every partition field is "
                "`column:SIMPLE` or `column:TIMESTAMP`"
            )
        if kind.strip().upper() not in choice_values(PartType):
            raise InvalidConfigError(
                f"partition field {item!r}: the type {kind!r} is not SIMPLE or TIMESTAMP"
            )
        names.append(name.strip())
        types.append(kind.strip().upper())
    return tuple(names), tuple(types)


@dataclass(frozen=True)
class TimestampSpec:
    """How a TIMESTAMP part turns a value into its folder: read as an instant (numbers in
    `unit`, strings with `input_formats` in `input_zone`), written with `output_format` in
    `output_zone`. `settings` are the keys as given, which `hoodie.properties` keeps."""

    timestamp_type: str
    output_format: str
    unit: str | None = None  # None: strings (DATE_STRING, MIXED)
    input_formats: tuple[str, ...] = ()
    input_zone: str = "UTC"
    output_zone: str = "UTC"
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def takes_strings(self) -> bool:
        return self.unit is None

    @classmethod
    def of(cls, settings: Mapping[str, str], where: str) -> TimestampSpec:
        """The spec of `timestamp_settings` (`where`: what asked for TIMESTAMP parts, for the
        errors)."""

        def get(prop: ConfigProperty) -> str:
            return settings.get(prop.key, str(prop.default if prop.default is not None else ""))

        kind_text = settings.get(TIMESTAMP_TYPE.key)
        if not kind_text:
            raise InvalidConfigError(f"{where} needs {TIMESTAMP_TYPE.key} (one of "
                                     f"{', '.join(choice_values(TimestampType))})")  # fmt: skip
        kind = str(choice(TimestampType)(TIMESTAMP_TYPE.key, kind_text))
        if not settings.get(OUTPUT_FORMAT.key, "").strip():
            raise InvalidConfigError(f"{where} needs {OUTPUT_FORMAT.key} (the folder's date "
                                     "pattern, such as yyyy/MM/dd)")  # fmt: skip
        output = _output_format(OUTPUT_FORMAT.key, settings[OUTPUT_FORMAT.key])
        unit: str | None = UNIT_OF_TYPE.get(kind)
        if kind == TimestampType.SCALAR.value:
            unit = str(choice(TimeUnit)(SCALAR_UNIT.key, get(SCALAR_UNIT)))
        inputs: tuple[str, ...] = ()
        if kind in STRING_TYPES:
            text = get(INPUT_FORMAT)
            try:
                parts = re.split(get(INPUT_DELIMITER), text)
            except re.error as error:
                raise InvalidConfigError(
                    f"option '{INPUT_DELIMITER.key}' is not a regular expression: {error}"
                ) from None
            inputs = tuple(p.strip() for p in parts if p.strip())
            if not inputs:
                raise InvalidConfigError(f"{where}: {kind} needs {INPUT_FORMAT.key} (the "
                                         "pattern(s) of the strings)")  # fmt: skip
            for pattern in inputs:
                spark_pattern(INPUT_FORMAT.key, pattern, parsing=True)
        general = settings.get(TIMEZONE.key, "").strip()
        input_zone = (
            _zone(TIMEZONE.key, general)
            if general
            else _zone(INPUT_TIMEZONE.key, get(INPUT_TIMEZONE) or "UTC")
        )
        output_zone = _zone(TIMEZONE.key, general) if general else _zone(
            OUTPUT_TIMEZONE.key, get(OUTPUT_TIMEZONE) or "UTC")  # fmt: skip
        get(DATE_TIME_PARSER) and _parser_class(DATE_TIME_PARSER.key, get(DATE_TIME_PARSER))
        return cls(kind, output, unit, inputs, input_zone, output_zone,
                   tuple(sorted(settings.items())))  # fmt: skip

"""Read options, in Hudi's names, checked before any file is opened.

The same table answers three questions: what is true now (snapshot), what was true at an
instant (time travel, `as.of.instant`), and what changed in a range of instants (incremental).
Read-optimized skips merge-on-read log files. A typo in an option name must not silently turn
a time-travel read into a read of today's data, so unknown options are errors. The options
are declared, with their docs and defaults, in `hoodie.options.read`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import cast

from ..exceptions import InvalidConfigError
from ..options import read
from ..options.property import choice_values, closest_key

# The keys, declared with their docs and defaults in `hoodie.options.read`.
QUERY_TYPE = read.QUERY_TYPE.key
AS_OF_INSTANT = read.AS_OF_INSTANT.key
BEGIN_INSTANT = read.BEGIN_INSTANT.key
END_INSTANT = read.END_INSTANT.key
INCREMENTAL_FORMAT = read.INCREMENTAL_FORMAT.key
MAX_PARTITION_BYTES = read.MAX_PARTITION_BYTES.key
PARALLELISM = read.PARALLELISM.key
METADATA_ENABLE = read.METADATA_ENABLE.key
DATA_SKIPPING = read.DATA_SKIPPING.key
IGNORE_SPURIOUS_DELETES = read.IGNORE_SPURIOUS_DELETES.key
STORAGE_PREFIX = read.STORAGE_PREFIX

SNAPSHOT = read.QueryType.SNAPSHOT.value
READ_OPTIMIZED = read.QueryType.READ_OPTIMIZED.value
INCREMENTAL = read.QueryType.INCREMENTAL.value
QUERY_TYPES = choice_values(read.QueryType)
LATEST_STATE = read.IncrementalFormat.LATEST_STATE.value
CDC = read.IncrementalFormat.CDC.value
INCREMENTAL_FORMATS = choice_values(read.IncrementalFormat)

PLANNED = read.PLANNED
SUPPORTED = {prop.key: prop.doc for prop in read.READ_OPTIONS}

_DIGITS = re.compile(r"^\d{8,17}$")
_TEXT_FORMATS = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


def normalize_instant(value: str, option: str) -> str:
    """An instant time `yyyyMMddHHmmssSSS` from any of the accepted spellings.

    Shorter digit strings are padded with zeros (`20261120` is the start of that day), as
    Hudi does, so they compare correctly with full instant times.
    """
    text = str(value).strip()
    if _DIGITS.match(text):
        padded = text.ljust(17, "0")
        try:
            datetime.strptime(padded[:14], "%Y%m%d%H%M%S")
        except ValueError:
            pass
        else:
            return padded
    for fmt in _TEXT_FORMATS:
        try:
            moment = datetime.strptime(text, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
        return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"
    raise InvalidConfigError(
        f"option '{option}'={value!r} is not an instant: use yyyyMMddHHmmssSSS "
        "(e.g. 20261120103000000), 'yyyy-MM-dd HH:mm:ss' or yyyy-MM-dd (UTC)"
    )


@dataclass(frozen=True)
class ReadOptions:
    query_type: str = cast(str, read.QUERY_TYPE.default)
    as_of_instant: str | None = None
    begin_instant: str | None = None
    end_instant: str | None = None
    incremental_format: str = cast(str, read.INCREMENTAL_FORMAT.default)
    max_partition_bytes: int | None = None  # None: the packing module's default
    parallelism: int | None = None  # None: the cores of the planning process
    metadata_enable: bool = cast(bool, read.METADATA_ENABLE.default)  # `read.METADATA_ENABLE`
    data_skipping: bool = cast(bool, read.DATA_SKIPPING.default)  # see `read.data_skipping`
    ignore_spurious_deletes: bool = cast(bool, read.IGNORE_SPURIOUS_DELETES.default)
    storage_options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        given = {str(k): str(v) for k, v in options.items() if v is not None}
        storage = {
            k[len(STORAGE_PREFIX) :]: v for k, v in given.items() if k.startswith(STORAGE_PREFIX)
        }
        unknown = sorted(
            k
            for k in given
            if k.lower() not in read.INTERNAL
            and k not in SUPPORTED
            and not k.startswith(STORAGE_PREFIX)
        )
        if unknown:
            said = []
            for key in unknown:
                close = closest_key(key, SUPPORTED)
                said.append(repr(key) + (f" (did you mean '{close}'?)" if close else ""))
            raise InvalidConfigError(
                f"unknown read option(s) {', '.join(said)}. The read options are listed in "
                "docs/options.md (python -m hoodie.options.reference)"
            )
        query_type = given.get(QUERY_TYPE, str(read.QUERY_TYPE.default)).strip().lower()
        if query_type not in QUERY_TYPES:
            raise InvalidConfigError(
                f"option '{QUERY_TYPE}'={given[QUERY_TYPE]!r} must be one of "
                f"{', '.join(QUERY_TYPES)}"
            )
        as_of = given.get(AS_OF_INSTANT)
        begin = given.get(BEGIN_INSTANT)
        end = given.get(END_INSTANT)
        if query_type == INCREMENTAL:
            if begin is None:
                raise InvalidConfigError(
                    f"an incremental read needs '{BEGIN_INSTANT}' (the instant after which "
                    "changes are read; use 0 to read all)"
                )
            if as_of is not None:
                raise InvalidConfigError(
                    f"'{AS_OF_INSTANT}' does not apply to incremental reads: use "
                    f"'{END_INSTANT}' to bound the range"
                )
        elif begin is not None or end is not None or INCREMENTAL_FORMAT in given:
            raise InvalidConfigError(
                f"'{BEGIN_INSTANT}', '{END_INSTANT}' and '{INCREMENTAL_FORMAT}' apply to "
                f"incremental reads only: set {QUERY_TYPE}=incremental"
            )
        incremental_format = given.get(INCREMENTAL_FORMAT, LATEST_STATE).strip().lower()
        if incremental_format not in INCREMENTAL_FORMATS:
            raise InvalidConfigError(
                f"option '{INCREMENTAL_FORMAT}'={given[INCREMENTAL_FORMAT]!r} must be one of "
                f"{', '.join(INCREMENTAL_FORMATS)}"
            )
        parsed = cls(
            query_type=query_type,
            as_of_instant=normalize_instant(as_of, AS_OF_INSTANT) if as_of is not None else None,
            begin_instant=_begin(begin),
            end_instant=normalize_instant(end, END_INSTANT) if end is not None else None,
            incremental_format=incremental_format,
            max_partition_bytes=_positive(given, MAX_PARTITION_BYTES),
            parallelism=_positive(given, PARALLELISM),
            data_skipping=cast(
                bool,
                read.DATA_SKIPPING.value(DATA_SKIPPING, given[DATA_SKIPPING])
                if DATA_SKIPPING in given
                else read.DATA_SKIPPING.default,
            ),
            metadata_enable=cast(
                bool,
                read.METADATA_ENABLE.value(METADATA_ENABLE, given[METADATA_ENABLE])
                if METADATA_ENABLE in given
                else read.METADATA_ENABLE.default,
            ),
            ignore_spurious_deletes=cast(
                bool,
                read.IGNORE_SPURIOUS_DELETES.value(
                    IGNORE_SPURIOUS_DELETES, given[IGNORE_SPURIOUS_DELETES]
                )
                if IGNORE_SPURIOUS_DELETES in given
                else read.IGNORE_SPURIOUS_DELETES.default,
            ),
            storage_options=storage,
        )
        if (
            parsed.begin_instant is not None
            and parsed.end_instant is not None
            and parsed.end_instant <= parsed.begin_instant
        ):
            raise InvalidConfigError(
                f"'{END_INSTANT}' ({parsed.end_instant}) must be after '{BEGIN_INSTANT}' "
                f"({parsed.begin_instant})"
            )
        return parsed


def _begin(value: str | None) -> str | None:
    if value is None:
        return None
    if value.strip() in ("0", "000"):
        return "0" * 17  # before every instant
    return normalize_instant(value, BEGIN_INSTANT)


def _positive(given: Mapping[str, str], option: str) -> int | None:
    if option not in given:
        return None
    text = given[option].strip()
    if not text.isdigit() or int(text) == 0:
        raise InvalidConfigError(
            f"option '{option}'={given[option]!r} must be a positive whole number"
        )
    return int(text)

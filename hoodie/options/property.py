"""`ConfigProperty`: one option, declared once: Apache Hudi's `ConfigProperty` in Python.

An option has one key and may be known by others (`Alias`): Apache Hudi's older names, or the
keys other Hudi tools give the same setting. An alias marked deprecated is still accepted
(silently: nothing is logged, as Apache Hudi's `withAlternatives` keys are read), and the
option reference says which name to use instead. A value is read from its text by the
declaration's `parse`, whose errors name the option; where the option takes one of a fixed
set of values, `choices` is the `enum.Enum` of them, and the value is its member's value (the
text as Hudi spells it), so the rest of the core compares plain strings as it always has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from ..exceptions import InvalidConfigError

Parse = Callable[[str, object], object]


@dataclass(frozen=True)
class Alias:
    """Another key of an option: deprecated ones are kept working, and listed as such."""

    key: str
    deprecated: bool = False


@dataclass(frozen=True)
class ConfigProperty:
    """One option: its key, what it defaults to and does, and how its text is read.

    `attribute` is the field of the domain's typed view the option sets (`WriteConfig`,
    `ReadOptions`, `TableProperties`), if any. `parse(key, value)` turns the text given under
    `key` into that field's value, or raises `InvalidConfigError` naming `key`; None: the
    domain's code reads the text itself (table properties as stored, storage options passed
    on to the store). `identity` marks a write option the caller usually gives as an argument
    (record key, ...); `secret` a storage option that is a credential, never written anywhere.
    """

    key: str
    default: object
    doc: str
    attribute: str = ""
    parse: Parse | None = None
    aliases: tuple[Alias, ...] = ()
    choices: type[Enum] | None = None
    identity: bool = False
    secret: bool = False

    @property
    def alternatives(self) -> tuple[str, ...]:
        """The other keys, deprecated or not (Apache Hudi's `getAlternatives`)."""
        return tuple(alias.key for alias in self.aliases)

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key of the option, its own first."""
        return (self.key, *self.alternatives)

    @property
    def deprecated_keys(self) -> tuple[str, ...]:
        return tuple(alias.key for alias in self.aliases if alias.deprecated)

    def value(self, key: str, given: object) -> object:
        """The value of the text `given` under `key` (this option's key or an alias): as
        `parse` reads it, or the text itself where the domain reads it."""
        return self.parse(key, given) if self.parse is not None else str(given)

    def describe(self) -> str:
        """One line: the keys, the doc and the default (what an unknown key's error lists)."""
        also = f" (also {', '.join(_alias_names(self.aliases))})" if self.aliases else ""
        return f"{self.key}{also}: {self.doc}, default {show_default(self.default)}"


def _alias_names(aliases: Iterable[Alias]) -> list[str]:
    return [f"{a.key} (deprecated)" if a.deprecated else a.key for a in aliases]


def show_default(value: object) -> str:
    """A default as the docs and messages show it: `true`, `none`, the text of the value."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None or value == ():
        return "none"
    return str(value)


def by_key(declarations: Iterable[ConfigProperty]) -> dict[str, ConfigProperty]:
    """Every key (aliases included) of the declarations -> its declaration; a key declared
    twice is a mistake in the table, caught when the module loads."""
    table: dict[str, ConfigProperty] = {}
    for prop in declarations:
        for key in prop.keys:
            if key in table:
                raise ValueError(f"option key {key!r} is declared twice")
            table[key] = prop
    return table


def closest_key(key: str, known: Iterable[str]) -> str | None:
    """The known key `key` is a typo of, if there is one: the nearest by edit distance
    (case ignored), and only within a couple of edits (one more per eight characters).

    A similarity ratio alone would offer unrelated keys: every option shares `hoodie.`, so
    `hoodie.metadata.enable` once scored close to `hoodie.compact.inline`. A hint that points at
    the wrong option is worse than none."""
    folded = key.lower()
    allowed = max(2, len(key) // 8)
    best: tuple[int, str] | None = None
    for candidate in known:
        distance = edit_distance(folded, candidate.lower(), allowed)
        if distance <= allowed and (best is None or (distance, candidate) < best):
            best = (distance, candidate)
    return best[1] if best else None


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of `a` and `b`, or `limit + 1` once it is sure to exceed `limit`
    (keys differing in length by more than the limit are not compared character by character)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            substitute = previous[j - 1] + (char != other)
            current.append(min(previous[j] + 1, current[j - 1] + 1, substitute))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def choice_values(choices: type[Enum]) -> tuple[str, ...]:
    """The values of a choice enum, as Hudi spells them, in the enum's order."""
    return tuple(str(member.value) for member in choices)


# How values are read from their text (options arrive as strings from dbt, Spark or a
# properties file). Each error names the key the value was given under.


def choice(choices: type[Enum]) -> Parse:
    """One of the enum's values; any spelling's case is accepted, and the value comes back as
    Hudi spells it (the member's value)."""
    values = choice_values(choices)
    by_folded = {value.lower(): value for value in values}

    def check(key: str, value: object) -> str:
        text = str(value).strip().lower()
        if text not in by_folded:
            raise InvalidConfigError(
                f"option '{key}' must be one of {', '.join(values)}, got {value!r}"
            )
        return by_folded[text]

    return check


def positive_int(key: str, value: object) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number <= 0:
        raise InvalidConfigError(f"option '{key}' must be a positive integer, got {value!r}")
    return number


def non_negative_int(key: str, value: object) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number < 0:
        raise InvalidConfigError(f"option '{key}' must be an integer >= 0, got {value!r}")
    return number


def positive_float(key: str, value: object) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        number = -1.0
    if not number > 0.0 or number == float("inf"):
        raise InvalidConfigError(f"option '{key}' must be a positive number, got {value!r}")
    return number


def probability(key: str, value: object) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        number = -1.0
    if not 0.0 < number < 1.0:
        raise InvalidConfigError(
            f"option '{key}' must be a probability between 0 and 1 (exclusive), got {value!r}"
        )
    return number


def boolean(key: str, value: object) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise InvalidConfigError(f"option '{key}' must be true or false, got {value!r}")
    return text == "true"


def field_list(key: str, value: object) -> tuple[str, ...]:
    """One or more comma-separated column names."""
    fields = tuple(f.strip() for f in str(value).split(",") if f.strip())
    if not fields:
        raise InvalidConfigError(f"option '{key}' must name one or more columns, got {value!r}")
    return fields


def optional_field_list(key: str, value: object) -> tuple[str, ...]:
    """Comma-separated column names, or none."""
    return tuple(f.strip() for f in str(value).split(",") if f.strip())


def column(key: str, value: object) -> str | None:
    """A column name, or none (empty)."""
    text = str(value).strip()
    return text or None


def text(key: str, value: object) -> str:
    """Any non-empty text."""
    stripped = str(value).strip()
    if not stripped:
        raise InvalidConfigError(f"option '{key}' must not be empty")
    return stripped

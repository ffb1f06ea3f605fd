"""Key generators: how a row becomes a Hudi key (record key + partition path).

Expressed as Spark columns so keys are computed in the tasks, next to the data. The formats
match Hudi's generators, so a table's `_hoodie_record_key` and partition folders look the same
whoever wrote them:
- simple: the field's value as text;
- complex (several key fields): `f1:v1,f2:v2`, with `__null__` / `__empty__` for missing parts;
- partition path: values joined by `/`, `col=value` when hive-style, and
  `__HIVE_DEFAULT_PARTITION__` for a null or empty value.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from .naming import DEFAULT_PARTITION
from .properties import (
    COMPLEX_KEYGEN,
    NON_PARTITIONED_KEYGEN,
    SIMPLE_KEYGEN,
)
from .schema import as_array

NULL_KEY_PART = "__null__"
EMPTY_KEY_PART = "__empty__"


@dataclass(frozen=True)
class KeyGenerator:
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style_partitioning: bool = False
    url_encode: bool = False

    @property
    def class_name(self) -> str:
        """The Hudi key generator class that produces the same keys (for hoodie.properties)."""
        if not self.partition_fields:
            return NON_PARTITIONED_KEYGEN
        if len(self.record_key_fields) == 1 and len(self.partition_fields) == 1:
            return SIMPLE_KEYGEN
        return COMPLEX_KEYGEN

    @property
    def is_complex_key(self) -> bool:
        return len(self.record_key_fields) > 1

    def record_key(self) -> Column:
        if not self.is_complex_key:
            return F.col(_quote(self.record_key_fields[0])).cast("string")
        parts = []
        for name in self.record_key_fields:
            text = F.col(_quote(name)).cast("string")
            value = (
                F.when(text.isNull(), F.lit(NULL_KEY_PART))
                .when(text == "", F.lit(EMPTY_KEY_PART))
                .otherwise(text)
            )
            parts.append(F.concat(F.lit(f"{name}:"), value))
        return F.concat_ws(",", *parts)

    def record_key_is_missing(self) -> Column:
        """True where Hudi would reject the key: null or empty (every part, for complex keys)."""
        missing = [
            F.col(_quote(n)).isNull() | (F.col(_quote(n)).cast("string") == "")
            for n in self.record_key_fields
        ]
        result = missing[0]
        for part in missing[1:]:
            result = result & part
        return result

    def partition_path(self) -> Column:
        if not self.partition_fields:
            return F.lit("")
        parts = []
        for name in self.partition_fields:
            text = F.col(_quote(name)).cast("string")
            if self.url_encode:
                text = F.url_encode(text)
            value = F.when(text.isNull() | (text == ""), F.lit(DEFAULT_PARTITION)).otherwise(text)
            if self.hive_style_partitioning:
                value = F.concat(F.lit(f"{name}="), value)
            parts.append(value)
        return F.concat_ws("/", *parts)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def record_keys_of(table: pa.Table, fields: tuple[str, ...]) -> pa.Array:
    """Record keys computed from the key columns of stored rows, as `KeyGenerator` makes them.

    Readers need this for tables written without meta fields (no `_hoodie_record_key`
    column): a complex key is `field:value` pairs joined by commas, with Hudi's markers for
    null and empty parts.
    """
    if len(fields) == 1:
        return as_array(table.column(fields[0])).cast(pa.string())
    parts = []
    for name in fields:
        text = as_array(table.column(name)).cast(pa.string())
        text = pc.if_else(pc.equal(text, ""), EMPTY_KEY_PART, text)
        text = pc.fill_null(text, NULL_KEY_PART)
        parts.append(pc.binary_join_element_wise(f"{name}:", text, ""))
    return pc.binary_join_element_wise(*parts, ",")

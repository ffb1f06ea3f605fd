"""Every option dbt-hoodie knows, declared once, per domain, as hudi-rs and Apache Hudi do.

- `write`: what a write asks for (`WriteConfig`'s options, `hoodie.config`);
- `read`: what a read asks for (`ReadOptions`, `hoodie.read.options`);
- `table`: what `hoodie.properties` records (`TableProperties`, `hoodie.properties`);
- `storage`: the object store options the core itself reads (`hoodie.storage`,
  `hoodie.object_store`); any other is passed to pyarrow's file system, which refuses it if
  it does not know it.

Each declaration (`ConfigProperty`) carries the key, the other keys it is also known by (each
marked deprecated or not), the default, the doc and, where the option has a fixed set of
values, the `enum.Enum` of them. The modules that read options read them through these, and
`docs/options.md` is generated from them (`python -m hoodie.options.reference`). This package
sits on the lowest floor: it imports nothing of the core but its exceptions, so every floor can
read its options here (not to be confused with `hoodie.read.options`, which parses a read's).
"""

from .property import Alias, ConfigProperty

__all__ = ["Alias", "ConfigProperty"]

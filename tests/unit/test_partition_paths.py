"""Partition paths that cannot leave the table: the rules, the urlencode escaping, and the
one choke point of the storage that keeps every file operation inside the base path."""

from __future__ import annotations

import os

import pytest

from hoodie import partition_paths as paths
from hoodie.exceptions import UnsafePathError
from hoodie.storage import load_file_io

REFUSED = {
    "..": paths.DOT_SEGMENT,
    "../x": paths.DOT_SEGMENT,
    "../../x": paths.DOT_SEGMENT,
    "a/../../x": paths.DOT_SEGMENT,
    ".": paths.DOT_SEGMENT,
    "a/./b": paths.DOT_SEGMENT,
    "/abs/path": paths.ABSOLUTE,
    "/a": paths.ABSOLUTE,
    "a/": paths.TRAILING_SLASH,
    "a//b": paths.EMPTY_SEGMENT,
    ".hoodie": paths.METADATA_FOLDER,
    ".hoodie/.temp": paths.METADATA_FOLDER,
    ".hoodie_x": paths.METADATA_FOLDER,
    "a\nb": paths.CONTROL_CHARACTER,
    "a\x00b": paths.CONTROL_CHARACTER,
    "tab\there": paths.CONTROL_CHARACTER,
    "del\x7f": paths.CONTROL_CHARACTER,
    "x" * 256: paths.LONG_SEGMENT,
    "a/" + "é" * 128: paths.LONG_SEGMENT,  # 256 bytes in 128 characters
}
ALLOWED = [
    "",  # a non-partitioned table
    "2024-01-01",
    "2024/01/31",  # Hudi's slash-separated date folders
    "dt=2024-01-01/region=eu",
    "__HIVE_DEFAULT_PARTITION__",
    "%2E%2E",
    "...",
    "a..b",
    "x" * 255,
    "é" * 127,
    "日本語/ünïcödé",
    "a/.hoodie",  # only the first segment would be the metadata folder
    "dt=..",  # hive style: the value is part of a longer name
]


@pytest.mark.parametrize("path", list(REFUSED), ids=repr)
def test_refused_paths_name_their_reason(path):
    assert paths.problem(path) == REFUSED[path]


@pytest.mark.parametrize("path", ALLOWED, ids=repr)
def test_allowed_paths(path):
    assert paths.problem(path) is None


def test_escape_is_hudis_escape_path_name():
    """PartitionPathEncodeUtils.escapePathName: %XX (upper-case hex) for its characters,
    everything else (space, unicode, `+`, `.` inside a value) as is."""
    assert paths.escape_path_name("a/b c") == "a%2Fb c"
    assert paths.escape_path_name("100%") == "100%25"
    assert paths.escape_path_name("k=v:\"#'*?\\{[]^") == "k%3Dv%3A%22%23%27%2A%3F%5C%7B%5B%5D%5E"
    assert paths.escape_path_name("a\x00b\nc\x7f") == "a%00b%0Ac%7F"
    assert paths.escape_path_name("ünï+code.x") == "ünï+code.x"


@pytest.mark.parametrize(
    "value, escaped",
    [
        (".", "%2E"),
        ("..", "%2E%2E"),
        ("../x", "..%2Fx"),
        ("../../x", "..%2F..%2Fx"),
        ("/abs/path", "%2Fabs%2Fpath"),
        (".hoodie", "%2Ehoodie"),
        (".hoodie/.temp", "%2Ehoodie%2F.temp"),
        ("a//b", "a%2F%2Fb"),
        ("a/", "a%2F"),
        ("%2E%2E", "%252E%252E"),
        ("...", "..."),
    ],
)
def test_escaped_values_are_safe_and_come_back(value, escaped):
    """Our extension: `.`, `..` and `.hoodie...` get their dots escaped; every escaped value
    is one safe segment that unescapes to the value."""
    assert paths.escape_path_name(value) == escaped
    assert paths.problem(escaped) is None
    assert paths.unescape_path_name(escaped) == value


def test_every_refused_value_is_safe_once_escaped_but_long_ones():
    for value, reason in REFUSED.items():
        escaped = paths.escape_path_name(value)
        assert paths.unescape_path_name(escaped) == value
        expected = paths.LONG_SEGMENT if reason == paths.LONG_SEGMENT else None
        assert paths.problem(escaped) == expected, value


def test_refusal_message_is_one_line_and_short():
    message = paths.refusal_message("orders", ("region",), "a\x00" + "x" * 5000, "is bad")
    assert "\n" not in message and "\x00" not in message
    assert len(message) < 500
    assert "table 'orders'" in message and "partition column region" in message
    assert '"a\\u0000xxx' in message and "(first 100 of 5002 characters)" in message
    assert "hoodie.datasource.write.partitionpath.urlencode=true" in message
    assert "partition columns a, b" in paths.refusal_message("t", ("a", "b"), "..", "x")


@pytest.mark.parametrize(
    "relative", ["../x", "../../x", "a/../../x", "/etc/passwd", "p/..", "..", "a\x00b"]
)
def test_storage_refuses_every_path_leaving_the_base_path(tmp_path, relative):
    """The one choke point: every `FileIO` operation on such a path raises, touching
    nothing outside the base path."""
    base = tmp_path / "lake" / "t"
    base.mkdir(parents=True)
    (tmp_path / "lake" / "x").write_text("keep")
    storage = load_file_io(str(base))
    before = sorted(os.walk(tmp_path))
    operations = [
        lambda: storage.read_bytes(relative),
        lambda: storage.exists(relative),
        lambda: storage.write_bytes(relative, b"x"),
        lambda: storage.write_atomic(relative, b"x"),
        lambda: storage.create_if_absent(relative, b"x"),
        lambda: storage.delete(relative),
        lambda: storage.delete_dir(relative),
        lambda: storage.list_files(relative),
        lambda: storage.makedirs(relative),
        lambda: storage.move("a", relative),
        lambda: storage.uri(relative),
    ]
    for operation in operations:
        with pytest.raises(UnsafePathError, match="outside the table's base path"):
            operation()
    assert sorted(os.walk(tmp_path)) == before
    assert (tmp_path / "lake" / "x").read_text() == "keep"


def test_storage_relative_refuses_uris_outside_the_base_path(tmp_path):
    storage = load_file_io(str(tmp_path / "t"))
    for uri in [f"file:{tmp_path}/x.parquet", f"{tmp_path}/t/../x.parquet", "/etc/passwd"]:
        with pytest.raises(UnsafePathError, match="not under the table's base path"):
            storage.relative(uri)
    with pytest.raises(UnsafePathError):
        storage.relative("p/../../x.parquet")
    assert storage.relative(f"file:{tmp_path}/t/p/a.parquet") == "p/a.parquet"
    assert storage.relative("p/a.parquet") == "p/a.parquet"


def test_urlencode_is_part_of_the_tables_identity():
    """A write asking another urlencode than the table's would put keys in other folders:
    it is an identity change (refused; an overwrite rebuilds), not silently ignored."""
    from hoodie.meta_client import identity_changes
    from hoodie.properties import TableProperties

    stored = TableProperties("t", "COPY_ON_WRITE", ("id",), ("dt",))
    wanted = TableProperties("t", "COPY_ON_WRITE", ("id",), ("dt",), url_encode_partition_path=True)
    (change,) = identity_changes(stored, wanted)
    assert change.setting == "hoodie.datasource.write.partitionpath.urlencode"
    assert (change.stored, change.wanted) == (False, True)
    assert identity_changes(wanted, wanted) == []


@pytest.mark.parametrize("seed", range(4))
def test_the_plain_path_shortcut_accepts_only_what_every_rule_accepts(seed):
    """`problem` and `data_file_problem` accept plain paths at once (a regular expression)
    before the rules one by one: every path the shortcut takes, the rules take too. Random
    paths of characters the rules are about ('.', '/', control characters, '.hoodie', long
    segments), and plain ones."""
    import random

    rng = random.Random(seed)
    pieces = ["a", "Z", "9", "=", "%2F", "-", ".", "..", "/", "//", "\x00", "\x1f", "\x7f",
              ".hoodie", "é", " ", "x" * 250, "~", "+"]  # fmt: skip
    plain = 0
    for _ in range(4000):
        path = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        if paths._PLAIN_PATH.fullmatch(path):
            plain += 1
            assert paths._broken_rule(path) is None, path
            assert paths._data_file_rule(path) is None, path
    assert plain > 100  # the shortcut was tried
    for refused in ("..", "a/../b", ".hoodie/x", "a/" + "x" * 256, "a//b", "/a", "a/"):
        assert paths._PLAIN_PATH.fullmatch(refused) is None, refused


# -- partition paths safe by their columns' types (KeyGenerator.partition_paths_safe) ----------
def _keygen(fields, hive=False, encode=False, **kw):
    from hoodie.keygen import KeyGenerator

    return KeyGenerator(("id",), tuple(fields), hive, encode, **kw)


def _schema(**types):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(n, t) for n, t in types.items()])


@pytest.mark.parametrize(
    "fields, types, hive, encode, safe",
    [
        (["dt"], {"dt": "date"}, False, False, True),
        (["y", "m"], {"y": "int", "m": "smallint"}, True, True, True),
        (["ts"], {"ts": "timestamp"}, True, True, True),
        (["amount"], {"amount": "decimal(38,38)"}, True, False, True),
        (["dt"], {"dt": "string"}, False, False, False),  # any text: checked per row
        (["dt"], {"dt": "binary"}, False, False, False),
        (["dt"], {}, False, False, False),  # not a column of the batch
        ([".hoodie"], {".hoodie": "int"}, True, False, False),  # `.hoodie=1` at the top
        (["../x"], {"../x": "int"}, True, False, False),  # a `..` segment
        (["a\nb"], {"a\nb": "int"}, True, False, False),
        (["n" * 180], {"n" * 180: "int"}, True, False, True),
        (["n" * 180], {"n" * 180: "int"}, True, True, False),  # escaped values may be longer
        (["n" * 200], {"n" * 200: "int"}, True, False, False),
        (["ms"], {"ms": "bigint"}, False, False, True),
    ],
)
def test_partition_paths_safe_by_type(fields, types, hive, encode, safe):
    from pyspark.sql import types as T

    named = {
        "date": T.DateType(), "int": T.IntegerType(), "smallint": T.ShortType(),
        "timestamp": T.TimestampType(), "decimal(38,38)": T.DecimalType(38, 38),
        "string": T.StringType(), "binary": T.BinaryType(), "bigint": T.LongType(),
    }  # fmt: skip
    schema = _schema(**{n: named[t] for n, t in types.items()})
    assert _keygen(fields, hive, encode).partition_paths_safe(schema) is safe


def test_partition_paths_of_dates_made_by_a_pattern_are_checked_per_row():
    """A TIMESTAMP part's text is the config's date pattern (it may hold '/' or '..'): never
    safe by its type, whatever the column's."""
    from pyspark.sql import types as T

    schema = _schema(ms=T.LongType())
    assert not _keygen(["ms"], kind="TIMESTAMP").partition_paths_safe(schema)
    custom = _keygen(["ms"], kind="CUSTOM", partition_types=("TIMESTAMP",))
    assert not custom.partition_paths_safe(schema)
    assert _keygen(["ms"], kind="CUSTOM", partition_types=("SIMPLE",)).partition_paths_safe(schema)

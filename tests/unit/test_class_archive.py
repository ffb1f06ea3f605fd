"""The driver JVM's class archive (dbt/adapters/hoodie/class_archive.py): which options a
session's JVM gets, how a written archive is taken, what is tidied. The JVM side (a session
writing the archive as it exits, the next one mapping it) is
tests/functional/test_jvm_class_archive.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dbt.adapters.hoodie import class_archive
from dbt.adapters.hoodie.class_archive import (
    DYNAMIC_ARCHIVE_MAGIC,
    archive_options,
    choose,
    setup_key,
)

KEY = "0123456789abcdef0123"


def written(path: Path, whole: bool = True, age_hours: float = 0.0) -> Path:
    """A file as a JVM leaves it: the magic number first once its header is written (last)."""
    path.write_bytes((DYNAMIC_ARCHIVE_MAGIC if whole else bytes(4)) + bytes(60))
    if age_hours:
        then = time.time() - age_hours * 3600
        os.utime(path, (then, then))
    return path


def test_a_first_run_writes_an_archive_of_its_own_as_its_jvm_exits(tmp_path):
    first, second = choose(KEY, tmp_path), choose(KEY, tmp_path)
    for choice in (first, second):
        archive, quiet = choice.options.split()
        assert archive.startswith(f"-XX:ArchiveClassesAtExit={tmp_path}/{KEY}.")
        assert archive.endswith(".partial.jsa")
        assert quiet == class_archive.QUIET  # the JVM's ~550 warnings as it writes it
    assert first.options != second.options  # two runs at once never write one file


def test_only_an_interactive_run_writes_one_and_every_run_maps_one(tmp_path, monkeypatch):
    """Writing takes the JVM ~16 s after dbt, which a pipe reading dbt's output waits for: a
    run on a terminal writes the archive, a CI run (or one whose output is a pipe) does not,
    and both map one that exists."""
    assert choose(KEY, tmp_path, write=False) is None
    assert list(tmp_path.iterdir()) == []
    written(tmp_path / f"{KEY}.aaa.partial.jsa")
    assert choose(KEY, tmp_path, write=False).options.startswith("-XX:SharedArchiveFile=")
    monkeypatch.setattr(class_archive.sys.stdout, "isatty", lambda: True)
    assert class_archive.interactive({}) and class_archive.interactive({"CI": "false"})
    assert not class_archive.interactive({"CI": "true"})
    monkeypatch.setattr(class_archive.sys.stdout, "isatty", lambda: False)
    assert not class_archive.interactive({})
    monkeypatch.setattr(class_archive.sys, "stdout", None)  # (pythonw, a detached process)
    assert not class_archive.interactive({})


def test_a_whole_archive_is_taken_and_then_mapped(tmp_path):
    written(tmp_path / f"{KEY}.aaa.partial.jsa")
    choice = choose(KEY, tmp_path)
    assert choice.options.split()[0] == f"-XX:SharedArchiveFile={tmp_path / (KEY + '.jsa')}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{KEY}.jsa"]
    assert choose(KEY, tmp_path) == choice


def test_an_archive_whose_jvm_was_killed_while_writing_is_never_mapped(tmp_path):
    torn = written(tmp_path / f"{KEY}.aaa.partial.jsa", whole=False)
    choice = choose(KEY, tmp_path)
    assert "ArchiveClassesAtExit" in choice.options
    assert torn.exists()  # maybe still being written: left alone for a while
    written(torn, whole=False, age_hours=class_archive.PARTIAL_HOURS + 1)
    choose(KEY, tmp_path)
    assert not torn.exists()


def test_partials_of_a_setup_with_an_archive_and_stale_archives_are_deleted(tmp_path):
    written(tmp_path / f"{KEY}.jsa")
    late = written(tmp_path / f"{KEY}.bbb.partial.jsa")  # a second run's, written after
    other = "f" * 20
    fresh = written(tmp_path / f"{other}.jsa", age_hours=24)
    stale = written(tmp_path / f"{'e' * 20}.jsa", age_hours=24 * (class_archive.STALE_DAYS + 1))
    unrelated = tmp_path / "notes.txt"
    unrelated.write_text("kept")
    choose(KEY, tmp_path)
    assert not late.exists() and not stale.exists()
    assert fresh.exists() and unrelated.exists()


def test_the_users_own_class_data_sharing_options_leave_ours_out(tmp_path, monkeypatch):
    monkeypatch.setenv("DBT_HOODIE_CACHE_DIR", str(tmp_path))
    clean = {k: v for k, v in os.environ.items()
             if k not in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")}  # fmt: skip
    assert archive_options({}, clean, write=True) is not None
    for option in ("-XX:SharedArchiveFile=/x.jsa", "-Xshare:off", "-XX:ArchiveClassesAtExit=a"):
        assert archive_options({}, {**clean, "JAVA_TOOL_OPTIONS": option}, write=True) is None
        assert archive_options({}, {**clean, "JDK_JAVA_OPTIONS": option}, write=True) is None
        given = {"spark.driver.extraJavaOptions": f"-Dx=1 {option}"}
        assert archive_options(given, clean, write=True) is None


def test_another_java_pyspark_or_class_path_is_another_archive(tmp_path):
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    java = java_home / "bin" / "java"
    java.write_text("#!/bin/sh\n")
    environ = {"JAVA_HOME": str(java_home), "PATH": ""}
    key = setup_key({}, environ)
    assert key is not None and key == setup_key({"spark.app.name": "x"}, environ)
    assert setup_key({"spark.jars": "/extra.jar"}, environ) != key
    assert setup_key({}, {**environ, "SPARK_HOME": str(tmp_path)}) != key
    java.write_text("#!/bin/sh\n# another build\n")
    assert setup_key({}, environ) != key
    assert setup_key({}, {"JAVA_HOME": str(tmp_path / "none"), "PATH": ""}) is None


@pytest.mark.parametrize("variable", ["DBT_HOODIE_CACHE_DIR", "XDG_CACHE_HOME"])
def test_the_cache_folder_follows_the_environment(tmp_path, monkeypatch, variable):
    monkeypatch.delenv("DBT_HOODIE_CACHE_DIR", raising=False)
    monkeypatch.setenv(variable, str(tmp_path))
    assert str(class_archive.cache_dir()).startswith(str(tmp_path))

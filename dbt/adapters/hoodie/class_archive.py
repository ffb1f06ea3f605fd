"""The driver JVM's class data sharing archive: a dbt run's start-up without loading Spark.

A local session's JVM spends most of its start loading and verifying the same ~20,000
classes of Spark's jars, and the Hive metastore's opening loads thousands more. Java 13+ can
write the classes a JVM loaded into an archive as it exits (`-XX:ArchiveClassesAtExit`) and
map that archive at the next start (`-XX:SharedArchiveFile`). Measured here (a one-model
project, quiet 2-core machine, runs with and without it in turn): Spark's start 6.2-6.3 ->
3.0-3.7 s, the metastore's opening 5.6-6.6 -> 3.2-3.4 s, the first model at 16.3-18.5 ->
11.6-13.1 s (docs/progress.md).

How the archive is made and found, per user, in `~/.cache/dbt-hoodie/jvm` (or
`$XDG_CACHE_HOME/dbt-hoodie/jvm`; `DBT_HOODIE_CACHE_DIR` to move it):

- one archive per *setup*: the Java binary, PySpark's install and the session's class path
  settings (`spark.jars`, `spark.jars.packages`, `spark.driver.extraClassPath`) hashed into
  its name. The JVM checks the archive itself (its Java build, its class path) and starts
  without it where they differ, so a wrong archive costs time, never correctness;
- a run that finds none has its JVM write one as it exits, under a name of its own
  (`<setup>.<unique>.partial.jsa`): two runs at once never write one file. Only an
  interactive run writes one (dbt's output on a terminal, `CI` unset): the JVM takes ~16 s
  after dbt has finished to write ~200 MB, and whatever reads dbt's output through a pipe
  waits for it too; in a fresh CI container every run would pay that and none would gain;
- a later run takes a written one for the setup's (`<setup>.jsa`, an atomic rename) when its
  header is whole. The JVM writes the header last (after every region, with their CRCs), so a
  JVM killed while writing leaves a file without the magic number, which is deleted;
- archives of other setups unused for `STALE_DAYS` are deleted (each is ~200 MB).

Off where the user's own JVM options already name class data sharing (the profile's
`spark.driver.extraJavaOptions`, `JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS`: the test suite
shares its own archive that way), and with the profile's `jvm_class_archive: false`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# The first 4 bytes of a whole dynamic archive (CDS_DYNAMIC_ARCHIVE_MAGIC, little-endian as the
# JVM writes it on x86 and arm64).
DYNAMIC_ARCHIVE_MAGIC = (0xF00BABA8).to_bytes(4, "little")
# Options that say the user runs class data sharing their own way: ours then stay out.
CDS_OPTIONS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare",
               "-XX:+AutoCreateSharedArchive")  # fmt: skip
# The class path settings of a session: another value is another archive.
CLASS_PATH_SETTINGS = ("spark.jars", "spark.jars.packages", "spark.driver.extraClassPath")
# Partial archives older than this are a JVM's that was killed or failed: deleted.
PARTIAL_HOURS = 6
STALE_DAYS = 30
SUFFIX, PARTIAL = ".jsa", ".partial.jsa"
# The JVM's class data sharing messages off: writing the archive warns of every class it
# leaves out (~550 lines on stdout, after dbt has finished), and an archive another build made
# is refused with a warning, where starting without it is all that happens.
QUIET = "-Xlog:cds*=off"


@dataclass(frozen=True)
class ArchiveChoice:
    """What the driver JVM is told: the options, and what they do (for the debug log)."""

    options: str
    action: str


def cache_dir() -> Path:
    explicit = os.environ.get("DBT_HOODIE_CACHE_DIR")
    if explicit:
        return Path(explicit) / "jvm"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dbt-hoodie" / "jvm"


def names_cds(options: str | None) -> bool:
    return any(option in (options or "") for option in CDS_OPTIONS)


def setup_key(conf: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> str | None:
    """The hash naming the archive of this Java, PySpark and class path; None when no Java
    binary is found (PySpark's launch then fails and says so)."""
    java = _java(environ)
    if java is None:
        return None
    import pyspark

    spark_home = environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    java_stat = os.stat(java)
    parts = [os.path.realpath(java), str(java_stat.st_size), str(int(java_stat.st_mtime)),
             pyspark.__version__, os.path.realpath(spark_home)]  # fmt: skip
    parts += [f"{key}={conf.get(key, '')}" for key in CLASS_PATH_SETTINGS]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def _java(environ: Mapping[str, str]) -> str | None:
    """The Java binary spark-submit runs: `$JAVA_HOME/bin/java`, else `java` on the PATH."""
    home = environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.path.isfile(candidate) else None
    return shutil.which("java", path=environ.get("PATH"))


def interactive(environ: Mapping[str, str] = os.environ) -> bool:
    """Does someone wait at a terminal for this run (so a later run of theirs gains from the
    archive this one writes)? dbt's output on a terminal, and no `CI` set."""
    ci = environ.get("CI", "").strip().lower()
    try:  # (stdout may be None, closed, or a wrapper without isatty)
        terminal = bool(sys.stdout is not None and sys.stdout.isatty())
    except (AttributeError, ValueError, OSError):
        terminal = False
    return terminal and ci in ("", "0", "false", "no")


def choose(
    key: str, folder: Path | None = None, now: float | None = None, write: bool = True
) -> ArchiveChoice | None:
    """Use the setup's archive, after taking a whole one a JVM wrote since; or, with `write`,
    have this JVM write one (None: neither). Tidies the folder on the way (`_tidy`)."""
    folder = folder or cache_dir()
    now = time.time() if now is None else now
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{key}{SUFFIX}"
    if not final.exists():
        for partial in sorted(folder.glob(f"{key}.*{PARTIAL}")):
            if _whole(partial):
                os.replace(partial, final)
                break
    _tidy(folder, final, now)
    if final.exists():
        os.utime(final)  # (in use: not stale)
        return ArchiveChoice(f"-XX:SharedArchiveFile={final} {QUIET}", f"mapping {final}")
    if not write:
        return None
    partial = folder / f"{key}.{uuid.uuid4().hex[:12]}{PARTIAL}"
    return ArchiveChoice(f"-XX:ArchiveClassesAtExit={partial} {QUIET}",
                         f"writing {partial} as the JVM exits (the next runs map it)")  # fmt: skip


def _whole(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(4) == DYNAMIC_ARCHIVE_MAGIC
    except OSError:
        return False


def _tidy(folder: Path, kept: Path, now: float) -> None:
    """Delete partial archives older than PARTIAL_HOURS that are not whole (a JVM killed while
    writing) or whose setup has one already, and other setups' archives unused for
    STALE_DAYS. Best effort: another run may delete the same file first."""
    for path in folder.glob(f"*{SUFFIX}"):
        if path == kept:
            continue
        try:
            age = now - path.stat().st_mtime
            if path.name.endswith(PARTIAL):
                setup = path.name.split(".", 1)[0]
                if (folder / f"{setup}{SUFFIX}").exists() or (
                    age > PARTIAL_HOURS * 3600 and not _whole(path)
                ):
                    path.unlink()
            elif age > STALE_DAYS * 86400:
                path.unlink()
        except OSError:
            continue


def archive_options(
    conf: Mapping[str, str],
    environ: Mapping[str, str] = os.environ,
    write: bool | None = None,
) -> ArchiveChoice | None:
    """The archive's options for a local session's driver JVM with settings `conf`, or None
    when the user's options already name class data sharing, no Java is found, or there is
    no archive yet and this run does not write one (`write`; default: `interactive`)."""
    given = conf.get("spark.driver.extraJavaOptions")
    if any(names_cds(v) for v in (given, environ.get("JAVA_TOOL_OPTIONS"),
                                    environ.get("JDK_JAVA_OPTIONS"))):  # fmt: skip
        return None
    key = setup_key(conf, environ)
    if key is None:
        return None
    return choose(key, write=interactive(environ) if write is None else write)

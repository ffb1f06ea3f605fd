"""MkDocs hook: the benchmark results `make bench` writes (`bench/results/*.md`, `*.png`) become
pages and images of the site under `performance/results/`, so the performance pages show the
latest run without a copy of them in `docs/` that could fall behind."""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
SITE_FOLDER = "performance/results"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path in sorted(RESULTS.glob("*")):
        if path.suffix in (".md", ".png"):
            uri = f"{SITE_FOLDER}/{path.name}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files

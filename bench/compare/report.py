"""The run's outputs: JSON (everything), markdown (the tables to read) and a PNG plot.

The markdown carries the machine (cores, memory, load) in its header because the numbers
mean little without it, and every table lists the systems in the same order. A system that
did not finish shows "DNF" from the step where it stopped; across sizes, "-" where a size's
run left the system out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DNF_MARK = "DNF"
NOT_RUN_MARK = "-"  # across sizes: the system was not among that size's run's systems
OUR_SYSTEMS = ("cow_upsert", "mor_upsert", "cow_upsert_bucket", "mor_upsert_bucket")


def write_all(results: dict, out_dir: Path, stem: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.json", out_dir / f"{stem}.md", out_dir / f"{stem}.png"]
    results = {**results, "outputs": {"markdown": paths[1].name, "plot": paths[2].name}}
    _atomic_write(paths[0], json.dumps(results, indent=2) + "\n")
    _atomic_write(paths[1], markdown(results, plot_name=paths[2].name))
    plot(results, paths[2])
    return paths


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# -- formatting -----------------------------------------------------------------------------------
def _mib(value: int | None) -> str:
    return "" if value is None else f"{value / 2**20:,.0f}"


def _mb(value: int | None) -> str:
    return "" if value is None else f"{value / 1e6:,.1f}"


def _cell(record: dict, value, fmt: str = "{:.2f}") -> str:
    if value is None:
        return {"ok": "", "failed": "failed"}.get(record["status"], DNF_MARK)
    return fmt.format(value)


def _spark_counts(measured: dict) -> str:
    if "spark_jobs" not in measured:
        return ""
    return f"{measured['spark_jobs']} / {measured['spark_stages']} / {measured['spark_tasks']}"


def _step_names(results: dict) -> list[str]:
    return [s["name"] for s in results["workload"]["steps"]]


def markdown(results: dict, plot_name: str | None = None) -> str:
    records = [results["results"][name] for name in results["systems"]]
    workload = results["workload"]
    steps = {s["name"]: s for s in workload["steps"]}
    m = results["machine"]
    names = [r["system"] for r in records]
    lines = [
        f"# FACT upsert comparison: {results['rows']:,} rows",
        "",
        f"Run {results['date']}, commit `{(results.get('commit') or 'unknown')[:10]}`, "
        f"{results['total_seconds']:,.0f} s in all.",
        "",
        f"Machine: **{m['cores']} cores, {m['memory_gib']} GiB RAM**, {m['platform']}, "
        f"Python {m['python']}; load average (1/5/15 min) {m['load_average_before']} before, "
        f"{m['load_average_after']} after.",
        "",
        f"Workload: {workload['rows']:,} rows x {workload['columns']} columns over "
        f"{workload['partitions']} date partitions, {workload['batches']} upsert batches of "
        f"~{workload['rows'] // 10:,} rows ({_batch_shape(workload)}), then "
        f"{workload['rows'] // 100:,} "
        f"deletes. Seed {workload['seed']}. Expected final table: {workload['expected_rows']:,} "
        f"rows, checksum `{workload['expected_checksum']}`. Each step may take at most "
        f"{results['time_cap_seconds']:.0f} s."
        + (
            " **The Spark systems shared one JVM (`--shared-spark`): their memory numbers "
            "are not their own.**"
            if results.get("shared_spark")
            else ""
        ),
        "",
        "Systems: "
        + "; ".join(f"`{r['system']}`: {r.get('description', '')}" for r in records)
        + ".",
        "",
        *_apache_hudi_lines(records),
        "## Seconds per write",
        "",
        "| step | rows | updates | inserts | partitions | "
        + " | ".join(f"`{n}`" for n in names)
        + " | pyarrow bound (COW's files) |",
        "|---|---:|---:|---:|---:|" + "---:|" * len(names) + "---:|",
    ]
    cow = results["results"].get("cow_upsert")
    totals = {n: 0.0 for n in names}
    for name, step in steps.items():
        cells = []
        for r in records:
            seconds = r["steps"].get(name, {}).get("seconds")
            cells.append(_cell(r, seconds))
            if seconds is not None and totals[r["system"]] is not None:
                totals[r["system"]] += seconds
            else:
                totals[r["system"]] = None
        bound = ""
        if cow and name in cow["steps"]:
            pb = cow["steps"][name]["details"].get("physical_bound")
            if pb and pb["files"]:
                bound = f"{pb['seconds']:.2f} ({pb['files']} files)"
        lines.append(
            f"| {name} | {step['rows']:,} | {step['updates']:,} | {step['inserts']:,} | "
            f"{step['partitions_touched']} | " + " | ".join(cells) + f" | {bound} |"
        )
    lines.append(
        "| **all writes** | | | | | "
        + " | ".join(f"**{totals[n]:.1f}**" if totals[n] is not None else DNF_MARK for n in names)
        + " | |"
    )
    lines += [
        "",
        "The pyarrow bound: pyarrow alone reading and rewriting the base files that "
        "`cow_upsert`'s commit replaced (one thread per core, no merge, no index, no Spark). "
        "Read and write steps are timed around the system's call only; starting a Spark "
        "session is not included.",
        "",
        *_reads_table(results, records),
        *_ratio_table(results),
        "## Size and correctness",
        "",
        "| system | status | rows | checksum | correct | point read, filter | "
        "table size (MB) | data files | peak RSS, writes (MiB) |",
        "|---|---|---:|---|---|---|---:|---:|---:|",
    ]
    for r in records:
        check = r.get("check") or {}
        size = check.get("table_size") or {}
        peaks = [s["peak_rss_bytes"] for s in r["steps"].values()]
        status = r["status"] if r["status"] == "ok" else f"{r['status']} ({r.get('stopped_at')})"
        lines.append(
            f"| `{r['system']}` | {status} | "
            f"{_cell(r, check.get('rows'), '{:,}')} | "
            f"{'`' + check['checksum'] + '`' if check else ''} | "
            f"{'yes' if r.get('correct') else ('no' if r['status'] != 'did not finish' else '')}"
            f" | {_reads_match(r, workload)} | {_mb(size.get('bytes'))} | "
            f"{size.get('data_files', '')} | "
            f"{_mib(max(peaks)) if peaks else ''} |"
        )
    lines += [
        "",
        "Table size counts every file under the table folder, old file versions and metadata "
        "included (no system cleaned or vacuumed beyond its defaults); for merge-on-read after "
        "the compaction.",
        "",
        *_same_files_lines(records),
    ]
    if results["problems"]:
        lines += ["**Verification FAILED:**", ""] + [f"- {p}" for p in results["problems"]]
    else:
        lines.append(
            "Verification: every finished system holds exactly the expected rows (row count, "
            "distinct keys, checksum over key, date, ts, amount, status, updated_at, "
            "is_returned, comment; for merge-on-read after the compaction), and its "
            "one-partition query, point read and filter return exactly the expected rows "
            "(counts and checksums)."
        )
    lines += _stage_tables(records)
    lines += ["", "## Per system", ""]
    for r in records:
        lines += [
            f"### `{r['system']}`" + (f" ({r['status']})" if r["status"] != "ok" else ""),
            "",
            "| step | seconds | rows/s | bytes read (MB) | bytes written (MB) | files written "
            "| data files | Spark jobs / stages / tasks | peak RSS (MiB) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, s in r["steps"].items():
            lines.append(
                f"| {name} | {s['seconds']:.2f} | {s['rows_per_second']:,.0f} | "
                f"{_mb(s.get('bytes_read'))} | {_mb(s['bytes_written'])} | "
                f"{s['files_written']} | {s['data_files_written']} | {_spark_counts(s)} "
                f"| {_mib(s['peak_rss_bytes'])} |"
            )
        for read in READS:
            if r.get(read) and read != "compaction":
                s = r[read]
                lines.append(
                    f"| {READS[read]} (best) | {s['seconds']:.2f} | | "
                    f"{_mb(s.get('bytes_read'))} | | | | {_spark_counts(s)} "
                    f"| {_mib(s['peak_rss_bytes'])} |"
                )
        if r.get("compaction"):
            s = r["compaction"]
            lines.append(
                f"| compaction | {s['seconds']:.2f} | | {_mb(s.get('bytes_read'))} | "
                f"{_mb(s['bytes_written'])} | {s['files_written']} | {s['data_files_written']} "
                f"| {_spark_counts(s)} | {_mib(s['peak_rss_bytes'])} |"
            )
        if r["status"] != "ok":
            mark = "failed" if r["status"] == "failed" else DNF_MARK
            lines.append(f"| {r.get('stopped_at')} | {mark} | | | | | | | |")
            error = (r.get("error") or "").strip().splitlines()
            if error:
                lines += ["", f"Stopped: `{error[-1][:300]}`"]
        lines.append("")
    if plot_name:
        lines += [f"![seconds per write by system]({plot_name})", ""]
    return "\n".join(lines)


# The reads (and the compaction) after the writes: record key -> title
READS = {
    "scan": "snapshot scan",
    "scan_ro": "read-optimized scan",
    "scan_partition": "one partition",
    "point_read": "point read by key",
    "filter": "1% filter",
    "compaction": "compaction",
}
NOT_APPLICABLE = "n/a"


def _applies(record: dict, read: str) -> bool:
    """Whether a system has the read: the read-optimized query and the compaction are merge-on-
    read's (a system that stopped before saying, or an earlier run's record, counts as not)."""
    if read == "scan_ro":
        return bool(record.get("read_optimized"))
    if read == "compaction":
        return bool(record.get("compacts"))
    return True


def _read_cell(record: dict, read: str) -> str:
    if not _applies(record, read):
        return NOT_APPLICABLE
    return _cell(record, (record.get(read) or {}).get("seconds"))


def _reads_table(results: dict, records: list[dict]) -> list[str]:
    workload = results["workload"]
    names = [r["system"] for r in records]
    lines = [
        "## Reads and compaction",
        "",
        "| seconds | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for read, title in READS.items():
        if not any(r.get(read) for r in records) and read != "scan":
            continue
        lines.append(f"| {title} | " + " | ".join(_read_cell(r, read) for r in records) + " |")
    filter_rows = (workload.get("expected_filter") or {}).get("rows")
    filter_rows = "?" if filter_rows is None else f"{filter_rows:,}"
    lines += [
        "",
        f"After the writes; reads are the best of {results['scan_repeats']} runs and read every "
        "column (Spark systems into a `noop` sink, delta-rs and pyiceberg into an Arrow table). "
        f"One partition: `event_date = '{workload['query_date']}'`, the newest and most updated "
        f"day ({workload['expected_query_rows']:,} rows). "
        + (
            f"Point read: `id = {workload['point_key']}`, a key the 1% update changed. 1% "
            f"filter: `{workload['filter_column']} > {workload['filter_above']}` ({filter_rows} "
            "rows; `score` changes with every write of a row). "
            if workload.get("expected_point")
            else ""
        )
        + "The reads of merge-on-read tables see the log files their "
        "writes left (ours and Apache Hudi's datasource both compact inline after 5 delta "
        "commits by default; Apache Hudi 1.x's first load is a commit, not a delta commit); "
        "the compaction then compacts every file slice with log files (ours: `services.compact`"
        ", Apache Hudi: `CALL run_compaction(op => 'scheduleAndExecute')`), and the final "
        "table is checked after it. n/a: the system has no such step (copy-on-write tables, "
        "delta-rs, pyiceberg, plain parquet).",
        "",
    ]
    return lines


def _reads_match(record: dict, workload: dict) -> str:
    """Whether the point read and the filter returned the expected rows."""
    cells = []
    for key, expected in (("point_read", "expected_point"), ("filter", "expected_filter")):
        got = (record.get(key) or {}).get("result")
        want = workload.get(expected)
        if got is None or not want:
            cells.append("")
            continue
        same = (got["rows"], got["checksum"]) == (want["rows"], want["checksum"])
        cells.append("yes" if same else "NO")
    return ", ".join(cells) if any(cells) else ""


def _apache_hudi_lines(records: list[dict]) -> list[str]:
    """Which Apache Hudi ran, on which Spark, writing which table version."""
    hudi = [r for r in records if (r.get("versions") or {}).get("apache_hudi")]
    if not hudi:
        return []
    ours = next(
        (r["versions"].get("pyspark") for r in records if r["system"] in OUR_SYSTEMS
         and r.get("versions")),
        None,
    )  # fmt: skip
    cells = []
    for r in hudi:
        load = r["steps"].get("load", {}).get("details", {})
        cells.append(
            f"`{r['system']}`: Apache Hudi {r['versions']['apache_hudi']} on Spark "
            f"{r['versions'].get('spark')}, table version {load.get('table_version', '?')}"
        )
    our_versions = sorted(
        {
            str(r["steps"]["load"]["details"].get("table_version"))
            for r in records
            if r["system"] in OUR_SYSTEMS and r["steps"].get("load", {}).get("details")
        }
    )
    return [
        "**Apache Hudi** runs on its own Spark, **3.5** (its bundles exist for no newer Spark), "
        f"ours on Spark {ours or '4.x'}; each with the same master, driver memory, shuffle "
        "partitions and session settings, plus what Apache Hudi requires (Kryo with its "
        "registrator, its session extension and catalog). " + "; ".join(cells) + ". "
        "Apache Hudi's default index on Spark is SIMPLE, the index our core uses: its default "
        "runs are also the runs with our index (the `_ours` variants take the rest of our "
        "settings too)."
        + (f" Our core's tables: version {', '.join(our_versions)}." if our_versions else ""),
        "",
    ]


def _same_files_lines(records: list[dict]) -> list[str]:
    """Our snapshot scan against Spark's parquet scan of the same latest base files."""
    rows = []
    for r in records:
        references = (r.get("scan") or {}).get("reference") or {}
        reference = references.get("parquet_same_files")
        if reference:
            ours = r["scan"]["seconds"]
            source = references.get("data_source")
            source_cells = "| "
            if source:
                ratio = source["seconds"] / max(reference["seconds"], 1e-9)
                source_cells = f"{source['seconds']:.2f} | {ratio:.2f}x"
            rows.append(
                f"| `{r['system']}` | {ours:.2f} | {reference['seconds']:.2f} | "
                f"{ours / max(reference['seconds'], 1e-9):.2f}x | {source_cells} |"
            )
    if not rows:
        return []
    return [
        "Our full scan (`HoodieTable.read`: Spark's parquet scan of the planned base files "
        "where nothing is merged, the `hoodie` data source otherwise) against "
        "`spark.read.parquet` of the same latest base files, in the same worker (issue 17's "
        "read target: at most 1.2x); beside them the `hoodie` data source, which catalog "
        "tables and SQL (dbt's models) read through. For merge-on-read the parquet scan reads "
        "the base files alone, without the log files our snapshot merges.",
        "",
        "| system | hoodie snapshot (s) | parquet, same files (s) | ratio | data source (s) "
        "| ratio |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]


def _kind(step: dict) -> str:
    """A step's kind for the ratios: the 1% update is an upsert, but its own kind."""
    return "update_1pct" if step["name"] == "update_1pct" else step["kind"]


def ratios(results: dict) -> dict[str, dict[str, float | None]]:
    """Our systems' write seconds over the references' (plain Spark, delta-rs, pyarrow bound),
    per kind of step: load, upsert (median of the batches), delete; and the scans."""
    import statistics

    res = results["results"]

    def seconds(system: str, kinds: tuple[str, ...]) -> float | None:
        r = res.get(system)
        if not r or r["status"] != "ok":
            return None
        values = [
            r["steps"][s["name"]]["seconds"]
            for s in results["workload"]["steps"]
            if _kind(s) in kinds and s["name"] in r["steps"]
        ]
        return statistics.median(values) if values else None

    def bound(kinds: tuple[str, ...]) -> float | None:
        cow = res.get("cow_upsert")
        if not cow:
            return None
        values = []
        for s in results["workload"]["steps"]:
            pb = cow["steps"].get(s["name"], {}).get("details", {}).get("physical_bound")
            if _kind(s) in kinds and pb and pb["files"]:
                values.append(pb["seconds"])
        return statistics.median(values) if values else None

    out: dict[str, dict[str, float | None]] = {}
    kinds = {
        "load": ("create",),
        "upsert": ("upsert",),
        "update_1pct": ("update_1pct",),
        "delete": ("delete",),
    }

    def compacted(system: str) -> bool:
        details = ((res.get(system) or {}).get("compaction") or {}).get("details") or {}
        return bool(details.get("compaction_instants"))

    def read_seconds(system: str, read: str) -> float | None:
        r = res.get(system)
        if not r or r["status"] != "ok":
            return None
        return (r.get(read) or {}).get("seconds")

    for ours in OUR_SYSTEMS:
        if ours not in res:
            continue
        row: dict[str, float | None] = {}
        kind_of_table = "cow" if ours.startswith("cow") else "mor"
        apache = {ref: f"{ref.replace('apache_hudi', 'apache_hudi_' + kind_of_table)}"
                  for ref in APACHE_HUDI_REFERENCES}  # fmt: skip
        for kind, step_kinds in kinds.items():
            mine = seconds(ours, step_kinds)
            references = [
                ("spark_parquet", seconds("spark_parquet", step_kinds)),
                ("deltalake", seconds("deltalake", step_kinds)),
                *((ref, seconds(system, step_kinds)) for ref, system in apache.items()),
            ]
            if ours.startswith("cow"):  # the bound is of copy-on-write's rewritten files
                references.append(("pyarrow_bound", bound(step_kinds)))
            else:  # merge-on-read against its copy-on-write twin
                references.append(("cow", seconds(ours.replace("mor", "cow"), step_kinds)))
            for ref, ref_seconds in references:
                row[f"{kind}/{ref}"] = (
                    round(mine / ref_seconds, 2) if mine and ref_seconds else None
                )
        scan = res[ours].get("scan") or {}
        same = (scan.get("reference") or {}).get("parquet_same_files")
        row["scan/parquet_same_files"] = (
            round(scan["seconds"] / same["seconds"], 2) if same and scan.get("seconds") else None
        )
        source = (scan.get("reference") or {}).get("data_source")
        row["scan_data_source/parquet_same_files"] = (
            round(source["seconds"] / same["seconds"], 2) if same and source else None
        )
        spark_scan = (res.get("spark_parquet") or {}).get("scan") or {}
        row["scan/spark_parquet"] = (
            round(scan["seconds"] / spark_scan["seconds"], 2)
            if scan.get("seconds") and spark_scan.get("seconds")
            else None
        )
        ro = read_seconds(ours, "scan_ro")
        row["scan/scan_ro"] = round(scan["seconds"] / ro, 2) if ro and scan.get("seconds") else None
        for read in READS:
            mine = read_seconds(ours, read)
            for ref, system in apache.items():
                theirs = read_seconds(system, read)
                if read == "compaction" and not (compacted(ours) and compacted(system)):
                    theirs = None  # one side found nothing to compact: no comparison
                row[f"{read}/{ref}"] = round(mine / theirs, 2) if mine and theirs else None
        out[ours] = row
    return out


RATIO_TITLES = {
    "load/spark_parquet": "load / plain Spark",
    "upsert/deltalake": "10% upsert / delta-rs",
    "upsert/spark_parquet": "10% upsert / plain Spark",
    "upsert/pyarrow_bound": "10% upsert / pyarrow bound",
    "upsert/cow": "10% upsert / COW",
    "update_1pct/deltalake": "1% update / delta-rs",
    "update_1pct/cow": "1% update / COW",
    "delete/deltalake": "1% delete / delta-rs",
    "delete/cow": "1% delete / COW",
    "scan/parquet_same_files": "full scan / parquet of the same files",
    "scan_data_source/parquet_same_files": "full scan, data source / parquet of the same files",
    "scan/spark_parquet": "full scan / plain Spark's table",
    "scan/scan_ro": "MOR snapshot scan (logs uncompacted) / read-optimized scan",
}
# Apache Hudi 1.2 of the same table type: with its defaults (`apache_hudi_cow`/`_mor`) and with
# our settings (`apache_hudi_cow_ours`/`_mor_ours`); the ratios' keys end in these
APACHE_HUDI_REFERENCES = {
    "apache_hudi": "Apache Hudi 1.2",
    "apache_hudi_ours": "Apache Hudi 1.2 with our settings",
}
STEP_TITLES = {
    "load": "load",
    "upsert": "10% upsert",
    "update_1pct": "1% update",
    "delete": "1% delete",
    "scan": "snapshot scan",
    "scan_ro": "read-optimized scan",
    "scan_partition": "one partition",
    "point_read": "point read",
    "filter": "1% filter",
    "compaction": "compaction",
}
for _ref, _title in APACHE_HUDI_REFERENCES.items():
    for _step, _step_title in STEP_TITLES.items():
        RATIO_TITLES[f"{_step}/{_ref}"] = f"{_step_title} / {_title}"


def _ratio_table(results: dict) -> list[str]:
    table = ratios(results)
    if not table:
        return []
    keys = [k for k in RATIO_TITLES if any(row.get(k) is not None for row in table.values())]
    if not keys:
        return []
    lines = [
        "## Ratios",
        "",
        "Our time over the reference's, from this run (upserts: the median of the batches).",
        "",
        "| | " + " | ".join(f"`{name}`" for name in table) + " |",
        "|---|" + "---:|" * len(table),
    ]
    for key in keys:
        cells = ["" if row.get(key) is None else f"{row[key]:.2f}x" for row in table.values()]
        lines.append(f"| {RATIO_TITLES[key]} | " + " | ".join(cells) + " |")
    lines.append("")
    for name, row in table.items():
        for ref, title in APACHE_HUDI_REFERENCES.items():
            compared = {k: v for k, v in row.items() if k.endswith("/" + ref) and v is not None}
            if not compared:
                continue
            lost = [f"{STEP_TITLES[k.split('/')[0]]} ({v:.2f}x)" for k, v in compared.items()
                    if v > 1.0]  # fmt: skip
            lines.append(
                f"`{name}` against {title} ({len(compared)} steps): "
                + (f"slower at {', '.join(lost)}." if lost else "faster at every step.")
            )
            lines.append("")
    return lines


def _stage_tables(records: list[dict]) -> list[str]:
    """Where our core's write time goes, from the write client's stage timers."""
    lines = []
    columns = [
        "check_keys_and_partitions",
        "tagging",
        "write_file_groups",
        "compact_inline",
        "clean",
        "archive",
        "driver_and_rest",
    ]
    titles = [
        "input + key check",
        "index tagging",
        "merge + write files",
        "inline compaction",
        "clean",
        "archive",
        "driver, rest",
    ]
    for r in records:
        rows = [(n, s["details"].get("stages_seconds")) for n, s in r["steps"].items()]
        rows = [(n, st) for n, st in rows if st]
        if not rows:
            continue
        if not lines:
            lines += [
                "",
                "## Where our core's time goes",
                "",
                "Seconds in the write client's steps (Spark is lazy: a step includes the jobs "
                "its first action triggers, e.g. reading the input happens in the first).",
                "",
            ]
        lines += [
            f"`{r['system']}`:",
            "",
            "| step | total | " + " | ".join(titles) + " |",
            "|---|---:|" + "---:|" * len(titles),
        ]
        for name, stages in rows:
            total = r["steps"][name]["seconds"]
            cells = [f"{stages.get(c, 0):.2f}" for c in columns]
            lines.append(f"| {name} | {total:.2f} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


# -- plot -----------------------------------------------------------------------------------------
def _bars(ax, results: dict, groups: list[str], value) -> None:
    """One bar per system in each group; `value(record, group)` is its seconds or NaN."""
    import numpy as np

    names = results["systems"]
    width = 0.8 / max(1, len(names))
    x = np.arange(len(groups))
    for i, name in enumerate(names):
        record = results["results"][name]
        values = [value(record, g) for g in groups]
        offset = x - 0.4 + width * (i + 0.5)
        bars = ax.bar(offset, values, width, label=name)
        ax.bar_label(bars, fmt="%.1f", fontsize=5, padding=1)
        if record["status"] != "ok":
            stopped = [j for j, v in enumerate(values) if np.isnan(v)]
            for j in stopped[:1]:
                ax.text(
                    offset[j],
                    0,
                    DNF_MARK,
                    ha="center",
                    va="bottom",
                    rotation=90,
                    fontsize=8,
                    color=bars.patches[0].get_facecolor(),
                )
    ax.set_xticks(x, groups)
    ax.set_ylabel("seconds (lower is better)")
    ax.grid(axis="y", alpha=0.3)


def plot(results: dict, path: Path) -> None:
    """Grouped bars, one per system: seconds per write step (the pyarrow bound as marks), and
    below, seconds per read and of the compaction (none where a system has no such step)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    steps = _step_names(results)
    reads = [r for r in READS if any(rec.get(r) for rec in results["results"].values())]
    names = results["systems"]
    wide = min(20, max(8, 1.6 * max(len(steps), len(reads)) * max(1, len(names) / 5)))
    fig, axes = plt.subplots(2 if reads else 1, 1, figsize=(wide, 10 if reads else 5),
                             squeeze=False)  # fmt: skip
    ax = axes[0][0]
    _bars(ax, results, steps,
          lambda r, s: r["steps"].get(s, {}).get("seconds", np.nan))  # fmt: skip
    cow = results["results"].get("cow_upsert")
    if cow:
        bounds = []
        for s in steps:
            pb = cow["steps"].get(s, {}).get("details", {}).get("physical_bound")
            bounds.append(pb["seconds"] if pb and pb["files"] else np.nan)
        if not np.all(np.isnan(bounds)):
            ax.scatter(
                np.arange(len(steps)),
                bounds,
                marker="_",
                s=600,
                color="black",
                zorder=3,
                label="pyarrow bound (COW's rewritten files)",
            )
    m = results["machine"]
    ax.set_title(
        f"FACT workload, {results['rows']:,} rows: seconds per write "
        f"({m['cores']} cores, {m['memory_gib']} GiB)"
    )
    ax.legend(fontsize=7, ncol=2)
    if reads:
        ax = axes[1][0]
        _bars(ax, results, [READS[r] for r in reads],
              lambda rec, title: _seconds_of(rec, _read_key(title)))  # fmt: skip
        ax.set_title("reads (best of the runs; merge-on-read: logs uncompacted), compaction")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _seconds_of(record: dict, read: str) -> float:
    return (record.get(read) or {}).get("seconds", float("nan"))


def _read_key(title: str) -> str:
    return next(key for key, t in READS.items() if t == title)


# -- several sizes ----------------------------------------------------------------------------
# issue 17's targets that are ratios of this table: key -> (the line drawn, what the table says)
TARGETS = {
    "load/spark_parquet": (1.2, "1.2x"),
    "upsert/deltalake": (3.0, "COW: 3x at 1M, 1.5x at 10M"),
    "update_1pct/cow": (1 / 3, "MOR: 0.33x"),
    "update_1pct/deltalake": (2.0, "MOR: 2x"),
    "scan/parquet_same_files": (1.2, "1.2x"),
    # issue 44: every step faster than Apache Hudi 1.x; MOR's snapshot within 1.5x of its RO
    "scan/scan_ro": (1.5, "1.5x"),
    **{f"{step}/apache_hudi": (1.0, "< 1x") for step in STEP_TITLES},
}


def _target_applies(system: str, key: str) -> bool:
    """The upsert target is copy-on-write's, the 1% update's merge-on-read's; Apache Hudi's
    (faster at every step) every system's."""
    if key.endswith("/apache_hudi"):
        return True
    if key.startswith("upsert/"):
        return system.startswith("cow")
    if key.startswith("update_1pct/"):
        return system.startswith("mor")
    return True


def sizes_summary(runs: list[dict]) -> dict:
    """Per size: the ratios, every system's total write seconds and memory peaks."""
    out = []
    for results in runs:
        systems = {}
        for name, r in results["results"].items():
            steps = r["steps"].values()
            systems[name] = {
                "status": r["status"],
                # results from before the reads were recorded (no "read_optimized") have none
                "reads_seconds": {
                    read: (r.get(read) or {}).get("seconds")
                    if _applies(r, read)
                    else NOT_APPLICABLE
                    for read in READS
                }
                if "read_optimized" in r
                else None,
                "write_seconds": round(sum(s["seconds"] for s in steps), 2),
                "peak_rss_bytes": max((s["peak_rss_bytes"] for s in steps), default=None),
                "driver_peak_rss_bytes": max(
                    (s.get("driver_peak_rss_bytes", 0) for s in steps), default=None
                ),
            }
        out.append(
            {
                "rows": results["rows"],
                "commit": results.get("commit"),
                "date": results["date"],
                "total_seconds": results["total_seconds"],
                "verified": results["verified"],
                "machine": results["machine"],
                "ratios": ratios(results),
                "systems": systems,
            }
        )
    return {"benchmark": "compare_sizes", "sizes": out}


def write_sizes(runs: list[dict], out_dir: Path, stem: str) -> list[Path]:
    summary = sizes_summary(runs)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.json", out_dir / f"{stem}.md", out_dir / f"{stem}.png"]
    _atomic_write(paths[0], json.dumps(summary, indent=2) + "\n")
    _atomic_write(paths[1], sizes_markdown(summary, paths[2].name))
    plot_sizes(summary, paths[2])
    return paths


def _absent_or_dnf(record: dict) -> str:
    """A size's cell for a system that has no result there: not run, or did not finish."""
    return NOT_RUN_MARK if not record else DNF_MARK


def sizes_markdown(summary: dict, plot_name: str) -> str:
    sizes = summary["sizes"]
    labels = [f"{s['rows']:,}" for s in sizes]
    ours = list(sizes[0]["ratios"])
    m = sizes[0]["machine"]
    lines = [
        "# FACT upsert comparison across sizes",
        "",
        f"Machine: **{m['cores']} cores, {m['memory_gib']} GiB RAM**. Each size is its own run, "
        "with its own report (`compare_<N>.md`, the per-step tables):",
        "",
        "| rows | run | commit | minutes | load average before | verified |",
        "|---:|---|---|---:|---|---|",
        *(
            f"| {s['rows']:,} | {s['date']} | `{(s.get('commit') or 'unknown')[:10]}` | "
            f"{s['total_seconds'] / 60:.1f} | {s['machine'].get('load_average_before')} | "
            f"{'yes' if s['verified'] else 'NO'} |"
            for s in sizes
        ),
        "",
        "## Ratios (our time over the reference's; upserts: median of the batches)",
        "",
    ]
    for name in ours:
        lines += [
            f"`{name}`:",
            "",
            "| | " + " | ".join(labels) + " | target |",
            "|---|" + "---:|" * (len(labels) + 1),
        ]
        for key, title in RATIO_TITLES.items():
            values = [s["ratios"].get(name, {}).get(key) for s in sizes]
            if all(v is None for v in values):
                continue
            cells = ["" if v is None else f"{v:.2f}x" for v in values]
            note = TARGETS[key][1] if key in TARGETS and _target_applies(name, key) else ""
            lines.append(f"| {title} | " + " | ".join(cells) + f" | {note} |")
        lines.append("")
    systems = list(sizes[0]["systems"])
    lines += [
        "## All writes and memory",
        "",
        "Seconds of all writes (load, upserts, delete); peak RSS of the process tree (MiB); "
        "peak RSS of the Python driver alone (MiB), where a write that collected keys or "
        "records would grow with the table.",
        "",
        "| system | "
        + " | ".join(f"{label} s" for label in labels)
        + " | "
        + " | ".join(f"{label} peak" for label in labels)
        + " | "
        + " | ".join(f"{label} driver" for label in labels)
        + " |",
        "|---|" + "---:|" * (3 * len(labels)),
    ]
    for name in systems:
        rows = [s["systems"].get(name, {}) for s in sizes]
        lines.append(
            f"| `{name}` | "
            + " | ".join(
                f"{r['write_seconds']:.1f}" if r.get("status") == "ok" else _absent_or_dnf(r)
                for r in rows
            )
            + " | "
            + " | ".join(_mib(r.get("peak_rss_bytes")) for r in rows)
            + " | "
            + " | ".join(_mib(r.get("driver_peak_rss_bytes")) for r in rows)
            + " |"
        )
    lines += _sizes_reads(sizes, systems, labels)
    lines += ["", f"![ratios by size]({plot_name})", ""]
    return "\n".join(lines)


def _sizes_reads(sizes: list[dict], systems: list[str], labels: list[str]) -> list[str]:
    """Seconds of each read and the compaction, one table per size."""
    if not any(r.get("reads_seconds") for size in sizes for r in size["systems"].values()):
        return []  # results from before the reads were recorded
    lines = [
        "",
        "## Reads and compaction",
        "",
        "Seconds (best of the runs; `n/a`: the system has no such step; `-`: not in that "
        "size's run; merge-on-read reads see their log files uncompacted).",
    ]
    for label, size in zip(labels, sizes, strict=True):
        records = [size["systems"].get(name, {}) for name in systems]
        if not any(r.get("reads_seconds") for r in records):
            continue  # results from before the reads were recorded
        lines += [
            "",
            f"{label} rows:",
            "",
            "| | " + " | ".join(f"`{name}`" for name in systems) + " |",
            "|---|" + "---:|" * len(systems),
        ]
        for read, title in READS.items():
            cells = []
            for r in records:
                value = (r.get("reads_seconds") or {}).get(read)
                if value == NOT_APPLICABLE:
                    cells.append(NOT_APPLICABLE)
                elif value is None:
                    cells.append("" if r.get("status") == "ok" else _absent_or_dnf(r))
                else:
                    cells.append(f"{value:.2f}")
            lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return lines


def plot_sizes(summary: dict, path: Path) -> None:
    """One column of panels per system of ours: each ratio against the table size, targets
    dashed; the ratios to Apache Hudi in a second row, when it ran."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = summary["sizes"]
    ours = list(sizes[0]["ratios"])
    rows = [s["rows"] for s in sizes]

    def reference(key: str) -> str | None:
        """The Apache Hudi reference a ratio is to, or None."""
        ref = key.split("/", 1)[1]
        return ref if ref in APACHE_HUDI_REFERENCES else None

    def present(name: str, key: str) -> bool:
        return any(s["ratios"].get(name, {}).get(key) is not None for s in sizes)

    # a row of panels for the other references, one for each Apache Hudi reference that ran
    panels: list[str | None] = [None]
    for ref in APACHE_HUDI_REFERENCES:
        if any(reference(k) == ref and present(n, k) for n in ours for k in RATIO_TITLES):
            panels.append(ref)
    fig, axes = plt.subplots(len(panels), max(1, len(ours)),
                             figsize=(6 * max(1, len(ours)), 4.5 * len(panels)),
                             squeeze=False)  # fmt: skip
    for row, panel in enumerate(panels):
        for ax, name in zip(axes[row], ours, strict=False):
            for key, title in RATIO_TITLES.items():
                if reference(key) != panel or not present(name, key):
                    continue
                values = [s["ratios"].get(name, {}).get(key) for s in sizes]
                line = ax.plot(rows, [float("nan") if v is None else v for v in values],
                               marker="o", label=title)  # fmt: skip
                if key in TARGETS and _target_applies(name, key) and not panel:
                    target = TARGETS[key][0]
                    ax.axhline(target, color=line[0].get_color(), linestyle="--", linewidth=0.8)
            ax.axhline(1.0, color="black", linewidth=0.8 if row else 0.6)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(rows, [f"{r / 1e6:g}M" for r in rows])
            what = (
                f"{APACHE_HUDI_REFERENCES[panel]} (target: below 1)"
                if panel
                else "reference (targets dashed)"
            )
            ax.set_title(f"{name}: our time / {what}", fontsize=9)
            ax.set_xlabel("rows in the initial table")
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:  # an Apache Hudi system may not have run
                ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _batch_shape(workload: dict) -> str:
    """How the upsert batches spread over the partitions (`workload.generate`'s `spread`)."""
    if workload.get("spread", "zipf") == "even":
        return "half updates, half inserts, both spread evenly over every partition"
    return (f"half updates, Zipf s={workload['zipf_s']} toward recent dates; half inserts "
            "into recent dates")

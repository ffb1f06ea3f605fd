"""The run's outputs: JSON (everything), markdown (the tables to read) and a PNG plot.

The markdown carries the machine (cores, memory, load) in its header because the numbers
mean little without it, and every table lists the systems in the same order. A system that
did not finish shows "DNF" from the step where it stopped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DNF_MARK = "DNF"


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
        f"~{workload['rows'] // 10:,} rows (half updates, Zipf s={workload['zipf_s']} toward "
        f"recent dates; half inserts into recent dates), then {workload['rows'] // 100:,} "
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
        "## Reads, size and correctness",
        "",
        "| system | status | full scan (s) | one partition (s) | rows | checksum | correct | "
        "table size (MB) | data files | peak RSS, writes (MiB) |",
        "|---|---|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for r in records:
        check = r.get("check") or {}
        size = check.get("table_size") or {}
        peaks = [s["peak_rss_bytes"] for s in r["steps"].values()]
        status = r["status"] if r["status"] == "ok" else f"{r['status']} ({r.get('stopped_at')})"
        lines.append(
            f"| `{r['system']}` | {status} | "
            f"{_cell(r, (r.get('scan') or {}).get('seconds'))} | "
            f"{_cell(r, (r.get('scan_partition') or {}).get('seconds'))} | "
            f"{_cell(r, check.get('rows'), '{:,}')} | "
            f"{'`' + check['checksum'] + '`' if check else ''} | "
            f"{'yes' if r.get('correct') else ('no' if r['status'] != 'did not finish' else '')}"
            f" | {_mb(size.get('bytes'))} | {size.get('data_files', '')} | "
            f"{_mib(max(peaks)) if peaks else ''} |"
        )
    lines += [
        "",
        f"The one-partition query reads `event_date = '{workload['query_date']}'`, the newest "
        f"and most updated day ({workload['expected_query_rows']:,} rows expected). Reads are "
        f"the best of {results['scan_repeats']} runs and read every column: Spark systems "
        "through a `noop` sink, delta-rs and pyiceberg into an Arrow table. Table size counts "
        "every file under the table folder, old file versions and metadata included (no "
        "system cleaned or vacuumed beyond its defaults).",
        "",
    ]
    if results["problems"]:
        lines += ["**Verification FAILED:**", ""] + [f"- {p}" for p in results["problems"]]
    else:
        lines.append(
            "Verification: every finished system holds exactly the expected rows (row count, "
            "distinct keys, checksum over key, date, ts, amount, status, updated_at, "
            "is_returned, comment; and the one-partition row count)."
        )
    lines += _stage_tables(records)
    lines += ["", "## Per system", ""]
    for r in records:
        lines += [
            f"### `{r['system']}`" + (f" ({r['status']})" if r["status"] != "ok" else ""),
            "",
            "| step | seconds | rows/s | bytes written (MB) | files written | data files "
            "| peak RSS (MiB) |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, s in r["steps"].items():
            lines.append(
                f"| {name} | {s['seconds']:.2f} | {s['rows_per_second']:,.0f} | "
                f"{_mb(s['bytes_written'])} | {s['files_written']} | {s['data_files_written']} "
                f"| {_mib(s['peak_rss_bytes'])} |"
            )
        if r["status"] != "ok":
            mark = "failed" if r["status"] == "failed" else DNF_MARK
            lines.append(f"| {r.get('stopped_at')} | {mark} | | | | | |")
            error = (r.get("error") or "").strip().splitlines()
            if error:
                lines += ["", f"Stopped: `{error[-1][:300]}`"]
        lines.append("")
    if plot_name:
        lines += [f"![seconds per write by system]({plot_name})", ""]
    return "\n".join(lines)


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
def plot(results: dict, path: Path) -> None:
    """Grouped bars: seconds per write step, one bar per system, the pyarrow bound as marks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    steps = _step_names(results)
    names = results["systems"]
    width = 0.8 / max(1, len(names))
    x = np.arange(len(steps))
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(steps)), 5))
    for i, name in enumerate(names):
        record = results["results"][name]
        values = [record["steps"].get(s, {}).get("seconds", np.nan) for s in steps]
        offset = x - 0.4 + width * (i + 0.5)
        bars = ax.bar(offset, values, width, label=name)
        ax.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
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
    cow = results["results"].get("cow_upsert")
    if cow:
        bounds = []
        for s in steps:
            pb = cow["steps"].get(s, {}).get("details", {}).get("physical_bound")
            bounds.append(pb["seconds"] if pb and pb["files"] else np.nan)
        if not np.all(np.isnan(bounds)):
            ax.scatter(
                x,
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
    ax.set_xticks(x, steps)
    ax.set_ylabel("seconds (lower is better)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

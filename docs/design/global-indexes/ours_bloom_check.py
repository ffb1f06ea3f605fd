"""Checks an ours_bloom log: after every step, Apache Hudi's read equals ours (snapshot and
read-optimized), and the snapshot holds each key once. `python docs/design/global-indexes/ours_bloom_check.py LOG`"""

import re
import sys
from collections import Counter


def sections(text: str):
    run, step, reader, query, rows = "", "", "", "", None
    for line in text.splitlines():
        if line.startswith("# "):
            run = line.split(":")[0][2:]
            continue
        if line.startswith("## "):
            step = f"{run}: {line[3:]}"
            continue
        match = re.match(r" (Apache Hudi|ours) (\w+):", line)
        if match:
            if rows is not None:
                yield step, reader, query, rows
            reader, query, rows = match.group(1), match.group(2), []
        elif line.startswith("  ") and rows is not None and "commit=" in line:
            rows.append(line.strip())
        elif rows is not None and not line.startswith("  "):
            yield step, reader, query, rows
            rows = None
    if rows is not None:
        yield step, reader, query, rows


def main(path: str) -> None:
    seen: dict[tuple[str, str], dict[str, list[str]]] = {}
    for step, reader, query, rows in sections(open(path).read()):
        seen.setdefault((step, query), {})[reader] = rows
    for (step, query), by in seen.items():
        same = by.get("Apache Hudi") == by.get("ours")
        keys = Counter(r.split()[0] for r in by.get("ours", []))
        twice = sorted(k for k, n in keys.items() if n > 1)
        note = f" keys twice: {twice}" if twice else " one row per key"
        note = note if query == "snapshot" else ""
        print(f"{'agree' if same else 'DIFFER'} {query:<15}{note} | {step[:80]}")


if __name__ == "__main__":
    main(sys.argv[1])

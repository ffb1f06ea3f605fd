"""Normalizes a probe log for comparison across runs: instant times become s1, s2, ... (in the
order they appear), file ids f1, f2, ..., and the write token / log file names are cut, so two
logs that differ only in names diff clean. `python docs/design/global-indexes/normalize.py LOG [LOG2]` prints the
normalized log (or a unified diff of the two)."""

import difflib
import re
import sys


def normalize(text: str) -> list[str]:
    times: dict[str, str] = {}
    files: dict[str, str] = {}

    def time(m: re.Match) -> str:
        return times.setdefault(m.group(0), f"s{len(times) + 1}")

    def fid(m: re.Match) -> str:
        return files.setdefault(m.group(0)[:12], f"f{len(files) + 1}")

    out = []
    for line in text.splitlines():
        if line.startswith("# options") or line.startswith("# ") or "sql result" in line:
            continue
        line = re.sub(r"(?<!\d)20\d{15}(?!\d)", time, line)
        uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-0)?"
        line = re.sub(uuid, fid, line)
        line = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{3}\b", fid, line)
        line = re.sub(r"_\d+-\d+-\d+_", "_", line)
        line = re.sub(r"_\d+-\d+-\d+$", "", line)
        out.append(line)
    return out


if __name__ == "__main__":
    a = normalize(open(sys.argv[1]).read())
    if len(sys.argv) == 2:
        print("\n".join(a))
    else:
        b = normalize(open(sys.argv[2]).read())
        print("\n".join(difflib.unified_diff(a, b, sys.argv[1], sys.argv[2], lineterm="", n=1)))

"""Lint's throughput on a large tree of real Python: the installed site-packages by default.

    .venv/bin/python bench/lint_throughput.py [PATH ...] [--repeat N]

Prints files, lines, handlers and findings, and lines per second for each of N runs (best and median).
Target: at least 50,000 lines a second. Every file is read and parsed (so a file that does not parse is
reported); the handler analysis runs on the files that can define a Restate handler and what they import.
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
import time
from collections import Counter
from pathlib import Path

from _docs import load_average, write_table

from paidtwice.lint import lint_paths

TARGET_LINES_PER_SECOND = 50_000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    paths = args.paths or [Path(sysconfig.get_paths()["purelib"])]
    rates = []
    rows: list[list[str]] = []
    load_before = load_average()
    for run in range(1, args.repeat + 1):
        started = time.perf_counter()
        result = lint_paths(paths)
        elapsed = time.perf_counter() - started
        rates.append(result.lines / elapsed)
        rate = f"{rates[-1]:,.0f} lines/s"
        print(f"run {run}: {result.lines} lines in {result.files} files, {elapsed:.2f} s: {rate}")
        rows.append([str(run), f"{result.lines:,}", f"{result.files:,}", f"{elapsed:.2f} s", rate])
    codes = Counter(f.code for f in result.findings)
    print(f"tree: {', '.join(str(p) for p in paths)}")
    print(f"handlers found: {result.handlers}; findings: {dict(sorted(codes.items())) or 'none'}")
    best, median = max(rates), statistics.median(rates)
    verdict = "met" if median >= TARGET_LINES_PER_SECOND else "NOT met"
    summary = (
        f"lines/s: best {best:,.0f}, median {median:,.0f}; target {TARGET_LINES_PER_SECOND:,}: {verdict}"
    )
    print(summary)
    headers = ["run", "lines", "files", "time", "rate"]
    write_table(
        "lint-throughput", headers, rows, load=f"{load_before} to {load_average()}", note=summary + "."
    )


if __name__ == "__main__":
    main()

"""How long a report takes to make and to open: `paidtwice report` on result files, then headless Chromium.

    .venv/bin/python bench/report.py RESULTS.json... [--loads 5]

Prints the page's size, the time to read the results and write the page, and the time from navigation to
the load event in Chromium (each load in a fresh tab state; the best and the median of --loads). The issue's
target: a 60-point sweep opens in under a second. Writes its table for the Benchmarks page
(docs/benchmarks/tables/report.md); the repo's own result files make a page anyone can measure again:

    .venv/bin/python bench/report.py tests/fixtures/results/deck.json tests/fixtures/results/sweep.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _docs import load_average, write_table  # noqa: E402
from browser import Browser, find_chromium  # type: ignore[import-not-found]  # noqa: E402

from paidtwice.report import deck_sections, load_results, sweep_sections, write_html  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium is not installed")
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        loaded = load_results(args.results)
        sections = deck_sections(loaded.records) if loaded.records else []
        sections += sweep_sections(loaded.points) if loaded.points else []
        page = write_html(Path(tmp) / "report.html", "bench", sections)
        made = time.perf_counter() - started
        size = page.stat().st_size / 1024
        with Browser(binary) as browser:
            loads = [browser.open(page).load_seconds for _ in range(args.loads)]
    print(
        f"{len(loaded.records)} deck rows, {len(loaded.points)} crash points: page {size:.0f} KiB, "
        f"made in {made:.2f}s; opened in {min(loads):.2f}s best, {statistics.median(loads):.2f}s median "
        f"of {len(loads)} loads"
    )
    headers = ["deck rows", "crash points", "page", "made in", "opened in (best)", f"median of {len(loads)}"]
    row = [
        str(len(loaded.records)),
        str(len(loaded.points)),
        f"{size:.0f} KiB",
        f"{made:.2f} s",
        f"{min(loads):.2f} s",
        f"{statistics.median(loads):.2f} s",
    ]
    note = "Opened: from navigation to the load event in headless Chromium (target: under a second)."
    write_table("report", headers, [row], load=f"{load_before} to {load_average()}", note=note)


if __name__ == "__main__":
    main()

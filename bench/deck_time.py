"""The deck's wall time, serial and concurrent, and each row's deliberate waits against its wall time.

    .venv/bin/python bench/deck_time.py [--only NAME ...] [--skip-serial]

Concurrent: every row at once on one server and one stub. Serial: one row after another, each timed, the
longest of them being the floor a concurrent deck can reach (target: concurrent / longest <= 1.5). For each
measured run, its deliberate waits (pauses, down time, held answers, retry backoff) against its wall time;
the rest is the lab's own overhead (target: under 1.5 s a row).
"""

from __future__ import annotations

import argparse
import time

from paidtwice.lab import (
    COMPARISONS,
    CURVES,
    EXPERIMENTS,
    WALKS,
    ComparisonRecord,
    CurveRecord,
    Lab,
    RecoveryRecord,
    Row,
    RunRecord,
)
from paidtwice.lab._experiments import experiment_by_name
from paidtwice.lab._rows import run_rows
from paidtwice.results import Record


def runs_of(record: Record) -> list[RunRecord]:
    if isinstance(record, RunRecord):
        return [record]
    if isinstance(record, CurveRecord):
        return list(record.runs)
    if isinstance(record, RecoveryRecord):
        return [record.stuck_run]
    if isinstance(record, ComparisonRecord):
        return list(record.runs)
    return []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--skip-serial", action="store_true")
    args = parser.parse_args()
    every: list[Row] = [*EXPERIMENTS, *CURVES, *WALKS, *COMPARISONS]
    rows: list[Row] = [experiment_by_name(n) for n in args.only] or every
    with Lab(echo=lambda message: None) as lab:
        started = time.monotonic()
        records = run_rows(lab, rows, concurrent=True)
        concurrent = time.monotonic() - started
        row_times: dict[str, float] = {}
        serial_records: list[Record] = []
        if not args.skip_serial:
            for row in rows:
                started = time.monotonic()
                serial_records += run_rows(lab, [row], concurrent=False)
                row_times[row.name] = time.monotonic() - started
    print(f"deck: {len(rows)} rows")
    print(f"concurrent wall time  {concurrent:7.1f} s")
    if row_times:
        serial = sum(row_times.values())
        longest_name, longest = max(row_times.items(), key=lambda item: item[1])
        print(f"serial wall time      {serial:7.1f} s")
        print(f"longest single row    {longest:7.1f} s  ({longest_name})")
        print(f"concurrent / longest  {concurrent / longest:7.2f}  (target <= 1.5)")
    for title, measured in (("serial deck", serial_records), ("concurrent deck", records)):
        if not measured:
            continue
        print()
        print(f"{'run (' + title + ')':34} {'wall s':>7} {'waits s':>8} {'overhead s':>10}")
        overheads = []
        for record in measured:
            for run in runs_of(record):
                overhead = run.wall_time - run.deliberate_wait
                overheads.append(overhead)
                at = f" @{run.restart_delay:g}s" if isinstance(record, CurveRecord) else ""
                print(
                    f"{record.name + at:34} {run.wall_time:7.2f} {run.deliberate_wait:8.2f} {overhead:10.2f}"
                )
        print(f"largest overhead per run, {title}: {max(overheads):.2f} s (target < 1.5 s)")
    print(f"every row matches the deck: {all(r.matches for r in [*records, *serial_records])}")


if __name__ == "__main__":
    main()

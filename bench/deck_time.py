"""The deck's wall time, serial and concurrent, and each row's deliberate waits against its wall time.

    .venv/bin/python bench/deck_time.py [--only NAME ...] [--skip-serial]

Concurrent: every row at once on one server and one stub. Serial: one row after another, each timed, the
longest of them being the floor a concurrent deck can reach (target: concurrent / longest <= 1.5). For each
measured run, its deliberate waits (pauses, down time, held answers, retry backoff) against its wall time;
the rest is the lab's own overhead (target: under 1.5 s a row). Writes its table for the Benchmarks page
(docs/benchmarks/tables/deck-time.md): each run alone and in the concurrent deck, side by side.
"""

from __future__ import annotations

import argparse
import time

from _docs import load_average, write_table

from paidtwice._words import count
from paidtwice.deck import COMPARISONS, CURVES, EXPERIMENTS, WALKS, Deck, Row
from paidtwice.deck._experiments import experiment_by_name
from paidtwice.lab import Lab
from paidtwice.results import ComparisonRecord, CurveRecord, Record, RecoveryRecord, RunRecord


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


def run_name(record: Record, run: RunRecord) -> str:
    """A run's name in the tables: a curve's runs by their restart delay (or their retry policy's attempts),
    a comparison's by their own names."""
    if isinstance(record, CurveRecord):
        if run.retry_policy:
            return f"{record.name} {run.retry_policy.split(',')[0]}"
        return f"{record.name} @{run.restart_delay:g}s"
    if isinstance(record, ComparisonRecord):
        return run.name
    return record.name


def per_run(records: list[Record]) -> dict[str, tuple[float, float]]:
    """Each measured run by name (a second run of one name numbered): its wall time and deliberate waits."""
    measured: dict[str, tuple[float, float]] = {}
    for record in records:
        for run in runs_of(record):
            name = base = run_name(record, run)
            again = 1
            while name in measured:
                again += 1
                name = f"{base} ({again})"
            measured[name] = (run.wall_time, run.deliberate_wait)
    return measured


def docs_table(serial: list[Record], concurrent: list[Record], summary: str, load: str) -> None:
    """The table for the Benchmarks page: each run alone (when the serial deck ran) and in the concurrent
    deck, its wall time, its deliberate waits and what is left, the lab's overhead."""
    alone, together = per_run(serial), per_run(concurrent)
    rows = []
    for name in dict.fromkeys([*alone, *together]):
        cells = [f"`{name}`"]
        for measured in (alone, together):
            wall, waits = measured.get(name, (None, None))
            if wall is None or waits is None:
                cells += ["-", "-", "-"]
            else:
                cells += [f"{wall:.2f}", f"{waits:.2f}", f"{wall - waits:.2f}"]
        rows.append(cells)
    headers = [
        "run",
        "alone: wall s",
        "waits s",
        "overhead s",
        "in the concurrent deck: wall s",
        "waits s",
        "overhead s",
    ]
    write_table("deck-time", headers, rows, load=load, note=summary)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--skip-serial", action="store_true")
    args = parser.parse_args()
    every: list[Row] = [*EXPERIMENTS, *CURVES, *WALKS, *COMPARISONS]
    rows: list[Row] = [experiment_by_name(n) for n in args.only] or every
    load_before = load_average()
    with Lab(echo=lambda message: None) as lab:
        started = time.monotonic()
        records = Deck(lab).run_rows(rows, concurrent=True)
        concurrent = time.monotonic() - started
        row_times: dict[str, float] = {}
        serial_records: list[Record] = []
        if not args.skip_serial:
            for row in rows:
                started = time.monotonic()
                serial_records += Deck(lab).run_rows([row], concurrent=False)
                row_times[row.name] = time.monotonic() - started
    load = f"{load_before} to {load_average()}"
    summary = [f"{count(len(rows), 'row')}; the concurrent deck took {concurrent:.1f} s"]
    print(f"deck: {len(rows)} rows")
    print(f"concurrent wall time  {concurrent:7.1f} s")
    if row_times:
        serial = sum(row_times.values())
        longest_name, longest = max(row_times.items(), key=lambda item: item[1])
        print(f"serial wall time      {serial:7.1f} s")
        print(f"longest single row    {longest:7.1f} s  ({longest_name})")
        print(f"concurrent / longest  {concurrent / longest:7.2f}  (target <= 1.5)")
        summary.append(
            f"the serial deck {serial:.1f} s, its longest row {longest:.1f} s (`{longest_name}`): "
            f"concurrent / longest {concurrent / longest:.2f} (target at most 1.5)"
        )
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
                name = run_name(record, run)
                print(f"{name:34} {run.wall_time:7.2f} {run.deliberate_wait:8.2f} {overhead:10.2f}")
        print(f"largest overhead per run, {title}: {max(overheads):.2f} s (target < 1.5 s)")
        summary.append(
            f"the largest overhead of a run in the {title} {max(overheads):.2f} s (target under 1.5 s)"
        )
    matches = all(r.matches for r in [*records, *serial_records])
    print(f"every row matches the deck: {matches}")
    summary.append("every row matched the deck" if matches else "NOT every row matched the deck")
    docs_table(serial_records, records, "; ".join(summary) + ".", load)


if __name__ == "__main__":
    main()

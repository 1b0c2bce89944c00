"""Run the deck N times and say, per row, whether any count or journal differed between repetitions.

.venv/bin/python bench/repeat.py [N]     (default 10)

Writes its table for the Benchmarks page (docs/benchmarks/tables/repeat.md).
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter

from _docs import load_average, write_table

from paidtwice._exceptions import PaidtwiceError
from paidtwice.deck import COMPARISONS, CURVES, EXPERIMENTS, WALKS, Deck
from paidtwice.deck._experiments import Row
from paidtwice.lab import Lab
from paidtwice.results import ComparisonRecord, CurveRecord, Record, RecoveryRecord, RunRecord


def fingerprint(record: Record) -> tuple[object, ...]:
    """The counts and journals of a record: what must not change between repetitions."""
    if isinstance(record, RunRecord):
        return (
            record.status,
            record.model_calls,
            record.tool_calls,
            record.attempts,
            record.mismatches,
            tuple(entry.label() for entry in record.journal),
        )
    if isinstance(record, CurveRecord):
        return tuple((p.model_calls, p.attempts_while_down, p.status) for p in record.points)
    if isinstance(record, RecoveryRecord):
        # A step's action names the deployment it targets, whose id is new in every run.
        return tuple(
            (re.sub(r"dp_\w+", "dp_*", s.action), s.status, s.model_calls, s.tool_calls) for s in record.steps
        )
    if isinstance(record, ComparisonRecord):
        # Recovery times vary from run to run; what each side paid and booked must not.
        return tuple((r.status, r.model_calls, r.tool_calls, r.booking_effects) for r in record.runs)
    return ()


def main() -> None:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rows: list[Row] = [*EXPERIMENTS, *CURVES, *WALKS, *COMPARISONS]
    seen: dict[str, list[tuple[object, ...]]] = {row.name: [] for row in rows}
    matched: dict[str, int] = {row.name: 0 for row in rows}
    failed: list[str] = []
    started = time.monotonic()
    load_before = load_average()
    # One lab for every repetition, as a long session would use it; a failed repetition cancels its lab, so
    # the next one gets a new lab.
    lab = Lab(echo=lambda message: None).__enter__()
    try:
        for n in range(repetitions):
            try:
                records = Deck(lab).run_rows(rows, concurrent=True)
            except PaidtwiceError as err:
                # A row that could not be measured is a repetition that differed; say why and go on.
                failed.append(f"repetition {n + 1}: {type(err).__name__}: {err}")
                print(f"  repetition {n + 1}/{repetitions} FAILED: {err}", file=sys.stderr)
                lab.close()
                lab = Lab(echo=lambda message: None).__enter__()
                continue
            for record in records:
                seen[record.name].append(fingerprint(record))
                matched[record.name] += int(record.matches)
            print(f"  repetition {n + 1}/{repetitions} done", file=sys.stderr)
    finally:
        lab.close()
    took = time.monotonic() - started
    print(f"deck repeated {repetitions} times in {took:.0f} s")
    width = max(len("row"), *map(len, seen))
    print(f"{'row':{width}} {'distinct results':>16} {'matched the deck':>17}")
    for name, prints in seen.items():
        distinct = len(set(prints))
        print(f"{name:{width}} {distinct:>16} {matched[name]:>12}/{repetitions}")
    differing = [name for name, prints in seen.items() if len(set(prints)) > 1]
    for name in differing:
        print(f"\n{name}: the results seen, with how often")
        for result, times in Counter(seen[name]).most_common():
            print(f"  {times}x {result}")
    print("rows that differed: " + (", ".join(differing) if differing else "none"))
    print(f"repetitions that failed: {len(failed)}" + "".join(f"\n  {line}" for line in failed))
    table = [
        [f"`{name}`", str(len(set(prints))), f"{matched[name]} of {repetitions}"]
        for name, prints in seen.items()
    ]
    note = (
        f"The deck ran {repetitions} times on one lab in {took:.0f} s; rows whose results differed between "
        f"repetitions: {', '.join(differing) or 'none'}; repetitions that failed: {len(failed)}"
        + "".join(f"; {line}" for line in failed)
        + "."
    )
    write_table(
        "repeat",
        ["row", "distinct results", "matched the deck"],
        table,
        load=f"{load_before} to {load_average()}",
        note=note,
    )


if __name__ == "__main__":
    main()

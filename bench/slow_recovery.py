"""Where a slow model's recovery goes, naive against journaled: the slow-model-recovery row, repeated.

    .venv/bin/python bench/slow_recovery.py [REPEATS]

Prints, for each repeat, each side's recovery to completion, its retry wait, its time to regain the
progress lost at the kill, its model waits and journal round trips, and the differences: from the agent
listening again (completion), from the first replay, and the regain difference the row is judged on.
"""

from __future__ import annotations

import sys
import time

from _docs import load_average, write_table

from paidtwice.deck import COMPARISONS, Deck
from paidtwice.lab import Lab
from paidtwice.results import RunRecord


def breakdown(run: RunRecord) -> str:
    part = run.recovery_breakdown
    if part is None or run.recovery_s is None or run.retry_wait_s is None:
        return f"{run.mode:9} no recovery measured"
    regain = f"{part.regain_s:.3f}" if part.regain_s is not None else "-"
    return (
        f"{run.mode:9} {run.recovery_s:7.3f} {run.retry_wait_s:7.3f} {regain:>7} "
        f"{part.model_wait_s:7.3f} {part.journal_round_trips:3d} {part.journal_wait_s * 1000:7.1f} "
        f"{part.other_s * 1000:7.1f}"
    )


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    row = next(r for r in COMPARISONS if r.name == "slow-model-recovery")
    started = time.monotonic()
    regains: list[float] = []
    replays: list[float] = []
    completions: list[float] = []
    ok = 0
    loads = [load_average()]
    with Lab(echo=lambda message: None) as lab:
        print(f"{'mode':9} {'recov s':>7} {'retry s':>7} {'regain':>7} {'model s':>7} {'rt':>3} ", end="")
        print(f"{'rt ms':>7} {'rest ms':>7}")
        for i in range(repeats):
            record = Deck(lab).run_comparison(row)
            loads.append(load_average())
            print(f"-- repeat {i + 1}, load average {loads[-1]}")
            for run in record.runs:
                print(breakdown(run))
            print(
                f"   differences: completion {record.recovery_difference_s}, "
                f"first replay {record.difference}, regain {record.regain_difference_s} "
                f"({'ok' if record.checks[0].ok else 'DIFFERS'})"
            )
            for figures, value in (
                (regains, record.regain_difference_s),
                (replays, record.difference),
                (completions, record.recovery_difference_s),
            ):
                if value is not None:
                    figures.append(value)
            ok += record.checks[0].ok
    latency = row.first.model_latency
    rows: list[list[str]] = []
    for name, figures in (("regain", regains), ("first replay", replays), ("completion", completions)):
        if figures:
            below = sum(1 for f in figures if f < latency)
            print(
                f"{name:12} difference {min(figures):.3f} to {max(figures):.3f} s; "
                f"below the {latency:g} s latency in {below}/{len(figures)}"
            )
            rows.append([name, f"{min(figures):.3f} to {max(figures):.3f} s", f"{below} of {len(figures)}"])
    print(f"claim held in {ok}/{repeats} (bench took {time.monotonic() - started:.0f} s)")
    headers = ["difference, naive minus journaled", f"{repeats} repeats", f"below {latency:g} s"]
    write_table(
        "slow-recovery",
        headers,
        rows,
        load=f"{min(loads)} to {max(loads)}",
        note=f"The claim held in {ok} of {repeats}.",
    )


if __name__ == "__main__":
    main()

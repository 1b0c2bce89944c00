"""Soaks of growing size on one lab: does the lab's cost grow linearly with its work?

.venv/bin/python bench/soak_scale.py [SIZE:KILLS ...]     (default 200:5 1000:10 10000:10)

For each size: throughput, p50 and p99 completion time, the extra model calls and their bound, lost,
unfinished and paused invocations, and the peak memory of the server, the agent and paidtwice. Then the
ratio of the largest soak's throughput to the smallest's (target: at least 0.8, with 0 lost and 0 unfinished
at every size). The machine's load average is printed beside each soak: the figures are this machine's,
shared with whatever else runs on it.
"""

from __future__ import annotations

import os
import sys
import time

from _docs import write_table

from paidtwice._exceptions import PaidtwiceError
from paidtwice.lab import Lab
from paidtwice.report import format_soak_progress, table
from paidtwice.results import SoakRecord
from paidtwice.soak import SoakOptions, SoakProgress, soak, soak_timeout

_TARGET_RATIO = 0.8


def _parse(argv: list[str]) -> list[tuple[int, int]]:
    sizes = []
    for item in argv or ["200:5", "1000:10", "10000:10"]:
        size, _, kills = item.partition(":")
        try:
            sizes.append((int(size), int(kills or 10)))
        except ValueError:
            raise SystemExit(f"soak_scale: {item!r} is not SIZE or SIZE:KILLS") from None
    return sizes


def _load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> None:
    sizes = _parse(sys.argv[1:])
    results: list[tuple[SoakRecord, str, str]] = []
    last_line = [0.0]

    def show(progress: SoakProgress) -> None:
        if time.monotonic() - last_line[0] >= 10.0:
            last_line[0] = time.monotonic()
            print("  " + format_soak_progress(progress), flush=True)

    try:
        with Lab(echo=lambda message: None) as lab:
            for size, kills in sizes:
                before = _load()
                print(f"soak {size} with {kills} kills (load average {before})", flush=True)
                # Three times the default deadline: a loaded, shared machine still yields its figures;
                # a soak that stalls for two minutes gives up all the same.
                options = SoakOptions(invocations=size, kills=kills, timeout=3 * soak_timeout(size))
                record = soak(lab, options, progress=show)
                results.append((record, before, _load()))
                verdict = "ok" if record.ok else "NOT OK: " + "; ".join(record.problems())
                print(
                    f"  {record.completed} completed in {record.wall_time:.1f}s, "
                    f"{record.throughput} completed/s, {verdict}",
                    flush=True,
                )
    except PaidtwiceError as err:
        raise SystemExit(f"soak_scale: {err}") from None
    rows = [
        [
            str(r.sent),
            str(r.kills),
            f"{r.wall_time:.1f}",
            f"{r.throughput:.1f}",
            _seconds(r.p50_completion),
            _seconds(r.p99_completion),
            f"{r.extra_model_calls} / {r.bound}",
            f"{r.lost} / {r.unfinished} / {r.paused}",
            f"{r.peak_memory.server:.0f} / {r.peak_memory.agent:.0f} / {r.peak_memory.paidtwice:.0f}",
            f"{before} -> {after}",
        ]
        for r, before, after in results
    ]
    headers = [
        "invocations",
        "kills",
        "wall s",
        "completed/s",
        "p50 s",
        "p99 s",
        "extra / bound",
        "lost / unfinished / paused",
        "peak MiB server / agent / paidtwice",
        "load average",
    ]
    print()
    print(table(headers, rows))
    first, last = results[0][0], results[-1][0]
    ratio = last.throughput / first.throughput if first.throughput else 0.0
    clean = all(r.lost == 0 and r.unfinished == 0 for r, _, _ in results)
    print(
        f"\nthroughput at {last.sent} / at {first.sent}: {ratio:.2f} (target {_TARGET_RATIO}); "
        f"0 lost and 0 unfinished at every size: {'yes' if clean else 'no'}"
    )
    loads = f"{results[0][1]} to {results[-1][2]}"
    write_table(
        "soak-scale",
        headers,
        rows,
        load=loads,
        note=f"Throughput at {last.sent} / at {first.sent}: {ratio:.2f}.",
    )


if __name__ == "__main__":
    main()

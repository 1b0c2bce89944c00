"""What journaling a model call costs: a one-step agent against a zero-latency stub, naive vs journaled.

    .venv/bin/python bench/journal_overhead.py [INVOCATIONS]

Prints p50 and p99 of the model step as the handler sees it, for each mode, their difference, and that
difference as a share of a 500 ms model call. Writes its table for the Benchmarks page
(docs/benchmarks/tables/journal-overhead.md).
"""

from __future__ import annotations

import statistics
import sys
import time

import httpx
from _docs import load_average, write_table

from paidtwice.agent import AgentMode
from paidtwice.lab import Lab
from paidtwice.stub import SCRIPTS
from paidtwice.targets import DeckTarget

TYPICAL_MODEL_CALL_MS = 500.0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def measure(lab: Lab, mode: AgentMode, count: int) -> list[float]:
    service = f"OneStep_{mode}"
    lane = lab.stub.open_lane(SCRIPTS["steady"], name=service.lower())
    agent, _trace = lab.launch(DeckTarget(mode, app="paidtwice.agent.onestep:app", pause=None), lane, service)
    with agent:
        agent.start()
        lab.admin.register_deployment(agent.uri)
        steps = []
        with httpx.Client(base_url=lab.server.ingress_url, timeout=30.0) as client:
            for i in range(count + 10):
                answer = client.post(f"/{service}/run", json=f"question {i}")
                answer.raise_for_status()
                if i >= 10:  # the first calls warm connections up
                    steps.append(float(answer.json()["step_ms"]))
    return steps


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    started = time.monotonic()
    load_before = load_average()
    with Lab(echo=lambda message: None) as lab:
        naive = measure(lab, "naive", count)
        journaled = measure(lab, "journaled", count)
    print(f"journal overhead: {count} invocations per mode, zero-latency stub")
    print(f"{'mode':10} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    rows = []
    for name, steps in (("naive", naive), ("journaled", journaled)):
        figures = (percentile(steps, 0.5), percentile(steps, 0.99), statistics.mean(steps))
        print(f"{name:10} {figures[0]:8.2f} {figures[1]:8.2f} {figures[2]:8.2f}")
        rows.append([name, *(f"{f:.2f}" for f in figures)])
    p50 = percentile(journaled, 0.5) - percentile(naive, 0.5)
    p99 = percentile(journaled, 0.99) - percentile(naive, 0.99)
    print(f"difference: p50 {p50:+.2f} ms, p99 {p99:+.2f} ms")
    print(
        f"as a share of a {TYPICAL_MODEL_CALL_MS:.0f} ms model call: p50 {p50 / TYPICAL_MODEL_CALL_MS:.2%}, "
        f"p99 {p99 / TYPICAL_MODEL_CALL_MS:.2%}"
    )
    print(f"(bench took {time.monotonic() - started:.1f} s)")
    rows.append(["journaled minus naive", f"{p50:+.2f}", f"{p99:+.2f}", "-"])
    note = (
        f"{count} invocations per mode, the stub answering at once, the step as its handler times it; "
        f"the difference as a share of a {TYPICAL_MODEL_CALL_MS:.0f} ms model call: p50 "
        f"{p50 / TYPICAL_MODEL_CALL_MS:.2%}, p99 {p99 / TYPICAL_MODEL_CALL_MS:.2%}."
    )
    headers = ["mode", "model step p50 ms", "p99 ms", "mean ms"]
    write_table("journal-overhead", headers, rows, load=f"{load_before} to {load_average()}", note=note)


if __name__ == "__main__":
    main()

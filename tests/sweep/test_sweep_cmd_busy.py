"""A `--cmd` clean run beside processes that use every CPU: the wire still proves which model calls were made
inside a step. The stub holds each answer until the agent has gone quiet and the proxy has read what it
sent, so an agent that writes a step's RunCommand late, starved of CPU, is waited for: no time window
decides it (one of 0.25 s lost shapes_agent/between's first journaled call at a load of 70)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from paidtwice.lab import Lab, Poller
from paidtwice.results import CleanRun
from paidtwice.stub import load_script_file
from paidtwice.sweep._runs import clean_run
from paidtwice.targets import CommandTarget

SHAPES = Path(__file__).parent / "shapes_agent"
HOGS = 6
"""Processes that spin beside the runs: three times the machine's two cores."""
RUNS = 3


@contextmanager
def hogs(n: int) -> Iterator[None]:
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def test_journaled_calls_are_proven_in_their_steps_beside_busy_processes(lab: Lab) -> None:
    command = f"{sys.executable} -m hypercorn agent:app --bind 127.0.0.1:$PORT"
    target = CommandTarget(command, "Shapes", "between", "120 EUR in USD?", mode="cmd busy", cwd=str(SHAPES))
    script = load_script_file(SHAPES / "script.toml", "steady")
    poller = Poller(lambda: lab.sql, lab.cancelled)
    stop = threading.Event()

    def clean(n: int) -> CleanRun:
        return clean_run(lab, stop, poller, target, script, f"s{lab.next_id()}_{n}_busy")[0]

    try:
        with hogs(HOGS), ThreadPoolExecutor(RUNS) as pool:
            runs = list(pool.map(clean, range(RUNS)))
    finally:
        poller.stop()
    for run in runs:
        assert run.status == "completed" and run.model_calls == 3, run
        # The first and third calls are made in `ctx.run_typed`, the second plainly between them.
        assert (run.calls_in_steps, run.calls_undecided) == ((1, 3), ()), run

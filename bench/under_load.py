"""The deck and three agents' sweeps beside 0, 1 and 2 CPU-bound processes: do verdicts and kills hold?

    .venv/bin/python bench/under_load.py [--runs K] [--burners 0,1,2] [--only deck|python|python-cmd|ts ...]

A fault-injection tool is only as good as its aim, and CI runners are shared 2-core machines. For each
number of busy processes (`python -c 'while True: pass'`, started and ended here) this runs K times:
`paidtwice deck` (every row compared with the deck's figures) and `paidtwice sweep --check` of three agents
(the deck's agent in paidtwice's host, the same agent started by a command behind the protocol proxy, and the
TypeScript example by command). It prints, per case: the runs whose verdict was right (every deck row
matched; the naive code found paying twice), the kills placed at the first try, after a retry and not placed
(read from each point's record), and the wall time. A deck run that went wrong is told by its rows: each row
that failed with its own error (the deck's `Error:` line) and each that differed, with the figures that did.
Every command is the one a user types; the records are read back with `paidtwice.results.load_results`.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from _docs import load_average, write_table

from paidtwice._exceptions import UsageError
from paidtwice.results import CurveRecord, KillsPlaced, Record, load_results

ROOT = Path(__file__).resolve().parent.parent
PAIDTWICE = [sys.executable, "-m", "paidtwice"]
QUESTION = '"What should I wear in Paris today?"'


@dataclass(frozen=True)
class Case:
    """One thing run under load, and the exit code a correct tool gives on it."""

    name: str
    """What the table calls it."""
    args: tuple[str, ...]
    """paidtwice's arguments (the records' file is added with --json)."""
    expected_exit: int
    """The deck matches (0); a sweep of naive and journaled code finds the naive one paying twice (1)."""


def _host_cmd() -> str:
    return f"{sys.executable} -m paidtwice.agent.host paidtwice.agent.weather:app --port $PORT"


CASES = {
    "deck": Case("deck", ("deck",), 0),
    "python": Case("sweep: deck agent, in process", ("sweep", "--script", "steady", "--check"), 1),
    "python-cmd": Case(
        "sweep: deck agent, by command",
        (
            "sweep",
            "--cmd",
            f"PAIDTWICE_AGENT_MODE=naive PAIDTWICE_PAUSE_S=5 {_host_cmd()}",
            "--service",
            "Agent",
            "--handler",
            "run",
            "--input",
            QUESTION,
            "--check",
        ),
        1,
    ),
    "ts": Case(
        "sweep: TypeScript example, by command",
        (
            "sweep",
            "--cmd",
            "AGENT_MODE=naive node agent.ts",
            "--cwd",
            str(ROOT / "examples" / "ts_agent"),
            "--service",
            "Agent",
            "--handler",
            "run",
            "--input",
            QUESTION,
            "--script",
            str(ROOT / "examples" / "ts_agent" / "script.toml"),
            "--check",
        ),
        1,
    ),
}


@contextmanager
def burners(n: int) -> Iterator[None]:
    """n CPU-bound processes for as long as the block runs, each in a group of its own, ended whole after."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(n)
    ]
    try:
        yield
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@dataclass(frozen=True)
class Outcome:
    """One run of one case."""

    right: bool
    """Its exit code was the expected one."""
    kills: KillsPlaced | None
    """Where its sweep's kills landed (None for the deck, whose faults hold their moments)."""
    wall: float
    """Seconds the command took."""


def run_once(case: Case, folder: Path) -> Outcome:
    out = folder / f"{case.name.split(':')[0]}-{time.time_ns()}.json"
    started = time.monotonic()
    done = subprocess.run(
        [*PAIDTWICE, *case.args, "--json", str(out)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    wall = time.monotonic() - started
    if done.returncode != case.expected_exit:
        print(f"    exit {done.returncode}, not {case.expected_exit}:", file=sys.stderr)
        lines = _deck_failures(done.stderr, out) if case.args[0] == "deck" else []
        for line in lines or (done.stderr or done.stdout).strip().splitlines()[-3:]:
            print(f"      {line}", file=sys.stderr)
    kills = None
    if case.args[0] == "sweep" and out.exists():
        kills = KillsPlaced.of(load_results([out]).points)
    return Outcome(done.returncode == case.expected_exit, kills, wall)


def _deck_failures(stderr: str, out: Path) -> list[str]:
    """What the deck said of the rows that went wrong: a row that failed, by its error (which names it), and
    each row whose record differs from the deck, with the figures that differ (from the records on disk)."""
    said = [line.strip() for line in stderr.splitlines() if line.startswith("Error:") or "DIFFERS" in line]
    try:
        records = load_results([out]).records if out.exists() else ()
    except UsageError:
        records = ()  # a run that ended before its first row (bad setup): its own error says why
    return said + [line for record in records if not record.matches for line in _differing(record)]


def _differing(record: Record) -> list[str]:
    if isinstance(record, CurveRecord):
        figures = [
            f"delay {p.delay:g} s: {p.model_calls} paid, predicted {p.predicted_range[0]} to "
            f"{p.predicted_range[1]}"
            for p in record.points
            if not p.agrees
        ]
    else:
        figures = [f"{c.figure}: deck {c.deck}, measured {c.measured}" for c in record.checks if not c.ok]
    return [f"{record.name} differs: {'; '.join(figures) or 'see its record'}"]


def row(case: Case, busy: int, outcomes: list[Outcome]) -> list[str]:
    swept = [o.kills for o in outcomes if o.kills is not None]
    first = sum(k.first_try for k in swept)
    retried = sum(k.after_retry for k in swept)
    missed = sum(k.not_placed for k in swept)
    walls = [o.wall for o in outcomes]
    return [
        case.name,
        str(busy),
        f"{sum(o.right for o in outcomes)} of {len(outcomes)}",
        str(first) if swept else "(held)",
        str(retried) if swept else "-",
        str(missed) if swept else "-",
        f"{statistics.median(walls):.0f} s (max {max(walls):.0f})",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each case under each load (K)")
    parser.add_argument("--burners", default="0,1,2", help="numbers of CPU-bound processes, comma-separated")
    parser.add_argument("--only", action="append", choices=sorted(CASES), help="cases to run (default: all)")
    args = parser.parse_args()
    cases = [CASES[name] for name in (args.only or CASES)]
    loads: list[str] = []
    rows: list[list[str]] = []
    headers = ["case", "busy processes", "right verdict", "first try", "after a retry", "not placed", "wall"]
    with tempfile.TemporaryDirectory(prefix="paidtwice-underload-") as tmp:
        for busy in (int(n) for n in args.burners.split(",")):
            with burners(busy):
                for case in cases:
                    outcomes = []
                    for k in range(args.runs):
                        print(f"{case.name}, {busy} busy, run {k + 1} of {args.runs}", file=sys.stderr)
                        outcomes.append(run_once(case, Path(tmp)))
                        loads.append(load_average())
                    rows.append(row(case, busy, outcomes))
                    print(" | ".join(rows[-1]))
    span = f"{min(loads, key=float)} to {max(loads, key=float)}" if loads else load_average()
    note = (
        "A sweep's kill that misses its moment is run again (--retries, 2 by default) before it is called "
        "not placed; the deck's faults hold their moment open until the kill lands: no retries to count."
    )
    path = write_table("under_load", headers, rows, load=span, note=note)
    print(f"written to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

"""Journals checked per second offline, on one core, beside the time a live check takes on the lab's server.

    .venv/bin/python bench/replay_check.py [--journals 400] [--live 5]

Offline: the deck's agent (journaled mode, then naive mode with its model calls answered by the stub)
replays copies of a journal it recorded on the lab's server, this process pinned to one CPU (the stub's
thread included). Live: the same journal checked the way a server checks it, `restart-as-new` from the
journal's last entry before the output onto the same deployment, timed from the request until the new
invocation's result (read by attaching to it, not by polling).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from paidtwice.engine import wait_until
from paidtwice.lab import AgentMode, Lab
from paidtwice.replay import JournalFile, Replayer, capture_journal


def record(lab: Lab, mode: AgentMode) -> tuple[JournalFile, str, float]:
    """One clean run of the deck's agent in `mode`: its journal, its deployment, and a live check's time."""
    service = f"Bench_{mode}"
    lane = lab.stub.open_lane(lab.stub.lane("default").script)  # type: ignore[union-attr]
    with lab.new_agent(mode=mode, lane=lane, service=service) as agent:
        agent.start()
        deployment = lab.admin.register_deployment(agent.uri).id
        invocation = lab.ingress.send(service, "run", "What should I wear in Paris today?")
        _wait(lambda: _status(lab, invocation) == "completed", "the clean run")
        journal = capture_journal(lab.sql, invocation)
        before_output = journal.entries[-2].index
        times = []
        for _ in range(ARGS.live):
            started = time.monotonic()
            new = lab.admin.restart_as_new(invocation, from_entry=before_output, deployment=deployment)
            answer = lab.ingress.attach(new, timeout=60)  # returns once the new invocation has completed
            times.append(time.monotonic() - started)
            if answer.status_code != 200 or not _completed(lab, new):
                raise SystemExit(f"the live check of {new} did not complete: {answer.status_code}")
    return journal, service, statistics.median(times)


def _wait(condition: Callable[[], bool], what: str) -> None:
    if not wait_until(condition, timeout=60):
        raise SystemExit(f"timed out waiting for {what}")


def _completed(lab: Lab, invocation: str) -> bool:
    return _status(lab, invocation) == "completed"


def _status(lab: Lab, invocation: str) -> str:
    row = lab.sql.invocation(invocation)
    return row.status if row else ""


def offline(journal: JournalFile, service: str, mode: str, count: int) -> tuple[float, float, int]:
    """Journals per CPU second and per wall-clock second replaying `count` copies, and the model calls
    made outside the journal. On a loaded machine the wall clock counts other processes' turns too."""
    os.environ["PAIDTWICE_SERVICE"] = service
    os.environ["PAIDTWICE_AGENT_MODE"] = mode
    import importlib

    import paidtwice.agent.weather as weather

    importlib.reload(weather)
    with Replayer(weather.app) as replayer:
        replayer.replay_journal(journal)  # warm
        started = time.process_time(), time.monotonic()
        results = replayer.replay_journals([journal] * count)
        cpu, wall = time.process_time() - started[0], time.monotonic() - started[1]
    assert all(r.verdict == "replays" for r in results), results[0]
    return count / cpu, count / wall, sum(len(r.outside_calls) for r in results)


def main() -> None:
    with Lab(echo=lambda message: None) as lab:
        recorded = {mode: record(lab, mode) for mode in ("journaled", "naive")}
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print("replay-check, offline on one core vs live restart-as-new on the lab's server (loaded machine)")
    for mode, (journal, service, live) in recorded.items():
        per_cpu, per_wall, calls = offline(journal, service, mode, ARGS.journals)
        print(
            f"{mode:9} journal, {len(journal.entries):2} entries, {calls // ARGS.journals} stub calls each: "
            f"{per_cpu:5.0f} journals per CPU second ({per_wall:4.0f}/s wall clock); "
            f"live check {live * 1000:4.0f} ms (median of {ARGS.live}): {per_cpu * live:4.0f}x faster "
            f"({per_wall * live:4.0f}x by the wall clock)"
        )


parser = argparse.ArgumentParser()
parser.add_argument("--journals", type=int, default=400)
parser.add_argument("--live", type=int, default=5)
ARGS = parser.parse_args()

if __name__ == "__main__":
    main()

"""An approval raced against a timer, answered late: on a busy machine the sweep's resolver can send the
answer after the timer fired, and the clean run then takes the timer's branch where the handler's code and
the resolution meant the approval's. The sweep sees it from the journal and runs the clean run again, or, in
a crash point's replay, the point's run. Here the resolver is made late on purpose (it holds its answer until
the timer's completion is journaled), on any machine."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from paidtwice.lab import Lab, Poller, wait_for
from paidtwice.results import CleanRun, PointResult
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._approvals import Resolution, Resolver
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._point import point_run
from paidtwice.sweep._runs import CLOCK_RETRIES, SweepRun, clean_run
from paidtwice.sweep._sweep import _plan
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "approval_agent"


def _timer_fired(resolver: Resolver) -> bool:
    assert resolver.journal_labels is not None
    return "Notification: Sleep" in resolver.journal_labels()


@pytest.fixture
def late(monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[str]]:
    """`late(n)`: the resolvers of the first n invocations answer only once their handler's timer fired (its
    completion journaled), as one on a machine at load 50 did; the list of those invocations, as they come.
    `late(n, replays=True)`: only those of points' runs, once the kill released their held waits."""

    def make(runs: int, *, replays: bool = False) -> list[str]:
        invocations: list[str] = []
        journaled = Resolver._results_journaled

        def held(self: Resolver, events: list[dict[str, Any]], since: float) -> bool:
            if replays and self.released_at is None:
                return journaled(self, events, since)
            if self.invocation_id not in invocations and len(invocations) < runs:
                invocations.append(self.invocation_id)
            if self.invocation_id in invocations and not _timer_fired(self):
                return False
            return journaled(self, events, since)

        monkeypatch.setattr(Resolver, "_results_journaled", held)
        return invocations

    return make


_TARGET = AppTarget(
    "agent:app", "Approval", "refund_by_noon", "refund order 42", mode="raced", cwd=str(AGENT)
)
"""The handler racing its approval against a 2 s timer."""


def _clean(lab: Lab, monkeypatch: pytest.MonkeyPatch, after: float) -> tuple[CleanRun, SweepRun, list[str]]:
    """The sweep's clean run of the handler racing its approval against a 2 s timer; what the lab said."""
    said: list[str] = []
    monkeypatch.setattr(lab, "echo", said.append)
    target = dataclasses.replace(_TARGET, resolution=Resolution(after=after))
    script = load_script_file(AGENT / "script.toml", "steady")
    poller = Poller(lambda: lab.sql, lab.cancelled)
    try:
        tag = f"s{lab.next_id()}_0_late_clean"
        record, run = clean_run(lab, threading.Event(), poller, target, script, tag)
    finally:
        poller.stop()
    return record, run, [line for line in said if "race to a timer" in line]


def _answer(lab: Lab, invocation_id: str) -> str:
    output: list[str] = []

    def answered() -> bool:
        output[:] = [lab.ingress.output(invocation_id) or ""]
        return bool(output[0])

    wait_for(f"the output of {invocation_id}", answered, timeout=30.0, stop=lambda: False)
    return str(json.loads(output[0]))


def _retries(lines: Sequence[str]) -> list[str]:
    return [line for line in lines if "run again" in line]


def test_a_clean_run_whose_approval_lost_to_its_timer_is_run_again(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, late: Callable[..., list[str]]
) -> None:
    lost = late(1)
    record, run, said = _clean(lab, monkeypatch, after=0.0)
    [first] = lost
    assert record.invocation_id != first
    # The run made late took the timer's branch; the one run again, the approval's.
    assert "no answer in time" in _answer(lab, first)
    assert record.answer is not None and "no answer in time" not in record.answer, record.answer
    assert json.loads(record.answer).startswith("refund drafted ("), record.answer
    # Run again once (once more only if the machine was so busy that the resolver lost the race on its own).
    line = said[0]
    assert said == _retries(said), said
    assert line.startswith("paidtwice: raced/steady: the clean run lost its race to a timer ("), line
    assert line.endswith(f"run again (1 of {CLOCK_RETRIES} retries)") and "awakeable sign_" in line, line
    # The approval's branch is planned: waiting for it is a crash point.
    assert [p.kind for p in _plan(run)].count("waiting") == 1


def test_a_clean_run_that_keeps_losing_goes_on_with_the_timers_branch(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, late: Callable[..., list[str]]
) -> None:
    lost = late(CLOCK_RETRIES + 1)
    record, run, said = _clean(lab, monkeypatch, after=0.0)
    assert len(lost) == CLOCK_RETRIES + 1 and record.invocation_id == lost[-1]
    assert record.answer is not None and "no answer in time" in record.answer, record.answer
    assert [line.split("; ")[-1] for line in _retries(said)] == [
        f"run again ({n} of {CLOCK_RETRIES} retries)" for n in range(1, CLOCK_RETRIES + 1)
    ]
    [gave_up] = [line for line in said if "run again" not in line]
    assert "the sweep goes on with the timer's branch" in gave_up, gave_up
    assert [p.kind for p in _plan(run)].count("waiting") == 0


def test_an_answer_meant_after_the_timer_is_not_run_again(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    # Answered 10 s after the handler began to wait, past its 2 s timer: the timer winning is what was meant.
    record, _, said = _clean(lab, monkeypatch, after=10.0)
    assert record.answer is not None and "no answer in time" in record.answer, record.answer
    assert not said, said


def _waiting_point(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, late: Callable[..., list[str]], runs: int
) -> tuple[PointResult, list[str], list[str]]:
    """The point killed while the handler waits for its approval, its replays' resolvers late for the first
    `runs` of its runs; its record, what the lab said of its race, and the invocations made late."""
    record, clean, said = _clean(lab, monkeypatch, after=0.0)
    assert not said, said  # the clean run itself is not made late
    [point] = [p for p in _plan(clean) if p.kind == "waiting"]
    lost = late(runs, replays=True)
    script = load_script_file(AGENT / "script.toml", "steady")
    poller = Poller(lambda: lab.sql, lab.cancelled)
    lines: list[str] = []
    monkeypatch.setattr(lab, "echo", lines.append)
    try:
        tag = f"s{lab.next_id()}_0_late_{point.order}"
        result = point_run(
            lab, threading.Event(), poller, _TARGET, script, "steady", record, point, tag=tag,
            kills=KillPlan(retries=1),
        )  # fmt: skip
    finally:
        poller.stop()
    return result, [line for line in lines if "race to a timer" in line], lost


def test_a_point_whose_replay_lost_its_approval_to_the_timer_is_run_again(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, late: Callable[..., list[str]]
) -> None:
    result, said, lost = _waiting_point(lab, monkeypatch, late, runs=1)
    [first] = lost
    # The replay made late took the timer's branch; the point's run again took the approval's, as the clean
    # run did: that is the record, placed and decided.
    assert "no answer in time" in _answer(lab, first)
    assert result.invocation_id != first and result.answer_matches, result.answer
    assert result.confirmed and result.retries == 1, result.not_placed
    assert result.missed[0].startswith("its replay lost a race to a timer (awakeable sign_"), result.missed
    [line] = said
    assert line.endswith("run again (1 of 1 retries)") and f"#{result.order} " in line, line


def test_a_point_whose_replays_keep_losing_is_undecided(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, late: Callable[..., list[str]]
) -> None:
    result, said, lost = _waiting_point(lab, monkeypatch, late, runs=2)
    assert len(lost) == 2 and result.invocation_id == lost[-1]
    # No verdict on a replay whose answer is the timer's only because the machine ran the resolver late.
    assert not result.confirmed and "its replay lost a race to a timer" in result.not_placed, result
    assert len(said) == 1, said

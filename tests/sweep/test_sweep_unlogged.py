"""A Virtual Object with operations the host does not log (an eager ctx.get, ctx.set) and two one-message
model calls: every kill lands where its point says, and the extra dollars are those of the extra calls."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from paidtwice.engine import epoch
from paidtwice.lab import Lab
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep import short_pause
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "notes_agent"


@pytest.fixture(scope="module")
def matrix(lab: Lab) -> SweepMatrix:
    target = AppTarget("agent:app", "Notes", "add", "buy milk", mode="Notes", cwd=str(AGENT), key="alice")
    script = load_script_file(AGENT / "script.toml", "steady")
    [swept] = sweep_targets(lab, targets=[target], scripts=[("steady", script)])
    return swept


def test_every_kill_lands_where_its_point_says(matrix: SweepMatrix) -> None:
    assert "Command: GetEagerState" in matrix.clean.journal
    for point in matrix.points:
        assert point.confirmed, (point.crash_point, point.journal_at_kill)
        assert point.status == "completed" and point.answer_matches, point.crash_point
    pause = next(p for p in matrix.points if p.kind == "pause")
    # The input, the state read (sent with the sleep's command) and the sleep; on a slow machine also the
    # sleep's end, which the server journals while the host withholds it from the handler: nothing after it.
    sleep = matrix.clean.journal.index("Command: Sleep") + 1
    journal = [entry.type for entry in pause.journal]
    assert pause.journal_at_kill in (sleep, sleep + 1), (pause.journal_at_kill, journal)
    assert journal[sleep : pause.journal_at_kill] in ([], ["Notification: Sleep"]), journal
    # Each "after entry N" names the entry the journal held last at the kill.
    for point in matrix.points:
        if point.kind == "after-entry":
            index = point.journal_at_kill - 1
            assert point.crash_point == f"after entry {index} ({matrix.clean.journal[index]})"


def test_extra_dollars_are_those_of_the_extra_calls(matrix: SweepMatrix) -> None:
    # Both questions are turn 1 of their conversations (one message each): neither is extra in a clean run.
    for point in matrix.points:
        extra = [line for line in point.model_log if line.extra]
        assert len(extra) == point.extra_model_calls, point.crash_point
        assert point.extra_cost_usd == pytest.approx(sum(line.cost_usd for line in extra)), point.crash_point
        if point.extra_model_calls == 0:
            assert point.extra_cost_usd == 0, point.crash_point
        # Outside flight, each extra call asks again for an answer that had come back before the kill.
        assert point.answers_asked_again == point.extra_model_calls - point.model_calls_in_flight
    assert any(p.answers_asked_again for p in matrix.points)


def test_a_pause_that_ended_before_the_kill_is_said_plainly(matrix: SweepMatrix) -> None:
    pause = next(p for p in matrix.points if p.kind == "pause")
    assert short_pause(pause) is None  # it landed
    woke = next(epoch(e.appended_at) for e in pause.journal if e.type == "Notification: Sleep")
    slept = next(epoch(e.appended_at) for e in pause.journal if e.type == "Command: Sleep")
    assert woke is not None and slept is not None and pause.started_at is not None
    # The same point as it would read had the lab killed it 0.2 s after the pause ended.
    late = dataclasses.replace(pause, confirmed=False, killed_at=woke + 0.2 - pause.started_at)
    why = short_pause(late)
    assert why is not None
    assert why.startswith(f"the pause lasted {woke - slept:.2f}s and ended before the kill")
    assert f"which came {woke + 0.2 - slept:.2f}s after it began" in why

"""A handler under restate-sdk's preview explicit_recovery, swept beside the same handler journaled as usual:
the sweep knows the mode, and measures that a journaled answer is paid again after a kill."""

from __future__ import annotations

from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "explicit_agent"


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        AppTarget("agent:app", name, "run", "a trip", mode=name, cwd=str(AGENT))
        for name in ("Explicit", "Journaled")
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


def test_the_sweep_knows_which_handler_runs_under_explicit_recovery(matrices: dict[str, SweepMatrix]) -> None:
    assert matrices["Explicit"].clean.explicit_recovery is True
    assert matrices["Journaled"].clean.explicit_recovery is False
    for matrix in matrices.values():
        assert matrix.clean.model_calls == matrix.clean.journaled_model_calls == 2
        assert all(p.confirmed for p in matrix.points), [p.crash_point for p in matrix.points]


def test_a_journaled_answer_is_paid_again_after_a_kill_only_under_explicit_recovery(
    matrices: dict[str, SweepMatrix],
) -> None:
    explicit, journaled = matrices["Explicit"], matrices["Journaled"]
    assert [p.crash_point for p in explicit.points] == [p.crash_point for p in journaled.points]
    answered = [p for p in explicit.points if p.model_answers_at_kill and p.status == "completed"]
    assert answered, [p.crash_point for p in explicit.points]
    for point in answered:
        # Every answer that had come back is asked for again: the retry runs the handler from the start.
        assert point.answers_asked_again >= point.model_answers_at_kill, point.crash_point
        assert point.pays_twice, point.crash_point
    for point in journaled.points:
        assert point.answers_asked_again == 0, point.crash_point
        assert point.extra_model_calls == point.model_calls_in_flight, point.crash_point
    extra = [sum(p.extra_model_calls for p in m.points) for m in (explicit, journaled)]
    assert extra[0] > extra[1], extra


def test_the_summary_says_journaled_answers_are_asked_for_again(matrices: dict[str, SweepMatrix]) -> None:
    survived, paid, _ = matrices["Explicit"].summary()
    assert "runs under explicit_recovery" in survived and "asked for again after a kill" in survived
    assert "journaled or not (explicit_recovery)" in paid
    survived, paid, _ = matrices["Journaled"].summary()
    assert "explicit_recovery" not in survived + paid
    assert "outside the journal" in paid

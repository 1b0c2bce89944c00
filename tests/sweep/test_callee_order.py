"""A tree whose callees run in another order in the crash points' runs than in the clean run
(tests/sweep/order_agent: the sent clerk runs first in the clean run, last in every later run): each kill
inside a callee lands in the callee that the clean run's moment was in, named by its place in the tree
(which call or send of its caller started it), not by the tree's count of steps and operations."""

from __future__ import annotations

import shutil
from pathlib import Path

from paidtwice.lab import Lab
from paidtwice.sweep import Answers, sweep
from paidtwice.targets import TargetSpec

AGENT = Path(__file__).resolve().parent / "order_agent"


def test_a_kill_in_a_callee_lands_in_that_callee_whichever_runs_first(lab: Lab, tmp_path: Path) -> None:
    app_dir = tmp_path / "order_agent"
    shutil.copytree(AGENT, app_dir, ignore=shutil.ignore_patterns("__pycache__", "first_run_done"))
    [matrix] = sweep(
        TargetSpec(app="desk", app_dir=app_dir, service="Desk", handler="answer"),
        answers=Answers(variations=("steady",)),
        lab=lab,
    )
    assert matrix.clean.status == "completed"
    # The clean run filed the sent line first: a point in each clerk, named by the clean run's order.
    inside = [p for p in matrix.points if "Clerk/file" in p.crash_point]
    assert len(inside) >= 4, [p.crash_point for p in matrix.points]
    missed = [f"{p.crash_point}: {p.not_placed}" for p in matrix.points if not p.confirmed]
    assert not missed, missed

"""The protocol proxy holds a journal at the entry a point names even when the agent proposes several step
results at once: the results past it never reach the server before the kill."""

from __future__ import annotations

import sys
from pathlib import Path

from support import assert_eventually

from paidtwice.lab import Lab
from paidtwice.stub import script_by_name
from paidtwice.sweep._runs import SweepRun
from paidtwice.targets import CommandTarget

TOGETHER = Path(__file__).resolve().parent / "together_app"


def _attempt_ended(lab: Lab, invocation_id: str) -> bool:
    row = lab.sql.invocation(invocation_id)
    return row is not None and row.status != "running"


def test_results_proposed_together_are_held_past_the_moment(lab: Lab) -> None:
    target = CommandTarget(
        f"{sys.executable} -m paidtwice.agent.host agent:app --port $PORT",
        "Together",
        "run",
        '"q"',
        mode="together",
        cwd=str(TOGETHER),
        stuck_after=None,
    )
    # The input and three RunCommands, then the first step's result: the other two are ready with it.
    held_at = 5
    run = SweepRun(lab, target, script_by_name("steady"), tag="held_together", gate=None, hold=held_at)
    with run.agent:
        invocation_id = run.start()
        assert_eventually(lambda: run.agent.held(invocation_id), timeout=120)
        run.agent.kill()
        # Once the server saw the attempt end, every result that reached it is journaled.
        assert_eventually(lambda: _attempt_ended(lab, invocation_id), timeout=120)
        labels = [e.label() for e in run.journal()]
        lab.admin.kill(invocation_id)
    assert len(labels) == held_at, labels
    kinds = [label.split(" ")[:2] for label in labels[1:]]
    assert kinds == [["Command:", "Run"]] * 3 + [["Notification:", "Run"]]

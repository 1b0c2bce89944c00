"""A tree whose callees called at once ask the model in another order in the crash points' runs than in the
clean run (tests/sweep/held_order_agent: the writer asks first in the clean run, last in every later run):
a point in flight inside a callee's model call holds that callee's call at the stub, not the call that
comes n-th in the tree: the host names each call by its callee's place and the callee's own count, as its
gates, and the stub holds the call so named."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from paidtwice.lab import Lab
from paidtwice.stub import _ledger
from paidtwice.sweep import Answers, sweep
from paidtwice.targets import TargetSpec

AGENT = Path(__file__).resolve().parent / "held_order_agent"


def test_a_held_call_is_the_one_the_clean_run_s_moment_was_in(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAIDTWICE_PLANS", str(tmp_path / "plans"))  # the clean run first, alone
    app_dir = tmp_path / "held_order_agent"
    shutil.copytree(AGENT, app_dir, ignore=shutil.ignore_patterns("__pycache__", "first_run_done", "drafted"))
    lanes: set[str] = set()
    open_call = _ledger.Ledger.open_model_call

    def opened(self: _ledger.Ledger, **fields: Any) -> int:
        lanes.add(fields["lane"])
        return open_call(self, **fields)

    monkeypatch.setattr(_ledger.Ledger, "open_model_call", opened)
    [matrix] = sweep(
        TargetSpec(app="desk", app_dir=app_dir, service="Desk", handler="answer"),
        answers=Answers(variations=("steady",)),
        lab=lab,
    )
    assert matrix.clean.status == "completed"
    calls: dict[str, list[_ledger.ModelCall]] = {}
    for lane in lanes:
        for call in lab.stub.ledger.model_calls(lane):
            calls.setdefault(call.invocation_id, []).append(call)
    clean = sorted(calls[matrix.clean.invocation_id], key=lambda c: c.call)
    assert [c.by for c in clean] == ["Writer/draft", "Editor/review", "Writer/draft"], clean
    inside = [p for p in matrix.points if p.kind in ("in-flight-model", "in-flight-parallel")]
    assert inside, [p.crash_point for p in matrix.points]
    # Each point's held calls (cut off by its kill) were made by the handlers of the clean run's calls.
    held = {
        p.crash_point: sorted(c.by for c in calls[p.invocation_id] if c.delivered is False) for p in inside
    }
    wanted = {p.crash_point: sorted(clean[n - 1].by for n in _numbers(p.crash_point)) for p in inside}
    assert held == wanted


def _numbers(name: str) -> list[int]:
    """The model calls a point's name holds: "in flight: model calls 1 and 2 together in ..." -> [1, 2]."""
    words = name.split(" together")[0].removeprefix("in flight: ").replace(",", " ").split()
    return [int(w) for w in words if w.isdigit()]

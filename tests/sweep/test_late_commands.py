"""A `--cmd` sweep whose proxy reads the agent's commands late, as a loaded machine makes it: in the clean run
of tests/ts_corpus's ChatSession/send, the state read and the step's RunCommand (the TypeScript SDK writes
them together, before the step's model request) reach the proxy's log only once the stub saw the model call
begin. The point in flight inside that call is planned with both, so its kill is placed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from support import DEADLINE

from paidtwice.agent import _proxy_attempt
from paidtwice.lab import Lab
from paidtwice.stub import _ledger
from paidtwice.sweep import Answers, KillPlan, sweep
from paidtwice.targets import TargetSpec

CORPUS = Path(__file__).resolve().parents[1] / "ts_corpus"


def test_commands_read_after_the_call_began_are_in_its_moment(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAIDTWICE_PLANS", str(tmp_path / "plans"))  # the clean run first, alone
    asked = threading.Event()
    open_call, log_outbound = _ledger.Ledger.open_model_call, _proxy_attempt.Attempt.log_outbound

    def opened(self: _ledger.Ledger, **fields: Any) -> int:
        asked.set()
        return open_call(self, **fields)

    def late(self: _proxy_attempt.Attempt, kind: int, body: bytes) -> None:
        if _proxy_attempt.FIRST_COMMAND <= kind < _proxy_attempt.FIRST_NOTIFICATION and not asked.is_set():
            # The proxy's loop stalls, as under load, until the first model call (the clean run's) began.
            assert asked.wait(timeout=DEADLINE), "the agent asked the model nothing"
        log_outbound(self, kind, body)

    monkeypatch.setattr(_ledger.Ledger, "open_model_call", opened)
    monkeypatch.setattr(_proxy_attempt.Attempt, "log_outbound", late)
    what = TargetSpec(command="node src/chat.ts", app_dir=CORPUS, handlers=("ChatSession/send",))
    [matrix] = sweep(what, answers=Answers(variations=("steady",)), kills=KillPlan(parallel=4), lab=lab)
    assert asked.is_set() and matrix.clean.status == "completed"
    names = [p.crash_point for p in matrix.points]
    assert "in flight: model call 1" in names, names
    missed = [(p.crash_point, p.not_placed) for p in matrix.points if not p.confirmed]
    assert not missed, missed

"""On a real stub, no server: a call no turn answers is recorded once, however often the agent's retries ask
it before the sweep stops the invocation; distinct unanswered calls are each recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from paidtwice.stub import StubModel
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._runs import unanswered_calls

SCRIPT = """\
[[turn]]
when = "(?i)select the most appropriate support team"
text = "<selection>technical</selection>"
"""


def _ask(base_url: str, system: str) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "refund missing"},
    ]
    httpx.post(
        f"{base_url}/chat/completions",
        json={"model": "m", "messages": messages},
        headers={"x-paidtwice-invocation": "inv_1"},
        timeout=30.0,
    )


def test_a_call_asked_again_by_a_retry_is_recorded_once(tmp_path: Path) -> None:
    path = tmp_path / "script.toml"
    path.write_text(SCRIPT)
    with StubModel() as stub:
        lane = stub.open_lane(load_script_file(path), name="unanswered-once")
        for _ in range(3):  # the first ask and two retries, each before the sweep killed the invocation
            _ask(lane.base_url, "You are a technical support specialist.")
        assert len([c for c in lane.model_calls() if c.unanswered]) == 3
        (reason,) = unanswered_calls(lane)
        assert reason.endswith("(model call 1)") and "technical support specialist" in reason
        _ask(lane.base_url, "You are a billing support specialist.")
        first, other = unanswered_calls(lane)
        assert first == reason and "billing support specialist" in other and other.endswith("(model call 4)")

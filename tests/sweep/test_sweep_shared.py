"""A Workflow's shared handler that waits for a promise only the workflow's run resolves (Restate's
notify-when-ready pattern) is never advised, nor called, alone: called without a run it would wait for good,
and `--resolve` cannot answer a Workflow's promise. One that waits on nothing the run alone resolves is
still offered by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from paidtwice._exceptions import UsageError
from paidtwice.targets import AppTarget
from paidtwice.targets._discovery import AppHandler, choose_handlers

AGENT = Path(__file__).resolve().parent / "notify_agent"


def test_a_shared_handler_waiting_on_the_run_is_not_advised_alone(capsys: pytest.CaptureFixture[str]) -> None:
    targets = AppTarget.discovered("agent:app", [], "Hi?", app_dir=AGENT, seed=0)
    assert [t.handler for t in targets] == ["on_send"]
    said = capsys.readouterr().err
    assert (
        "not swept: Notifier/on_notify, a Workflow's shared handler, waits for promise 'agent_response', "
        "which only the workflow's run (Notifier/on_send) resolves"
    ) in said, said
    assert "--handler" not in said
    # Its service named: the run is swept, the shared handler left out with the same words.
    targets = AppTarget.discovered("agent:app", ["Notifier"], "Hi?", app_dir=AGENT, seed=0)
    assert [t.handler for t in targets] == ["on_send"]
    assert "not swept: Notifier/on_notify" in capsys.readouterr().err


def test_a_shared_handler_waiting_on_the_run_named_alone_is_refused_before_anything_starts() -> None:
    with pytest.raises(UsageError) as raised:
        AppTarget.discovered("agent:app", ["Notifier/on_notify"], "a@b.c", app_dir=AGENT, seed=0)
    assert "--resolve cannot answer it" in str(raised.value)


def test_a_shared_handler_waiting_on_nothing_but_the_run_is_still_offered() -> None:
    def handler(name: str, kind: str, waits: tuple[str, ...] = ()) -> AppHandler:
        return AppHandler("Flow", name, "WORKFLOW", kind, None, waits_on_the_run=waits)

    found = [handler("run", "WORKFLOW"), handler("approve", "SHARED"), handler("notify", "SHARED", ("done",))]
    chosen, left_out = choose_handlers(found, [], app="agent:app")
    assert [h.handler for h in chosen] == ["run"]
    assert [h.handler for h in left_out] == ["approve", "notify"]
    chosen, _ = choose_handlers(found, ["Flow/approve"], app="agent:app")
    assert [h.handler for h in chosen] == ["approve"]

"""The host tags every model request with the invocation its attempt serves: the stub's ledger counts the
calls of a user's agent that sends no header per invocation, many invocations in flight at once in one
process, whichever HTTP client makes them."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from support import assert_eventually

from paidtwice.agent._env import SERVICE_AS, STEP_LOG
from paidtwice.lab import Lab
from paidtwice.stub._ledger import ModelCall
from paidtwice.stub._server import Lane
from paidtwice.stub._turns import load_script_file
from paidtwice.targets import DeckTarget

AGENTS = Path(__file__).parents[1] / "agents"
CLIENTS = Path(__file__).parents[1] / "sweep" / "clients"


def _send_at_once(lab: Lab, service: str, handler: str, inputs: list[Any]) -> list[str]:
    with ThreadPoolExecutor(max_workers=len(inputs)) as pool:
        return list(pool.map(lambda given: lab.ingress.send(service, handler, given), inputs))


def _completed(lab: Lab, ids: list[str]) -> Callable[[], bool]:
    def done() -> bool:
        rows = lab.sql.invocations(ids)
        return len(rows) == len(ids) and all(row.status == "completed" for row in rows.values())

    return done


def _serve(
    lab: Lab, lane: Lane, target: str, service: str, cwd: Path, step_log: Path | None = None
) -> tuple[Any, str]:
    """The app's `service` served under a name of its own on this lab, its model on `lane` (with a step log
    at `step_log`, when given)."""
    renamed = f"{service}_{lab.next_id()}"
    app = DeckTarget("journaled", app=target, cwd=str(cwd), pause=None)
    logged = {STEP_LOG: str(step_log)} if step_log is not None else {}
    agent, _trace = lab.launch(app, lane, renamed, env={SERVICE_AS: f"{service}={renamed}", **logged})
    return agent, renamed


def test_an_openai_agent_without_a_header_is_counted_per_invocation(lab: Lab) -> None:
    lane = lab.stub.open_lane(load_script_file(AGENTS / "concierge.toml"), name=f"tagless-{lab.next_id()}")
    lane.latency = 2.0  # every call is still in flight when the other invocations' calls arrive
    agent, service = _serve(lab, lane, "concierge:app", "Concierge", AGENTS)
    with agent:
        agent.start()
        lab.admin.register_deployment(agent.uri)
        asks = [1 + n % 3 for n in range(12)]
        ids = _send_at_once(lab, service, "plan", [{"city": "Lisbon", "asks": a, "pause": 0} for a in asks])
        assert_eventually(_completed(lab, ids), timeout=180, what="12 invocations to complete")
    assert {i: len(lane.model_calls(i)) for i in ids} == dict(zip(ids, asks, strict=True))
    calls = lane.model_calls()
    assert len(calls) == sum(asks) and all(call.invocation_id in ids for call in calls)

    # Several invocations' calls were in flight at once in the one process, each told apart.
    def overlap(a: ModelCall, b: ModelCall) -> bool:
        return a.started < (b.finished or 0) and b.started < (a.finished or 0)

    assert any(overlap(a, b) for a in calls for b in calls if a.invocation_id != b.invocation_id)


def test_every_http_client_is_tagged_with_its_invocation(lab: Lab, tmp_path: Path) -> None:
    # http.client (urllib, requests), aiohttp and httpx2 (the anthropic client): two model calls each; each
    # call also carries its name as the host's gates name it (with a step log), which the stub's holds go by.
    script = load_script_file(CLIENTS / "script.toml")
    served = []
    for target, service in (
        ("urllib_agent:app", "UrllibAgent"),
        ("requests_agent:app", "RequestsAgent"),
        ("aiohttp_agent:app", "AiohttpAgent"),
        ("anthropic_agent:app", "AnthropicAgent"),
    ):
        lane = lab.stub.open_lane(script, name=f"tagged-{service.lower()}-{lab.next_id()}")
        lane.latency = 0.5
        agent, renamed = _serve(lab, lane, target, service, CLIENTS, tmp_path / f"{service}.jsonl")
        served.append((agent, renamed, lane))
    try:
        sent = []
        for agent, renamed, lane in served:
            agent.start()
            lab.admin.register_deployment(agent.uri)
            ids = _send_at_once(lab, renamed, "quote", ["How much is 120 EUR in USD?"] * 3)
            sent.append((renamed, lane, ids))
        for renamed, lane, ids in sent:
            assert_eventually(_completed(lab, ids), timeout=180, what=f"{renamed} to complete")
            assert {i: len(lane.model_calls(i)) for i in ids} == dict.fromkeys(ids, 2), renamed
            assert lane.model_calls("") == [], renamed
            named = {i: [c.named for c in lane.model_calls(i)] for i in ids}
            assert named == dict.fromkeys(ids, ["model:1", "model:2"]), renamed
    finally:
        for agent, _, _ in served:
            agent.close()

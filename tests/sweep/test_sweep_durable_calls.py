"""Restate's Vercel AI template as it ships (tests/sweep/ts_durable): the model wrapped with
@restatedev/vercel-ai-middleware's `durableCalls(ctx)`, which journals each model call as a `ctx.run` step
whose result is the provider's answer (superjson), and the tool's work a `ctx.run` step of its own. Swept by
command: the journaled agent passes (every kill placed, no point pays twice), its naive twin (no middleware)
pays again for the answers that had come back before the kill."""

from __future__ import annotations

from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix
from paidtwice.stub import load_script_file
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._sweep import sweep_targets
from paidtwice.targets import CommandTarget

DURABLE = Path(__file__).parent / "ts_durable"
QUESTION = {"prompt": "What's the weather in San Francisco?"}
AGENTS = ("agent", "agent_naive")


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    """Both agents swept by command at once, on the session's server."""
    targets = [
        CommandTarget(f"node {name}.ts", "agent", "run", QUESTION, mode=name, cwd=str(DURABLE))
        for name in AGENTS
    ]
    script = load_script_file(DURABLE / "script.toml")
    done = sweep_targets(lab, targets=targets, scripts=[("steady", script)], kills=KillPlan(parallel=8))
    return {m.mode: m for m in done}


@pytest.mark.parametrize("name", AGENTS)
def test_durable_calls_pass_and_their_naive_twin_fails(matrices: dict[str, SweepMatrix], name: str) -> None:
    matrix = matrices[name]
    points = [(p.crash_point, p.pays_twice, p.answers_asked_again, p.not_placed) for p in matrix.points]
    assert matrix.clean.status == "completed" and matrix.clean.model_calls == 2, points
    assert all(p.status == "completed" and p.answer_matches for p in matrix.points), points
    # Every kill landed at its moment, the middleware's steps included.
    assert points and all(p.confirmed for p in matrix.points), points
    assert not [p.undecided for p in matrix.points if p.undecided], points
    if name == "agent":
        # The middleware's steps carry the model's answers: each call is placed in its step, none is paid
        # again but for calls cut off in flight.
        assert matrix.clean.calls_in_steps == (1, 2), points
        assert not any(p.pays_twice for p in matrix.points), points
        assert all(p.extra_model_calls <= p.model_calls_in_flight for p in matrix.points), points
    else:
        assert matrix.clean.calls_in_steps == (), points
        answered = [p for p in matrix.points if p.model_answers_at_kill and p.kind != "in-flight-model"]
        assert answered and all(p.pays_twice and p.answers_asked_again >= 1 for p in answered), points

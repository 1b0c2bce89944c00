"""Restate's TypeScript template (tests/sweep/ts_shapes) swept by command under `steady`, on the session's
server: its model call journaled and plain, made with the openai client, with `fetch`, with the Vercel AI SDK
(as Restate ships the template) and with the anthropic client, and its workflow-parallel agent. Naive pays
twice, journaled passes. (It was swept beside tests/sweep/test_sweep_cmd_vs_app.py's agents; in a file of
its own, another worker sweeps it.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import missed_by_the_wire

from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix
from paidtwice.stub import load_script_file
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._sweep import sweep_targets
from paidtwice.targets import CommandTarget

TS = Path(__file__).parent / "ts_shapes"
TS_NAIVE = ("template_naive", "template_fetch_naive", "template_ai_naive", "template_anthropic_naive")
TS_JOURNALED = ("template", "template_fetch", "template_ai", "template_anthropic", "workflow_parallel")


@pytest.fixture(scope="module")
def ts_matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        CommandTarget(
            "node agent.ts", "TsShapes", h, {"message": "Weather in SF?"}, mode=f"ts {h}", cwd=str(TS)
        )
        for h in (*TS_NAIVE, *TS_JOURNALED)
    ]
    script = load_script_file(TS / "script.toml")
    swept = sweep_targets(lab, targets=targets, scripts=[("steady", script)], kills=KillPlan(parallel=16))
    return {m.mode: m for m in swept}


@pytest.mark.parametrize("handler", [*TS_NAIVE, *TS_JOURNALED])
def test_restates_typescript_template_fails_naive_and_passes_journaled(
    ts_matrices: dict[str, SweepMatrix], handler: str
) -> None:
    """The template's tool step calls no model: a plain model call before it is outside the journal, and a
    kill after its answer came back pays for it again; in `ctx.run`, three at once then a fourth, nothing
    completed is paid again."""
    matrix = ts_matrices[f"ts {handler}"]
    points = [(p.crash_point, p.pays_twice, p.answers_asked_again, p.not_placed) for p in matrix.points]
    assert all(p.status == "completed" and p.answer_matches for p in matrix.points), points
    if handler in TS_NAIVE:
        assert matrix.clean.calls_in_steps == (), points
        answered = [p for p in matrix.points if p.model_answers_at_kill and p.kind != "in-flight-model"]
        assert answered and all(p.pays_twice and p.answers_asked_again >= 1 for p in answered), points
    else:
        assert matrix.clean.calls_in_steps == tuple(range(1, matrix.clean.model_calls + 1)), points
        assert not any(p.pays_twice for p in matrix.points), points
        assert all(p.extra_model_calls <= p.model_calls_in_flight for p in matrix.points), points
    assert not missed_by_the_wire(matrix.points), missed_by_the_wire(matrix.points)
    assert not [p.undecided for p in matrix.points if p.undecided], points

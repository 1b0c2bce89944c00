"""The same Python agents swept in process (`--app`, paidtwice's host) and by command (`--cmd`, hypercorn on
$PORT behind the protocol proxy, seen only on the wire) get the same verdict and the same counts, point by
point: a model call outside the journal is paid again whichever way the agent is served.

The corpus: every shape of tests/sweep/shapes_agent (a plain call before a journaled tool, before a journaled
step that calls no model, before tools run at once, between two journaled calls, streamed; each with its
journaled twin; three journaled calls at once then a fourth) and the travel example (the issue's case). All
of them are swept at once, both ways, under `steady`, on the session's server. Beside them, by command only,
Restate's TypeScript template (tests/sweep/ts_shapes) with its model call journaled and plain, made with the
openai client, with `fetch`, with the Vercel AI SDK (as Restate ships the template) and with the anthropic
client, and its workflow-parallel agent."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.results import PointResult, SweepMatrix
from paidtwice.stub import load_script_file
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._sweep import sweep_targets
from paidtwice.targets import AppTarget, CommandTarget, Target

ROOT = Path(__file__).resolve().parents[2]
SHAPES = Path(__file__).parent / "shapes_agent"
TRAVEL = ROOT / "examples" / "travel_agent"
TS = Path(__file__).parent / "ts_shapes"
TS_NAIVE = ("template_naive", "template_fetch_naive", "template_ai_naive", "template_anthropic_naive")
TS_JOURNALED = ("template", "template_fetch", "template_ai", "template_anthropic", "workflow_parallel")
QUESTION = {"message": "What is the weather in San Francisco?"}

NAIVE = ("tool_after_call", "tools_together", "step_after_call", "between", "streamed")
"""The shapes_agent handlers with a model call outside the journal."""
JOURNALED = ("tool_after_call_journaled", "tools_together_journaled", "step_after_call_journaled")
JOURNALED += ("streamed_journaled", "workflow_parallel")

_Agent = tuple[Path, str, str, object]
"""(directory, service, handler, input)."""
AGENTS: list[_Agent] = [
    *((SHAPES, "Shapes", handler, "120 EUR in USD?") for handler in (*NAIVE, *JOURNALED)),
    (TRAVEL, "Travel", "quote", "How much is 120 EUR in USD?"),
]


def _both_ways(agent: _Agent) -> tuple[Target, Target]:
    where, service, handler, question = agent
    name = f"{where.name}/{handler}"
    in_process = AppTarget("agent:app", service, handler, question, mode=f"app {name}", cwd=str(where))
    command = f"{sys.executable} -m hypercorn agent:app --bind 127.0.0.1:$PORT"
    by_command = CommandTarget(command, service, handler, question, mode=f"cmd {name}", cwd=str(where))
    return in_process, by_command


def _sweep(lab: Lab, where: Path) -> list[SweepMatrix]:
    targets = [t for agent in AGENTS if agent[0] == where for t in _both_ways(agent)]
    script = load_script_file(where / "script.toml")
    return sweep_targets(lab, targets=targets, scripts=[("steady", script)], kills=KillPlan(parallel=16))


def _sweep_ts(lab: Lab) -> list[SweepMatrix]:
    targets = [
        CommandTarget(
            "node agent.ts", "TsShapes", h, {"message": "Weather in SF?"}, mode=f"ts {h}", cwd=str(TS)
        )
        for h in (*TS_NAIVE, *TS_JOURNALED)
    ]
    script = load_script_file(TS / "script.toml")
    return sweep_targets(lab, targets=targets, scripts=[("steady", script)], kills=KillPlan(parallel=16))


@pytest.fixture(scope="module")
def swept(lab: Lab) -> Iterator[dict[str, Future[list[SweepMatrix]]]]:
    """Every agent both ways, and the TypeScript ones by command, all started with the module."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        yield {
            "python": pool.submit(lambda: [*_sweep(lab, SHAPES), *_sweep(lab, TRAVEL)]),
            "ts": pool.submit(_sweep_ts, lab),
        }


@pytest.fixture(scope="module")
def matrices(swept: dict[str, Future[list[SweepMatrix]]]) -> dict[str, SweepMatrix]:
    done = {m.mode: m for m in swept["python"].result()}
    print(table(done))  # the agents both ways, shown with `pytest -rP`
    return done


@pytest.fixture(scope="module")
def ts_matrices(swept: dict[str, Future[list[SweepMatrix]]]) -> dict[str, SweepMatrix]:
    return {m.mode: m for m in swept["ts"].result()}


def _outside_flight(points: tuple[PointResult, ...]) -> int:
    """The most model calls a point paid again beyond those cut off in flight."""
    return max((p.extra_model_calls - p.model_calls_in_flight for p in points), default=0)


def table(matrices: dict[str, SweepMatrix]) -> str:
    """Agent, then for each way: points, points that pay twice, model calls paid again outside flight."""
    lines = ["agent | app: points, pay twice, outside flight | cmd: points, pay twice, outside flight"]
    for where, _, handler, _ in AGENTS:
        row = [f"{where.name}/{handler}"]
        for way in ("app", "cmd"):
            points = matrices[f"{way} {where.name}/{handler}"].points
            twice = sum(1 for p in points if p.pays_twice)
            row.append(f"{len(points)}, {twice}, {_outside_flight(points)}")
        lines.append(" | ".join(row))
    return "\n".join(lines)


def _missed(points: tuple[PointResult, ...]) -> list[tuple[str, str]]:
    """The points whose kill missed its moment, but for the one kind the wire is known not to hold: after a
    step's result while steps started beside it still run (docs/explanation/parallel-steps.md)."""
    beside = "appended before it"
    return [
        (p.crash_point, p.not_placed)
        for p in points
        if not p.confirmed and not (p.kind == "after-entry" and beside in p.not_placed)
    ]


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: f"{a[0].name}/{a[2]}")
def test_the_command_gets_the_verdict_and_counts_the_host_gets(
    matrices: dict[str, SweepMatrix], agent: _Agent
) -> None:
    where, _, handler, _ = agent
    app, cmd = (matrices[f"{way} {where.name}/{handler}"] for way in ("app", "cmd"))
    naive = handler in NAIVE or where == TRAVEL
    for matrix in (app, cmd):
        verdict = [(p.crash_point, p.pays_twice, p.answers_asked_again) for p in matrix.points]
        assert any(p.pays_twice for p in matrix.points) == naive, (matrix.mode, verdict, table(matrices))
        assert all(p.status == "completed" and p.answer_matches for p in matrix.points), matrix.mode
    assert cmd.clean.calls_in_steps == app.clean.calls_in_steps, table(matrices)
    # Point by point, where both ways have the moment, the same verdict and the same counts. The host holds
    # moments the wire cannot (an answer back but not journaled yet, a step's RunCommand just sent): those
    # points are the in-process sweep's own.
    by_name = {p.crash_point: p for p in app.points}
    common = [(by_name[p.crash_point], p) for p in cmd.points if p.crash_point in by_name]
    assert len(common) >= 2, ([p.crash_point for p in cmd.points], list(by_name))
    for a, c in common:
        figures = ("pays_twice", "extra_model_calls", "answers_asked_again", "model_calls_in_flight")
        assert [getattr(c, f) for f in figures] == [getattr(a, f) for f in figures], (
            c.crash_point,
            table(matrices),
        )
    assert not _missed(cmd.points), _missed(cmd.points)
    assert not [p.undecided for p in cmd.points if p.undecided], cmd.mode


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
    assert not _missed(matrix.points), _missed(matrix.points)
    assert not [p.undecided for p in matrix.points if p.undecided], points

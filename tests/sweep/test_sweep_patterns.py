"""Agents that hold more than one conversation, swept on the session's server: a chain of prompts, a router,
and parallel calls, each with its model calls journaled (`run`) and not (`run_naive`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.report._text import format_sweep
from paidtwice.stub import Script
from paidtwice.stub._turns import ScriptFileError, load_script_file
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._sweep import PointResult, SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

AGENTS = {
    "chain": ("chain_agent", "Chain", "Revenue grew 45% to 2.3M; customer churn fell from 8% to 5%."),
    "router": ("router_agent", "Router", "I was charged twice for my subscription this month."),
    "parallel": ("parallel_agent", "Impact", "We move the support desk to a 24/7 rota."),
}
FORMS = {"journaled": "run", "naive": "run_naive"}


def target(agent: str, form: str) -> AppTarget:
    directory, service, question = AGENTS[agent]
    return AppTarget(
        "agent:app",
        service,
        FORMS[form],
        question,
        mode=f"{agent}/{form}",
        cwd=str(EXAMPLES / directory),
    )


def script(agent: str, variation: str) -> tuple[str, Script]:
    return variation, load_script_file(EXAMPLES / AGENTS[agent][0] / "script.toml", variation)


ORCHESTRATOR = Path(__file__).parent / "orchestrator_agent"

_Swept = Future[list[SweepMatrix]]


@pytest.fixture(scope="module")
def sweeps(lab: Lab) -> Iterator[dict[str, _Swept]]:
    """The sweeps of this file's examples, started at once on the session's server (each waits on its own
    agents' pauses and restarts): each example in both forms under `steady`, and the router under `changed`;
    the orchestrator (`orchestrator`)."""
    kills = KillPlan(restart_delay=0.5)
    runs: dict[str, Callable[[], list[SweepMatrix]]] = {
        agent: functools.partial(
            sweep_targets,
            lab,
            kills=kills,
            targets=[target(agent, form) for form in FORMS],
            scripts=[script(agent, v) for v in (("steady", "changed") if agent == "router" else ("steady",))],
        )
        for agent in AGENTS
    }
    runs["orchestrator"] = functools.partial(
        sweep_targets,
        lab,
        kills=kills,
        targets=[
            AppTarget(
                "agent:app", "Orchestrator", handler, "A launch note.", mode=handler, cwd=str(ORCHESTRATOR)
            )
            for handler in ("run", "run_in_turn")
        ],
        scripts=[(v, load_script_file(ORCHESTRATOR / "script.toml", v)) for v in ("steady", "changed")],
    )
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        yield {name: pool.submit(run) for name, run in runs.items()}


@pytest.fixture(scope="module")
def matrices(sweeps: dict[str, _Swept]) -> dict[tuple[str, str, str], SweepMatrix]:
    """Every example in both forms under `steady`, and the router under `changed`."""
    keyed = {}
    for name in AGENTS:
        for matrix in sweeps[name].result():
            agent, form = matrix.mode.split("/")
            keyed[(agent, form, matrix.script)] = matrix
    return keyed


def test_every_kill_landed_and_every_call_was_answered(
    matrices: dict[tuple[str, str, str], SweepMatrix],
) -> None:
    assert len(matrices) == 8
    for matrix in matrices.values():
        missed = [p.crash_point for p in matrix.points if not p.confirmed]
        assert not missed, (matrix.mode, missed)
        assert all(not p.unanswered for p in matrix.points), matrix.mode
        assert matrix.clean.status == "completed"


@pytest.mark.parametrize("agent", list(AGENTS))
def test_journaled_pays_only_in_flight(matrices: dict[tuple[str, str, str], SweepMatrix], agent: str) -> None:
    matrix = matrices[(agent, "journaled", "steady")]
    assert matrix.clean.model_calls == sum(n for _, n in matrix.clean.step_runs)  # one call per step
    for point in matrix.points:
        in_flight = point.kind.startswith("in-flight")
        assert point.status == "completed" and point.answer_matches, point.crash_point
        assert point.extra_model_calls == point.model_calls_in_flight, point.crash_point
        assert (point.model_calls_in_flight > 0) == in_flight, point.crash_point
        assert not point.pays_twice, point.crash_point


@pytest.mark.parametrize("agent", list(AGENTS))
def test_naive_pays_again_at_every_point_after_an_answer(
    matrices: dict[tuple[str, str, str], SweepMatrix], agent: str
) -> None:
    matrix = matrices[(agent, "naive", "steady")]
    answered = 0  # answers that had come back before the point's moment
    pending = 0  # calls in flight at the last in-flight point, answered at the next "returned" point
    for point in matrix.points:
        if point.kind == "model-returned":
            answered += pending
        if point.kind.startswith("in-flight"):
            pending = point.model_calls_in_flight
        assert point.status == "completed" and point.answer_matches, point.crash_point
        assert point.extra_model_calls == answered + point.model_calls_in_flight, point.crash_point
        assert point.pays_twice == (answered > 0), point.crash_point
    assert answered == matrix.clean.model_calls  # the last point comes after the last answer


def parallel_point(matrix: SweepMatrix) -> PointResult:
    (point,) = [p for p in matrix.points if p.kind == "in-flight-parallel"]
    return point


@pytest.mark.parametrize("form", list(FORMS))
def test_the_parallel_point_cuts_off_both_calls(
    matrices: dict[tuple[str, str, str], SweepMatrix], form: str
) -> None:
    matrix = matrices[("parallel", form, "steady")]
    point = parallel_point(matrix)
    assert point.crash_point == "in flight: model calls 2 and 3 together"
    assert point.model_calls_in_flight == 2 and point.confirmed
    if form == "journaled":
        # Both calls and both steps are asked again; the summary before them is read from the journal.
        assert point.extra_model_calls == 2 and point.extra_step_runs == 2
        assert dict(point.step_runs)["summarize"] == 1
    else:
        # The summary's answer had come back outside the journal: it is paid again too.
        assert point.extra_model_calls == 3
        returned = next(p for p in matrix.points if p.order == point.order + 1)
        assert returned.crash_point == "after model calls 2 and 3 returned (not journaled)"
        assert returned.model_calls_in_flight == 0 and returned.extra_model_calls == 3


def test_the_chain_and_the_router_have_no_parallel_point(
    matrices: dict[tuple[str, str, str], SweepMatrix],
) -> None:
    for (agent, _, _), matrix in matrices.items():
        parallel = [p for p in matrix.points if p.kind == "in-flight-parallel"]
        assert len(parallel) == (1 if agent == "parallel" else 0), matrix.mode


def test_changed_applies_to_the_call_asked_again(matrices: dict[tuple[str, str, str], SweepMatrix]) -> None:
    journaled = {p.crash_point: p for p in matrices[("router", "journaled", "changed")].points}
    # The classification asked again changes its mind and routes to another team...
    assert not journaled["in flight: model call 1"].answer_matches
    assert "[technical]" in str(journaled["in flight: model call 1"].answer)
    # ... while the specialist asked again is its own turn, asked for the first time a second time: the same.
    assert journaled["in flight: model call 2"].answer_matches
    assert all(p.answer_matches for name, p in journaled.items() if name != "in flight: model call 1")
    naive = matrices[("router", "naive", "changed")].points
    # Outside the journal every replay classifies again: every point but the first routes elsewhere.
    assert [p.answer_matches for p in naive] == [True] + [False] * (len(naive) - 1)


def test_a_replay_call_no_turn_answers_is_in_the_report(
    lab: Lab, tmp_path: Path, sweeps: dict[str, _Swept]
) -> None:
    # Once the other sweeps have ended, not beside them: the sweep stops a replay at its first unanswered
    # call, and on a loaded machine a retry could ask it a second time before the kill.
    wait(sweeps.values())
    text = (EXAMPLES / "router_agent" / "script.toml").read_text()
    without_technical = text[: text.index('[[turn]]\nwhen_system = "technical')]
    path = tmp_path / "router.toml"
    path.write_text(without_technical)
    (matrix,) = sweep_targets(
        lab,
        kills=KillPlan(restart_delay=0.5),
        targets=[target("router", "naive")],
        scripts=[("changed", load_script_file(path, "changed"))],
    )
    report = format_sweep(matrix)
    for point in matrix.points[1:]:
        # The replay asks the classification again, is routed to the technical team, which no turn answers.
        assert point.status == "unanswered", point.crash_point
        (reason,) = point.unanswered
        assert "no turn of the script answers this call" in reason
        assert "system prompt 'You are a technical support specialist." in reason
        assert f"#{point.order}: {reason}" in report
    assert matrix.points[0].status == "completed" and not matrix.points[0].unanswered
    unanswered = len(matrix.points) - 1
    assert f"; {unanswered} ended unanswered (a call no turn of the script answers" in report


CLASSIFY_ONLY = '[[turn]]\nwhen = "(?i)support team"\ntext = "<selection>billing</selection>"\n'


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        (CLASSIFY_ONLY, "no turn of the script answers this call"),
        (
            CLASSIFY_ONLY + '\n[[turn]]\nwhen = "Ticket:"\ntext = "x"\n',
            "{path}:6: turns 1 (line 2) and 2 (line 6) of the script both answer this call",
        ),
    ],
)
def test_a_clean_run_no_turn_answers_is_bad_input(lab: Lab, tmp_path: Path, turns: str, message: str) -> None:
    path = tmp_path / "router.toml"
    path.write_text(turns)
    with pytest.raises(ScriptFileError) as raised:
        sweep_targets(lab, targets=[target("router", "naive")], scripts=[("steady", load_script_file(path))])
    assert str(raised.value).startswith(message.format(path=path)), raised.value
    assert "\n" not in str(raised.value)


def test_the_example_scripts_answer_each_call_by_its_prompt() -> None:
    for directory, _, _ in AGENTS.values():
        loaded = load_script_file(EXAMPLES / directory / "script.toml")
        assert loaded.turns and all(not t.positional for t in loaded.turns), directory


@pytest.fixture(scope="module")
def orchestrator(sweeps: dict[str, _Swept]) -> dict[tuple[str, str], SweepMatrix]:
    """An orchestrator whose three workers one `[[turn]]` answers: journaled with the workers at once, and
    outside the journal one worker after the other; `steady` and `changed`."""
    return {(m.mode, m.script): m for m in sweeps["orchestrator"].result()}


def test_one_turn_for_many_workers_counts_each_worker_apart(
    orchestrator: dict[tuple[str, str], SweepMatrix],
) -> None:
    for mode in ("run", "run_in_turn"):
        steady, changed = orchestrator[(mode, "steady")], orchestrator[(mode, "changed")]
        # Each worker is asked once in a clean run: `changed` does not change the second and third workers.
        assert changed.clean.answer == steady.clean.answer, mode
        assert json.loads(steady.clean.answer or "") == ["A paragraph."] * 3, mode
        for matrix in (steady, changed):
            assert all(p.confirmed and not p.unanswered for p in matrix.points), mode
    journaled = {p.crash_point: p for p in orchestrator[("run", "changed")].points}
    together = journaled["in flight: model calls 2, 3 and 4 together"]
    assert together.model_calls_in_flight == 3 and together.extra_model_calls == 3
    # The three workers cut off are each asked a second time, and each changes its mind.
    assert json.loads(together.answer or "") == ["Another paragraph."] * 3
    # The plan cut off is asked again and plans one part: one worker, asked for the first time. No other
    # point asks anything again.
    plan = journaled["in flight: model call 1"]
    assert json.loads(plan.answer or "") == ["A paragraph."] and plan.extra_model_calls == -1
    clean = orchestrator[("run", "changed")].clean
    assert "; asked turn 2 of the script once, the clean run 3 times; " in str(plan.shorter_path(clean))
    assert [n for n, p in journaled.items() if not p.answer_matches] == [
        plan.crash_point,
        together.crash_point,
    ]


def test_answers_asked_again_and_their_cost_count_each_worker_apart(
    orchestrator: dict[tuple[str, str], SweepMatrix],
) -> None:
    in_turn = orchestrator[("run_in_turn", "steady")]
    for point in in_turn.points:
        # Outside the journal, every answer that came back is asked for again, once, and no other: a worker
        # not yet asked at the kill is asked for the first time.
        assert point.answers_asked_again == point.model_answers_at_kill, point.crash_point
        assert point.extra_model_calls == point.model_answers_at_kill + point.model_calls_in_flight
    for matrix in (in_turn, orchestrator[("run", "steady")]):
        for point in matrix.points:
            # A point that added no model call cost nothing (the workers of the clean run are not extra).
            assert (point.extra_cost_usd > 0) == (point.extra_model_calls > 0), point.crash_point

"""TypeScript agents written the way Restate's TypeScript examples are (tests/ts_corpus: the Vercel AI SDK on
@ai-sdk/openai, zod input schemas with defaults, `restate.serve({ ..., port: 9080 })`), each swept with
nothing but `--cmd`: its handlers, their inputs and the model's answers found by the sweep, its fixed port
moved to the run's own; trees, self-calls and awakeables as for `--app`. Journaled agents: every point
placed, none pays twice. Each has a naive copy (NAME_naive.ts: its model calls moved out of `ctx.run`, nothing
else changed), swept the same way: some point pays twice, found with no configuration but the command."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from support import run_paidtwice

from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix, write_results
from paidtwice.sweep import Answers, KillPlan, sweep
from paidtwice.targets import TargetSpec

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "ts_corpus"


def test_the_template_is_swept_with_nothing_but_its_command(tmp_path: Path) -> None:
    """As a new user runs it on the template: no service, handler, input, script or port given."""
    records = tmp_path / "sweep.json"
    done: subprocess.CompletedProcess[str] = run_paidtwice(
        "sweep", "--cmd", "node src/template.ts", "--cwd", str(CORPUS), "--check",
        "--json", str(records), "--variation", "steady",
        cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    points = json.loads(records.read_text())
    assert points and all(p["confirmed"] for p in points), [p["not_placed"] for p in points]
    assert {p["service"] for p in points} == {"WeatherAgent"} and {p["handler"] for p in points} == {"ask"}
    # The input was made from the handler's zod schema: the object it asks for, with the default it gives.
    question = "Should I take an umbrella in Lisbon today?"
    assert all(p["input"] == {"message": question} for p in points), points[0]["input"]
    assert not any(p["pays_twice"] for p in points)
    assert {"after-entry", "in-flight-model"} <= {p["kind"] for p in points}
    assert "WeatherAgent/ask: " in done.stdout and "none pays twice" in done.stdout


AGENTS = {
    # file: the handlers a sweep with nothing but --cmd finds (SERVICE/HANDLER, as the matrices name them)
    "template": {"WeatherAgent"},
    "parallel_tools": {"ParallelTools"},
    "remote_agents": {"Router/route", "Billing/reply", "Security/reply"},
    "racing": {"Racer/race", "Racer/careful", "Racer/quick"},
    "human_approval": {"RefundDesk"},
    "approval_timeout": {"HumanClaimApprovalWithTimeoutsAgent"},
    "workflow_approval": {"ClaimApproval"},
    "workflow_parallel": {"ClaimPanel"},
    "chat": {"ChatSession/send", "ChatSession/history"},
}


NAIVE = [f"{name}_naive" for name in AGENTS]


def _sweep_agent(lab: Lab, name: str) -> list[SweepMatrix]:
    what = TargetSpec(command=f"node src/{name}.ts", app_dir=CORPUS)
    # 4 points at a time per agent, three agents at once, on a machine the suite shares.
    return sweep(what, answers=Answers(variations=("steady",)), kills=KillPlan(parallel=4), lab=lab)


@pytest.fixture(scope="module")
def corpus(lab: Lab) -> Iterator[dict[str, Future[list[SweepMatrix]]]]:
    """Every agent of the corpus and its naive copy swept on the session's server (`--cmd 'node
    src/NAME.ts'`), three at once, the journaled agents first."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        yield {name: pool.submit(_sweep_agent, lab, name) for name in [*AGENTS, *NAIVE]}


def _label(matrix: SweepMatrix) -> str:
    return matrix.mode.split(" (")[0]


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_every_handler_is_found_and_every_kill_placed(
    corpus: dict[str, Future[list[SweepMatrix]]], name: str
) -> None:
    matrices = corpus[name].result()
    assert {_label(m) for m in matrices} == AGENTS[name]
    # Every handler swept, the chat's history getter too (it makes no model call: its steps and journal).
    assert not [m.not_swept for m in matrices if m.not_swept]
    swept = list(matrices)
    assert all(m.clean.status == "completed" for m in swept)
    missed = [(m.mode, p.crash_point, p.not_placed) for m in swept for p in m.points if not p.confirmed]
    assert not missed


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_journaled_agent_pays_twice_nowhere(
    corpus: dict[str, Future[list[SweepMatrix]]], name: str
) -> None:
    points = [p for m in corpus[name].result() for p in m.points]
    assert points and not [p.crash_point for p in points if p.pays_twice]
    assert all(p.status == "completed" for p in points)


def test_trees_stay_in_the_run_s_process(corpus: dict[str, Future[list[SweepMatrix]]]) -> None:
    """The router's callee and the racer's calls to its own handlers are served by the run's own copy of
    the deployment: their model calls and steps are counted in the run that called them."""
    router = next(m for m in corpus["remote_agents"].result() if _label(m) == "Router/route")
    assert router.clean.model_calls == 2 and dict(router.clean.step_runs) == {"route": 1, "model": 1}
    assert not router.clean.unfollowed
    race = next(m for m in corpus["racing"].result() if _label(m) == "Racer/race")
    assert race.clean.model_calls == 2 and dict(race.clean.step_runs) == {"think": 1, "answer": 1}


def test_an_awakeable_is_resolved_as_for_an_app(corpus: dict[str, Future[list[SweepMatrix]]]) -> None:
    """The refund desk waits on an awakeable the sweep resolved (an approval: true) in its clean run and in
    every point's replay."""
    [desk] = corpus["human_approval"].result()
    assert "Notification: Signal" in desk.clean.journal and desk.clean.answer == '"refund approved"'
    assert all(p.answer_matches for p in desk.points)
    # The wait is said reached: the signal that resolved it proves the guess read from the quiet attempt.
    assert all(p.coverage.waits_resolved == ("awakeable 1",) for p in desk.points)


def test_a_workflow_promise_is_resolved_through_its_shared_handler(
    corpus: dict[str, Future[list[SweepMatrix]]],
) -> None:
    """The claim workflow's run waits on `ctx.promise("decision")`; the sweep resolves it by calling the
    shared handler that resolves it (read from the code), with a value made from that handler's zod schema,
    in the clean run and in every point's replay."""
    [workflow] = corpus["workflow_approval"].result()
    assert "Notification: GetPromise" in workflow.clean.journal, workflow.clean.journal
    answer = json.loads(workflow.clean.answer or "null")
    assert answer.startswith(("approved by ", "declined by ")), answer
    assert workflow.points and all(p.answer_matches for p in workflow.points)


def test_an_awakeable_raced_against_a_timer_is_resolved(
    corpus: dict[str, Future[list[SweepMatrix]]], tmp_path: Path
) -> None:
    """Restate's human approval with a timeout (`orTimeout`, three hours): the sweep resolves the approval
    while the timer runs, in the clean run and in every point's replay; its records pass a check."""
    [agent] = corpus["approval_timeout"].result()
    journal = agent.clean.journal
    assert journal.index("Command: Sleep") < journal.index("Notification: Signal"), journal
    assert "Notification: Sleep" not in journal and agent.clean.answer == "true"
    assert {"pause", "after-entry", "in-flight-model"} <= {p.kind for p in agent.points}
    assert all(p.answer_matches for p in agent.points)
    records = tmp_path / "sweep.json"
    write_results(records, list(agent.points))
    done = run_paidtwice("report", "--check", str(records), "-o", str(tmp_path / "sweep.html"), cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_naive_copy_pays_twice(corpus: dict[str, Future[list[SweepMatrix]]], name: str) -> None:
    """Its model calls outside the journal: swept as its journaled agent is, same handlers, it fails a check
    (some point's replay asks the model again for an answer it had), and is refused nowhere."""
    matrices = corpus[f"{name}_naive"].result()
    assert {_label(m) for m in matrices} == AGENTS[name]
    assert not [m.not_swept for m in matrices if m.not_swept]
    points = [p for m in matrices for p in m.points]
    assert [p.crash_point for p in points if p.answers_asked_again and p.pays_twice], [
        (p.crash_point, p.status, p.not_placed) for p in points
    ]


def test_the_naive_approval_with_a_timeout_fails_the_check(
    corpus: dict[str, Future[list[SweepMatrix]]], tmp_path: Path
) -> None:
    """Its model call outside the journal: the replay of a kill after its answer asks the model again, and
    its records fail a check."""
    [agent] = corpus["approval_timeout_naive"].result()
    assert all(p.confirmed for p in agent.points), [p.not_placed for p in agent.points]
    twice = [p.crash_point for p in agent.points if p.answers_asked_again]
    assert "after entry 4 (Notification: Signal)" in twice, twice
    records = tmp_path / "sweep.json"
    write_results(records, list(agent.points))
    done = run_paidtwice("report", "--check", str(records), "-o", str(tmp_path / "sweep.html"), cwd=ROOT)
    assert done.returncode == 1 and " pay twice" in done.stdout, done.stdout + done.stderr

"""`paidtwice sweep --cmd`: a TypeScript agent (examples/ts_agent) swept through the protocol proxy, naive and
journaled, under steady and changed, on the session's real server; and bad commands."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from support import run_paidtwice

from paidtwice.agent import QUESTION, command_label
from paidtwice.engine import epoch
from paidtwice.lab import Lab
from paidtwice.report._text import format_crash_cost, format_sweep
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._sweep import (
    PointResult,
    SweepMatrix,
    deck_scripts,
    sweep_targets,
)
from paidtwice.targets import CommandTarget, DeckTarget

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ts_agent"
SCRIPT = EXAMPLE / "script.toml"


def _sweep_ts(lab: Lab) -> list[SweepMatrix]:
    targets = [
        CommandTarget(
            command=f"AGENT_MODE={mode} node agent.ts",
            service="Agent",
            handler="run",
            input=QUESTION,
            mode=mode,
            cwd=str(EXAMPLE),
        )
        for mode in ("naive", "journaled")
    ]
    scripts = [(name, load_script_file(SCRIPT, name)) for name in ("steady", "changed")]
    # 16 at a time: each point is a Node process of its own, idle through most of its run (the pause, the
    # restart delay), on a machine the suite shares.
    return sweep_targets(lab, kills=KillPlan(parallel=16), targets=targets, scripts=scripts)


def _sweep_deck_both_ways(lab: Lab) -> list[SweepMatrix]:
    """The deck's Python agent, naive, under `steady`: started by a command (seen through the proxy), and in
    paidtwice's own host."""
    command = (
        f"PAIDTWICE_AGENT_MODE=naive PAIDTWICE_PAUSE_S=5 {sys.executable} -m paidtwice.agent.host "
        "paidtwice.agent.weather:app --port $PORT"
    )
    by_cmd = CommandTarget(command, "Agent", "run", QUESTION, mode="cmd", stuck_after=None)
    return sweep_targets(
        lab,
        kills=KillPlan(parallel=8),
        targets=[by_cmd, DeckTarget("naive")],
        scripts=deck_scripts(["steady"]),
    )


@pytest.fixture(scope="module")
def sweeps(lab: Lab) -> Iterator[dict[str, Future[list[SweepMatrix]]]]:
    """This file's two sweeps, started at once on the session's server (each waits on its agents' pauses
    and restarts): the TypeScript agent (`ts`), and the deck's agent by command and in process (`deck`)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield {"ts": pool.submit(_sweep_ts, lab), "deck": pool.submit(_sweep_deck_both_ways, lab)}


@pytest.fixture(scope="module")
def matrices(sweeps: dict[str, Future[list[SweepMatrix]]]) -> dict[tuple[str, str], SweepMatrix]:
    return {(m.mode, m.script): m for m in sweeps["ts"].result()}


def test_every_kill_lands_where_its_point_says(matrices: dict[tuple[str, str], SweepMatrix]) -> None:
    for matrix in matrices.values():
        kinds = {p.kind for p in matrix.points}
        assert {"after-entry", "in-flight-model", "in-flight-step", "pause"} <= kinds, matrix.mode
        missed = [
            (p.crash_point, p.journal_at_kill, p.model_calls_in_flight)
            for p in matrix.points
            if not p.confirmed
        ]
        assert not missed, (matrix.mode, matrix.script, missed)
    clean = matrices[("naive", "steady")].clean
    # The deck's journal shape, read from the TypeScript SDK's journal.
    assert clean.journal == (
        "Command: Input",
        "Command: Run weather",
        "Notification: Run",
        "Command: Sleep",
        "Notification: Sleep",
        "Command: Output",
    )
    assert clean.model_calls == 2 and clean.step_runs == (("weather", 1),)


def _after_first_answer(points: tuple[PointResult, ...]) -> list[PointResult]:
    return [p for p in points if p.model_answers_at_kill > 0]


def test_naive_pays_again_at_every_point_after_the_first_answer(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    points = matrices[("naive", "steady")].points
    after = _after_first_answer(points)
    assert after and all(p.answers_asked_again >= 1 and p.pays_twice for p in after)
    before = [p for p in points if p not in after]
    assert before and all(p.answers_asked_again == 0 and not p.pays_twice for p in before)
    assert all(p.status == "completed" and p.answer_matches for p in points)


def test_the_tool_runs_once_except_in_flight(matrices: dict[tuple[str, str], SweepMatrix]) -> None:
    for mode in ("naive", "journaled"):
        for point in matrices[(mode, "steady")].points:
            expected = 2 if point.kind == "in-flight-step" else 1
            assert point.tool_runs == expected, (mode, point.crash_point)
            assert point.extra_step_runs <= point.steps_in_flight, (mode, point.crash_point)


def test_changed_ends_stuck_with_rt0016_after_the_tool_step(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    matrix = matrices[("naive", "changed")]
    tool_step = matrix.clean.journal.index("Command: Run weather") + 1  # entries once the step is journaled
    after = [p for p in matrix.points if p.journal_at_kill >= tool_step]
    seen = [(p.crash_point, p.status, p.mismatches, p.journal_at_kill, p.model_calls) for p in after]
    assert after and all(p.status in ("paused", "stuck") and p.mismatches >= 1 for p in after), seen
    before = [p for p in matrix.points if p.journal_at_kill < tool_step]
    assert before and all(p.status == "completed" and p.mismatches == 0 for p in before)


def test_journaled_pays_only_in_flight_in_a_model_call(matrices: dict[tuple[str, str], SweepMatrix]) -> None:
    for script in ("steady", "changed"):
        for point in matrices[("journaled", script)].points:
            assert not point.pays_twice and point.mismatches == 0, (script, point.crash_point)
            assert point.status == "completed"
            in_flight = 1 if point.kind == "in-flight-model" else 0
            assert point.model_calls_in_flight == in_flight, (script, point.crash_point)
            # Under changed, a call asked again is told the answer outright and skips the tool's turn.
            extra = point.extra_model_calls
            assert extra == in_flight if script == "steady" else extra <= in_flight, (
                script,
                point.crash_point,
            )


def _pause_share(lab: Lab, matrix: SweepMatrix) -> float:
    """The share of the clean run its durable pause took, by the server's clock: from its Sleep command to
    the pause's end, over the run from its input to its output."""
    journal = lab.sql.journal(matrix.clean.invocation_id)

    def at(label: str) -> float:
        [when] = [epoch(e.appended_at) for e in journal if e.label().startswith(label)]
        assert when is not None
        return when

    return (at("Notification: Sleep") - at("Command: Sleep")) / (at("Command: Output") - at("Command: Input"))


def test_a_crash_is_priced_by_the_share_of_the_clean_run_each_point_covers(
    lab: Lab, matrices: dict[tuple[str, str], SweepMatrix]
) -> None:
    """The wire, the ledgers and the journal time each moment of the clean run, as the host's log does on the
    in-process path: the durable pause (5 s) covers at least its share of the invocation (most of it on a
    quiet machine; a busy one makes the rest longer), and a crash's expected cost follows."""
    for matrix in matrices.values():
        assert all(p.covers >= 0 for p in matrix.points), (matrix.mode, matrix.script)
        assert sum(p.covers for p in matrix.points) == pytest.approx(1.0, abs=1e-6)
        [pause] = [p for p in matrix.points if p.kind == "pause"]
        share = _pause_share(lab, matrix)
        # The points share the agent's run (from its first attempt), the journal's share is of the whole
        # invocation (from its input, however late a busy machine started the agent): no less, within a
        # tenth of the run (the wire times it on the proxy's clock, the journal on the server's).
        assert pause.covers >= share - 0.1, (matrix.mode, matrix.script, pause.covers, share)
    naive, journaled = matrices[("naive", "steady")], matrices[("journaled", "steady")]
    from_flight = sum(p.covers * p.extra_cost_usd for p in journaled.points if p.kind == "in-flight-model")
    assert journaled.expected_crash_cost_usd == pytest.approx(from_flight, abs=1e-12)
    assert journaled.expected_crash_cost_usd > 0
    # Naive, a crash in the pause pays the first answer again, and the pause is most of the run.
    [pause] = [p for p in naive.points if p.kind == "pause"]
    assert pause.extra_cost_usd > 0
    assert naive.expected_crash_cost_usd >= pause.covers * pause.extra_cost_usd
    assert naive.expected_crash_cost_usd > journaled.expected_crash_cost_usd


def test_a_command_sweep_is_named_after_its_service_and_command(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    label = command_label("Agent", "AGENT_MODE=journaled  node agent.ts")
    assert label == "Agent (AGENT_MODE=journaled node agent.ts)"
    named = dataclasses.replace(matrices[("journaled", "steady")], mode=label)
    assert format_sweep(named).startswith(f"{label}, script steady: clean run 2 model calls")
    assert f"{label}: one crash" in format_crash_cost([named])
    assert format_sweep(matrices[("naive", "steady")]).startswith("naive agent, script steady:")


def _sweep_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_paidtwice("sweep", *args, cwd=ROOT, env=env)


@pytest.mark.parametrize(
    ("command", "service", "handler", "says"),
    [
        ("exit 3", "Agent", "run", "the command exited (3) before listening"),
        ("node agent.ts", "Nope", "run", "the command serves no service Nope (it serves: Agent)"),
        ("node agent.ts", "Agent", "nope", "service Agent has no handler nope (it has: run)"),
    ],
)
def test_a_bad_command_is_a_one_line_error_naming_its_log(
    tmp_path: Path, command: str, service: str, handler: str, says: str
) -> None:
    """The log is kept in the results folder, where the user looks for what a run left; the temporary
    folder the command was checked in is gone."""
    scratch, results = tmp_path / "tmp", tmp_path / "results"
    scratch.mkdir()
    done = _sweep_cli(
        "--cmd", command, "--cwd", str(EXAMPLE), "--service", service, "--handler", handler,
        "--input", json.dumps(QUESTION), "--script", str(SCRIPT), "--results-dir", str(results),
        env={"TMPDIR": str(scratch)},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    log = Path(lines[0].rsplit("its log: ", 1)[1].split(")")[0])
    assert log.parent == results and log.name.startswith("command-check-"), lines[0]
    assert log.is_file() and not [p.name for p in scratch.iterdir()]


def test_the_deck_agent_through_cmd_measures_what_its_own_path_does(
    sweeps: dict[str, Future[list[SweepMatrix]]],
) -> None:
    """One sweep engine for both languages: the deck's Python agent started by a command and seen through the
    proxy gets, at every point both paths have, the figures its in-process path gets."""
    done = sweeps["deck"].result()
    wire, own = ({p.crash_point: p for p in m.points} for m in done)
    common = set(wire) & set(own)
    # The moments the wire cannot hold (an answer back but not journaled) are the in-process path's own.
    assert {n for n in own if n not in wire} <= {n for n in own if "returned (not journaled)" in n} | {
        n for n in own if n.startswith("after entry 1 ")
    }
    assert len(common) >= 6, sorted(common)
    for name in common:
        a, b = wire[name], own[name]
        figures = ("status", "answer_matches", "extra_model_calls", "model_calls_in_flight", "tool_runs")
        assert [getattr(a, f) for f in figures] == [getattr(b, f) for f in figures], name
        assert a.answers_asked_again == b.answers_asked_again and a.confirmed and b.confirmed, name

"""Crash points derived from the deck agent's captured clean timelines, without a server.

The fixtures (tests/fixtures/timelines/, from scripts/capture_timeline.py) are a real clean run's step log and
journal per mode. What each point should be is read from the fixture itself (its model calls, steps, pauses
and journal labels), and the whole plan is checked against a sweep of the deck captured on another day
(tests/fixtures/results/sweep.json).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from paidtwice.results import CrashPoint
from paidtwice.targets._timeline import StepEvent, derive_points, read_step_log

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TIMELINES = FIXTURES / "timelines"
MODES = ("naive", "journaled")


@dataclass(frozen=True)
class Captured:
    mode: str
    script: str
    events: list[StepEvent]
    journal: list[str]
    tool_starts: list[float]
    ended: float | None
    points: list[CrashPoint]


def captured(mode: str) -> Captured:
    meta = json.loads((TIMELINES / f"deck-{mode}.json").read_text())
    events = read_step_log(TIMELINES / f"deck-{mode}.steps.jsonl", meta["invocation_id"])
    points = derive_points(events, meta["journal"], meta["tool_starts"], ended=meta["ended"])
    return Captured(mode, meta["script"], events, meta["journal"], meta["tool_starts"], meta["ended"], points)


def named(points: list[CrashPoint], name: str) -> CrashPoint:
    found = [p for p in points if p.name == name]
    assert len(found) == 1, (name, [p.name for p in points])
    return found[0]


@pytest.mark.parametrize("mode", MODES)
def test_the_step_log_is_read_whole(mode: str) -> None:
    run = captured(mode)
    lines = (TIMELINES / f"deck-{mode}.steps.jsonl").read_text().splitlines()
    assert len(run.events) == len(lines) > 0
    assert [e.at for e in run.events] == sorted(e.at for e in run.events)


@pytest.mark.parametrize("mode", MODES)
def test_every_model_call_is_a_point_in_flight(mode: str) -> None:
    run = captured(mode)
    calls = [e for e in run.events if e.event == "model_start"]
    assert calls
    flying = [p for p in run.points if p.kind == "in-flight-model"]
    assert [p.model_holds for p in flying] == [(f"model:{e.n}",) for e in calls]
    for call in calls:
        point = named(run.points, f"in flight: model call {call.n}")
        if call.step:
            # Inside a step: the journal holds the step's command, the answer only with its result.
            step = next(e for e in run.events if e.event == "step_start" and e.n == call.step)
            assert run.journal[point.journal_entries - 1] == f"Command: Run {step.name}"


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_outside_a_step_is_a_moment_and_one_inside_is_not(mode: str) -> None:
    run = captured(mode)
    outside = [e.n for e in run.events if e.event == "model_start" and not e.step]
    returned = [p for p in run.points if p.kind == "model-returned"]
    assert [p.name for p in returned] == [f"after model call {n} returned (not journaled)" for n in outside]
    assert [p.gate for p in returned] == [f"model:{n}:after" for n in outside]


@pytest.mark.parametrize("mode", MODES)
def test_after_entry_points_name_the_journal_entry_they_follow(mode: str) -> None:
    run = captured(mode)
    after = [p for p in run.points if p.kind == "after-entry"]
    assert after
    for point in after:
        index = point.journal_entries - 1
        assert point.name == f"after entry {index} ({run.journal[index]})"
        # The gate stops the agent at the event that followed the entry in the clean run.
        assert point.gate is not None
        what, n, where = point.gate.split(":")
        assert where == "before"
        assert any(e.event in (what, f"{what}_start") and e.n == int(n) for e in run.events), point.gate
    assert after[0].name == f"after entry 0 ({run.journal[0]})"


@pytest.mark.parametrize("mode", MODES)
def test_every_durable_pause_is_a_point(mode: str) -> None:
    run = captured(mode)
    sleeps = [(i, e) for i, e in enumerate(run.events) if e.event == "op" and e.kind == "sleep"]
    pauses = [p for p in run.points if p.kind == "pause"]
    assert sleeps and len(pauses) == len(sleeps)
    for (i, sleep), pause in zip(sleeps, pauses, strict=True):
        before = [e.name for e in run.events[:i] if e.event == "step_end"]
        assert pause.name == "in pause" + (f" after {before[-1]}" if before else "")
        assert pause.pause_op == f"op:{sleep.n}"
        assert run.journal[pause.journal_entries - 1] == "Command: Sleep"


@pytest.mark.parametrize("mode", MODES)
def test_a_step_without_a_model_call_is_held_at_its_tool(mode: str) -> None:
    run = captured(mode)
    with_model = {e.step for e in run.events if e.event == "model_start" and e.step}
    quiet = [e for e in run.events if e.event == "step_start" and e.n not in with_model]
    assert quiet
    for start in quiet:
        end = next(e.at for e in run.events if e.event == "step_end" and e.n == start.n)
        tools = [k for k, at in enumerate(run.tool_starts, start=1) if start.at <= at <= end]
        point = named(run.points, f"in flight: step {start.name}")
        assert point.kind == "in-flight-step"
        assert point.tool_hold == (tools[0] if tools else None)
        assert run.journal[point.journal_entries - 1] == f"Command: Run {start.name}"


@pytest.mark.parametrize("mode", MODES)
def test_points_are_in_time_order_and_share_the_run(mode: str) -> None:
    run = captured(mode)
    assert [p.order for p in run.points] == list(range(1, len(run.points) + 1))
    assert [p.begins for p in run.points] == sorted(p.begins for p in run.points)
    entries = [p.journal_entries for p in run.points]
    assert entries == sorted(entries) and entries[-1] < len(run.journal)
    assert all(p.covers >= 0 for p in run.points)
    assert sum(p.covers for p in run.points) == pytest.approx(1.0)
    # The pause is most of a clean run: the agent sleeps seconds and answers in milliseconds.
    assert max(run.points, key=lambda p: p.covers).kind == "pause"


@pytest.mark.parametrize("mode", MODES)
def test_the_plan_is_the_one_a_captured_sweep_ran(mode: str) -> None:
    run = captured(mode)
    swept = json.loads((FIXTURES / "results" / "sweep.json").read_text())
    ran = [(r["order"], r["kind"], r["crash_point"]) for r in swept if r["mode"] == mode]
    assert ran
    assert [(p.order, p.kind, p.name) for p in run.points] == ran


def test_lines_of_other_invocations_and_a_line_cut_by_the_kill_are_skipped(tmp_path: Path) -> None:
    meta = json.loads((TIMELINES / "deck-naive.json").read_text())
    lines = (TIMELINES / "deck-naive.steps.jsonl").read_text().splitlines()
    other = json.loads(lines[0]) | {"invocation": "inv_other"}
    log = tmp_path / "steps.jsonl"
    log.write_text("\n".join([json.dumps(other), *lines, "", lines[0][: len(lines[0]) // 2]]) + "\n")
    assert read_step_log(log, meta["invocation_id"]) == captured("naive").events
    assert read_step_log(tmp_path / "missing.jsonl", meta["invocation_id"]) == []

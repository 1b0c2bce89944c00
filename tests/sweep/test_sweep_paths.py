"""A journaled agent whose path depends on the model's answer, swept with no script under the default
variations: under `changed` the call cut off in flight is answered the other way when asked again, and the
replay's new path (steps and a model call the clean run never made) is reported as a different path, not as
work paid twice. The same agent with its model calls outside the journal still pays twice."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.report._text import format_sweep
from paidtwice.sweep import sweep
from paidtwice.sweep._sweep import SweepMatrix
from paidtwice.targets import TargetSpec
from paidtwice.targets._app import steps_cut_off, steps_run_again
from paidtwice.targets._timeline import StepEvent
from paidtwice.testing import assert_pays_once

AGENT = Path(__file__).resolve().parent / "branch_agent"


@pytest.fixture(scope="module")
def swept(lab: Lab) -> Iterator[Future[list[SweepMatrix]]]:
    """Both handlers of the expense desk under steady, drifting and changed, started at once."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(sweep, TargetSpec(app="agent:app", app_dir=AGENT), lab=lab)


@pytest.fixture(scope="module")
def matrices(swept: Future[list[SweepMatrix]]) -> dict[tuple[str, str], SweepMatrix]:
    return {(m.points[0].handler, m.script): m for m in swept.result()}


def test_a_new_path_after_another_answer_is_new_work_not_paid_twice(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    journaled = [m for (handler, _), m in matrices.items() if handler == "claim"]
    assert {m.script for m in journaled} == {"steady", "drifting", "changed"}
    assert_pays_once(journaled)
    changed = matrices[("claim", "changed")]
    other = [p for p in changed.points if p.other_path(changed.clean) is not None]
    assert other, format_sweep(changed)
    for point in other:
        assert point.answered_differently and point.confirmed
        assert point.kind == "in-flight-model"
        # The new path ran steps the clean run never ran, and made more calls than the clean run: counted as
        # its own cost, none of it as paid twice.
        assert point.new_path_step_runs > 0 and point.new_path_model_calls > 0
        assert point.extra_step_runs > point.steps_in_flight
        assert point.steps_run_again == point.steps_in_flight == 1
        assert not point.pays_twice
        assert {"File note", "Send letter"} <= dict(point.step_runs).keys()
    text = format_sweep(changed)
    assert "took another path: new work, not paid twice: +1 model call and +2 step runs" in text, text
    assert "steps the clean run never ran: File note, Send letter, draft" in text


def test_the_same_agent_with_its_calls_outside_the_journal_still_pays_twice(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    for script in ("steady", "changed"):
        matrix = matrices[("claim_naive", script)]
        twice = [p for p in matrix.points if p.pays_twice]
        assert twice, format_sweep(matrix)
        assert all(p.answers_asked_again > 0 for p in twice)


def _start(name: str, pos: int, at: float, by: str = "") -> StepEvent:
    return StepEvent("step_start", 0, name, "", at, by=by, pos=pos)


def test_a_step_is_run_again_only_where_one_ran_before_the_kill() -> None:
    events = [
        _start("model", 1, 1.0),  # journaled before the kill at 2.0
        _start("model", 3, 1.5),  # cut off in flight
        _start("model", 3, 2.5),  # run again
        _start("model", 5, 3.0),  # the next turn of the loop: first run
        _start("File note", 4, 2.7),  # another path: first run
        _start("model", 3, 2.6, by="inv_callee"),  # a callee's step at that place: its own
    ]
    assert steps_run_again(events, 2.0) == 1
    assert steps_run_again([*events, _start("model", 0, 3.1)], 2.0) is None


def test_a_step_that_returned_and_ran_again_after_the_kill_was_cut_off_not_paid_twice() -> None:
    # A sent callee's step returned just before the kill at 2.0 with its result not yet journaled, and the
    # retry ran it again: it was cut off, as the one that had not returned was.
    events = [
        _start("write", 2, 1.0, by="inv_a"),
        StepEvent("step_end", 0, "write", "", 1.2),
        StepEvent("step_start", 1, "write", "", 1.5, by="inv_b", pos=2),
        StepEvent("step_end", 1, "write", "", 1.9),
        StepEvent("step_start", 2, "stamp", "", 1.95, pos=4),
        StepEvent("step_start", 0, "write", "", 2.5, by="inv_b", pos=2),
        StepEvent("step_start", 1, "stamp", "", 2.7, pos=4),
    ]
    assert steps_run_again(events, 2.0) == steps_cut_off(events, 2.0) == 2
    # Under explicit_recovery a retry runs journaled steps too: only the one that never returned was cut.
    assert steps_cut_off(events, 2.0, explicit=True) == 1

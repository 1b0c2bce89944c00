"""A handler sent one-way runs on after its caller's output: the points of its moments are placed, not
given up as "its run ended" once the caller's output is journaled (Restate's interrupt-regenerate example:
every point of CodingTask/run_task, sent by CodingAgent/message, was not reached)."""

from __future__ import annotations

import json
from pathlib import Path

from support import run_paidtwice

from paidtwice.results import CrashPoint
from paidtwice.targets._app import held_only_in_sends
from paidtwice.targets._timeline import StepEvent

AGENT = Path(__file__).resolve().parent / "sent_agent"


def test_the_moments_of_a_callee_sent_one_way_are_placed_after_its_caller_ended(tmp_path: Path) -> None:
    records = tmp_path / "sweep.json"
    done = run_paidtwice(
        "sweep", "--app", "agent:app", "--app-dir", str(AGENT), "--handler", "Desk/file",
        "--input", '"a memo"', "--variation", "steady", "--restart-delay", "0.2", "--check",
        "--json", str(records),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    points = json.loads(records.read_text())
    # The writer's two model calls are moments of the desk's tree, reached two seconds after its output.
    in_flight = [p for p in points if p["crash_point"].startswith("in flight: model call")]
    assert len(in_flight) == 2, [p["crash_point"] for p in points]
    assert all(p["confirmed"] and p["status"] == "completed" for p in points), [
        (p["crash_point"], p["status"], p["not_placed"]) for p in points
    ]


def _line(place: str, *, sent: bool) -> StepEvent:
    return StepEvent("gate", 1, f"{place}/step:1:inside", "", 1.0, by=f"inv_{place}", place=place, sent=sent)


def test_a_root_goes_on_past_a_moment_held_only_in_callees_it_sent() -> None:
    # The corpus desk sends two notes and returns: held inside both notes' steps, its output may be journaled
    # before the kill on a busy machine without the kill missing the moment; a called callee's it waits for.
    events = [_line("7", sent=True), _line("9", sent=True), _line("9.2", sent=False), _line("5", sent=False)]

    def point(gate: str, model_holds: tuple[int, ...] = ()) -> CrashPoint:
        return CrashPoint("in flight", 1, "in-flight-step", 19, gate=gate, model_holds=model_holds)

    assert held_only_in_sends(events, point("7/step:1:inside,9/step:1:inside"))
    assert held_only_in_sends(events, point("9.2/step:1:before"))  # a sent callee's own callee
    assert not held_only_in_sends(events, point("7/step:1:inside,5/step:1:inside"))
    assert not held_only_in_sends(events, point("step:2:inside"))  # the root's own step
    assert not held_only_in_sends(events, point("7/step:1:inside", model_holds=(1,)))

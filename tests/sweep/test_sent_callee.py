"""A handler sent one-way runs on after its caller's output: the points of its moments are placed, not
given up as "its run ended" once the caller's output is journaled (Restate's interrupt-regenerate example:
every point of CodingTask/run_task, sent by CodingAgent/message, was not reached)."""

from __future__ import annotations

import json
from pathlib import Path

from support import run_paidtwice

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

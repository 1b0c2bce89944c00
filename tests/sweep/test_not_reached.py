"""A crash point whose run never reaches its moment is said not placed, with why, after its retries, and the
sweep goes on with its other points: the first-refund desk waits for a person only on a customer's first run
(its own records, outside Restate, say who was approved), so no point's run comes back to that wait.
`sweep --check` fails on the undecided point, `--allow-undecided` passes it."""

from __future__ import annotations

import json
from pathlib import Path

from support import run_paidtwice

AGENT = Path(__file__).resolve().parent / "first_refund_agent"


def test_a_moment_no_run_reaches_again_is_not_placed_and_the_sweep_goes_on(tmp_path: Path) -> None:
    records = tmp_path / "sweep.json"
    done = run_paidtwice(
        "sweep", "--app", "agent:app", "--app-dir", str(AGENT), "--script", str(AGENT / "script.toml"),
        "--variation", "steady", "--input", '"ada"', "--retries", "1", "--restart-delay", "0.2",
        "--check", "--json", str(records),
        env={"REFUND_RECORDS": str(tmp_path / "approved.txt")},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Error:" not in done.stderr, done.stderr
    points = json.loads(records.read_text())
    [waiting] = [p for p in points if p["kind"] == "waiting"]
    # Retried once, then said: never killed, with what its run did instead (it went on past the wait).
    assert not waiting["confirmed"] and waiting["status"] == "not reached", waiting["not_placed"]
    assert waiting["retries"] == 1 and len(waiting["missed"]) == 1, waiting["missed"]
    assert "never reached the moment" in waiting["not_placed"] and "ended" in waiting["not_placed"]
    assert waiting["killed_at"] is None and not waiting["answers_asked_again"]
    # The points up to the step that found the customer approved were reached, killed there and measured;
    # those after its result (the wait and the moment before it) are said as the wait is, the sweep went on.
    missed = [p for p in points if not p["confirmed"]]
    assert all(p["status"] == "not reached" and "never reached" in p["not_placed"] for p in missed), missed
    placed = [p for p in points if p["order"] < min(p["order"] for p in missed)]
    assert placed and all(p["confirmed"] and p["status"] == "completed" for p in placed), placed
    assert any(p["crash_point"] == "in flight: step approved before" for p in placed)
    said = f"#{waiting['order']} {waiting['crash_point']}: could not place after 1 retry, because its run"
    assert said in done.stderr, done.stderr
    assert "check fails" in done.stderr and "undecided" in done.stderr
    # The same records: undecided fails a check unless it is allowed.
    report = tmp_path / "sweep.html"
    strict = run_paidtwice("report", "--check", str(records), "-o", str(report))
    allowed = run_paidtwice("report", "--check", "--allow-undecided", str(records), "-o", str(report))
    assert (strict.returncode, allowed.returncode) == (1, 0), strict.stdout + strict.stderr + allowed.stderr

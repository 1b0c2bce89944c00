"""A kill aimed at a durable pause lands in it however short the pause and however late the kill: the host
withholds the pause's end from the handler until the kill, and the server's journaling of that end meanwhile
is no miss (the handler never went on)."""

from __future__ import annotations

import json
from pathlib import Path

from support import run_paidtwice

AGENT = Path(__file__).resolve().parent / "pause_agent"


def test_a_kill_in_a_twenty_millisecond_pause_lands_in_it_at_the_first_try(tmp_path: Path) -> None:
    records = tmp_path / "sweep.json"
    done = run_paidtwice(
        "sweep", "--app", "agent:app", "--app-dir", str(AGENT), "--input", '"a memo"',
        "--variation", "steady", "--check", "--json", str(records),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    points = json.loads(records.read_text())
    pauses = [p for p in points if p["kind"] == "pause"]
    assert len(pauses) == 1, [p["crash_point"] for p in points]
    pause = pauses[0]
    assert pause["confirmed"] and pause["retries"] == 0, pause["not_placed"]
    assert pause["status"] == "completed", pause
    # Killed in the pause: the replay asked the model only for the call after it, once, as the clean run did.
    assert pause["answers_asked_again"] == 0 and pause["extra_model_calls"] == 0, pause

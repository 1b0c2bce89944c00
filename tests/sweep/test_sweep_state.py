"""A Virtual Object swept with its state set first (`--state JSON`, or a script file's `[state]` table): a
chat's second message is swept, at every point, not only its first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice.lab import Lab
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "chat_agent"
SCRIPT = AGENT / "script.toml"


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        # The script's [state]: one exchange before, so this is the conversation's second message.
        AppTarget("agent:app", "Conversation", "say", "Weather?", mode="seeded", cwd=str(AGENT), key="c/1"),
        # A state given with the target (as --state gives it) wins over the script's: an empty history.
        AppTarget(
            "agent:app",
            "Conversation",
            "say",
            "Weather?",
            mode="fresh",
            cwd=str(AGENT),
            key="c/2",
            state=(("history", "[]"),),
        ),  # fmt: skip
    ]
    script = load_script_file(SCRIPT, "steady")
    assert script.state and script.state[0][0] == "history"
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


def test_the_seeded_state_makes_every_run_the_second_message(matrices: dict[str, SweepMatrix]) -> None:
    matrix = matrices["seeded"]
    assert matrix.clean.answer == json.dumps("message 2: IT IS SUNNY IN PARIS.")
    # The model was asked with the seeded conversation: its second turn answered.
    assert matrix.clean.model_turns == (2,)
    assert "Command: GetEagerState" in matrix.clean.journal or "Command: GetLazyState" in matrix.clean.journal
    assert matrix.points
    for point in matrix.points:
        # Each point's invocation read the same seeded state: the same answer as the clean run's.
        assert point.confirmed, point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point
    returned = [p for p in matrix.points if p.kind == "model-returned"]
    assert returned and all(p.extra_model_calls == 1 for p in returned)


def test_a_state_given_with_the_target_wins_over_the_scripts(matrices: dict[str, SweepMatrix]) -> None:
    matrix = matrices["fresh"]
    assert matrix.clean.answer == json.dumps("message 1: HELLO! HOW CAN I HELP?")
    assert matrix.clean.model_turns == (1,)
    assert all(p.status == "completed" and p.answer_matches for p in matrix.points)


def one_line(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "sweep", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


APP = ["--app", "agent:app", "--app-dir", str(AGENT), "--script", str(SCRIPT), "--variation", "steady"]


def test_bad_state_is_one_line_and_exit_2() -> None:
    line = one_line(*APP, "--service", "Conversation", "--handler", "say", "--state", "{not json")
    assert "--state is not JSON" in line
    line = one_line(*APP, "--service", "Conversation", "--handler", "say", "--state", "[1, 2]")
    assert "--state must be a JSON object" in line
    line = one_line("--state", '{"a": 1}')
    assert "--state goes with --app or --cmd" in line


def test_state_for_a_plain_service_is_one_line_and_exit_2() -> None:
    line = one_line(*APP, "--service", "Desk", "--handler", "quote", "--state", '{"history": []}')
    assert "Desk is a plain Service, which has none" in line

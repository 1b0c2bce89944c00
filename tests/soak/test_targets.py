"""The soak takes any target: a user's app with nothing named (its one handler found, its input made from
its schema, its model answered from each request), and a kind it cannot count refused in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.results import load_results
from paidtwice.soak import SoakOptions, soak
from paidtwice.targets import CommandTarget

ROOT = Path(__file__).resolve().parents[2]
PLANNER = ROOT / "tests" / "soak" / "planner_agent"


def test_an_app_soaks_with_no_script_and_nothing_named(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "soak", "--app", "agent", "--app-dir", str(PLANNER)]
        + ["--invocations", "40", "--kills", "2", "--json", str(tmp_path / "soak.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = load_results([tmp_path / "soak.json"]).soaks
    assert record.app == "agent Planner/plan"
    assert record.sent == 40
    assert record.sent == record.completed + record.unfinished + record.paused + record.lost
    assert record.lost == 0 and record.unfinished == 0 and record.completed == 40
    # Measured on the clean invocation under auto answers: a tool call, then the words; both journaled.
    assert record.clean_model_calls == 2 and record.model_steps == ("model",)
    assert record.model_calls >= 40 * record.clean_model_calls
    assert 0 <= record.extra_model_calls <= record.bound
    assert len(record.kill_snapshots) == 2


def test_a_command_s_deployment_is_refused_before_anything_starts(lab: Lab) -> None:
    target = CommandTarget("node server.js", "Agent", "run", None, "Agent (node)")
    with pytest.raises(UsageError, match="^a deployment started by a command cannot be soaked: "):
        soak(lab, SoakOptions(invocations=10, kills=1), target=target)


def test_an_app_serving_several_handlers_needs_one_named() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "soak", "--app", "concierge:app"]
        + ["--app-dir", str(ROOT / "tests" / "agents")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "concierge:app serves 2 handlers (" in lines[0], done.stderr
    assert lines[0].endswith("name one with --service and --handler") and done.stdout == ""

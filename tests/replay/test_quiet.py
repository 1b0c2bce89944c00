"""Framework chatter stays out of paidtwice's output.

The OpenAI Agents SDK, left to itself, says "OPENAI_API_KEY is not set, skipping trace export" (at exit, when
it flushes its traces); the agent environment paidtwice sets for a sweep's agents and for the app
replay-check loads keeps it out of both commands' output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import DEADLINE

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = ROOT / "examples" / "frameworks" / "script.toml"
APP = ["--app", "chatty_agents_app:app", "--app-dir", str(HERE), "--script", str(SCRIPT)]
CHATTER = ("trace export", "OPENAI_API_KEY")


def paidtwice(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # A user's environment without the SDK's key or its tracing switch.
    base = {
        k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_AGENTS_DISABLE_TRACING")
    }
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", *args],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=DEADLINE,
    )


def test_sweep_and_replay_check_print_no_framework_chatter(tmp_path: Path) -> None:
    journals = tmp_path / "journals"
    question = '"How much is 120 EUR in USD?"'
    swept = paidtwice(
        "sweep", *APP, "--service", "Chatty", "--handler", "quote", "--input", question,
        "--variation", "steady", "--save-journals", str(journals),
    )  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    assert "Chatty/quote, script steady: clean run" in swept.stdout
    assert not [c for c in CHATTER if c in swept.stdout + swept.stderr], swept.stdout + swept.stderr
    journal = next(p for p in sorted(journals.glob("*.json")) if not p.name.endswith(".prefix.json"))
    checked = paidtwice("replay-check", *APP, str(journal))
    assert checked.returncode == 0, checked.stderr
    assert "replays" in checked.stdout
    assert checked.stderr == "" and not [c for c in CHATTER if c in checked.stdout], checked.stdout
    # The user's own setting wins: with tracing switched on, the SDK's chatter is back (the check above can
    # fail).
    noisy = paidtwice("replay-check", *APP, str(journal), OPENAI_AGENTS_DISABLE_TRACING="0")
    assert "skipping trace export" in noisy.stderr, noisy.stderr

"""An app whose import raises a multi-line error is refused in one line naming the exception and its first
line, what failed: pydantic's error for a type it has no schema for ends with "For further information visit
...", which named nothing. Discovery (sweep, record, soak) and replay-check say it alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice._exceptions import UsageError
from paidtwice.targets import discover

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

UNKNOWN_TYPE = '''\
import pydantic
import restate


class Part:
    """A plain class: pydantic makes no schema for it."""


class Reply(pydantic.BaseModel):
    part: Part


agent = restate.Service("Agent")
app = restate.app(services=[agent])
'''

SAID = (
    "cannot import agent: PydanticSchemaGenerationError: Unable to generate pydantic-core schema for "
    "<class 'agent.Part'>."
)


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(UNKNOWN_TYPE)
    return tmp_path


def test_discovery_names_the_error_s_first_line(app_dir: Path) -> None:
    with pytest.raises(UsageError) as refused:
        discover("agent:app", cwd=str(app_dir))
    said = str(refused.value)
    assert said.startswith(SAID) and "\n" not in said, said
    assert "For further information" not in said, said


@pytest.mark.parametrize(
    "command",
    [
        ["sweep", "--app", "agent:app", "--app-dir"],
        ["replay-check", str(FIXTURES / "naive-changed-for-good.json"), "--app", "agent:app", "--app-dir"],
    ],
    ids=["sweep", "replay-check"],
)
def test_the_command_says_it_in_one_line(app_dir: Path, command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", *command, str(app_dir)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("answers:")]
    assert len(lines) == 1 and SAID in lines[0], done.stderr
    assert "For further information" not in done.stderr and "Traceback" not in done.stderr, done.stderr

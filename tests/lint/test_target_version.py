"""lint parses the syntax of the Python the project targets: valid 3.12 code is never PT000 (PT000 is for
code no Python it may target parses), and a target newer than any parser found is one clear line."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

PROJECT = Path(__file__).parent / "corpus_py312"
AGENT = PROJECT / "agent.py"
RUNNING = sys.version_info[:2]


def python_312_or_newer() -> str | None:
    """A directory holding a python3.N (N >= 12) that runs, to put first on PATH; None if there is none."""
    home = os.path.expanduser("~")
    candidates = [p for minor in range(12, 21) for p in glob.glob(f"{home}/.pyenv/versions/3.{minor}*/bin")]
    candidates += [os.path.dirname(p) for m in range(12, 21) if (p := shutil.which(f"python3.{m}"))]
    for folder in candidates:
        for minor in range(12, 21):
            exe = Path(folder) / f"python3.{minor}"
            if exe.exists() and subprocess.run([exe, "-c", "pass"], capture_output=True).returncode == 0:
                return folder
    return None


def lint(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", "lint", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE,
    )


def test_the_fixture_is_3_12_syntax_the_running_python_refuses() -> None:
    # The test means something only where the running parser refuses the file (as 3.11 does).
    if RUNNING >= (3, 12):
        pytest.skip("the running Python parses 3.12 syntax itself")
    with pytest.raises(SyntaxError):
        compile(AGENT.read_text(), str(AGENT), "exec")


@pytest.mark.skipif(RUNNING >= (3, 12), reason="the running Python parses 3.12 syntax itself")
def test_valid_3_12_code_is_linted_with_a_newer_parser_never_pt000() -> None:
    folder = python_312_or_newer()
    if folder is None:
        pytest.skip("no python3.12 or newer on this machine")
    # The target is read from the project's requires-python (">=3.12").
    done = lint(str(PROJECT), path=f"{folder}{os.pathsep}{os.environ['PATH']}")
    assert "PT000" not in done.stdout + done.stderr, done
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and ":13:" in lines[0] and "PT001" in lines[0], done
    assert done.returncode == 1 and "Traceback" not in done.stderr


@pytest.mark.skipif(RUNNING >= (3, 19), reason="the running Python parses everything up to 3.19")
def test_a_target_newer_than_any_parser_found_is_one_clear_line() -> None:
    done = lint("--target-version", "3.19", str(AGENT))
    assert "PT000" not in done.stdout + done.stderr, done
    assert done.stdout == ""
    [line, summary] = done.stderr.splitlines()
    assert line.startswith(f"{AGENT}: not checked: this Python ({RUNNING[0]}.{RUNNING[1]}) cannot parse it")
    assert "the project targets Python 3.19 (--target-version 3.19)" in line
    assert "run paidtwice lint with Python 3.19 or newer, or put python3.19 on PATH" in line
    assert summary.startswith("0 findings in 1 file")
    # Not passed: a file that was not checked fails the run as a finding does.
    assert done.returncode == 1


def test_code_that_no_target_parses_is_still_pt000(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import restate\n\ndef f(:\n    pass\n")
    done = lint("--target-version", "3.19", str(broken))
    # Without a parser for 3.19 it cannot be called a syntax error for certain either: said so plainly.
    assert "not checked" in done.stderr and done.returncode == 1
    done = lint(str(broken))
    assert "PT000" in done.stdout and done.returncode == 1


def test_a_bad_target_version_is_one_line_and_exit_2() -> None:
    done = lint("--target-version", "twelve", str(AGENT))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert [line for line in done.stderr.splitlines() if line.strip()] == [
        "Error: --target-version: 'twelve' is not a Python version like 3.12"
    ]

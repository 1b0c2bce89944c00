"""The wait for an app to load is no fixed limit: it grows with the slowest load measured, a variable sets
it, and a wait that runs out says which variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice._exceptions import UsageError
from paidtwice.engine import LOAD_TIMEOUT, _startup, load_timeout, loaded_in

SLOW = Path(__file__).resolve().parent / "slow_app"


def test_the_wait_grows_with_the_slowest_load_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOAD_TIMEOUT, raising=False)
    monkeypatch.setattr(_startup, "_slowest", 0.0)
    before = load_timeout()
    loaded_in(before)  # a load as long as the whole wait was
    assert load_timeout() > before
    monkeypatch.setenv(LOAD_TIMEOUT, "7.5")
    assert load_timeout() == 7.5
    monkeypatch.setenv(LOAD_TIMEOUT, "soon")
    with pytest.raises(UsageError, match=LOAD_TIMEOUT):
        load_timeout()


def test_a_load_longer_than_the_wait_is_one_line_naming_the_variable() -> None:
    # The app's import burns 3 s of CPU; the wait is set below it.
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "sweep", "--app", "agent:app", "--app-dir", str(SLOW)],
        capture_output=True,
        text=True,
        env={**os.environ, LOAD_TIMEOUT: "1"},
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "agent:app did not load in 2s" in last and f"set {LOAD_TIMEOUT}=SECONDS" in last, done.stderr

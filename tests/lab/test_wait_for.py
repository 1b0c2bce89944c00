"""`wait_for` with a run's progress: a run that still moves is waited for past the timeout (a loaded machine
makes it slow, not stuck); a still one is given up after the timeout, as one with no progress read."""

from __future__ import annotations

import itertools
import time

import pytest

from paidtwice._exceptions import ExperimentError
from paidtwice.lab import wait_for


def test_a_run_that_moves_is_waited_for_past_the_timeout() -> None:
    timeout = 2.0
    began = time.monotonic()
    steps = itertools.count()
    wait_for(
        "a slow run",
        lambda: time.monotonic() - began >= 2 * timeout,
        timeout=timeout,
        stop=lambda: False,
        progress=lambda: next(steps),
    )
    assert time.monotonic() - began >= 2 * timeout


@pytest.mark.parametrize("progress", [None, lambda: "still"], ids=["unread", "still"])
def test_a_still_run_is_given_up_after_the_timeout(progress: object) -> None:
    with pytest.raises(ExperimentError, match="waiting for a stuck run"):
        wait_for("a stuck run", lambda: False, timeout=0.2, stop=lambda: False, progress=progress)  # type: ignore[arg-type]

"""Server-free checks of the shares of a clean run's time its points cover: the time the stub held a ready
answer back (waiting for the proxy to see a step begin) is no time of the agent's and counts to no point."""

from __future__ import annotations

import pytest

from paidtwice.results import CrashPoint
from paidtwice.targets._timeline import with_cover


def _points(*begins: float) -> list[CrashPoint]:
    return [CrashPoint(f"p{n}", n, "after-entry", n, begins=at) for n, at in enumerate(begins, start=1)]


def test_shares_are_each_moment_s_time_over_the_run_s() -> None:
    shares = [p.covers for p in with_cover(_points(0.0, 1.0, 3.0), 4.0)]
    assert shares == pytest.approx([0.25, 0.5, 0.25])


def test_the_stub_s_waits_count_to_no_point() -> None:
    # A second of the first moment was the stub holding its answer: the agent's run was 3 seconds long.
    shares = [p.covers for p in with_cover(_points(0.0, 2.0, 3.0), 4.0, [(0.5, 1.5)])]
    assert shares == pytest.approx([1 / 3, 1 / 3, 1 / 3])


def test_waits_of_calls_answered_together_count_once() -> None:
    together = [(0.5, 1.5), (0.5, 1.5), (1.0, 1.5)]
    shares = [p.covers for p in with_cover(_points(0.0, 2.0, 3.0), 4.0, together)]
    assert shares == pytest.approx([1 / 3, 1 / 3, 1 / 3])

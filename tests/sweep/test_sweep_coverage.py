"""After a sweep, what it reached and what not: the function tools the stub's answers called and those they
did not, the hosted tools no stub answer can call (OpenAI's `web_search`), the awakeables resolved; in the
text, on the page, in the JSON records and as a JUnit case skipped with what was not reached."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.report import format_handler_summary, sweep_cases, sweep_sections
from paidtwice.results import load_results, write_results
from paidtwice.sweep import Answers, sweep
from paidtwice.sweep._sweep import SweepMatrix
from paidtwice.targets import TargetSpec

AGENT = Path(__file__).resolve().parent / "coverage_agent"


@pytest.fixture(scope="module")
def swept(lab: Lab) -> Iterator[Future[list[SweepMatrix]]]:
    spec = TargetSpec(app="agent:app", input="A weekend in Paris", app_dir=AGENT)
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(sweep, spec, answers=Answers(variations=("steady",)), lab=lab)


def test_what_the_sweep_reached_and_what_not_is_said_everywhere(
    swept: Future[list[SweepMatrix]], tmp_path: Path
) -> None:
    (matrix,) = swept.result()
    points = list(matrix.points)
    assert points
    first = points[0].coverage
    assert set(first.tools_offered) == {"lookup", "book"}
    assert len(first.tools_called) == 1 and first.tools_not_called
    assert first.hosted_tools == ("web_search",)
    assert first.waits_resolved == ("awakeable 1",) and not first.waits_unresolved
    assert first.handlers_ran == ("Trips/plan",)
    missed = first.tools_not_called[0]

    text = format_handler_summary(points)
    assert (
        f"  reached: tools called {first.tools_called[0]} (of 2 tools offered); resolved awakeable 1" in text
    )
    assert f"  not reached: tools no answer called: {missed} " in text
    assert "hosted tools the stub cannot call: web_search" in text

    page = "".join(section.body for section in sweep_sections(points))
    assert "<b>Trips/plan</b> reached: tools called" in page and "web_search" in page

    (case,) = [c for c in sweep_cases(points) if c.suite == "sweep Trips/plan coverage"]
    assert case.failure is None and case.skipped is not None
    assert missed in case.skipped and "web_search" in case.skipped

    write_results(tmp_path / "sweep.json", points)
    assert load_results([tmp_path / "sweep.json"]).points[0].coverage == first

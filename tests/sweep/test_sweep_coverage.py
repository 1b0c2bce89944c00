"""After a sweep, what it reached and what not: the function tools the stub's answers called and those they
did not, the hosted tools no stub answer can call (OpenAI's `web_search`), the awakeables resolved; in the
text, on the page, in the JSON records and as a JUnit case skipped with what was not reached."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import run_paidtwice

from paidtwice.lab import Lab
from paidtwice.report import format_handler_summary, sweep_cases, sweep_sections
from paidtwice.results import load_results, write_results
from paidtwice.sweep import Answers, sweep
from paidtwice.sweep._sweep import SweepMatrix
from paidtwice.targets import TargetSpec

AGENT = Path(__file__).resolve().parent / "coverage_agent"


@pytest.fixture(scope="module")
def sweeps(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[Any]]]:
    """The agent swept as by default (from Python), and with every tool reached (`sweep --every-tool`, as a
    user runs it, its records in JSON), at once."""
    spec = TargetSpec(app="agent:app", input="A weekend in Paris", app_dir=AGENT)
    records = tmp_path_factory.mktemp("every_tool") / "sweep.json"
    every_tool = (
        "sweep", "--app", "agent:app", "--app-dir", str(AGENT), "--variation", "steady",
        "--input", '"A weekend in Paris"', "--every-tool", "--json", str(records),
    )  # fmt: skip
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield {
            "default": pool.submit(sweep, spec, answers=Answers(variations=("steady",)), lab=lab),
            "every tool": pool.submit(lambda: (run_paidtwice(*every_tool), records)),
        }


@pytest.fixture
def swept(sweeps: dict[str, Future[Any]]) -> Future[list[SweepMatrix]]:
    return sweeps["default"]


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


def test_every_tool_reaches_the_tool_no_answer_called_and_sweeps_what_follows_it(
    sweeps: dict[str, Future[Any]],
) -> None:
    (default,) = sweeps["default"].result()
    done, records = sweeps["every tool"].result()
    assert done.returncode == 0, done.stdout + done.stderr
    points = list(load_results([records]).points)
    plain = [p for p in points if p.script == "steady"]
    # The plain answers' points are the default sweep's: the same points, each with the same verdict.
    assert [(p.crash_point, p.status, p.answer, p.pays_twice) for p in plain] == [
        (p.crash_point, p.status, p.answer, p.pays_twice) for p in default.points
    ]
    (called,) = default.points[0].coverage.tools_called
    (missed,) = default.points[0].coverage.tools_not_called
    # Then a run whose first answer calls the missed tool, swept too: its points run the missed tool's step,
    # one is killed inside it.
    reach = [p for p in points if p.script != "steady"]
    assert {p.script for p in reach} == {f"steady+{missed}"}, {p.script for p in reach}
    assert all(p.mode == "Trips/plan" and p.confirmed and p.status == "completed" for p in reach), reach
    assert all(dict(p.step_runs).get(missed) for p in reach), [p.step_runs for p in reach]
    names = [p.crash_point for p in reach]
    assert f"in flight: step {missed}" in names and "waiting for the awakeable" in names, names
    # Every offered tool is now called; only the hosted one is said not reached.
    summary = format_handler_summary(points)
    assert f"tools called {called}, {missed} (of 2 tools offered)" in summary, summary
    assert "tools no answer called" not in summary, summary
    assert "hosted tools the stub cannot call: web_search" in summary, summary
    said = f"Trips/plan: {len(points)} crash points (steady, steady+{missed})"
    assert said in done.stdout, done.stdout
    assert f"Trips/plan, script steady+{missed}: clean run" in done.stdout, done.stdout
    default_text = format_handler_summary(list(default.points))
    assert f"tools no answer called: {missed} (what follows them is not swept; --every-tool reaches" in (
        default_text
    )


def test_every_tool_goes_with_auto_answers_only(tmp_path: Path) -> None:
    script = tmp_path / "script.toml"
    script.write_text('[[turn]]\ntext = "ok"\n')
    done = run_paidtwice("sweep", "--app", "agent:app", "--app-dir", str(AGENT), "--script", str(script),
                         "--every-tool")  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--every-tool makes auto answers call each tool" in done.stderr.strip().splitlines()[-1]

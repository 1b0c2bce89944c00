"""What the sweep prints for an agent whose replay under `changed` takes a shorter path than its clean run.

The Trip agent (tests/sweep/trip_agent) asks the model three times and runs two journaled steps; asked turn 1
again, the `changed` script answers outright. Its model calls are made outside the journal.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paidtwice._words import count, signed
from paidtwice.lab import Lab
from paidtwice.report._text import format_run, format_sweep
from paidtwice.results import RunRecord
from paidtwice.sweep._options import Answers
from paidtwice.sweep._sweep import SweepMatrix, sweep
from paidtwice.targets import TargetSpec
from paidtwice.testing import assert_pays_once

TRIP = Path(__file__).parent / "trip_agent"

# A count followed by a plural noun where the singular belongs, or a noun hedged with "(s)".
WRONG_NUMBER = re.compile(
    r"(?<![\d.])1 (model calls|model answers|answers|points|step runs|tool calls|attempts|retries|mismatches|"
    r"files|findings|crash points|kills|experiments|Restate handlers)\b|\(s\)"
)


@pytest.fixture(scope="module")
def matrix(lab: Lab) -> SweepMatrix:
    [changed] = sweep(
        TargetSpec(
            app="agent:app",
            service="Trip",
            handler="plan",
            input="How much is 120 EUR in USD, with a 10% tip?",
            app_dir=TRIP,
        ),
        answers=Answers(script=TRIP / "script.toml", variations=("changed",)),
        lab=lab,
    )
    return changed


def shorter(matrix: SweepMatrix) -> list[int]:
    return [p.order for p in matrix.points if p.extra_model_calls < 0]


def test_a_shorter_replay_prints_signed_differences_and_says_what_it_skipped(matrix: SweepMatrix) -> None:
    assert matrix.clean.model_calls == 3 and dict(matrix.clean.step_runs) == {"convert": 1, "tip": 1}
    assert shorter(matrix), "no point took a shorter path"
    text = format_sweep(matrix)
    assert "+-" not in text and "+0" not in text
    rows = {line.split()[0]: line for line in text.splitlines() if line[:1].isdigit()}
    for point in matrix.points:
        row = rows[str(point.order)]
        assert f"  {signed(point.extra_model_calls)}  " in row, row
        assert f"  {signed(point.extra_step_runs)} (" in row, row
        path = point.shorter_path(matrix.clean)
        if point.extra_model_calls < 0:
            assert point.status == "completed" and not point.answer_matches, point.crash_point
            assert path is not None
            assert f"#{point.order} took a shorter path than the clean run: {path}" in text
            ran = dict(point.step_runs)
            skipped = [name for name, n in matrix.clean.step_runs if ran.get(name, 0) < n]
            assert skipped and path.startswith("answered without " + ", ".join(f"step {s}" for s in skipped))
            assert f"{count(point.model_calls, 'model call')} in all, the clean run 3" in path
            # ... and which calls it left out: the turns after the first, which the replay never asked.
            assert re.search(r"; never asked turns? (2, )?3 of the script; ", path), path
        elif point.status != "completed" or point.extra_step_runs >= 0:
            assert path is None and f"#{point.order} took a shorter path" not in text


def test_the_pytest_helper_prints_signed_differences(matrix: SweepMatrix) -> None:
    # The points that asked turn 1 again paid for its answer twice, though their totals are lower.
    twice = [p for p in matrix.points if p.order in shorter(matrix) and p.pays_twice]
    assert twice and all(p.answers_asked_again >= 1 for p in twice)
    with pytest.raises(AssertionError) as failed:
        assert_pays_once([matrix])
    message = str(failed.value)
    assert "+-" not in message and "(s)" not in message
    for point in twice:
        again = count(point.answers_asked_again, "answer")
        assert f"{point.crash_point}: {again} asked for again, " in message
        assert f"{count(point.extra_model_calls, 'model call', sign=True)} (" in message
        assert f"a shorter path: {point.shorter_path(matrix.clean)}" in message
    assert not WRONG_NUMBER.search(message), message


def test_counts_print_the_word_that_fits(matrix: SweepMatrix) -> None:
    assert count(1, "tool call") == "1 tool call" and count(4, "attempt") == "4 attempts"
    assert count(1, "retry", "retries") == "1 retry" and count(0, "retry", "retries") == "0 retries"
    assert count(-1, "model call", sign=True) == "-1 model call"
    assert count(2, "step run", sign=True) == "+2 step runs"
    text = format_sweep(matrix)
    assert not WRONG_NUMBER.search(text), WRONG_NUMBER.search(text)


def test_the_run_report_prints_the_word_that_fits(deck_records: dict[str, RunRecord]) -> None:
    clean = format_run(deck_records["clean"])
    assert "1 tool call, 1 attempt" in clean
    for record in deck_records.values():
        text = format_run(record)
        assert not WRONG_NUMBER.search(text), (record.name, WRONG_NUMBER.search(text))


def test_an_agent_that_journals_no_model_call_is_said_to(matrix: SweepMatrix) -> None:
    assert matrix.clean.journaled_model_calls == 0
    summary = "\n".join(matrix.summary())
    assert "no model call is journaled in this agent" in summary
    assert "journaled model answers at" not in summary
    # Points before the first answer came back had no answer to keep; the others had at least one.
    first_answer = next(p.order for p in matrix.points if p.kind == "model-returned")
    for point in matrix.points:
        assert (point.model_answers_at_kill > 0) == (point.order >= first_answer), point.crash_point


def test_the_html_report_prints_signed_differences(matrix: SweepMatrix) -> None:
    from paidtwice.report._html_sweep import sweep_sections

    page = "".join(section.body for section in sweep_sections(list(matrix.points)))
    assert "+-" not in page
    assert not WRONG_NUMBER.search(page), WRONG_NUMBER.search(page)
    for point in matrix.points:
        if point.extra_model_calls < 0:
            assert f"{count(point.extra_model_calls, 'model call', sign=True)}, " in page

"""The deck's, the sweep's and `paidtwice run`'s tables fit an 80- and a 120-column terminal, with no text
lost, and keep their full width (one line per row, as before) under --wide or when stdout is not a terminal.

The tables are made from captured records (tests/fixtures/results/); how the CLI chooses the width is
checked in a real pseudo-terminal.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice.report import format_deck_table, format_run, load_results, table
from paidtwice.report._text import format_crash_cost, format_sweep
from paidtwice.results import CleanRun, ComparisonRecord, RunRecord, SweepMatrix

RESULTS = Path(__file__).resolve().parents[1] / "fixtures" / "results"


def deck() -> str:
    return format_deck_table(load_results([RESULTS / "deck.json"]).records)


def matrices() -> list[SweepMatrix]:
    points = load_results([RESULTS / "sweep.json"]).points
    clean = CleanRun(
        status="completed",
        answer="It is 18 degrees and sunny in Paris: a light jacket is enough.",
        model_calls=2,
        step_runs=(("weather", 1),),
        journal=("Input", "Run weather", "Run", "Sleep", "Sleep", "Output"),
        invocation_id="inv_1",
        journaled_model_calls=0,
    )
    modes = dict.fromkeys((p.mode, p.script) for p in points)
    return [
        SweepMatrix(mode, script, clean, tuple(p for p in points if (p.mode, p.script) == key), 1.0)
        for key in modes
        for mode, script in [key]
    ]


def words(text: str) -> Counter[str]:
    """The text's words, without the rules under table headers, and without the ";" and ":" a stacked row
    puts between a header and its value."""
    return Counter(w.rstrip(";:") for w in text.split() if set(w) != {"-"})


def headers(text: str) -> Counter[str]:
    """The words of a table's header lines (those above a rule)."""
    lines = text.splitlines()
    above = [line for line, rule in zip(lines, lines[1:], strict=False) if set(rule) == {"-", " "}]
    return sum((words(line) for line in above), Counter())


def assert_fits_and_keeps(full: str, fitted: str, width: int) -> None:
    """No line of `fitted` is wider than `width`, and every word of `full` is in it, as often (a stacked
    row names its cells by their headers; only the first two columns' header words may be missing)."""
    assert max(len(line) for line in fitted.splitlines()) <= width
    lost = words(full) - words(fitted)
    assert not lost - headers(full), f"lost at {width} columns: {sorted(lost - headers(full))}"


def test_the_tables_are_wider_than_a_terminal_today() -> None:
    """What this is about: at full width the deck's and the sweep's lines exceed 120 columns."""
    assert max(len(line) for line in deck().splitlines()) > 120
    assert max(len(line) for m in matrices() for line in format_sweep(m).splitlines()) > 120


@pytest.mark.parametrize("width", [80, 120])
def test_the_deck_table_fits_the_terminal_with_no_text_lost(width: int) -> None:
    records = load_results([RESULTS / "deck.json"]).records
    assert_fits_and_keeps(deck(), format_deck_table(records, width=width), width)


@pytest.mark.parametrize("width", [80, 120])
def test_the_sweep_matrices_fit_the_terminal_with_no_text_lost(width: int) -> None:
    for matrix in matrices():
        assert_fits_and_keeps(format_sweep(matrix), format_sweep(matrix, width=width), width)
    assert_fits_and_keeps(
        format_crash_cost(matrices(), 5), format_crash_cost(matrices(), 5, width=width), width
    )


def test_at_120_columns_the_sweep_keeps_one_column_per_figure() -> None:
    """A table that fits with its cells wrapped keeps its header line; only a narrower one stacks."""
    matrix = matrices()[0]
    at_120 = format_sweep(matrix, width=120).splitlines()
    assert any(line.startswith("#") and "crash point" in line and "status" in line for line in at_120)
    at_80 = format_sweep(matrix, width=80)
    assert "status: completed" in at_80


def test_without_a_width_the_output_is_todays_one_line_per_row() -> None:
    records = load_results([RESULTS / "deck.json"]).records
    assert format_deck_table(records, width=None) == deck()
    assert format_deck_table(records, width=10_000) == deck()
    lines = deck().splitlines()
    assert len(lines) == 2 + len(records)  # header, rule, a row each
    for matrix in matrices():
        assert format_sweep(matrix, width=None) == format_sweep(matrix)


def comparison() -> ComparisonRecord:
    """Two captured runs side by side, as a comparison row (slow-model-recovery) prints them."""
    runs = [r for r in load_results([RESULTS / "deck.json"]).records if isinstance(r, RunRecord)][:2]
    checks = runs[0].checks[:1]
    return ComparisonRecord(
        "two-runs", "recovery", "the journaled side recovers sooner", tuple(runs), 3.1, checks, True, 3.2, 3.0
    )


@pytest.mark.parametrize("width", [80, 120])
def test_what_run_prints_for_each_kind_of_record_fits_the_terminal_with_no_text_lost(width: int) -> None:
    """A run, a curve, a comparison and a recovery walk, as `paidtwice run` (and the deck, below its table)
    prints them."""
    from paidtwice.cli._lab import _format_record

    records = [*load_results([RESULTS / "deck.json"]).records, comparison()]
    assert {type(r).__name__ for r in records} == {
        "RunRecord",
        "CurveRecord",
        "ComparisonRecord",
        "RecoveryRecord",
    }
    wider = 0
    for record in records:
        full = _format_record(record, None)
        wider += max(len(line) for line in full.splitlines()) > width
        fitted = _format_record(record, width)
        assert max(len(line) for line in fitted.splitlines()) <= width
        # A word longer than the line (an admin call's path, its answer) is broken across lines, in order.
        squeezed = "".join(fitted.split())
        lost = [w for w in words(full) - words(fitted) - headers(full) if w not in squeezed]
        assert not lost, f"lost at {width} columns: {lost}"
    assert wider, f"no record is wider than {width} columns: the test would pass without fitting"


def test_without_a_width_run_prints_as_before() -> None:
    from paidtwice.cli._lab import _format_record

    records = load_results([RESULTS / "deck.json"]).records
    for record in records:
        assert _format_record(record, 10_000) == _format_record(record, None)
    run = next(r for r in records if isinstance(r, RunRecord))
    assert _format_record(run, None) == format_run(run)


def test_a_cell_longer_than_its_column_is_wrapped_not_cut() -> None:
    text = table(["a", "b"], [["x" * 30, "one two three four five six seven"]], width=24)
    assert max(len(line) for line in text.splitlines()) <= 24
    assert "x" * 30 in "".join(text.split())
    assert words("one two three four five six seven") - words(text) == Counter()


CHOOSE = (
    "import sys; from paidtwice.cli._options import output_width; "
    "print(output_width('--wide' in sys.argv[1:]))"
)


def width_in(*args: str, terminal: bool, columns: str = "80") -> str:
    env = {**os.environ, "COLUMNS": columns, "LINES": "40"}
    if not terminal:
        done = subprocess.run(
            [sys.executable, "-c", CHOOSE, *args], capture_output=True, text=True, env=env, timeout=DEADLINE
        )
        return done.stdout.strip()
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHOOSE, *args],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=env,
            timeout=DEADLINE,
        )
        assert done.returncode == 0, done.stderr
        return os.read(leader, 1024).decode().strip()
    finally:
        os.close(leader)
        os.close(follower)


def test_a_terminal_gets_its_width_and_a_pipe_or_wide_gets_full_width() -> None:
    assert width_in(terminal=True, columns="80") == "80"
    assert width_in(terminal=True, columns="120") == "120"
    assert width_in("--wide", terminal=True) == "None"
    assert width_in(terminal=False) == "None"


def run_in_terminal(args: list[str], columns: str, *, cwd: Path | None = None) -> str:
    """What a command prints in a pseudo-terminal `columns` wide."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "paidtwice", *args],
            stdout=follower,
            stderr=subprocess.PIPE,
            env={**os.environ, "COLUMNS": columns, "LINES": "40"},
            timeout=DEADLINE,
            cwd=cwd,
        )
        assert done.returncode == 0, done.stderr
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode().replace("\r\n", "\n")
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)


@pytest.mark.parametrize("columns", [80, 120])
def test_experiments_fit_the_terminal_and_a_pipe_gets_the_full_listing(columns: int) -> None:
    from paidtwice.cli._lab import experiments_listing

    full = experiments_listing()
    assert max(len(line) for line in full.splitlines()) > 120
    shown = run_in_terminal(["experiments"], str(columns))
    assert_fits_and_keeps(full, shown, columns)
    assert run_in_terminal(["experiments", "--wide"], str(columns)).rstrip("\n") == full
    piped = subprocess.run(
        [sys.executable, "-m", "paidtwice", "experiments"], capture_output=True, text=True, timeout=DEADLINE
    )
    assert piped.stdout.rstrip("\n") == full


def test_run_fits_an_80_column_terminal(tmp_path: Path) -> None:
    """`paidtwice run` on a real server, in a terminal 80 columns wide: its journal, model calls, checks and
    bill fit it (the model-call table alone is wider at full width)."""
    shown = run_in_terminal(["run", "clean", "--json", "run.json"], "80", cwd=tmp_path)
    assert "Model calls:" in shown and "Deck vs measured:" in shown
    assert max(len(line) for line in shown.splitlines()) <= 80
    record = load_results([tmp_path / "run.json"]).records[0]
    assert isinstance(record, RunRecord)
    assert max(len(line) for line in format_run(record).splitlines()) > 80

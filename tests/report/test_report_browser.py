"""The HTML reports in a real browser (headless Chromium over the DevTools protocol).

Each page loads from disk with no console error, no failed request and no request beyond the file itself;
every run's timeline has one attempt bar per attempt of its record and one model-call bar per model call; the
sweep's heatmap has one cell per crash point, each linking to that point's timeline. A screenshot of each
page goes to build/screenshots/ (or $PAIDTWICE_SCREENSHOTS).
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from browser import Browser, PageLoad, find_chromium

from paidtwice.lab import Lab
from paidtwice.report import (
    deck_sections,
    load_results,
    replay_check_section,
    soak_section,
    sweep_sections,
    write_html,
)
from paidtwice.report._text import usd
from paidtwice.results import CurveRecord, Record, RecoveryRecord, RunRecord
from paidtwice.soak import SoakOptions, soak

FIXTURES = Path(__file__).parents[1] / "fixtures" / "results"
SCREENSHOTS = Path(
    os.environ.get("PAIDTWICE_SCREENSHOTS", Path(__file__).parents[2] / "build" / "screenshots")
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    binary = find_chromium()
    if binary is None:
        reason = (
            "no chromium on PATH (scripts/test.sh installs Debian's chromium with apt-get when run as root)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {reason}")
        pytest.skip(reason)
    with Browser(binary) as running:
        yield running


def runs_of(records: Sequence[Record]) -> Iterator[tuple[RunRecord, str]]:
    """Every run a deck row made, with the id of its timeline."""
    for record in records:
        slug = re.sub(r"[^0-9A-Za-z]", "_", record.name)
        if isinstance(record, RunRecord):
            yield record, f"run-{slug}"
        elif isinstance(record, CurveRecord):
            for i, run in enumerate(record.runs, start=1):
                yield run, f"run-{slug}-{i}"
        elif isinstance(record, RecoveryRecord):
            yield record.stuck_run, f"run-{slug}-stuck"


def assert_clean_load(load: PageLoad, page: Path) -> None:
    assert load.errors == [], load.errors
    assert load.failed == [], load.failed
    assert load.requests == [page.resolve().as_uri()], load.requests


def timelines(browser: Browser) -> dict[str, list[int]]:
    """Per timeline on the page: its attempt bars, model-call bars and tool-call marks."""
    found: dict[str, list[int]] = browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('svg.timeline')].map(t => [t.id, "
        "[t.querySelectorAll('.attempt').length, t.querySelectorAll('.model-call').length, "
        "t.querySelectorAll('.tool-call').length]]))"
    )
    return found


def assert_timelines(browser: Browser, records: Sequence[Record]) -> None:
    drawn = timelines(browser)
    runs = list(runs_of(records))
    assert set(drawn) == {anchor_id for _, anchor_id in runs}
    for run, anchor_id in runs:
        attempts, calls, tools = drawn[anchor_id]
        assert attempts == run.attempts == len(run.attempt_log), (anchor_id, attempts, run.attempts)
        assert calls == run.model_calls, (anchor_id, calls, run.model_calls)
        assert tools == run.tool_calls, (anchor_id, tools, run.tool_calls)


def test_deck_report_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    records = load_results([FIXTURES / "deck.json"]).records
    page = write_html(tmp_path / "deck.html", "paidtwice deck", deck_sections(records))
    assert_clean_load(browser.open(page), page)
    assert_timelines(browser, records)
    # The mismatch panel and the recovery walk's admin log are on the page.
    assert browser.evaluate("document.querySelectorAll('.mismatch').length") >= 1
    assert browser.evaluate("document.querySelectorAll('table.admin tbody tr').length") == sum(
        len(r.admin_log) for r in records if isinstance(r, RecoveryRecord)
    )
    curves = [r for r in records if isinstance(r, CurveRecord)]
    assert browser.evaluate("document.querySelectorAll('svg.curve .measured').length") == sum(
        len(c.points) for c in curves
    )
    assert browser.screenshot(SCREENSHOTS / "deck.png").stat().st_size > 0
    assert browser.pdf(tmp_path / "deck.pdf").read_bytes().startswith(b"%PDF")


def test_sweep_report_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    points = load_results([FIXTURES / "sweep.json"]).points
    page = write_html(tmp_path / "sweep.html", "paidtwice sweep", sweep_sections(points))
    load = browser.open(page)
    assert_clean_load(load, page)
    cells = browser.evaluate(
        "[...document.querySelectorAll('svg.heatmap .cell')].map(c => "
        "[c.closest('svg').dataset.mode, c.dataset.point, c.parentElement.getAttribute('href')])"
    )
    assert sorted((m, p) for m, p, _ in cells) == sorted((p.mode, p.crash_point) for p in points)
    # Each cell links to a timeline on the page, with that point's attempts and model calls.
    drawn = timelines(browser)
    for (_, _, href), point in zip(
        sorted(cells, key=lambda c: c[2]), sorted(points, key=anchor), strict=True
    ):
        assert href == f"#{anchor(point)}"
        assert drawn[f"timeline-{anchor(point)}"] == [point.attempts, point.model_calls, point.tool_runs]
    shot = browser.screenshot(SCREENSHOTS / "sweep.png").read_bytes()
    # The picture is as tall as this page (an earlier, taller page's size must not carry over), within the
    # height Chromium paints in one shot.
    browser.call("Emulation.clearDeviceMetricsOverride")
    tall = min(int(browser.evaluate("document.documentElement.scrollHeight")), 16000)
    assert struct.unpack(">I", shot[20:24])[0] == tall
    print(f"sweep report of {len(points)} points loaded in {load.load_seconds:.2f}s")


def anchor(point: object) -> str:
    mode, script, order = (getattr(point, n) for n in ("mode", "script", "order"))
    return f"point-{mode}-{script}-{order}"


def test_report_of_a_run_in_the_session_lab(
    browser: Browser, deck_records: dict[str, RunRecord], tmp_path: Path
) -> None:
    from paidtwice.results import write_results

    records = list(deck_records.values())
    write_results(tmp_path / "deck.json", records)
    loaded = load_results([tmp_path / "deck.json"]).records
    page = write_html(tmp_path / "lab.html", "paidtwice deck", deck_sections(loaded))
    assert_clean_load(browser.open(page), page)
    assert_timelines(browser, records)
    # The kill is on every timeline of a run that had one.
    kills = browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('svg.timeline')].map(t => "
        "[t.id, t.querySelectorAll('.kill').length]))"
    )
    for run, anchor_id in runs_of(records):
        assert kills[anchor_id] == (1 if run.killed_at is not None else 0), anchor_id
    browser.screenshot(SCREENSHOTS / "lab-deck.png")


def test_soak_report_in_the_browser(browser: Browser, lab: Lab, tmp_path: Path) -> None:
    record = soak(lab, SoakOptions(invocations=12, kills=1))
    page = write_html(tmp_path / "soak.html", "paidtwice soak", [soak_section(record)])
    assert_clean_load(browser.open(page), page)
    text = browser.evaluate("document.body.innerText")
    assert f"invocations sent\t{record.sent}" in text and f"lost (must be 0)\t{record.lost}" in text
    # What the soak paid, and one row per kill with the bound it measured.
    assert f"what the kills added\t{usd(record.extra_cost_usd)}" in text
    assert browser.evaluate("document.querySelectorAll('table.kills tbody tr').length") == len(
        record.kill_snapshots
    )
    # Kills are stamped by the clock: shown as a time of day, not as seconds since 1970.
    first = datetime.fromtimestamp(record.kill_snapshots[0].at, tz=UTC)
    assert browser.evaluate("document.querySelector('table.kills tbody td:nth-child(2)').innerText") == (
        f"{first:%H:%M:%S}.{first.microsecond // 10_000:02d}"
    )
    browser.screenshot(SCREENSHOTS / "soak.png")
    # A soak that lost an invocation says so, and what, at the top.
    lost = dataclasses.replace(record, completed=record.completed - 1, lost=1)
    assert "✗ NOT OK: 1 lost (failed or vanished)" in soak_section(lost).body


def test_replay_check_report_in_the_browser(
    browser: Browser, replay_check_results: tuple[Path, ...], tmp_path: Path
) -> None:
    results = load_results(replay_check_results).replays
    page = write_html(
        tmp_path / "replay-check.html", "paidtwice replay-check", [replay_check_section(results)]
    )
    assert_clean_load(browser.open(page), page)
    # One row per journal, with its verdict in words and its calls outside the journal.
    shown = browser.evaluate(
        "[...document.querySelectorAll('table.replay-check tbody tr')].map(r => "
        "[r.dataset.verdict, r.cells[3].innerText, r.cells[4].innerText])"
    )
    assert [verdict for verdict, _, _ in shown] == [r.verdict for r in results]
    for (_, words, calls), result in zip(shown, results, strict=True):
        diverges = f"diverges at entry {result.index} (command index {result.command_index})"
        expected = diverges if result.verdict == "diverges" else result.verdict
        assert expected in words
        assert calls.startswith(str(result.calls_during_replay))
    # Each divergence is a panel with the recorded and the attempted commands side by side.
    panels = browser.evaluate(
        "[...document.querySelectorAll('.divergence table.sequences')].map(t => "
        "[[...t.querySelectorAll('td.recorded')].map(c => c.innerText), "
        "[...t.querySelectorAll('td.attempted')].map(c => c.innerText), "
        "[...t.querySelectorAll('tr.parts')].length])"
    )
    diverging = [r for r in results if r.verdict == "diverges"]
    assert diverging
    assert panels == [[list(r.recorded_commands), list(r.attempted_commands), 1] for r in diverging]
    assert browser.screenshot(SCREENSHOTS / "replay-check.png").stat().st_size > 0

"""A kill that misses its moment is run again, then said: a sweep of the deck's journaled agent with a
pause far shorter than any machine needs to kill inside it, judged strictly (its pause point misses at every
try), on the session's server; and what `sweep --check`, `paidtwice check`, `report --check`, SARIF, JUnit
and the GitHub format make of the undecided point, with and without --allow-undecided."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from support import run_paidtwice

from paidtwice.check._config import Budget, load_config
from paidtwice.check._run import _sweep_outcomes
from paidtwice.cli._sweep import _print_sweep
from paidtwice.lab import Lab
from paidtwice.report import github_annotations, sweep_cases, sweep_findings, write_junit
from paidtwice.report._ci import sarif
from paidtwice.results import KillsPlaced, PointResult, SweepMatrix, write_results
from paidtwice.sweep import KillPlan, deck_scripts
from paidtwice.sweep._sweep import sweep_targets
from paidtwice.targets import DeckTarget

RETRIES = 1


@pytest.fixture(scope="module")
def swept(lab: Lab) -> Iterator[Future[SweepMatrix]]:
    """Started as soon as the module is, on the session's server: the sweep waits on its agents' restarts."""

    def sweep() -> SweepMatrix:
        # A millisecond's pause: the server journals its end before any kill can follow its start. The host
        # withholds that end from the handler, so the sweep would call the kill placed; judged here as
        # strictly as before the host held pauses (any entry past the moment is a miss), it misses every try.
        with pytest.MonkeyPatch.context() as strict:
            strict.setattr("paidtwice.sweep._point._PAUSE_ENDED", "(no entry is labelled so)")
            (matrix,) = sweep_targets(
                lab,
                targets=[DeckTarget("journaled", pause="0.001")],
                scripts=deck_scripts(["steady"]),
                kills=KillPlan(retries=RETRIES, restart_delay=0.5),
            )
        return matrix

    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(sweep)


@pytest.fixture(scope="module")
def matrix(swept: Future[SweepMatrix]) -> SweepMatrix:
    return swept.result()


def _missed(matrix: SweepMatrix) -> PointResult:
    (pause,) = [p for p in matrix.points if p.kind == "pause"]
    return pause


def _judged(matrix: SweepMatrix) -> SweepMatrix:
    """The points that do not pay twice, and the undecided pause point as one that does not either (its
    figures are a crash's at another moment, which may pay twice): what is left to judge is the undecided
    point alone."""
    pause = _missed(matrix)
    undecided = dataclasses.replace(
        pause,
        answers_asked_again=0,
        extra_model_calls=pause.model_calls_in_flight,
        extra_step_runs=pause.steps_in_flight,
        steps_run_again=None if pause.steps_run_again is None else pause.steps_in_flight,
    )
    decided = [p for p in matrix.points if not p.pays_twice and p is not pause]
    return dataclasses.replace(matrix, points=tuple(sorted([*decided, undecided], key=lambda p: p.order)))


def test_a_kill_that_misses_is_run_again_then_said_not_placed(matrix: SweepMatrix) -> None:
    pause = _missed(matrix)
    assert not pause.confirmed and pause.retries == RETRIES, pause.not_placed
    assert len(pause.missed) == RETRIES and all("Notification: Sleep" in why for why in pause.missed)
    assert "Notification: Sleep" in pause.not_placed
    others = [p for p in matrix.points if p is not pause]
    # The others' kills land: a retry only where the first missed (none of them, on a quiet machine).
    assert all(p.confirmed for p in others if not p.retries), [p.crash_point for p in others]
    placed = KillsPlaced.of(matrix.points)
    assert placed.not_placed == 1 and placed.first_try + placed.after_retry == len(others)
    assert placed.retries == sum(p.retries for p in matrix.points) >= RETRIES


def test_sweep_check_fails_on_an_undecided_point_unless_allowed(
    matrix: SweepMatrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = _judged(matrix)
    pause = _missed(matrix)
    name = f"#{pause.order} {pause.crash_point}"

    def printed(*, check: bool, allow: bool) -> tuple[int, str, str]:
        status = _print_sweep(
            [matrix],
            json_path=tmp_path / "sweep.json",
            check=check,
            allow_undecided=allow,
            retries=RETRIES,
            crash_rate=None,
            html_path=None,
            width=None,
        )
        out, err = capsys.readouterr()
        return status, out, err

    # What the sweep writes before it prints: the matrices' points.
    write_results(tmp_path / "sweep.json", list(matrix.points))
    status, out, err = printed(check=True, allow=False)
    assert status == 1
    assert f"{name}: could not place after 1 retry, because" in err
    assert "check fails: 1 crash point undecided (--allow-undecided passes them)" in err
    assert ", 1 not placed (up to 1 retry a point)" in out
    assert " yes " in out and " NO " in out
    status, _, err = printed(check=True, allow=True)
    assert status == 0 and "undecided, allowed" in err and name in err
    assert printed(check=False, allow=False)[0] == 0
    record = json.loads((tmp_path / "sweep.json").read_text())
    (saved,) = [p for p in record if p["order"] == pause.order]
    assert saved["retries"] == RETRIES and saved["missed"] == list(pause.missed)


def test_ci_formats_fail_an_undecided_point_unless_allowed(matrix: SweepMatrix, tmp_path: Path) -> None:
    matrix = _judged(matrix)
    points = list(matrix.points)
    pause = _missed(matrix)
    (error,) = [f for f in sweep_findings(points, None) if f.rule == "PT102"]
    assert error.level == "error" and f"#{pause.order}" in error.message and "after 1 retry" in error.message
    (warning,) = [f for f in sweep_findings(points, None, allow_undecided=True) if f.rule == "PT102"]
    assert warning.level == "warning"
    assert any(line.startswith("::error ") and "PT102" in line for line in github_annotations([error]))
    assert github_annotations([warning])[0].startswith("::warning ")
    assert sarif([error])["runs"][0]["results"][0]["level"] == "error"
    for allow, tag in ((False, "failure"), (True, "skipped")):
        path = tmp_path / f"junit-{allow}.xml"
        write_junit(path, sweep_cases(points, allow_undecided=allow))
        cases = {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}
        case = cases[f"#{pause.order} {pause.crash_point}"]
        assert case.find(tag) is not None and "undecided" in (case.find(tag).get("message") or "")
        retries = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert retries == {"retries": str(RETRIES)}


def test_paidtwice_check_fails_an_undecided_point_unless_allowed(matrix: SweepMatrix, tmp_path: Path) -> None:
    budget = Budget(repaid_model_calls=None, expected_extra_usd_per_1000=None, crash_rate=1.0)
    matrix = _judged(matrix)
    (failed,) = _sweep_outcomes([matrix], budget, None, None)
    pause = _missed(matrix)
    assert not failed.ok and f"1 point undecided (steady #{pause.order} {pause.crash_point})" in failed.line()
    # Nothing else fails it: allowed, the undecided point passes.
    (allowed,) = _sweep_outcomes([matrix], budget, None, None, allow_undecided=True)
    assert allowed.ok and "undecided, allowed" in allowed.summary
    config = tmp_path / "paidtwice.toml"
    config.write_text("allow-undecided = true\nretries = 4\n")
    loaded = load_config(config)
    assert loaded.allow_undecided and loaded.retries == 4
    config.write_text('allow-undecided = "yes"\n')
    result = run_paidtwice("check", "--config", str(config))
    assert result.returncode == 2
    assert "paidtwice.allow-undecided: expected true or false, got a string" in result.stderr


def test_report_check_fails_an_undecided_point_unless_allowed(matrix: SweepMatrix, tmp_path: Path) -> None:
    records = tmp_path / "sweep.json"
    matrix = _judged(matrix)
    write_results(records, list(matrix.points))
    failed = run_paidtwice("report", str(records), "--check", "-o", str(tmp_path / "r.html"))
    pause = _missed(matrix)
    assert failed.returncode == 1, failed.stderr
    assert f"1 point undecided (journaled/steady #{pause.order} {pause.crash_point})" in failed.stdout
    passed = run_paidtwice(
        "report", str(records), "--check", "--allow-undecided", "-o", str(tmp_path / "r.html")
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "1 point undecided, allowed" in passed.stdout

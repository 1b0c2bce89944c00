"""`paidtwice report`: captured result files read back typed; files that are not results refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paidtwice.lab import RunRecord, write_records
from paidtwice.lab._records import RESULTS_FORMAT
from paidtwice.lab._sweep import write_sweep
from paidtwice.report import load_results

FIXTURES = Path(__file__).parent / "fixtures"
DECK = FIXTURES / "results" / "deck.json"
SWEEP = FIXTURES / "results" / "sweep.json"


def paidtwice(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


def test_captured_results_read_back_as_the_lab_wrote_them(tmp_path: Path) -> None:
    loaded = load_results([DECK, SWEEP])
    assert {type(r).__name__ for r in loaded.records} == {"RunRecord", "CurveRecord", "RecoveryRecord"}
    assert loaded.points
    # Written again by the lab's own writers, the typed records give back every field of the file (fields the
    # records gained since the capture may be added, with their defaults).
    write_records(tmp_path / "deck.json", loaded.records)
    write_sweep(tmp_path / "sweep.json", loaded.points)
    assert_holds(json.loads((tmp_path / "deck.json").read_text()), json.loads(DECK.read_text()))
    assert_holds(json.loads((tmp_path / "sweep.json").read_text()), json.loads(SWEEP.read_text()))


def assert_holds(written: object, captured: object, where: str = "") -> None:
    """`written` has everything `captured` has, with equal values."""
    if isinstance(captured, dict):
        assert isinstance(written, dict), where
        for key, value in captured.items():
            assert key in written, f"{where}.{key}"
            assert_holds(written[key], value, f"{where}.{key}")
    elif isinstance(captured, list):
        assert isinstance(written, list) and len(written) == len(captured), where
        for i, (w, c) in enumerate(zip(written, captured, strict=True)):
            assert_holds(w, c, f"{where}[{i}]")
    else:
        assert written == captured, (where, written, captured)


def test_report_writes_one_page_that_fetches_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = paidtwice("report", str(DECK), str(SWEEP), "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    # Inline only: no stylesheet, script, image or frame from anywhere (the SVG namespace is a name).
    assert not re.search(r"<(link|script|img|iframe|object|embed)\b", page)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "url(http" not in page and "@import" not in page
    records = load_results([DECK]).records
    for record in records:
        assert f'id="row-{re.sub(r"[^0-9A-Za-z]", "_", record.name)}"' in page


def test_default_output_is_beside_the_first_results_file(tmp_path: Path) -> None:
    copy = tmp_path / "deck.json"
    copy.write_text(DECK.read_text())
    done = paidtwice("report", str(copy))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "deck.html").is_file()


def one_line_exit_2(*args: str) -> str:
    done = paidtwice("report", *args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_a_file_that_is_not_a_result_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # A capture of Restate's SQL tables (another fixture) is JSON, but not a paidtwice result.
    assert "is not a paidtwice result" in one_line_exit_2(str(FIXTURES / "clean.json"))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("<html>")
    assert "not JSON" in one_line_exit_2(str(garbage))
    assert "no such file" in one_line_exit_2(str(tmp_path / "missing.json"))
    broken = json.loads(DECK.read_text())
    del broken[0]["attempt_log"]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    assert "attempt_log" in one_line_exit_2(str(tmp_path / "broken.json"))


def test_a_result_of_an_older_format_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # Format 1, as paidtwice wrote it before results had a version: the same records without the tags and
    # without the times a timeline needs.
    older = json.loads(DECK.read_text())
    for record in older:
        for key in ("format", "record", "started_at", "killed_at"):
            record.pop(key, None)
    (tmp_path / "older.json").write_text(json.dumps(older))
    line = one_line_exit_2(str(tmp_path / "older.json"))
    assert "older format (1" in line and f"reads format {RESULTS_FORMAT}" in line
    newer = json.loads(DECK.read_text())
    newer[0]["format"] = RESULTS_FORMAT + 1
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    assert f"format {RESULTS_FORMAT + 1}" in one_line_exit_2(str(tmp_path / "newer.json"))


def test_fields_a_record_gains_later_are_ignored_and_missing_optional_ones_default(tmp_path: Path) -> None:
    data = json.loads(DECK.read_text())
    run = next(r for r in data if r["record"] == "run")
    run["cost_usd"] = 0.0123  # a field a later paidtwice may add
    del run["admin_log"]  # a field with a default
    (tmp_path / "deck.json").write_text(json.dumps([run]))
    (record,) = load_results([tmp_path / "deck.json"]).records
    assert isinstance(record, RunRecord) and record.admin_log == () and record.name == run["name"]


@pytest.mark.parametrize("path", [DECK, SWEEP])
def test_captured_fixtures_are_of_the_current_format(path: Path) -> None:
    assert {r["format"] for r in json.loads(path.read_text())} == {RESULTS_FORMAT}


def test_run_with_html_writes_the_page_of_its_record(tmp_path: Path) -> None:
    json_path, html_path = tmp_path / "clean.json", tmp_path / "clean.html"
    done = paidtwice("run", "clean", "--json", str(json_path), "--html", str(html_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"HTML report: {html_path}" in done.stdout
    (record,) = load_results([json_path]).records
    assert isinstance(record, RunRecord)
    page = html_path.read_text()
    assert f'data-attempts="{record.attempts}" data-model-calls="{record.model_calls}"' in page
    assert record.invocation_id in page


def test_the_page_opens_with_what_differs(tmp_path: Path) -> None:
    data = json.loads(DECK.read_text())
    run = next(r for r in data if r["record"] == "run")
    check = next(c for c in run["checks"] if c["figure"] == "model calls")
    # As if the lab had measured one call more than the deck says.
    check.update(measured=str(int(check["deck"]) + 1), ok=False)
    run["matches"] = False
    (tmp_path / "deck.json").write_text(json.dumps(data))
    assert (
        paidtwice(
            "report", str(tmp_path / "deck.json"), str(SWEEP), "-o", str(tmp_path / "r.html")
        ).returncode
        == 0
    )
    page = (tmp_path / "r.html").read_text()
    slug = re.sub(r"[^0-9A-Za-z]", "_", run["name"])
    assert f"1 of {len(data)} rows differ from the deck:" in page
    assert (
        f'<li><a href="#row-{slug}">{run["name"]}</a>: model calls: deck {check["deck"]}, measured <b>'
        in page
    )
    twice = [p for p in load_results([SWEEP]).points if p.pays_twice]
    assert f"{len(twice)} of {len(load_results([SWEEP]).points)} points paid twice for completed work" in page

"""`paidtwice report`: captured result files read back typed; files that are not results refused."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import re
import subprocess
from pathlib import Path

import pytest
from support import run_paidtwice

from paidtwice.report import load_results
from paidtwice.results import RESULTS_FORMAT, RunRecord, write_results

FIXTURES = Path(__file__).parents[1] / "fixtures"
DECK = FIXTURES / "results" / "deck.json"
SWEEP = FIXTURES / "results" / "sweep.json"


def paidtwice(*args: str) -> subprocess.CompletedProcess[str]:
    return run_paidtwice(*args)


def test_captured_results_read_back_as_the_lab_wrote_them(tmp_path: Path) -> None:
    loaded = load_results([DECK, SWEEP])
    assert {type(r).__name__ for r in loaded.records} == {"RunRecord", "CurveRecord", "RecoveryRecord"}
    assert loaded.points
    # Written again by the lab's own writers, the typed records give back every field of the file (fields the
    # records gained since the capture may be added, with their defaults).
    write_results(tmp_path / "deck.json", loaded.records)
    write_results(tmp_path / "sweep.json", loaded.points)
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


def test_a_directory_an_empty_file_a_journal_or_lint_output_is_one_line_and_exit_2(tmp_path: Path) -> None:
    assert "is a directory" in one_line_exit_2(str(tmp_path))
    (tmp_path / "empty.json").write_text("")
    assert "is empty" in one_line_exit_2(str(tmp_path / "empty.json"))
    # A journal file is paidtwice's own, but it is replay-check's input: the line says how to report it.
    assert "replay-check" in one_line_exit_2(str(FIXTURES / "journals" / "clean.json"))
    lint = tmp_path / "lint.json"
    lint.write_text(json.dumps([{"path": "a.py", "line": 3, "col": 1, "code": "PT001", "message": "m"}]))
    assert "paidtwice lint" in one_line_exit_2(str(lint))


def test_a_page_that_cannot_be_written_is_one_line_and_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert "cannot write" in one_line_exit_2(str(DECK), "-o", str(blocker / "report.html"))
    # Nor may the page overwrite the results it is made from.
    copy = tmp_path / "deck.json"
    copy.write_text(DECK.read_text())
    assert "would overwrite it" in one_line_exit_2(str(copy), "-o", str(copy))
    assert copy.read_text() == DECK.read_text()
    # On a lab command the page is checked before the lab runs, not after a whole run.
    done = paidtwice("run", "clean", "--html", str(blocker / "run.html"))
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"Error: cannot write the HTML report to {blocker / 'run.html'}: {blocker} is a file, not a directory"
    ], done.stderr


def heatmap_cells(page: str) -> list[tuple[float, str]]:
    """Each heatmap cell's extra amount (data-extra) and the figure written on it."""
    return [
        (float(extra), shown)
        for extra, shown in re.findall(
            r'<g class="cell" data-extra="([^"]+)".*?<text [^>]*>([^<]*)</text>', page
        )
    ]


def test_sweep_cells_and_summary_say_fractions_of_a_cent(tmp_path: Path) -> None:
    from paidtwice.report._text import usd

    out = tmp_path / "sweep.html"
    assert paidtwice("report", str(SWEEP), "-o", str(out)).returncode == 0
    page = out.read_text()
    points = load_results([SWEEP]).points
    cells = heatmap_cells(page)
    assert len(cells) == len(points)
    assert any(extra > 0 for extra, _ in cells)
    # The figure on each cell is its extra dollars as the terminal prints them, never "+$0.0000" for a cost.
    for extra, shown in cells:
        assert shown == f"{'-' if extra < 0 else '+'}{usd(abs(extra))}", (extra, shown)
    # Each point's own line says what it cost too, with words that fit its numbers ("0 model calls").
    for point in points:
        anchor = f"point-{point.mode}-{point.script}-{point.order}"
        line = re.search(rf'<section class="point" id="{anchor}">.*?</p>', page)
        assert line is not None and f"extra cost +{usd(point.extra_cost_usd)};" in line.group(0)
        assert "+0 " not in line.group(0)
    # The summary's expected crash cost is the terminal's (each point weighted by the time it covers), and
    # its answers asked again are the points' own count.
    for mode, script in dict.fromkeys((p.mode, p.script) for p in points):
        mine = [p for p in points if (p.mode, p.script) == (mode, script)]
        expected = usd(sum(p.covers * p.extra_cost_usd for p in mine))
        again = sum(p.answers_asked_again for p in mine)
        row = re.search(rf"<tr><td>{mode}</td><td>{script}</td>(.*?)</tr>", page)
        assert row is not None
        assert f"<td>+{expected}</td>" in row.group(1)
        assert f"<td>{again} at " in row.group(1)


def timeline_labels(page: str) -> dict[str, list[tuple[float, float, str]]]:
    """Per timeline and lane (journal, model calls): each number label's x, y and text."""
    found: dict[str, list[tuple[float, float, str]]] = {}
    for svg_id, svg in re.findall(r'<svg class="timeline" id="([^"]+)"(.*?)</svg>', page):
        for lane in ("journal-entry", "model-call"):
            labels = re.findall(
                rf'<g class="{lane}"[^>]*>(?:(?!</g>).)*?<text x="([\d.]+)" y="([\d.]+)" class="tiny">'
                r"([^<]*)</text>",
                svg,
            )
            found[f"{svg_id} {lane}"] = [(float(x), float(y), text) for x, y, text in labels]
    return found


@pytest.mark.parametrize("path", [DECK, SWEEP])
def test_timeline_numbers_do_not_print_over_one_another(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert paidtwice("report", str(path), "-o", str(out)).returncode == 0
    lanes = timeline_labels(out.read_text())
    assert sum(len(labels) for labels in lanes.values()) > 0
    for lane, labels in lanes.items():
        for y in {y for _, y, _ in labels}:
            row = sorted((x, text) for x, ly, text in labels if ly == y)
            # The small type is 9.5 px: 4.5 px a glyph is less than any of its digits takes.
            for (x0, text), (x1, _) in itertools.pairwise(row):
                assert x1 >= x0 + 4.5 * len(text), (lane, row)


def test_a_point_that_starts_late_is_drawn_from_its_first_event() -> None:
    from paidtwice.report._html_timeline import timeline_of, timeline_svg

    point = load_results([SWEEP]).points[0]
    late = 40.0  # as if its agent had taken 40 s to start and register
    shifted = dataclasses.replace(
        point,
        started_at=(point.started_at or 0.0) - late,
        killed_at=None if point.killed_at is None else point.killed_at + late,
        attempt_log=tuple(
            dataclasses.replace(
                a, at=None if a.at is None else a.at + late, ended=None if a.ended is None else a.ended + late
            )
            for a in point.attempt_log
        ),
        model_log=tuple(
            dataclasses.replace(c, at=c.at + late, finished=None if c.finished is None else c.finished + late)
            for c in point.model_log
        ),
        tool_log=tuple(dataclasses.replace(t, at=t.at + late) for t in point.tool_log),
    )
    svg = timeline_svg(timeline_of(shifted, "t"))
    # The axis begins at a round second before the first event, and says what it left out.
    assert re.search(r"the first \d+ s, before anything happened, left out", svg)
    first_attempt = float(re.search(r'<g class="attempt"[^>]*><rect x="([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
    assert first_attempt < 92 + (960 - 92 - 16) * 0.3, first_attempt
    # A run whose agent started in under a second keeps its whole axis from 0.
    from paidtwice.report import deck_sections

    deck_page = "".join(section.body for section in deck_sections(load_results([DECK]).records))
    assert "left out" not in deck_page


def test_the_readme_picture_shows_the_page_made_today(tmp_path: Path) -> None:
    from browser import README_PICTURE, page_digest, png_page_digest

    script = Path(__file__).parents[2] / "scripts" / "report_screenshot.py"
    spec = importlib.util.spec_from_file_location("report_screenshot", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = module.readme_page(tmp_path)
    assert png_page_digest(README_PICTURE.read_bytes()) == page_digest(page.read_text()), (
        "docs/report-deck.png shows an older page: run .venv/bin/python scripts/report_screenshot.py"
    )


def test_a_kill_that_missed_its_moment_is_written_on_its_cell() -> None:
    from paidtwice.report import sweep_sections

    points = list(load_results([SWEEP]).points)
    why = "the journal already held 4 entries at the kill, not 3: Notification: Run appended before it"
    points[2] = dataclasses.replace(points[2], confirmed=False, not_placed=why)
    page = "".join(section.body for section in sweep_sections(points))
    cells = re.findall(r'<g class="cell".*?</g>', page)
    assert [i for i, cell in enumerate(cells) if "kill missed" in cell] == [2]
    assert f"NOT where the point says: could not place, because {why}" in page
    assert (
        f"1 of {len(points)} points could not be placed (the kill did not land where the point says):" in page
    )


def test_a_run_without_model_calls_says_so_instead_of_an_empty_table() -> None:
    from paidtwice.report import deck_sections

    run = next(r for r in load_results([DECK]).records if isinstance(r, RunRecord))
    quiet = dataclasses.replace(run, model_log=(), model_calls=0)
    page = "".join(section.body for section in deck_sections([quiet]))
    assert "<p>No model call was made.</p>" in page
    assert "<th>answered (s)</th>" not in page


def test_what_the_model_and_the_code_said_is_shown_as_text_never_as_markup(tmp_path: Path) -> None:
    hostile = '<script>alert("paid twice")</script>'
    deck = json.loads(DECK.read_text())
    for record in deck:
        for line in record.get("model_log", ()):
            line["answer"] = hostile
    sweep = json.loads(SWEEP.read_text())
    sweep[0]["crash_point"] = hostile
    sweep[0]["mode"] = hostile
    (tmp_path / "deck.json").write_text(json.dumps(deck))
    (tmp_path / "sweep.json").write_text(json.dumps(sweep))
    out = tmp_path / "page.html"
    done = paidtwice("report", str(tmp_path / "deck.json"), str(tmp_path / "sweep.json"), "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert "<script" not in page and "&lt;script&gt;" in page


def test_a_lab_command_never_writes_its_page_over_its_results(tmp_path: Path) -> None:
    import click

    from paidtwice.cli._options import write_report

    results = tmp_path / "run.json"
    results.write_text(DECK.read_text())
    with pytest.raises(click.ClickException, match="holds the results") as raised:
        write_report(results, "paidtwice run", [], [results])
    assert raised.value.exit_code == 2
    assert results.read_text() == DECK.read_text()


def test_the_deck_table_says_what_each_row_paid_the_model_as_the_terminal_does() -> None:
    from paidtwice.report import deck_sections, format_deck_table

    records = load_results([DECK]).records
    page = deck_sections(records)[0].body
    terminal = format_deck_table(records).splitlines()
    for record in records:
        row = re.search(rf'<tr><td><a href="#row-[^"]*">{re.escape(record.name)}</a></td>.*?</tr>', page)
        assert row is not None, record.name
        paid = re.findall(r"<td>([^<]*)</td></tr>$", row.group(0))[0]
        # The same calls and dollars as the terminal's last column ("3 calls, 325 tok, $0.000073 (+...)").
        line = next(line for line in terminal if line.startswith(record.name + " "))
        calls, _, dollars = re.search(r"(\d+) calls?, ([\d,]+) tok, (\$\S+ \(\+\$\S+\))", line).groups()  # type: ignore[union-attr]
        assert paid.startswith(f"{calls} call") and paid.endswith(dollars), (paid, line)

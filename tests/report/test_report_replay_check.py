"""The replay-check part of the report: `replay-check --json` records read back typed by `paidtwice report`,
`replay-check --html`, and bad input refused in one line. The results are of real replays of the captured
journal fixtures (tests/fixtures/journals/) against the deck's agent (the `replay_check_results` fixture)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from support import DEADLINE, run_paidtwice

from paidtwice.replay import OutsideCall, load_journal
from paidtwice.report import load_results
from paidtwice.results import RESULTS_FORMAT, record_json

JOURNALS = Path(__file__).parents[1] / "fixtures" / "journals"


def paidtwice(*args: str) -> subprocess.CompletedProcess[str]:
    return run_paidtwice(*args)


def records_of(paths: tuple[Path, ...]) -> list[dict[str, Any]]:
    return [record for path in paths for record in json.loads(path.read_text())]


def commands_of(journal_path: str) -> list[str]:
    """The journal file's commands by command index, read here from the file itself."""
    entries = load_journal(Path(journal_path)).entries
    return [
        f"{e.type.split(':', 1)[1].strip().lower()} {e.name}".strip()
        for e in entries
        if e.type.startswith("Command:")
    ]


def test_replay_check_records_carry_the_results_format_and_their_kind(
    replay_check_results: tuple[Path, ...],
) -> None:
    records = records_of(replay_check_results)
    assert records
    assert {(r["format"], r["record"]) for r in records} == {(RESULTS_FORMAT, "replay-check")}


def test_the_reader_round_trips_replay_check_results(replay_check_results: tuple[Path, ...]) -> None:
    records = records_of(replay_check_results)
    loaded = load_results(replay_check_results)
    assert loaded.records == () and loaded.points == ()
    assert len(loaded.replays) == len(records)
    for result, record in zip(loaded.replays, records, strict=True):
        assert all(isinstance(call, OutsideCall) for call in result.outside_calls)
        # Written again as replay-check writes it, the typed result gives back the file's record exactly.
        assert record_json(result) == record


def test_a_divergence_carries_both_sequences_up_to_where_they_part(
    replay_check_results: tuple[Path, ...],
) -> None:
    diverging = [r for r in load_results(replay_check_results).replays if r.verdict == "diverges"]
    # The clean journal on drifting answers parts at its output (entry 5, the SDK's command 3); the
    # changed-for-good one on the fix at entry 1 (command 1).
    assert sorted((Path(r.path or "").name, r.index, r.command_index) for r in diverging) == [
        ("clean.json", 5, 3),
        ("naive-changed-for-good.json", 1, 1),
    ]
    for result in diverging:
        assert result.command_index is not None and result.path is not None
        assert list(result.recorded_commands) == commands_of(result.path)[: result.command_index + 1]
        assert result.command_entries[-1] == result.index
        assert result.recorded_commands[-1] == result.recorded
        assert result.attempted_commands[:-1] == result.recorded_commands[:-1]
        assert result.attempted_commands[-1] == result.attempted != result.recorded


def rows(page: Path) -> list[str]:
    return re.findall(r'<tr data-verdict="([a-z]+)">', page.read_text())


def test_replay_check_html_has_one_row_per_journal(replay_check_results: tuple[Path, ...]) -> None:
    for path in replay_check_results:
        page = path.with_suffix(".html")
        verdicts = [r["verdict"] for r in json.loads(path.read_text())]
        assert rows(page) == verdicts, page
        text = page.read_text()
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "<script" not in text
        # The headline's words fit its numbers: "1 of 1 journal does not replay", "1 diverges".
        bad = [v for v in verdicts if v not in ("replays", "continues")]
        if len(verdicts) == 1 and bad == ["diverges"]:
            assert "✗ 1 of 1 journal does not replay on this code" in text
            assert "1 diverges: resuming that invocation on it" in text
        assert "1 of 1 journals" not in text and " 1 diverge:" not in text


def test_report_reads_replay_check_results_with_others(
    replay_check_results: tuple[Path, ...], tmp_path: Path
) -> None:
    deck = Path(__file__).parents[1] / "fixtures" / "results" / "deck.json"
    done = paidtwice("report", str(deck), *map(str, replay_check_results), "-o", str(tmp_path / "all.html"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "all.html").read_text()
    assert rows(tmp_path / "all.html") == [r["verdict"] for r in records_of(replay_check_results)]
    assert 'class="timeline' in page and "<title>paidtwice report: deck and replay-check</title>" in page


def one_line_exit_2(*args: str) -> str:
    done = paidtwice(*args)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def edited(source: Path, tmp_path: Path, name: str, change: Any) -> str:
    data = json.loads(source.read_text())
    for record in data:
        change(record)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_bad_replay_check_results_are_one_line_and_exit_2(
    replay_check_results: tuple[Path, ...], tmp_path: Path
) -> None:
    source = replay_check_results[0]

    def untagged(record: dict[str, Any]) -> None:
        del record["format"], record["record"]

    line = one_line_exit_2("report", edited(source, tmp_path, "older.json", untagged))
    assert "replay-check result of an older format" in line and f"reads format {RESULTS_FORMAT}" in line

    line = one_line_exit_2(
        "report", edited(source, tmp_path, "kind.json", lambda r: r.update(record="replay"))
    )
    assert "unknown kind 'replay'" in line

    line = one_line_exit_2(
        "report", edited(source, tmp_path, "calls.json", lambda r: r.update(outside_calls=3))
    )
    assert "outside_calls" in line and "is not a paidtwice result" in line

    line = one_line_exit_2("report", edited(source, tmp_path, "gone.json", lambda r: r.pop("verdict")))
    assert "'verdict'" in line


def test_replay_check_html_that_cannot_be_written_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    journal = JOURNALS / "naive-changed-for-good.json"
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "replay-check", "--app", "paidtwice.agent.weather:app"]
        + ["--html", str(tmp_path / "a-file" / "page.html"), str(journal)],
        capture_output=True,
        text=True,
        env={**os.environ, "PAIDTWICE_SERVICE": load_journal(journal).service},
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write" in lines[0] and "Traceback" not in done.stderr, done.stderr

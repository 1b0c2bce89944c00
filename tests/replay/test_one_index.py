"""One index for one entry: the journal's entry index, in every output that names it.

The same journal entry (steps_agent.py's second step: the journal's entry 3, the SDK's command 2) is named
by the sweep's points, `paidtwice journal`'s table, replay-check's table, JSON record and HTML page, and
explain's reading of the SDK's mismatch message: all say entry 3, and where the command index is shown it is
named so.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice.lab import Lab
from paidtwice.recover import read_mismatch
from paidtwice.replay import JournalFile, capture_journal, save_journal
from paidtwice.report._text import format_journal, format_mismatch
from paidtwice.results import SweepMatrix
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._sweep import sweep_targets
from paidtwice.targets import AppTarget

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "steps_script.toml"
STEP = "summarise"


@pytest.fixture(scope="module")
def swept(lab: Lab) -> tuple[SweepMatrix, JournalFile]:
    target = AppTarget("steps_agent:app", "Steps", "run", "weather?", mode="Steps", cwd=str(HERE))
    [matrix] = sweep_targets(lab, targets=[target], scripts=[("steady", load_script_file(SCRIPT, "steady"))])
    journal = capture_journal(lab.sql, matrix.clean.invocation_id)
    # The sweep registered the app under a name of its own; the app's own name is what replay-check serves.
    return matrix, dataclasses.replace(journal, service="Steps")


def entries_named(text: str) -> set[int]:
    """Every "entry N" said of the second step in `text`."""
    return {int(n) for n in re.findall(rf"entry (\d+)\b[^\n]*?{STEP}", text)}


def test_every_output_names_the_entry_by_the_journals_index(
    swept: tuple[SweepMatrix, JournalFile], tmp_path: Path
) -> None:
    matrix, journal = swept
    entry = next(e.index for e in journal.entries if e.name == STEP)
    commands = [e for e in journal.entries if e.type.startswith("Command:")]
    command = next(n for n, e in enumerate(commands) if e.name == STEP)
    assert (entry, command) == (3, 2), "the fixture's two indexes must differ for the test to mean anything"

    # The sweep: its points say "after entry N (Command: Run summarise)".
    names = "\n".join(p.crash_point for p in matrix.points)
    assert entries_named(names) == {entry}, names
    assert matrix.clean.journal[entry] == f"Command: Run {STEP}"

    # `paidtwice journal`: its table's index column.
    table = format_journal(journal.journal())
    [row] = [line for line in table.splitlines() if STEP in line]
    assert row.split()[0] == str(entry), table

    # replay-check on the renamed step: table, JSON record and HTML page.
    path = save_journal(tmp_path / "steps.json", journal)
    html = tmp_path / "replay.html"
    out = tmp_path / "replay-check.json"
    args = [sys.executable, "-m", "paidtwice", "replay-check", "--app", "steps_agent:app"]
    args += ["--app-dir", str(HERE), "--script", str(SCRIPT), str(path)]
    env = {**os.environ, "PAIDTWICE_SECOND_STEP": "condense"}
    written = ["--json", str(out), "--html", str(html)]
    shown = subprocess.run(args + written, capture_output=True, text=True, env=env, timeout=DEADLINE)
    assert shown.returncode == 1, shown.stderr
    assert f"diverges at entry {entry} (command index {command})" in shown.stdout, shown.stdout
    # No other index is printed, but inside the SDK's own message, quoted as it is ("  | ...").
    ours = "\n".join(line for line in shown.stdout.splitlines() if not line.startswith("  | "))
    assert "index" not in ours.replace(f"(command index {command})", ""), shown.stdout
    [record] = json.loads(out.read_text())
    assert (record["index"], record["command_index"]) == (entry, command)
    assert record["recorded"] == f"run {STEP}" and record["attempted"] == "run condense"
    page = html.read_text()
    assert f"diverges at entry {entry} (command index {command})" in page
    assert re.search(rf'<tr class="parts"><td>{entry}</td><td>{command}</td>', page), page

    # explain: the SDK's own message, read against the journal as explain reads a server's.
    mismatch = read_mismatch(record["message"], journal.journal())
    assert mismatch is not None
    explained = format_mismatch(mismatch)
    assert f"entry {entry} (command index {command})" in explained, explained
    assert mismatch.index == entry and mismatch.recorded == f"run {STEP}"


def test_a_record_written_before_the_command_index_keeps_its_index_as_the_command_index(
    tmp_path: Path,
) -> None:
    # Such a record's "index" was the SDK's command index: read as an entry index it could name a wrong one.
    from paidtwice.report import load_results

    deck = json.loads((HERE.parent / "fixtures" / "results" / "deck.json").read_text())
    older = [r for r in deck if r.get("mismatch")]
    assert older
    for record in older:
        del record["mismatch"]["command_index"]
    path = tmp_path / "older.json"
    path.write_text(json.dumps(older))
    mismatches = [r.mismatch for r in load_results([path]).records if getattr(r, "mismatch", None)]
    assert mismatches and all(m is not None and m.index is None and m.command_index == 1 for m in mismatches)
    assert all(m is not None and m.where.startswith("command index 1") for m in mismatches)

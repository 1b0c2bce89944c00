"""`paidtwice recover --app`: whether the target code replays what a way out keeps is judged by replaying the
kept journal offline against that code, on the deck's changed-for-good invocation (paused on the server)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import DEADLINE

from paidtwice.lab import Lab
from paidtwice.results import RunRecord


def plan(lab: Lab, record: RunRecord, *, mode: str, script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "recover", record.invocation_id]
        + ["--admin-url", lab.server.admin_url, "--app", "paidtwice.agent.weather:app", "--script", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PAIDTWICE_AGENT_MODE": mode, "PAIDTWICE_SERVICE": record.service},
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def ways(text: str) -> dict[str, str]:
    """Each way out's "replay:" line, by its --apply name."""
    found, current = {}, ""
    for line in text.splitlines():
        if line.startswith("--apply "):
            current = line.split(":", 1)[0].removeprefix("--apply ")
        elif line.strip().startswith("replay:") and current:
            found[current] = line.split("replay:", 1)[1].strip()
    return found


def test_the_journaled_fix_is_a_certain_mismatch_at_index_1(
    lab: Lab, deck_records: dict[str, RunRecord]
) -> None:
    record = deck_records["naive-changed-for-good"]
    assert record.status == "paused"
    judged = ways(plan(lab, record, mode="journaled", script="steady"))
    assert judged["resume"].startswith("CERTAIN MISMATCH at entry 1 (command index 1): replayed offline")
    assert "the journal has run weather, the code attempts run model" in judged["resume"]


def test_the_naive_code_replays_what_is_kept_under_steady_answers(
    lab: Lab, deck_records: dict[str, RunRecord]
) -> None:
    record = deck_records["naive-changed-for-good"]
    judged = ways(plan(lab, record, mode="naive", script="steady"))
    assert judged["resume"].startswith("replays: replayed offline")
    assert "1 model call outside the journal paid again" in judged["resume"]
    judged = ways(plan(lab, record, mode="naive", script="changed"))
    assert judged["resume"].startswith("CERTAIN MISMATCH at entry 1 (command index 1)")


def test_save_journals_writes_each_runs_journal_and_a_kills_prefix(
    lab: Lab, deck_records: dict[str, RunRecord], tmp_path: Path
) -> None:
    from paidtwice.replay import load_journal, save_record_journals
    from paidtwice.replay._journal import save_with_prefix

    record = deck_records["naive-changed-for-good"]
    save_record_journals(
        lab.sql, tmp_path, record
    )  # what `run`/`deck --save-journals` do per finished record
    saved = load_journal(tmp_path / f"{record.name}.json")
    assert saved.invocation_id == record.invocation_id and saved.status == "paused"
    assert [(e.index, e.type, e.name) for e in saved.entries] == [
        (e.index, e.type, e.name) for e in record.journal
    ]
    # What `sweep --save-journals` does per point: the final journal and, beside it, the prefix at the kill.
    final, prefix = save_with_prefix(lab.sql, tmp_path, "point", record.invocation_id, entries_at_kill=4)
    assert len(load_journal(final).entries) == len(record.journal)
    kept = load_journal(prefix)
    assert [e.index for e in kept.entries] == [0, 1, 2, 3]
    assert kept.entries == saved.entries[:4]

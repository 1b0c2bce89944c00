"""Capture journals and failure events from real runs into tests/fixtures/ (run by hand to refresh them).

.venv/bin/python scripts/capture_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

from paidtwice.lab import EXPERIMENTS, Lab

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
ROWS = ("clean", "journaled-kill-in-pause", "naive-changed-for-good")


def main() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with Lab() as lab:
        rows = [(row, None) for row in EXPERIMENTS if row.name in ROWS]
        for record in lab.run_many(rows, concurrent=True):
            sql = lab.sql
            journal = sql.query(
                "SELECT index, entry_type, name, appended_at, entry_lite_json FROM sys_journal "
                f"WHERE id = '{record.invocation_id}' ORDER BY index"
            )
            events = sql.query(
                "SELECT after_journal_entry_index, appended_at, event_type, event_json "
                f"FROM sys_journal_events WHERE id = '{record.invocation_id}' ORDER BY appended_at"
            )
            capture = {
                "experiment": record.name,
                "invocation_id": record.invocation_id,
                "status": record.status,
                "server_version": record.server_version,
                "sys_journal": journal,
                "sys_journal_events": events,
            }
            path = FIXTURES / f"{record.name}.json"
            path.write_text(json.dumps(capture, indent=2) + "\n")
            print(path)


if __name__ == "__main__":
    main()
